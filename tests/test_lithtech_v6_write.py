"""Nothing lost for LithTech ABC v6 (Shogo, Blood 2): ``.abc v6 -> .glb -> .abc``
comes back as v6 with the same counts and content (nodes, vertices, faces, LOD vertices,
animations, vertex animation, AnimDims, sections), also after a Blender-like round trip;
``version=6`` writes any scene as v6; edits come through."""
from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import retromesh
from conftest import ROOT, corpus_params
from helpers.gltfcheck import assert_valid
from helpers.roundtrip import differences
from retromesh import LossWarning
from retromesh.binio import Reader
from retromesh.formats import lithtech
from retromesh.formats.lithtech import abc_v6, samples
from retromesh.formats.lithtech.common import RawSection
from test_lithtech_roundtrip import blenderish

V6 = ROOT / "examples" / "lithtech" / "model_v6.abc"


def _quat_mat(q: np.ndarray) -> np.ndarray:
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def engine_v6(doc: abc_v6.AbcV6Model, anim: int, key: int) -> np.ndarray:
    """Where the engine puts each full-detail vertex at a key (file space): the node's world
    transform from the parent-relative keys, MD vertices from their bytes."""
    ti = doc.transform_info
    fix = ti.fix_anim_keyframes if ti is not None else 1
    a = doc.animations[anim]
    parents, _ = lithtech.scene.tree_parents([n.child_count for n in doc.nodes])
    world = []
    for j, tk in enumerate(a.tracks):
        q = np.asarray(tk.transforms["rotation"][key], np.float64)
        if fix:
            q = q * [-1, -1, -1, 1]
        m = np.eye(4)
        m[:3, :3] = _quat_mat(q / np.linalg.norm(q))
        m[:3, 3] = tk.transforms["location"][key]
        world.append(m if parents[j] < 0 else world[parents[j]] @ m)
    g = doc.geometry
    v = np.asarray(g.vertices)[:g.normal_vertex_count]
    local = v["location"].astype(np.float64)
    for j, nd in enumerate(doc.nodes):
        if len(nd.md_verts):
            tk = a.tracks[j]
            local[nd.md_verts] = tk.deform[key] * np.asarray(tk.scale) + np.asarray(tk.translate)
    w = np.stack(world)[v["node"].astype(np.int64)]
    return np.einsum("nij,nj->ni", w, np.concatenate([local, np.ones((len(v), 1))], 1))[:, :3]


def summary(doc: abc_v6.AbcV6Model) -> dict:
    def r(x, n=4):
        return [round(float(v), n) + 0.0 for v in np.asarray(x, np.float64).reshape(-1)]
    g = doc.geometry
    out = {f"info.{k}": v for k, v in lithtech.info(doc).items()}
    out.update({
        "sections": [s.name if isinstance(s, RawSection) else type(s).__name__ for s in doc.sections],
        "raw": [s.data for s in doc.sections if isinstance(s, RawSection)],
        "command": doc.header.command_string,
        "nodes": [(n.name, n.index, n.flags, n.child_count, list(map(int, n.md_verts)),
                   r(n.bounds_min), r(n.bounds_max)) for n in doc.nodes],
        "geometry": (r(g.bounds_min), r(g.bounds_max), list(map(int, g.vertex_start)),
                     int(g.normal_vertex_count)),
        "vertices": (r(g.vertices["location"]), g.vertices["normal"].tolist(),
                     g.vertices["node"].tolist(), g.vertices["replacements"].tolist()),
        "faces": (g.faces["vertex"].tolist(), r(g.faces["uv"])),
        "animations": [(a.name, a.length, r(a.bounds_min), r(a.bounds_max), a.keys["time"].tolist(),
                        r(a.keys["bounds_min"]), r(a.keys["bounds_max"]), a.key_strings)
                       for a in doc.animations],
        "dims": [r(s.dims) for s in doc.sections if isinstance(s, abc_v6.AnimDimsV6)],
        "transform_info": [(s.flip_mat, s.fix_anim_keyframes) for s in doc.sections
                           if isinstance(s, abc_v6.TransformInfoV6)],
    })
    return out


def assert_same_motion(doc, back, atol=1e-3):
    for ai, a in enumerate(doc.animations):
        for k in range(len(a.keys)):
            assert np.abs(engine_v6(doc, ai, k) - engine_v6(back, ai, k)).max() < atol, (ai, k)


def _write_read(doc) -> abc_v6.AbcV6Model:
    return lithtech.read(Reader(lithtech.write(doc)))


def _plain(src: Path, tmp_path: Path, **load) -> abc_v6.AbcV6Model:
    glb = tmp_path / "mid.glb"
    retromesh.save(retromesh.load(src, **load), glb)
    assert_valid(glb)
    out = tmp_path / "back.abc"
    retromesh.convert(glb, out)
    return retromesh.read(out)


def _v6_corpus():
    return [p for p in corpus_params("abc", "*.abc")
            if p.values[0] is None or lithtech.sniff_version(p.values[0].read_bytes()[:64]) == 6]


@pytest.mark.parametrize("path", [pytest.param(V6, id=V6.name)] + _v6_corpus())
def test_v6_comes_back_as_v6_on_the_plain_path(path, tmp_path):
    doc = retromesh.read(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        back = _plain(path, tmp_path)
    diff = differences(summary(doc), summary(back))
    assert diff == {}
    assert_same_motion(doc, back)
    # face normals are recomputed (from the triangle, on the side of its vertex normals)
    assert back.geometry.faces["normal"].shape == doc.geometry.faces["normal"].shape


@pytest.mark.parametrize("opts", [{}, {"flip_mat": 0}, {"fix_anim_keyframes": 0}])
def test_unknown_sections_and_transform_info_come_back(opts, tmp_path):
    src = tmp_path / "s.abc"
    src.write_bytes(samples.sample_bytes(6, transform_info=False))        # with a raw TriStrips
    doc = retromesh.read(src)
    back = _plain(src, tmp_path, **opts)
    diff = differences(summary(doc), summary(back))
    if opts:
        # read with other flags than the file's: written in that convention, which the file
        # then says in a TransformInfo section of its own
        assert set(diff) <= {"sections", "info.sections", "transform_info", "vertices", "nodes",
                             "geometry"}
        assert summary(back)["transform_info"] == [(opts.get("flip_mat", 1),
                                                    opts.get("fix_anim_keyframes", 1))]
    else:
        assert diff == {}
        assert_same_motion(doc, back)


@pytest.mark.parametrize("fps", [None, 24])
def test_blender_like_round_trip_keeps_v6(fps, tmp_path):
    doc = retromesh.read(V6)
    glb = tmp_path / "m.glb"
    retromesh.save(retromesh.load(V6), glb)
    sc = blenderish(retromesh.load(glb), resample_fps=fps)
    sc.animations.reverse()                         # Blender exports actions sorted by name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)          # "sampled at the key times"
        back = _write_read(lithtech.scene.from_scene(sc))
    diff = differences(summary(doc), summary(back))
    diff.pop("vertices", None)             # normals a few 1e-4 off (Blender's split normals)
    assert diff == {}
    if fps is None:     # resampled: the simulation's last frame stops short of the last key
        assert_same_motion(doc, back)


def test_version_6_writes_any_scene(tmp_path):
    sc = retromesh.load(ROOT / "examples" / "wiggle.b3d")
    out = tmp_path / "w.abc"
    with pytest.warns(LossWarning, match="several nodes"):
        retromesh.save(sc, out, version=6)
    doc = retromesh.read(out)
    info = lithtech.info(doc)
    assert info["version"] == 6 and info["nodes"] == 5 and info["animations"] == 1
    assert info["keyframes"] == 49 and info["lods"] == 0 and info["deformation nodes"] == 0
    # v9..v13 flag meanings are not carried over: 1 null, 2 triangles
    assert all(n.flags in (1, 2) for n in doc.nodes)
    assert [n.flags & 2 != 0 for n in doc.nodes] == \
        [bool((doc.geometry.vertices["node"] == j).any()) for j in range(len(doc.nodes))]
    glb = tmp_path / "w.glb"
    retromesh.convert(out, glb)
    assert_valid(glb)
    # a v12 scene goes to v12 unless asked
    v12 = retromesh.load(ROOT / "examples" / "lithtech" / "model_v12.abc")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        assert lithtech.scene.from_scene(v12).version == 12
        assert lithtech.scene.from_scene(v12, version=6).version == 6


def test_moved_vertex_and_edited_vertex_animation_come_through(tmp_path):
    doc = retromesh.read(V6)
    sc = retromesh.load(V6)
    prim = sc.meshes[0].primitives[0]
    # glTF vertices of ABC vertex 1 (a body vertex): all move up by 0.25
    src = np.flatnonzero(np.all(np.abs(prim.positions - prim.positions[0]) < 1e-6, axis=1))
    prim.positions = prim.positions.copy()
    prim.positions[src, 1] += 0.25
    # the flag's vertex animation: key 1 of "run" moves twice as far
    names = sc.meshes[0].extras["targetNames"]
    t = prim.targets[names.index("run:1")]
    t.positions = t.positions * 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        back = _write_read(lithtech.scene.from_scene(sc))
    assert lithtech.info(back) == lithtech.info(doc)
    moved = np.flatnonzero(np.abs(back.geometry.vertices["location"]
                                  - doc.geometry.vertices["location"]).max(1) > 1e-6)
    assert len(moved) == 1
    for k in range(3):
        e0, e1 = engine_v6(doc, 0, k), engine_v6(back, 0, k)
        d = np.abs(e1 - e0).max(1)
        flag = doc.nodes[2].md_verts.astype(np.int64)
        if k == 1:
            assert d[flag].max() > 0.01                         # the edited key moved
        else:
            assert d[flag].max() < 1e-3
        others = np.setdiff1d(np.arange(len(d)), np.concatenate([flag, moved]))
        assert d[others].max() < 1e-5


def test_new_vertex_count_leaves_the_lod_vertices_out(tmp_path):
    sc = retromesh.load(V6)
    prim = sc.meshes[0].primitives[0]
    # one more triangle on new vertices
    n = len(prim.positions)
    prim.positions = np.concatenate([prim.positions, prim.positions[:3] + 0.1])
    prim.normals = np.concatenate([prim.normals, prim.normals[:3]])
    prim.uvs = [np.concatenate([prim.uvs[0], prim.uvs[0][:3]])]
    prim.joints = np.concatenate([prim.joints, prim.joints[:3]])
    prim.weights = np.concatenate([prim.weights, prim.weights[:3]])
    for t in prim.targets:
        t.positions = np.concatenate([t.positions, np.zeros((3, 3), np.float32)])
    prim.indices = np.concatenate([prim.indices, np.arange(n, n + 3, dtype=np.uint32)])
    with pytest.warns(LossWarning, match="LOD vertices"):
        back = _write_read(lithtech.scene.from_scene(sc))
    info = lithtech.info(back)
    assert info["version"] == 6 and info["triangles"] == 13 and info["lods"] == 0


def test_odd_extras_do_not_break_v6_writing():
    """Extras are whatever a user or another tool left: wrong types fall back to defaults."""
    sc = retromesh.load(V6)
    sc.nodes[2].extras.update(abc_flags="x", abc_bounds=[1, "a"], abc_index=-3)
    sc.meshes[0].extras.update(abc_v6_lods={"vertex_start": [0, 70000], "lod_vertices": "!!"},
                               targetNames=[3, None])
    sc.extras.update(abc_sections=["Animation", "Header"], geometry_bounds="wide",
                     abc_raw_sections=[{"name": "TriStrips", "data": "%%"}, 7,
                                       {"name": "Odd", "index": "first", "data": "AAAA"}],
                     flip_mat="yes", abc_animations=[{"name": "run", "key_bounds": [1, 2],
                                                      "deform": [{"node": 2, "scale": [0, 0, 0]}],
                                                      "length": -5, "dims": None}])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        doc = _write_read(lithtech.scene.from_scene(sc))
    info = lithtech.info(doc)
    assert info["version"] == 6 and info["nodes"] == 4 and info["deformation nodes"] == 1
    assert info["animations"] == 2 and info["keyframes"] == 5 and info["lods"] == 0
    assert [s.name for s in doc.sections if isinstance(s, RawSection)] == [b"Odd"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_v6_motion_survives_gltf(data):
    """Random key rotations, translations and vertex-animation bytes, both TransformInfo
    conventions: the engine puts every vertex where it was, at every key."""
    doc = samples.build_sample(6)
    flip = data.draw(st.integers(0, 1), "flip_mat")
    fix = data.draw(st.integers(0, 1), "fix_anim_keyframes")
    doc.transform_info.flip_mat, doc.transform_info.fix_anim_keyframes = flip, fix
    floats = st.floats(-2, 2, allow_nan=False, width=32)
    for a in doc.animations:
        for t in a.tracks:
            n = len(t.transforms)
            q = np.array(data.draw(st.lists(st.tuples(floats, floats, floats, floats)
                                             .filter(lambda v: np.linalg.norm(v) > 0.1),
                                             min_size=n, max_size=n)), np.float64)
            t.transforms["rotation"] = q / np.linalg.norm(q, axis=1, keepdims=True)
            t.transforms["location"] = data.draw(st.lists(st.tuples(floats, floats, floats),
                                                          min_size=n, max_size=n))
            if t.deform is not None:
                t.deform = np.frombuffer(data.draw(st.binary(min_size=t.deform.size,
                                                             max_size=t.deform.size)),
                                         np.uint8).reshape(t.deform.shape).copy()
    doc = _write_read(doc)
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        glb = Path(tmp) / "h.glb"
        retromesh.save(lithtech.scene.to_scene(doc), glb)
        back = _write_read(lithtech.scene.from_scene(retromesh.load(glb)))
    assert lithtech.info(back) == lithtech.info(doc)
    assert_same_motion(doc, back, atol=2e-3)


def test_v6_warns_only_about_what_it_leaves_out():
    """v6 keeps the morph targets (vertex animation) that v9..v13 leave out: writing v6 names
    only the rest of what ABC has no place for."""
    sc = lithtech.scene.to_scene(samples.build_sample(6))
    prim = sc.meshes[0].primitives[0]
    prim.colors = np.ones((len(prim.positions), 4), np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lithtech.scene.from_scene(sc)
    lost = [str(w.message) for w in caught if "no place for" in str(w.message)]
    assert lost == ["ABC has no place for vertex colours; left out"]
    prim.colors = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lithtech.scene.from_scene(sc)
    assert not [w for w in caught if "no place for" in str(w.message)]
    with pytest.warns(LossWarning, match="no place for morph targets"):
        lithtech.scene.from_scene(sc, version=12)
