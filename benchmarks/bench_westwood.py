"""Westwood voxel benchmark: a 255^3 limb (the largest a .vxl can hold) made by our writer,
plus the whole corpus when present.

    python benchmarks/bench_westwood.py [--side 255] [--keep DIR] [--runs 7] [--only-spans]

Prints wall time and tracemalloc peak for: meshing (greedy and unit faces), to_scene, the
.glb export and voxelising the scene back (from_scene) on a solid ball; then on a worst-case
limb: span encoding, write, read (with span validation), decoding, meshing, to_scene, .glb,
and the vxl -> vox -> vxl bridge; then the totals over the corpus (read + write
+ to_scene + glb of every .vxl with its .hva).

The span throughput lines (goal: read >= 500 MB/s of file bytes on the worst case) give
the median and the best of ``--runs`` runs of CPU time (``process_time``: steadier than wall
time on a shared machine) and the load average, as MB/s (10^6 bytes) of the whole file:
``read`` (checks every span, builds no grid), ``decode`` (the full 255^3 grid),
``encode`` (grid -> span bytes) and ``write`` (document -> bytes).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import retromesh
from retromesh.formats.westwood import convert, vox, vxl
from retromesh.formats.westwood.meshing import visible_quads
from retromesh.formats.westwood.samples import palette
from retromesh.formats.westwood.scene import to_scene
from retromesh.formats.westwood.voxels import VoxelGrid, encode_spans
from retromesh.formats.westwood.vxl import Limb, VxlFile

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "vxl"


def step(label: str, fn, *args, **kw):
    """Wall time of one plain run, then the tracemalloc peak of a second run (tracing slows
    numpy down, so the two are measured separately)."""
    t = time.perf_counter()
    out = fn(*args, **kw)
    dt = time.perf_counter() - t
    peak = float("nan")
    if MEMORY:
        tracemalloc.start()
        fn(*args, **kw)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    print(f"{label:<38} {dt * 1000:9.1f} ms   peak {peak / 2**20:8.1f} MiB")
    return out


MEMORY = True


def throughput(label: str, nbytes: int, fn, runs: int) -> None:
    """Median and best CPU time of ``runs`` runs as MB/s of ``nbytes``."""
    times = []
    for _ in range(runs):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    med, best = float(np.median(times)), min(times)
    print(f"  {label:<34} median {nbytes / med / 1e6:7.0f} MB/s   best {nbytes / best / 1e6:7.0f}"
          f" MB/s   ({med * 1000:.1f} ms)")


def span_throughput(raw: bytes, runs: int) -> None:
    from retromesh.formats.westwood.voxels import decode_spans
    doc = retromesh.read(raw, "vxl")
    limb = doc.limbs[0]
    grid = limb.voxels()
    load = " ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"span throughput, {len(raw) / 1e6:.1f} MB file, {runs} runs, "
          f"load average {load} on {os.cpu_count()} cores:")
    throughput("read (checks every span)", len(raw), lambda: retromesh.read(raw, "vxl"), runs)
    throughput("decode (spans -> 255^3 grid)", len(raw), lambda: decode_spans(
        limb.span_start, limb.span_end, limb.span_data, limb.size), runs)
    throughput("encode (grid -> spans)", len(raw), lambda: encode_spans(grid), runs)
    throughput("write (document -> bytes)", len(raw), lambda: vxl.write(doc), runs)


def solid_grid(n: int) -> VoxelGrid:
    """A solid ball with colour bands and RA2 table normals of its surface (like real models)."""
    from retromesh.formats.westwood.voxels import normal_indices
    ax = np.arange(n, dtype=np.float32) - (n - 1) / 2
    r2 = ax[:, None, None] ** 2 + ax[None, :, None] ** 2 + ax[None, None, :] ** 2
    mask = r2 <= (n / 2 - 0.5) ** 2
    z = np.arange(n, dtype=np.uint8)[None, None, :]
    colour = np.broadcast_to(64 + z // 16, mask.shape).astype(np.uint8)
    return VoxelGrid(np.where(mask, colour, 0).astype(np.uint8), normal_indices(mask, 4), mask)


def big_grid(n: int) -> VoxelGrid:
    """Worst case: a sphere with 2% holes and random normals (no two faces merge by normal)."""
    ax = np.arange(n, dtype=np.float32) - (n - 1) / 2
    r2 = ax[:, None, None] ** 2 + ax[None, :, None] ** 2 + ax[None, None, :] ** 2
    rng = np.random.default_rng(0)
    mask = r2 <= (n / 2 - 0.5) ** 2
    mask &= rng.random(mask.shape, dtype=np.float32) > 0.02       # holes -> inner faces
    z = np.arange(n, dtype=np.uint8)[None, None, :]
    colour = np.broadcast_to(64 + z // 16, mask.shape).astype(np.uint8)
    normal = (rng.integers(0, 244, mask.shape, dtype=np.uint8))
    return VoxelGrid(np.where(mask, colour, 0).astype(np.uint8),
                     np.where(mask, normal, 0).astype(np.uint8), mask)


def _worst_limb(n: int) -> Limb:
    start, end, data = encode_spans(big_grid(n))
    return Limb(name=b"BIG".ljust(16, b"\0"), span_start=start, span_end=end, span_data=data,
                xsize=n, ysize=n, zsize=n, bounds_min=np.zeros(3, np.float32),
                bounds_max=np.full(3, n, np.float32))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", type=int, default=255)
    ap.add_argument("--keep", type=Path)
    ap.add_argument("--no-memory", action="store_true", help="skip the tracemalloc runs")
    ap.add_argument("--runs", type=int, default=7, help="runs of each span throughput line")
    ap.add_argument("--only-spans", action="store_true",
                    help="only the span throughput lines on the worst case")
    a = ap.parse_args()
    global MEMORY
    MEMORY = not a.no_memory
    out_dir = a.keep or Path(tempfile.mkdtemp())
    out_dir.mkdir(parents=True, exist_ok=True)
    n = a.side
    if a.only_spans:
        span_throughput(vxl.write(VxlFile(palette=palette(), limbs=[_worst_limb(n)])), a.runs)
        return
    print(f"solid ball {n}^3 with surface table normals")
    solid = solid_grid(n)
    key = solid.colour.astype(np.int32) * 256 + solid.normal
    q = step("mesh: greedy (colour + normal)", visible_quads, solid.mask, key, True)
    print(f"  {len(q):,} quads")
    q = step("mesh: greedy (colour only)", visible_quads, solid.mask, solid.colour, True)
    print(f"  {len(q):,} quads")
    q = step("mesh: unit faces", visible_quads, solid.mask, key, False)
    print(f"  {len(q):,} quads")
    sdoc = VxlFile(palette=palette(), limbs=[Limb.from_grid(solid, "BALL")])
    scene = step("to_scene (greedy, table normals)", to_scene, sdoc)
    print(f"  {scene.counts()['triangles']:,} triangles")
    step("save .glb", retromesh.save, scene, out_dir / "ball.glb")
    from retromesh.formats.westwood.scene_write import from_scene
    back = step("from_scene (voxelise it again)", from_scene, scene, voxel_size=1.0)
    print(f"  {back[''].limbs[0].voxels().count:,} voxels back")
    del solid, sdoc, scene, back
    print(f"\nworst case {n}^3: 2% holes, random normals")
    grid = big_grid(n)
    print(f"  {grid.count:,} voxels")
    start, end, data = step("encode spans (grid -> body)", encode_spans, grid)
    limb = Limb(name=b"BIG".ljust(16, b"\0"), span_start=start, span_end=end, span_data=data,
                xsize=n, ysize=n, zsize=n, bounds_min=np.zeros(3, np.float32),
                bounds_max=np.full(3, n, np.float32))
    doc = VxlFile(palette=palette(), limbs=[limb])
    raw = step("write .vxl", vxl.write, doc)
    print(f"  {len(raw) / 2**20:.1f} MiB file")
    span_throughput(raw, a.runs)
    back = step("read .vxl (validates every span)", retromesh.read, raw, "vxl")
    g = step("decode spans (body -> grid)", back.limbs[0].voxels)
    key = g.colour.astype(np.int32) * 256 + g.normal
    q = step("mesh: greedy (colour + normal)", visible_quads, g.mask, key, True)
    print(f"  {len(q):,} quads")
    q = step("mesh: greedy (colour only)", visible_quads, g.mask, g.colour, True)
    print(f"  {len(q):,} quads")
    q = step("mesh: unit faces", visible_quads, g.mask, key, False)
    print(f"  {len(q):,} quads")
    scene = step("to_scene (greedy, table normals)", to_scene, back)
    print(f"  {scene.counts()['triangles']:,} triangles")
    step("save .glb", retromesh.save, scene, out_dir / "big.glb")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = step("vxl -> vox", convert.vxl_to_vox, back)
        step("vox -> vxl (unedited: normals kept)", convert.vox_to_vxl, v)
        xyzi = next(c for c in v.chunks if isinstance(c, vox.VoxXyzi))
        xyzi.voxels = xyzi.voxels[1:]
        step("vox -> vxl (edited: normals recomputed)", convert.vox_to_vxl, v)

    files = sorted(CORPUS.glob("*.vxl")) if CORPUS.is_dir() else []
    if files:
        print(f"\ncorpus: {len(files)} .vxl files")
        t = {"read": 0.0, "write": 0.0, "to_scene": 0.0, "glb": 0.0}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for f in files:
                t0 = time.perf_counter()
                d = retromesh.read(f)
                t1 = time.perf_counter()
                retromesh.to_bytes(d)
                t2 = time.perf_counter()
                s = retromesh.load(f)
                t3 = time.perf_counter()
                retromesh.save(s, out_dir / (f.stem + ".glb"))
                t4 = time.perf_counter()
                t["read"] += t1 - t0
                t["write"] += t2 - t1
                t["to_scene"] += t3 - t2
                t["glb"] += t4 - t3
        for k, v_ in t.items():
            print(f"  {k:<10} total {v_ * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
