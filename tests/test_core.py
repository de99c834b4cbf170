"""binio, errors, registry detection, transforms, scene invariants, public API entry points."""
from __future__ import annotations

import io

import numpy as np
import pytest

import retromesh
from retromesh import FormatError, LimitError, UnknownFormatError, transforms as tf
from retromesh.binio import Reader, Writer
from retromesh.errors import DocumentError
from retromesh.scene import Channel, Mesh, Node, Primitive, Scene, Skin

# -- binio -----------------------------------------------------------------------------------

def test_reader_scalars_and_strings():
    w = Writer("<")
    w.pack("iHf", -5, 7, 1.5)
    w.cstring(b"abc")
    w.pstring(b"xyz")
    r = Reader(w.getvalue(), file="t.bin")
    assert (r.i32(), r.u16(), r.f32()) == (-5, 7, 1.5)
    assert r.cstring() == b"abc"
    assert r.pstring() == b"xyz"
    assert r.eof()


def test_reader_errors_name_file_offset_and_path():
    r = Reader(b"\x01\x02", file="bad.b3d")
    with r.at("nodes[3]"), r.at("keys[12]"):
        with pytest.raises(FormatError) as exc:
            r.i32("rotation")
    e = exc.value
    assert e.file == "bad.b3d" and e.offset == 0 and e.path == "nodes[3].keys[12]"
    assert "bad.b3d" in str(e) and "nodes[3].keys[12]" in str(e) and "4 bytes" in str(e)


def test_records_checks_count_before_allocating():
    r = Reader(b"\0" * 16)
    with pytest.raises(LimitError):
        r.records(np.dtype("<f4"), 10**12, "vertices")
    with pytest.raises(LimitError):
        r.records(np.dtype("<f4"), -1, "vertices")
    assert r.records(np.dtype("<f4"), 4, "vertices").flags.writeable


def test_chunk_limits_to_parent():
    r = Reader(b"\0" * 10)
    with pytest.raises(LimitError):
        with r.chunk(11, "X"):
            pass
    with r.chunk(4, "X"):
        with pytest.raises(FormatError):
            r.raw(5)
    assert r.pos == 4


def test_cstring_without_nul_is_an_error():
    with pytest.raises(FormatError):
        Reader(b"abc").cstring()


def test_nesting_depth_is_bounded():
    r = Reader(b"\0" * 8)
    def deep(n):
        with r.nested("n"):
            deep(n + 1)
    with pytest.raises(LimitError):
        deep(0)


def test_writer_chunk_backpatches_length():
    w = Writer("<")
    with w.chunk(b"TEST"):
        w.raw(b"12345")
    assert w.getvalue() == b"TEST" + bytes([5, 0, 0, 0]) + b"12345"


# -- transforms ------------------------------------------------------------------------------

def test_quaternion_matrix_round_trip():
    rng = np.random.default_rng(1)
    q = tf.quat_normalize(rng.normal(size=(200, 4)))
    q = np.where(q[:, 3:] < 0, -q, q)
    assert np.allclose(tf.matrix_to_quat(tf.quat_to_matrix(q)), q, atol=1e-9)
    v = rng.normal(size=(200, 3))
    assert np.allclose(tf.quat_rotate(q, v), np.einsum("nij,nj->ni", tf.quat_to_matrix(q), v))


def test_compose_decompose():
    rng = np.random.default_rng(2)
    t = rng.normal(size=(50, 3))
    q = tf.quat_normalize(rng.normal(size=(50, 4)))
    s = rng.uniform(0.5, 2, size=(50, 3))
    m = tf.compose_trs(t, q, s)
    t2, q2, s2 = tf.decompose_trs(m)
    assert np.allclose(t, t2) and np.allclose(s, s2)
    assert np.allclose(np.abs(np.sum(q * q2, axis=1)), 1)


def test_slerp_and_continuity():
    a = np.array([0, 0, 0, 1.0])
    b = np.array([0, 0, np.sin(0.5), np.cos(0.5)])
    mid = tf.quat_slerp(a, b, 0.5)
    assert np.allclose(mid, [0, 0, np.sin(0.25), np.cos(0.25)])
    track = tf.quat_continuous(np.array([a, -b, b]))
    assert np.all(np.sum(track[1:] * track[:-1], axis=1) > 0)


def test_world_matrices_any_parent_order():
    local = np.stack([tf.translation_matrix([1, 0, 0])] * 3)
    w = tf.world_matrices(local, [2, -1, 1])
    assert np.allclose(w[0][:3, 3], [3, 0, 0])


# -- scene invariants --------------------------------------------------------------------------

def test_primitive_checks_shapes_and_indices():
    with pytest.raises(DocumentError):
        Primitive(positions=np.zeros((3, 2)))
    with pytest.raises(DocumentError):
        Primitive(positions=np.zeros((3, 3)), indices=[0, 1, 3])
    with pytest.raises(DocumentError):
        Primitive(positions=np.zeros((3, 3)), normals=np.zeros((2, 3)))


def test_channel_checks():
    with pytest.raises(DocumentError):
        Channel(0, "rotation", [0, 0], [[0, 0, 0, 1]] * 2)
    with pytest.raises(DocumentError):
        Channel(0, "position", [0], [[0, 0, 0]])


def test_scene_validate_catches_bad_references():
    s = Scene()
    s.add_node(Node(name="a", children=[5]))
    with pytest.raises(DocumentError):
        s.validate()
    s = Scene()
    a = s.add_node(Node(name="a"))
    s.nodes[a].children.append(a)
    with pytest.raises(DocumentError):
        s.validate()
    s = Scene()                                  # a two-node cycle beside a proper root
    s.add_node(Node(name="root"))
    s.nodes.append(Node(name="b", children=[2]))
    s.nodes.append(Node(name="c", children=[1]))
    with pytest.raises(DocumentError, match="cycle"):
        s.validate()
    s = Scene()
    n = s.add_node(Node(name="a", mesh=0))
    s.add_mesh(Mesh(primitives=[Primitive(positions=np.zeros((3, 3)), joints=np.full((3, 4), 2),
                                          weights=np.ones((3, 4)) / 4)]))
    s.nodes[n].skin = s.add_skin(Skin(joints=[n]))
    with pytest.raises(DocumentError):
        s.validate()


def test_scene_validate_names_the_node_or_material_whose_numbers_are_not_finite():
    """TRS and material numbers are checked all at once; the error still names the first one
    (also when the materials' numbers cannot even be put in one array)."""
    from retromesh.scene import Material
    s = Scene()
    s.add_node(Node(name="a"))
    s.add_node(Node(name="b", translation=[0, 1e39, 0]))
    with pytest.raises(DocumentError, match=r"node 1 \('b'\): translation"):
        s.validate()
    s.nodes[1].translation = np.array([0, 0, 0.0])
    s.nodes[0].rotation = np.array([np.nan, 0, 0, 1])
    with pytest.raises(DocumentError, match=r"node 0 \('a'\): rotation"):
        s.validate()
    s.nodes[0].rotation = np.array([0, 0, 0, 1.0])
    s.materials += [Material(name="ok"), Material(name="bad"), Material(name="worse")]
    s.validate()
    s.materials[1].metallic = float("inf")
    s.materials[2].roughness = float("nan")
    with pytest.raises(DocumentError, match=r"material 1 \('bad'\)"):
        s.validate()
    s.materials[1].metallic = 0.5
    with pytest.raises(DocumentError, match=r"material 2 \('worse'\)"):
        s.validate()
    s.materials[2].roughness = 0.5
    s.materials[1].base_color = [[1, 1], [1, 1], [1, 1], [1, 1]]     # no array with the others
    with pytest.raises(DocumentError, match=r"material 1 \('bad'\)"):
        s.validate()


# -- API and detection -------------------------------------------------------------------------

def test_read_accepts_path_bytes_and_file_objects(tmp_path):
    from helpers.make_examples_import import wiggle_bytes
    data = wiggle_bytes()
    p = tmp_path / "w.b3d"
    p.write_bytes(data)
    for source in (p, str(p), data, io.BytesIO(data), open(p, "rb")):
        doc = retromesh.read(source, format="b3d" if isinstance(source, (bytes, io.BytesIO)) else None)
        assert retromesh.to_bytes(doc) == data
    # bytes without a name are detected by magic
    assert retromesh.to_bytes(retromesh.read(data)) == data


def test_unknown_and_mismatched_formats(tmp_path):
    with pytest.raises(UnknownFormatError):
        retromesh.read(b"\0\1\2\3 nothing")
    p = tmp_path / "x.b3d"
    p.write_bytes(b"glTF\2\0\0\0\0\0\0\0")
    with pytest.raises(UnknownFormatError) as exc:
        retromesh.read(p)
    assert "glb" in str(exc.value)        # says what it looks like instead
    with pytest.raises(UnknownFormatError):
        retromesh.read(b"", format="no-such-format")


def test_write_is_atomic_and_leaves_no_temp_files(tmp_path):
    from helpers.make_examples_import import wiggle_bytes
    doc = retromesh.read(wiggle_bytes())
    target = tmp_path / "out.b3d"
    target.write_bytes(b"old")
    retromesh.write(doc, target)
    assert target.read_bytes() == wiggle_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["out.b3d"]


def test_save_failure_keeps_old_file(tmp_path, monkeypatch):
    from helpers.make_examples_import import wiggle_bytes
    doc = retromesh.read(wiggle_bytes())
    target = tmp_path / "out.b3d"
    target.write_bytes(b"old")
    # the B3D writer's binio.Writer fails as a full disk would
    monkeypatch.setattr(Writer, "getvalue", lambda self: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError):
        retromesh.write(doc, target)
    assert target.read_bytes() == b"old"


def test_formats_lists_b3d_and_gltf():
    names = {f.name for f in retromesh.formats()}
    assert {"b3d", "glb", "gltf"} <= names
    b3d = next(f for f in retromesh.formats() if f.name == "b3d")
    assert all(b3d.supports().values())


def test_every_format_module_loads():
    from retromesh import registry
    assert registry.broken() == {}


def test_channel_sampling():
    lin = Channel(0, "translation", [0, 1, 2], [[0, 0, 0], [1, 0, 0], [1, 2, 0]])
    assert np.allclose(lin.sample([-1, 0.5, 1.0, 1.5, 3]),
                       [[0, 0, 0], [0.5, 0, 0], [1, 0, 0], [1, 1, 0], [1, 2, 0]])
    step = Channel(0, "scale", [0, 1], [[1, 1, 1], [2, 2, 2]], "STEP")
    assert np.allclose(step.sample([0.99, 1.0]), [[1, 1, 1], [2, 2, 2]])
    # a cubic spline with zero tangents eases in and out; at u = 0.5 it is half way
    cub = Channel(0, "translation", [0, 2], [[0, 0, 0], [0, 0, 0], [0, 0, 0],
                                             [0, 0, 0], [4, 0, 0], [0, 0, 0]], "CUBICSPLINE")
    assert np.allclose(cub.sample([1.0, 0.5]), [[2, 0, 0], [4 * (3 * 0.0625 - 2 * 0.015625), 0, 0]])
    rot = Channel(0, "rotation", [0, 1], [[0, 0, 0, 1], [0, 0, 1, 0]])
    assert np.allclose(rot.sample([0.5]), [[0, 0, np.sqrt(0.5), np.sqrt(0.5)]])
    # a time within a microsecond of a key, on either side, is that key (float32 key times
    # are a hair off the times meant)
    near = Channel(0, "translation", np.array([0, 1.999, 2.0], np.float32),
                   [[0, 0, 0], [1, 0, 0], [-1, 0, 0]])
    assert near.sample([1.999, 1.999 - 5e-7, 2.0 - 5e-7]).tolist() == [[1, 0, 0], [1, 0, 0], [-1, 0, 0]]
    assert not np.allclose(near.sample([1.999 + 2e-6]), [[1, 0, 0]])


def test_count_fields_point_at_themselves():
    r = Reader(struct_pack("<i", -3) + b"\0" * 8)
    with pytest.raises(LimitError) as exc:
        r.count("num_bones", 4)
    assert exc.value.offset == 0 and "num_bones" in str(exc.value)
    r = Reader(b"\0" * 4 + struct_pack("<i", 3) + b"\0" * 8)
    r.raw(4)
    with pytest.raises(LimitError) as exc:
        r.count("num_bones", 4)          # 12 bytes needed, 8 left
    assert exc.value.offset == 4
    r = Reader(struct_pack("<H", 2) + b"\0" * 4)
    assert r.count("n", 2, "H") == 2


def struct_pack(fmt, *values):
    import struct
    return struct.pack(fmt, *values)


def test_import_loads_no_numpy_and_modules_come_when_named():
    """``import retromesh`` leaves numpy to the first file (the CLI loads it with one BLAS
    thread); ``retromesh.Scene`` and ``retromesh.scene.LIMITS`` still work right after it."""
    import subprocess
    import sys
    code = ("import sys, retromesh, retromesh.cli; assert 'numpy' not in sys.modules; "
            "assert retromesh.scene.LIMITS['mesh_nodes'] > 0; "
            "assert retromesh.Scene is retromesh.scene.Scene; "
            "print(hasattr(retromesh, 'nothing'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_cli_loads_numpy_with_one_blas_thread(monkeypatch):
    import subprocess
    import sys
    code = ("import os, sys, retromesh.cli as c; c._load_numpy(); import numpy; "
            "print(len(os.listdir('/proc/self/task')), os.environ.get('OPENBLAS_NUM_THREADS'))")
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    if not sys.platform.startswith("linux"):
        pytest.skip("counts threads in /proc")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "None"]     # and children get the environment as it was
