"""glTF writer benchmark: the 1M-vertex skinned scene (bench_b3d's generator) written as GLB.

    python benchmarks/bench_gltf_writer.py [--vertices 1000000] [--src DIR] [--repeat 3]

Prints, for the tree whose ``src`` is given (default: this checkout; ``--src /work/main/src``
for a before/after), the best CPU and wall time over ``--repeat`` runs of: compute_normals,
_unit, _sanitize_weights, scene_to_gltf, glb_parts (the GLB as parts: what ``save`` writes),
glb_bytes (the same joined), and the whole ``save`` to a .glb, plus the tracemalloc peak of
``save`` next to the size of the output (the GLB is written part by part: the peak stays below
the output's size). CPU time (``process_time``) is
printed because it is steadier than wall time on a shared machine.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def best(fn, repeat: int) -> tuple[float, float]:
    cpu = wall = float("inf")
    for _ in range(repeat):
        c, w = time.process_time(), time.perf_counter()
        fn()
        cpu, wall = min(cpu, time.process_time() - c), min(wall, time.perf_counter() - w)
    return cpu, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vertices", type=int, default=1_000_000)
    ap.add_argument("--src", default=str(ROOT / "src"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "benchmarks"))
    sys.path.insert(0, args.src)
    import numpy as np
    from bench_b3d import big_scene

    import retromesh
    from retromesh.gltf import writer
    print(f"src {Path(retromesh.__file__).parent}")
    scene = big_scene(args.vertices, bones=64, frames=100)
    prim = scene.meshes[0].primitives[0]
    unit_in = np.random.default_rng(0).normal(size=(args.vertices, 3))
    out = Path(tempfile.mkdtemp()) / "out.glb"
    warnings.simplefilter("ignore")
    steps = {
        "compute_normals": lambda: writer.compute_normals(prim.positions, prim.indices),
        "_unit (N x 3)": lambda: writer._unit(unit_in),
        "_sanitize_weights": lambda: writer._sanitize_weights(prim.joints, prim.weights),
        "scene_to_gltf": lambda: writer.scene_to_gltf(scene, embed_images=False),
    }
    doc = writer.scene_to_gltf(scene, embed_images=False)
    steps["glb_parts"] = lambda doc=doc: writer.glb_parts(doc)
    steps["glb_bytes"] = lambda doc=doc: writer.glb_bytes(doc)
    steps["save (scene -> .glb file)"] = lambda: retromesh.save(scene, out)
    print(f"{args.vertices:,} vertices, skinned (64 bones, 100 keys), best of {args.repeat}:")
    for label, fn in steps.items():
        cpu, wall = best(fn, args.repeat)
        print(f"  {label:28s} cpu {cpu * 1000:8.1f} ms   wall {wall * 1000:8.1f} ms")
    del doc, steps                  # the document is not part of the measured save's peak
    tracemalloc.start()
    retromesh.save(scene, out)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    size = out.stat().st_size
    print(f"  save peak (tracemalloc) {peak / 2**20:8.1f} MiB for a {size / 2**20:.1f} MiB GLB "
          f"({peak / size:.2f}x the output)")


if __name__ == "__main__":
    main()
