"""Scene -> Overgrowth ``.fzx`` ragdoll volumes (:func:`scene_to_fzx`; the reverse of
:func:`.fzx_scene_read.fzx_to_scene`).

Which nodes: the mesh nodes below the node that ``fzx_to_scene`` made the root (extras
``fzx_version``), in the order of the tree; in a scene without one, every mesh node whose name
names a volume shape (``capsule``, ``box``, ``sphere``, as the engine's labels do). The mirrored
copies ``fzx_to_scene`` adds for an ``M`` label (extras ``mirrored_copy``) are not volumes of the
file: the engine makes them from the label again (a copy moved on its own is warned about).

Each volume:

* label: the node's name (``fzx_to_scene`` names the node after the label; the ``fzx_label`` extra
  is used while the name is that label or the label cut or numbered as Blender does);
* location and rotation: the node's transform relative to the root, turned back into
  Blender's Z-up space (``loc = (t.x + c.x, -(t.z + c.z), t.y + c.y)``, ``c`` the centre
  ``fzx_to_scene`` subtracted, kept in the root's ``center`` extra; ``r = (q.w, q.x, -q.z, q.y)``);
* scale: from the extent of the node's mesh times the node's scale (box half-extents
  ``(x, z, y)``; capsule radius ``x`` and half-length ``y - radius``; sphere radius = the
  mean).

Volumes are written in the order of their ``fzx_index`` extras (the file's order; Blender
gives children back sorted by name), new ones after them. ``fzx_to_scene`` keeps each volume's
stored values (``fzx_object``: rotation, location, scale as
written in the file): they are written as they were while the node's transform and mesh still
give them back to 1e-5, so an unedited trip gives the same bytes. A capsule's ``scale[1]`` (the
engine does not use it) comes back from them, else as the radius.
"""
from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np

from ... import extras as xt
from ...errors import DocumentError, LossWarning
from ...scene import Scene, unheld
from ...transforms import decompose_trs
from .fzx import MAX_LABEL, FzxFile, FzxObject, parse_label
from .fzx_scene_read import volume_transform

__all__ = ["scene_to_fzx"]

TOL = 1e-5


def _kept(extras: dict) -> FzxObject | None:
    v = xt.numbers(extras.get("fzx_object"), 10)
    if v is None:
        return None
    return FzxObject(b"", tuple(v[0:4]), tuple(v[4:7]), tuple(v[7:10]))


def _close(a: Any, b: Any) -> bool:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= TOL * (1 + np.abs(b))))


def _label(node_name: str, extras: dict) -> str:
    kept = extras.get("fzx_label")
    if isinstance(kept, str) and (node_name in (kept, kept[:63]) or re.fullmatch(
            re.escape(kept[:59]) + r".*\.\d{3}", node_name)):
        return kept
    return node_name


def _volumes(scene: Scene) -> tuple[int | None, list[int], list[int]]:
    """(the fzx root or None, volume nodes, mirrored copies)."""
    root = next((i for i, n in enumerate(scene.nodes) if "fzx_version" in n.extras), None)
    if root is not None:
        order, stack = [], list(reversed(scene.nodes[root].children))
        while stack:
            i = stack.pop()
            order.append(i)
            stack.extend(reversed(scene.nodes[i].children))
    else:
        order = [i for i, n in enumerate(scene.nodes) if parse_label(n.name.encode("utf-8"))["shape"]]
    vols, mirrors = [], []
    for i in order:
        n = scene.nodes[i]
        if n.mesh is None:
            continue
        if n.extras.get("mirrored_copy") is True:
            mirrors.append(i)
        else:
            vols.append(i)
    # the file's order (Blender gives children back sorted by name); new volumes after
    rank = {i: scene.nodes[i].extras.get("fzx_index") for i in vols}
    vols.sort(key=lambda i: (0, rank[i]) if type(rank[i]) is int else (1, 0))
    return root, vols, mirrors


def _extent(scene: Scene, i: int, s: np.ndarray) -> np.ndarray:
    """Half the extent of node ``i``'s mesh along its local axes, times the node's scale."""
    mesh = scene.nodes[i].mesh
    assert mesh is not None                     # volumes are nodes with a mesh
    prims = [p for p in scene.meshes[mesh].primitives if len(p.positions)]
    if not prims:
        return np.zeros(3)
    pos = np.concatenate([p.positions for p in prims]).astype(np.float64)
    return (pos.max(0) - pos.min(0)) / 2 * np.abs(s)


def _scale(shape: str, ext: np.ndarray, kept: FzxObject | None) -> tuple[float, ...]:
    if shape == "sphere":
        r = float(ext.mean())
        if kept is not None and _close(np.mean(np.abs(kept.scale)), r):
            return kept.scale
        return (r, r, r)
    if shape == "capsule":
        radius = float(ext[0])
        half = max(float(ext[1]) - radius, 0.0)
        if kept is not None and _close([abs(kept.scale[0]), abs(kept.scale[2])], [radius, half]):
            return kept.scale
        return (radius, float(kept.scale[1]) if kept is not None else radius, half)
    box = (float(ext[0]), float(ext[2]), float(ext[1]))
    if kept is not None and _close(np.abs(kept.scale), box):
        return kept.scale
    return box


def scene_to_fzx(scene: Scene, **options: Any) -> FzxFile:
    """The ragdoll volumes of a scene (see the module docstring)."""
    root, vols, mirrors = _volumes(scene)
    for what in unheld(scene, uv_sets=99, colors=True, modes=(0, 1, 2, 3, 4, 5, 6),
                       animations=False):
        warnings.warn(f".fzx: {what} dropped (the format has no place for it)", LossWarning,
                      stacklevel=2)
    if not vols:
        raise DocumentError("no ragdoll volumes to write: an .fzx is made from the mesh nodes "
                            "of a scene made from an .fzx, or from mesh nodes named like the "
                            "engine's labels ('L Upperarm Capsule M', 'Head Sphere')")
    worlds = scene.world_matrices()
    base = np.linalg.inv(worlds[root]) if root is not None else np.eye(4)
    rex = scene.nodes[root].extras if root is not None else {}
    center = rex.get("center")
    if not (isinstance(center, list) and len(center) == 3 and all(
            type(x) in (int, float) and np.isfinite(x) for x in center)):
        center = [0.0, 0.0, 0.0]
    objects: list[FzxObject] = []
    written: dict[str, FzxObject] = {}
    for i in vols:
        node = scene.nodes[i]
        label = _label(node.name, node.extras)
        raw = label.encode("utf-8")
        if len(raw) > MAX_LABEL:
            raise DocumentError(f"volume {label[:40]!r}...: .fzx labels hold at most "
                                f"{MAX_LABEL} bytes")
        shape = parse_label(raw)["shape"] or "box"
        t, q, s = decompose_trs(base @ worlds[i])
        kept = _kept(node.extras)
        kt, kq = volume_transform(kept, center) if kept is not None else (None, None)
        if kept is not None and _close(t, kt) and (_close(q, kq) or _close(-q, kq)):
            rot, loc = kept.rotation, kept.location
        else:
            c = np.asarray(center, np.float64)
            loc = (float(t[0] + c[0]), float(-(t[2] + c[2])), float(t[1] + c[1]))
            rot = (float(q[3]), float(q[0]), float(-q[2]), float(q[1]))
        obj = FzxObject(raw, tuple(rot), tuple(loc), tuple(_scale(shape, _extent(scene, i, s), kept)))
        objects.append(obj)
        written[label] = obj
    moved = []
    for i in mirrors:
        node = scene.nodes[i]
        src = written.get(str(node.extras.get("fzx_label", "")))
        if src is None or not parse_label(src.label)["mirror"]:
            moved.append(node.name)
            continue
        t, q, _ = decompose_trs(base @ worlds[i])
        mt, mq = volume_transform(src, center, mirror=True)
        if not (_close(t, mt) and (_close(q, mq) or _close(-q, mq))):
            moved.append(node.name)
    if moved:
        warnings.warn(f"mirrored copies {', '.join(map(repr, moved[:5]))}: the engine makes them "
                      "from the label 'M' of the volume they mirror; their own transforms are not "
                      "written", LossWarning, stacklevel=2)
    version = rex.get("fzx_version", 1)
    if version != 1:
        warnings.warn(f"fzx version {version!r} in the extras: written as version 1 (the only "
                      "one the engine reads)", LossWarning, stacklevel=2)
    return FzxFile(1, objects)
