"""The kept data of ``.vox``: the file rides in extras so that ``.vox -> .glb -> .vox`` gives it
back (the :mod:`.scene_extras` approach of ``.vxl``, for MagicaVoxel; :mod:`.vox_scene_write` restores
it).

``vox_scene.to_scene`` puts on the root node ``vox_file`` (the whole file as read, zlib +
base64, with the ``greedy`` option the meshes were made with and the number of shape
instances) and on every shape-instance node ``vox_instance`` (its position in the scene graph's
depth-first order, which is also the order of the nodes ``to_scene`` makes). Node extras are
where Blender keeps them (custom properties, exported again with ``export_extras``).
"""
from __future__ import annotations

import json
from typing import Any

from .scene_extras import pack, unpack

__all__ = ["FILE_KEY", "INSTANCE_KEY", "file_extras", "kept_vox"]

FILE_KEY = "vox_file"
INSTANCE_KEY = "vox_instance"


def file_extras(data: bytes, greedy: bool, instances: int) -> str:
    return json.dumps({"file": pack(data), "greedy": bool(greedy), "instances": int(instances)},
                      separators=(",", ":"))


def kept_vox(text: Any) -> tuple[bytes, bool, int]:
    """The ``vox_file`` record: (the file's bytes, greedy, the number of shape instances);
    ValueError, KeyError, TypeError or zlib.error when it is damaged."""
    kept = json.loads(text)
    return unpack(kept["file"]), bool(kept["greedy"]), int(kept["instances"])
