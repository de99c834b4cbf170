"""The small OBJ reader/writer used for Overgrowth character meshes."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import retromesh
from helpers.gltfcheck import assert_valid
from helpers.malformed import read_or_format_error
from retromesh import FormatError, LossWarning
from retromesh.formats.overgrowth import samples
from retromesh.formats.overgrowth.obj import parse_obj, write_obj


def test_quads_split_as_the_engine_does():
    obj = parse_obj(b"v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nf 1/1 2/1 3/1 4/1\n")
    assert obj.corners[:, 0].tolist() == [0, 1, 2, 3, 0, 2]      # (a,b,c), (d,a,c)
    assert obj.corners[:, 1].tolist() == [0] * 6
    assert (obj.corners[:, 2] == -1).all()
    with pytest.warns(LossWarning, match="fanned"):
        assert parse_obj(b"v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 2 0\nf 1 2 3 4 5\n").triangle_count == 3
    neg = parse_obj(b"v 0 0 0\nv 1 0 0\nv 1 1 0\nf -3 -2 -1\n")
    assert neg.corners[:, 0].tolist() == [0, 1, 2]


def test_bad_obj():
    for bad in (b"v 0 0 0\nf 1 2 3\n", b"v a b c\n", b"v 0 0 0\nf 1 x 1\n", b"f 1 2\n"):
        with pytest.raises(FormatError):
            retromesh.read(bad, format="obj")


def test_obj_round_trip_and_scene(tmp_path):
    data = samples.stick_obj()
    doc = retromesh.read(data, format="obj")
    assert retromesh.to_bytes(doc) == data
    (tmp_path / "s.obj").write_bytes(data)
    retromesh.convert(tmp_path / "s.obj", tmp_path / "s.glb")
    info = assert_valid(tmp_path / "s.glb")
    assert info["totalTriangleCount"] == 72 and info["maxUVs"] == 1
    retromesh.convert(tmp_path / "s.glb", tmp_path / "t.obj")
    back = retromesh.read(tmp_path / "t.obj").mesh()
    assert back.triangle_count == 72
    a = parse_obj(data)
    assert np.allclose(np.sort(a.positions[a.corners[:, 0]], 0),
                       np.sort(back.positions[back.corners[:, 0]], 0), atol=1e-5)
    assert np.allclose(np.sort(a.texcoords[a.corners[:, 1]], 0),
                       np.sort(back.texcoords[back.corners[:, 1]], 0), atol=1e-5)


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_hypothesis_mutations(data):
    base = bytearray(samples.stick_obj())
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(0, len(base) - 1))
        base[i] = data.draw(st.sampled_from(b"0123456789 -/.\nfvtne"))
    cut = data.draw(st.integers(0, len(base)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read_or_format_error(bytes(base[:cut]), "x.obj", scene=True)


@settings(max_examples=50, deadline=None)
@given(st.integers(3, 20), st.integers(1, 10), st.randoms())
def test_hypothesis_write_parse(nv, nt, rnd):
    pos = np.array([[rnd.uniform(-5, 5) for _ in range(3)] for _ in range(nv)])
    tri = np.array([[rnd.randrange(nv) for _ in range(3)] for _ in range(nt)])
    obj = parse_obj(write_obj(pos, tri, pos[:, :2], tri, normals=pos))
    assert np.allclose(obj.positions, pos, atol=1e-6)
    assert obj.corners[:, 0].tolist() == tri.ravel().tolist()
    assert obj.corners[:, 2].tolist() == tri.ravel().tolist()


def test_errors_name_the_line_and_relative_indices():
    cases = {b"v 0 0 0\nv a b c\n": (8, "v[1]"), b"v 0 0 0\nf 1 x 1\n": (8, "f[0]"),
             b"v 0 0 0\nv 1 1 1\nv 2 2 2\nf 1 2 3\nf 1 2 9\n": (32, "f[1]"),
             b"v 1 1 1\nf 0 1 1\n": (8, "f[0]")}
    for data, (offset, path) in cases.items():
        with pytest.raises(FormatError) as info:
            retromesh.read(data, format="obj")
        assert info.value.offset == offset and info.value.path == path
    # negative indices count back from the vertices defined before the face (OBJ rule)
    two = parse_obj(b"v 0 0 0\nv 1 0 0\nv 1 1 0\nf -3 -2 -1\nv 5 5 5\nv 6 6 6\nv 7 7 7\nf -3 -2 -1\n")
    assert two.corners[:, 0].tolist() == [0, 1, 2, 3, 4, 5]
