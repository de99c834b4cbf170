"""Measuring helpers shared by the benchmark scripts (run them as ``python benchmarks/bench_*.py``)."""
from __future__ import annotations

import os
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
