"""The NODE records (issue 32; see :mod:`.exact` for the others): what ``node.extras["b3d"]``
keeps of a NODE that glTF does not give back, ``order``, the kinds of its child chunks in file
order when they are not in the order the writer uses (an ANIM before the child NODEs), and
``trs``, the file's 10 floats when the plain way back would not give them back bit for bit;
all nodes of a model in one numpy pass (:func:`node_records`)."""
from __future__ import annotations

import base64
import math
import re
import struct
from typing import Any

import numpy as np

from ...restore import from_base64, same_floats
from .axes import Z
from .chunks import AnimChunk, Bone, Keys, MeshChunk, NodeChunk, RawChunk

__all__ = ["node_records", "node_trs", "node_values", "kept_trs", "recorded_gltf_trs", "reorder"]

_KIND = {MeshChunk: "M", Bone: "B", Keys: "K", NodeChunk: "N", AnimChunk: "A", RawChunk: "R"}
#: child kinds in the order the writer puts them (unknown chunks anywhere: put back in place)
_WRITER_ORDER = re.compile("[MR]*[BR]*[KR]*[NR]*[AR]*")


def _kinds(children: list) -> str:
    return "".join(_KIND.get(type(c), "R") for c in children)


def _as_written(t: list[float], r: list[float], s: list[float]) -> tuple[list, list, list]:
    """A node's glTF TRS as our glTF writer writes it and the reader reads it back (plain
    floats: numpy per node costs more than the whole node): values near the default left out
    (``gltf/writer._near``: np.allclose's tolerance), the rotation unit."""
    if all(abs(v) <= 1e-8 for v in t):
        t = [0.0, 0.0, 0.0]
    if all(abs(v) <= 1e-8 for v in r[:3]) and abs(r[3] - 1.0) <= 1e-8 + 1e-5:
        r = [0.0, 0.0, 0.0, 1.0]
    else:
        n = math.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3])
        r = [v / n for v in r] if n > 0 else r
    if all(abs(v - 1.0) <= 1e-8 + 1e-5 for v in s):
        s = [1.0, 1.0, 1.0]
    return t, r, s


def _gltf_trs(f: list[float]) -> tuple[list, list, list]:
    """The glTF TRS to_scene makes of a NODE's floats (position, scale, rotation w x y z)."""
    w, x, y, z = f[6:10]
    n = math.sqrt(x * x + y * y + z * z + w * w)
    r = [x / n, y / n, -z / n, w / n] if n > 1e-12 else [0.0, 0.0, 0.0, 1.0]
    return [f[0], f[1], -f[2]], r, list(f[3:6])


def node_values(t, r, s) -> tuple[tuple, tuple, tuple]:
    """A node's glTF TRS as NODE floats (zeros written +0.0: a zero's sign glTF may not keep)."""
    t, r, s = (np.asarray(v, np.float64).tolist() for v in (t, r, s))
    f = np.array([t[0] + 0.0, t[1] + 0.0, -t[2] + 0.0, s[0] + 0.0, s[1] + 0.0, s[2] + 0.0,
                  r[3] + 0.0, r[0] + 0.0, r[1] + 0.0, -r[2] + 0.0], np.float32).tolist()
    return tuple(f[0:3]), tuple(f[3:6]), tuple(f[6:10])


def node_trs(f: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The glTF translations, rotations and scales (float64) of NODEs whose position, scale,
    rotation (w, x, y, z) are the rows of ``f`` (n, 10): every node in one pass, the values
    of ``* Z`` and :func:`.axes.rot_to_gltf`'s one-rotation path bit for bit (the same float64
    operations in the same order: ``x / n, y / n, -z / n, w / n``, ``-(z / n)`` being the same
    value)."""
    t = f[:, 0:3] * Z
    sq = f[:, 6:10] * f[:, 6:10]
    n = sq[:, 1] + sq[:, 2]
    n += sq[:, 3]
    n += sq[:, 0]
    np.sqrt(n, out=n)
    ok = n > 1e-12
    with np.errstate(all="ignore"):
        r = f[:, _XYZW] / np.where(ok, n, 1.0)[:, None]
    r[:, 2] = -r[:, 2]
    r[~ok] = (0.0, 0.0, 0.0, 1.0)
    return t, r, f[:, 3:6].copy()


#: NODE floats (position, scale, rotation w x y z): the rotation's columns in glTF order
_XYZW = [7, 8, 9, 6]
#: a NODE's floats as to_scene's glTF TRS (:func:`_naive_nodes`): what the writer leaves out
#: (``np.allclose`` to the default: translation 0, scale 1, rotation x y z 0, w 1)
_DEFAULT = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0])
_NEAR = np.array([1e-8] * 3 + [1e-8 + 1e-5] * 3 + [1e-8] * 3 + [1e-8 + 1e-5])


def _naive_nodes(t: np.ndarray, r: np.ndarray, s: np.ndarray) -> np.ndarray:
    """(n, 10) NODE floats as the plain way back gives them from to_scene's glTF TRS
    (:func:`node_trs`): as our glTF writer writes them (``_as_written``, row by row: values
    near the default left out, the rotation unit), as from_scene writes them
    (``node_values``: across the Z mirror, zeros +0.0), in one array."""
    back = np.concatenate([t, s, r], axis=1)
    near = np.abs(back - _DEFAULT) <= _NEAR
    near = np.logical_and.reduceat(near, _GROUPS, axis=1)     # t, s, r x y z, r w
    n2 = np.sqrt(np.einsum("ij,ij->i", r, r))          # as the writer sums them
    back[:, 2] = -back[:, 2]
    back[near[:, 0], 0:3] = 0.0
    back[near[:, 1], 3:6] = 1.0
    np.divide(r[:, _WXYZ], np.where(n2 > 0, n2, 1.0)[:, None], out=back[:, 6:10])
    back[:, 9] = -back[:, 9]
    back[near[:, 2] & near[:, 3], 6:10] = (1.0, 0.0, 0.0, 0.0)
    back += 0.0
    return back.astype(np.float32)


#: :func:`_naive_nodes`' groups of columns
_GROUPS = [0, 3, 6, 9]
#: glTF rotation columns (x, y, z, w) in NODE order (w, x, y, z)
_WXYZ = [3, 0, 1, 2]

#: :func:`_child_order` of each sequence of child types met (a model repeats a few)
_ORDER_OF: dict[tuple, str | None] = {}


def _child_order(children: list) -> str | None:
    """The kinds of ``children`` when they are not in the writer's order, else None."""
    key = tuple(map(type, children))
    try:
        return _ORDER_OF[key]
    except KeyError:
        kinds = "".join([_KIND.get(k, "R") for k in key])
        got = None if _WRITER_ORDER.fullmatch(kinds) else kinds
        if len(_ORDER_OF) < 4096:
            _ORDER_OF[key] = got
        return got


def node_records(nodes: list[NodeChunk], f: np.ndarray | None = None,
                 trs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> dict[int, dict]:
    """id of each NODE -> what ``node.extras["b3d"]`` needs besides the glTF node to give it
    back (``order``, ``trs``), all nodes in one numpy pass (``f``: their position, scale,
    rotation as float32 rows, ``trs``: :func:`node_trs` of them, when the caller has them)."""
    out: dict[int, dict] = {}
    if not nodes:
        return out
    if f is None:
        f = np.array([(*c.position, *c.scale, *c.rotation) for c in nodes], np.float32)
    naive = _naive_nodes(*(trs if trs is not None else node_trs(f.astype(np.float64))))
    # the rows that do not come back, and those with a scale: Blender's bones have none (its
    # rest drops it; :mod:`.restscale`); one mask (np.union1d sorts: it cost more than the rest)
    u = f.view(np.uint32)
    keep = np.flatnonzero((u != naive.view(np.uint32)).any(axis=1)
                          | (np.abs(f[:, 3:6] - 1.0) > 1e-5).any(axis=1))
    for c in nodes:
        kinds = _child_order(c.children)
        if kinds is not None:
            out[id(c)] = {"order": kinds}
    # (40 bytes each: pack_words' plain base64, every row's bytes taken at once)
    raw = np.ascontiguousarray(f[keep], "<f4").tobytes()
    b64 = base64.b64encode
    for i, k in enumerate(keep.tolist()):
        out.setdefault(id(nodes[k]), {})["trs"] = b64(raw[40 * i:40 * i + 40]).decode("ascii")
    return out


def kept_trs(native: dict, node, tol: float) -> tuple[tuple, tuple, tuple] | None:
    """The NODE's kept position, scale, rotation when ``node`` still has what we wrote."""
    raw = from_base64(native.get("trs"))
    if raw is None or len(raw) != 40:
        return None
    f = list(struct.unpack("<10f", raw))
    t, r, s = _as_written(*_gltf_trs(f))
    got_r = node.rotation.tolist()
    if not (same_floats(node.translation.tolist(), t, tol)
            and same_floats(node.scale.tolist(), s, tol)
            and (same_floats(got_r, r, tol) or same_floats([-v for v in got_r], r, tol))):
        return None
    return tuple(f[0:3]), tuple(f[3:6]), tuple(f[6:10])


def recorded_gltf_trs(native: dict) -> tuple[list, list, list] | None:
    """The glTF translation, rotation, scale we wrote from the NODE's kept floats (``trs``),
    None when there are none."""
    raw = from_base64(native.get("trs"))
    if raw is None or len(raw) != 40:
        return None
    return _as_written(*_gltf_trs(list(struct.unpack("<10f", raw))))


def reorder(children: list, order: Any) -> list:
    """``children`` in the recorded order of kinds, when they are still those kinds."""
    if not isinstance(order, str) or sorted(order) != sorted(_kinds(children)):
        return children
    by_kind: dict[str, list] = {}
    for c in children:
        by_kind.setdefault(_KIND.get(type(c), "R"), []).append(c)
    return [by_kind[k].pop(0) for k in order]
