"""Folder-mode benchmark: ``retromesh convert DIR -o OUT -j N`` over a mixed folder (issue #15).

    python benchmarks/bench_folder.py [--files 320] [--jobs 1 2 4] [--src DIR]

Builds a folder of ``--files`` copies of the corpus files (B3D, Lugaru .solid, Westwood .vxl
with their .hva, Lost Saga; ../shared/corpus, else examples/) and converts it in a fresh
process for each ``-j``, printing wall, user+sys CPU time and the ms per file, and the same
runs with ``os.fsync`` made a no-op (what the per-file flush to disk costs). With the CPU
time per file far below the wall time per file, the batch waits (disk flushes, a busy
machine) rather than computes, and more workers cannot help.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("RETROMESH_CORPUS", ROOT.parent / "shared" / "corpus"))
KINDS = (".b3d", ".solid", ".vxl", ".msh", ".skl", ".ani")


def make_folder(folder: Path, n: int) -> int:
    pool = sorted(p for p in CORPUS.rglob("*") if p.suffix.lower() in KINDS) or \
        sorted(p for p in (ROOT / "examples").rglob("*") if p.suffix.lower() in KINDS)
    for i in range(n):
        src = pool[i % len(pool)]
        sub = folder / f"copy{i // len(pool)}"
        sub.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, sub / src.name)
        hva = src.with_suffix(".hva")
        if src.suffix.lower() == ".vxl" and hva.exists():
            shutil.copy(hva, sub / hva.name)
    return n


def run(python: str, src: str, folder: Path, out: Path, jobs: int, fsync: bool) -> tuple[float, float]:
    shutil.rmtree(out, ignore_errors=True)
    code = ("import os, sys\n"
            + ("" if fsync else "os.fsync = lambda fd: None\n")
            + f"sys.argv = ['retromesh', 'convert', {str(folder)!r}, '-o', {str(out)!r}, "
              f"'-j', '{jobs}']\nfrom retromesh.cli import main\nmain()\n")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([python, "-c", code], env=dict(os.environ, PYTHONPATH=src),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=320)
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--src", default=str(ROOT / "src"))
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="retromesh-folder-"))
    try:
        n = make_folder(work / "in", args.files)
        print(f"{n} files, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, "
              f"src {args.src}")
        print(f"  {'-j':>3} {'fsync':>6} {'wall s':>8} {'cpu s':>7} {'wall ms/file':>13} "
              f"{'cpu ms/file':>12}")
        for fsync in (True, False):
            for jobs in args.jobs:
                wall, cpu = run(args.python, args.src, work / "in", work / "out", jobs, fsync)
                print(f"  {jobs:>3} {'on' if fsync else 'off':>6} {wall:8.2f} {cpu:7.2f} "
                      f"{wall / n * 1000:13.1f} {cpu / n * 1000:12.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
