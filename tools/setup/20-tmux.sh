#!/bin/sh
# tmux for tests/test_cli_tty.py: the CLI's output read in a real 80x24 terminal pane.
# Cost: one small Debian package (~1 MB, a few seconds); nothing when already installed.
command -v tmux >/dev/null 2>&1 && exit 0
if command -v apt-get >/dev/null 2>&1; then
    (apt-get install -y -qq tmux || (apt-get update -qq && apt-get install -y -qq tmux)) \
        >/dev/null 2>&1
fi
command -v tmux >/dev/null 2>&1
