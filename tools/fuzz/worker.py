"""One fuzz worker: runs cases sent on stdin, one JSON result line per case on stdout.

Started by ``run.py`` (and by ``tests/test_hostile.py``) as
``python worker.py --mem-mb 1024``; each input line is a JSON object
``{"input": path, "outputs": [path, ...]}`` (``"read"``: the file loaded when it is not the
input, a model wearing a mutated skin; ``"convert"``: a file without a scene, a texture,
converted to each output instead). For every case the worker reads the input,
converts it to a Scene, writes the native document back and counts it (``to_bytes``, ``info``:
what ``dump``, ``check`` and ``info`` do), saves the Scene to each output (the output's
extension picks the writer), then answers ``{"status": ..., ...}``:

- ``ok`` / ``format`` (a FormatError while reading) / ``document`` (a DocumentError or
  UnsupportedError while writing): allowed outcomes;
- ``exception``: anything else escaped (type, message, innermost frame), or a writer's own
  exception reached the registry, which wrapped it in a DocumentError ("failed on this content");
- ``memory``: a LimitError caused by MemoryError (an allocation hit the address-space cap set
  with RLIMIT_AS) or the peak RSS grew by more than ``--rss-mb`` during the case;
- ``escape``: a file outside the input's folder was opened, or a file outside the output's
  folder was created, renamed or removed (recorded by an audit hook). Listing a folder is not
  counted: texture lookup searches the game's usual folders beside the input by design.

A crash (segfault) or a hang shows up in ``run.py`` as a dead or silent worker.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import sysconfig
import time
import traceback
import warnings
from pathlib import Path


def _allowed_roots() -> list[str]:
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            roots.add(p)
    for p in sys.path:
        if p and os.path.isdir(p):
            roots.add(p)
    roots |= {"/proc/self", "/dev/null", "/dev/urandom", "/etc/localtime", "/usr/share/zoneinfo",
              "/usr/lib", "/lib"}
    return sorted(os.path.realpath(r) for r in roots)


class Guard:
    """An audit hook recording file opens and file-system changes outside the case folders."""

    WRITE_EVENTS = {"os.rename": 2, "os.replace": 2, "os.remove": 1, "os.unlink": 1,
                    "os.mkdir": 1, "os.rmdir": 1, "os.chmod": 1, "shutil.copyfile": 2,
                    "os.symlink": 2, "os.link": 2, "os.truncate": 1}

    def __init__(self) -> None:
        self.base = _allowed_roots()
        self.read_ok: list[str] = []
        self.write_ok: list[str] = []
        self.violations: list[str] = []
        self.active = False
        sys.addaudithook(self)

    @staticmethod
    def _inside(path: str, roots: list[str]) -> bool:
        return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)

    def _real(self, p) -> str | None:
        if isinstance(p, int) or p is None:
            return None
        try:
            p = os.fsdecode(p)
        except TypeError:
            return None
        return os.path.realpath(os.path.abspath(p))

    def __call__(self, event: str, args: tuple) -> None:
        if not self.active:
            return
        if event == "open":
            path = self._real(args[0])
            if path is None:
                return
            mode = args[1] if len(args) > 1 and isinstance(args[1], str) else "r"
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            writing = any(c in mode for c in "wax+") or flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
            roots = self.write_ok if writing else self.read_ok + self.write_ok + self.base
            if not self._inside(path, roots):
                self.violations.append(f"{'write' if writing else 'read'} {path}")
        elif event in self.WRITE_EVENTS:
            for a in args[:self.WRITE_EVENTS[event]]:
                path = self._real(a)
                if path is not None and not self._inside(path, self.write_ok):
                    self.violations.append(f"{event} {path}")


def _frame(exc: BaseException) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in tb if "retromesh" in f.filename] or tb
    if not ours:
        return ""
    f = ours[-1]
    return f"{Path(f.filename).name}:{f.lineno} {f.name}"


def _native(retromesh, src: Path) -> None:
    """The native path of a file that loaded: read, write back, count (``info``)."""
    from retromesh import registry
    doc = retromesh.read(src)
    fmt = registry.format_of(doc)
    if fmt.write is not None:
        retromesh.to_bytes(doc)
    if fmt.info is not None:
        fmt.info(doc)


def run_case(case: dict, guard: Guard, rss_mb: int) -> dict:
    import retromesh
    src = Path(case["input"])
    outputs = [Path(o) for o in case.get("outputs", [])]
    # a case in a game's folder layout may read the whole layout ("root"), others their folder
    guard.read_ok = [os.path.realpath(case.get("root", src.parent))]
    guard.write_ok = sorted({os.path.realpath(o.parent) for o in outputs})
    guard.violations = []
    start_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0, c0 = time.perf_counter(), time.process_time()
    steps: dict[str, float] = {}       # CPU seconds of the read and of each save
    result: dict = {"status": "ok"}
    stage = "read"
    guard.active = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if case.get("convert"):     # a texture: no scene, converted file to file
                _native(retromesh, src)
                steps["read"] = time.process_time() - c0
                stage = "write"
                for out in outputs:
                    c1 = time.process_time()
                    try:
                        retromesh.convert(src, out)
                    except (retromesh.DocumentError, retromesh.UnsupportedError) as exc:
                        result = {"status": "document", "message": str(exc)[:300],
                                  "output": out.suffix}
                    steps[out.suffix] = time.process_time() - c1
                outputs = []
            read = Path(case.get("read", src))
            scene = None if case.get("convert") else retromesh.load(read)
            steps.setdefault("read", time.process_time() - c0)
            stage = "native"        # read -> to_bytes and info: what dump, check and info do
            c1 = time.process_time()
            if not case.get("convert"):
                _native(retromesh, read)
            steps["native"] = time.process_time() - c1
            stage = "write"
            for out in outputs:
                c1 = time.process_time()
                try:
                    retromesh.save(scene, out)
                except (retromesh.DocumentError, retromesh.UnsupportedError) as exc:
                    cause = exc.__cause__
                    if cause is not None and not isinstance(cause, retromesh.RetromeshError):
                        # a writer's own exception the registry wrapped: not a clear error
                        result = {"status": "exception", "type": type(cause).__name__,
                                  "stage": f"write {out.suffix}", "message": str(exc)[:300],
                                  "where": _frame(cause)}
                        break
                    result = {"status": "document", "message": str(exc)[:300],
                              "output": out.suffix}
                steps[out.suffix] = time.process_time() - c1
    except retromesh.FormatError as exc:
        cause = exc.__cause__
        if isinstance(cause, MemoryError) or "MemoryError" in str(exc):
            result = {"status": "memory", "message": str(exc)[:300], "where": _frame(cause or exc)}
        else:
            result = {"status": "format", "message": str(exc)[:300]}
    except retromesh.UnsupportedError as exc:
        result = {"status": "format" if stage == "read" else "document", "message": str(exc)[:300]}
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        result = {"status": "exception", "type": type(exc).__name__, "stage": stage,
                  "message": str(exc)[:300], "where": _frame(exc)}
    finally:
        guard.active = False
    result["seconds"] = round(time.perf_counter() - t0, 4)
    result["cpu_seconds"] = round(time.process_time() - c0, 4)
    result["step_cpu_seconds"] = {k: round(v, 4) for k, v in steps.items()}
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - start_rss) // 1024
    if grown > rss_mb and result["status"] in ("ok", "format", "document"):
        result = {**result, "status": "memory", "message": f"peak RSS grew by {grown} MB"}
    result["rss_growth_mb"] = grown
    if guard.violations:
        result = {**result, "status": "escape", "message": "; ".join(guard.violations[:5])}
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mem-mb", type=int, default=1536, help="address-space cap (RLIMIT_AS)")
    ap.add_argument("--rss-mb", type=int, default=400, help="peak RSS growth counted as a finding")
    args = ap.parse_args()
    import numpy  # noqa: F401  (imported before the cap and the guard)

    import retromesh
    from retromesh import registry
    registry.formats()
    resource.setrlimit(resource.RLIMIT_AS, (args.mem_mb << 20, args.mem_mb << 20))
    guard = Guard()
    out = sys.stdout
    print(json.dumps({"ready": retromesh.__version__}), file=out, flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        case = json.loads(line)
        print(json.dumps(run_case(case, guard, args.rss_mb)), file=out, flush=True)


if __name__ == "__main__":
    main()
