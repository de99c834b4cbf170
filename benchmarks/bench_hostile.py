"""Hostile-input benchmark: read and load time and peak memory of every regression file of
``tests/regressions`` (fuzzer outputs), slowest first; the issue's budget is 1 s for a file
under 1 MB, and no allocation far beyond the file's size.

    python benchmarks/bench_hostile.py [--top 10]

Each file is read (``retromesh.read``) and converted (``retromesh.load``); a FormatError is an
expected outcome and is timed like a success.
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import retromesh  # noqa: E402
from measure import ROOT, peak, timed  # noqa: E402


def _load(path: Path):
    try:
        return retromesh.load(path)
    except retromesh.FormatError as exc:
        return exc


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    rows = []
    for path in sorted((ROOT / "tests" / "regressions").glob("*/*")):
        if path.suffix in (".bin", ".md"):
            continue
        seconds, out = timed(lambda: _load(path), 3)
        mib = peak(lambda: _load(path))
        rows.append((seconds, mib, path, type(out).__name__))
    rows.sort(key=lambda r: r[0], reverse=True)
    print(f"{'seconds':>8} {'peak MiB':>9} {'KB':>6}  outcome      file")
    for seconds, mib, path, outcome in rows[:args.top]:
        print(f"{seconds:8.3f} {mib:9.1f} {path.stat().st_size / 1024:6.0f}  {outcome:12} "
              f"{path.parent.name}/{path.name}")
    print(f"{len(rows)} files, total {sum(r[0] for r in rows):.2f} s, "
          f"max peak {max(r[1] for r in rows):.1f} MiB")


if __name__ == "__main__":
    main()
