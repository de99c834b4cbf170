"""Overgrowth ``.anm`` weapon matrices as animated glTF nodes, and back.

An ``.anm`` key (version 7+) holds a model-space matrix per weapon slot (the same space and
column-major layout as the bone matrices; the weapon bones ``Weap_<n>`` of Wolfire Games' Blender
exporter), and from version 8 a ``relative_id`` (the bone the weapon follows, -1 none) and a
``relative_weight``.

``to_scene``: slot ``n`` is a node ``weapon<n>`` (extras ``anm_weapon: n``, ``relative_id``,
``relative_weight`` of its first key) below the skeleton's root node, as the root bones are (so
it moves with the root motion as they do). Its rest transform is the slot's first key; each
animation with weapon matrices animates it: translation and rotation sampled at the times the
bones are sampled, blended from the keys as the bones are (:func:`.playback.sample_animation`).
A key without a slot holds the slot's previous matrix. Blender imports the node as an empty the
user can see, move and key.

``from_scene``: the node's transform relative to the root node (through any parents the user
gave it), at each key time, plus the centring shift of the skeleton. With the animation's kept
data (an unedited trip), a kept matrix whose rigid part the node still gives back to 1e-5 is
written as it was (bit for bit; a scale in it is kept too), else the node's matrix with the kept
scale. Without them, the nodes an animation keys give every key one slot each, with the
``relative_id``/``relative_weight`` of their extras.
"""
from __future__ import annotations

import copy
import warnings

import numpy as np

from ... import extras as xt
from ...errors import DocumentError, LimitError, LossWarning
from ...scene import Animation, Channel, Node, Scene
from ...transforms import compose_trs, decompose_trs, quat_continuous
from .anm import WEAPON8_DTYPE, AnmFile, weapon_dtype
from .bones import pack_mats, unpack_mats
from .playback import sample_animation, sorted_keys

__all__ = ["WEAPON_KEY", "weapon_channels", "weapon_nodes", "weapon_matrices", "apply_to_kept",
           "weapon_records"]

WEAPON_KEY = "anm_weapon"
TOL = 1e-5


def _slot_mats(anm: AnmFile) -> tuple[np.ndarray, np.ndarray] | None:
    """(keys, slots, 4, 4) matrices of the sorted keys (a missing slot holds its previous
    matrix) and the (slots,) first relative id/weight records, or None without weapons."""
    kfs, _, _ = sorted_keys(anm)
    counts = [len(k.weapon_mats) if k.weapon_mats is not None else 0 for k in kfs]
    nw = max(counts, default=0)
    if not nw:
        return None
    mats = np.zeros((len(kfs), nw, 4, 4))
    mats[:] = np.eye(4)
    first = np.zeros(nw, WEAPON8_DTYPE)
    first["relative_id"] = -1
    seen = np.zeros(nw, bool)
    for k, kf in enumerate(kfs):
        w = np.asarray(kf.weapon_mats) if counts[k] else None
        if k:
            mats[k] = mats[k - 1]
        if w is None:
            continue
        mats[k, :len(w)] = unpack_mats(w["matrix"])
        new = ~seen[:len(w)]
        if "relative_id" in (w.dtype.names or ()):
            first["relative_id"][:len(w)][new] = w["relative_id"][new]
            first["relative_weight"][:len(w)][new] = w["relative_weight"][new]
        seen[:len(w)] = True
    return mats, first


def weapon_channels(scene: Scene, anm: AnmFile, root: int, sample_ms: np.ndarray,
                    secs: np.ndarray, limit: int) -> list[Channel]:
    """Channels of the weapon nodes (made below ``root`` when missing) for ``anm``, sampled at
    ``sample_ms`` (file milliseconds from the start), keyed at ``secs``; at most ``limit``
    samples x slots (the bones' cap: a slot count is a field of the file)."""
    counts = [len(k.weapon_mats) for k in anm.keyframes if k.weapon_mats is not None]
    if len(sample_ms) * max(counts, default=0) > limit:
        raise LimitError(f"at most {limit} samples x weapon slots (LIMITS['sample_bones'] of "
                         "retromesh.formats.overgrowth.scene)", path="weapon_mats",
                         got=f"{len(sample_ms)} samples of {max(counts)} weapon slots")
    slots = _slot_mats(anm)
    if slots is None:
        return []
    mats, first = slots
    nw = mats.shape[1]
    if not np.all(np.isfinite(mats)):
        raise DocumentError("weapon matrices must be finite")
    # the weapons sampled as bones without parents (the engine blends them as it does bones)
    as_bones = copy.copy(anm)
    kfs, _, _ = sorted_keys(anm)
    as_bones.keyframes = [copy.copy(k) for k in kfs]
    for k, kf in zip(mats, as_bones.keyframes):
        kf.bone_mats = pack_mats(k)
    T, R, _, _ = sample_animation(as_bones, np.full(nw, -1, np.int64), nw, sample_ms)
    nodes = weapon_nodes(scene, root)
    out = []
    for w in range(nw):
        if w not in nodes:
            t, q, s = decompose_trs(mats[0, w])
            nodes[w] = scene.add_node(Node(
                name=f"weapon{w}", translation=t, rotation=q, scale=s,
                extras={WEAPON_KEY: w, "relative_id": int(first["relative_id"][w]),
                        "relative_weight": float(first["relative_weight"][w])}), parent=root)
        out.append(Channel(nodes[w], "translation", secs, T[:, w]))
        out.append(Channel(nodes[w], "rotation", secs, quat_continuous(R[:, w])))
    return out


def weapon_nodes(scene: Scene, root: int | None) -> dict[int, int]:
    """Slot -> node of the weapon nodes (below ``root`` when it is given, else anywhere)."""
    out: dict[int, int] = {}
    parents = scene.parents()
    for i, n in enumerate(scene.nodes):
        slot = xt.integer(n.extras, WEAPON_KEY, None, 0, 1 << 16)
        if slot is None or slot in out:
            continue
        up = i
        while root is not None and up >= 0 and up != root:
            up = parents[up]
        if root is None or up == root:
            out[slot] = i
    return out


def weapon_matrices(scene: Scene, anim: Animation, root: int | None, t: np.ndarray,
                    shift: np.ndarray | None) -> dict[int, np.ndarray]:
    """Slot -> (keys, 4, 4) matrices of the weapon nodes at times ``t`` (seconds), relative to
    ``root`` (the skeleton space), for the slots whose node ``anim`` animates (itself or a
    node above it up to the root)."""
    nodes = weapon_nodes(scene, root)
    if not nodes:
        return {}
    parents = scene.parents()
    by_node: dict[int, list[Channel]] = {}
    for c in anim.channels:
        by_node.setdefault(c.node, []).append(c)
    out = {}
    for slot, n in sorted(nodes.items()):
        chain, up = [], n
        while up >= 0 and up != root:
            chain.append(up)
            up = parents[up]
        if not any(c in by_node for c in chain):
            continue
        m = np.broadcast_to(np.eye(4), (len(t), 4, 4))
        for i in chain:                      # from the weapon node up: m = local @ m
            node = scene.nodes[i]
            trs = {"translation": node.translation, "rotation": node.rotation,
                   "scale": node.scale}
            vals = {p: np.broadcast_to(v, (len(t), len(v))) for p, v in trs.items()}
            for c in by_node.get(i, []):
                if c.path in vals:
                    vals[c.path] = c.sample(t)
            m = compose_trs(vals["translation"], vals["rotation"], vals["scale"]) @ m
        m = np.array(m)
        if shift is not None:
            m[:, :3, 3] += shift
        out[slot] = m
    return out


def apply_to_kept(kept: AnmFile, mats: dict[int, np.ndarray], name: str = "") -> None:
    """Put the scene's weapon matrices into the kept animation's keys (file order, as the
    matrices are): a kept matrix whose rigid part they give back stays as it was. Slots the
    file has no place for (a weapon node keyed in an animation that had fewer) are warned."""
    have = max((len(kf.weapon_mats) for kf in kept.keyframes if kf.weapon_mats is not None),
               default=0)
    extra = sorted(s for s in mats if s >= have)
    if extra:
        warnings.warn(f"animation {name!r}: weapon nodes {extra} are keyed, but the .anm it came "
                      f"from has {have} weapon slots (version {kept.version}); left out",
                      LossWarning, stacklevel=4)
    for k, kf in enumerate(kept.keyframes):
        if kf.weapon_mats is None or not len(kf.weapon_mats):
            continue
        wm = np.array(kf.weapon_mats)
        for slot in range(len(wm)):
            if slot not in mats:
                continue
            new = mats[slot][k]
            old = unpack_mats(wm["matrix"][slot].astype(np.float64))
            t, q, s = decompose_trs(old)
            if _same(compose_trs(t, q, np.ones(3)), new):
                continue
            nt, nq, _ = decompose_trs(new)
            wm["matrix"][slot] = pack_mats(compose_trs(nt, nq, s))
        kf.weapon_mats = wm


def weapon_records(scene: Scene, root: int | None, mats: dict[int, np.ndarray],
                   version: int = 11) -> list[np.ndarray]:
    """Per key, the weapon records of an ``.anm`` made from the scene alone (one slot per
    animated weapon node, in slot order; relative id/weight from the node's extras)."""
    nodes = weapon_nodes(scene, root)
    slots = sorted(mats)
    if not slots:
        return []
    keys = len(mats[slots[0]])
    dt = weapon_dtype(version)
    out = []
    for k in range(keys):
        rec = np.zeros(len(slots), dt)
        for j, s in enumerate(slots):
            rec["matrix"][j] = pack_mats(mats[s][k])
            if "relative_id" in (dt.names or ()):
                ex = scene.nodes[nodes[s]].extras
                rec["relative_id"][j] = xt.integer(ex, "relative_id", -1)
                rec["relative_weight"][j] = xt.number(ex, "relative_weight", 0.0)
        out.append(rec)
    return out


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all(np.abs(a - b) <= TOL * (1 + np.abs(b))))
