"""LithTech .abc native layer: fixtures of every version, byte round trips, generated documents,
malformed input."""
from __future__ import annotations

import dataclasses
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import retromesh
from conftest import corpus_params
from helpers.malformed import assert_malformed_safe, read_or_format_error
from retromesh import FormatError
from retromesh.formats.lithtech import abc, abc_v6, samples
from retromesh.formats.lithtech.abc import (
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
from retromesh.formats.lithtech.abc_v6 import (
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
from retromesh.formats.lithtech.common import TRANSFORM, RawSection

VERSIONS = samples.SAMPLE_VERSIONS


def same(a, b, path="doc") -> None:
    """Assert two native documents are equal (dataclasses, arrays bit for bit, lists...)."""
    if dataclasses.is_dataclass(a):
        assert type(a) is type(b), f"{path}: {type(a).__name__} != {type(b).__name__}"
        for f in dataclasses.fields(a):
            same(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a2, b2 = np.asarray(a), np.asarray(b)
        assert a2.dtype == b2.dtype and a2.shape == b2.shape, \
            f"{path}: {a2.dtype}{a2.shape} != {b2.dtype}{b2.shape}"
        assert a2.tobytes() == b2.tobytes(), f"{path}: values differ"
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]")
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def reparse(data: bytes):
    return retromesh.read(data, format="abc")


# -- fixtures of every version -------------------------------------------------------------
# every version's sample: byte round trip, detection, damaged copies in tests/test_contract.py
@pytest.mark.parametrize("version", [9, 10, 11, 12, 13])
def test_sample_features_v9(version):
    doc = samples.build_sample(version)
    assert doc.version == version
    assert len(doc.pieces) == 2 and all(len(p.lods) == 2 for p in doc.pieces)
    lod = doc.pieces[0].lods[0]
    assert lod.faces.shape[1] == 3 and lod.vertices["weight_count"].max() >= 3
    assert len(doc.nodes) == 6 and any(n.flags & 2 for n in doc.nodes)
    assert len(doc.weight_sets) == 2 and len(doc.child_models) == 2
    assert len(doc.animations) == 2 and any(s for a in doc.animations for s in a.key_strings)
    assert len(doc.sockets) == 2 and len(doc.anim_bindings) == 2
    assert (doc.pieces[0].lod_weight is None) == (version == 9)
    assert (doc.animations[0].interpolation_ms is None) == (version < 12)
    assert (doc.header.unknown_v13 is not None) == (version == 13)
    assert doc.animations[0].transforms.dtype == (TRANSFORM13 if version == 13 else TRANSFORM)
    h = doc.header
    assert h.node_count == 6 and h.lod_count == 2 and h.string_count > 0
    assert retromesh.registry.get("abc").check(doc) == []


def test_sample_features_v6():
    doc = samples.build_sample(6)
    assert isinstance(doc, AbcV6Model)
    assert doc.header.token == abc_v6.TOKEN
    assert sum(1 for n in doc.nodes if len(n.md_verts)) == 1
    assert len(doc.animations) == 2 and doc.transform_info.flip_mat == 1
    assert doc.animations[0].tracks[2].deform.shape == (3, 4, 3)
    raw = samples.build_sample(6, transform_info=False)
    assert any(isinstance(s, RawSection) and s.name == b"TriStrips" for s in raw.sections)
    assert retromesh.to_bytes(reparse(retromesh.to_bytes(raw))) == retromesh.to_bytes(raw)


def test_v13_child_models_both_layouts():
    doc = samples.build_sample(13)
    cm = doc._find(ChildModelsSection)
    assert cm.extra
    cm.extra = False
    for c in cm.child_models:
        plain = np.zeros(len(c.transforms), TRANSFORM)
        plain["location"] = c.transforms["location"]
        plain["rotation"] = c.transforms["rotation"]
        c.transforms = plain
    data = retromesh.to_bytes(doc)
    back = reparse(data)
    assert not back._find(ChildModelsSection).extra
    assert retromesh.to_bytes(back) == data


def test_gaps_and_unknown_sections_kept():
    doc = samples.build_sample(12)
    for s in doc.sections:
        if hasattr(s, "gap"):
            s.gap = b"\xde\xad" * 3
    doc.sections.insert(2, RawSection(name=b"Mystery", data=b"\x01\x02\x03"))
    data = retromesh.to_bytes(doc)
    back = reparse(data)
    same(doc, back)
    assert retromesh.to_bytes(back) == data


def test_nodes_section_without_weight_sets():
    doc = samples.build_sample(9)
    doc._find(NodesSection).weight_sets = None
    data = retromesh.to_bytes(doc)
    back = reparse(data)
    assert back._find(NodesSection).weight_sets is None
    assert retromesh.to_bytes(back) == data


def test_recount_and_check():
    doc = samples.build_sample(12)
    doc.header.face_count += 1
    problems = retromesh.registry.get("abc").check(doc)
    assert any("face_count" in p.message and not p.is_error for p in problems)
    abc.recount(doc)
    assert retromesh.registry.get("abc").check(doc) == []


def test_writer_rejects_inconsistent_documents():
    doc = samples.build_sample(12)
    doc.nodes.pop()
    with pytest.raises(retromesh.DocumentError):
        retromesh.to_bytes(doc)
    doc = samples.build_sample(12)
    doc.pieces[0].lods[0].vertices["weight_count"][0] += 1
    with pytest.raises(retromesh.DocumentError):
        retromesh.to_bytes(doc)


def test_info_and_json_codec():
    from retromesh import jsoncodec
    for v in VERSIONS:
        doc = samples.build_sample(v)
        info = retromesh.registry.get("abc").info(doc)
        assert info["version"] == v and info["animations"] == 2
        back = jsoncodec.loads(jsoncodec.dumps(doc))
        assert retromesh.to_bytes(back) == retromesh.to_bytes(doc)


def test_version_errors():
    data = bytearray(samples.sample_bytes(12))
    struct.pack_into("<I", data, 12, 14)
    with pytest.raises(retromesh.UnknownFormatError):
        retromesh.detect(bytes(data))
    with pytest.raises(FormatError) as e:
        retromesh.read(bytes(data), format="abc")
    assert e.value.offset is not None and "version" in str(e.value)


def test_offset_loop_rejected():
    data = bytearray(samples.sample_bytes(12))
    # first section's next offset pointing back at itself
    struct.pack_into("<i", data, 8, 0)
    with pytest.raises(FormatError):
        retromesh.read(bytes(data), format="abc")


# -- corpus (none is reachable for ABC; the conformance hook is ready) ---------------------
@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_params("abc", "*.abc", "*.ABC"))
def test_corpus_round_trip(path):
    data = path.read_bytes()
    assert retromesh.to_bytes(retromesh.read(path)) == data
    assert_malformed_safe(data, path.name, scene=True)


# -- malformed input (conversions of damaged files may warn about what they drop) ---------
pytestmark = pytest.mark.filterwarnings("ignore::retromesh.LossWarning")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([6, 9, 12, 13]), st.data())
def test_mutated_bytes(version, data):
    raw = bytearray(samples.sample_bytes(version))
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] = data.draw(st.integers(0, 255))
    read_or_format_error(bytes(raw), "m.abc", scene=True)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=120))
def test_garbage_after_header_tag(tail):
    read_or_format_error(b"\x06\x00Header" + tail, "g.abc", scene=True)


# -- generated documents -------------------------------------------------------------------
f32 = st.floats(-1e6, 1e6, allow_nan=False, width=32)
name = st.binary(max_size=10)


def vec(n):
    return st.tuples(*[f32] * n)


def records(dtype, n):
    dtype = np.dtype(dtype)

    def build(raw):
        arr = np.frombuffer(raw, dtype).copy()
        for f in dtype.names:
            if arr[f].dtype.kind == "f":
                arr[f] = np.nan_to_num(arr[f])
        return arr
    return st.binary(min_size=n * dtype.itemsize, max_size=n * dtype.itemsize).map(build)


@st.composite
def lods(draw):
    nf = draw(st.integers(0, 3))
    faces = draw(records(CORNER, nf * 3)).reshape(nf, 3)
    nv = draw(st.integers(0, 4))
    verts = draw(records(VERTEX, nv))
    verts["weight_count"] = draw(st.lists(st.integers(0, 3), min_size=nv, max_size=nv)) if nv else []
    weights = draw(records(WEIGHT, int(verts["weight_count"].sum())))
    return Lod(faces=faces, vertices=verts, weights=weights)


@st.composite
def abc_models(draw):
    v = draw(st.sampled_from(abc.VERSIONS))
    nn = draw(st.integers(0, 3))
    nl = draw(st.integers(0, 2))
    gap = st.binary(max_size=4)
    nd = draw(st.integers(0, 2))
    h = HeaderSection(version=v, node_count=nn, lod_count=nl,
                      keyframe_count=draw(st.integers(0, 2**32 - 1)),
                      unknown_v13=draw(st.integers(0, 2**32 - 1)) if v >= 13 else None,
                      command_string=draw(name), internal_radius=draw(f32),
                      lod_distance_count=nd, padding=draw(st.binary(min_size=60, max_size=60)),
                      lod_distances=np.array(draw(st.lists(f32, min_size=nd, max_size=nd)), "<f4"),
                      gap=draw(gap))
    secs = []
    pieces = [Piece(material_index=draw(st.integers(0, 65535)), specular_power=draw(f32),
                    specular_scale=draw(f32), lod_weight=draw(f32) if v > 9 else None,
                    unknown=draw(st.integers(0, 65535)), name=draw(name),
                    lods=[draw(lods()) for _ in range(nl)]) for _ in range(draw(st.integers(0, 2)))]
    secs.append(PiecesSection(weight_count=draw(st.integers(0, 99)), pieces=pieces, gap=draw(gap)))
    nodes = [Node(name=draw(name), index=draw(st.integers(0, 65535)), flags=draw(st.integers(0, 255)),
                  matrix=np.array(draw(st.lists(f32, min_size=16, max_size=16)), "<f4").reshape(4, 4),
                  child_count=draw(st.integers(0, 3))) for _ in range(nn)]
    if draw(st.booleans()):
        secs.append(NodesSection(nodes=nodes, weight_sets=None))
    else:
        sets = [WeightSet(name=draw(name), weights=np.array(draw(st.lists(f32, max_size=3)), "<f4"))
                for _ in range(draw(st.integers(0, 2)))]
        secs.append(NodesSection(nodes=nodes, weight_sets=sets, gap=draw(gap)))
    extra = v >= 13 and nn > 0 and draw(st.booleans())
    cms = [ChildModel(name=draw(name), build_number=draw(st.integers(0, 2**32 - 1)),
                      transforms=draw(records(TRANSFORM13 if extra else TRANSFORM, nn)))
           for _ in range(draw(st.integers(0, 2)))]
    if not cms:
        extra = False
    secs.append(ChildModelsSection(child_models=cms, extra=extra,
                                   gap=b"" if v >= 13 else draw(gap)))
    anims = []
    for _ in range(draw(st.integers(0, 2))):
        nk = draw(st.integers(0, 3))
        anims.append(Animation(
            extents=draw(vec(3)), name=draw(name), unknown=draw(st.integers(-2**31, 2**31 - 1)),
            interpolation_ms=draw(st.integers(0, 2**32 - 1)) if v >= 12 else None,
            key_times=np.array(draw(st.lists(st.integers(0, 2**32 - 1), min_size=nk, max_size=nk)), "<u4"),
            key_strings=draw(st.lists(name, min_size=nk, max_size=nk)),
            markers=np.array(draw(st.lists(st.integers(-2**31, 2**31 - 1), min_size=nn, max_size=nn)), "<i4")
            if v >= 13 else None,
            transforms=draw(records(TRANSFORM13 if v >= 13 else TRANSFORM, nn * nk)).reshape(nn, nk)))
    secs.append(AnimationSection(animations=anims, gap=draw(gap)))
    secs.append(SocketsSection(sockets=[Socket(node=draw(st.integers(0, 9)), name=draw(name),
                                               rotation=draw(vec(4)), location=draw(vec(3)))
                                        for _ in range(draw(st.integers(0, 2)))], gap=draw(gap)))
    secs.append(AnimBindingsSection(bindings=[AnimBinding(name=draw(name), extents=draw(vec(3)),
                                                          origin=draw(vec(3)))
                                              for _ in range(draw(st.integers(0, 2)))], gap=draw(gap)))
    secs.append(RawSection(name=b"TriStrips", data=draw(st.binary(max_size=6))))
    secs = draw(st.permutations(secs))
    keep = draw(st.lists(st.booleans(), min_size=len(secs), max_size=len(secs)))
    return AbcModel(sections=[h] + [s for s, k in zip(secs, keep) if k])


@st.composite
def v6_models(draw):
    gap = st.binary(max_size=4)
    # a random tree in depth-first order: each node hangs below a node on the current path
    nn = draw(st.integers(1, 4))
    counts, path = [0], [0]
    for i in range(1, nn):
        depth = draw(st.integers(0, len(path) - 1))
        counts[path[depth]] += 1
        path = path[:depth + 1] + [i]
        counts.append(0)
    md = [draw(st.integers(0, 2)) for _ in range(nn)]
    nodes = [NodeV6(bounds_min=draw(vec(3)), bounds_max=draw(vec(3)), name=draw(name),
                    index=draw(st.integers(0, 65535)), flags=draw(st.integers(0, 255)),
                    md_verts=np.array(draw(st.lists(st.integers(0, 65535), min_size=m, max_size=m)), "<u2"),
                    child_count=counts[i]) for i, m in enumerate(md)]
    nl = draw(st.integers(0, 2))
    geo = GeometryV6(bounds_min=draw(vec(3)), bounds_max=draw(vec(3)),
                     vertex_start=np.array(draw(st.lists(st.integers(0, 65535), min_size=nl + 1,
                                                         max_size=nl + 1)), "<u2"),
                     faces=draw(records(FACE_V6, draw(st.integers(0, 3)))),
                     normal_vertex_count=draw(st.integers(0, 99)),
                     vertices=draw(records(VERTEX_V6, draw(st.integers(0, 4)))), gap=draw(gap))
    anims = []
    for _ in range(draw(st.integers(0, 2))):
        nk = draw(st.integers(0, 2))
        tracks = [TrackV6(transforms=draw(records(TRANSFORM, nk)),
                          deform=draw(records([("b", "u1")], nk * m * 3)).view("u1").reshape(nk, m, 3)
                          if m else None,
                          scale=draw(vec(3)), translate=draw(vec(3))) for m in md]
        anims.append(AnimationV6(name=draw(name), length=draw(st.integers(0, 2**32 - 1)),
                                 bounds_min=draw(vec(3)), bounds_max=draw(vec(3)),
                                 keys=draw(records(KEY_V6, nk)),
                                 key_strings=draw(st.lists(name, min_size=nk, max_size=nk)),
                                 tracks=tracks))
    secs = [HeaderV6(token=abc_v6.TOKEN, command_string=draw(name), gap=draw(gap)), geo,
            NodesV6(nodes=nodes, gap=draw(gap)), AnimationsV6(animations=anims, gap=draw(gap)),
            AnimDimsV6(dims=np.array(draw(st.lists(vec(3), min_size=len(anims), max_size=len(anims)))
                                     or np.zeros((0, 3)), "<f4").reshape(-1, 3), gap=draw(gap))]
    if draw(st.booleans()):
        secs.append(TransformInfoV6(flip_mat=draw(st.integers(-5, 5)),
                                    fix_anim_keyframes=draw(st.integers(-5, 5)), gap=draw(gap)))
    return AbcV6Model(sections=secs)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(abc_models())
def test_generated_v9_round_trip(doc):
    data = retromesh.to_bytes(doc)
    back = reparse(data)
    same(doc, back)
    assert retromesh.to_bytes(back) == data


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(v6_models())
def test_generated_v6_round_trip(doc):
    data = retromesh.to_bytes(doc)
    back = reparse(data)
    same(doc, back)
    assert retromesh.to_bytes(back) == data


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(abc_models(), v6_models()))
def test_generated_documents_convert_or_fail_cleanly(doc):
    """to_scene on arbitrary (often nonsensical) content raises only FormatError."""
    read_or_format_error(retromesh.to_bytes(doc), "gen.abc", scene=True)
