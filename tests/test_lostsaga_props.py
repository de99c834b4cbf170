"""Lost Saga properties: generated native documents round-trip (read(write(doc)) == doc and
write(read(b)) == b), and malformed input raises only FormatError (corpus files, fixtures and
random byte mutations, through to_scene too)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import retromesh
from conftest import corpus_params
from helpers.malformed import assert_malformed_safe, read_or_format_error
from helpers.roundtrip import docs_equal
from retromesh.formats.lostsaga import (
    AniEvent,
    AniFile,
    AniTrack,
    CmsFile,
    ControlPoint,
    MshFile,
    SklBone,
    SklFile,
    ani,
    msh,
    samples,
)
from retromesh.formats.lostsaga.skl import POSE_DTYPE

name = st.binary(max_size=10)
f32 = st.floats(-1e5, 1e5, allow_nan=False, width=32)


def farray(draw, shape):
    n = int(np.prod(shape))
    return np.array(draw(st.lists(f32, min_size=n, max_size=n)), np.float32).reshape(shape)


@st.composite
def msh_docs(draw):
    version = draw(st.sampled_from([2000, 2001, 2002, 1999]))
    mask = draw(st.integers(0, 0x3FFF))
    n = draw(st.integers(0, 6))
    doc = MshFile(version=version, mesh_type=draw(st.integers(0, 6)), vertex_mask=mask,
                  bbox=farray(draw, (7,)), vertex_count=n)
    k = draw(st.integers(0, 3))
    doc.submeshes = np.array([tuple(draw(st.lists(st.integers(-5, 50), min_size=4, max_size=4)))
                              for _ in range(k)], msh.SUBMESH_DTYPE).reshape(k)
    for bit, attr, dtype, width in msh.ARRAYS:
        if mask & bit:
            if dtype == "<u4":
                setattr(doc, attr, np.array(draw(st.lists(st.integers(0, 2**32 - 1), min_size=n,
                                                          max_size=n)), np.uint32).reshape(n))
            else:
                setattr(doc, attr, farray(draw, (n, width)))
    if mask & msh.WEIGHTS:
        doc.bone_names = draw(st.lists(name, max_size=4))
        w = np.zeros(n, msh.WEIGHT_DTYPE)
        w["weight"] = farray(draw, (n, 4))
        w["bone"] = farray(draw, (n, 4))
        doc.weights = w
    if mask & msh.POSITION2:
        doc.billboard_centers = farray(draw, (n, 3))
    nf = draw(st.integers(0, 4))
    doc.faces = np.array(draw(st.lists(st.integers(0, 65535), min_size=3 * nf, max_size=3 * nf)),
                         np.uint16).reshape(nf, 3)
    if version == 2002:
        doc.control_points = [ControlPoint(draw(name), draw(name), draw(name), farray(draw, (3,)))
                              for _ in range(draw(st.integers(0, 2)))]
    doc.trailing = draw(st.binary(max_size=6))
    return doc


@st.composite
def skl_docs(draw):
    n = draw(st.integers(0, 4))
    poses = np.zeros(n, POSE_DTYPE)
    for f in POSE_DTYPE.names:
        poses[f] = farray(draw, poses[f].shape)
    bones = [SklBone(draw(name), draw(name), draw(st.lists(name, max_size=2))) for _ in range(n)]
    linked = draw(st.none() | name)
    trailing = draw(st.binary(max_size=5)) if linked is not None else b""
    return SklFile(version=draw(st.integers(-2**31, 2**31 - 1)), bones=bones, poses=poses,
                   linked_skeleton=linked, trailing=trailing)


@st.composite
def ani_docs(draw):
    version = draw(st.sampled_from([4000, 4001, 4002]))
    dt = ani.key_dtype(version)
    tracks = []
    for _ in range(draw(st.integers(0, 3))):
        nk = draw(st.integers(0, 4))
        raw = draw(st.binary(min_size=nk * dt.itemsize, max_size=nk * dt.itemsize))
        keys = np.frombuffer(raw, dt).copy()
        for f in dt.names:
            if keys[f].dtype.kind == "f":
                keys[f] = np.nan_to_num(keys[f])
        tracks.append(AniTrack(draw(name), draw(f32), keys))
    events = [AniEvent(draw(name), draw(name), draw(f32)) for _ in range(draw(st.integers(0, 2)))]
    return AniFile(version=version, events=events, total_time=draw(st.integers(-10, 10**6)),
                   tracks=tracks, trailing=draw(st.binary(max_size=5)))


@st.composite
def cms_docs(draw):
    n, nf = draw(st.integers(0, 5)), draw(st.integers(0, 4))
    return CmsFile(positions=farray(draw, (n, 3)),
                   faces=np.array(draw(st.lists(st.integers(0, 65535), min_size=3 * nf,
                                                max_size=3 * nf)), np.uint16).reshape(nf, 3),
                   trailing=draw(st.binary(max_size=5)))


def lsmat_docs():
    from retromesh.formats.lostsaga import MaterialScript
    return st.builds(MaterialScript, st.binary(max_size=80))


STRATEGIES = {"msh": msh_docs(), "skl": skl_docs(), "ani": ani_docs(), "cms": cms_docs(),
              "lsmat": lsmat_docs()}


@pytest.mark.filterwarnings("ignore::retromesh.LossWarning")
@pytest.mark.parametrize("ext", sorted(STRATEGIES))
def test_generated_documents_round_trip(ext):
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(STRATEGIES[ext])
    def check(doc):
        data = retromesh.to_bytes(doc)
        back = retromesh.read(data, format=ext)
        assert docs_equal(back, doc)
        assert retromesh.to_bytes(back) == data
        # converting never raises anything but FormatError (or warns)
        read_or_format_error(data, f"x.{ext}", format=ext, scene=True)
    check()


# -- malformed input ----------------------------------------------------------------------------

def fixtures() -> list[tuple[str, bytes]]:
    m, s = samples.skinned_column(2)
    out = [("column.msh", retromesh.to_bytes(m)), ("column.skl", retromesh.to_bytes(s))]
    for v in (4000, 4001, 4002):
        out.append((f"w{v}.ani", retromesh.to_bytes(samples.wave_animation(s, v, keys=4))))
    for v in (2000, 2002):
        out.append((f"full{v}.msh", retromesh.to_bytes(samples.full_mesh(v))))
    out.append(("c.cms", retromesh.to_bytes(CmsFile(
        positions=np.zeros((3, 3), np.float32), faces=np.array([[0, 1, 2]], np.uint16)))))
    return out


@pytest.mark.filterwarnings("ignore::retromesh.LossWarning")
@pytest.mark.parametrize("fname,data", fixtures(), ids=[f for f, _ in fixtures()])
def test_malformed_fixtures(fname, data):
    assert_malformed_safe(data, fname, scene=True)


@pytest.mark.corpus
@pytest.mark.filterwarnings("ignore::retromesh.LossWarning")
@pytest.mark.parametrize("path", corpus_params("lostsaga"))
def test_malformed_corpus(path):
    data = path.read_bytes()
    # the scene conversion of the big files is exercised on truncations only (speed)
    assert_malformed_safe(data, path.name, scene=len(data) < 50_000)


@pytest.mark.filterwarnings("ignore::retromesh.LossWarning")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(fixtures()), st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)),
                                             min_size=1, max_size=8))
def test_mutated_bytes_raise_only_format_error(item, edits):
    fname, data = item
    b = bytearray(data)
    for pos, value in edits:
        b[pos % len(b)] = value
    doc = read_or_format_error(bytes(b), fname, scene=True)
    if doc is not None and not _scalar_nan(doc):
        assert retromesh.to_bytes(doc) == bytes(b)           # whatever parses, round-trips


def _scalar_nan(doc) -> bool:
    # event times and track weights are Python floats: a signalling NaN there is written back
    # quiet (documented in ani.py); every other float is kept as float32 bits
    if isinstance(doc, AniFile):
        return any(np.isnan(e.time) for e in doc.events) or any(np.isnan(t.weight)
                                                               for t in doc.tracks)
    return False


def test_parent_cycle_is_a_format_error():
    _, s = samples.skinned_column(2)
    s.bones[0].parent = s.bones[2].name
    with pytest.raises(retromesh.FormatError, match="cycle"):
        retromesh.load(retromesh.to_bytes(s), format="skl")


def test_cycle_search_is_linear_and_exact():
    from retromesh.formats.lostsaga.skl import SklBone, SklFile, check
    n = 50_000                                    # a quadratic walk would take minutes here
    names = [b"b%d" % i for i in range(n)]
    chain = SklFile(bones=[SklBone(names[i], names[i - 1] if i else b"") for i in range(n)])
    assert chain.cycle_bone() is None
    chain.bones[0].parent = names[-1]
    assert chain.cycle_bone() is not None
    loop = SklFile(bones=[SklBone(b"a", b"r"), SklBone(b"b", b"b"), SklBone(b"r")])
    assert loop.cycle_bone() == 1
    assert "cycle" in " ".join(f.message for f in check(loop))


@pytest.mark.filterwarnings("ignore::retromesh.LossWarning")
def test_bad_submesh_range_is_a_format_error():
    doc = samples.full_mesh(2000)
    doc.submeshes = doc.submeshes.copy()
    doc.submeshes[1]["face_count"] = 10_000
    data = retromesh.to_bytes(doc)
    with pytest.raises(retromesh.FormatError, match="submesh") as e:
        retromesh.load(data, format="msh")
    assert e.value.path == "submeshes[1].index_start"
    assert np.frombuffer(data, "<i4", 2, e.value.offset).tolist() == [24, 10_000]


@pytest.mark.filterwarnings("ignore::retromesh.LossWarning")
@pytest.mark.parametrize("kind", ["column", "full2002", "cms"])
def test_face_errors_after_parsing_name_the_byte(kind):
    doc = (samples.skinned_column(2)[0] if kind == "column" else samples.full_mesh(2002)
           if kind == "full2002" else CmsFile(positions=np.zeros((5, 3), np.float32),
                                              faces=np.array([[0, 1, 2], [2, 3, 4]], np.uint16)))
    doc.faces = doc.faces.copy()
    doc.faces[1, 2] = 999
    data = retromesh.to_bytes(doc)
    with pytest.raises(retromesh.FormatError, match="vertex count") as e:
        retromesh.load(data)
    assert e.value.path == "faces[1]"
    assert np.frombuffer(data, "<u2", 1, e.value.offset)[0] == 999


def test_parent_cycle_error_names_the_parent_field():
    _, s = samples.skinned_column(3)
    s.bones[2].parent = s.bones[3].name
    data = retromesh.to_bytes(s)
    with pytest.raises(retromesh.FormatError, match="cycle") as e:
        retromesh.load(data)
    i = int(e.value.path[len("bones["):].split("]")[0])
    n = int(np.frombuffer(data, "<i4", 1, e.value.offset)[0])
    assert data[e.value.offset + 4:e.value.offset + 4 + n] == s.bones[i].parent


@pytest.mark.filterwarnings("ignore::retromesh.LossWarning")
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(msh_docs(), skl_docs(), ani_docs())
def test_any_combination_converts_or_raises_format_error(m, s, a):
    from pathlib import Path
    fmt = retromesh.registry.get("msh")
    try:
        scene = retromesh.registry.convert_to_scene(fmt, m, "x.msh", skeleton=s, animations=[a])
    except retromesh.FormatError:
        return
    glb = retromesh.registry.get("glb")
    glb.outputs(glb.from_scene(scene), Path("x.glb"))       # the glTF writer takes the scene


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("material technique pass texture_unit {}\n\t/01."
                                              "xyz_")), max_size=200) | st.binary(max_size=100))
def test_material_script_parser_never_raises(text):
    from retromesh.formats.lostsaga import material
    data = text if isinstance(text, bytes) else text.encode()
    for m in material.parse(data):
        assert isinstance(m.name, str) and all(isinstance(u.tex_coord_set, int)
                                               for u in m.texture_units)


def test_deeply_nested_material_script_does_not_recurse(tmp_path):
    from retromesh.formats.lostsaga import material
    deep = ("material\n{\n" + "technique\n{\n" * 5_000 + "shader_group Deep\n").encode()
    assert material.parse(deep)[0].shader_group == "Deep"
    m, _ = samples.skinned_column(1)
    (tmp_path / "m.msh").write_bytes(retromesh.to_bytes(m))
    (tmp_path / "m.txt").write_bytes(deep)
    with pytest.warns(retromesh.LossWarning):
        assert retromesh.load(tmp_path / "m.msh").materials[0].name == "m/Sub1"
