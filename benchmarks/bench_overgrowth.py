"""Overgrowth and Lugaru benchmark: prints read / write / to_scene / glTF times and peak memory.

    python benchmarks/bench_overgrowth.py [--repeat N]

Uses the Lugaru corpus (../shared/corpus/solid, when present) and synthetic Overgrowth files
built by ``retromesh.formats.overgrowth.samples`` scaled up to engine sizes (17,502 skinned corners
as in the template's hard-coded count, 60-bone keys, 200 keyframes). Never asserts timings.
"""
from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from measure import CORPUS, peak, timed

import retromesh
from retromesh import registry
from retromesh.formats.overgrowth import samples
from retromesh.formats.overgrowth.obj import write_obj
from retromesh.formats.overgrowth.phxbn import PhxControl


def row(name: str, size: int, r: float, w: float, s: float, g: float, mem: float) -> None:
    print(f"{name:<34} {size / 1024:>9.1f} {r * 1e3:>9.2f} {w * 1e3:>9.2f} {s * 1e3:>10.2f} "
          f"{g * 1e3:>9.2f} {mem:>9.2f}")


def bench_bytes(name: str, data: bytes, fmt: str, repeat: int, **opts) -> None:
    f = registry.get(fmt)
    r, doc = timed(lambda: registry.parse(f, data), repeat)
    w, out = timed(lambda: f.write(doc), repeat)
    assert out == data
    s = g = 0.0
    scene = None
    if f.to_scene is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s, scene = timed(lambda: registry.convert_to_scene(f, doc, **opts), repeat)
        gl = registry.get("glb")
        g, _ = timed(lambda: gl.outputs(gl.from_scene(scene), Path("x.glb")), repeat)

    def everything():
        d = registry.parse(f, data)
        f.write(d)
        if f.to_scene is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sc = registry.convert_to_scene(f, d, **opts)
            gl = registry.get("glb")
            gl.outputs(gl.from_scene(sc), Path("x.glb"))
    row(name, len(data), r, w, s, g, peak(everything))


def big_character(tmp: Path) -> tuple[Path, Path, list[Path]]:
    rng = np.random.default_rng(1)
    tris = 5834                                       # 17,502 corners
    pos = rng.normal(size=(3000, 3)) * [0.3, 0.8, 0.2]
    faces = rng.integers(0, len(pos), size=(tris, 3))
    (tmp / "big.obj").write_bytes(write_obj(pos, faces, rng.random((3000, 2)), faces))
    skel = samples.phxbn_fixture(11)
    n = tris * 3
    w = rng.random((n, 4)).astype("<f4")
    ids = rng.integers(0, 6, size=(n, 4)).astype("<f4")
    skel.control = PhxControl(w, ids, skel.control.hier_parents, skel.control.joints, n)
    retromesh.write(skel, tmp / "big.phxbn")
    return tmp / "big.phxbn", tmp / "big.obj", _animations(tmp)


def _animations(tmp: Path) -> list[Path]:
    """The three 200-key animations both benchmark characters play."""
    anims = []
    for i, name in enumerate(("run", "walk", "idle")):
        a = samples.anm_fixture(11, keys=200, length=200 * 33, swing=0.3 + 0.2 * i)
        retromesh.write(a, tmp / f"{name}.anm")
        anims.append(tmp / f"{name}.anm")
    return anims


def real_character(tmp: Path) -> tuple[Path, Path, list[Path]]:
    """The character of :func:`big_character` (same sizes, skeleton and animations) as an
    exporter writes one: each vertex's weights once per corner of it (the ``.phxbn`` holds
    one row per triangle corner), 1 to 4 distinct bones summing to 1 (normalised in float64,
    stored as float32), unused slots 0 with bone 0; the OBJ with 6 decimals (Blender's OBJ
    exporter). :func:`big_character` draws each corner's 4 weights and bones at random: rows
    that do not sum to 1 and name a bone twice, which no exporter writes, and whose record is
    their entropy."""
    tmp.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(2)
    tris, nv = 5834, 3000
    pos = rng.normal(size=(nv, 3)) * [0.3, 0.8, 0.2]
    faces = rng.integers(0, nv, size=(tris, 3))
    uv = rng.random((nv, 2))
    nrm = rng.normal(size=(nv, 3))
    nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
    text = ["o real"] + [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in pos.tolist()] + \
        [f"vt {u:.6f} {v:.6f}" for u, v in uv.tolist()] + \
        [f"vn {x:.6f} {y:.6f} {z:.6f}" for x, y, z in nrm.tolist()] + \
        ["f " + " ".join(f"{a}/{a}/{a}" for a in f) for f in (faces + 1).tolist()]
    (tmp / "real.obj").write_text("\n".join(text) + "\n")
    skel = samples.phxbn_fixture(11)
    bones = len(skel.bone_ends)
    count = rng.integers(1, 5, size=nv)
    w = rng.random((nv, 4)) * (np.arange(4) < count[:, None])
    w = (w / w.sum(1, keepdims=True)).astype("<f4")
    ids = np.argsort(rng.random((nv, bones)), 1)[:, :4].astype("<f4") * (w > 0)
    corner_v = faces.reshape(-1)
    n = len(corner_v)
    skel.control = PhxControl(w[corner_v], ids[corner_v], skel.control.hier_parents,
                              skel.control.joints, n)
    retromesh.write(skel, tmp / "real.phxbn")
    return tmp / "real.phxbn", tmp / "real.obj", _animations(tmp)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rep = args.repeat
    print(f"{'file':<34} {'KiB':>9} {'read ms':>9} {'write ms':>9} {'scene ms':>10} "
          f"{'glTF ms':>9} {'peak MiB':>9}")
    solids = sorted((CORPUS / "solid").glob("*.solid")) if (CORPUS / "solid").is_dir() else []
    for p in solids:
        if any(k in p.name for k in ("Body.solid", "Wolf.solid", "Rabbit", "Box.", "Sword")):
            bench_bytes(p.name.split("__")[-1], p.read_bytes(), "solid", rep)
    if solids:
        total = sum(p.stat().st_size for p in solids)
        t0 = time.perf_counter()
        for p in solids:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sc = retromesh.load(p)
            gl = registry.get("glb")
            gl.outputs(gl.from_scene(sc), Path("x.glb"))
        print(f"all {len(solids)} .solid -> GLB: {(time.perf_counter() - t0) * 1e3:.1f} ms "
              f"({total / 1024:.0f} KiB)")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        skel, obj, anims = big_character(tmp)
        bench_bytes("big.phxbn (17502 corners, v11)", skel.read_bytes(), "phxbn", rep)
        v10 = retromesh.read(skel)
        v10.version, v10.control.num_vertices = 10, None
        v10.simple_ik = v10.simple_ik or []
        bench_bytes("big.phxbn v10 (count inferred)", retromesh.to_bytes(v10), "phxbn", rep)
        bench_bytes("run.anm (200 keys) + skeleton", anims[0].read_bytes(), "anm", rep,
                    skeleton=skel)
        bench_bytes("stick.fzx", retromesh.to_bytes(samples.fzx_sample()), "fzx", rep)
        bench_bytes("example.sav", retromesh.to_bytes(samples.sav_sample()), "sav", rep)

        def full():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return retromesh.convert(skel, tmp / "big.glb", mesh=obj, animations=anims)
        t, _ = timed(full, rep)
        mem = peak(full)
        print(f"skeleton + 17502-corner OBJ + 3 x 200-key animations -> GLB: {t * 1e3:.1f} ms, "
              f"peak {mem:.1f} MiB, {(tmp / 'big.glb').stat().st_size / 1024:.0f} KiB")

        def back():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return retromesh.convert(tmp / "big.glb", tmp / "rt" / "big.phxbn")
        t, _ = timed(back, rep)
        print(f"that GLB -> .phxbn + 3 .anm (from_scene): {t * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
