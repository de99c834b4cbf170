"""Small, complete ABC models of every version built with our own writers (no game files).

``build_sample(version)`` returns a native document (v6 or v9..v13) that uses every feature
of its layout: several pieces and LODs, per-corner UVs, vertices with several weights, nested
nodes (some with flag 0x02), weight sets, child models, several animations with keyframe
strings, sockets and anim bindings (v9+); nodes with mesh deformation (vertex animation),
AnimDims and TransformInfo (v6). ``sample_bytes(version)`` is the file.

The family's samples API, alike in every family: :func:`documents` (format name -> a small
complete native document; ``"abc:v6"``, ``"abc:v9"``... the other versions), :data:`WITHOUT_SAMPLE` (none
here) and :func:`write_example` (``model_v12.abc``, ``model_v6.abc``, ``model.lta``, ``model.ltc``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ...binio import Reader
from ...transforms import compose_trs, quat_multiply, world_matrices
from . import abc, abc_v6, dtx_samples, lta, lta_model, ltc
from .abc import (
    CORNER,
    TRANSFORM13,
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
from .abc_v6 import (
    FACE_V6,
    KEY_V6,
    VERTEX_V6,
    AbcV6Model,
    AnimationsV6,
    AnimationV6,
    AnimDimsV6,
    GeometryV6,
    HeaderV6,
    NodesV6,
    NodeV6,
    TrackV6,
    TransformInfoV6,
)
from .common import TRANSFORM, RawSection

__all__ = ["build_sample", "sample_bytes", "SAMPLE_VERSIONS", "documents", "write_example",
           "WITHOUT_SAMPLE"]

#: formats of the family without a sample document, and why
WITHOUT_SAMPLE: dict[str, str] = {}

SAMPLE_VERSIONS = (6, 9, 10, 11, 12, 13)


def _axis_quat(axis, degrees: float) -> np.ndarray:
    axis = np.asarray(axis, float)
    axis = axis / np.linalg.norm(axis)
    h = np.radians(degrees) / 2
    return np.concatenate([axis * np.sin(h), [np.cos(h)]])


# node name, parent, flags, local translation, local rotation (axis, degrees)
_SKELETON = [
    (b"root", -1, 0x01, (0.0, 0.0, 0.0), ((0, 1, 0), 0.0)),
    (b"torso", 0, 0x02, (0.0, 1.0, 0.0), ((0, 1, 0), 10.0)),
    (b"head", 1, 0x02, (0.0, 0.6, 0.05), ((1, 0, 0), -5.0)),
    (b"arm_l", 1, 0x00, (0.3, 0.4, 0.1), ((0, 0, 1), 30.0)),
    (b"hand_l", 3, 0x02, (0.4, 0.0, 0.0), ((0, 1, 0), 15.0)),
    (b"arm_r", 1, 0x00, (-0.3, 0.4, 0.0), ((1, 0, 0), 20.0)),
]


def _skeleton():
    parents = [p for _, p, _, _, _ in _SKELETON]
    t = np.array([s[3] for s in _SKELETON])
    q = np.array([_axis_quat(*s[4]) for s in _SKELETON])
    local = compose_trs(t, q, np.ones((len(t), 3)))
    world = world_matrices(local, parents).astype(np.float32)
    children = [sum(1 for p in parents if p == i) for i in range(len(parents))]
    return parents, t, q, world, children


def _box(center, size, rng_uv: float):
    c = np.asarray(center, float)
    s = np.asarray(size, float) / 2
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    pos = c + corners * s
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    tri_list = []
    for a, b, c_, d in quads:
        tri_list += [(a, b, c_), (a, c_, d)]
    tris = np.array(tri_list)
    # per-corner UVs: each quad maps to the unit square (so shared vertices get several UVs)
    quad_uv = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float) * 0.5 + rng_uv
    uv = np.concatenate([quad_uv[[0, 1, 2]], quad_uv[[0, 2, 3]]] * 6).reshape(-1, 3, 2)
    normals = corners / np.linalg.norm(corners, axis=1, keepdims=True)
    return pos, tris, uv, normals


def _lod(pos, tris, uv, normals, world, weight_nodes, heavy: bool) -> Lod:
    nv = len(pos)
    faces = np.zeros((len(tris), 3), CORNER)
    faces["vertex"] = tris
    faces["uv"] = uv
    verts = np.zeros(nv, VERTEX)
    verts["location"] = pos
    verts["normal"] = normals
    verts["sublod"] = np.arange(nv) % 3
    weights = []
    counts = []
    for i in range(nv):
        k = min(1 + i % 3, len(weight_nodes))
        if heavy and i == 0:
            k = len(weight_nodes)
        nodes = [weight_nodes[(i + j) % len(weight_nodes)] for j in range(k)]
        bias = np.arange(k, 0, -1, dtype=float)
        bias /= bias.sum()
        for node, b in zip(nodes, bias):
            inv = np.linalg.inv(world[node].astype(np.float64))
            loc = (inv @ np.append(pos[i], 1.0))[:3]
            weights.append((node, loc, b))
        counts.append(k)
    verts["weight_count"] = counts
    w = np.zeros(len(weights), WEIGHT)
    w["node"] = [x[0] for x in weights]
    w["location"] = [x[1] for x in weights]
    w["bias"] = [x[2] for x in weights]
    return Lod(faces=faces, vertices=verts, weights=w)


def _build_v9(version: int, heavy: bool) -> AbcModel:
    parents, t, q, world, children = _skeleton()
    nn = len(parents)
    h = HeaderSection(version=version, lod_count=2, command_string=b"Rigid 0 ShadowEnable 1",
                      internal_radius=1.5, lod_distances=np.array([0.0, 50.0], "<f4"),
                      unknown_v13=7 if version >= 13 else None)
    nodes = [Node(name=s[0], index=i, flags=s[2], matrix=world[i].copy(), child_count=children[i])
             for i, s in enumerate(_SKELETON)]
    weight_sets = [WeightSet(name=b"upper", weights=np.array([0, 1, 1, .5, .5, .5], "<f4")),
                   WeightSet(name=b"empty", weights=np.zeros(0, "<f4"))]
    pieces = []
    for pi, (name, center, size, wn) in enumerate([
            (b"body", (0.0, 1.2, 0.0), (0.6, 0.8, 0.3), [1, 3, 5, 4, 0]),
            (b"head", (0.0, 1.8, 0.05), (0.3, 0.3, 0.3), [2, 1])]):
        pos, tris, uv, normals = _box(center, size, 0.25 * pi)
        lod0 = _lod(pos, tris, uv, normals, world, wn, heavy and pi == 0)
        lod1 = _lod(pos, tris[:4], uv[:4], normals, world, wn[:1], False)
        pieces.append(Piece(material_index=pi, specular_power=10.0 * (pi + 1),
                            specular_scale=0.5, lod_weight=1.0 if version > 9 else None,
                            name=name, lods=[lod0, lod1]))
    dt = TRANSFORM13 if version >= 13 else TRANSFORM
    anims = []
    for ai, (name, times, strings, amp) in enumerate([
            (b"idle", [0, 500, 1000], [b"", b"SOUND_KEY step", b""], 20.0),
            (b"wave", [0, 300], [b"FX_KEY spark", b""], 45.0)]):
        tr = np.zeros((nn, len(times)), dt)
        for k in range(len(times)):
            ang = amp * np.sin(k * 1.3 + ai)
            for j in range(nn):
                rot = _axis_quat((0, 0, 1) if j % 2 else (1, 0, 0), ang * (j > 0))
                tr[j, k]["rotation"] = quat_multiply(q[j], rot)
                tr[j, k]["location"] = t[j] + (0.0, 0.05 * k * (j == 0), 0.0)
                if version >= 13:
                    tr[j, k]["extra"] = (0.0, float(k))
        anims.append(Animation(extents=(1.0, 2.0, 0.5), name=name, unknown=-1 if ai else 3,
                               interpolation_ms=(200 + 50 * ai) if version >= 12 else None,
                               key_times=np.array(times, "<u4"), key_strings=list(strings),
                               markers=np.full(nn, -1, "<i4") if version >= 13 else None,
                               transforms=tr))
    cm_dt = TRANSFORM13 if version >= 13 else TRANSFORM
    base = np.zeros(nn, cm_dt)
    base["location"] = t
    base["rotation"] = q
    child_models = [ChildModel(name=b"", build_number=0, transforms=base),
                    ChildModel(name=b"models\\base_anims.abc", build_number=1234,
                               transforms=base.copy())]
    sockets = [Socket(node=2, name=b"Eyes", rotation=(0.0, 0.0, 0.0, 1.0), location=(0.0, 0.1, 0.12)),
               Socket(node=4, name=b"LeftHand", rotation=tuple(map(float, _axis_quat((0, 1, 0), 90))),
                      location=(0.1, 0.0, 0.0))]
    bindings = [AnimBinding(name=a.name, extents=(1.0, 2.0, 0.5), origin=(0.0, 0.0, 0.0))
                for a in anims]
    model = AbcModel(sections=[
        h, PiecesSection(pieces=pieces), NodesSection(nodes=nodes, weight_sets=weight_sets),
        ChildModelsSection(child_models=child_models, extra=version >= 13),
        AnimationSection(animations=anims), SocketsSection(sockets=sockets),
        AnimBindingsSection(bindings=bindings)])
    return abc.recount(model)


def _build_v6(transform_info: bool) -> AbcV6Model:
    # root (null) -> body (triangles) -> flag (deformation); root -> arm (triangles)
    nodes = [
        NodeV6(name=b"root", index=0, flags=1, child_count=2, bounds_min=(-1, 0, -1), bounds_max=(1, 2, 1)),
        NodeV6(name=b"body", index=1, flags=2, child_count=1),
        NodeV6(name=b"flag", index=2, flags=6, child_count=0,
               md_verts=np.array([4, 5, 6, 7], "<u2")),
        NodeV6(name=b"arm", index=3, flags=2, child_count=0),
    ]
    pos, tris, uv, _ = _box((0.0, 0.0, 0.0), (0.5, 0.5, 0.5), 0.0)
    verts = np.zeros(10, VERTEX_V6)
    verts["location"][:8] = pos
    verts["location"][8:] = pos[:2] * 0.5
    verts["normal"][:8] = np.round(pos / np.linalg.norm(pos, axis=1, keepdims=True) * 127)
    verts["node"] = [1, 1, 1, 1, 2, 2, 2, 2, 3, 3]
    verts["replacements"][8:] = [[0, 1], [2, 3]]
    faces = np.zeros(len(tris), FACE_V6)
    faces["vertex"] = tris
    faces["uv"] = uv
    faces["normal"] = [[0, 127, 0]] * len(tris)
    geo = GeometryV6(bounds_min=(-0.25, -0.25, -0.25), bounds_max=(0.25, 0.25, 0.25),
                     vertex_start=np.array([0, 8], "<u2"), faces=faces, normal_vertex_count=8,
                     vertices=verts)
    local_t = [(0, 0, 0), (0, 1, 0), (0, 0.5, 0.2), (0.6, 1.2, 0)]
    anims = []
    for ai, (name, times) in enumerate([(b"run", [0, 100, 200]), (b"die", [0, 400])]):
        keys = np.zeros(len(times), KEY_V6)
        keys["time"] = times
        keys["bounds_min"] = (-1, 0, -1)
        keys["bounds_max"] = (1, 2, 1)
        tracks = []
        for j, nd in enumerate(nodes):
            tr = np.zeros(len(times), TRANSFORM)
            tr["location"] = local_t[j]
            for k in range(len(times)):
                tr[k]["rotation"] = _axis_quat((0, 1, 0), (10.0 * k + 5 * ai) * (j > 0))
            deform = None
            scale, translate = (1.0, 1.0, 1.0), (0.0, 0.0, 0.0)
            if len(nd.md_verts):
                scale, translate = (0.5 / 255, 0.5 / 255, 0.5 / 255), (-0.25, -0.25, -0.25)
                base = np.round((pos[4:8] - translate) / np.array(scale)).clip(0, 255)
                deform = np.repeat(base[None], len(times), 0).astype("u1")
                deform[:, :, 1] = (deform[:, :, 1].astype(int)
                                   + 20 * np.arange(len(times))[:, None]).clip(0, 255)
            tracks.append(TrackV6(transforms=tr, deform=deform, scale=scale, translate=translate))
        anims.append(AnimationV6(name=name, length=times[-1], bounds_min=(-1, 0, -1),
                                 bounds_max=(1, 2, 1), keys=keys,
                                 key_strings=[b"", b"SOUND_KEY squeak"] + [b""] * (len(times) - 2),
                                 tracks=tracks))
    sections = [HeaderV6(token=abc_v6.TOKEN, command_string=b""), geo, NodesV6(nodes=nodes),
                AnimationsV6(animations=anims),
                AnimDimsV6(dims=np.array([[1, 2, 1], [1, 1, 1]], "<f4"))]
    if transform_info:
        sections.append(TransformInfoV6(flip_mat=1, fix_anim_keyframes=1))
    else:
        sections.append(RawSection(name=b"TriStrips", data=b"\x00\x00\x00\x00"))
    model = AbcV6Model(sections=sections)
    return abc_v6.read(_reader(abc_v6.write(model)))


def _reader(data: bytes) -> Reader:
    return Reader(data)


def build_sample(version: int = 12, *, heavy: bool = False, transform_info: bool = True):
    """A complete native ABC document of ``version`` (6, 9, 10, 11, 12 or 13).

    ``heavy`` gives one vertex five weights (to_scene keeps four and warns); ``transform_info``
    (v6) adds a TransformInfo section, else an unknown ``TriStrips`` section is kept raw.
    Values are already rounded to float32 (``read(write(doc)) == doc``)."""
    if version == 6:
        return _build_v6(transform_info)
    if version not in abc.VERSIONS:
        raise ValueError(f"no ABC version {version}")
    model = _build_v9(version, heavy)
    return abc.read(_reader(abc.write(model)))


def sample_bytes(version: int = 12, **kw) -> bytes:
    doc = build_sample(version, **kw)
    return abc_v6.write(doc) if isinstance(doc, AbcV6Model) else abc.write(doc)


def lta_sample() -> bytes:
    """The v12 sample as the LTA text ModelEdit would write of it."""
    return lta.write(lta_model.from_model(build_sample(12)))


def documents() -> dict[str, Any]:
    """Format name -> a small complete native document: v12 as ``"abc"``, every other version
    as ``"abc:v<version>"`` (v6 has its own reader and writer); the DTX textures of every
    layout and a PNG (:mod:`.dtx_samples`); the v12 sample as ``"lta"`` text and ``"ltc"``
    (compressed as the engine compresses it)."""
    text = lta_sample()
    return {"abc": build_sample(12), **{f"abc:v{v}": build_sample(v) for v in SAMPLE_VERSIONS
                                       if v != 12}, **dtx_samples.documents(),
            "lta": lta.parse(text), "ltc": ltc.read(Reader(ltc.compress(text)))}


def write_example(folder: str | Path) -> list[Path]:
    """Write ``model_v12.abc`` and ``model_v6.abc`` into ``folder``, with the skins they wear
    (:func:`.dtx_samples.write_skins`: found beside them, as the games' loaders would), and
    ``model.lta`` and ``model.ltc``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for version in (12, 6):
        path = folder / f"model_v{version}.abc"
        path.write_bytes(sample_bytes(version))
        out.append(path)
    for path, data in ((folder / "model.lta", lta_sample()),
                       (folder / "model.ltc", ltc.compress(lta_sample()))):
        path.write_bytes(data)
        out.append(path)
    return out + dtx_samples.write_skins(folder)
