"""Lost Saga native layer: corpus byte round trips, fixtures for every version branch built by
our own writers, writer checks, info/check, JSON dump/build."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import retromesh
from conftest import corpus_params
from helpers.roundtrip import docs_equal, native_round_trip
from retromesh import DocumentError, FormatError, jsoncodec
from retromesh.formats.lostsaga import (
    AniEvent,
    AniFile,
    AniTrack,
    CmsFile,
    ControlPoint,
    MshFile,
    SklFile,
    ani,
    msh,
    samples,
)
from retromesh.formats.lostsaga.msh import SUBMESH_DTYPE

# -- corpus -----------------------------------------------------------------------------------

@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_params("lostsaga"))
def test_corpus_byte_round_trip(path):
    data = path.read_bytes()
    doc = retromesh.read(path)
    assert retromesh.to_bytes(doc) == data
    fmt = retromesh.registry.format_of(doc)
    assert fmt.family == "Lost Saga"
    assert fmt.info(doc)
    assert [p for p in fmt.check(doc) if p.is_error] == []
    # lossless JSON dump/build
    assert retromesh.to_bytes(jsoncodec.loads(jsoncodec.dumps(doc))) == data


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_params("lostsaga", "*.msh"))
def test_corpus_meshes_have_one_mask(path):
    doc = retromesh.read(path)
    assert np.all(doc.bbox[:3] <= doc.bbox[3:6])          # one mask -> a sensible box
    assert doc.positions.min(axis=0) == pytest.approx(doc.bbox[:3], abs=1.0)
    assert doc.faces.dtype == np.uint16 and int(doc.faces.max()) < doc.vertex_count
    if doc.weights is not None:
        used = msh.engine_weight_mask(doc.weights["weight"])
        assert int(doc.weights["bone"][used].max()) < len(doc.bone_names)


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_params("lostsaga", "*.ani"))
def test_corpus_animation(path):
    doc = retromesh.read(path)
    assert doc.version == 4000 and doc.tracks and doc.tracks[0].bone == b"Bip01"
    q = ani.rotations(doc.tracks[0], doc.version)
    assert np.allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-3)
    assert all(np.all(np.diff(t.keys["time"]) > 0) for t in doc.tracks)


# -- fixtures for every version branch ------------------------------------------------------

@pytest.mark.parametrize("version", [2000, 2001, 2002])
def test_mesh_versions(version):
    doc = samples.full_mesh(version=version)
    data, back = native_round_trip(doc, "msh")
    assert back.version == version
    assert (back.control_points is not None) == (version == 2002)
    assert back.billboard_centers is not None and back.tangents is not None
    assert struct.unpack_from("<4s3i", data) == (b"MSH\0", version, 2, doc.vertex_mask)
    # arrays in the engine's order: positions right after the vertex count
    off = 4 + 12 + 28 + 4 + 16 * len(doc.submeshes)
    assert struct.unpack_from("<i", data, off)[0] == doc.vertex_count
    assert np.frombuffer(data, "<f4", 3, off + 4).tolist() == doc.positions[0].tolist()


def test_skinned_mesh_skeleton_and_animations():
    m, s = samples.skinned_column()
    native_round_trip(m, "msh")
    data, back = native_round_trip(s, "skl")
    assert data[:8] == b"SKL\0" + struct.pack("<i", 1000)
    assert back.parent_indices() == [-1, 0, 1, 2]
    for version in (4000, 4001, 4002):
        a = samples.wave_animation(s, version)
        data, back = native_round_trip(a, "ani")
        assert struct.unpack_from("<i", data, 4)[0] == version
        keysize = {4000: 32, 4001: 20, 4002: 24}[version]
        assert back.tracks[1].keys.dtype.itemsize == keysize
        rot = ani.rotations(back.tracks[1], version)
        assert np.allclose(np.linalg.norm(rot, axis=1), 1.0, atol=2e-3)


def test_skeleton_without_linked_name_and_with_trailing_bytes():
    _, s = samples.skinned_column(1)
    s.linked_skeleton = None
    data, back = native_round_trip(s, "skl")
    assert back.linked_skeleton is None
    s.linked_skeleton = b"other.skl"
    s.trailing = b"\x01\x02"
    native_round_trip(s, "skl")


def test_collision_mesh():
    data = retromesh.to_bytes(samples.collision_mesh())     # round trip: tests/test_contract.py
    assert len(data) == 8 + 4 + 48 + 4 + 12 + 2


def test_non_ascii_names_are_kept_as_bytes():
    m, s = samples.skinned_column(1)
    name = "뼈대".encode("cp949")
    s.bones[0].name = name
    s.bones[1].parent = name
    m.bone_names[0] = name
    assert native_round_trip(s, "skl")[1].bones[0].name == name
    assert native_round_trip(m, "msh")[1].bone_names[0] == name


def test_trailing_and_garbage_kept():
    doc = samples.full_mesh(2000)
    doc.trailing = b"\xde\xad\xbe\xef" * 3
    native_round_trip(doc, "msh")


# -- bad input and bad documents ------------------------------------------------------------

def test_bad_magic_and_versions():
    good = retromesh.to_bytes(samples.wave_animation(samples.skinned_column(1)[1]))
    with pytest.raises(FormatError, match="4000, 4001 or 4002") as e:
        retromesh.read(good[:4] + struct.pack("<i", 4003) + good[8:], format="ani")
    assert e.value.offset == 4
    with pytest.raises(FormatError, match="token"):
        retromesh.read(b"XXX\0" + good[4:], format="ani")
    cms = retromesh.to_bytes(CmsFile())
    with pytest.raises(FormatError, match="5000"):
        retromesh.read(cms[:4] + struct.pack("<i", 5700) + cms[8:], format="cms")


def test_huge_count_names_field_path():
    data = bytearray(retromesh.to_bytes(samples.skinned_column(1)[1]))
    struct.pack_into("<i", data, 8, 1 << 30)
    with pytest.raises(retromesh.LimitError) as e:
        retromesh.read(bytes(data), format="skl")
    assert e.value.path and "bone_count" in e.value.path and e.value.offset is not None


def test_truncated_key_array_names_track():
    a = samples.wave_animation(samples.skinned_column(1)[1])
    data = retromesh.to_bytes(a)[:-10]
    with pytest.raises(FormatError) as e:
        retromesh.read(data, format="ani")
    assert "tracks[1]" in e.value.path


def test_writer_refuses_inconsistent_documents():
    doc = samples.full_mesh(2000)
    doc.normals = None
    with pytest.raises(DocumentError, match="normals"):
        retromesh.to_bytes(doc)
    doc = samples.full_mesh(2000)
    doc.vertex_mask &= ~msh.UV1
    with pytest.raises(DocumentError, match="uv1"):
        retromesh.to_bytes(doc)
    doc = samples.full_mesh(2000)
    doc.control_points = []
    with pytest.raises(DocumentError, match="2002"):
        retromesh.to_bytes(doc)
    a = samples.wave_animation(samples.skinned_column(1)[1], 4000)
    a.version = 4001
    with pytest.raises(DocumentError, match="version 4001"):
        retromesh.to_bytes(a)
    with pytest.raises(DocumentError):
        retromesh.to_bytes(AniFile(version=1234))


def test_check_reports_problems():
    doc = samples.full_mesh(2000)
    doc.submeshes = np.array([(0, 10, 0, 999)], SUBMESH_DTYPE)
    doc.faces = doc.faces.copy()
    doc.faces[0, 0] = 60000
    problems = retromesh.registry.get("msh").check(doc)
    assert any("faces refer" in p.message for p in problems)
    assert any("submesh 0" in p.message for p in problems)
    s = SklFile()
    s.bones = samples.skinned_column(1)[1].bones
    s.poses = samples.skinned_column(1)[1].poses
    s.bones[0].parent = s.bones[1].name
    assert any("cycle" in p.message for p in retromesh.registry.get("skl").check(s))
    a = AniFile(tracks=[AniTrack(b"x", 1.0, np.zeros(2, ani.key_dtype(4000)))])
    assert any("same time" in p.message for p in retromesh.registry.get("ani").check(a))


@pytest.mark.parametrize("value", [70_000, -1])
def test_writers_refuse_face_indices_that_do_not_fit_uint16(value):
    from retromesh.formats.lostsaga import CmsFile
    m, _ = samples.skinned_column(1)
    c = CmsFile(positions=np.zeros((3, 3), np.float32), faces=np.array([[0, 1, 2]]))
    for doc in (m, c):
        doc.faces = np.asarray(doc.faces, dtype=np.int64)
        doc.faces[0, 0] = value
        with pytest.raises(retromesh.DocumentError, match="uint16"):
            retromesh.to_bytes(doc)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -3.0, 300.0])
def test_check_of_odd_bone_ids_reports_and_never_raises(bad):
    m, _ = samples.skinned_column(2)
    m.weights["bone"][0, 0] = bad
    problems = retromesh.registry.get("msh").check(m)
    assert any("bone ids" in p.message for p in problems), problems


def test_detection_by_magic():
    data = retromesh.to_bytes(samples.full_mesh(2001))
    assert retromesh.detect(data).name == "msh"
    assert retromesh.detect(retromesh.to_bytes(CmsFile())).name == "cms"
    assert {f.name for f in retromesh.formats() if f.family == "Lost Saga"} == {
        "msh", "skl", "ani", "cms", "lsmat"}


def test_events_and_weights():
    a = AniFile(version=4000, events=[AniEvent(b"fire", b"", 12.5)], total_time=40,
                tracks=[AniTrack(b"Bip01", 0.5, np.zeros(1, ani.key_dtype(4000)))])
    data, back = native_round_trip(a, "ani")
    assert back.events[0].time == 12.5 and back.tracks[0].weight == 0.5


def test_control_points():
    doc = samples.full_mesh(2002)
    doc.control_points.append(ControlPoint(b"", b"", b"", np.zeros(3, np.float32)))
    _, back = native_round_trip(doc, "msh")
    assert len(back.control_points) == 3 and back.control_points[0].extra == b"grip"


def test_empty_mesh():
    native_round_trip(MshFile(), "msh")


def test_json_dump_build_of_fixtures():
    m, s = samples.skinned_column(2)
    s2 = samples.skinned_column(1)[1]
    s2.linked_skeleton = None
    docs = [m, s, s2, samples.full_mesh(2002), samples.full_mesh(2001), CmsFile()]
    docs += [samples.wave_animation(s, v) for v in (4000, 4001, 4002)]
    for doc in docs:
        data = retromesh.to_bytes(doc)
        back = jsoncodec.loads(jsoncodec.dumps(doc))
        assert docs_equal(back, doc) and retromesh.to_bytes(back) == data
