"""Values an editor stores its own way, found again as they were written (issue 32, through
Blender; docs/lossless.md).

Blender gives back what we wrote a few units in the last place off, also where the plain way
back (:mod:`retromesh.restore`) needs no record at all. For a GLB made for Blender:

* :func:`keep_near` / :func:`put_back_near` -- float values as written, found again bit for bit
  in values an editor moved by less than a stated tolerance (a grid index modulo a small power
  of two, the rounding to it and a check per row);
* :func:`keep_written` / :func:`put_back_written` -- a scene's transforms, inverse binds, keys
  and vertex values as written, kept in node and mesh extras (which Blender keeps) and put back
  before a writer runs.
"""
from __future__ import annotations

import base64
import dataclasses
import math
from typing import Any

import numpy as np

from . import vertexcopies
from .restore import (
    EDITOR_TOLERANCE,
    LEVEL_FAST,
    as_glb_holds,
    bits,
    check_bytes,
    from_base64,
    keep_rows,
    ordered,
    pack_bytes,
    pack_ints,
    same_rows,
    tolerance,
    unordered,
    unpack_bytes,
    unpack_ints,
)
from .scene import Primitive, Scene

__all__ = ["keep_near", "put_back_near", "NEAR", "NEAR_BITS", "keep_written", "put_back_written",
           "WRITTEN_KEY", "VERTEX_ID"]


# -- what an editor stores its own way: the values written, found again in its noise -----------
# Blender gives back what we wrote a few units in the last place off (UVs flipped twice, bone
# matrices through its own axes, keys re-based into bone space, normals through its own
# encoding), also where the plain way back needs no record at all. :func:`keep_near` keeps, for
# each value written, its index on a grid of steps of 2**-NEAR_BITS of the array's magnitude
# modulo a small power of two, and the distance in float32 units from that grid point to the
# value, and two check bytes per row: from a value within ``steps`` grid steps of it,
# :func:`put_back_near` finds the value written bit for bit (one byte a value and a few bits of
# rounding: zlib keeps what repeats), and the check tells it from a value moved by a multiple
# of the modulus (an edit, a quaternion of the other sign).
#: the grid of :func:`keep_near`: 2**-NEAR_BITS times the array's largest magnitude rounded up
#: to a power of two (at least 1)
NEAR_BITS = 22
#: per kind of value: the tolerance in grid steps and the grid's coarsening (a power of two,
#: for values Blender stores more coarsely). Measured with Blender 4.2 and 4.5 on the
#: examples: keys and inverse binds move by at most half a step, positions by a sixteenth,
#: normals by 280 steps (6.7e-5: Blender keeps custom normals in 16 bits); the tolerances leave
#: room for larger models (3e-5, 3.6e-6 and 1.7e-3 times the array's magnitude; a corpus
#: animation of 2,000 keys a bone moves quaternions by up to 7.3e-6)
NEAR: dict[str, tuple[int, int]] = {"key": (127, 0), "position": (15, 0), "normal": (7, 10)}


def _pack_planes(values: np.ndarray) -> str:
    """Small signed ints (zigzag) as their four byte planes one after the other, deflated: the
    planes of high bytes are zeros that zlib keeps in a few bytes."""
    z = ((values << 1) ^ (values >> 63)).astype("<u4")
    return pack_bytes(z.view(np.uint8).reshape(-1, 4).T.tobytes(), LEVEL_FAST)


def _unpack_planes(text: Any, n: int) -> np.ndarray | None:
    raw = unpack_bytes(text, 4 * n + 1)
    if raw is None or len(raw) != 4 * n:
        return None
    z = np.frombuffer(raw, np.uint8).reshape(4, n).T.copy().view("<u4").reshape(-1).astype(np.int64)
    return (z >> 1) ^ -(z & 1)


def keep_near(wrote: np.ndarray, kind: str = "key") -> dict[str, Any] | None:
    """The record of float32 values as written (one row per vertex, key, bone...) from which
    :func:`put_back_near` finds them again in values an editor moved by at most ``NEAR[kind]``
    grid steps; None for values it cannot keep (not finite, or none)."""
    steps, coarse = NEAR[kind]
    w = np.ascontiguousarray(wrote, np.float32).reshape(len(wrote), -1)
    if not w.size or not np.isfinite(w).all():
        return None
    e = max(0, math.frexp(float(np.abs(w).max()))[1]) - NEAR_BITS + coarse
    mod = 1 << (2 * steps + 1).bit_length()
    g = np.rint(w.astype(np.float64) / 2.0 ** e).astype(np.int64)
    d = ordered(w) - ordered((g * 2.0 ** e).astype(np.float32))
    if np.abs(d).max() >= 1 << 31:
        return None
    return {"e": e, "m": mod, "n": int(w.size),
            "g": pack_bytes((g % mod).astype(np.uint8).tobytes(), LEVEL_FAST),
            "d": _pack_planes(d.reshape(-1)),
            "c": pack_bytes(check_bytes(w, 2).tobytes(), LEVEL_FAST)}


def put_back_near(now: np.ndarray, record: Any, *, either_sign: bool = False,
                  at: np.ndarray | None = None) -> np.ndarray:
    """Rows of ``now`` (float32, in place) set to the values :func:`keep_near` kept, where each
    value of the row is within the record's tolerance of the one written (``either_sign``:
    or the row's negation is, for quaternions; ``at``: the kept row of each row of ``now``, by
    default the same). Returns which rows (none for a record that does not fit)."""
    rows = np.zeros(len(now), bool)
    width = now.size // len(now) if len(now) else 0
    kept_n = record.get("n") if isinstance(record, dict) else None
    if type(kept_n) is not int or not now.size or not width or kept_n % width or \
            (at is None and kept_n != now.size) or \
            (at is not None and (len(at) != len(now) or at.min() < 0 or at.max() >= kept_n // width)):
        return rows
    e, mod = record.get("e"), record.get("m")
    d = _unpack_planes(record.get("d"), kept_n)
    g_raw = unpack_bytes(record.get("g"), kept_n + 1)
    c_raw = unpack_bytes(record.get("c"), 2 * kept_n + 1)
    if g_raw is None or c_raw is None or len(c_raw) % 2:
        return rows
    gm = np.frombuffer(g_raw, np.uint8).astype(np.int64)
    checks = np.frombuffer(c_raw, "<u2")
    if type(e) is not int or type(mod) is not int or not 2 <= mod <= 256 or not -200 < e < 200 \
            or d is None or len(d) != kept_n or len(gm) != kept_n:
        return rows
    step = 2.0 ** e
    flat = now.reshape(len(now), -1)
    if len(checks) != kept_n // width:
        return rows
    gm, d = gm.reshape(-1, width), d.reshape(-1, width)
    if at is not None:
        gm, d, checks = gm[at], d[at], checks[at]
    best = np.zeros(flat.shape, np.float32)
    for sign in (1.0, -1.0) if either_sign else (1.0,):
        cur = sign * flat.astype(np.float64)
        with np.errstate(all="ignore"):
            g0 = np.rint(np.nan_to_num(cur / step, nan=0.0, posinf=0.0, neginf=0.0))
        g0 = np.clip(g0, -(1 << 40), 1 << 40).astype(np.int64)
        k = (gm - g0) % mod
        g = g0 + np.where(k >= mod // 2, k - mod, k)
        m = ordered((g * step).astype(np.float32)) + d
        fits = (np.abs(g) < 1 << 24) & (m > -(1 << 31)) & (m < 1 << 31)
        wrote = unordered(np.where(fits, m, 0))
        ok = fits & (np.abs(cur - wrote) <= (mod // 2 - 1) * step)
        # (a value moved by a multiple of ``mod`` steps finds another value of the grid: the
        # row's check tells the one written)
        here = ok.all(axis=1) & ~rows & (check_bytes(wrote, 2) == checks)
        best[here] = wrote[here]
        rows |= here
    flat[rows] = best[rows]
    return rows


# -- a scene's values as written, through an editor --------------------------------------------
# ``to_scene`` of a family whose writer reads values Blender moves (bone transforms, keys, UVs)
# calls :func:`keep_written`: the values as the GLB holds them ride in node extras (a node's
# transform, the inverse binds of the skin it is the first joint of, the keys of its channels
# per animation) and mesh extras (vertex values over the mesh's vertices in primitive order;
# with ``ids`` each vertex also carries its index in a vertex attribute, so that vertices
# Blender split or reordered find theirs). Its writer calls :func:`put_back_written` first: in
# a GLB an editor wrote, each value within the tolerance of what was written becomes what was
# written, bit for bit, and the plain way back (records above included) gives the file again.
#: node and mesh extras key of :func:`keep_written`
WRITTEN_KEY = "retromesh_written"
#: the vertex attribute of :func:`keep_written` (``ids``): each vertex's index in its mesh
VERTEX_ID = "_RETROMESH_V"


def _double_flip(uv: np.ndarray) -> np.ndarray:
    """UVs as Blender gives them back: flipped to its own V axis and back in float32."""
    out = np.array(uv, np.float32)
    if out.ndim == 2 and out.shape[1] > 1:
        one = np.float32(1.0)
        out[:, 1] = one - (one - out[:, 1])
    return out


def _b64f64(values: np.ndarray) -> str:
    return base64.b64encode(np.asarray(values, "<f8").tobytes()).decode("ascii")


def _mesh_written(prims: list[Primitive]) -> dict[str, Any]:
    """The record of a mesh's vertex values as written (see above)."""
    rec: dict[str, Any] = {"n": sum(len(p.positions) for p in prims)}
    if not all(p.mode == 4 for p in prims) or not rec["n"]:
        return {}
    pos = keep_near(np.concatenate([p.positions for p in prims]), "position")
    if pos:
        rec["positions"] = pos
    if all(p.normals is not None for p in prims):
        nrm = keep_near(np.concatenate([p.normals for p in prims if p.normals is not None]),
                        "normal")
        if nrm:
            rec["normals"] = nrm
    for k in range(min(len(p.uvs) for p in prims)):
        uv = np.concatenate([p.uvs[k] for p in prims]).astype(np.float32)
        kept = keep_rows(uv, _double_flip(uv))
        if kept:
            rec[f"uv{k}"] = kept
    for k in range(min(len(p.targets) for p in prims)):
        if all(p.targets[k].positions is not None for p in prims):
            kept = keep_near(np.concatenate([p.targets[k].positions for p in prims]), "position")
            if kept:
                rec[f"target{k}"] = kept
    return rec


def keep_written(scene: Scene, *, ids: bool = False) -> None:
    """Keep, in ``scene``'s node and mesh extras, its values as its GLB will hold them (see
    above); ``ids``: and each vertex's index in a vertex attribute."""
    held = as_glb_holds(scene)
    recs: list[dict[str, Any]] = [{} for _ in scene.nodes]
    for i, n in enumerate(held.nodes):
        recs[i]["trs"] = _b64f64(np.concatenate([n.translation, n.rotation, n.scale]))
    for skin in held.skins:       # (on the first joint: Blender keeps the joints' extras)
        if skin.joints and 0 <= skin.joints[0] < len(recs) and \
                skin.inverse_bind_matrices is not None:
            ibm = keep_near(np.asarray(skin.inverse_bind_matrices).reshape(-1, 16), "key")
            if ibm:
                recs[skin.joints[0]]["ibm"] = ibm
    for a, anim in enumerate(held.animations):
        for c in anim.channels:
            if c.path != "weights" and 0 <= c.node < len(recs) and len(c.values):
                kept = keep_near(np.asarray(c.values), "key")
                if kept:
                    recs[c.node].setdefault("keys", {}).setdefault(anim.name or str(a), {})[c.path] = kept
    for node, rec in zip(scene.nodes, recs):
        node.extras[WRITTEN_KEY] = rec
    for mesh, hm in zip(scene.meshes, held.meshes):
        rec = _mesh_written(hm.primitives)
        if rec:
            mesh.extras[WRITTEN_KEY] = rec
            if ids:
                rec.update(_order_written(hm.primitives))
                start = 0
                for p in mesh.primitives:
                    p.attributes[VERTEX_ID] = np.arange(start, start + len(p.positions),
                                                        dtype=np.float32)
                    start += len(p.positions)


def _trs_back(node: Any, rec: Any, tol: float) -> None:
    raw = from_base64(rec)
    if raw is None or len(raw) != 80:
        return
    was = np.frombuffer(raw, "<f8")
    now = np.concatenate([node.translation, node.rotation, node.scale])
    for q in (now, np.concatenate([now[:3], -now[3:7], now[7:]])):
        if same_rows(q[None], was[None], tol)[0]:
            node.translation, node.rotation, node.scale = was[:3].copy(), was[3:7].copy(), \
                was[7:].copy()
            return


def _vertices_back(prims: list[Primitive], rec: dict[str, Any], tol: float) -> None:
    """The mesh's vertex values as written (see :func:`keep_written`), per vertex that is
    within the tolerance of what was written; ``prims`` are copies, changed in place."""
    n = rec.get("n")
    if type(n) is not int or not prims or not all(p.mode == 4 for p in prims):
        return
    ids = [p.attributes.get(VERTEX_ID) for p in prims]
    if all(i is not None for i in ids):
        src = np.concatenate(ids).astype(np.int64)       # type: ignore[arg-type]
        if len(src) and (src.min() < 0 or src.max() >= n):
            return
    elif sum(len(p.positions) for p in prims) == n:
        src = np.arange(n)
    else:
        return
    cuts = np.cumsum([len(p.positions) for p in prims])[:-1]
    _ties_back(prims, rec.get("ties"), src, n, tol)

    def back(name: str, now: np.ndarray, kind: str) -> np.ndarray:
        if kind != "uv":
            put_back_near(now, rec.get(name), at=src)
            return now
        kept = rec.get(name)
        rows = unpack_ints(kept.get("at")) if isinstance(kept, dict) else None
        xor = unpack_ints(kept.get("xor"), delta=False) if isinstance(kept, dict) else None
        width = now.shape[1]
        if rows is None or xor is None or len(xor) != len(rows) * width or \
                (len(rows) and (rows.min() < 0 or rows.max() >= n)):
            return now
        full = np.zeros((n, width), np.uint32)
        full[rows] = xor.astype(np.int32).view(np.uint32).reshape(-1, width)
        was = (bits(now) ^ full[src]).view(np.float32)
        ok = same_rows(now, _double_flip(was), tol)
        return np.where(ok[:, None], was, now)
    for attr, kind in (("positions", "position"), ("normals", "normal")):
        if attr in rec and all(getattr(p, attr) is not None for p in prims):
            got = back(attr, np.concatenate([getattr(p, attr) for p in prims]).astype(np.float32), kind)
            for p, part in zip(prims, np.split(got, cuts)):
                setattr(p, attr, part)
    for k in range(min(len(p.targets) for p in prims)):
        if f"target{k}" in rec and all(p.targets[k].positions is not None for p in prims):
            got = back(f"target{k}", np.concatenate([p.targets[k].positions for p in prims])
                       .astype(np.float32), "position")
            for p, part in zip(prims, np.split(got, cuts)):
                p.targets = [*p.targets[:k], dataclasses.replace(p.targets[k], positions=part),
                             *p.targets[k + 1:]]
    for k in range(min(len(p.uvs) for p in prims)):
        if f"uv{k}" in rec:
            got = back(f"uv{k}", np.concatenate([p.uvs[k] for p in prims]).astype(np.float32), "uv")
            for p, part in zip(prims, np.split(got, cuts)):
                p.uvs = [*p.uvs[:k], part, *p.uvs[k + 1:]]


def put_back_written(scene: Scene) -> Scene:
    """``scene`` with the values :func:`keep_written` kept put back where an editor's GLB
    (:func:`tolerance`) still holds them within the tolerance (:data:`EDITOR_TOLERANCE` for a
    node's transform, :data:`NEAR` for the others); the scene itself when no editor wrote it.
    Shares what it does not change."""
    tol = tolerance(scene.extras)
    if not tol:
        return scene
    nodes = [dataclasses.replace(n) for n in scene.nodes]
    recs = [n.extras.get(WRITTEN_KEY) if isinstance(n.extras, dict) else None for n in nodes]
    for node, rec in zip(nodes, recs):
        if isinstance(rec, dict) and "trs" in rec:
            _trs_back(node, rec["trs"], tol)
    skins = list(scene.skins)
    for k, skin in enumerate(skins):
        first = recs[skin.joints[0]] if skin.joints and 0 <= skin.joints[0] < len(recs) else None
        if isinstance(first, dict) and "ibm" in first and skin.inverse_bind_matrices is not None:
            ibm = np.asarray(skin.inverse_bind_matrices, np.float32).reshape(-1, 16).copy()
            if put_back_near(ibm, first["ibm"]).any():
                skins[k] = dataclasses.replace(skin, inverse_bind_matrices=ibm.reshape(-1, 4, 4)
                                               .astype(np.float64))
    anims = []
    for a, anim in enumerate(scene.animations):
        chans = []
        for c in anim.channels:
            rec = recs[c.node] if 0 <= c.node < len(recs) else None
            keys = rec.get("keys") if isinstance(rec, dict) else None
            kept = keys.get(anim.name or str(a)) if isinstance(keys, dict) else None
            kept = kept.get(c.path) if isinstance(kept, dict) else None
            if kept is not None and c.interpolation != "CUBICSPLINE" and len(c.values):
                values = np.asarray(c.values, np.float32).reshape(len(c.values), -1).copy()
                if put_back_near(values, kept, either_sign=c.path == "rotation").any():
                    c = dataclasses.replace(c, values=values.reshape(np.shape(c.values)))
            chans.append(c)
        anims.append(dataclasses.replace(anim, channels=chans))
    meshes = []
    for mesh in scene.meshes:
        rec = mesh.extras.get(WRITTEN_KEY) if isinstance(mesh.extras, dict) else None
        if isinstance(rec, dict):
            prims = [dataclasses.replace(p) for p in mesh.primitives]
            _vertices_back(prims, rec, tol)
            if isinstance(rec.get("held"), list) and type(rec.get("n")) is int:
                prims = [merge_split(p, rec["held"], rec["n"]) for p in prims]
            mesh = dataclasses.replace(mesh, primitives=prims)
        meshes.append(mesh)
    return dataclasses.replace(scene, nodes=nodes, skins=skins, animations=anims, meshes=meshes)


# -- vertices Blender split, reordered or re-sorted (the work is :mod:`.vertexcopies`'s) --------
# With ``ids``, :func:`keep_written` also keeps the vertex columns the mesh had as written
# (``held``) and the vertices whose weights tie as written (``ties``); ``put_back_written``
# gives those their influences as written where Blender holds the same set, and merges the
# copies of each vertex that are the same again, each vertex at its index.

def _order_written(prims: list[Primitive]) -> dict[str, Any]:
    """What :func:`keep_written` with ``ids`` keeps beside the values (see above)."""
    out: dict[str, Any] = {"held": vertexcopies.held(prims)}
    rows, j, w = vertexcopies.ties(prims, 2 * EDITOR_TOLERANCE)
    if len(rows):
        out["ties"] = {"at": pack_ints(rows), "j": pack_ints(j.reshape(-1), delta=False),
                       "w": pack_ints(w.view(np.int32).reshape(-1), delta=False)}
    return out


def _ties_back(prims: list[Primitive], rec: Any, src: np.ndarray, n: int, tol: float) -> None:
    """The influences :func:`_order_written` kept put back (``src``: each vertex's index as
    written, ``n`` vertices written; ``prims`` are copies, changed in place)."""
    if not isinstance(rec, dict):
        return
    rows, jk, wk = (unpack_ints(rec.get("at")), unpack_ints(rec.get("j"), delta=False),
                    unpack_ints(rec.get("w"), delta=False))
    if rows is None or jk is None or wk is None or not len(rows) or rows.min() < 0 or \
            rows.max() >= n or len(jk) != len(wk) or len(jk) % len(rows):
        return
    jk, wk = jk.reshape(len(rows), -1), wk.astype(np.int32).view(np.float32).reshape(len(rows), -1)
    vertexcopies.ties_back(prims, src, n, rows, jk, wk, tol)


def merge_split(p: Primitive, held: list[str], n: int) -> Primitive:
    """:func:`vertexcopies.merge_split` of ``p`` by :data:`VERTEX_ID`."""
    return vertexcopies.merge_split(p, held, n, VERTEX_ID)
