"""What glTF has no place for in Overgrowth files, carried in node extras so that
``.phxbn``/``.anm`` -> ``.glb`` -> ``.phxbn``/``.anm`` keeps every native field.

``to_scene`` puts on the skeleton's root node (the ``phxbn_root`` node):

* ``phxbn_native``: the ``.phxbn`` without its per-vertex weight arrays, as compact lossless
  JSON (:mod:`retromesh.jsoncodec`): version, rigging stage, every point (also those no bone
  uses), point and bone parents, masses, centres of mass, stored bone matrices, ragdoll joints,
  simple IK bones, trailing bytes;
* ``anm_native``: ``{animation name: JSON}``, each ``.anm`` without its bone matrices: version,
  raw flags, start, length, key times, physics weights, weapon matrices, mobility matrices,
  events, IK bones, shape and status keys, root motion.

Node extras are where the data survive best: Blender's glTF importer turns node extras into
custom properties and its exporter writes them back (with "Custom Properties" /
``export_extras`` on), whereas animation extras are not imported at all. Values are JSON
strings, which Blender keeps as they are (nested lists of dicts would be stringified).

``from_scene`` starts from the kept document and puts in what the scene says: bone geometry,
bind frames and weights for the ``.phxbn`` (kept values are reused where the scene's agree with
them to 1e-5, so an untouched skeleton comes back bit for bit), bone matrices and root motion
per key for the ``.anm``. Kept data that no longer fit the scene (another bone count) are
dropped with a LossWarning.
"""
from __future__ import annotations

import copy
import json
import warnings
from typing import Any

import numpy as np

from ... import jsoncodec
from ...arrays import distinct
from ...errors import LossWarning
from ...extras import compact_json, load_kept
from .anm import AnmFile
from .phxbn import PhxbnFile

__all__ = ["PHXBN_KEY", "ANM_KEY", "OBJ_EXACT_KEY", "WEIGHTS_EXACT_KEY", "ANM_EXACT_KEY",
           "FIRST_KEY_BIND", "phxbn_stub", "anm_stub", "kept_phxbn", "kept_anm",
           "merge_phxbn", "same", "anm_key", "load_table"]

PHXBN_KEY = "phxbn_native"
ANM_KEY = "anm_native"
#: mesh extras: what gives an OBJ's text back (:func:`.exact.obj_record`)
OBJ_EXACT_KEY = "obj_exact"
#: mesh extras: the .phxbn weight and id bits glTF renormalised (:func:`.exact.xor_record`)
WEIGHTS_EXACT_KEY = "phxbn_weights_exact"
#: root node extras: {animation key: the .anm bone matrix bits (:func:`.exact.xor_record`)}
ANM_EXACT_KEY = "anm_exact"
#: root node extras: the joints were made from the first key of an .anm read alone (its bind
#: frames are the key's matrices: the writer re-expresses nothing)
FIRST_KEY_BIND = "anm_first_key_bind"
TOL = 1e-5


def phxbn_stub(doc: PhxbnFile, weights: bool = False) -> str:
    """The skeleton without its (N, 4) weight and id arrays (the skinned mesh carries them),
    as compact JSON; ``weights=True`` keeps them (a skeleton converted without its mesh)."""
    stub = copy.copy(doc)
    if doc.control is not None and not weights:
        stub.control = copy.copy(doc.control)
        stub.control.weights = np.zeros((0, 4), "<f4")
        stub.control.ids = np.zeros((0, 4), "<f4")
    return compact_json(stub)


def anm_stub(doc: AnmFile) -> str:
    """The animation without its bone matrices, as compact JSON: :func:`compact_json` of that
    stub but for the keyframes' arrays, kept as their bytes (``"b64"``, which
    :func:`jsoncodec.decode` reads, also in earlier releases: a third of the text, and no float
    to print), all keyframes encoded together field by field (:func:`jsoncodec.encode_many`)."""
    stub = copy.copy(doc)
    stub.keyframes = []
    out = jsoncodec.encode(stub)
    out["keyframes"] = jsoncodec.encode_many(list(doc.keyframes),
                                             {"bone_mats": np.zeros((0, 16), "<f4")}, raw=True)
    return json.dumps(out, separators=(",", ":"))


def kept_phxbn(extras: dict, bones: int) -> PhxbnFile | None:
    """The kept skeleton of a root node's extras, when it still fits ``bones`` bones."""
    doc = load_kept(extras.get(PHXBN_KEY), PhxbnFile)
    if doc is None:
        return None
    if len(doc.bone_ends) != bones:
        warnings.warn(f"the skeleton now has {bones} bones, the kept .phxbn data "
                      f"{len(doc.bone_ends)}: ragdoll joints, IK bones and masses are not kept",
                      LossWarning, stacklevel=3)
        return None
    return doc


def anm_key(name: str, earlier: int) -> str:
    """The table key of an animation after ``earlier`` animations of the same name."""
    return name if not earlier else f"{name}#{earlier + 1}"


def load_table(value: Any) -> dict:
    """A ``{name: value}`` table of extras (a dict, or its JSON text as Blender keeps it)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def kept_anm(extras: dict, name: str) -> AnmFile | None:
    """The kept animation of table key ``name`` (:func:`anm_key`) of a root node's extras."""
    table = extras.get(ANM_KEY)
    if isinstance(table, str):
        try:
            table = json.loads(table)
        except ValueError:
            table = None
    if not isinstance(table, dict):
        return None
    doc = load_kept(table.get(name), AnmFile)
    if doc is None or not doc.keyframes:
        return None
    return doc


def same(a: Any, b: Any) -> bool:
    """Equal shapes and values within :data:`TOL` (relative above 1)."""
    if a is None or b is None:
        return False
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= TOL * (1 + np.abs(b))))


def merge_phxbn(kept: PhxbnFile, new: PhxbnFile) -> PhxbnFile:
    """``kept`` (same bone count) with the scene's geometry, frames and weights from ``new``
    (kept values where the two agree)."""
    out = kept
    m = len(new.bone_ends)
    old_ends = np.asarray(kept.bone_ends, np.int64)   # out is kept: read before changing it
    old_pts = np.asarray(kept.points, "<f4").reshape(-1, 3)
    new_pts = np.asarray(new.points, "<f4").reshape(-1, 3)
    if np.array_equal(np.asarray(kept.bone_ends), np.asarray(new.bone_ends)) \
            and len(new_pts) <= len(old_pts):
        pts = old_pts.copy()
        used = distinct(np.asarray(new.bone_ends).reshape(-1))
        moved = used[[not same(new_pts[i], old_pts[i]) for i in used]]
        pts[moved] = new_pts[moved]
        out.points = pts
    else:
        out.points, out.bone_ends = new_pts, np.asarray(new.bone_ends, "<i4")
        if out.point_parents is not None:
            out.point_parents = np.full(len(new_pts), -1, "<i4")
    e = np.asarray(out.bone_ends, np.int64)
    p = np.asarray(out.points, np.float64)
    mids = (p[e[:, 0]] + p[e[:, 1]]) / 2
    if kept.bone_mats is not None and not same(new.bone_mats, kept.bone_mats):
        out.bone_mats = new.bone_mats
    if kept.bone_com is not None:
        old_mids = (old_pts[old_ends[:, 0]].astype(np.float64) + old_pts[old_ends[:, 1]]) / 2
        if not same(mids, old_mids):
            out.bone_com = mids.astype("<f4")
    parents = np.asarray(new.bone_parents, np.int64)
    if not np.array_equal(parents, kept.parents()):
        if out.bone_parents is not None:
            out.bone_parents = parents.astype("<i4")
    if new.control is not None:
        ctl = out.control if out.control is not None else new.control
        ctl.weights, ctl.ids = new.control.weights, new.control.ids
        ctl.hier_parents = parents.astype("<i4")
        ctl.num_vertices = len(ctl.weights) if out.version >= 11 else None
        if out.control is None:
            ctl.joints = []
            out.rigging_stage = 1
        out.control = ctl
    elif out.control is not None and not len(out.control.weights):
        out.control = None                      # weights were on a mesh that is gone
        out.rigging_stage = 0
    if out.bone_masses is not None and len(out.bone_masses) != m:
        out.bone_masses = np.ones(m, "<f4")
    return out
