"""Build the example models shipped in this folder with retromesh's own writers.

    python examples/make_examples.py            # rewrites every example and its textures

* ``wiggle.b3d``: a skinned, animated tentacle (4 bones, 2 UV-mapped materials, one ANIM of
  48 frames at 24 fps) — the shape of a Minetest/Luanti mob model.
* ``crate.b3d`` + ``crate.png``: a static textured box (brush with a texture, per-vertex normals).
* ``overgrowth/``: an Overgrowth skeleton (``stick.phxbn``), its OBJ, two animations, ragdoll
  volumes (``stick.fzx``) and a save file.
* ``lugaru/``: a Lugaru ``box.solid``.
* ``lithtech/``: ``model_v12.abc`` (pieces with LODs, weights, nodes, sockets, animations) and
  ``model_v6.abc`` (the Shogo/Blood 2 layout with vertex animation).
* ``lostsaga/``: a skinned ``column.msh`` with its ``column.skl``, an animation, a material script
  and the texture it names (``column_diffuse.png``).
* ``westwood/``: ``tank.vxl`` with ``tank.hva`` (a turning turret) and the same model as ``tank.vox``.

Everything is made from a Scene in glTF conventions and written through ``retromesh.save``,
so the files are original work of this project (no game assets).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from retromesh.formats.b3d.samples import (  # noqa: E402,F401  (the builders, for tests too)
    crate_png,
    crate_scene,
    png,
    wiggle_png,
    wiggle_scene,
)


def column_png(width: int = 32, height: int = 96) -> bytes:
    """Sandstone for the Lost Saga column: three drums (the column's bone segments, v from top
    to bottom), flutes across each of its four sides (u: a quarter per side), a darker base."""
    y, x = np.mgrid[0:height, 0:width]
    flute = 0.85 + 0.15 * np.cos(2 * np.pi * (x % (width // 4)) / (width // 4) * 3)
    joint = (y % (height // 3)) < 2
    grain = 0.94 + 0.06 * ((x * 7 + y * 13) % 5) / 4
    base = 1.0 - 0.25 * (y > height - height // 12)
    light = np.where(joint, 0.55, flute * grain * base)
    rgb = np.array([214, 190, 140])[None, None] * light[..., None]
    return png(width, height, np.clip(rgb, 0, 255).astype(np.uint8))


def main(out: Path = HERE) -> None:
    out.mkdir(parents=True, exist_ok=True)
    # every family builds its examples with its own writers (samples.write_example)
    from retromesh.formats.b3d import samples as b3d
    from retromesh.formats.lithtech import samples as lithtech
    from retromesh.formats.lostsaga import samples as lostsaga
    from retromesh.formats.lugaru import samples as lugaru
    from retromesh.formats.overgrowth import samples as overgrowth
    from retromesh.formats.westwood import samples as westwood
    b3d.write_example(out)
    lugaru.write_example(out / "lugaru")
    overgrowth.write_example(out / "overgrowth")
    lostsaga.write_example(out / "lostsaga")
    (out / "lostsaga" / "column_diffuse.png").write_bytes(column_png())   # named by column.txt
    westwood.write_example(out / "westwood")
    lithtech.write_example(out / "lithtech")
    written = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file() and p.suffix != ".py")
    print("wrote", ", ".join(map(str, written)))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
