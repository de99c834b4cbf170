"""The README's quick start and folder example in a real 80x24 terminal (tmux).

Runs each command in a detached tmux pane of 80x24 and reads the pane back joined
(``capture-pane -J``): a line longer than 80 characters there is a line the terminal wrapped.
Skipped without tmux (tools/setup/20-tmux.sh installs it).
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import retromesh
from conftest import ROOT

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None,
                                reason="tmux is not installed (tools/setup/20-tmux.sh)")
SRC = Path(retromesh.__file__).resolve().parents[1]


def _in_pane(args: list[str], cwd: Path) -> list[str]:
    name = f"rm80-{os.getpid()}-{time.monotonic_ns()}"
    cmd = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "retromesh", *args])
    script = (f"cd {shlex.quote(str(cwd))} && PYTHONPATH={shlex.quote(str(SRC))} {cmd}; "
              "echo \"[exit $?]\"; sleep 60")
    subprocess.run(["tmux", "-L", name, "new-session", "-d", "-s", name, "-x", "80", "-y", "24",
                    "sh", "-c", script], check=True, env={**os.environ, "TERM": "xterm"})
    try:
        for _ in range(300):
            text = subprocess.run(["tmux", "-L", name, "capture-pane", "-p", "-J", "-S", "-500",
                                   "-t", name], capture_output=True, text=True).stdout
            if "[exit " in text:
                return [line.rstrip() for line in text.splitlines()]
            time.sleep(0.1)
        raise AssertionError(f"no result in the pane:\n{text}")
    finally:
        subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True)


@pytest.mark.parametrize("args", [
    ["convert", "examples/wiggle.b3d", "-o", "out/wiggle.glb"],
    ["convert", "examples", "-o", "out/all"],
    ["info", "examples/lostsaga/column.msh"],
    ["formats"],
    ["convert", "--help"],
], ids=["quick-start", "folder", "info", "formats", "help"])
def test_reads_cleanly_in_80x24(tmp_path, args):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    lines = _in_pane(args, tmp_path)
    assert "[exit 0]" in lines, "\n".join(lines)
    long = [line for line in lines if len(line) > 80]
    assert not long, "\n".join(long)
    if args[0] == "convert" and args[1] != "--help":
        body = [line for line in lines if line and not line.startswith("[exit")]
        assert len(body) <= 24, "\n".join(body)
