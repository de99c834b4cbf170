"""A scene that came from a B3D file, written back NODE for NODE (see :mod:`.scene_write`).

It relies on what :func:`.scene.to_scene` leaves in ``extras`` (glTF keeps them; Blender's
importer keeps node, mesh and material extras as custom properties, not primitive or animation
extras, glTF-Blender-IO ``blender/imp``): ``node.extras["b3d"]`` (``mesh`` brush
and VRTS flags/sets/size, ``bone``, ``keys`` flags per KEYS chunk, ``anim`` flags/frames/fps
and ``first`` key frame: enough for fps and frame numbers when animation extras are lost),
``mesh.extras["b3d_tris"]``: per primitive (TRIS) its ``count`` of vertices, its ``brush`` and
``weights`` (the file's own weights where glTF's normalised ones differ) and ``uv_more`` (the
UV sets and components glTF lacks, :mod:`.uvmore`), used only while the
mesh still has that many primitives of those vertex counts (Blender keeps the primitives'
order and vertices when nothing was edited; primitive extras, where older GLBs of ours hold
``b3d_brush`` / ``b3d_weights``, are read first), ``animation.extras`` (first frame, fps).
"""
from __future__ import annotations

import bisect
import copy
import re
import warnings
from typing import Any

import numpy as np

from ... import extras as xt
from ...arrays import distinct, isin
from ...errors import DocumentError, LossWarning
from ...geometry import compute_normals
from ...scene import Animation, Primitive, Scene
from ...transforms import inverse
from .axes import Z
from .chunks import BONE_DTYPE, AnimChunk, Bone, Keys, MeshChunk, NodeChunk, Vrts, tris_chunks, vrts_dtype
from .exact import (
    KEYS_SCENE_KEY,
    kept_trs,
    node_values,
    normal_naive,
    restore_keys,
    restore_keys_scene,
    restore_normals,
    restore_rows,
    tolerance,
)
from .keys import Track, animation_rate, keys_chunks, tracks_for
from .uvmore import decode as uv_decode, extra_mask

__all__ = ["native_layout_fits", "native_roots", "anim_record", "fold_moved_meshes", "unsplit",
           "SOURCE_ATTR", "needs_source_ids"]


def _native(node) -> dict | None:
    n = node.extras.get("b3d")
    return n if isinstance(n, dict) else None


def _preorder(scene: Scene) -> list[int]:
    out: list[int] = []
    parents = scene.parents()
    stack = list(reversed(scene.roots or [i for i, p in enumerate(parents) if p < 0]))
    while stack:
        i = stack.pop()
        out.append(i)
        stack.extend(reversed(scene.nodes[i].children))
    return out


def fold_moved_meshes(scene: Scene) -> Scene:
    """Our glTF writer moves a skinned mesh whose node has a transform to a root node of its
    own (``<name>_skinned``, appended last; glTF ignores a skinned mesh node's transform). Put
    such meshes back on the node they came from (joint 0 of their skin, whose extras say it
    held a MESH); returns the scene unchanged when there are none."""
    parents = scene.parents()
    moved: dict[int, int] = {}
    for m, node in enumerate(scene.nodes):
        if _native(node) is not None or node.mesh is None or node.skin is None:
            continue
        j = scene.skins[node.skin].joints[0]
        owner = scene.nodes[j]
        if (parents[m] >= 0 or node.children or owner.mesh is not None or j in moved
                or "mesh" not in (_native(owner) or {})):
            return scene
        moved[j] = m
    if not moved or min(moved.values()) < len(scene.nodes) - len(moved):
        return scene
    out = copy.copy(scene)
    out.nodes = [copy.copy(n) for n in scene.nodes[:len(scene.nodes) - len(moved)]]
    for j, m in moved.items():
        out.nodes[j].mesh, out.nodes[j].skin = scene.nodes[m].mesh, scene.nodes[m].skin
    if scene.roots:
        out.roots = [r for r in scene.roots if r not in moved.values()]
    return out


def native_layout_fits(scene: Scene) -> bool:
    """Every node came from B3D, and each skinned mesh node is joint 0 of its skin with the
    other joints below it, in its rest pose, before the next MESH in file order."""
    if not scene.nodes or any(_native(n) is None for n in scene.nodes):
        return False
    order = _preorder(scene)
    if len(order) != len(scene.nodes):
        return False
    pos = {n: k for k, n in enumerate(order)}
    worlds = scene.world_matrices()
    mesh_at = sorted(pos[i] for i, n in enumerate(scene.nodes) if n.mesh is not None)
    for i, node in enumerate(scene.nodes):
        if node.skin is None:
            continue
        skin = scene.skins[node.skin]
        if skin.joints[0] != i or any(pos[j] < pos[i] for j in skin.joints):
            return False
        last = max(pos[j] for j in skin.joints)
        k = bisect.bisect_right(mesh_at, pos[i])         # the next MESH after this one
        if k < len(mesh_at) and mesh_at[k] <= last:
            return False
        if skin.inverse_bind_matrices is not None:
            expect = inverse(worlds[list(skin.joints)]) @ worlds[i]
            scale = max(1.0, float(np.abs(expect).max()))
            if not np.allclose(skin.inverse_bind_matrices, expect, atol=1e-4 * scale):
                return False
    return True


def anim_record(node) -> tuple[int, int, float, int] | None:
    """The ANIM a node held in the B3D file: flags, frames, fps, first key frame."""
    rec: Any = (_native(node) or {}).get("anim")
    ints = xt.integers(rec[:2], 2) if isinstance(rec, list) and len(rec) == 3 else None
    try:
        return (ints[0], ints[1], float(rec[2]),
                xt.integer(_native(node) or {}, "first", 1)) if ints else None
    except (TypeError, ValueError):
        return None


def _holders(scene: Scene, anims: list[Animation]) -> dict[int, int]:
    """Animation index -> the node whose ANIM it came from (-1: keys without ANIM)."""
    with_anim = [i for i, n in enumerate(scene.nodes) if "anim" in (_native(n) or {})]
    out = {}
    for ai, a in enumerate(anims):
        holder = a.extras.get("b3d_holder")
        if holder == -1:
            out[ai] = -1
        elif isinstance(holder, int) and holder in with_anim and scene.nodes[holder].name == a.name:
            out[ai] = holder
        else:
            same = [i for i in with_anim if scene.nodes[i].name == a.name]
            out[ai] = same[0] if same else (with_anim[0] if with_anim else _preorder(scene)[0])
    return out


#: vertex attribute: which VRTS row (of the primitive's) each vertex is; written only where
#: Blender's split copies could not be told from the file's own (:func:`needs_source_ids`)
SOURCE_ATTR = "_B3D_V"


def _same_as_previous(p: Primitive) -> np.ndarray:
    """Per vertex after the first, whether it looks like a split copy of the one before it."""
    pos = p.positions
    same = np.zeros(max(len(pos) - 1, 0), bool)
    # (only where the position repeats: few rows, so the other attributes cost nothing)
    x = pos[:, 0]
    at = np.flatnonzero(x[1:] == x[:-1])
    if not len(at):
        return same
    nxt = at + 1
    ok = (pos[nxt] == pos[at]).all(axis=1)
    # (each attribute only while some vertex is still a candidate: most models have none)
    for a in [*p.uvs, p.colors, p.joints, p.weights]:
        if a is not None and ok.any():
            ok &= (a[nxt] == a[at]).all(axis=1)
    if p.normals is not None and ok.any():
        ok &= np.einsum("ij,ij->i", p.normals[nxt], p.normals[at]) > 0.9999
    same[at[ok]] = True
    return same


def needs_source_ids(p: Primitive) -> bool:
    """The primitive already has vertices that look like a split copy of the one before
    (cubewater's ``head01``): :func:`unsplit` could not tell Blender's copies from them.
    Only with normals: Blender splits a vertex where its corners' normals come back apart
    (stored per corner); without normals in the glTF it makes smooth ones, one per vertex."""
    if p.normals is None or len(p.positions) < 2:
        return False
    # (:func:`_same_as_previous`, stopping at the first attribute that leaves no candidate:
    # to_scene asks this of every primitive, and most have none after the positions)
    pos = p.positions
    at = np.flatnonzero((pos[1:] == pos[:-1]).all(axis=1))
    if not len(at):
        return False
    nxt = at + 1
    ok = np.ones(len(at), bool)
    for a in [*p.uvs, p.colors, p.joints, p.weights]:
        if a is not None:
            ok &= (a[nxt] == a[at]).all(axis=1)
            if not ok.any():
                return False
    return bool((np.einsum("ij,ij->i", p.normals[nxt[ok]], p.normals[at[ok]]) > 0.9999).any())


def _by_source(p: Primitive, count: int) -> Primitive | None:
    """``p`` with one vertex per source row (the first copy), in source order, when its
    :data:`SOURCE_ATTR` names each of ``count`` rows (else None)."""
    src = p.attributes.get(SOURCE_ATTR)
    if src is None or p.indices is None or len(src) != len(p.positions):
        return None
    v = np.rint(np.asarray(src, np.float64).reshape(len(p.positions), -1)[:, 0])
    if len(v) < count or v.min(initial=0) < 0 or v.max(initial=0) >= count:
        return None
    v = v.astype(np.int64)
    first = np.full(count, -1, np.int64)
    first[v[::-1]] = np.arange(len(v))[::-1]          # the first vertex of each row
    if (first < 0).any():
        return None
    # copies only: a vertex Blender made (an edit) that took a row's number is not merged
    at = first[v]
    if not np.array_equal(p.positions[at], p.positions) or any(
            not np.allclose(uv[at], uv, rtol=0, atol=1e-6) for uv in p.uvs):
        return None
    q = copy.copy(p)
    q.positions = p.positions[first]
    q.uvs = [uv[first] for uv in p.uvs]
    for name in ("normals", "tangents", "colors", "joints", "weights"):
        if getattr(p, name) is not None:
            setattr(q, name, getattr(p, name)[first])
    q.attributes = {k: np.asarray(a)[first] for k, a in p.attributes.items()}
    q.indices = v[p.indices].astype(np.uint32)
    q.targets = []
    return q if not p.targets else None


def _in_order(src: Any, n: int) -> bool:
    """A :data:`SOURCE_ATTR` of ``n`` vertices that names each row once, in order."""
    a = np.asarray(src)
    return len(a) == n and a.size == n and np.array_equal(np.rint(a.reshape(n).astype(np.float64)),
                                                          np.arange(n))


def unsplit(p: Primitive, count: Any) -> Primitive:
    """``p`` with the vertices Blender split undone, when that gives back ``count`` vertices.
    Blender stores normals per face corner in a compressed form, so a vertex shared by several
    triangles can come back as a few copies next to each other whose normals differ in the
    fourth decimal (hog 185 -> 197 vertices); each copy would get its own BONE entries. Where
    the file's own vertices look like such copies, each vertex carries its row
    (:data:`SOURCE_ATTR`)."""
    n = len(p.positions)
    if not isinstance(count, int) or not 0 < count <= n or p.indices is None:
        return p
    if SOURCE_ATTR in p.attributes:
        if count == n and _in_order(p.attributes[SOURCE_ATTR], n):
            return p            # (what _by_source gives: the same rows; a GLB not edited)
        merged = _by_source(p, count)
        if merged is not None or count == n:
            return merged or p
    if count == n:
        return p
    same = _same_as_previous(p)
    if int(same.sum()) != n - count:
        return p
    keep = np.r_[True, ~same]
    q = copy.copy(p)
    q.positions = p.positions[keep]
    q.uvs = [uv[keep] for uv in p.uvs]
    for name in ("normals", "tangents", "colors", "joints", "weights"):
        if getattr(p, name) is not None:
            setattr(q, name, getattr(p, name)[keep])
    q.attributes = {k: np.asarray(a)[keep] for k, a in p.attributes.items()
                    if len(a) == n}
    q.indices = (np.cumsum(keep) - 1)[p.indices].astype(np.uint32)
    q.targets = []
    return q if not p.targets else p


def _unsplit_meshes(scene: Scene) -> Scene:
    """The scene with :func:`unsplit` applied where the mesh's ``b3d_tris`` counts say so."""
    meshes = []
    for m in scene.meshes:
        recs = m.extras.get("b3d_tris")
        if isinstance(recs, list) and len(recs) == len(m.primitives) \
                and all(isinstance(r, dict) for r in recs):
            prims = [unsplit(p, r.get("count")) for p, r in zip(m.primitives, recs)]
            if any(a is not b for a, b in zip(prims, m.primitives)):
                m = copy.copy(m)
                m.primitives = prims
        meshes.append(m)
    out = copy.copy(scene)
    out.meshes = meshes
    return out


def native_roots(scene: Scene, anims: list[Animation], fps: float | None,
                 brush_of: dict[int, list[int]], brush_ids: dict[int, int]) -> list[NodeChunk]:
    scene = _unsplit_meshes(scene)
    holders = _holders(scene, anims)
    tracks: dict[int, dict[str, Track]] = {}
    anim_out: dict[int, tuple] = {}         # holder -> animation, rate, last frame, first
    for ai, a in enumerate(anims):
        rec = anim_record(scene.nodes[holders[ai]]) if holders[ai] >= 0 else None
        rate = animation_rate(a, fps, rec[2] if rec else None)
        first = (xt.integer(a.extras, "b3d_first_frame", 1) if "b3d_first_frame" in a.extras
                 else rec[3] if rec else 1)
        t, length = tracks_for(a, rate, first)
        for n, per_path in t.items():
            tracks.setdefault(n, {}).update(per_path)
        if holders[ai] >= 0:
            anim_out[holders[ai]] = (a, rate, first + length, first)
    bones = _bone_weights(scene)
    writer = _Writer(scene, tracks, anim_out, bones, brush_of, brush_ids)
    parents = scene.parents()
    roots = [writer.node(r, 0) for r in (scene.roots or [i for i, p in enumerate(parents) if p < 0])]
    restore_normals(writer.normals_kept)        # (before the VRTS are welded, reordered)
    if writer.keys_kept:
        restore_keys([k for k, _ in writer.keys_kept], [r for _, r in writer.keys_kept],
                     tolerance(scene, "rotation"))
    if KEYS_SCENE_KEY in scene.extras:
        restore_keys_scene(writer.keys_of, scene.extras[KEYS_SCENE_KEY], tolerance(scene, "rotation"))
    return roots


def _warn_new_count(mesh, n: int) -> None:
    """A LossWarning when a mesh read from a B3D is written with another number of vertices:
    the game sees it (vertex ids of other files, such as another model's BONE, no longer match),
    and the file's vertex order and per-vertex records cannot be kept."""
    recs = mesh.extras.get("b3d_tris")
    if not (isinstance(recs, list) and recs and all(isinstance(r, dict) for r in recs)):
        return
    counts = [r.get("count") for r in recs]
    if not all(isinstance(c, int) for c in counts):
        return
    had = sum(counts) - sum(len(r.get("shared", [[]])[0]) if isinstance(r.get("shared"), list)
                            and r.get("shared") else 0 for r in recs)
    if had != n and sum(counts) != n:
        warnings.warn(f"mesh {mesh.name!r}: written with {n} vertices, the B3D had {had} (edited "
                      "topology?): vertex order and per-vertex records are not kept",
                      LossWarning, stacklevel=6)


def _tris_records(mesh) -> list[dict]:
    """Per primitive of ``mesh``, its ``b3d_tris`` record ({} where none fits)."""
    prims = mesh.primitives
    recs = mesh.extras.get("b3d_tris")
    if not (isinstance(recs, list) and len(recs) == len(prims)
            and all(isinstance(r, dict) and r.get("count") == len(p.positions)
                    for r, p in zip(recs, prims))):
        recs = [{}] * len(prims)
    out = []
    for p, r in zip(prims, recs):
        r = dict(r)
        for key in ("brush", "weights"):
            if f"b3d_{key}" in p.extras:
                r[key] = p.extras[f"b3d_{key}"]
        out.append(r)
    return out


def _bone_weights(scene: Scene) -> dict[int, list[np.ndarray]]:
    """BONE records per joint node, vertex ids into the VRTS the mesh node's primitives make."""
    out: dict[int, list[np.ndarray]] = {}
    for node in scene.nodes:
        if node.skin is None or node.mesh is None:
            continue
        skin = scene.skins[node.skin]
        own = bool((_native(node) or {}).get("bone"))     # the mesh node had a BONE too
        base = 0
        mesh = scene.meshes[node.mesh]
        for p, tris in zip(mesh.primitives, _tris_records(mesh)):
            n = len(p.positions)
            if p.joints is not None:
                v, j, w = _primitive_weights(p, tris.get("weights"), len(skin.joints))
                for slot in distinct(j):
                    if slot == 0 and not own:
                        continue            # B3D: vertices without weights follow the mesh node
                    sel = j == slot
                    rec = np.zeros(int(sel.sum()), BONE_DTYPE)
                    rec["vertex"] = v[sel] + base
                    rec["weight"] = w[sel]
                    out.setdefault(skin.joints[int(slot)], []).append(rec)
            base += n
    return out


def _primitive_weights(p, rec, n_joints: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = len(p.positions)
    ok = p.weights > 0
    v = np.broadcast_to(np.arange(n)[:, None], ok.shape)[ok]
    j, w = p.joints[ok].astype(np.int64), p.weights[ok].astype(np.float32)
    if isinstance(rec, dict) and rec.get("count") == n:
        try:
            rv = np.asarray(rec.get("vertex", []), np.int64)     # (our writer leaves out
            rj = np.asarray(rec.get("joint", []), np.int64)      # empty lists)
            rw = np.asarray(rec.get("weight", []), np.float32)
            if len(rv) == len(rj) == len(rw) and (not len(rv) or (
                    rv.min() >= 0 and rv.max() < n and rj.min() >= 0 and rj.max() < n_joints)):
                keep = ~isin(v, rv)          # the file's own entries for these vertices
                v, j, w = np.r_[v[keep], rv], np.r_[j[keep], rj], np.r_[w[keep], rw]
                zv, zj = _zero_runs(rec.get("zeros"), n, n_joints)
                keep = ~isin(zv, rv)
                v, j = np.r_[v, zv[keep]], np.r_[j, zj[keep]]
                w = np.r_[w, np.zeros(int(keep.sum()), np.float32)]
        except (KeyError, TypeError, ValueError, OverflowError):
            pass
    order = np.argsort(v, kind="stable")
    return v[order], j[order], w[order]


def _zero_runs(runs, n: int, n_joints: int) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and joints of the ``[joint, first, end]`` runs of zero weights (none when the
    record does not fit ``n`` vertices and ``n_joints`` joints)."""
    none = np.zeros(0, np.int64), np.zeros(0, np.int64)
    if not runs:
        return none
    r = np.asarray(runs, np.int64).reshape(-1, 3)
    if (r[:, 0].min() < 0 or r[:, 0].max() >= n_joints or r[:, 1].min() < 0
            or r[:, 2].max() > n or (r[:, 2] < r[:, 1]).any()):
        return none
    lengths = r[:, 2] - r[:, 1]
    j = np.repeat(r[:, 0], lengths)
    v = np.repeat(r[:, 1] - np.r_[0, np.cumsum(lengths)[:-1]], lengths) + np.arange(int(lengths.sum()))
    return v, j


def _held(tracks: dict[str, Track], layout, counts) -> dict[str, Track]:
    """A KEYS chunk of one key (a pose held) that came back as a constant track of many keys
    (Blender's exporter samples such a channel over the whole action) is one key again."""
    counts = xt.integers(counts, len(layout)) if layout else None
    if not counts:
        return tracks
    out = dict(tracks)
    for flags, count in zip(layout, counts):
        if count != 1:
            continue
        for path, t in tracks.items():
            bit = {"translation": 1, "scale": 2, "rotation": 4}.get(path, 0)
            v = t.values
            if bit & flags and len(t.frames) > 1 and np.allclose(
                    v, v[:1], atol=1e-5 * max(1.0, float(np.abs(v).max()))):
                out[path] = Track(t.channel, t.rate, t.offset, t.frames[:1], v[:1])
    return out


_BLENDER_SUFFIX = re.compile(r"\.\d{3,}")


def _file_name(native: dict, name: str) -> str:
    """The NODE's name as the file had it (``native["name"]``, kept when the file has it twice
    or it is longer than Blender's 63 bytes) while ``name`` is that one as Blender renames it
    (``Object03.001``: its objects and bones have names of their own), else ``name``."""
    kept = native.get("name")
    if not isinstance(kept, str) or name == kept:
        return name
    m = _BLENDER_SUFFIX.search(name)
    base = name[:m.start()] if m and m.end() == len(name) else name
    if base == kept or (base and kept.startswith(base) and len(base.encode("utf-8")) >= 60):
        return kept
    return name


class _Writer:
    def __init__(self, scene, tracks, anim_out, bones, brush_of, brush_ids):
        self.scene, self.tracks, self.anim_out, self.bones = scene, tracks, anim_out, bones
        self.brush_of, self.brush_ids = brush_of, brush_ids
        self.keys_kept: list[tuple[list, Any]] = []     # KEYS chunks of a node, its record
        self.keys_of: dict[int, list[Keys]] = {}       # node -> its KEYS chunks
        self.normals_kept: list[tuple[np.ndarray, dict]] = []   # VRTS normals, their record

    def node(self, i: int, depth: int) -> NodeChunk:
        if depth > 200:
            raise DocumentError("node tree deeper than 200")
        node = self.scene.nodes[i]
        native = _native(node) or {}
        kept = kept_trs(native, node, tolerance(self.scene, "trs")) if "trs" in native else None
        pos, scale, rot = kept or node_values(node.translation, node.rotation, node.scale)
        out = NodeChunk((_file_name(native, node.name) or f"node{i}").encode("utf-8"), pos, scale,
                        rot)
        if node.mesh is not None:
            rec = native.get("mesh")
            out.children.append(self.mesh(node, rec if isinstance(rec, dict) else {}))
        if i in self.bones:
            out.children.append(Bone(np.concatenate(self.bones[i])))
        elif native.get("bone"):
            out.children.append(Bone(np.zeros(0, BONE_DTYPE)))
        layout = native.get("keys")
        layout = xt.integers(layout)
        if i in self.tracks or layout:
            keys = keys_chunks(_held(self.tracks.get(i, {}), layout, native.get("nkeys")), layout)
            if "kexact" in native:
                self.keys_kept.append((keys, native["kexact"]))
            self.keys_of[i] = keys
            out.children.extend(keys)
        out.children.extend(self.node(c, depth + 1) for c in node.children)
        anim = self.anim(i)
        if anim is not None:
            out.children.append(anim)
        return out

    def anim(self, i: int) -> AnimChunk | None:
        rec = anim_record(self.scene.nodes[i])
        if i not in self.anim_out:
            return AnimChunk(rec[0], rec[1], rec[2]) if rec else None
        a, rate, last, first = self.anim_out[i]
        flags, frames, out_fps = 0, last - first, rate
        if rec:
            flags, frames = rec[0], rec[1]      # as the file had them (Irrlicht reads neither)
            rec_fps = rec[2]
            if rec_fps <= 0 and np.isclose(rate, animation_rate(a, None, rec_fps)):
                out_fps = rec_fps                   # 0: the engine's default, kept
        return AnimChunk(flags, frames, out_fps)

    def mesh(self, node, rec: dict) -> MeshChunk:
        m = self.scene.meshes[node.mesh]
        tris_recs = [r for p, r in zip(m.primitives, _tris_records(m)) if p.mode == 4]
        prims = [p for p in m.primitives if p.mode == 4]
        vr = xt.integers(rec.get("vrts"), 3)
        n_uv = max((len(p.uvs) for p in prims), default=0)
        if vr is not None and 0 <= vr[1] <= 8 and 0 <= vr[2] <= 4:
            flags, sets, size = vr
        else:
            flags = (1 if any(p.normals is not None for p in prims) else 0) | \
                    (2 if any(p.colors is not None for p in prims) else 0)
            sets, size = min(n_uv, 2), 2 if n_uv else 0
        n = sum(len(p.positions) for p in prims)
        verts = np.zeros(n, vrts_dtype(flags, sets, size))
        mesh = MeshChunk(self.brush_ids.get(xt.integer(rec, "brush", -1), -1))
        base = 0
        lost_uv = False
        for p, tris in zip(prims, tris_recs):
            k = len(p.positions)
            part = verts[base:base + k]
            part["position"] = p.positions * Z
            if flags & 1:
                if p.normals is None:
                    part["normal"] = compute_normals(p.positions, p.indices) * Z
                else:
                    part["normal"] = p.normals * Z
            if flags & 2:
                part["color"] = p.colors if p.colors is not None else 1.0
            self.exact(part, flags, p, tris.get("exact"))
            for s in range(min(sets, len(p.uvs)) if size else 0):     # size 0: no uv field
                part["uv"][:, s, :min(size, 2)] = p.uvs[s][:, :min(size, 2)]
            if sets > 2 or size > 2:
                more = uv_decode(tris.get("uv_more"), k, sets, size)
                if more is not None:
                    part["uv"][:, extra_mask(sets, size)] = more
                else:
                    lost_uv = True
            idx = (p.indices if p.indices is not None else np.arange(k)).astype(np.int64)
            tri = idx.reshape(-1, 3)[:, [0, 2, 1]] + base
            mesh.children += tris_chunks(self.tris_brush(p, xt.integer(tris, "brush"), mesh.brush_id),
                                         tri)
            base += k
        mesh.children.insert(0, Vrts(flags, sets, size, verts))
        _warn_new_count(m, n)
        if lost_uv:
            warnings.warn(f"mesh {m.name!r}: its UV sets beyond the second and components beyond "
                          f"the second ({sets} sets of {size}) no longer fit its vertices "
                          "(edited?); written as 0", LossWarning, stacklevel=6)
        return mesh

    def exact(self, part: np.ndarray, flags: int, p, rec) -> None:
        """The file's normals and colours where the primitive still has what we wrote from them
        (:mod:`.exact`)."""
        if not isinstance(rec, dict):
            return
        if flags & 1 and p.normals is not None and "normal" in rec:
            nrm = part["normal"]
            if isinstance(rec["normal"], dict) and "len" in rec["normal"]:
                self.normals_kept.append((nrm, rec["normal"]))     # (all at once, at the end)
            else:
                restore_rows(nrm, normal_naive, nrm.copy(), rec["normal"],
                             tolerance(self.scene, "normal"), degenerate=True)
        if flags & 2 and "color" in rec:
            col = part["color"]
            naive = (lambda c: np.clip(c, 0, 1)) if p.colors is not None else np.ones_like
            restore_rows(col, naive, col.copy(), rec["color"], tolerance(self.scene, "color"))

    def tris_brush(self, p, rec: int | None, mesh_brush: int) -> int:
        allowed = self.brush_of.get(p.material, []) if p.material is not None else []
        if rec is not None:
            if rec == -1 and (mesh_brush in allowed or (p.material is None and mesh_brush == -1)):
                return -1
            if self.brush_ids.get(rec, -2) in allowed:
                return self.brush_ids[rec]
        return allowed[0] if allowed else -1
