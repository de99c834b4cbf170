"""An LTA text model as the records of a v9-v13 ``.abc`` model (:class:`~.abc_model.AbcModel`)
and back: what lets ``.lta`` use the ABC scene mapping both ways and ``.abc ⇄ .lta`` convert
without a glTF in between.

Nodes read (names as ModelEdit's ``ltaSave.cpp`` and ``ltaScene.cpp`` in the engine's
``tools/shared/model`` write and read them; a list whose first item is a list, or that is
empty, is a container and is looked through, so ``(anim-bindings ((anim-binding ...)))`` and
``(anim-bindings (anim-binding ...))`` read alike):

====================================  ==========================================================
LTA                                   ABC record
====================================  ==========================================================
``lt-model-0``                        the wrapper (optional: a Maya exporter's file has
                                      ``file-info``, ``hierarchy``... at the top; the top
                                      lists after the wrapper, as ModelEdit's files have an
                                      ``animset`` there, are read too)
``hierarchy`` / ``children`` /        nodes in depth-first order, ``matrix`` the model-space
``transform "n" (matrix ((r0)..(r3)))``  bind matrix (rows); several top transforms get a
                                      ``root`` above them, as ModelEdit does
``on-load-cmds``:                     its commands, in or out of a container:
  ``set-node-flags (("n" f) ...)``    ``Node.flags``
  ``anim-bindings``                   ``AnimBinding`` (``name``, ``dims`` -> extents,
                                      ``translation`` -> origin); ``interp-time`` -> the
                                      animation's ``interpolation_ms``
  ``add-deformer (skel-deformer``     per vertex of the ``target`` shape: ``(node bias ...)``
  ``(target) (influences) (weightsets))``  into ``influences``; weight locations are
                                      ``inverse(node matrix) @ vertex`` (LTA keeps none)
  ``set-command-string``              ``HeaderSection.command_string``
  ``set-global-radius``               ``internal_radius``
  ``lod-groups (create-lod-group``    a piece per group, its LODs the shapes named (``"NULL"``:
  ``"p" (lod-dists) (shapes))``       an empty LOD); ``lod_distances`` from the first group
  ``add-sockets (socket "n" (parent)  ``Socket`` (``scale`` is not in ABC v9-v13)
  ``(pos) (quat) (scale))``
  ``add-childmodels (child-model``    ``ChildModel`` (``node-relations``: its transforms, else
  ``(filename) (save-index))``        the bind pose)
  ``anim-weightsets (anim-weightset`` ``WeightSet``
  ``(name) (weights))``
``shape "n" (geometry (mesh "n"``     a LOD: ``tri-fs`` vertex triples, ``uvs[tex-fs]`` per
``(vertex) (normals) (uvs)``          corner, normals per vertex (``normals[nrm-fs]`` of the
``(tex-fs) (tri-fs))))``              first corner when ``nrm-fs`` is there)
``texture-indices ((i))``,            ``Piece.material_index`` (the first index);
``appearance (pc-mat ...)``           ``specular-power``, ``specular-scale``, ``texture-index``
``animset "n" (keyframe (keyframe``   ``Animation``: key times (ms) and strings, one
``(times) (values))) (anims ((anim``  ``((pos) (quat))`` per key for each node; a node without
``(parent "n") (frames (posquat``     an ``anim`` keeps its bind pose
``(((p)(q)) ...)))) ...)))``
====================================  ==========================================================

Everything else (``tools-info``, ``add-node-obb-list``, ``file-info``, ``colors``,
``renderstyle-index``...) is kept by the text itself (:mod:`.lta`), not here. Numbers must be
decimal (``[+-]digits[.digits][e[+-]digits]``); a bad one is a FormatError with its line and
column.

:func:`from_model` writes a model as ModelEdit does (its node order, ``%.6f`` reals, its
container lists, the LOD shapes named ``<piece>_<n-1>``, every piece a ``create-lod-group``)
through :func:`~.lta.modeledit_text`.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import numpy as np

from ...errors import FormatError, NoSceneError
from ...transforms import decompose_trs
from . import abc as abcmod
from .abc_model import (
    CORNER,
    TRANSFORM,
    VERTEX,
    WEIGHT,
    AbcModel,
    Animation,
    AnimationSection,
    AnimBinding,
    AnimBindingsSection,
    ChildModel,
    ChildModelsSection,
    HeaderSection,
    Lod,
    Node,
    NodesSection,
    Piece,
    PiecesSection,
    Socket,
    SocketsSection,
    WeightSet,
)
from .lta import Lst, LtaFile, kind, line_column, modeledit_text, tree, write as lta_write

__all__ = ["to_model", "from_model"]

_INT = re.compile(rb"[+-]?\d+")
_NUMBER = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class _View:
    """The nested view of a document with typed reads that fail with a line and column."""

    def __init__(self, doc: LtaFile, file: str | None) -> None:
        self.doc, self.file = doc, file
        self.tok = doc.tokens
        self._text: bytes | None = None
        self._offsets: list[int] | None = None

    def fail(self, i: int, expected: str, got: Any = None) -> FormatError:
        if self._text is None:
            self._text = lta_write(self.doc)
            offs, pos = [], 0
            for g, t in zip(self.doc.gaps, self.doc.tokens):
                pos += len(g)
                offs.append(pos)
                pos += len(t)
            self._offsets = offs
        assert self._offsets is not None
        off = self._offsets[i] if 0 <= i < len(self._offsets) else len(self._text)
        line, col = line_column(self._text, off)
        return FormatError(expected, file=self.file, offset=off, path=f"line {line}, column {col}",
                           got=got if got is not None or not 0 <= i < len(self.tok) else self.tok[i][:40])

    def name(self, x: Lst | int) -> bytes | None:
        if isinstance(x, Lst) and x.items and isinstance(x.items[0], int):
            return self.tok[x.items[0]]
        return None

    def entries(self, x: Lst) -> Iterator[Lst]:
        """The lists after a list's name, looking through containers (lists of lists)."""
        stack: list[Iterator[Lst | int]] = [iter(x.items[1:] if self.name(x) else x.items)]
        while stack:
            item = next(stack[-1], None)
            if item is None:
                stack.pop()
            elif isinstance(item, Lst):
                if not item.items or isinstance(item.items[0], Lst):
                    stack.append(iter(item.items))
                else:
                    yield item

    def find(self, x: Lst, name: bytes) -> Lst | None:
        return next((e for e in self.entries(x) if self.name(e) == name), None)

    def all(self, x: Lst, name: bytes) -> list[Lst]:
        return [e for e in self.entries(x) if self.name(e) == name]

    def atoms(self, x: Lst | None, skip_name: bool = True) -> list[int]:
        """The atoms of a list after its name, or of its first inner list of atoms."""
        if x is None:
            return []
        items = x.items[1:] if skip_name and self.name(x) else x.items
        flat = [i for i in items if isinstance(i, int)]
        if flat:
            return flat
        inner = next((i for i in items if isinstance(i, Lst)), None)
        return [i for i in inner.items if isinstance(i, int)] if inner is not None else []

    def text(self, i: int) -> bytes:
        t = self.tok[i]
        return t[1:-1] if t[:1] == b'"' else t

    def value_of(self, x: Lst | None, default: bytes = b"") -> bytes:
        a = self.atoms(x)
        return self.text(a[0]) if a else default

    def real(self, i: int) -> float:
        t = self.tok[i]
        if _NUMBER.fullmatch(t) is None:
            raise self.fail(i, "a decimal number")
        return float(t)

    def integer(self, i: int) -> int:
        t = self.tok[i]
        if _NUMBER.fullmatch(t) is None:
            raise self.fail(i, "a decimal number")
        # the integer part, as the engine's StrToInt reads it ("208.332001" is 208)
        m = _INT.match(t)
        if m is None:
            return 0
        v = int(m.group(0))
        if abs(v) >= 2**63:
            raise self.fail(i, "a whole number of at most 63 bits")
        return v

    def vec(self, idx: list[int], n: int, at: Lst, default: tuple[float, ...]) -> tuple[float, ...]:
        """``n`` numbers as a tuple, ``default`` when there are none."""
        return tuple(float(x) for x in self.floats(idx, n, at)) if idx else default

    def floats(self, idx: list[int], n: int | None = None, at: Lst | None = None) -> np.ndarray:
        if n is not None and len(idx) != n:
            where = at.at if at is not None else (idx[0] if idx else -1)
            raise self.fail(where, f"{n} numbers", f"{len(idx)}")
        return np.array([self.real(i) for i in idx], np.float64)


def _rows_of(v: _View, x: Lst | None, n: int) -> np.ndarray:
    """``(name ((a b c) (a b c) ...))`` -> an (k, n) array (inner lists of atoms only)."""
    if x is None:
        return np.zeros((0, n))
    rows: list[Lst] = []
    stack: list[Iterator[Lst | int]] = [iter(x.items[1:])]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
        elif isinstance(item, Lst):
            if item.items and isinstance(item.items[0], int):
                rows.append(item)
            else:
                stack.append(iter(item.items))
    out = np.zeros((len(rows), n))
    for k, r in enumerate(rows):
        out[k] = v.floats([i for i in r.items if isinstance(i, int)], n, r)
    return out


# -- LTA -> model --------------------------------------------------------------------------
def _top_lists(v: _View) -> list[Lst]:
    out: list[Lst] = []
    for x in tree(v.doc):
        if not isinstance(x, Lst):
            continue
        if v.name(x) == b"lt-model-0":
            out.extend(i for i in x.items[1:] if isinstance(i, Lst))
        else:
            out.append(x)
    return out


def _commands(v: _View, top: list[Lst]) -> list[Lst]:
    cmds: list[Lst] = []
    for x in top:
        if v.name(x) == b"on-load-cmds":
            cmds.extend(v.entries(x))
    return cmds


def _hierarchy(v: _View, top: list[Lst], flags: dict[bytes, int]) -> list[Node]:
    h = next((x for x in top if v.name(x) == b"hierarchy"), None)
    children = v.find(h, b"children") if h is not None else None
    roots = [t for t in v.entries(children) if v.name(t) == b"transform"] if children else []
    nodes: list[Node] = []
    if len(roots) != 1:        # ModelEdit puts a root above several top transforms
        nodes.append(Node(name=b"root", index=0, flags=flags.get(b"root", 0),
                          matrix=np.eye(4, dtype="<f4"), child_count=len(roots)))
    stack = list(reversed(roots))
    while stack:
        t = stack.pop()
        a = [i for i in t.items[1:] if isinstance(i, int)]
        name = v.text(a[0]) if a else b"null"
        m = v.find(t, b"matrix")
        mat = _rows_of(v, m, 4) if m is not None else np.eye(4)
        if len(mat) != 4:
            raise v.fail(m.at if m is not None else t.at, "a matrix of 4 rows", len(mat))
        kids = v.find(t, b"children")
        sub = [c for c in v.entries(kids) if v.name(c) == b"transform"] if kids else []
        nodes.append(Node(name=name, index=len(nodes), flags=flags.get(name, 0),
                          matrix=mat.astype("<f4"), child_count=len(sub)))
        stack.extend(reversed(sub))
    if not nodes:
        nodes.append(Node(name=b"root", index=0, matrix=np.eye(4, dtype="<f4")))
    return nodes


def _node_flags(v: _View, cmds: list[Lst]) -> dict[bytes, int]:
    out: dict[bytes, int] = {}
    for c in cmds:
        if v.name(c) != b"set-node-flags":
            continue
        for pair in c.items[1:]:
            if not isinstance(pair, Lst):
                continue
            lists = [pair] if pair.items and isinstance(pair.items[0], int) else \
                [p for p in pair.items if isinstance(p, Lst)]
            for p in lists:
                a = [i for i in p.items if isinstance(i, int)]
                if len(a) >= 2:
                    out[v.text(a[0])] = v.integer(a[1])
    return out


def _deformers(v: _View, cmds: list[Lst]) -> dict[bytes, tuple[list[bytes], list[list[int]]]]:
    out = {}
    for c in cmds:
        if v.name(c) != b"add-deformer":
            continue
        for sd in v.all(c, b"skel-deformer"):
            target = v.value_of(v.find(sd, b"target"))
            infl = [v.text(i) for i in v.atoms(v.find(sd, b"influences"))]
            ws = v.find(sd, b"weightsets")
            sets: list[list[int]] = []
            if ws is not None:
                stack: list[Iterator[Lst | int]] = [iter(ws.items[1:])]
                while stack:
                    item = next(stack[-1], None)
                    if item is None:
                        stack.pop()
                    elif isinstance(item, Lst):
                        if item.items and isinstance(item.items[0], int) or not item.items and \
                                len(stack) > 1:
                            sets.append([i for i in item.items if isinstance(i, int)])
                        else:
                            stack.append(iter(item.items))
            out[target] = (infl, sets)
    return out


def _shape_lod(v: _View, shape: Lst, nodes: list[Node], mats_inv: np.ndarray,
               deformer: tuple[list[bytes], list[list[int]]] | None) -> Lod:
    geo = v.find(shape, b"geometry")
    mesh = v.find(geo, b"mesh") if geo is not None else None
    if mesh is None:
        return Lod()
    pos = _rows_of(v, v.find(mesh, b"vertex"), 3)
    nrm = _rows_of(v, v.find(mesh, b"normals"), 3)
    uvs = _rows_of(v, v.find(mesh, b"uvs"), 2)
    tri_at = v.find(mesh, b"tri-fs")
    tri = [v.integer(i) for i in v.atoms(tri_at)]
    tex = [v.integer(i) for i in v.atoms(v.find(mesh, b"tex-fs"))]
    nrm_fs = [v.integer(i) for i in v.atoms(v.find(mesh, b"nrm-fs"))]
    nv = len(pos)
    if len(tri) % 3:
        raise v.fail(tri_at.at if tri_at else shape.at, "tri-fs of whole triangles", len(tri))
    tri_a = np.asarray(tri, np.int64).reshape(-1, 3)
    if len(tri_a) and (tri_a.min() < 0 or tri_a.max() >= nv):
        raise v.fail(tri_at.at if tri_at else shape.at, f"vertex indices below {nv}")
    if nv > 0xFFFF:
        raise v.fail(shape.at, "at most 65535 vertices in a shape (ABC indexes them with uint16)", nv)
    faces = np.zeros(tri_a.shape, CORNER)
    faces["vertex"] = tri_a
    if tex and len(tex) == len(tri) and len(uvs):
        t = np.asarray(tex, np.int64)
        if t.min() < 0 or t.max() >= len(uvs):
            raise v.fail(shape.at, f"tex-fs indices below {len(uvs)}")
        faces["uv"] = uvs[t].reshape(-1, 3, 2)
    verts = np.zeros(nv, VERTEX)
    verts["location"] = pos
    if len(nrm) == nv and not nrm_fs:
        verts["normal"] = nrm
    elif nrm_fs and len(nrm_fs) == len(tri) and len(nrm):
        first: dict[int, int] = {}
        for k, vi in enumerate(tri):
            first.setdefault(vi, nrm_fs[k])
        for vi, ni in first.items():
            if 0 <= ni < len(nrm):
                verts["normal"][vi] = nrm[ni]
    w_node: list[int] = []
    w_bias: list[float] = []
    counts = np.ones(nv, np.int64)
    if deformer is not None and len(deformer[1]) == nv:
        infl, sets = deformer
        index = {n.name: i for i, n in enumerate(nodes)}
        for vi, s in enumerate(sets):
            if len(s) % 2:
                raise v.fail(s[0] if s else shape.at, "node index and weight pairs")
            counts[vi] = len(s) // 2
            for k in range(0, len(s), 2):
                j = v.integer(s[k])
                if not 0 <= j < len(infl) or infl[j] not in index:
                    raise v.fail(s[k], f"an influence index below {len(infl)} naming a node")
                w_node.append(index[infl[j]])
                w_bias.append(v.real(s[k + 1]))
    else:
        w_node = [0] * nv
        w_bias = [1.0] * nv
    if counts.max(initial=0) > 0xFFFF:
        raise v.fail(shape.at, "at most 65535 weights a vertex")
    verts["weight_count"] = counts
    weights = np.zeros(len(w_node), WEIGHT)
    if len(w_node):
        wn = np.asarray(w_node)
        owner = np.repeat(np.arange(nv), counts)
        p4 = np.concatenate([pos[owner], np.ones((len(owner), 1))], 1)
        weights["node"] = wn
        weights["location"] = np.einsum("nij,nj->ni", mats_inv[wn], p4)[:, :3]
        weights["bias"] = w_bias
    return Lod(faces=faces, vertices=verts, weights=weights)


def _pieces(v: _View, top: list[Lst], cmds: list[Lst], nodes: list[Node]) -> tuple[list[Piece], list[float]]:
    shapes = {v.value_of(s): s for s in top if v.name(s) == b"shape"}
    defs = _deformers(v, cmds)
    with np.errstate(all="ignore"):
        mats = np.stack([np.asarray(n.matrix, np.float64) for n in nodes])
        inv = np.linalg.pinv(mats)
    groups: list[tuple[bytes, list[bytes], list[float]]] = []
    for c in cmds:
        if v.name(c) == b"lod-groups":
            for g in v.all(c, b"create-lod-group"):
                names = [v.text(i) for i in v.atoms(v.find(g, b"shapes"))]
                dists = [v.real(i) for i in v.atoms(v.find(g, b"lod-dists"))]
                groups.append((v.value_of(g), names, dists))
    grouped = {n for _, names, _ in groups for n in names}
    groups += [(n, [n], [0.0]) for n in shapes if n not in grouped]
    pieces = []
    for name, names, _ in groups:
        lods = [_shape_lod(v, shapes[s], nodes, inv, defs.get(s)) if s in shapes else Lod()
                for s in names] or [Lod()]
        first = shapes.get(names[0]) if names else None
        pieces.append(Piece(name=name, lods=lods, **_appearance(v, first)))
    n = max((len(p.lods) for p in pieces), default=1)
    for p in pieces:            # ABC: every piece has the header's LOD count
        while len(p.lods) < n:
            p.lods.append(p.lods[-1])
    dists = groups[0][2] if groups else [0.0]
    dists = (dists + [dists[-1] if dists else 0.0] * n)[:n]
    return pieces, dists


def _appearance(v: _View, shape: Lst | None) -> dict[str, Any]:
    out: dict[str, Any] = {"material_index": 0, "specular_power": 0.0, "specular_scale": 1.0,
                           "lod_weight": 1.0}
    if shape is None:
        return out
    ti = v.atoms(v.find(shape, b"texture-indices"))
    if ti:
        out["material_index"] = v.integer(ti[0])
    app = v.find(shape, b"appearance")
    pc = v.find(app, b"pc-mat") if app is not None else None
    if pc is not None:
        for key, field_, conv in ((b"specular-power", "specular_power", v.real),
                                  (b"specular-scale", "specular_scale", v.real),
                                  (b"texture-index", "material_index", v.integer)):
            a = v.atoms(v.find(pc, key))
            if a:
                out[field_] = conv(a[0])
    return out


def _bind_locals(nodes: list[Node]) -> np.ndarray:
    parents = _parents(nodes)
    mats = np.stack([np.asarray(n.matrix, np.float64) for n in nodes])
    with np.errstate(all="ignore"):
        inv = np.linalg.pinv(mats)
    local = np.stack([mats[i] if p < 0 else inv[p] @ mats[i] for i, p in enumerate(parents)])
    t, q, _ = decompose_trs(local)
    base = np.zeros(len(nodes), TRANSFORM)
    base["location"] = t
    base["rotation"] = q
    return base


def _parents(nodes: list[Node]) -> list[int]:
    parents: list[int] = []
    stack: list[list[int]] = []         # [node, children still to come]
    for i, n in enumerate(nodes):
        parents.append(stack[-1][0] if stack else -1)
        if stack:
            stack[-1][1] -= 1
            if stack[-1][1] == 0:
                stack.pop()
        if n.child_count:
            stack.append([i, n.child_count])
        while stack and stack[-1][1] <= 0:
            stack.pop()
    return parents


def _animations(v: _View, top: list[Lst], nodes: list[Node], base: np.ndarray,
                bindings: dict[bytes, tuple[Lst, int | None]]) -> list[Animation]:
    index = {n.name: i for i, n in enumerate(nodes)}
    out = []
    for s in top:
        if v.name(s) != b"animset":
            continue
        name = v.value_of(s)
        kf = v.find(s, b"keyframe")
        kf = v.find(kf, b"keyframe") or kf if kf is not None else None
        times = [v.integer(i) for i in v.atoms(v.find(kf, b"times"))] if kf is not None else []
        strings = [v.text(i) for i in v.atoms(v.find(kf, b"values"))] if kf is not None else []
        strings = (strings + [b""] * len(times))[:len(times)]
        if any(t < 0 or t > 0xFFFFFFFF for t in times):
            raise v.fail(kf.at if kf is not None else s.at, "key times in 0..4294967295 ms")
        tr = np.repeat(base[:, None], len(times), 1)
        anims = v.find(s, b"anims")
        for a in (v.all(anims, b"anim") if anims is not None else []):
            j = index.get(v.value_of(v.find(a, b"parent")))
            frames = v.find(a, b"frames")
            pq = v.find(frames, b"posquat") if frames is not None else None
            if j is None or pq is None:
                continue
            keys = _key_pairs(pq)
            if len(keys) != len(times):
                raise v.fail(pq.at, f"{len(times)} keys (one per key time)", len(keys))
            for k, (p, q) in enumerate(keys):
                tr[j, k]["location"] = v.floats([i for i in p.items if isinstance(i, int)], 3, p)
                tr[j, k]["rotation"] = v.floats([i for i in q.items if isinstance(i, int)], 4, q)
        b = bindings.get(name)
        dims: tuple[float, ...] = (0.0, 0.0, 0.0)
        interp: int | None = 200
        if b is not None:
            bl, interp_ = b
            d = v.atoms(v.find(bl, b"dims"))
            if len(d) == 3:
                dims = tuple(float(x) for x in v.floats(d))
            interp = interp_ if interp_ is not None else 200
        out.append(Animation(extents=tuple(float(np.float32(x)) for x in dims), name=name,
                             unknown=-1, interpolation_ms=interp,
                             key_times=np.asarray(times, "<u4"), key_strings=strings,
                             transforms=tr))
    return out


def _key_pairs(pq: Lst) -> list[tuple[Lst, Lst]]:
    """The ``((pos) (quat))`` pairs of a ``posquat`` list (containers looked through)."""
    out: list[tuple[Lst, Lst]] = []
    stack: list[Iterator[Lst | int]] = [iter(pq.items[1:])]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
        elif isinstance(item, Lst):
            inner = [i for i in item.items if isinstance(i, Lst)]
            if len(inner) == 2 and len(inner) == len(item.items) and \
                    all(x.items and isinstance(x.items[0], int) for x in inner):
                out.append((inner[0], inner[1]))
            else:
                stack.append(iter(item.items))
    return out


def _bindings(v: _View, cmds: list[Lst]) -> tuple[list[AnimBinding], dict[bytes, tuple[Lst, int | None]]]:
    out: list[AnimBinding] = []
    by_name: dict[bytes, tuple[Lst, int | None]] = {}
    for c in cmds:
        if v.name(c) != b"anim-bindings":
            continue
        for b in v.all(c, b"anim-binding"):
            name = v.value_of(v.find(b, b"name"))
            d = v.atoms(v.find(b, b"dims"))
            t = v.atoms(v.find(b, b"translation"))
            it = v.atoms(v.find(b, b"interp-time"))
            out.append(AnimBinding(name=name, extents=v.vec(d, 3, b, (0.0, 0.0, 0.0)),
                                   origin=v.vec(t, 3, b, (0.0, 0.0, 0.0))))
            by_name.setdefault(name, (b, v.integer(it[0]) if it else None))
    return out, by_name


def _others(v: _View, cmds: list[Lst], nodes: list[Node], base: np.ndarray):
    index = {n.name: i for i, n in enumerate(nodes)}
    sockets, weight_sets = [], []
    child_models = [ChildModel(name=b"", build_number=0, transforms=base.copy())]
    command, radius = b"", 0.0
    for c in cmds:
        nm = v.name(c)
        if nm == b"set-command-string":
            command = v.value_of(c)
        elif nm == b"set-global-radius":
            a = v.atoms(c)
            radius = v.real(a[0]) if a else 0.0
        elif nm == b"add-sockets":
            for s in v.all(c, b"socket"):
                par = v.value_of(v.find(s, b"parent"))
                if par not in index:
                    raise v.fail(s.at, "a socket parent naming a node", par)
                p = v.atoms(v.find(s, b"pos"))
                q = v.atoms(v.find(s, b"quat"))
                sockets.append(Socket(node=index[par], name=v.value_of(s),
                                      location=v.vec(p, 3, s, (0.0, 0.0, 0.0)),
                                      rotation=v.vec(q, 4, s, (0.0, 0.0, 0.0, 1.0))))
        elif nm == b"add-childmodels":
            for cm in v.all(c, b"child-model"):
                t = base.copy()
                rel = v.find(cm, b"node-relations")
                if rel is not None:
                    pairs = [(v.find(r, b"pos"), v.find(r, b"quat")) for r in _plain_lists(rel)]
                    for k, (pl, ql) in enumerate(pairs[:len(t)]):
                        if pl is not None:
                            t[k]["location"] = v.floats(v.atoms(pl), 3, pl)
                        if ql is not None:
                            t[k]["rotation"] = v.floats(v.atoms(ql), 4, ql)
                sv = v.atoms(v.find(cm, b"save-index"))
                child_models.append(ChildModel(name=v.value_of(v.find(cm, b"filename")),
                                               build_number=v.integer(sv[0]) & 0xFFFFFFFF if sv else 0,
                                               transforms=t))
        elif nm in (b"anim-weightsets", b"add-animweightsets"):
            for w in v.all(c, b"anim-weightset"):
                vals = v.atoms(v.find(w, b"weights"))
                weight_sets.append(WeightSet(name=v.value_of(v.find(w, b"name")),
                                             weights=v.floats(vals).astype("<f4")))
    return sockets, weight_sets, child_models, command, radius


def _plain_lists(rel: Lst) -> list[Lst]:
    """The unnamed lists of a ``node-relations`` container: one ``((pos ..) (quat ..))`` each."""
    inner = [i for i in rel.items[1:] if isinstance(i, Lst)]
    if len(inner) == 1 and all(isinstance(x, Lst) and not (x.items and isinstance(x.items[0], int))
                               for x in inner[0].items):
        inner = [i for i in inner[0].items if isinstance(i, Lst)]
    return inner


def to_model(doc: LtaFile, file: str | None = None, version: int = 12) -> AbcModel:
    """The ABC model an LTA text describes (see the module docstring)."""
    what = kind(doc)
    if what != "model":
        raise NoSceneError(
            "a model (lt-model-0): this LTA text holds no geometry (info, dump and check read "
            "it; it converts to nothing)", file=file, got=f"a {what}")
    v = _View(doc, file)
    top = _top_lists(v)
    cmds = _commands(v, top)
    nodes = _hierarchy(v, top, _node_flags(v, cmds))
    pieces, dists = _pieces(v, top, cmds, nodes)
    base = _bind_locals(nodes)
    bindings, by_name = _bindings(v, cmds)
    anims = _animations(v, top, nodes, base, by_name)
    sockets, weight_sets, child_models, command, radius = _others(v, cmds, nodes, base)
    h = HeaderSection(version=version, lod_count=max(1, len(dists)), command_string=command,
                      internal_radius=radius, lod_distances=np.asarray(dists, "<f4"))
    model = AbcModel(sections=[
        h, PiecesSection(pieces=pieces), NodesSection(nodes=nodes, weight_sets=weight_sets),
        ChildModelsSection(child_models=child_models), AnimationSection(animations=anims),
        SocketsSection(sockets=sockets), AnimBindingsSection(bindings=bindings)])
    return abcmod.recount(model)


# -- model -> LTA --------------------------------------------------------------------------
def _s(b: bytes) -> bytes:
    """A string token (LTA strings have no escapes: a quote inside becomes ')."""
    return b'"' + bytes(b).replace(b'"', b"'") + b'"'


def _f(values) -> list[float]:
    return [float(x) for x in np.asarray(values, np.float64).reshape(-1)]


def _hierarchy_tree(model: AbcModel) -> tuple[list, list]:
    nodes = model.nodes
    flags: list = []
    stack: list[tuple[list, int]] = []   # (children container, children left)
    top: list = []
    for n in nodes:
        m = np.asarray(n.matrix, np.float64).reshape(4, 4)
        t = [b"transform", _s(n.name), [b"matrix", [_f(r) for r in m]]]
        flags.append([_s(n.name), int(n.flags)])
        (stack[-1][0] if stack else top).append(t)
        if stack:
            stack[-1] = (stack[-1][0], stack[-1][1] - 1)
        if n.child_count:
            kids: list = []
            t.append([b"children", kids])
            stack.append((kids, n.child_count))
        while stack and stack[-1][1] <= 0:
            stack.pop()
    return top, flags


def _shape(name: bytes, lod: Lod, piece: Piece) -> list:
    faces = np.asarray(lod.faces)
    verts = np.asarray(lod.vertices)
    uv = faces["uv"].reshape(-1, 2) if len(faces) else np.zeros((0, 2))
    n = len(uv)
    mesh = [b"mesh", _s(name),
            [b"vertex", [_f(p) for p in verts["location"]]],
            [b"normals", [_f(p) for p in verts["normal"]]],
            [b"uvs", [_f(p) for p in uv]],
            [b"tex-fs", list(range(n))],
            [b"tri-fs", [int(x) for x in faces["vertex"].reshape(-1)]]]
    return [b"shape", _s(name), [b"geometry", mesh],
            [b"texture-indices", [int(piece.material_index)]],
            [b"renderstyle-index", 0], [b"render-priority", 0]]


def _deformer(name: bytes, lod: Lod, model: AbcModel) -> list:
    verts = np.asarray(lod.vertices)
    w = np.asarray(lod.weights)
    sets, k = [], 0
    for c in verts["weight_count"]:
        row: list = []
        for j in range(k, k + int(c)):
            row += [int(w["node"][j]), float(w["bias"][j])]
        sets.append(row)
        k += int(c)
    return [b"add-deformer", [b"skel-deformer", [b"target", _s(name)],
                              [b"influences", [_s(n.name) for n in model.nodes]],
                              [b"weightsets", sets]]]


def _lod_name(piece: Piece, i: int) -> bytes:
    return piece.name if i == 0 else piece.name + b"_%d" % (i - 1)


def from_model(model: AbcModel) -> LtaFile:
    """New LTA text of a v9-v13 ABC model, laid out and ordered as ModelEdit writes it."""
    h = model.header
    nodes = model.nodes
    interp = {a.name: a.interpolation_ms for a in model.animations}
    cmds: list = []
    if model.animations or model.anim_bindings:
        cmds.append([b"anim-bindings", [
            [b"anim-binding", [b"name", _s(b.name)], [b"dims", _f(b.extents)],
             [b"translation", _f(b.origin)], [b"interp-time", int(interp.get(b.name) or 0)]]
            for b in model.anim_bindings]])
    hier, flags = _hierarchy_tree(model)
    cmds.append([b"set-node-flags", flags])
    cmds.append([b"set-command-string", _s(h.command_string)])
    dists = _f(h.lod_distances)
    groups = []
    for p in model.pieces:
        d = (dists + [dists[-1] if dists else 0.0] * len(p.lods))[:len(p.lods)]
        groups.append([b"create-lod-group", _s(p.name),
                       [b"lod-dists", d],
                       [b"shapes", [_s(_lod_name(p, i)) if len(lod.vertices) else b'"NULL"'
                                    for i, lod in enumerate(p.lods)]]])
    cmds.append([b"lod-groups", groups])
    cmds.append([b"set-global-radius", float(h.internal_radius)])
    # ModelEdit lists an oriented box for every node (its defaults when none was set)
    cmds.append([b"add-node-obb-list", [
        [b"add-node-obb", _s(n.name), [b"position", [0.0, 0.0, 0.0]],
         [b"orientation", [0.0, 0.0, 0.0, 1.0]], [b"dimensions", [1.0, 1.0, 1.0]],
         [b"enabled", b"false"]] for n in nodes]])
    if model.sockets:
        cmds.append([b"add-sockets", [
            [b"socket", _s(s.name), [b"parent", _s(nodes[s.node].name if s.node < len(nodes) else b"")],
             [b"pos", _f(s.location)], [b"quat", _f(s.rotation)], [b"scale", [1.0, 1.0, 1.0]]]
            for s in model.sockets]])
    if len(model.child_models) > 1:
        cms = []
        for c in model.child_models[1:]:
            t = np.asarray(c.transforms)
            cm = [b"child-model", [b"filename", _s(c.name)], [b"save-index", int(c.build_number)]]
            if len(t) and (np.any(t["location"] != 0) or np.any(t["rotation"] != 0)):
                cm.append([b"node-relations", [[[b"pos", _f(x["location"])],
                                                [b"quat", _f(x["rotation"])]] for x in t]])
            cms.append(cm)
        cmds.append([b"add-childmodels", cms])
    if model.weight_sets:
        cmds.append([b"anim-weightsets", [
            [b"anim-weightset", [b"name", _s(w.name)], [b"weights", _f(w.weights)]]
            for w in model.weight_sets]])
    shapes = []
    for p in model.pieces:
        for i, lod in enumerate(p.lods):
            if len(lod.vertices) == 0:
                continue
            shapes.append(_shape(_lod_name(p, i), lod, p))
            cmds.append(_deformer(_lod_name(p, i), lod, model))
    body: list = [b"lt-model-0", [b"on-load-cmds", cmds], [b"hierarchy", [b"children", hier]]]
    body += shapes
    for a in model.animations:
        tr = np.asarray(a.transforms)
        keys = [b"keyframe", [b"keyframe", [b"times", [int(t) for t in a.key_times]],
                              [b"values", [_s(s) for s in a.key_strings]]]]
        anims = [[b"anim", [b"parent", _s(n.name)],
                  [b"frames", [b"posquat", [[_f(tr[j, k]["location"]), _f(tr[j, k]["rotation"])]
                                            for k in range(tr.shape[1])]]]]
                 for j, n in enumerate(nodes) if j < tr.shape[0]]
        body.append([b"animset", _s(a.name), keys, [b"anims", anims]])
    return modeledit_text([body])
