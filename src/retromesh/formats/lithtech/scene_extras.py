"""LithTech data that glTF has no place for: written to glTF ``extras`` by ``to_scene`` and read
back by ``from_scene`` when present and consistent with the scene.

Where it rides (all plain JSON; floats are float32 values written in their shortest form):

==========================  =====================================================================
glTF object                 extras
==========================  =====================================================================
scene                       ``abc_version``, ``command_string``, ``internal_radius``,
                            ``bounds_radius`` (the farthest LOD 0 vertex from the origin when
                            read: the kept ``internal_radius`` is written back while the
                            geometry still reaches that far, else recomputed, warned),
                            ``lod_distances``, ``weight_sets`` ([{name, weights}]: one float per node;
                            ``weights`` left out when empty),
                            ``child_models`` ([{name, build_number, transforms}]; ``transforms``
                            is a flat list of per-node location+rotation (+2 floats in v13) for
                            every child model after the first, in file space), ``anim_bindings``
                            ([{name, extents, origin}]), ``abc_animations`` ([{name, the
                            animation's extras below}]: a copy where Blender keeps it, see
                            below), ``unknown_v13``
animation                   ``interpolation_ms``, ``unknown``, ``extents``, ``markers``
                            ([{time (s), string}]: the keyframe strings), ``key_times_ms``
                            (the file's key times)
node (joint)                ``abc_flags``, ``abc_index``
node (socket)               ``abc_socket``: true
node / mesh (piece)         node ``abc_piece``, ``abc_lod``; mesh ``piece``, ``lod``,
                            ``material_index``, ``lod_weight``, ``sublod`` (each vertex's
                            SubLODVertexIndex in file order, when any is not 0: written back
                            while the LOD has as many vertices, else warned) and a few
                            diagnostics
material                    ``specular_power``, ``specular_scale``
==========================  =====================================================================

Blender (glTF-Blender-IO 4.2): its importer turns node, bone, mesh, material and scene extras
into custom properties, which its exporter writes back with ``export_extras``; it does *not*
import animation extras (actions get none), so the scene keeps a copy of every animation's
extras under ``abc_animations`` with the animation's name (Blender exports an imported
animation under its name again, the NLA track's). ``from_scene`` reads an animation's own extras
first, then that copy. Names are values, not keys (Blender cuts property names at 63 bytes), and
no list is empty (pygltflib leaves empty values out of the JSON).
"""
from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np

from ...errors import LossWarning
from ...extras import FLOAT32, animation_extras as kept_animation_extras, integer, integers, number, numbers
from ...scene import Scene
from .abc import AnimBinding, ChildModel, WeightSet
from .scene_common import latin1

__all__ = ["f32", "scene_extras", "bounds_radius", "kept_radius", "kept_sublod", "animation_extras",
           "weight_sets", "child_models", "anim_bindings", "in_file_order",
           "in_file_order_scene"]


def f32(values) -> list[float | None]:
    """float32 values as the shortest Python floats that give them back (compact JSON); a
    non-finite value becomes None (JSON has no NaN)."""
    a = np.asarray(values, np.float32).reshape(-1)
    if not len(a):
        return []
    # (one finiteness test for all: per value it cost as much as the text)
    return [float(str(v)) if ok else None for v, ok in zip(a, np.isfinite(a).tolist())]


def bounds_radius(pieces: list) -> float:
    """The farthest LOD 0 vertex of ``pieces`` from the origin (file space), as a float32."""
    locs = [np.asarray(p.lods[0].vertices)["location"] for p in pieces if p.lods]
    allpos = np.concatenate(locs).astype(np.float64) if locs else np.zeros((0, 3))
    r = float(np.linalg.norm(allpos, axis=1).max()) if len(allpos) else 0.0
    return f32([r])[0] or 0.0


def kept_radius(ex: dict, pieces: list) -> float:
    """The model's InternalRadius: the one read (extras ``internal_radius``) while the geometry
    reaches as far as it did then (``bounds_radius``), else the farthest vertex (warned when it
    differs from the one read). The engine's radius need not be the farthest vertex, so an
    unedited model keeps the value its author gave."""
    radius = bounds_radius(pieces)
    kept = number(ex, "internal_radius", None, *FLOAT32)
    was = number(ex, "bounds_radius", None, *FLOAT32)
    if kept is None:
        return radius
    if was is not None and abs(radius - was) <= 1e-5 * max(1.0, abs(was)):
        return kept
    if abs(kept - radius) > 1e-5 * max(1.0, abs(kept)):
        warnings.warn(f"the model's internal radius {kept:g} does not fit the edited geometry; "
                      f"written as {radius:g}, the farthest vertex", LossWarning, stacklevel=4)
    return radius


def kept_sublod(mex: dict, n: int, name: str) -> np.ndarray | None:
    """A LOD's SubLODVertexIndex values kept in its mesh's extras when it still has ``n``
    vertices (warned when they do not fit), else None (all 0)."""
    v = mex.get("sublod") if isinstance(mex, dict) else None
    if v is None:
        return None
    ok = integers(v, n, 0, 0xFFFF)
    if ok is None:
        warnings.warn(f"mesh {name!r}: its SubLOD vertex indices do not fit its {n} vertices "
                      "(edited?); written as 0", LossWarning, stacklevel=4)
        return None
    return np.asarray(ok, np.uint16)


def scene_extras(doc, anim_extras: list[dict]) -> dict[str, Any]:
    """The scene's extras of a v9..v13 model (``anim_extras``: each animation's extras with its
    name)."""
    h = doc.header
    ex: dict[str, Any] = {
        "abc_version": int(h.version),
        "command_string": latin1(h.command_string),
        "internal_radius": f32([h.internal_radius])[0],
        "lod_distances": f32(h.lod_distances),
        "weight_sets": [{"name": latin1(w.name), "weights": f32(w.weights)} if len(w.weights)
                        else {"name": latin1(w.name)} for w in doc.weight_sets],
        "child_models": [],
        "anim_bindings": [{"name": latin1(b.name), "extents": f32(b.extents),
                           "origin": f32(b.origin)} for b in doc.anim_bindings],
        "abc_animations": anim_extras,
    }
    for i, c in enumerate(doc.child_models):
        cm: dict[str, Any] = {"name": latin1(c.name), "build_number": int(c.build_number)}
        if i > 0:       # the first is the model itself: its transforms are the bind pose
            t = np.asarray(c.transforms)
            parts = [t[f].reshape(len(t), -1) for f in t.dtype.names or ()]
            cm["transforms"] = f32(np.concatenate(parts, 1)) if len(t) else []
        ex["child_models"].append(cm)
    if h.unknown_v13 is not None:
        ex["unknown_v13"] = int(h.unknown_v13)
    return ex


def animation_extras(scene, anim) -> dict[str, Any]:
    """An animation's extras; those the scene keeps for its name fill what it lacks."""
    return kept_animation_extras(scene, anim, "abc_animations")


def in_file_order(scene) -> list:
    """The scene's animations in the order of the file they came from (the names kept in
    ``abc_animations``; Blender exports its actions sorted by name); others after them."""
    kept = (scene.extras or {}).get("abc_animations")
    if not isinstance(kept, list):
        return list(scene.animations)
    rank: dict[str, int] = {}
    for i, k in enumerate(kept):
        if isinstance(k, dict) and isinstance(k.get("name"), str):
            rank.setdefault(k["name"], i)
    return sorted(scene.animations, key=lambda a: rank.get(a.name, len(rank)))


def in_file_order_scene(scene: Scene) -> Scene:
    """``scene``, or a shallow copy of it whose animations are :func:`in_file_order`."""
    order = in_file_order(scene)
    if all(x is y for x, y in zip(order, scene.animations)):
        return scene
    out = copy.copy(scene)
    out.animations = order
    return out


def weight_sets(ex: dict, nn: int) -> list[WeightSet]:
    out = []
    sets = ex.get("weight_sets")
    if isinstance(sets, dict):                   # {name: weights}, as older versions wrote
        sets = [{"name": k, "weights": v} for k, v in sets.items()]
    bad = 0
    for ws in (sets if isinstance(sets, list) else ()):
        if not isinstance(ws, dict):
            continue
        name = ws.get("name", "")
        v = numbers(ws.get("weights", []), None, *FLOAT32)
        if v is None or len(v) not in (0, nn):
            bad += 1
            continue
        out.append(WeightSet(name=str(name).encode("latin-1", "replace"), weights=np.asarray(v, "<f4")))
    if bad:
        warnings.warn(f"{bad} weight sets in the scene's extras do not hold one weight per node "
                      f"({nn}); left out", LossWarning, stacklevel=3)
    return out


def child_models(ex: dict, base: np.ndarray) -> list[ChildModel]:
    """The model itself (``base``: its bind transforms), then the other child models kept in the
    extras; one whose transforms do not fit the node count gets the bind transforms (warned)."""
    out = [ChildModel(name=b"", build_number=0, transforms=base)]
    kept = ex.get("child_models")
    if not isinstance(kept, list):
        return out
    if kept and isinstance(kept[0], dict):
        out[0].name = str(kept[0].get("name", "")).encode("latin-1", "replace")
        out[0].build_number = integer(kept[0], "build_number", 0, 0, 2**32 - 1)
    stride = sum(int(np.prod(base.dtype[f].shape or (1,))) for f in base.dtype.names or ())
    approximated = []
    for cm in kept[1:]:
        if not isinstance(cm, dict):
            continue
        name = str(cm.get("name", ""))
        t = base.copy()
        vals = numbers(cm.get("transforms"), None, *FLOAT32)
        if vals is not None and len(vals) == stride * len(base):
            flat = np.asarray(vals, np.float64).reshape(len(base), stride)
            col = 0
            for f in base.dtype.names or ():
                w = int(np.prod(base.dtype[f].shape or (1,)))
                t[f] = flat[:, col:col + w].reshape(t[f].shape)
                col += w
        elif vals is not None and len(vals) == 7 * len(base):      # v13 <-> v9..12
            flat = np.asarray(vals, np.float64).reshape(len(base), 7)
            t["location"], t["rotation"] = flat[:, :3], flat[:, 3:7]
        else:
            approximated.append(name)
        out.append(ChildModel(name=name.encode("latin-1", "replace"),
                              build_number=integer(cm, "build_number", 0, 0, 2**32 - 1),
                              transforms=t))
    if approximated:
        warnings.warn(f"child models {', '.join(approximated[:5])}: their transforms do not fit "
                      f"the {len(base)} nodes; the bind transforms were written", LossWarning,
                      stacklevel=3)
    return out


def anim_bindings(ex: dict, names: list[bytes], extents) -> list[AnimBinding]:
    """The bindings kept in the extras, else one per animation (``names``) with ``extents``."""
    kept = ex.get("anim_bindings")
    if not isinstance(kept, list):
        return [AnimBinding(name=n, extents=extents) for n in names]
    out = []
    for b in kept:
        if not isinstance(b, dict):
            continue
        e = numbers(b.get("extents"), 3, *FLOAT32) or list(extents)
        o = numbers(b.get("origin"), 3, *FLOAT32) or [0.0, 0.0, 0.0]
        out.append(AnimBinding(name=str(b.get("name", "")).encode("latin-1", "replace"),
                               extents=tuple(e), origin=tuple(o)))
    return out
