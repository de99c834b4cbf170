"""Folder mode: ``retromesh convert DIR -o OUT`` in one process, paired with assimp.

    python benchmarks/bench_folder.py [--repeat 5] [--files 320] [--jobs 1 2 4] [--src DIR]
                                      [--skip-assimp] [--skip-jobs]

1. The 25 corpus B3D (``../shared/corpus/b3d``): one ``retromesh convert`` of the folder against
   assimp 6.0.5's per-file loop (one ``assimp export`` process per file; PyPI ``cmeel-assimp``
   in a throwaway venv, see ``measure.assimp6``), runs alternated so that machine load hits
   both alike; medians and their ratio (goal: <= 1.5x).
2. ``-j`` scaling: a mixed folder of ``--files`` copies of the corpus files (B3D, Lugaru
   .solid, Westwood .vxl with their .hva, Lost Saga; else examples/), each ``-j`` run in turn
   per round; median wall and user+sys CPU per ``-j``.

Every run writes into a fresh output folder (replacing existing files costs extra on some file
systems), and the children run with their bytecode cached (``PYTHONPYCACHEPREFIX``, as an
installed package has it) whatever ``PYTHONDONTWRITEBYTECODE`` says. The load average is
printed: on a shared machine, compare only figures of the same run.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import ASSIMP_VERSION, CORPUS, ROOT, assimp6

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


def child(cmd: list[str], env: dict[str, str], check: bool = True) -> tuple[float, float]:
    """Wall and user+sys CPU seconds of one child process (output discarded); with ``check``,
    an exit code other than 0/1 (1: some file failed) stops the benchmark."""
    t = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            os.execvpe(cmd[0], cmd, env)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t
    if check and os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return wall, usage.ru_utime + usage.ru_stime


def retromesh(python: str, folder: Path, out: Path, env: dict[str, str],
              *extra: str) -> tuple[float, float]:
    shutil.rmtree(out, ignore_errors=True)
    return child([python, "-m", "retromesh", "convert", str(folder), "-o", str(out), *extra], env)


def vs_assimp(args: argparse.Namespace, work: Path, env: dict[str, str]) -> None:
    files = sorted((CORPUS / "b3d").glob("*.b3d"))
    if not files:
        print("no corpus B3D (../shared/corpus/b3d): the assimp comparison is skipped")
        return
    assimp = assimp6()
    aenv = dict(os.environ)
    ours, loop = [], []
    retromesh(args.python, CORPUS / "b3d", work / "o", env)            # bytecode cached
    for _ in range(args.repeat):
        ours.append(retromesh(args.python, CORPUS / "b3d", work / "o", env))
        shutil.rmtree(work / "a", ignore_errors=True)
        (work / "a").mkdir()
        runs = [child([*assimp, "export", str(f), str(work / "a" / f"{f.stem}.glb")], aenv,
                      check=False) for f in files]
        loop.append((sum(w for w, _ in runs), sum(c for _, c in runs)))
    made = len(list((work / "a").glob("*.glb")))
    o, a = (statistics.median(w for w, _ in ours), statistics.median(w for w, _ in loop))
    oc, ac = (statistics.median(c for _, c in ours), statistics.median(c for _, c in loop))
    paired = statistics.median(w / lw for (w, _), (lw, _) in zip(ours, loop))
    print(f"{len(files)} corpus B3D -> GLB, median of {args.repeat} paired runs, load "
          f"{os.getloadavg()[0]:.1f}:\n  retromesh folder mode {o:.3f} s, assimp {ASSIMP_VERSION} "
          f"one process per file {a:.3f} s ({made} files written): {o / a:.2f}x"
          f"\n  median of the per-round ratios (each round: ours, then assimp's loop): "
          f"{paired:.2f}x (goal <= 1.5x)"
          f"\n  CPU (user+sys): {oc:.3f} s against {ac:.3f} s: {oc / ac:.2f}x")


def jobs_scaling(args: argparse.Namespace, work: Path, env: dict[str, str]) -> None:
    n = make_folder(work / "in", args.files)
    runs: dict[int, list[tuple[float, float]]] = {j: [] for j in args.jobs}
    for _ in range(max(1, args.repeat // 2)):
        for j in args.jobs:
            runs[j].append(retromesh(args.python, work / "in", work / "out", env, "-j", str(j)))
    print(f"{n} mixed files, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} "
          f"(median of {max(1, args.repeat // 2)} runs each):")
    print(f"  {'-j':>3} {'wall s':>8} {'cpu s':>7} {'wall ms/file':>13} {'speed-up':>9}")
    base = statistics.median(w for w, _ in runs[args.jobs[0]])
    for j in args.jobs:
        wall = statistics.median(w for w, _ in runs[j])
        cpu = statistics.median(c for _, c in runs[j])
        print(f"  {j:>3} {wall:8.2f} {cpu:7.2f} {wall / n * 1000:13.1f} {base / wall:8.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--files", type=int, default=320)
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--src", default=str(ROOT / "src"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--skip-assimp", action="store_true")
    ap.add_argument("--skip-jobs", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="retromesh-folder-"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=args.src, PYTHONPYCACHEPREFIX=str(work / "pycache"))
    print(f"src {args.src}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    try:
        if not args.skip_assimp:
            vs_assimp(args, work, env)
        if not args.skip_jobs:
            jobs_scaling(args, work, env)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
