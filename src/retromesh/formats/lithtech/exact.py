"""The byte-exact record of a v9..v13 ``.abc`` (scene extra ``abc_rows``; issue 32,
docs/lossless.md "LithTech").

Most of a file comes back from the glTF values bit for bit: vertex locations, UVs and faces
(sign flips), names, flags and what rides in extras. What the writer computes in floats comes
back a rounding off, and a few layout facts another exporter chose are not in the glTF. The
record holds only those, in the model's own terms, computed in numpy from the file's values
and what the writer will compute from the GLB (:func:`keep`; the writer is not run):

* per field, the rows the writer will not give bit for bit: node bind matrices, the model's
  own child-model transforms, each LOD's weights (node, location, bias: a weight location is
  ``inverse(bind) @ vertex``) and normals, each animation's keys (read off the channels, as
  the writer reads them), sockets. A row is kept as its index, the XOR that makes the row
  written the row read, and a check byte of the row written
  (:func:`_check`): :func:`put_back` puts a row back only where the
  writer writes what it wrote from the GLB as made, so an edited row (or one an edit moved) is
  the writer's, as without a record;
* layout: section order, sections we do not parse, the bytes after a section's content,
  the header's padding and the counts another exporter gave otherwise than the content (each
  put back while the content counts what it counted), piece ``unknown`` values, v13 markers and
  the v13 child-model layout.

:func:`keep` returns None when the writer will lay the model out otherwise (a vertex no face
uses, more than 4 weights or a zero weight on a vertex, several node trees, dropped keys):
then ``scene.py`` keeps the whole-file record (``abc_exact``) where that is small.
"""
from __future__ import annotations

import base64
import dataclasses
from typing import Any

import numpy as np

from ... import geometry, restore
from ...scene import Scene
from ...transforms import compose_trs, decompose_trs, quat_normalize
from .abc import (
    TRANSFORM,
    WEIGHT,
    AbcModel,
    AnimBindingsSection,
    ChildModelsSection,
    HeaderSection,
    NodesSection,
    PiecesSection,
    recount,
)
from .abc_model import COUNT_FIELDS
from .common import RawSection
from .scene_common import S3, S4, SQ, tree_parents, weight_locations

__all__ = ["KEY", "keep", "put_back"]

#: the scene extra of the record
KEY = "abc_rows"
#: the section order the writer gives
_WRITTEN = ("HeaderSection", "PiecesSection", "NodesSection", "ChildModelsSection",
            "AnimationSection", "SocketsSection", "AnimBindingsSection")


# -- rows ---------------------------------------------------------------------------------------

def _words(a: np.ndarray) -> np.ndarray:
    """Rows of 4-byte values (a record array or float32 rows) as (n, width) uint32."""
    a = np.ascontiguousarray(a)
    return a.view(np.uint32).reshape(len(a), -1) if a.size else np.zeros((len(a), 0), np.uint32)


#: the multipliers of :func:`_check` (odd 32-bit numbers, one per column)
_MIX = (np.arange(1, 33, dtype=np.uint32) * np.uint32(0x9E3779B9)) | np.uint32(1)


def _hash(words: np.ndarray) -> np.ndarray:
    """A 32-bit hash per row of uint32 words, in a few numpy passes whatever the width."""
    # long fields column by column (a sum along the short axis cost numpy six times as much;
    # on a few rows the calls cost more); uint32 arithmetic wraps, so the order of the
    # additions does not change the bits
    if len(words) < 1024 or not words.shape[1]:
        h = (words * _MIX[:words.shape[1]]).sum(axis=1, dtype=np.uint32)
    else:
        h = words[:, 0] * _MIX[0]
        t = np.empty_like(h)
        for c in range(1, words.shape[1]):
            np.multiply(words[:, c], _MIX[c], out=t)
            h += t
    h ^= h >> np.uint32(15)
    h *= np.uint32(0x2C1B3C6D)
    return h


def _byte(h: np.ndarray) -> np.ndarray:
    return (h >> np.uint32(24)).astype(np.uint8)


def _check(words: np.ndarray) -> np.ndarray:
    """One byte per row of uint32 words: an edited row changes it with probability 255/256."""
    return _byte(_hash(words))


@dataclasses.dataclass
class _Rows:
    """A field's rows kept: ``n`` rows in all, those at ``at``, the XOR that makes each row
    written the row read, and one check byte of each row written."""
    n: int
    at: np.ndarray
    xor: np.ndarray             # (len(at), width) uint32
    check: np.ndarray           # (len(at),) uint8


def _keep_rows(was: np.ndarray, pred: np.ndarray) -> _Rows | None:
    """The rows of ``was`` that ``pred`` (what the writer will write) does not give; None when
    all come back."""
    a, b = _words(was), _words(pred)
    if a.shape != b.shape:
        return None
    return _xor_rows(a ^ b, b)


def _xor_rows(x: np.ndarray, b: np.ndarray) -> _Rows | None:
    """:func:`_keep_rows` of the XOR ``x`` of the rows read and the rows written ``b``."""
    rows = np.flatnonzero(_any_rows(x))
    if not len(rows):
        return None
    check = _check(np.take(b, rows, 0))     # (one gathered copy alive at a time)
    return _Rows(len(x), rows, np.take(x, rows, 0), check)


def _any_rows(x: np.ndarray) -> np.ndarray:
    """Whether each row of (n, width) words has a bit set: OR column by column (``any`` along
    a short axis, and a row gather with ``[]``, cost numpy several times more)."""
    out = np.zeros(len(x), np.uint32)
    for c in range(x.shape[1]):
        out |= x[:, c]
    return out != 0


def _pack(fields: dict[str, _Rows]) -> dict[str, Any]:
    """The fields' rows as one zlib stream (row numbers, then XORs, then check bytes: like
    with like, so that it deflates well; of the XORs only the columns where one is not 0) and
    its index ``[name, rows, kept, width, columns kept (bit mask)]``."""
    order = sorted(fields)
    cols = {k: _columns_set(fields[k].xor) for k in order}
    # every field's row numbers in one pass, each list's steps from 0 (as one list each)
    ats = [fields[k].at for k in order]
    restart = np.zeros(sum(len(a) for a in ats), bool)
    restart[_starts(np.array([len(a) for a in ats], np.int64))[[len(a) > 0 for a in ats]]] = True
    parts = [restore.steps(np.concatenate(ats), restart=restart)]
    parts += [np.ascontiguousarray(fields[k].xor[:, cols[k]]).astype("<u4").tobytes()
              for k in order]
    parts += [fields[k].check.tobytes() for k in order]
    return {"index": [[k, fields[k].n, len(fields[k].at), fields[k].xor.shape[1],
                       int(sum(1 << int(c) for c in cols[k]))] for k in order],
            "data": restore.pack_bytes(b"".join(parts))}


def _columns_set(x: np.ndarray) -> np.ndarray:
    """The columns of (n, width) words where a row has a bit set (a reduction along the long
    axis costs numpy several times a pass per column, but on a few rows the calls cost more)."""
    if len(x) < 512:
        return np.flatnonzero(np.bitwise_or.reduce(x, axis=0))
    return np.flatnonzero([x[:, c].any() for c in range(x.shape[1])])


def _unpack(rec: dict[str, Any]) -> dict[str, _Rows]:
    """:func:`_pack`'s fields; none for a record that does not fit."""
    index = rec.get("index")
    if not isinstance(index, list) or not all(
            isinstance(e, list) and len(e) == 5 and isinstance(e[0], str) and
            all(type(x) is int and 0 <= x < 1 << 28 for x in e[1:4]) and
            type(e[4]) is int and 0 <= e[4] < 1 << e[3] for e in index):
        return {}
    cols = [[c for c in range(w) if m >> c & 1] for _, _, _, w, m in index]
    size = sum(e[2] * (5 + 4 * len(c)) for e, c in zip(index, cols))
    raw = restore.unpack_bytes(rec.get("data"), size + 1)
    if raw is None or len(raw) != size:
        return {}
    out = {}
    pos = [0, 4 * sum(e[2] for e in index), 0]
    pos[2] = pos[1] + 4 * sum(e[2] * len(c) for e, c in zip(index, cols))
    for (name, n, c, w, _), kc in zip(index, cols):
        at = restore.from_steps(raw[pos[0]:pos[0] + 4 * c])
        xor = np.zeros((c, w), np.uint32)
        xor[:, kc] = np.frombuffer(raw[pos[1]:pos[1] + 4 * c * len(kc)], "<u4").reshape(c, len(kc))
        chk = np.frombuffer(raw[pos[2]:pos[2] + c], np.uint8)
        pos = [pos[0] + 4 * c, pos[1] + 4 * c * len(kc), pos[2] + c]
        if at is not None and c and at.min() >= 0 and at.max() < n:
            out[name] = _Rows(n, at, xor, chk)
    return out


def _put_rows(words: np.ndarray, rows: _Rows | None) -> int:
    """The rows kept put back in ``words`` ((n, width) uint32, in place) where the row written
    has the check byte of the row predicted. Returns how many."""
    if rows is None or words.shape != (rows.n, rows.xor.shape[1]):
        return 0
    cur = words[rows.at]
    ok = _check(cur) == rows.check
    words[rows.at[ok]] = cur[ok] ^ rows.xor[ok]
    return int(ok.sum())


def _put_field(arr: np.ndarray, rows: _Rows | None) -> np.ndarray:
    """``arr`` (rows of 4-byte values) with the rows kept put back (a copy)."""
    out = np.ascontiguousarray(arr).copy()
    if rows is not None and out.size:
        _put_rows(out.view(np.uint32).reshape(len(out), -1), rows)
    return out


def _section(model: AbcModel, cls: type) -> Any:
    return next((s for s in model.sections if isinstance(s, cls)), None)


# -- what the writer computes from the GLB --------------------------------------------------------

def _ibm_inverse(scene: Scene, n: int) -> np.ndarray | None:
    """The inverse of the inverse bind matrices the GLB holds (float64 of float32): the writer
    makes the nodes' bind matrices (file space) of their rigid part, ``S rigid(this) S``."""
    if len(scene.skins) != 1 or scene.skins[0].inverse_bind_matrices is None:
        return None
    ibm = np.asarray(scene.skins[0].inverse_bind_matrices, np.float32).astype(np.float64)
    return np.linalg.inv(ibm) if len(ibm) == n else None


def _joined(arrays: list) -> np.ndarray:
    """The arrays end to end (the one array itself, not a copy, when there is one)."""
    return np.asarray(arrays[0]) if len(arrays) == 1 else _cat([np.asarray(a) for a in arrays])


def _cat(arrays: list[np.ndarray]) -> np.ndarray:
    """``np.concatenate`` of 1-D record arrays of one dtype, as their bytes (numpy promotes
    the fields of record arrays it concatenates, field by field: most of the cost)."""
    dt = arrays[0].dtype
    if dt.names is None or any(a.dtype != dt or a.ndim != 1 for a in arrays):
        return np.concatenate(arrays)
    raw = np.concatenate([np.ascontiguousarray(a).view(np.uint8).reshape(len(a), dt.itemsize)
                          for a in arrays])
    return raw.view(dt).reshape(-1)


def _starts(counts: np.ndarray) -> np.ndarray:
    return np.cumsum(counts) - counts


def _lod_rows(all_lods: list, kept: list, normals_gl: list, inv_bind: np.ndarray
              ) -> tuple[_Rows | None, _Rows | None, dict | None] | None:
    """The rows of every LOD's weights and normals (all LODs in one pass, in file order), and
    the weights of the vertices whose weights the writer lays out otherwise (more than 4, a
    zero weight, a node named twice: :func:`_keep_lists`); None when a vertex no face uses
    leaves the writer's vertices another list."""
    verts = _joined([lod.vertices for lod in all_lods])
    wts = _joined([lod.weights for lod in all_lods])
    nv = [len(lod.vertices) for lod in all_lods]
    off = np.cumsum([0] + nv[:-1])
    src = np.concatenate([k[0] + o for k, o in zip(kept, off)])
    used = np.zeros(len(verts), bool)
    used[src] = True
    if not used.all():
        return None
    jh, wh, _ = geometry.gltf_weights(np.concatenate([k[1] for k in kept]),
                                      np.concatenate([k[2] for k in kept]))
    w = wh.astype(np.float64)
    w /= geometry.row_sum64(w)[:, None]           # (w.sum(1)'s additions, without its cost)
    mask = w > 0
    # (the flat positions once, gathered by np.take: a boolean mask per array cost more)
    flat = np.flatnonzero(mask)
    owner = flat // mask.shape[1]
    wnode = np.take(jh.reshape(-1), flat).astype(np.int64)
    # the positions the writer reads back: the GLB's float32 of location * S3, times S3 again,
    # which are the file's float32 values (sign flips are exact; weight_locations takes
    # float32 exactly, as the writer's float64 copy)
    fpos = verts["location"]
    # the writer's weights as words (node, location, bias: float32 rows, the node's bits)
    pred = np.empty((len(owner), 5), np.float32)
    pred[:, 4] = np.take(w.reshape(-1), flat)
    pred.view(np.uint32)[:, 0] = wnode
    counts = mask[:, 0].astype(np.int64)
    for c in range(1, mask.shape[1]):
        counts += mask[:, c]
    # (what is no longer needed goes before the next big temporaries: a big model's fresh
    # temporaries cost page faults, and its peak is what the allocator maps again for the
    # next model)
    del jh, wh, w, mask, flat
    pred[:, 1:4] = weight_locations(inv_bind, wnode, np.take(fpos, owner, 0))
    pred = pred.view(np.uint32)
    del wnode
    file_counts = verts["weight_count"].astype(np.int64)
    if np.array_equal(counts, file_counts):
        rec_w, lists = _keep_rows(_words(wts), pred), None
    else:
        rec_w, lists = _keep_lists(_words(wts), pred, counts, file_counts, owner)
    if any(x is None for x in normals_gl):
        return rec_w, None, lists
    first = np.empty(len(verts), np.int64)
    first[src[::-1]] = np.arange(len(src))[::-1]
    held = geometry.unit_rows(np.take(np.concatenate(normals_gl), first, 0)).astype(np.float64)
    if np.einsum("ij,ij->i", held, held).min(initial=1.0) <= 1e-24:
        return rec_w, None, lists   # (the GLB holds normals of the faces there)
    ln = np.linalg.norm(held, axis=1, keepdims=True)
    if (ln > 1e-12).all():          # (the same values as below, without its temporaries)
        nrm = held / ln
        nrm *= S3
    else:
        nrm = np.where(ln > 1e-12, held / np.where(ln > 1e-12, ln, 1.0), 0.0) * S3
    return rec_w, _keep_rows(np.ascontiguousarray(verts["normal"]), nrm.astype(np.float32)), lists


def _keep_lists(wts: np.ndarray, pred: np.ndarray, counts: np.ndarray, file_counts: np.ndarray,
                owner: np.ndarray) -> tuple[_Rows | None, dict]:
    """Where vertices have other numbers of weights in the file than the writer writes: the
    rows of the others (aligned with the writer's), and the file's weights of those vertices
    with one check byte of the weights the writer writes there."""
    odd = counts != file_counts
    ps, fs = _starts(counts), _starts(file_counts)
    was = pred.copy()
    r = np.flatnonzero(~odd[owner])
    o = owner[r]
    # (rows moved as one 20-byte item each: a 2-D gather and scatter cost several times more)
    _items(was)[r] = np.take(_items(wts), fs[o] + r - ps[o])
    del r, o
    v = np.flatnonzero(odd)
    rows = np.repeat(fs[v] - _starts(file_counts[v]), file_counts[v]) + np.arange(file_counts[v].sum())
    was ^= pred                 # (the XOR in place of the copy: one big array less)
    return _xor_rows(was, pred), {
        "at": restore.pack_ints(v), "count": restore.pack_bytes(file_counts[v].astype("<u2").tobytes()),
        "rows": restore.pack_bytes(np.take(wts, rows, 0).astype("<u4").tobytes()),
        "check": base64.b64encode(_list_checks(pred, counts, v).tobytes()).decode("ascii")}


def _items(words: np.ndarray) -> np.ndarray:
    """(n, width) contiguous uint32 rows as n items of ``4 * width`` bytes (a view)."""
    return words.view(np.dtype((np.void, 4 * words.shape[1]))).reshape(len(words))


def _list_checks(rows: np.ndarray, counts: np.ndarray, v: np.ndarray) -> np.ndarray:
    """One check byte per vertex ``v`` (every vertex has a row): the sum of the hashes of its
    ``rows`` (``counts`` per vertex, one after the other)."""
    at = np.repeat(_starts(counts)[v] - _starts(counts[v]), counts[v]) + np.arange(counts[v].sum())
    return _byte(np.add.reduceat(_hash(np.take(rows, at, 0)), _starts(counts[v])))


def _key_rows(doc: AbcModel, scene: Scene) -> _Rows | None | bool:
    """The rows of every animation's keys (one after the other; False: the writer lays them
    out otherwise)."""
    n = len(doc.nodes)
    t, r, was = [], [], []
    for a, anim in zip(doc.animations, scene.animations):
        tr = np.asarray(a.transforms)
        k = tr.shape[1] if tr.ndim == 2 else 0
        tch = [c.values for c in anim.channels if c.path == "translation"]
        rch = [c.values for c in anim.channels if c.path == "rotation"]
        if len(tch) != n or len(rch) != n or any(len(v) != k for v in tch + rch):
            return False
        t += tch
        r += rch
        was.append(tr.reshape(-1))
    if not was:
        return None
    was_all = _cat(was)
    pred = np.zeros(len(was_all), was_all.dtype)
    pred["location"] = np.concatenate(t).astype(np.float64) * S3
    pred["rotation"] = quat_normalize(geometry.unit_rows(
        np.concatenate(r), fallback=(0.0, 0.0, 0.0, 1.0)).astype(np.float64) * SQ)
    return _keep_rows(was_all, pred)


def _socket_rows(scene: Scene, doc: AbcModel) -> _Rows | None:
    socks = [i for i, nd in enumerate(scene.nodes) if nd.extras.get("abc_socket")]
    if not socks:
        return None
    nodes = [scene.nodes[i] for i in socks]
    (t, r, _), _ = geometry.gltf_node_trs(np.array([nd.translation for nd in nodes]),
                                          np.array([nd.rotation for nd in nodes]),
                                          np.ones((len(nodes), 3)))
    pred = np.concatenate([quat_normalize(r) * SQ, t * S3], 1).astype(np.float32)
    was = np.array([tuple(s.rotation) + tuple(s.location) for s in doc.sockets], np.float32)
    return _keep_rows(was.reshape(len(nodes), 7), pred) if len(was) == len(nodes) else None


def _layout(doc: AbcModel) -> dict[str, Any]:
    out: dict[str, Any] = {}
    names = [type(s).__name__ for s in doc.sections]
    if tuple(names) != _WRITTEN:
        out["order"] = [f"raw:{base64.b64encode(s.name).decode('ascii')}"
                        if isinstance(s, RawSection) else type(s).__name__ for s in doc.sections]
        raw = {str(i): base64.b64encode(s.data).decode("ascii")
               for i, s in enumerate(doc.sections) if isinstance(s, RawSection)}
        if raw:
            out["raw"] = raw
    gaps = {str(i): base64.b64encode(s.gap).decode("ascii") for i, s in enumerate(doc.sections)
            if getattr(s, "gap", b"")}
    if gaps:
        out["gaps"] = gaps
    h = doc.header
    if h.padding != bytes(60):
        out["padding"] = base64.b64encode(h.padding).decode("ascii")
    ref = recount(AbcModel(sections=[dataclasses.replace(h), *(
        dataclasses.replace(s) if isinstance(s, PiecesSection) else s for s in doc.sections
        if not isinstance(s, HeaderSection))])).header
    counts = {f: [getattr(h, f), getattr(ref, f)] for f in (*COUNT_FIELDS, "string_count",
              "string_length_total") if getattr(h, f) != getattr(ref, f)}
    ps = _section(doc, PiecesSection)
    if ps is not None and ps.weight_count != ref.weight_count:
        counts["pieces_weight_count"] = [ps.weight_count, ref.weight_count]
    if counts:
        out["counts"] = counts
    unknown = [p.unknown for p in doc.pieces]
    if any(unknown):
        out["piece_unknown"] = unknown
    ns = _section(doc, NodesSection)
    if ns is not None and ns.weight_sets is None:
        out["no_weight_sets"] = True
    if not doc.anim_bindings and doc.animations:
        out["no_bindings"] = True       # (an empty list: a glTF's JSON leaves it out)
    cs = _section(doc, ChildModelsSection)
    if doc.version >= 13 and cs is not None and not cs.extra:
        out["child_extra"] = False
    markers = [np.asarray(a.markers).tolist() for a in doc.animations]
    if doc.version >= 13 and any(m is None or any(x != -1 for x in m) for m in markers):
        out["markers"] = markers
    return out


def keep(scene: Scene, doc: AbcModel, lods: list) -> dict[str, Any] | None:
    """The record of ``doc`` (read as ``scene``, whose LODs gave ``lods``: see
    :func:`.scene_read.to_scene_v9`; empty when everything comes back); None when the writer
    lays the model out otherwise."""
    n = len(doc.nodes)
    parents, missing = tree_parents([nd.child_count for nd in doc.nodes])
    ibm_inv = _ibm_inverse(scene, n) if n else None
    all_lods = [lod for p in doc.pieces for lod in p.lods]
    if ibm_inv is None or missing or parents.count(-1) != 1 or \
            len(scene.animations) != len(doc.animations) or any(x is None for x in lods) or \
            len(all_lods) != len(lods) or len(scene.meshes) < len(lods):
        return None
    # the writer puts the file's bind matrices back first (:func:`binds_put_back`) and places
    # the weights by them
    bind_file = np.stack([np.asarray(nd.matrix, np.float32).reshape(4, 4) for nd in doc.nodes]
                         ).astype(np.float64)
    inv_bind = np.linalg.inv(bind_file)
    fields: dict[str, Any] = {}
    got = _lod_rows(all_lods, lods, [m.primitives[0].normals for m in scene.meshes[:len(lods)]],
                    inv_bind) if all_lods else (None, None, None)
    keys = _key_rows(doc, scene)
    if got is None or keys is False:
        return None
    fields["w"], fields["n"], lists = got
    fields["k"] = keys
    # the model's own child-model transforms are its bind pose, parent-relative; decomposed
    # with the bind matrices in one call (row by row the same values)
    child = bool(doc.child_models) and len(doc.child_models[0].transforms) == n
    stack = [ibm_inv]
    if child:
        inv_par = inv_bind[np.maximum(parents, 0)]
        inv_par[np.asarray(parents) < 0] = np.eye(4)
        stack.append(inv_par @ bind_file)
    t, q, _ = decompose_trs(np.concatenate(stack) if child else ibm_inv)
    made = S4 @ compose_trs(t[:n], q[:n], np.ones_like(t[:n])) @ S4      # (rigid: scene_common)
    fields["m"] = _keep_rows(bind_file.astype(np.float32).reshape(n, 16),
                             made.astype(np.float32).reshape(n, 16))
    if child:
        base = np.asarray(doc.child_models[0].transforms)
        pred = np.zeros(n, base.dtype)
        pred["location"], pred["rotation"] = t[n:], q[n:]
        fields["c"] = _keep_rows(base, pred)
    fields["s"] = _socket_rows(scene, doc)
    kept_rows = {k: v for k, v in fields.items() if isinstance(v, _Rows)}
    rec: dict[str, Any] = _pack(kept_rows) if kept_rows else {}
    if lists is not None:
        rec["lists"] = lists
    layout = _layout(doc)
    if layout:
        rec["layout"] = layout
    return rec


# -- on the way back ------------------------------------------------------------------------------

@dataclasses.dataclass
class Kept:
    """A record as read from a scene's extras (:func:`read`)."""
    rec: dict[str, Any]
    rows: dict[str, _Rows]

    def binds(self, bind_file: np.ndarray) -> np.ndarray:
        """The bind matrices the writer made ((n, 4, 4) float64) with the file's put back where
        it made what it made from the GLB as made (from_scene_v9's ``kept_binds``)."""
        words = bind_file.astype(np.float32).reshape(len(bind_file), 16).view(np.uint32).copy()
        _put_rows(words, self.rows.get("m"))
        return words.view(np.float32).reshape(-1, 4, 4).astype(np.float64)


def read(rec: Any) -> Kept | None:
    """The record of a scene's extras, None for anything else."""
    return Kept(rec, _unpack(rec)) if isinstance(rec, dict) else None


def put_back(model: AbcModel, kept: Kept) -> AbcModel:
    """``model`` (what the writer wrote, with ``kept.binds``) with the record's rows and
    layout put back where the writer wrote what it wrote from the GLB as made (in place;
    returns it)."""
    rec, rows = kept.rec, kept.rows
    lay: dict[str, Any] = rec["layout"] if isinstance(rec.get("layout"), dict) else {}
    cs = _section(model, ChildModelsSection)
    if cs is not None and lay.get("child_extra") is False and cs.extra:
        cs.extra = False
        for cm in cs.child_models:
            t = np.asarray(cm.transforms)
            cm.transforms = np.ascontiguousarray(t[["location", "rotation"]]).astype(TRANSFORM)
    if cs is not None and cs.child_models and "c" in rows:
        cs.child_models[0].transforms = _put_field(cs.child_models[0].transforms, rows["c"])
    lods = [lod for p in model.pieces for lod in p.lods]
    if lods and "w" in rows:
        got = _put_field(np.concatenate([np.asarray(lod.weights) for lod in lods]), rows["w"])
        for lod, part in zip(lods, np.split(got, np.cumsum([len(lod.weights) for lod in lods])[:-1])):
            lod.weights = part
    if lods and isinstance(rec.get("lists"), dict):
        _put_lists(lods, rec["lists"])
    if lods and "n" in rows:
        verts = [np.array(lod.vertices) for lod in lods]
        got = _put_field(np.concatenate([v["normal"] for v in verts]), rows["n"])
        for lod, v, part in zip(lods, verts, np.split(got, np.cumsum([len(v) for v in verts])[:-1])):
            v["normal"] = part
            lod.vertices = v
    anims = model.animations
    if anims and "k" in rows:
        trs = [np.asarray(a.transforms) for a in anims]
        if len({t.dtype for t in trs}) == 1:
            got = _put_field(np.concatenate([t.reshape(-1) for t in trs]), rows["k"])
            for a, t, part in zip(anims, trs, np.split(got, np.cumsum([t.size for t in trs])[:-1])):
                a.transforms = part.reshape(t.shape)
    socks = model.sockets
    if socks and "s" in rows:
        got = _put_field(np.array([tuple(s.rotation) + tuple(s.location) for s in socks],
                                  np.float32), rows["s"])
        for s, row in zip(socks, got.tolist()):
            s.rotation, s.location = tuple(row[:4]), tuple(row[4:])
    if lods and isinstance(rec.get("lists"), dict):
        recount(model)              # (weights put back: the counts the writer made are off)
    if lay:
        _put_layout(model, lay)
    return model


def _put_lists(lods: list, rec: dict[str, Any]) -> None:
    """:func:`_keep_lists`' vertices given the file's weights where the writer wrote the
    weights it wrote from the GLB as made (in place: the LODs' weights and weight counts)."""
    verts = [np.array(lod.vertices) for lod in lods]
    counts = np.concatenate([v["weight_count"] for v in verts]).astype(np.int64)
    wts = np.concatenate([np.asarray(lod.weights) for lod in lods])
    v = restore.unpack_ints(rec.get("at"))
    raw = [restore.unpack_bytes(rec.get("count"), 2 * len(counts) + 1),
           restore.from_base64(rec.get("check"))]
    if v is None or raw[0] is None or raw[1] is None or len(raw[0]) != 2 * len(v) or \
            len(raw[1]) != len(v) or not len(v) or v.min() < 0 or v.max() >= len(counts) or \
            counts.sum() != len(wts):
        return
    file_counts = np.frombuffer(raw[0], "<u2").astype(np.int64)
    rows = restore.unpack_bytes(rec.get("rows"), 20 * int(file_counts.sum()) + 1)
    if rows is None or len(rows) != 20 * int(file_counts.sum()):
        return
    if (counts[v] <= 0).any():
        return
    ok = _list_checks(_words(wts), counts, v) == np.frombuffer(raw[1], np.uint8)
    new_counts = counts.copy()
    new_counts[v[ok]] = file_counts[ok]
    # each new row: from the file's rows kept (a vertex put back) or the writer's
    slot = np.full(len(counts), -1)
    slot[v[ok]] = _starts(file_counts)[ok]
    n_owner = np.repeat(np.arange(len(counts)), new_counts)
    rank = np.arange(len(n_owner)) - _starts(new_counts)[n_owner]
    from_file = slot[n_owner] >= 0
    src = np.where(from_file, len(wts) + slot[n_owner] + rank, _starts(counts)[n_owner] + rank)
    allrows = np.concatenate([wts, np.frombuffer(rows, WEIGHT)])[src]
    at_w, at_v = 0, 0
    for lod, vv in zip(lods, verts):
        c = new_counts[at_v:at_v + len(vv)]
        vv["weight_count"] = c
        lod.vertices = vv
        lod.weights = allrows[at_w:at_w + int(c.sum())]
        at_v, at_w = at_v + len(vv), at_w + int(c.sum())


def _put_layout(model: AbcModel, lay: dict[str, Any]) -> None:
    h = model.header
    counts = lay.get("counts")
    ps = _section(model, PiecesSection)
    for f, pair in (counts.items() if isinstance(counts, dict) else ()):
        where = ps if f == "pieces_weight_count" else h
        name = "weight_count" if f == "pieces_weight_count" else f
        if f in (*COUNT_FIELDS, "string_count", "string_length_total", "pieces_weight_count") and \
                where is not None and isinstance(pair, list) and len(pair) == 2 and \
                getattr(where, name) == pair[1] and isinstance(pair[0], int):
            setattr(where, name, pair[0])
    pad = restore.from_base64(lay.get("padding"))
    if pad is not None and len(pad) == 60:
        h.padding = pad
    unknown = lay.get("piece_unknown")
    if isinstance(unknown, list) and len(unknown) == len(model.pieces):
        for p, u in zip(model.pieces, unknown):
            if isinstance(u, int):
                p.unknown = u
    ns = _section(model, NodesSection)
    if lay.get("no_weight_sets") and ns is not None and not ns.weight_sets:
        ns.weight_sets = None
    bs = _section(model, AnimBindingsSection)
    if lay.get("no_bindings") and bs is not None and \
            [b.name for b in bs.bindings] == [a.name for a in model.animations]:
        bs.bindings = []                # (the writer's default: one per animation)
    markers = lay.get("markers")
    if isinstance(markers, list) and len(markers) == len(model.animations):
        for a, m in zip(model.animations, markers):
            if a.markers is not None and np.all(np.asarray(a.markers) == -1) and \
                    (m is None or (isinstance(m, list) and len(m) == len(a.markers))):
                a.markers = None if m is None else np.asarray(m, "<i4")
    order = lay.get("order")
    if isinstance(order, list):
        raw = lay.get("raw")
        _reorder(model, order, raw if isinstance(raw, dict) else {})
    gaps = lay.get("gaps")
    for i, g in (gaps.items() if isinstance(gaps, dict) else ()):
        b = restore.from_base64(g)
        at = int(i) if str(i).isdigit() else -1
        if b is not None and 0 <= at < len(model.sections) and \
                hasattr(model.sections[at], "gap"):
            model.sections[at].gap = b


def _reorder(model: AbcModel, order: list, raw: dict) -> None:
    """The sections in the file's order, with the sections we do not parse where they were (a
    section the writer made and the file did not have stays, at the end, unless empty)."""
    left = list(model.sections)
    out: list[Any] = []
    for i, name in enumerate(order):
        if isinstance(name, str) and name.startswith("raw:"):
            nm, data = restore.from_base64(name[4:]), restore.from_base64(raw.get(str(i)))
            if nm is None or data is None:
                return
            out.append(RawSection(name=nm, data=data))
            continue
        sec = next((s for s in left if type(s).__name__ == name), None)
        if sec is None:
            return
        left.remove(sec)
        out.append(sec)
    out += [s for s in left if any(getattr(s, f, None) for f in ("sockets", "bindings",
                                                                  "animations", "child_models"))]
    model.sections[:] = out
