"""Lugaru skeleton and animation files: byte-identical round trips (every corpus file and
generated ones), detection of extensionless files by folder, the engine's check rules, and
nothing but FormatError on damaged input."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import retromesh
from conftest import corpus_params
from retromesh import FormatError, jsoncodec, registry
from retromesh.formats.lugaru import animation as la, samples, skeleton as ls


@pytest.mark.parametrize("path", corpus_params("lugaru/Data/Skeleton")
                         + corpus_params("lugaru/Data/Animations"))
def test_corpus_round_trip_byte_identical(path):
    data = path.read_bytes()
    fmt = registry.detect(data[:registry.SNIFF_BYTES], str(path))
    assert fmt.name == ("lugaru-skeleton" if path.parent.name == "Skeleton" else "lugaru-animation")
    doc = registry.parse(fmt, data, str(path))
    assert fmt.write(doc) == data
    assert fmt.check(doc) == []
    assert fmt.write(jsoncodec.loads(jsoncodec.dumps(doc))) == data


def test_detected_by_folder_and_by_format_name(tmp_path):
    data = ls.write(samples.figure())
    (tmp_path / "Skeleton").mkdir()
    (tmp_path / "Skeleton" / "Fig").write_bytes(data)
    (tmp_path / "elsewhere").write_bytes(data)
    assert type(retromesh.read(tmp_path / "Skeleton" / "Fig")) is ls.SkeletonFile
    with pytest.raises(retromesh.UnknownFormatError):
        retromesh.read(tmp_path / "elsewhere")
    assert type(retromesh.read(tmp_path / "elsewhere", format="lugaru-skeleton")) is ls.SkeletonFile
    anim = la.write(samples.animation())
    (tmp_path / "Animations").mkdir()
    (tmp_path / "Animations" / "Walk").write_bytes(anim)
    assert type(retromesh.read(tmp_path / "Animations" / "Walk")) is la.AnimationFile


def test_animation_without_weapon_targets_writes_back_without_them():
    doc = samples.animation(3)
    doc.weapon_target_count = None
    doc.weapon_targets = None
    data = la.write(doc)
    assert len(data) == 8 + 3 * (20 * 17 + 4) + 3 * 20 * 4 + 3 * 4
    back = retromesh.read(data, format="lugaru-animation")
    assert back.weapon_targets is None and la.write(back) == data


def test_check_rules_in_the_engine_terms():
    sk = samples.figure()
    sk.muscles["parent2"][0] = 40
    sk.joints["hasparent"][3] = 1
    sk.joints["parent"][3] = 99
    sk.joints["label"][5] = 4
    sk.vertices[1] = np.array([-2, 3], ">i4")
    rules = {f.rule for f in ls.check(sk)}
    assert {"lugaru-skeleton.muscle_joint", "lugaru-skeleton.parent", "lugaru-skeleton.label",
            "lugaru-skeleton.vertex"} <= rules
    an = samples.animation(2)
    an.speed[1] = 0
    rules = {f.rule for f in la.check(an, skeleton_joints=19)}
    assert rules == {"lugaru-animation.speed", "lugaru-animation.joint_count"}
    empty = la.AnimationFile()
    assert [f.rule for f in la.check(empty)] == ["lugaru-animation.no_frames"]


def test_counts_are_checked_before_allocating():
    bad = (2**31 - 1).to_bytes(4, "big") + (20).to_bytes(4, "big") + bytes(100)
    with pytest.raises(FormatError) as err:
        retromesh.read(bad, format="lugaru-animation")
    assert err.value.offset == 0 and "frame_count" in str(err.value)
    sk = bytearray(ls.write(samples.figure(2)))
    at = 4 + 20 * 41 + 4 + 24           # muscle 0 vertex_count
    sk[at:at + 4] = (10**8).to_bytes(4, "big")
    with pytest.raises(FormatError) as err:
        retromesh.read(bytes(sk), format="lugaru-skeleton")
    assert "muscles[0]" in str(err.value) and "vertex_count" in str(err.value)


_f32 = hnp.from_dtype(np.dtype(">f4"), allow_nan=False)


@st.composite
def _animations(draw):
    nf = draw(st.integers(0, 4))
    nj = draw(st.integers(0, 5))
    arr = lambda dt, shape, el=None: draw(hnp.arrays(dt, shape, elements=el))  # noqa: E731
    has = draw(st.booleans())
    return la.AnimationFile(arr(">f4", (nf, nj, 3), _f32), arr(">f4", (nf, nj), _f32),
                            arr("u1", (nf, nj)), arr(">f4", (nf,), _f32), arr(">f4", (nf, nj), _f32),
                            arr(">i4", (nf,)), draw(st.integers(-2**31, 2**31 - 1)) if has else None,
                            arr(">f4", (nf, 3), _f32) if has else None,
                            draw(st.binary(max_size=3)) if nf or has else b"")


@st.composite
def _skeletons(draw):
    nj = draw(st.integers(0, 6))
    nm = draw(st.integers(0, 4))
    joints = draw(hnp.arrays(ls.JOINT_DTYPE, nj))
    muscles = draw(hnp.arrays(ls.MUSCLE_DTYPE, nm))
    verts = [draw(hnp.arrays(">i4", draw(st.integers(0, 5)))) for _ in range(nm)]
    ints = st.integers(-2**31, 2**31 - 1)
    fw = tuple(draw(st.lists(ints, min_size=3, max_size=3)))
    low = tuple(draw(st.lists(ints, min_size=3, max_size=3)))
    return ls.SkeletonFile(joints, muscles, verts, fw, low, draw(st.binary(max_size=5)))


@settings(max_examples=60)
@given(_animations())
def test_generated_animations_round_trip(doc):
    data = la.write(doc)
    assert la.write(retromesh.read(data, format="lugaru-animation")) == data


@settings(max_examples=60)
@given(_skeletons())
def test_generated_skeletons_round_trip(doc):
    data = ls.write(doc)
    assert ls.write(retromesh.read(data, format="lugaru-skeleton")) == data
