"""Hostile-input benchmark: read and load time and peak memory of every regression file of
``tests/regressions`` (fuzzer outputs), slowest first; the issue's budget is 1 s for a file
under 1 MB, and no allocation far beyond the file's size.

    python benchmarks/bench_hostile.py [--top 10]
    python benchmarks/bench_hostile.py --writers [--src OTHER/src]   # big scenes, every writer

Each file is read (``retromesh.read``) and converted (``retromesh.load``); a FormatError is an
expected outcome and is timed like a success.

``--writers`` saves the scenes of ``tests/test_hostile.py`` (20,000 root nodes with a triangle
on every 100th, skinned for the skeleton formats; a 5,000-deep chain) to every writer and
prints CPU and wall seconds (the machine is shared: CPU time is the steadier figure), then the
Overgrowth ``.anm`` cases (the campaign's 3 KB file asking for 70 minutes of samples, and one
just under ``LIMITS["sample_bones"]``). ``--src`` imports retromesh from another checkout (a
``git archive`` of main) to compare before and after.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import ROOT, peak, timed


def _load(path: Path):
    import retromesh
    try:
        return retromesh.load(path)
    except retromesh.FormatError as exc:
        return exc


def regression_files(top: int) -> None:
    rows = []
    for path in sorted((ROOT / "tests" / "regressions").glob("*/*")):
        if path.suffix in (".bin", ".md"):
            continue
        seconds, out = timed(lambda path=path: _load(path), 3)
        mib = peak(lambda path=path: _load(path))
        rows.append((seconds, mib, path, type(out).__name__))
    rows.sort(key=lambda r: r[0], reverse=True)
    print(f"{'seconds':>8} {'peak MiB':>9} {'KB':>6}  outcome      file")
    for seconds, mib, path, outcome in rows[:top]:
        print(f"{seconds:8.3f} {mib:9.1f} {path.stat().st_size / 1024:6.0f}  {outcome:12} "
              f"{path.parent.name}/{path.name}")
    print(f"{len(rows)} files, total {sum(r[0] for r in rows):.2f} s, "
          f"max peak {max(r[1] for r in rows):.1f} MiB")


def _run(fn) -> tuple[float, float, str]:
    import retromesh
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        fn()
        outcome = "ok"
    except retromesh.RetromeshError as exc:
        outcome = f"{type(exc).__name__}: {str(exc)[:60]}"
    return time.process_time() - cpu, time.perf_counter() - wall, outcome


def writers(out: Path) -> None:
    import retromesh
    sys.path.insert(0, str(ROOT / "tests"))
    from test_hostile import BIG, _big_scene
    print(f"{'writer':6} {'scene':14} {'cpu s':>6} {'wall s':>7}  outcome")
    for ext, kind in sorted(BIG.items()):
        for label, n, shape in (("20,000 flat", 20000, "flat"), ("5,000 chain", 5000, "chain")):
            scene = _big_scene(n, shape, kind)
            target = out / f"bench.{ext}"
            cpu, wall, outcome = _run(lambda scene=scene, target=target: retromesh.save(scene, target))
            print(f"{ext:6} {label + ' ' + kind[:4]:14} {cpu:6.2f} {wall:7.2f}  {outcome}")
    from retromesh.formats.overgrowth.anm import write
    from test_hostile import _anm
    for label, length, bones in (("campaign .anm (70 min, 6 bones)", 4_195_504, 6),
                                 ("near the cap (138 s, 120 bones)", 138_000, 120)):
        data = write(_anm(length, bones))
        cpu, wall, outcome = _run(lambda data=data: retromesh.load(data, format="anm"))
        print(f"anm    {label:32} {cpu:6.2f} {wall:7.2f}  {outcome} ({len(data)} bytes)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--writers", action="store_true", help="big scenes through every writer")
    ap.add_argument("--src", type=Path, default=ROOT / "src", help="the retromesh to import")
    ap.add_argument("--out", type=Path, default=Path("/tmp"), help="scratch folder for --writers")
    args = ap.parse_args()
    sys.path.insert(0, str(args.src.resolve()))
    warnings.simplefilter("ignore")
    if args.writers:
        writers(args.out)
    else:
        regression_files(args.top)


if __name__ == "__main__":
    main()
