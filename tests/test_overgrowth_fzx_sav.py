"""Overgrowth .fzx ragdoll volumes and .sav save files."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import retromesh
from helpers.gltfcheck import assert_valid
from helpers.malformed import assert_malformed_safe, read_or_format_error
from retromesh import DocumentError, FormatError
from retromesh.formats.overgrowth import samples
from retromesh.formats.overgrowth.fzx import FzxFile, FzxObject, parse_label
from retromesh.formats.overgrowth.sav import SavArray, SavFile, SavInt, SavLegacyLevel, SavLevel, SavPair


def test_fzx_round_trip_and_layout():
    doc = samples.fzx_sample()
    data = retromesh.to_bytes(doc)
    assert data[:8] == b"\xd3FZX\r\n \n" and data[-3:] == b"FZX"
    assert int.from_bytes(data[-7:-3], "little") == len(data) - 7
    back = retromesh.read(data, format="fzx")
    assert back == doc
    assert retromesh.to_bytes(back) == data
    assert retromesh.detect(data).name == "fzx"


def test_fzx_footer_errors():
    data = bytearray(retromesh.to_bytes(samples.fzx_sample()))
    bad = bytearray(data)
    bad[-7:-3] = (len(data)).to_bytes(4, "little")
    with pytest.raises(FormatError, match="footer file_size"):
        retromesh.read(bytes(bad), format="fzx")
    bad = bytearray(data)
    bad[-1:] = b"Y"
    with pytest.raises(FormatError, match="footer mark"):
        retromesh.read(bytes(bad), format="fzx")
    with pytest.raises(FormatError, match="version 1"):
        retromesh.read(bytes(data[:8] + (2).to_bytes(4, "little") + data[12:]), format="fzx")
    with pytest.raises(DocumentError):
        retromesh.to_bytes(FzxFile(1, [FzxObject(b"x" * 256)]))


def test_fzx_scene(tmp_path):
    doc = samples.fzx_sample()
    scene = retromesh.registry.get("fzx").to_scene(doc)
    names = [n.name for n in scene.nodes]
    assert names[1:] == ["Head Sphere", "Chest Box", "L Upperarm Capsule M",
                         "L Upperarm Capsule M (mirror)"]
    head, chest, arm, mirror = scene.nodes[1:]
    # Blender Z-up location (x, y, z) -> (x, z, -y)
    assert np.allclose(head.translation, [0, 0.75, 0])
    assert np.allclose(arm.translation, [0.25, 0.5, -0.0625])
    assert np.allclose(mirror.translation, [-0.25, 0.5, -0.0625])
    # w,x,y,z Blender -> quaternion(x=r1, y=r3, z=-r2, w=r0)
    r = doc.objects[2].rotation
    assert np.allclose(arm.rotation, np.array([r[1], r[3], -r[2], r[0]]) / np.linalg.norm(r), atol=1e-6)
    # sizes: sphere radius = mean scale; box half extents (sx, sz, sy)
    sphere = scene.meshes[head.mesh].primitives[0].positions
    assert np.allclose(np.ptp(sphere, 0), 0.25, atol=1e-3)
    box = scene.meshes[chest.mesh].primitives[0].positions
    assert np.allclose(np.ptp(box, 0), [0.3125, 0.5, 0.25])
    cap = scene.meshes[arm.mesh].primitives[0].positions
    assert np.isclose(np.ptp(cap[:, 1]), 2 * (0.125 + 0.046875), atol=1e-5)
    assert parse_label(b"L Eartip Sphere M") == {"side": "l", "shape": "sphere", "part": "eartip",
                                                  "mirror": True}
    retromesh.save(scene, tmp_path / "f.glb")
    info = assert_valid(tmp_path / "f.glb")
    assert info["drawCallCount"] == 3          # the mirrored copy shares its mesh
    import trimesh
    assert len(trimesh.load(tmp_path / "f.glb").geometry) >= 3


@pytest.mark.parametrize("version", [1, 2, 3])
def test_sav_round_trip(version, tmp_path):
    doc = samples.sav_sample(version)
    data = retromesh.to_bytes(doc)
    assert data.startswith(b"Overgrowth Save") and int.from_bytes(data[15:17], "little") == version
    back = retromesh.read(data, format="sav")
    assert back == doc and retromesh.to_bytes(back) == data
    assert_malformed_safe(data, "x.sav")


def test_sav_v3_layout():
    doc = samples.sav_sample(3)
    data = retromesh.to_bytes(doc)
    lv = doc.levels[0]
    # three names, md5, then string pairs, arrays, ints
    off = 15 + 2 + 2
    for s in (lv.campaign_id, lv.save_category, lv.save_name):
        assert int.from_bytes(data[off:off + 2], "little") == len(s)
        off += 2 + len(s)
    assert data[off:off + 16] == lv.md5
    assert data.endswith((-2).to_bytes(4, "little", signed=True))


def test_sav_rejects():
    with pytest.raises(FormatError, match="version"):
        retromesh.read(b"Overgrowth Save" + (4).to_bytes(2, "little") + b"\0\0", format="sav")
    with pytest.raises(FormatError, match="marker"):
        retromesh.read(b"Undergrowth Save\0\0\0", format="sav")
    with pytest.raises(DocumentError):
        retromesh.to_bytes(SavFile(3, [SavLegacyLevel()]))


def test_sav_has_no_scene():
    with pytest.raises(retromesh.UnsupportedError):
        retromesh.load(retromesh.to_bytes(samples.sav_sample()), format="sav")


def test_sav_dump_build_cli(tmp_path):
    src = tmp_path / "a.sav"
    retromesh.write(samples.sav_sample(), src)
    r = subprocess.run([sys.executable, "-m", "retromesh", "dump", str(src)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    text = r.stdout
    data = json.loads(text)
    assert "$b64" in json.dumps(data)                 # b"caf\xe9" is not UTF-8: kept as base64
    (tmp_path / "a.json").write_text(text.replace("progress", "progresz"))
    r = subprocess.run([sys.executable, "-m", "retromesh", "build", str(tmp_path / "a.json"),
                        "-o", str(tmp_path / "b.sav")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    b = retromesh.read(tmp_path / "b.sav")
    assert b.levels[0].values[0].key == b"progresz"
    assert b.levels[0].values[1].value == b"caf\xe9"


_b = st.binary(max_size=8)


@st.composite
def sav_docs(draw):
    v = draw(st.sampled_from([1, 2, 3]))
    levels = []
    for _ in range(draw(st.integers(0, 3))):
        md5 = draw(st.binary(min_size=16, max_size=16))
        pairs = [SavPair(draw(_b), draw(_b)) for _ in range(draw(st.integers(0, 3)))]
        if v < 3:
            levels.append(SavLegacyLevel(draw(_b), md5, pairs))
        else:
            levels.append(SavLevel(draw(_b), draw(_b), draw(_b), md5, pairs,
                                   [SavArray(draw(_b), draw(st.lists(_b, max_size=3)))
                                    for _ in range(draw(st.integers(0, 2)))],
                                   [SavInt(draw(_b), draw(st.integers(-2**31, 2**31 - 1)))
                                    for _ in range(draw(st.integers(0, 2)))]))
    return SavFile(v, levels, draw(st.binary(max_size=4)))


@settings(max_examples=100, deadline=None)
@given(sav_docs())
def test_hypothesis_sav(doc):
    data = retromesh.to_bytes(doc)
    back = retromesh.read(data, format="sav")
    assert back == doc and retromesh.to_bytes(back) == data


_f32 = st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-100, max_value=100)


@st.composite
def fzx_docs(draw):
    objs = []
    for _ in range(draw(st.integers(0, 4))):
        label = draw(st.sampled_from([b"Head Sphere", b"L Thigh Capsule M", b"Chest Box", b"x"])) \
            if draw(st.booleans()) else draw(st.binary(max_size=20))
        vals = draw(st.lists(_f32, min_size=10, max_size=10))
        objs.append(FzxObject(label, tuple(vals[:4]), tuple(vals[4:7]), tuple(vals[7:])))
    return FzxFile(1, objs)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fzx_docs())
def test_hypothesis_fzx(doc):
    data = retromesh.to_bytes(doc)
    back = retromesh.read(data, format="fzx")
    assert back == doc and retromesh.to_bytes(back) == data
    read_or_format_error(data, "x.fzx", scene=True)


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_hypothesis_mutations(data):
    fmt = data.draw(st.sampled_from(["fzx", "sav"]))
    doc = samples.fzx_sample() if fmt == "fzx" else samples.sav_sample()
    base = bytearray(retromesh.to_bytes(doc))
    for _ in range(data.draw(st.integers(1, 6))):
        i = data.draw(st.integers(0, len(base) - 1))
        base[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(base)))
    read_or_format_error(bytes(base[:cut]), f"x.{fmt}", scene=True)


def test_fzx_centre_from_mesh_and_scale(tmp_path):
    (tmp_path / "s.fzx").write_bytes(retromesh.to_bytes(samples.fzx_sample()))
    (tmp_path / "s.obj").write_bytes(samples.stick_obj())
    scene = retromesh.load(tmp_path / "s.fzx", mesh=tmp_path / "s.obj", body_scale=2)
    assert np.allclose(scene.nodes[0].scale, 2)
    assert np.allclose(scene.nodes[0].extras["center"], samples.OBJ_OFFSET)
    assert np.allclose(scene.nodes[1].translation, np.array([0, 0.75, 0]) - samples.OBJ_OFFSET)
    with pytest.raises(FormatError):
        retromesh.load(tmp_path / "s.fzx", body_scale=-1)
