"""Overgrowth .phxbn skeletons and .anm animations: every version branch, scenes, glTF."""
from __future__ import annotations

import copy
import dataclasses
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import retromesh
from helpers.gltfcheck import assert_valid
from helpers.malformed import assert_malformed_safe, read_or_format_error
from helpers.roundtrip import native_round_trip
from retromesh import DocumentError, FormatError, LossWarning
from retromesh.formats.overgrowth import bones, playback, samples, scene as wscene
from retromesh.formats.overgrowth.anm import (
    AnmEvent,
    AnmFile,
    AnmIkBone,
    AnmKeyframe,
    AnmLabelWeight,
    weapon_dtype,
)
from retromesh.formats.overgrowth.obj import parse_obj
from retromesh.formats.overgrowth.phxbn import PhxbnFile, PhxControl, PhxJoint, PhxSimpleIk


def rt(doc, fmt):
    return native_round_trip(doc, fmt)[0]


# -- fixtures for every version and branch -----------------------------------------------------
PHX_CASES = [(v, stage, j, ik) for v in range(5, 12) for stage in (-1, 0, 1, 2, 3)
             for j, ik in ((True, True), (False, False))]


@pytest.mark.parametrize("version,stage,joints,ik", PHX_CASES)
def test_phxbn_versions_round_trip(version, stage, joints, ik):
    doc = samples.phxbn_fixture(version, stage, joints, ik)
    data = rt(doc, "phxbn")
    back = retromesh.read(data, format="phxbn")
    assert back.version == version and back.rigging_stage == stage
    assert (back.control is not None) == (stage in (1, 2))
    if back.control is not None:
        assert len(back.control.weights) == 3 * 72
        assert [j.type for j in back.control.joints] == ([0, 1, 1, 2, 2] if joints else [])
    assert (back.simple_ik is not None) == (version >= 10)
    # v9+ bone matrices take 64 bytes per bone
    if version >= 9:
        assert back.bone_mats.shape == (6, 16)


def test_phxbn_v5_has_no_version_field():
    data = retromesh.to_bytes(samples.phxbn_fixture(5, 1))
    assert int.from_bytes(data[:4], "little") == 1          # the rigging stage comes first
    assert retromesh.read(data, format="phxbn").version == 5


ANM_BRANCHES = ["centered", "mobility", "weapons", "events", "ik_bones", "shape_keys",
                "status_keys", "looping"]


@pytest.mark.parametrize("version", range(0, 12))
@pytest.mark.parametrize("on", [True, False])
def test_anm_versions_round_trip(version, on):
    flags = {b: on for b in ANM_BRANCHES}
    doc = samples.anm_fixture(version, **flags, start=40 if 1 <= version <= 10 else 0)
    data = rt(doc, "anm")
    back = retromesh.read(data, format="anm")
    k = back.keyframes[1]
    assert (k.weights is not None) == (version >= 4)
    assert (k.weapon_mats is not None) == (version >= 7)
    if version >= 7:
        assert k.weapon_mats.dtype == weapon_dtype(version) and len(k.weapon_mats) == (1 if on else 0)
    assert (k.use_mobility is not None) == (version >= 9)
    if version >= 9 and on:
        assert back.keyframes[0].use_mobility and back.keyframes[0].mobility.shape == (16,)
    assert (k.events is not None) == (version >= 2)
    if version >= 2 and on:
        assert k.events[1].name == b"sound \xe9t\xe9"         # non-UTF-8 bytes kept
    assert (k.ik_bones is not None) == (version >= 3)
    assert (k.shape_keys is not None) == (version >= 5)
    assert (k.status_keys is not None) == (version >= 6)
    centered = on and version >= 10
    assert back.is_centered == centered
    if centered:
        # the centre offset is a vec3 (12 bytes), not one float
        assert len(k.center_offset) == 3 and k.center_offset[2] == 0.25
    assert back.start_ms == (40 if 1 <= version <= 10 else 0)
    assert back.is_looping == (on or version == 0)


def test_anm_centered_layout_is_vec3():
    doc = samples.anm_fixture(11, centered=True, keys=1)
    flat = samples.anm_fixture(11, centered=False, keys=1)
    assert len(retromesh.to_bytes(doc)) - len(retromesh.to_bytes(flat)) == 16   # rotation + vec3


def test_anm_rejects():
    with pytest.raises(FormatError, match="version"):
        retromesh.read((12).to_bytes(4, "little") + bytes(20), format="anm")
    doc = samples.anm_fixture(11)
    data = bytearray(retromesh.to_bytes(doc))
    data[7:11] = (0).to_bytes(4, "little")                   # keyframe_count = 0
    with pytest.raises(FormatError, match="keyframe_count"):
        retromesh.read(bytes(data), format="anm")
    doc.keyframes[0].weights = None
    with pytest.raises(DocumentError, match="weights"):
        retromesh.to_bytes(doc)


def test_phxbn_rejects():
    with pytest.raises(FormatError, match="version"):
        retromesh.read((12).to_bytes(4, "little") + bytes(20), format="phxbn")
    doc = samples.phxbn_fixture(11)
    doc.control.hier_parents = np.array([-1, 0], "<i4")
    with pytest.raises(DocumentError):
        retromesh.to_bytes(doc)


def test_phxbn_v10_vertex_count_inferred():
    doc = samples.phxbn_fixture(10)
    back = retromesh.read(retromesh.to_bytes(doc), format="phxbn")
    assert back.control.num_vertices is None and len(back.control.weights) == 216


@pytest.mark.parametrize("version", [5, 10])
@pytest.mark.parametrize("fill", [0, 1])
def test_phxbn_inferred_count_on_large_damaged_file(version, fill):
    """A few MB of junk after a v5..v10 file: a FormatError, not a search over every count."""
    data = retromesh.to_bytes(samples.phxbn_fixture(version))
    junk = bytes(3_000_000) if fill == 0 else \
        np.random.default_rng(version).integers(0, 256, 3_000_000, dtype=np.uint8).tobytes()
    with pytest.raises(FormatError, match="vertex count"):
        retromesh.read(data + junk, format="phxbn")
    # a long (but plausible) IK label still lets the true count be found
    doc = samples.phxbn_fixture(version)
    if version >= 10:
        doc.simple_ik[0].name = b"x" * 5000
    back = retromesh.read(retromesh.to_bytes(doc), format="phxbn")
    assert len(back.control.weights) == 216 and retromesh.to_bytes(back) == retromesh.to_bytes(doc)


# -- scenes -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("overgrowth")
    samples.write_example(d)
    return d


def test_skeleton_scene(files):
    doc = retromesh.read(files / "stick.phxbn")
    scene = retromesh.load(files / "stick.phxbn")
    joints = [i for i, n in enumerate(scene.nodes) if "phxbn_bone" in n.extras]
    assert len(joints) == 6
    bind, parents = bones.skeleton_bind(doc)
    world = scene.world_matrices()
    for j in joints:
        assert np.allclose(world[j], bind[scene.nodes[j].extras["phxbn_bone"]], atol=1e-6)
    # the bind frame is GetBoneMat: origin at the midpoint, Z along the bone
    p = doc.points.astype(float)
    a, b = p[doc.bone_ends[2, 0]], p[doc.bone_ends[2, 1]]
    assert np.allclose(bind[2][:3, 3], (a + b) / 2, atol=1e-6)
    assert np.allclose(bind[2][:3, 2], (b - a) / np.linalg.norm(b - a), atol=1e-6)
    assert scene.parents()[joints[1]] == joints[0]          # hier_parents: head under torso


def test_hierarchy_falls_back_to_bone_parents():
    doc = samples.phxbn_fixture(9, rigging_stage=0)
    assert doc.control is None
    assert list(doc.parents()) == list(samples.PARENTS)
    doc = samples.phxbn_fixture(7, rigging_stage=0)
    assert list(doc.parents()) == [-1] * 6


def _joint_worlds(scene, anim, t):
    """World matrices of the joints after applying animation ``anim`` at time ``t``."""
    from retromesh.transforms import compose_trs, world_matrices
    nodes = scene.nodes
    T = np.array([n.translation for n in nodes])
    R = np.array([n.rotation for n in nodes])
    S = np.array([n.scale for n in nodes])
    for c in anim.channels:
        i = int(np.argmin(np.abs(c.times - t)))
        assert abs(c.times[i] - t) < 1e-6
        {"translation": T, "rotation": R, "scale": S}[c.path][c.node] = c.values[i]
    return world_matrices(compose_trs(T, R, S), scene.parents())


def test_animation_scene_reproduces_keys(files):
    anm = retromesh.read(files / "walk.anm")
    scene = retromesh.load(files / "walk.anm", skeleton=files / "stick.phxbn")
    anim = scene.animations[0]
    assert anim.name == "walk"
    root = next(i for i, n in enumerate(scene.nodes) if n.extras.get("phxbn_root"))
    joints = sorted((i for i, n in enumerate(scene.nodes) if "phxbn_bone" in n.extras),
                    key=lambda i: scene.nodes[i].extras["phxbn_bone"])
    for kf in anm.keyframes:
        t = kf.time / 1000.0
        w = _joint_worlds(scene, anim, t)
        from retromesh.transforms import compose_trs
        root_m = compose_trs(list(kf.center_offset), [0, np.sin(kf.rotation / 2), 0,
                                                      np.cos(kf.rotation / 2)], [1, 1, 1])
        assert np.allclose(w[root], root_m, atol=1e-5)
        model = np.linalg.inv(w[root]) @ w[joints]
        assert np.allclose(model, bones.unpack_mats(kf.bone_mats), atol=1e-5)
    # resampled at 30 Hz (plus the key times)
    times = anim.channels[0].times
    assert len(times) >= 36 and abs(times[-1] - 1.2) < 1e-6
    assert anim.extras["centered"] and anim.extras["key_times_ms"] == [0, 200, 400, 600, 800, 1000]
    assert any(e["name"] == "leftstep" for e in anim.extras["events"])
    assert len(anim.extras["weights"]) == 6


def test_fps_option_and_catmull_rom(files):
    scene = retromesh.load(files / "wave.anm", skeleton=files / "stick.phxbn", fps=60)
    assert len(scene.animations[0].channels[0].times) == 61
    w = bones.catmull_rom_weights(np.array([0.0, 0.5, 1.0]))
    assert np.allclose(w[0], [0, 1, 0, 0]) and np.allclose(w[2], [0, 0, 1, 0])
    assert np.allclose(w.sum(1), 1)


def test_very_long_animation_is_refused(files):
    """A damaged length on a big rig: a clear error instead of gigabytes of samples."""
    m = 60
    pts = np.c_[np.zeros(m + 1), np.arange(m + 1, dtype=float), np.zeros(m + 1)].astype("<f4")
    ends = np.stack([np.arange(m), np.arange(m) + 1], 1).astype("<i4")
    par = np.arange(-1, m - 1).astype("<i4")
    skel = PhxbnFile(version=8, rigging_stage=0, points=pts, point_parents=np.full(m + 1, -1, "<i4"),
                     bone_ends=ends, bone_parents=par, bone_masses=np.ones(m, "<f4"),
                     bone_com=np.zeros((m, 3), "<f4"))
    from retromesh.formats.overgrowth.anm import WEAPON8_DTYPE
    mats = bones.pack_mats(bones.bone_frames(pts[ends[:, 0]], pts[ends[:, 1]]))
    anm = AnmFile(version=11, centered=0, looping=1, length=6_000_000, keyframes=[
        AnmKeyframe(0, mats, np.zeros(0, "<f4"), np.zeros(0, WEAPON8_DTYPE), 0, None, [], [], [], [])])
    with pytest.raises(retromesh.LimitError, match="lower fps"):
        wscene.phxbn_to_scene(skel, animations=[anm])
    anm.length = 20_000                                    # 20 s: fine, sampled in batches
    scene = wscene.phxbn_to_scene(skel, animations=[anm])
    assert len(scene.animations[0].channels[0].times) == 601


def test_full_character_glb(files, tmp_path):
    out = tmp_path / "stick.glb"
    retromesh.convert(files / "stick.phxbn", out, mesh=files / "stick.obj",
                      animations=[files / "wave.anm", files / "walk.anm"])
    info = assert_valid(out)
    assert info["animationCount"] == 2 and info["hasSkins"]
    assert info["maxInfluences"] == 4 and info["maxUVs"] == 1
    import trimesh
    assert len(trimesh.load(out).geometry) == 1
    scene = retromesh.load(out)
    assert [a.name for a in scene.animations] == ["wave", "walk"]


def test_skinned_mesh_is_centred_and_weighted(files):
    scene = retromesh.load(files / "stick.phxbn", mesh=files / "stick.obj")
    prim = scene.meshes[0].primitives[0]
    c = (prim.positions.min(0) + prim.positions.max(0)) / 2
    assert np.allclose(c, 0, atol=1e-5)                      # _MDL_CENTER
    assert np.allclose(prim.weights.sum(1), 1, atol=1e-6)
    assert np.allclose(scene.meshes[0].extras["obj_old_center"], samples.OBJ_OFFSET, atol=1e-5)
    # the first corners had weights summing to 0.5 < 0.99: slot 0 -> (closest bone, 1.0)
    w, ids = samples.corner_weights(samples.centred_points())
    assert w[:12].sum(1).max() < 0.99
    pos = np.asarray(scene.meshes[0].primitives[0].positions, float)
    obj = parse_obj((files / "stick.obj").read_bytes())
    first = obj.positions[obj.corners[0, 0]] - samples.OBJ_OFFSET
    k = int(np.argmin(np.linalg.norm(pos - first, axis=1)))
    assert np.allclose(prim.weights[k], [1, 0, 0, 0]) and prim.joints[k, 0] == 0


def test_vertex_count_mismatch(files, tmp_path):
    from retromesh.formats.overgrowth.obj import write_obj
    (tmp_path / "small.obj").write_bytes(write_obj(np.eye(3), np.array([[0, 1, 2]])))
    with pytest.raises(FormatError, match="different vertex counts"):
        retromesh.load(files / "stick.phxbn", mesh=tmp_path / "small.obj")


def test_anm_alone_warns_and_validates(files, tmp_path):
    with pytest.warns(LossWarning, match="no skeleton"):
        retromesh.convert(files / "wave.anm", tmp_path / "w.glb")
    assert assert_valid(tmp_path / "w.glb")["animationCount"] == 1


def _anm(out: dict):
    """The one animation a ``phxbn`` from_scene wrote (``_<name>.anm``: a new animation)."""
    (anm,) = [doc for key, doc in out.items() if key.endswith(".anm")]
    return anm


def test_gltf_round_trip_to_phxbn_and_anm(files, tmp_path):
    retromesh.convert(files / "stick.phxbn", tmp_path / "s.glb", mesh=files / "stick.obj",
                      animations=[files / "wave.anm", files / "walk.anm"])
    written = retromesh.convert(tmp_path / "s.glb", tmp_path / "rt" / "s.phxbn")
    names = sorted(p.name for p in written)
    # the animations keep the names of the files they were read from (retromesh.filenames)
    assert names == ["s.obj", "s.phxbn", "walk.anm", "wave.anm"]
    # the written OBJ + skeleton skin the same mesh again
    again = retromesh.load(tmp_path / "rt" / "s.phxbn", mesh=tmp_path / "rt" / "s.obj",
                           animations=[tmp_path / "rt" / "walk.anm"])
    p0 = retromesh.load(files / "stick.phxbn", mesh=files / "stick.obj").meshes[0].primitives[0]
    p1 = again.meshes[0].primitives[0]
    assert p1.triangle_count == p0.triangle_count
    assert np.allclose(np.sort(p1.positions, 0), np.sort(p0.positions, 0), atol=1e-5)
    sk0 = retromesh.read(files / "stick.phxbn")
    sk1 = retromesh.read(tmp_path / "rt" / "s.phxbn")
    assert sk1.version == 11
    b0, p0 = bones.skeleton_bind(sk0)
    b1, p1 = bones.skeleton_bind(sk1)
    assert np.abs(b0 - b1).max() < 1e-4 and list(p0) == list(p1)
    assert len(sk1.control.weights) == len(sk0.control.weights)
    for name in ("wave", "walk"):
        a0 = retromesh.read(files / f"{name}.anm")
        a1 = retromesh.read(tmp_path / "rt" / f"{name}.anm")
        assert a1.version == 11 and len(a1.keyframes) == len(a0.keyframes)
        for k0, k1 in zip(a0.keyframes, a1.keyframes):
            assert k0.time == k1.time
            assert np.abs(k0.bone_mats - k1.bone_mats).max() < 1e-4
            if a0.is_centered:
                assert abs(k0.rotation - k1.rotation) < 1e-4
                assert np.allclose(k0.center_offset, k1.center_offset, atol=1e-4)
    # one animation straight to .anm
    with pytest.warns(LossWarning, match="only the first"):
        retromesh.convert(tmp_path / "s.glb", tmp_path / "one.anm")
    assert len(retromesh.read(tmp_path / "one.anm").keyframes) == 4


def test_cli_one_command(files, tmp_path):
    out = tmp_path / "cli.glb"
    r = subprocess.run([sys.executable, "-m", "retromesh", "convert", str(files / "stick.phxbn"),
                        "--mesh", str(files / "stick.obj"), "--animation", str(files / "wave.anm"),
                        "--animation", str(files / "walk.anm"), "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert assert_valid(out)["animationCount"] == 2
    r = subprocess.run([sys.executable, "-m", "retromesh", "convert", str(files / "walk.anm"),
                        "--skeleton", str(files / "stick.phxbn"), "-o", str(tmp_path / "run.glb")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_json_dump_build_round_trip(files):
    from retromesh import jsoncodec
    for name in ("stick.phxbn", "walk.anm"):
        doc = retromesh.read(files / name)
        again = jsoncodec.loads(jsoncodec.dumps(doc))
        assert retromesh.to_bytes(again) == (files / name).read_bytes()


# -- malformed input (v11 and v5 / v1 also in tests/test_contract.py) -----------------------------
@pytest.mark.parametrize("version", [8, 10])
def test_malformed_phxbn(version):
    assert_malformed_safe(retromesh.to_bytes(samples.phxbn_fixture(version)), "x.phxbn",
                          scene=True)


@pytest.mark.parametrize("version", [0, 3, 9])
def test_malformed_anm(version):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_malformed_safe(retromesh.to_bytes(samples.anm_fixture(version, keys=2, length=100)), "x.anm",
                              scene=True)


# -- hypothesis ---------------------------------------------------------------------------------
_f32 = st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-1e3, max_value=1e3)
_lab = st.binary(max_size=12)


def _farr(draw, shape):
    n = int(np.prod(shape))
    return np.array(draw(st.lists(_f32, min_size=n, max_size=n)), "<f4").reshape(shape)


@st.composite
def anm_docs(draw):
    v = draw(st.integers(0, 11))
    centered = draw(st.booleans()) and v >= 10
    nb = draw(st.integers(0, 3))
    doc = AnmFile(version=v, centered=(draw(st.integers(0, 255)) if centered else 0) if v >= 10 else None,
                  looping=draw(st.integers(0, 255)) if v >= 1 else None,
                  start=draw(st.integers(-5, 100)) if 1 <= v <= 10 else None,
                  length=draw(st.integers(0, 5000)))
    if v >= 10 and centered and not doc.centered:
        doc.centered = 1
    for _ in range(draw(st.integers(1, 3))):
        kf = AnmKeyframe(time=draw(st.integers(-10, 5000)), bone_mats=_farr(draw, (nb, 16)))
        if v >= 4:
            kf.weights = _farr(draw, (draw(st.integers(0, 3)),))
        if v >= 7:
            dt = weapon_dtype(v)
            wm = np.zeros(draw(st.integers(0, 2)), dt)
            wm["matrix"] = _farr(draw, (len(wm), 16))
            if v >= 8:
                wm["relative_id"] = draw(st.lists(st.integers(-1, 9), min_size=len(wm), max_size=len(wm)))
                wm["relative_weight"] = _farr(draw, (len(wm),))
            kf.weapon_mats = wm
        if v >= 9:
            kf.use_mobility = draw(st.integers(0, 255))
            kf.mobility = _farr(draw, (16,)) if kf.use_mobility else None
        if v >= 2:
            kf.events = [AnmEvent(draw(st.integers(-1, 9)), draw(_lab))
                         for _ in range(draw(st.integers(0, 2)))]
        if v >= 3:
            kf.ik_bones = [AnmIkBone(tuple(float(x) for x in _farr(draw, (6,))),
                                     np.array(draw(st.lists(st.integers(-1, 9), max_size=3)), "<i4"),
                                     draw(_lab)) for _ in range(draw(st.integers(0, 2)))]
        if v >= 5:
            kf.shape_keys = [AnmLabelWeight(float(draw(_f32)), draw(_lab))
                             for _ in range(draw(st.integers(0, 2)))]
        if v >= 6:
            kf.status_keys = [AnmLabelWeight(float(draw(_f32)), draw(_lab))
                              for _ in range(draw(st.integers(0, 2)))]
        if centered:
            kf.rotation = float(draw(_f32))
            kf.center_offset = tuple(float(x) for x in _farr(draw, (3,)))
        doc.keyframes.append(kf)
    doc.trailing = draw(st.binary(max_size=3))
    return doc


@st.composite
def phxbn_docs(draw):
    v = draw(st.integers(5, 11))
    stage = draw(st.sampled_from([-1, 0, 1, 2, 3]))
    n = draw(st.integers(1, 5))
    m = draw(st.integers(1, 4))
    doc = PhxbnFile(version=v, rigging_stage=stage, points=_farr(draw, (n, 3)),
                    bone_ends=np.array(draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                                                     min_size=m, max_size=m)), "<i4").reshape(m, 2))
    if v >= 8:
        doc.point_parents = np.array(draw(st.lists(st.integers(-1, n - 1), min_size=n, max_size=n)), "<i4")
        doc.bone_parents = np.array([-1] + [draw(st.integers(-1, i - 1)) for i in range(1, m)], "<i4")
    if v >= 6:
        doc.bone_masses = _farr(draw, (m,))
    if v >= 7:
        doc.bone_com = _farr(draw, (m, 3))
    if v >= 9:
        doc.bone_mats = _farr(draw, (m, 16))
    if stage in (1, 2):
        nv = 3 * draw(st.integers(0, 3))
        ids = np.array(draw(st.lists(st.integers(0, m - 1), min_size=4 * nv, max_size=4 * nv)),
                       "<f4").reshape(nv, 4)
        joints = []
        for _ in range(draw(st.integers(0, 3))):
            t = draw(st.integers(0, 3))
            stops = _farr(draw, (6 if t == 1 else 2 if t == 0 else 0,))
            joints.append(PhxJoint(t, tuple(float(x) for x in stops),
                                   (draw(st.integers(-1, m)), draw(st.integers(-1, m))),
                                   tuple(float(x) for x in _farr(draw, (3,))) if t == 0 else None))
        hier = np.array([-1] + [draw(st.integers(-1, i - 1)) for i in range(1, m)], "<i4")
        doc.control = PhxControl(_farr(draw, (nv, 4)), ids, hier, joints, nv if v >= 11 else None)
    if v >= 10:
        doc.simple_ik = [PhxSimpleIk(draw(st.integers(-1, m)), draw(st.integers(0, 4)), draw(_lab))
                         for _ in range(draw(st.integers(0, 2)))]
    if v >= 11 or doc.control is None:
        # (below v11 the control arrays' size is inferred from the end of the file)
        doc.trailing = draw(st.binary(max_size=3))
    return doc


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anm_docs())
def test_hypothesis_anm(doc):
    data = rt(doc, "anm")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read_or_format_error(data, "x.anm", scene=True)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(phxbn_docs())
def test_hypothesis_phxbn(doc):
    data = rt(doc, "phxbn")
    read_or_format_error(data, "x.phxbn", scene=True)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_hypothesis_mutations(data):
    fmt = data.draw(st.sampled_from(["anm", "phxbn"]))
    doc = samples.anm_fixture(11, keys=2) if fmt == "anm" else samples.phxbn_fixture(10)
    base = bytearray(retromesh.to_bytes(doc))
    for _ in range(data.draw(st.integers(1, 6))):
        i = data.draw(st.integers(0, len(base) - 1))
        base[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(base)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read_or_format_error(bytes(base[:cut]), f"x.{fmt}", scene=True)


def test_playback_matches_engine_blend_four_bones():
    """A sample between keys equals the engine's chained mixes (written out one step at a time)."""
    from retromesh.transforms import decompose_trs, quat_slerp
    anm = samples.anm_fixture(11, keys=5, length=1000, swing=1.2)
    parents = samples.PARENTS
    t_ms = 330.0                                   # between keys 1 (200) and 2 (400)
    T, R, _, _ = playback.sample_animation(anm, parents, 6, np.array([t_ms]))
    mats = np.stack([bones.unpack_mats(k.bone_mats) for k in anm.keyframes])
    local = mats.copy()
    for i in range(1, 6):
        local[:, i] = np.linalg.inv(mats[:, parents[i]]) @ mats[:, i]
    tt, rr, _ = decompose_trs(local)
    u = (t_ms - 200) / 200
    w = bones.catmull_rom_weights(np.array(u))
    keys = [0, 1, 2, 3]
    for b in range(6):
        x_t, x_r = tt[keys[0], b], rr[keys[0], b]
        total = 0.0
        for j in range(4):
            total += w[j]
            if j == 0 or total <= 0:
                continue
            f = w[j] / total
            x_t = x_t + (tt[keys[j], b] - x_t) * f
            x_r = quat_slerp(x_r, rr[keys[j], b], f)
        assert np.allclose(T[0, b], x_t, atol=1e-6)
        d = abs(np.dot(R[0, b], x_r))
        assert d > 1 - 1e-9


def _worlds_at(scene, anim, t):
    from retromesh.transforms import compose_trs, world_matrices
    T = np.array([n.translation for n in scene.nodes])
    R = np.array([n.rotation for n in scene.nodes])
    S = np.array([n.scale for n in scene.nodes])
    for c in anim.channels:
        v = c.sample(np.array([t]))[0]
        {"translation": T, "rotation": R, "scale": S}[c.path][c.node] = v
    return world_matrices(compose_trs(T, R, S), scene.parents())


def test_foreign_rig_keeps_skinning():
    """A glTF/B3D rig whose bind frames are not the engine's: the key matrices are re-expressed
    so that skin matrices (anim world x inverse bind) are unchanged."""
    from helpers.make_examples_import import make_examples
    src = make_examples.wiggle_scene()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = retromesh.from_scene(src, "phxbn")
    skel, anm = out[""], _anm(out)
    # the mesh was moved to be centred as the engine centres OBJ files: so was the skeleton
    pos = out[".obj"].mesh().positions
    assert np.allclose((pos.min(0) + pos.max(0)) / 2, 0, atol=1e-6)
    allpos = np.concatenate([p.positions for p in src.meshes[0].primitives]).astype(float)
    shift = np.eye(4)
    shift[:3, 3] = -(allpos.min(0) + allpos.max(0)) / 2
    # bones run from each joint to its child (never of zero length: GetBoneMat would give NaNs)
    p = skel.points.astype(float)
    a, b = p[skel.bone_ends[:, 0]], p[skel.bone_ends[:, 1]]
    assert np.linalg.norm(b - a, axis=1).min() > 1e-3
    w_src = src.world_matrices()[src.skins[0].joints][:, :3, 3] + shift[:3, 3]
    for i, par in enumerate(skel.bone_parents):
        assert np.allclose(a[i], w_src[i], atol=1e-5)
        if par >= 0 and np.linalg.norm(w_src[i] - w_src[par]) > 1e-3:
            d = (w_src[i] - w_src[par]) / np.linalg.norm(w_src[i] - w_src[par])
            assert np.dot((b[par] - a[par]) / np.linalg.norm(b[par] - a[par]), d) > 0.99
    data = retromesh.to_bytes(skel)
    skel = retromesh.read(data, format="phxbn")
    anm = retromesh.read(retromesh.to_bytes(anm), format="anm")
    dst = wscene.phxbn_to_scene(skel, animations=[anm])
    skin0 = src.skins[0]
    joints1 = sorted((i for i, n in enumerate(dst.nodes) if "phxbn_bone" in n.extras),
                     key=lambda i: dst.nodes[i].extras["phxbn_bone"])
    bind1, _ = bones.skeleton_bind(skel)
    for kf in anm.keyframes[::7]:
        t = kf.time / 1000.0
        w0 = _worlds_at(src, src.animations[0], t)
        w1 = _worlds_at(dst, dst.animations[0], t)
        j0 = shift @ w0[skin0.joints] @ skin0.inverse_bind_matrices @ np.linalg.inv(shift)
        j1 = w1[joints1] @ np.linalg.inv(bind1)
        assert np.abs(j0 - j1).max() < 1e-4


def test_anm_with_skeleton_mesh_and_more_animations(files, tmp_path):
    out = tmp_path / "both.glb"
    retromesh.convert(files / "walk.anm", out, skeleton=files / "stick.phxbn",
                      mesh=files / "stick.obj", animations=[files / "wave.anm"])
    info = assert_valid(out)
    assert info["animationCount"] == 2 and info["hasSkins"] and info["maxInfluences"] == 4
    assert [a.name for a in retromesh.load(out).animations] == ["walk", "wave"]
    with pytest.raises(retromesh.UnsupportedError):
        retromesh.load(files / "walk.anm", mesh=files / "stick.obj")


@pytest.mark.parametrize("version", [5, 7, 9, 11])
def test_skeleton_only_glb(version, tmp_path):
    doc = samples.phxbn_fixture(version)
    (tmp_path / "s.phxbn").write_bytes(retromesh.to_bytes(doc))
    retromesh.convert(tmp_path / "s.phxbn", tmp_path / "s.glb")
    info = assert_valid(tmp_path / "s.glb")
    assert info["hasSkins"] and info["animationCount"] == 0
    scene = retromesh.load(tmp_path / "s.glb")
    assert sum("phxbn_bone" in n.extras for n in scene.nodes) == 6


def test_every_mesh_of_the_skin_goes_into_the_obj():
    """Two meshes skinned by the same skin (body + head, say) both reach the OBJ and the
    per-corner weights; a static mesh is left out with a LossWarning."""
    from helpers.make_examples_import import make_examples
    src = make_examples.wiggle_scene()
    node = next(n for n in src.nodes if n.skin is not None)
    n_corners = sum(len(p.indices) for p in src.meshes[node.mesh].primitives)
    src.add_node(dataclasses.replace(node, children=[], name="second"))
    src.add_node(retromesh.scene.Node(name="prop", mesh=node.mesh))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = retromesh.from_scene(src, "phxbn")
    assert any("1 mesh" in str(w.message) for w in caught)
    assert len(out[""].control.weights) == 2 * n_corners
    assert out[".obj"].mesh().triangle_count == 2 * n_corners // 3


def test_start_offset_survives_the_trip_to_v11():
    """A v1..v10 animation with a start offset: v11 has no start field, so key times and length
    are written from 0 (the engine subtracts start on load) and playback is unchanged."""
    skel = samples.stick_skeleton()
    anm = samples.anm_fixture(10, start=100, centered=False, weapons=False, mobility=False)
    src = wscene.phxbn_to_scene(skel, animations=[{"a": anm}])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = _anm(retromesh.from_scene(src, "phxbn", native=False))    # written as v11
    assert out.version == 11 and out.length == anm.length - anm.start
    assert [k.time for k in out.keyframes] == [k.time - anm.start for k in anm.keyframes]
    dst = wscene.phxbn_to_scene(skel, animations=[{"a": out}])
    for t in np.linspace(0, 0.99, 23):
        a = _worlds_at(src, src.animations[0], t)
        b = _worlds_at(dst, dst.animations[0], t)
        assert np.abs(a - b).max() < 1e-5


def test_hierarchy_depths_and_cycles():
    """Depths by binary lifting match a plain walk on random forests; cycles are refused."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        m = int(rng.integers(1, 30))
        p = np.array([int(rng.integers(-1, i)) if i else -1 for i in range(m)])
        perm = rng.permutation(m)
        inv = np.argsort(perm)
        q = np.where(p[perm] >= 0, inv[np.maximum(p[perm], 0)], -1)
        ref = []
        for i in range(m):
            j, n = i, 0
            while q[j] >= 0:
                j, n = q[j], n + 1
            ref.append(n)
        assert bones.depths(q).tolist() == ref
        order = bones.depth_order(q)
        assert all(order.index(int(q[i])) < order.index(i) for i in range(m) if q[i] >= 0)
    for bad in ([1, 0], [0], [-1, 2, 1], [-1, 0, 3, 4, 2]):
        with pytest.raises(DocumentError, match="cycle"):
            bones.check_parents(np.array(bad), len(bad))
    doc = samples.phxbn_fixture(11)
    doc.control.hier_parents = np.array([-1, 2, 3, 1, 0, 0], "<i4")
    with pytest.raises(FormatError, match="cycle"):
        retromesh.load(retromesh.to_bytes(doc), format="phxbn")


def test_animations_of_the_same_name_all_written():
    scene = wscene.phxbn_to_scene(samples.stick_skeleton(),
                                  animations=[{"run 1": samples.wave_animation()},
                                              {"run_1": samples.walk_animation()},
                                              {"run_1": samples.wave_animation()}])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = retromesh.from_scene(scene, "phxbn")
    assert sorted(k for k in out if k.endswith(".anm")) == ["_run_1.anm", "_run_1_2.anm",
                                                            "_run_1_3.anm"]
    assert len(out["_run_1_2.anm"].keyframes) == 6


def test_armature_node_above_the_rig_is_kept():
    """A foreign rig under a transformed armature node (Blender's scale/rotation): the key
    matrices include it, as the inverse bind matrices do, so skinning is unchanged."""
    from helpers.make_examples_import import make_examples
    from retromesh.scene import Node
    src = make_examples.wiggle_scene()
    sk = src.skins[0]
    par = src.parents()
    root_joint = next(j for j in sk.joints if par[j] not in sk.joints)
    assert par[root_joint] < 0
    arm = Node(name="Armature", translation=[0.5, 0, 0], scale=[2.0, 2.0, 2.0],
               rotation=[0, 0.3826834, 0, 0.9238795])
    ai = src.add_node(arm)
    src.roots.remove(root_joint)
    arm.children.append(root_joint)
    sk.inverse_bind_matrices = np.linalg.inv(src.world_matrices()[sk.joints])
    mesh_node = next(i for i, n in enumerate(src.nodes) if n.skin is not None)
    for p in src.meshes[src.nodes[mesh_node].mesh].primitives:
        p.positions = (np.c_[p.positions.astype(float), np.ones(len(p.positions))]
                       @ arm.matrix.T)[:, :3].astype(np.float32)
    allpos = np.concatenate([p.positions for p in src.meshes[0].primitives]).astype(float)
    shift = np.eye(4)
    shift[:3, 3] = -(allpos.min(0) + allpos.max(0)) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = retromesh.from_scene(src, "phxbn")
    skel = retromesh.read(retromesh.to_bytes(out[""]), format="phxbn")
    anm = retromesh.read(retromesh.to_bytes(_anm(out)), format="anm")
    dst = wscene.phxbn_to_scene(skel, animations=[anm])
    joints1 = sorted((i for i, n in enumerate(dst.nodes) if "phxbn_bone" in n.extras),
                     key=lambda i: dst.nodes[i].extras["phxbn_bone"])
    bind1, _ = bones.skeleton_bind(skel)
    for kf in anm.keyframes[::5]:
        t = kf.time / 1000.0
        j0 = shift @ _worlds_at(src, src.animations[0], t)[sk.joints] @ sk.inverse_bind_matrices \
            @ np.linalg.inv(shift)
        j1 = _worlds_at(dst, dst.animations[0], t)[joints1] @ np.linalg.inv(bind1)
        assert np.abs(j0 - j1).max() < 1e-4
    assert ai == len(src.nodes) - 1


def test_anm_alone_in_the_space_of_the_phxbn():
    """glTF -> .anm on its own uses the same (OBJ-centred) space as glTF -> .phxbn + .anm."""
    from helpers.make_examples_import import make_examples
    src = make_examples.wiggle_scene()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both = retromesh.from_scene(src, "phxbn")
        alone = retromesh.from_scene(src, "anm")
        no_mesh = retromesh.from_scene(src, "phxbn", write_mesh=False)
    for a, b in zip(_anm(both).keyframes, alone.keyframes):
        assert np.abs(np.asarray(a.bone_mats) - np.asarray(b.bone_mats)).max() < 1e-6
    assert np.allclose(no_mesh[""].points, both[""].points)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anm_docs())
def test_keyframes_encoded_together_as_one_by_one(doc):
    """jsoncodec.encode_many of the keyframes is their encode() one by one (the same JSON),
    and with raw=True decodes to the same arrays, bit for bit (the kept .anm stub)."""
    import json

    from retromesh import jsoncodec
    from retromesh.extras import load_kept
    from retromesh.formats.overgrowth.anm import AnmFile
    from retromesh.formats.overgrowth.scene_extras import anm_stub
    kfs = list(doc.keyframes)
    assert jsoncodec.encode_many(kfs) == [jsoncodec.encode(k) for k in kfs]
    padded = np.zeros(2, np.dtype({"names": ["a", "b"], "formats": ["<f4", "<i4"],
                                   "offsets": [0, 8], "itemsize": 12}))
    assert jsoncodec.encode_many([padded, padded], raw=True) == [jsoncodec.encode(padded)] * 2
    raw = json.loads(json.dumps(jsoncodec.encode_many(kfs, raw=True)))
    again = [jsoncodec.decode(k) for k in raw]
    assert jsoncodec.dumps(again) == jsoncodec.dumps(kfs)
    kept = load_kept(anm_stub(doc), AnmFile)
    assert kept is not None and len(kept.keyframes) == len(kfs)
    for a, b in zip(kept.keyframes, kfs):
        assert len(a.bone_mats) == 0
        b = copy.copy(b)
        b.bone_mats = a.bone_mats
        assert jsoncodec.dumps(a) == jsoncodec.dumps(b)
