"""Runs cases through a ``worker.py`` subprocess, restarting it after a crash or a hang."""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

WORKER = Path(__file__).with_name("worker.py")
SRC = Path(__file__).resolve().parents[2] / "src"


class Driver:
    """``run(case) -> result``; a dead worker gives ``{"status": "crash"}``, a silent one
    ``{"status": "hang"}`` (and is killed and replaced)."""

    def __init__(self, *, timeout: float = 10.0, mem_mb: int = 1536, rss_mb: int = 400) -> None:
        self.timeout = timeout
        self.args = [sys.executable, str(WORKER), "--mem-mb", str(mem_mb), "--rss-mb", str(rss_mb)]
        self.proc: subprocess.Popen | None = None
        self.cases_in_worker = 0

    def _start(self) -> None:
        for attempt in range(3):        # a worker that cannot start (say, the tree was being
            try:                        # edited under a long campaign) gets two more tries
                return self._spawn()
            except RuntimeError:
                self.stop()
                if attempt == 2:
                    raise
                time.sleep(10)

    def _spawn(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
        env.setdefault("PYTHONHASHSEED", "0")
        self.proc = subprocess.Popen(self.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, text=True, bufsize=1)
        line = self._readline(120.0)
        if line is None or "ready" not in line:
            raise RuntimeError(f"fuzz worker did not start: {line!r}")
        self.cases_in_worker = 0

    def _readline(self, timeout: float) -> str | None:
        assert self.proc is not None and self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        line = self.proc.stdout.readline()
        return line or None

    def stop(self) -> None:
        if self.proc is not None:
            try:
                self.proc.kill()
                self.proc.wait(timeout=10)
            except Exception:
                pass
            self.proc = None

    def run(self, case: dict) -> dict:
        # a fresh worker now and then keeps the RSS high-water mark meaningful
        if self.proc is None or self.proc.poll() is not None or self.cases_in_worker >= 2000:
            self.stop()
            self._start()
        assert self.proc is not None and self.proc.stdin is not None
        t0 = time.monotonic()
        try:
            self.proc.stdin.write(json.dumps(case) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        line = self._readline(self.timeout)
        self.cases_in_worker += 1
        if line is None:
            code = self.proc.poll()
            if code is None:
                self.stop()
                return {"status": "hang", "message": f"no answer within {self.timeout} s"}
            self.stop()
            return {"status": "crash", "message": f"worker died with exit code {code}",
                    "seconds": round(time.monotonic() - t0, 3)}
        result = json.loads(line)
        if result.get("status") == "memory":
            self.stop()          # reset the RSS high-water mark
        return result
