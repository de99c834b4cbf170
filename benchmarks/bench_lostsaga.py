"""Lost Saga benchmark: prints read / write / to_scene / glTF / from_scene times and peak memory.

    python benchmarks/bench_lostsaga.py [--repeat N]

Uses the corpus (../shared/corpus/lostsaga, when present) and synthetic files built by
``retromesh.formats.lostsaga.samples`` at engine sizes: a skinned mesh of ~48,000 vertices
(close to the uint16 index limit) on a 61-bone chain, and 61-track animations of 1,000 keys in
each key version (DEFAULT, COMP4, COMP8). Also the quaternion codecs' throughput.
Never asserts timings.
"""
from __future__ import annotations

import argparse
import tempfile
import warnings
from pathlib import Path

import numpy as np
from measure import CORPUS, peak, timed

import retromesh
from retromesh import registry
from retromesh.formats.lostsaga import quatcodec, samples


def quiet(fn):
    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    return run


HEADER = (f"{'file':<44} {'KiB':>8} {'read ms':>9} {'write ms':>9} {'scene ms':>9} "
          f"{'glTF ms':>9} {'back ms':>9} {'peak MiB':>9}")


def bench(name: str, data: bytes, fmt: str, repeat: int, **opts) -> None:
    f = registry.get(fmt)
    r, doc = timed(lambda: registry.parse(f, data), repeat)
    w, out = timed(lambda: f.write(doc), repeat)
    assert out == data
    s, scene = timed(quiet(lambda: registry.convert_to_scene(f, doc, **opts)), repeat)
    gl = registry.get("glb")
    g, _ = timed(quiet(lambda: gl.outputs(gl.from_scene(scene), Path("x.glb"))), repeat)
    b = 0.0
    if scene.meshes and fmt in ("msh", "cms"):
        b, _ = timed(quiet(lambda: f.from_scene(scene)), repeat)

    def everything():
        d = registry.parse(f, data)
        f.write(d)
        sc = quiet(lambda: registry.convert_to_scene(f, d, **opts))()
        quiet(lambda: gl.outputs(gl.from_scene(sc), Path("x.glb")))()
    mem = peak(everything)
    print(f"{name:<44} {len(data) / 1024:>8.1f} {r * 1e3:>9.2f} {w * 1e3:>9.2f} {s * 1e3:>9.2f} "
          f"{g * 1e3:>9.2f} {b * 1e3:>9.2f} {mem:>9.2f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(HEADER)
    corpus = sorted((CORPUS / "lostsaga").glob("*")) if (CORPUS / "lostsaga").is_dir() else []
    for p in corpus:
        bench(p.name, p.read_bytes(), p.suffix[1:], args.repeat)

    big, skl = samples.skinned_column(segments=60, height=5.0, rings_per_segment=100)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        retromesh.write(skl, tmp / "big.skl")
        anis = []
        for v in (4000, 4001, 4002):
            a = samples.wave_animation(skl, v, keys=1000, duration_ms=33_000)
            retromesh.write(a, tmp / f"big_{v}.ani")
            anis.append(tmp / f"big_{v}.ani")
        bench(f"synthetic skinned .msh ({big.vertex_count} verts)", retromesh.to_bytes(big),
              "msh", args.repeat)
        bench("  + .skl (61 bones) + 3 .ani", retromesh.to_bytes(big), "msh", args.repeat,
              skeleton=tmp / "big.skl", animations=anis)
        for v, p in zip((4000, 4001, 4002), anis):
            bench(f"synthetic .ani v{v} (61 x 1000 keys)", p.read_bytes(), "ani", args.repeat,
                  skeleton=tmp / "big.skl")
        full = quiet(lambda: retromesh.load(retromesh.to_bytes(big), format="msh",
                                            skeleton=tmp / "big.skl", animations=anis))()
        for fmt in ("default", "comp4", "comp8"):
            t, _ = timed(quiet(lambda fmt=fmt: registry.get("msh").from_scene(
                full, animation_format=fmt)), args.repeat)
            print(f"from_scene msh+skl+3 ani ({fmt}): {t * 1e3:.2f} ms")

    q = np.random.default_rng(0).normal(size=(1_000_000, 4))
    t4e, p4 = timed(lambda: quatcodec.encode_comp4(q), args.repeat)
    t4d, _ = timed(lambda: quatcodec.decode_comp4(p4), args.repeat)
    t8e, p8 = timed(lambda: quatcodec.encode_comp8(q), args.repeat)
    t8d, _ = timed(lambda: quatcodec.decode_comp8(*p8), args.repeat)
    print(f"COMP4 encode {1 / t4e:.2f} M quats/s, decode {1 / t4d:.2f} M quats/s; "
          f"COMP8 encode {1 / t8e:.2f} M quats/s, decode {1 / t8d:.2f} M quats/s")


if __name__ == "__main__":
    main()
