"""retromesh against the current assimp (6.0.5, PyPI ``cmeel-assimp``), paired and interleaved.

    python benchmarks/bench_vs_assimp.py [--sizes 10000 100000 1000000] [--repeat 3] [--quick]
                                         [--kinds static skinned] [--only-sizes]

assimp 6.0.5 is installed once into a throwaway venv (``~/.cache/retromesh/assimp6``) and its own
``assimp`` binary is run with its libraries (not the Python wrapper script). Debian's 5.2.5 is not
the reference: it joins vertex weights in quadratic time, a bug fixed upstream.

Inputs are made by our own B3D writer: a grid of N vertices, static, or skinned to a 64-bone
chain with 2 weights per vertex and 100 rotation keys per bone. Each size is converted B3D -> GLB
by both tools in fresh processes, alternating (ours, theirs, ours, theirs...) so that machine load
hits both alike; the median wall time and peak RSS of each are printed with their ratio and how
each side's cost grows with size (the exponent k in time ~ N^k between the sizes). Also:
start-up (``retromesh convert examples/crate.b3d``) against a bare ``python -c "import numpy"``,
and the 25 corpus B3D in one folder conversion against assimp's per-file loop.
"""
from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from bench_b3d import big_scene, child_run
from measure import ASSIMP_VERSION, CORPUS, ROOT, assimp6

import retromesh


def static_scene(n: int) -> retromesh.Scene:
    scene = big_scene(n, bones=1, frames=2)
    scene.skins.clear()
    scene.animations.clear()
    for node in scene.nodes:
        node.skin = None
    for prim in scene.meshes[0].primitives:
        prim.joints = prim.weights = None
    return scene


def paired(ours: list[str], theirs: list[str], repeat: int) -> tuple[tuple, tuple]:
    """Median (wall s, peak RSS MiB) of each command, run alternately ``repeat`` times."""
    a, b = [], []
    for _ in range(repeat):
        a.append(child_run(ours))
        b.append(child_run(theirs))
    for runs, cmd in ((a, ours), (b, theirs)):
        if any(r[2] != 0 for r in runs):
            raise SystemExit(f"failed: {' '.join(cmd)}")
    med = lambda runs, i: statistics.median(r[i] for r in runs)  # noqa: E731
    return (med(a, 0), med(a, 1)), (med(b, 0), med(b, 1))


def retromesh_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "retromesh", *args]


#: the project's goals for the 1M-vertex skinned conversion: ours / assimp's
GOALS = {"time": 0.2, "peak RSS": 0.25}


def sizes_table(sizes: list[int], repeat: int, work: Path, assimp: list[str],
                kinds: tuple[str, ...] = ("static", "skinned")) -> None:
    for kind in kinds:
        print(f"\nB3D -> GLB, {kind} (median of {repeat} paired runs)")
        print(f"  {'vertices':>10}  {'retromesh s':>11}  {'assimp s':>9}  {'time x':>7}"
              f"  {'ours MiB':>9}  {'assimp MiB':>10}  {'mem x':>6}")
        rows = []
        for n in sizes:
            src = work / f"{kind}_{n}.b3d"
            # made in a child process: a forked child's peak RSS counts its parent's pages
            # until it execs, so this process stays small while it measures
            subprocess.run([sys.executable, __file__, "--make", kind, str(n), str(src)], check=True)
            ours, theirs = paired(retromesh_cmd("convert", str(src), "-o", str(work / "o.glb")),
                                  [*assimp, "export", str(src), str(work / "a.glb")], repeat)
            rows.append((n, ours, theirs))
            print(f"  {n:>10,}  {ours[0]:>11.3f}  {theirs[0]:>9.3f}  {ours[0] / theirs[0]:>7.3f}"
                  f"  {ours[1]:>9.1f}  {theirs[1]:>10.1f}  {ours[1] / theirs[1]:>6.3f}")
        for n, ours, theirs in rows:
            if kind == "skinned" and n == 1_000_000:
                for what, i in (("time", 0), ("peak RSS", 1)):
                    ratio = ours[i] / theirs[i]
                    print(f"  goal {what} <= {GOALS[what]}x assimp: {ratio:.3f}x "
                          f"{'met' if ratio <= GOALS[what] else 'NOT met'}")
        for (n0, o0, t0), (n1, o1, t1) in zip(rows, rows[1:]):
            k = lambda a, b, n0=n0, n1=n1: math.log(b / a) / math.log(n1 / n0)  # noqa: E731
            print(f"  growth {n0:,} -> {n1:,}: retromesh time ~ N^{k(o0[0], o1[0]):.2f}, "
                  f"assimp time ~ N^{k(t0[0], t1[0]):.2f}")


def startup(repeat: int, work: Path, assimp: list[str]) -> None:
    crate = ROOT / "examples" / "crate.b3d"
    floor, ours = paired([sys.executable, "-c", "import numpy"],
                         retromesh_cmd("convert", str(crate), "-o", str(work / "c.glb")), repeat)
    theirs = statistics.median(child_run([*assimp, "export", str(crate), str(work / "c2.glb")])[0]
                               for _ in range(repeat))
    print(f"\nstart-up: retromesh convert crate.b3d {ours[0]:.3f} s = {ours[0] / floor[0]:.2f}x "
          f"the bare `import numpy` floor ({floor[0]:.3f} s); assimp {theirs:.3f} s")


def corpus_folder(repeat: int, work: Path, assimp: list[str]) -> None:
    files = sorted((CORPUS / "b3d").glob("*.b3d"))
    if not files:
        print("\nno corpus B3D (../shared/corpus/b3d): folder comparison skipped")
        return
    ours, loop = [], []
    for _ in range(repeat):
        ours.append(child_run(retromesh_cmd("convert", str(CORPUS / "b3d"), "-o",
                                            str(work / "folder"), "--overwrite"))[0])
        t = 0.0
        for f in files:
            t += child_run([*assimp, "export", str(f), str(work / "a.glb")])[0]
        loop.append(t)
    o, a = statistics.median(ours), statistics.median(loop)
    print(f"\n{len(files)} corpus B3D: retromesh folder mode {o:.3f} s, assimp one process per "
          f"file {a:.3f} s (ratio {o / a:.2f}x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="sizes 10k and 100k, 1 repeat")
    ap.add_argument("--kinds", nargs="+", choices=("static", "skinned"),
                    default=["static", "skinned"])
    ap.add_argument("--only-sizes", action="store_true",
                    help="the size table only (no start-up, no corpus folder)")
    ap.add_argument("--make", nargs=3, metavar=("KIND", "N", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.make:
        kind, n, path = args.make
        scene = big_scene(int(n), bones=64, frames=100) if kind == "skinned" else static_scene(int(n))
        retromesh.save(scene, path)
        return
    if args.quick:
        args.sizes, args.repeat = [10_000, 100_000], 1
    assimp = assimp6()
    os.environ["PYTHONPATH"] = str(ROOT / "src")      # the children run this checkout's retromesh
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, Python "
          f"{sys.version.split()[0]}, retromesh {retromesh.__version__}, assimp {ASSIMP_VERSION} "
          "(cmeel-assimp)")
    work = Path(tempfile.mkdtemp(prefix="retromesh-vs-assimp-"))
    try:
        if not args.only_sizes:
            startup(max(args.repeat, 5), work, assimp)
            corpus_folder(args.repeat, work, assimp)
        sizes_table(args.sizes, args.repeat, work, assimp, tuple(args.kinds))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
