"""Measuring helpers shared by the benchmark scripts (run them as ``python benchmarks/bench_*.py``)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the real files of ../shared/corpus (RETROMESH_CORPUS overrides)
CORPUS = Path(os.environ.get("RETROMESH_CORPUS", ROOT.parent / "shared" / "corpus"))


def timed(fn, repeat: int):
    """(best wall time in seconds over ``repeat`` runs, the last result)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def peak(fn) -> float:
    """Peak traced memory of one run of ``fn``, in MiB (numpy allocations included)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


ASSIMP_VERSION = "6.0.5"
#: the throwaway venv holding the reference assimp (PyPI cmeel-assimp ships its CLI)
VENV = Path(os.environ.get("RETROMESH_CACHE", Path.home() / ".cache" / "retromesh")) / "assimp6"


def assimp6() -> list[str]:
    """The command prefix that runs assimp 6.0.5's CLI (installing it on first use)."""
    if not (VENV / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    prefix = next(VENV.glob("lib/python*/site-packages/cmeel.prefix"), None)
    if prefix is None or not (prefix / "bin" / "assimp").exists():
        subprocess.run([str(VENV / "bin" / "pip"), "install", "-q",
                        f"cmeel-assimp=={ASSIMP_VERSION}"], check=True)
        prefix = next(VENV.glob("lib/python*/site-packages/cmeel.prefix"))
    libs = os.pathsep.join(str(p) for p in (prefix / "lib", prefix / "lib64") if p.exists())
    return ["env", f"LD_LIBRARY_PATH={libs}", str(prefix / "bin" / "assimp")]
