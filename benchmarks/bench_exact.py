"""What "unedited means identical" costs (issue 32): GLB size and conversion times per family,
with the byte-exact records (this checkout, or ``--src``) against a tree without them
(``--base``), both ways, with the companions the CLI reads.

    python benchmarks/bench_exact.py --family b3d --base DIR [--src DIR] [--repeat N] [--cli]
                                     [--match TEXT] [--models FILE ...]

A tree without the records is the source of the commit before a family's records were merged,
unpacked read-only, for example::

    mkdir -p /tmp/base && git archive efbe96f src | tar -x -C /tmp/base    # B3D
    # ab29cb4: Lost Saga and LithTech, 76fef28: Overgrowth

Each tree runs in a worker process of its own; every conversion is timed in one worker and then
the other (A, B, B, A, ...), so that load from others on a shared machine falls on both alike.
Prints, per model: GLB bytes and the median CPU time of ``model -> GLB`` and ``GLB -> model``
for both trees and their ratio, and whether the files written back by ``--src`` are identical
to the ones read. Before timing, each worker converts every model once, untimed (lazy imports).
``--cli`` times ``retromesh convert`` in a fresh process instead (start-up
included, wall time). Never asserts timings.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FAMILIES = ("b3d", "lostsaga", "lithtech", "overgrowth")

#: a worker: reads one job a line, converts, prints the CPU seconds it took
WORKER = r'''
import json, sys, time, warnings
sys.path.insert(0, sys.argv[1])
import retromesh
from retromesh import batch
for line in sys.stdin:
    src, dst = json.loads(line)
    opts = batch.companions(__import__("pathlib").Path(src)) if not src.endswith(".glb") else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.process_time()
        retromesh.convert(src, dst, **opts)
        dt = time.process_time() - t
    print(json.dumps(dt), flush=True)
'''


def sources(family: str, tmp: Path) -> list[Path]:
    """The models measured for ``family``: examples, corpus and one large synthetic model
    (Overgrowth: two, the benchmark's random character and one as an exporter writes it)."""
    from measure import CORPUS

    import retromesh
    ex = ROOT / "examples"
    big = tmp / "synthetic"
    big.mkdir(exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if family == "b3d":
            from bench_b3d import big_scene
            retromesh.save(big_scene(60000), big / "big.b3d")
            return [*sorted(ex.glob("*.b3d")), *sorted((CORPUS / "b3d").glob("*.b3d")),
                    *sorted((CORPUS / "luanti").rglob("*.b3d")), big / "big.b3d"]
        if family == "lostsaga":
            return [ex / "lostsaga" / n for n in ("column.msh", "column.skl", "column_wave.ani")] + \
                sorted(p for p in (CORPUS / "lostsaga").glob("*.*") if p.suffix in (".msh", ".ani", ".cms"))
        if family == "lithtech":
            from bench_lithtech import big_model
            retromesh.write(big_model(20000, 3, 40, 4, 30, False), big / "big_v12.abc")
            return [*sorted((ex / "lithtech").glob("*.abc")), big / "big_v12.abc"]
        from bench_overgrowth import big_character, real_character
        phxbn, _obj, _anims = big_character(big)
        real, _obj, _anims = real_character(big / "real")
        og = ex / "overgrowth"
        return [og / n for n in ("stick.phxbn", "stick.obj", "walk.anm", "wave.anm", "stick.fzx")] + \
            [phxbn, real]


class Tree:
    """One source tree: a worker process, or the command line with that tree first on the path."""

    def __init__(self, src: Path, cli: bool):
        self.src, self.cli = src.resolve(), cli
        self.proc = None if cli else subprocess.Popen(
            [sys.executable, "-c", WORKER, str(self.src)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True)

    def convert(self, src: Path, dst: Path) -> float:
        if self.cli:
            env = dict(os.environ, PYTHONPATH=str(self.src))
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "retromesh", "convert", str(src), "-o", str(dst)],
                           env=env, check=True, capture_output=True)
            return time.perf_counter() - t
        assert self.proc and self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps([str(src), str(dst)]) + "\n")
        self.proc.stdin.flush()
        return float(json.loads(self.proc.stdout.readline()))


def warm_up(trees: list[Tree], models: list[Path], tmp: Path) -> None:
    """Each model once to GLB and back in each worker, untimed: the first conversions import
    what a family loads lazily, which would otherwise fall on the first model's figures."""
    if trees[0].cli:
        return
    for k, tree in enumerate(trees):
        warm = tmp / f"warm{k}"
        warm.mkdir()
        for src in models:
            tree.convert(src, warm / f"{src.stem}.glb")
            tree.convert(warm / f"{src.stem}.glb", warm / src.name)


def identical(src: Path, back: Path) -> bool:
    from retromesh import batch
    read = [src, *batch.members(batch.companions(src))]
    if src.suffix == ".msh" and src.with_suffix(".txt").is_file():
        read.append(src.with_suffix(".txt"))
    return all((back / f.name).is_file() and (back / f.name).read_bytes() == f.read_bytes()
               for f in read)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", choices=FAMILIES, required=True)
    ap.add_argument("--base", type=Path, required=True, help="source tree without the records")
    ap.add_argument("--src", type=Path, default=ROOT / "src", help="source tree measured")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--cli", action="store_true", help="time the command line (fresh processes)")
    ap.add_argument("--match", default="", help="only the models whose name contains this")
    ap.add_argument("--models", type=Path, nargs="+", help="these files instead of the family's")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(args.src.resolve()))
    import retromesh
    print(f"# A (without records): {args.base}\n# B (with records):    {args.src}\n"
          f"# median of {args.repeat}, {'wall ms, command line' if args.cli else 'CPU ms, in-process'}")
    print(f"{'model':40} {'GLB A':>9} {'GLB B':>9} {'size':>6} {'to A':>7} {'to B':>7} {'to':>6} "
          f"{'back A':>7} {'back B':>7} {'back':>6}  identical")
    trees = [Tree(args.base, args.cli), Tree(args.src, args.cli)]
    tot = [0, 0, 0.0, 0.0, 0.0, 0.0]
    with tempfile.TemporaryDirectory() as tmpname:
        tmp = Path(tmpname)
        models = [s for s in (args.models or sources(args.family, tmp)) if args.match in s.name]
        warm_up(trees, models, tmp)
        for src in models:
            times: list[list[float]] = [[], [], [], []]
            glbs = [tmp / "A" / f"{src.stem}.glb", tmp / "B" / f"{src.stem}.glb"]
            backs = [tmp / "A" / "back", tmp / "B" / "back"]
            for d in backs:
                d.mkdir(parents=True, exist_ok=True)
            for r in range(args.repeat):
                order = (0, 1) if r % 2 == 0 else (1, 0)
                for k in order:
                    times[k].append(trees[k].convert(src, glbs[k]))
                for k in order:
                    times[2 + k].append(trees[k].convert(glbs[k], backs[k] / src.name))
            med = [statistics.median(t) * 1000 for t in times]
            size = [g.stat().st_size for g in glbs]
            for i, v in enumerate((*size, *med)):
                tot[i] += v
            print(f"{src.name[:40]:40} {size[0]:>9} {size[1]:>9} {size[1] / size[0] - 1:>+6.1%} "
                  f"{med[0]:>7.1f} {med[1]:>7.1f} {med[1] / med[0] - 1:>+6.1%} "
                  f"{med[2]:>7.1f} {med[3]:>7.1f} {med[3] / med[2] - 1:>+6.1%}  "
                  f"{identical(src, backs[1])}", flush=True)
    print(f"{'total':40} {tot[0]:>9} {tot[1]:>9} {tot[1] / tot[0] - 1:>+6.1%} "
          f"{tot[2]:>7.1f} {tot[3]:>7.1f} {tot[3] / tot[2] - 1:>+6.1%} "
          f"{tot[4]:>7.1f} {tot[5]:>7.1f} {tot[5] / tot[4] - 1:>+6.1%}")
    del retromesh


if __name__ == "__main__":
    main()
