#!/bin/sh
# Show what the CLI prints in a real 80x24 terminal: runs a command in a detached tmux pane
# of that size and prints the pane. Usage: tools/tty80.sh retromesh convert examples/ -o out/
# (tests/test_cli_tty.py does the same and checks that nothing wraps).
set -e
name="retromesh-tty80-$$"
tmux new-session -d -s "$name" -x 80 -y 24 "sh -c '$*; echo [exit \$?]; sleep 30'"
trap 'tmux kill-session -t "$name" 2>/dev/null || true' EXIT
i=0
while [ $i -lt 100 ] && ! tmux capture-pane -p -t "$name" | grep -q '^\[exit '; do
    sleep 0.1; i=$((i + 1))
done
tmux capture-pane -p -J -t "$name"
