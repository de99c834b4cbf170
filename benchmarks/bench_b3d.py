"""Blitz3D benchmark: a 1M-vertex skinned, animated B3D made with our own writer.

    python benchmarks/bench_b3d.py [--vertices 1000000] [--keep DIR]

Prints, for our code: read, write, to_scene and B3D -> GLB wall times, and peak memory
(tracemalloc peak of the step, and the peak RSS of a fresh process doing the whole B3D -> GLB
conversion). The same file is converted by ``assimp export`` of the current assimp (6.0.5 from
PyPI cmeel-assimp, installed once in a throwaway venv; not Debian's 5.2.5, whose weight joining is
quadratic) in a fresh process and its wall time and peak RSS are printed beside ours.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from measure import ASSIMP_VERSION, assimp6

import retromesh
from retromesh.scene import Animation, Channel, Mesh, Node, Primitive, Scene, Skin


def big_scene(n_vertices: int, bones: int = 32, frames: int = 60) -> Scene:
    rng = np.random.default_rng(0)
    side = int(np.ceil(np.sqrt(n_vertices)))
    y, x = np.divmod(np.arange(n_vertices), side)
    pos = np.stack([x / side, y / side * 4, rng.normal(0, 0.01, n_vertices)], 1).astype(np.float32)
    quads = []
    rows = n_vertices // side
    gx, gy = np.meshgrid(np.arange(side - 1), np.arange(rows - 1))
    a = (gy * side + gx).reshape(-1)
    quads = np.stack([a, a + 1, a + side + 1, a, a + side + 1, a + side], 1).reshape(-1)
    s = Scene(name="bench")
    root = s.add_node(Node(name="root"))
    joints, parent = [], root
    for b in range(bones):
        j = s.add_node(Node(name=f"b{b}", translation=[0, 0 if b == 0 else 4 / bones, 0]), parent)
        joints.append(j)
        parent = j
    t = np.clip(pos[:, 1] / (4 / bones), 0, bones - 1)
    lo = np.floor(t).astype(np.uint16)
    hi = np.minimum(lo + 1, bones - 1).astype(np.uint16)
    w = (t - lo).astype(np.float32)
    jo = np.zeros((n_vertices, 4), np.uint16)
    wo = np.zeros((n_vertices, 4), np.float32)
    jo[:, 0], jo[:, 1] = lo + 1, hi + 1
    wo[:, 0], wo[:, 1] = 1 - w, w
    same = lo == hi
    wo[same, 0], wo[same, 1], jo[same, 1] = 1, 0, 0
    uv = pos[:, :2] * 0.25
    prim = Primitive(positions=pos, indices=quads.astype(np.uint32), uvs=[uv], joints=jo, weights=wo)
    s.nodes[root].mesh = s.add_mesh(Mesh(name="grid", primitives=[prim]))
    worlds = s.world_matrices()
    sj = [root] + joints
    s.nodes[root].skin = s.add_skin(Skin(joints=sj, inverse_bind_matrices=np.stack(
        [np.linalg.inv(worlds[j]) for j in sj])))
    times = np.arange(frames) / 30.0
    anim = Animation(name="bend", extras={"fps": 30.0})
    for b, j in enumerate(joints):
        ang = 0.2 * np.sin(times * 3 + b)
        anim.channels.append(Channel(j, "rotation", times, np.stack(
            [np.zeros_like(ang), np.zeros_like(ang), np.sin(ang / 2), np.cos(ang / 2)], 1)))
    s.animations.append(anim)
    return s


def timed(label: str, fn, results: dict):
    tracemalloc.start()
    t0 = time.perf_counter()
    value = fn()
    dt = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    results[label] = (dt, peak)
    print(f"  {label:<22} {dt:8.3f} s   peak {peak / 2**20:8.1f} MiB (tracemalloc)")
    return value


def child_run(cmd: list[str]) -> tuple[float, float, int]:
    """Wall time (s), peak RSS (MiB) and exit code of a fresh process."""
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    return time.perf_counter() - t0, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vertices", type=int, default=1_000_000)
    ap.add_argument("--keep", type=Path)
    args = ap.parse_args()
    work = Path(args.keep or tempfile.mkdtemp(prefix="retromesh-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    src = work / "big.b3d"
    print(f"building a skinned, animated B3D with {args.vertices:,} vertices ...")
    retromesh.save(big_scene(args.vertices), src)
    data = src.read_bytes()
    print(f"  file: {len(data) / 2**20:.1f} MiB")
    results: dict = {}
    print("retromesh (in process):")
    doc = timed("read", lambda: retromesh.read(data, format="b3d"), results)
    timed("write", lambda: retromesh.to_bytes(doc), results)
    scene = timed("to_scene", lambda: retromesh.load(data, format="b3d"), results)
    timed("scene -> GLB", lambda: retromesh.save(scene, work / "ours.glb"), results)

    print("whole B3D -> GLB conversion in a fresh process (wall, peak RSS):")
    ours = child_run([sys.executable, "-m", "retromesh", "convert", str(src), "-o",
                      str(work / "ours_cli.glb")])
    print(f"  retromesh convert      {ours[0]:8.3f} s   peak RSS {ours[1]:8.1f} MiB   exit {ours[2]}")
    try:
        assimp = assimp6()
    except (OSError, subprocess.SubprocessError, StopIteration) as exc:
        print(f"  assimp {ASSIMP_VERSION} could not be installed ({exc}) - no comparison")
    else:
        theirs = child_run([*assimp, "export", str(src), str(work / "assimp.glb")])
        print(f"  assimp {ASSIMP_VERSION} export   {theirs[0]:8.3f} s   "
              f"peak RSS {theirs[1]:8.1f} MiB   exit {theirs[2]}")
        if theirs[2] == 0:
            print(f"  ratio ours/assimp: time {ours[0] / theirs[0]:.3f}x, memory {ours[1] / theirs[1]:.3f}x")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
