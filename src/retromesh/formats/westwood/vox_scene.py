"""MagicaVoxel ``.vox`` -> Scene: one node per shape instance, meshed like the limbs of a
``.vxl`` (:func:`.scene.grid_scene`, face normals), placed by the scene graph; the file rides in
the root node's extras (:mod:`.vox_scene_extras`) so that :mod:`.vox_scene_write` can give it back.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ...scene import Node, Scene
from ...units import positive as positive_option
from . import vox, vox_scene_extras
from .scene import grid_scene
from .vxl import Limb

__all__ = ["to_scene"]


def to_scene(doc: vox.VoxFile, *, source: Path | None = None, greedy: bool = True,
             scale: float = 1.0) -> Scene:
    scale = positive_option("scale", scale)
    grids = vox.models(doc)
    pal = vox.palette_of(doc)
    # vox index c uses RGBA[c - 1]: shift so that grid colours index a 256-entry palette
    palette = np.zeros((256, 3), np.uint8)
    palette[1:] = pal[:255, :3]
    name = Path(source).stem if source is not None else "vox"
    scene = Scene(name=name, extras={"format": "vox"})
    root = scene.add_node(Node(name=name, scale=np.full(3, float(scale))))
    items = []
    mats = []
    for mid, m, attrs in vox.instances(doc, grids):
        g = grids[mid]
        limb = Limb(name=(attrs.get("_name") or f"model{mid}").encode("latin-1")[:15]
                    .ljust(16, b"\0"), xsize=g.size[0], ysize=g.size[1], zsize=g.size[2],
                    normal_type=4)
        pivot = np.floor(np.array(g.size) / 2)
        limb.bounds_min = (-pivot).astype(np.float32)
        limb.bounds_max = (limb.bounds_min + np.array(g.size)).astype(np.float32)
        items.append((g, limb))
        mats.append(m[None])
    # a model that came from a .vxl keeps its player-remap range in the root's vxl_header
    remap = (256, 256)
    head = vox.scene_graph(doc)["nodes"].get(0, {}).get("attrs", {}).get("vxl_header", "").split()
    if len(head) == 3 and all(h.isdigit() for h in head):
        remap = (int(head[1]), int(head[2]))
    nodes = grid_scene(scene, items, palette, remap, mats, root, greedy, "face")
    # the file itself, so that from_scene can give it back (see .vox_scene_extras)
    for k, node in enumerate(nodes):
        scene.nodes[node].extras[vox_scene_extras.INSTANCE_KEY] = k
    scene.nodes[root].extras[vox_scene_extras.FILE_KEY] = vox_scene_extras.file_extras(vox.write(doc), greedy,
                                                                       len(nodes))
    return scene
