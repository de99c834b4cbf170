"""LithTech ABC benchmark: a large skinned, animated v12 model made with our own writer.

    python benchmarks/bench_lithtech.py [--vertices 600000] [--weights 3] [--animations 10]
                                        [--keys 60] [--nodes 40] [--mixed] [--keep DIR]

The model has ``vertices`` vertices in pieces of at most 60000 (an ABC LOD indexes vertices
with uint16), ``weights`` weights per vertex on a chain of ``nodes`` nodes, and ``animations``
animations of ``keys`` keys. Prints wall times of read, write, to_scene, Scene -> GLB,
GLB -> Scene -> ABC (from_scene) (untraced run), and the tracemalloc peak of each step
(a second, traced run).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import retromesh
from retromesh.formats.lithtech import (
    abc,
    scene as ls,
)
from retromesh.formats.lithtech.abc import (
    CORNER,
    VERTEX,
    WEIGHT,
    AbcModel,
    Animation,
    AnimationSection,
    AnimBindingsSection,
    ChildModel,
    ChildModelsSection,
    HeaderSection,
    Lod,
    Node,
    NodesSection,
    Piece,
    PiecesSection,
    SocketsSection,
)
from retromesh.formats.lithtech.common import TRANSFORM


def big_model(n_vertices: int, n_weights: int, n_nodes: int, n_anims: int, n_keys: int,
              mixed: bool = False) -> AbcModel:
    rng = np.random.default_rng(0)
    height = 4.0
    step = height / n_nodes
    # a chain of nodes up +Y; bind matrices are translations
    mats = np.tile(np.eye(4, dtype="<f4"), (n_nodes, 1, 1))
    mats[:, 1, 3] = np.arange(n_nodes) * step
    nodes = [Node(name=f"n{i}".encode(), index=i, flags=0x01 if i == 0 else 0, matrix=mats[i],
                  child_count=1 if i < n_nodes - 1 else 0) for i in range(n_nodes)]
    pieces = []
    left = n_vertices
    pi = 0
    while left > 0:
        nv = min(left, 60000)
        left -= nv
        side = 250
        rows = max(nv // side, 2)
        nv = rows * side
        y, x = np.divmod(np.arange(nv), side)
        pos = np.stack([x / side + pi, y / rows * height * 0.999, rng.normal(0, 0.01, nv)], 1)
        gx, gy = np.meshgrid(np.arange(side - 1), np.arange(rows - 1))
        a = (gy * side + gx).reshape(-1)
        tris = np.stack([a, a + side + 1, a + 1, a, a + side, a + side + 1], 1).reshape(-1, 3)
        faces = np.zeros(tris.shape, CORNER)
        faces["vertex"] = tris
        faces["uv"] = (pos[:, :2] * 0.25)[tris]
        verts = np.zeros(nv, VERTEX)
        verts["weight_count"] = n_weights
        verts["location"] = pos
        verts["normal"] = (0, 0, -1)
        base = np.clip((pos[:, 1] / step).astype(int), 0, n_nodes - 1)
        node = np.clip(base[:, None] + np.arange(n_weights)[None], 0, n_nodes - 1).reshape(-1)
        bias = np.tile(np.arange(n_weights, 0, -1, dtype=float) / (n_weights * (n_weights + 1) / 2), nv)
        weights = np.zeros(nv * n_weights, WEIGHT)
        weights["node"] = node
        owner = np.repeat(np.arange(nv), n_weights)
        weights["location"] = pos[owner] - mats[node, :3, 3]
        weights["bias"] = bias
        if mixed:             # 1..n_weights weights per vertex, at random (real files vary)
            cnt = rng.integers(1, n_weights + 1, nv)
            keep = (np.arange(n_weights)[None, :] < cnt[:, None]).reshape(-1)
            weights = weights[keep]
            verts["weight_count"] = cnt
        pieces.append(Piece(material_index=pi % 4, name=f"piece{pi}".encode(),
                            lods=[Lod(faces=faces, vertices=verts, weights=weights)]))
        pi += 1
    anims = []
    for ai in range(n_anims):
        tr = np.zeros((n_nodes, n_keys), TRANSFORM)
        tr["location"][:, :, 1] = np.where(np.arange(n_nodes) == 0, 0.0, step)[:, None]
        ang = 0.2 * np.sin(np.linspace(0, 2 * np.pi, n_keys)[None, :] + ai + np.arange(n_nodes)[:, None])
        tr["rotation"][:, :, 2] = np.sin(ang / 2)
        tr["rotation"][:, :, 3] = np.cos(ang / 2)
        anims.append(Animation(name=f"anim{ai}".encode(), key_times=(np.arange(n_keys) * 33).astype("<u4"),
                               key_strings=[b""] * n_keys, transforms=tr))
    cm = np.zeros(n_nodes, TRANSFORM)
    cm["rotation"][:, 3] = 1
    model = AbcModel(sections=[
        HeaderSection(version=12, lod_count=1, lod_distances=np.zeros(1, "<f4")),
        PiecesSection(pieces=pieces), NodesSection(nodes=nodes, weight_sets=[]),
        ChildModelsSection(child_models=[ChildModel(transforms=cm)]),
        AnimationSection(animations=anims), SocketsSection(), AnimBindingsSection()])
    return abc.recount(model)


def measure(label: str, fn, results: list):
    """Wall time of an untraced run, then the tracemalloc peak of a second, traced run."""
    t = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    results.append((label, dt, peak))
    print(f"{label:<34} {dt * 1000:10.1f} ms   peak {peak / 2**20:8.1f} MiB", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vertices", type=int, default=600_000)
    ap.add_argument("--weights", type=int, default=3)
    ap.add_argument("--nodes", type=int, default=40)
    ap.add_argument("--animations", type=int, default=10)
    ap.add_argument("--keys", type=int, default=60)
    ap.add_argument("--mixed", action="store_true",
                    help="1..weights weights per vertex at random (the general, slower path)")
    ap.add_argument("--keep", type=Path, default=None)
    args = ap.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench_lithtech_"))
    folder.mkdir(parents=True, exist_ok=True)
    model = big_model(args.vertices, args.weights, args.nodes, args.animations, args.keys,
                      args.mixed)
    h = model.header
    print(f"model: {h.vertex_count} vertices, {h.weight_count} weights, {h.face_count} faces, "
          f"{h.piece_count} pieces, {h.node_count} nodes, {h.animation_count} animations x "
          f"{args.keys} keys")
    results: list = []
    data = measure("write (doc -> bytes)", lambda: abc.write(model), results)
    src = folder / "big.abc"
    src.write_bytes(data)
    print(f"file: {len(data) / 2**20:.1f} MiB")
    doc = measure("read (bytes -> doc)", lambda: retromesh.read(src), results)
    assert retromesh.to_bytes(doc) == data
    scene = measure("to_scene", lambda: ls.to_scene(doc), results)
    glb = folder / "big.glb"
    measure("Scene -> GLB (save)", lambda: retromesh.save(scene, glb), results)
    measure("ABC -> GLB (convert, whole)", lambda: retromesh.convert(src, folder / "big2.glb"), results)
    loaded = measure("GLB -> Scene (load)", lambda: retromesh.load(glb), results)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        back = measure("from_scene (Scene -> ABC doc)", lambda: ls.from_scene(loaded), results)
    measure("write from_scene result", lambda: abc.write(back), results)
    print(f"GLB: {glb.stat().st_size / 2**20:.1f} MiB in {folder}")
    mverts = h.vertex_count / 1e6
    for label, dt, _ in results:
        if label.startswith(("read", "write (doc", "to_scene")):
            print(f"  {label}: {mverts / dt:.2f} M vertices/s")


if __name__ == "__main__":
    main()
