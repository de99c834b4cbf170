"""Blitz3D: native round trips on fixtures and generated documents, conversions, bad input."""
from __future__ import annotations

import struct
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import retromesh
from helpers.gltfcheck import assert_valid
from helpers.make_examples_import import crate_bytes, make_examples, wiggle_bytes
from helpers.malformed import assert_malformed_safe, read_or_format_error
from retromesh.formats.b3d import (
    AnimChunk,
    B3dFile,
    Bone,
    Brus,
    BrushEntry,
    Keys,
    MeshChunk,
    NodeChunk,
    RawChunk,
    Texs,
    TextureEntry,
    Tris,
    Vrts,
    keys_dtype,
    vrts_dtype,
)

# -- generated documents ---------------------------------------------------------------------

finite = st.floats(-1e6, 1e6, allow_nan=False, width=32)
name = st.binary(max_size=12).map(lambda b: b.replace(b"\0", b"_"))


@st.composite
def vrts(draw):
    flags = draw(st.integers(0, 3))
    sets = draw(st.integers(0, 3))
    size = draw(st.integers(1, 4)) if sets else 0
    n = draw(st.integers(0, 6))
    dt = vrts_dtype(flags, sets, size)
    raw = draw(st.binary(min_size=n * dt.itemsize, max_size=n * dt.itemsize))
    arr = np.frombuffer(raw, dt).copy()
    for f in dt.names:                      # NaN payloads would not compare equal
        arr[f] = np.nan_to_num(arr[f])
    return Vrts(flags, sets, size, arr)


@st.composite
def keys(draw):
    flags = draw(st.integers(0, 7))
    n = draw(st.integers(0, 4))
    arr = np.zeros(n, keys_dtype(flags))
    arr["frame"] = draw(st.lists(st.integers(-5, 500), min_size=n, max_size=n))
    for f in arr.dtype.names[1:]:
        values = draw(st.lists(finite, min_size=arr[f].size, max_size=arr[f].size))
        arr[f] = np.array(values, np.float32).reshape(arr[f].shape)
    return Keys(flags, arr)


def tris():
    return st.builds(lambda b, t: Tris(b, np.array(t, np.int32).reshape(-1, 3)),
                     st.integers(-1, 3), st.lists(st.integers(0, 20), max_size=9).map(
                         lambda x: x[: len(x) // 3 * 3]))


def bone():
    return st.integers(0, 4).map(lambda n: Bone(np.array(
        [(i, 0.25 * i) for i in range(n)], dtype=[("vertex", "<i4"), ("weight", "<f4")])))


raw = st.builds(RawChunk, st.sampled_from([b"XTRA", b"CAMR", b"LITE"]), st.binary(max_size=10))
mesh = st.builds(MeshChunk, st.integers(-1, 2),
                 st.tuples(vrts(), st.lists(st.one_of(tris(), raw), max_size=3)).map(
                     lambda t: [t[0]] + t[1]))
node = st.deferred(lambda: st.builds(
    NodeChunk, name, st.tuples(finite, finite, finite), st.tuples(finite, finite, finite),
    st.tuples(finite, finite, finite, finite),
    st.lists(st.one_of(mesh, bone(), keys(), node, raw,
                       st.builds(AnimChunk, st.integers(0, 3), st.integers(0, 100), finite)),
             max_size=3)))
texs = st.builds(Texs, st.lists(st.builds(TextureEntry, name, st.integers(0, 0x1ffff),
                                          st.integers(0, 5), st.tuples(finite, finite),
                                          st.tuples(finite, finite), finite), max_size=3))


@st.composite
def brus(draw):
    n = draw(st.integers(0, 3))
    entries = draw(st.lists(st.builds(BrushEntry, name, st.tuples(finite, finite, finite, finite),
                                      finite, st.integers(0, 3), st.integers(0, 63),
                                      st.lists(st.integers(-1, 5), min_size=n, max_size=n)),
                            max_size=3))
    return Brus(n, entries)


documents = st.builds(B3dFile, st.integers(0, 3), st.lists(st.one_of(texs, brus(), node, raw),
                                                            max_size=4),
                      st.just(b""), st.binary(max_size=3))


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(documents)
def test_generated_documents_round_trip(doc):
    data = retromesh.to_bytes(doc)
    back = retromesh.read(data, format="b3d")
    assert retromesh.to_bytes(back) == data
    assert _equal(back, doc)


def _equal(a, b) -> bool:
    if type(a) is not type(b) and not (isinstance(a, (tuple, list)) and isinstance(b, (tuple, list))):
        return False
    if isinstance(a, np.ndarray):
        return a.tobytes() == np.asarray(b).tobytes() and a.shape == b.shape
    if hasattr(a, "__dataclass_fields__"):
        return all(_equal(getattr(a, f), getattr(b, f)) for f in a.__dataclass_fields__)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return struct.pack("<f", a) == struct.pack("<f", b)
    return a == b


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_crash_and_round_trip_when_they_parse(data):
    data = b"BB3D" + data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = read_or_format_error(data, "x.b3d", scene=True)
    if doc is not None:
        assert retromesh.to_bytes(doc) == data


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_mutated_samples_raise_only_format_errors(data):
    sample = data.draw(st.sampled_from([wiggle_bytes(), crate_bytes()]))
    b = bytearray(sample)
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(0, len(b) - 1))
        b[i] = data.draw(st.integers(0, 255))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read_or_format_error(bytes(b), "x.b3d", scene=True)


# -- fixtures made by our writer ---------------------------------------------------------------

def test_fixtures_round_trip_and_convert(tmp_path):
    for data, skins, anims in ((wiggle_bytes(), 1, 1), (crate_bytes(), 0, 0)):
        doc = retromesh.read(data, format="b3d")
        assert retromesh.to_bytes(doc) == data
        scene = retromesh.load(data, format="b3d")
        assert len(scene.skins) == skins and len(scene.animations) == anims
        out = tmp_path / "f.glb"
        retromesh.save(scene, out)
        info = assert_valid(out)
        assert info["animationCount"] == anims and info["hasSkins"] == bool(skins)
        assert info["maxUVs"] == 1


def test_malformed_crate():          # the wiggle: tests/test_contract.py
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_malformed_safe(crate_bytes(), "x.b3d", scene=True)


def test_chunk_lengths_past_the_parent_name_the_chunk():
    data = bytearray(wiggle_bytes())
    at = data.find(b"VRTS")
    struct.pack_into("<i", data, at + 4, 10**9)
    with pytest.raises(retromesh.FormatError) as exc:
        retromesh.read(bytes(data), format="b3d")
    e = exc.value
    assert e.offset == at + 8 and "VRTS" in e.path and "NODE" in e.path and "MESH" in e.path


def test_keys_past_anim_frames_are_kept_and_several_anims(tmp_path):
    doc = retromesh.read(wiggle_bytes(), format="b3d")
    root = doc.root_nodes[0]
    anim = next(c for c in root.children if isinstance(c, AnimChunk))
    anim.frames = 10                                   # keys run to frame 49
    bone2 = root.nodes[0].nodes[0].nodes[0]
    bone2.children.append(AnimChunk(0, 5, 0.0))        # a second ANIM (fps 0 -> 25) for bone2..3
    scene = retromesh.load(retromesh.to_bytes(doc), format="b3d")
    assert len(scene.animations) == 2
    main = next(a for a in scene.animations if a.extras["b3d_fps"] == 24.0)
    assert main.extras["b3d_keys_beyond_frames"] == 49
    second = next(a for a in scene.animations if a is not main)
    assert second.extras["fps"] == 25.0
    retromesh.save(scene, tmp_path / "a.glb")
    assert assert_valid(tmp_path / "a.glb")["animationCount"] == 2


def test_coordinate_conversion_yaw():
    """A B3D yaw of +90 degrees is a glTF rotation of +90 degrees about +Y (format-facts B)."""
    from retromesh.formats.b3d.axes import rot_to_gltf
    a = np.pi / 2
    q = rot_to_gltf([np.cos(a / 2), 0, np.sin(a / 2), 0])
    assert np.allclose(q, [0, np.sin(a / 2), 0, np.cos(a / 2)])
    q = rot_to_gltf([np.cos(a / 2), 0, 0, np.sin(a / 2)])     # roll flips with the Z mirror
    assert np.allclose(q, [0, 0, -np.sin(a / 2), np.cos(a / 2)])


def test_winding_is_reversed_and_positions_mirrored():
    data = crate_bytes()
    doc = retromesh.read(data, format="b3d")
    mesh = next(c for n, _ in doc.walk() for c in n.children if isinstance(c, MeshChunk))
    scene = retromesh.load(data, format="b3d")
    p = scene.meshes[0].primitives[0]
    raw_pos = mesh.vrts.vertices["position"]
    assert np.allclose(p.positions, raw_pos * [1, 1, -1])
    assert np.array_equal(p.indices.reshape(-1, 3), mesh.tris[0].triangles[:, [0, 2, 1]])
    # outward normals: the signed volume of the closed box is positive in glTF
    tri = p.positions[p.indices.reshape(-1, 3)]
    vol = np.einsum("ij,ij->i", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])).sum() / 6
    assert vol > 0


def test_from_scene_writes_minetest_friendly_files():
    doc = retromesh.read(wiggle_bytes(), format="b3d")
    v = next(c for n, _ in doc.walk() for c in n.children if isinstance(c, MeshChunk)).vrts
    assert v.tex_coord_sets <= 2 and v.tex_coord_set_size <= 2
    frames = np.concatenate([c.keys["frame"] for n, _ in doc.walk() for c in n.children
                             if isinstance(c, Keys)])
    assert frames.min() == 1
    bones = [c for n, _ in doc.walk() for c in n.children if isinstance(c, Bone)]
    assert all(len(b.weights) != 1 for b in bones)
    for n, _ in doc.walk():
        kinds = {type(c) for c in n.children}
        assert not (MeshChunk in kinds and Bone in kinds)


def test_several_animations_go_end_to_end():
    s = make_examples.wiggle_scene()
    second = s.animations[0]
    import copy
    s.animations.append(copy.deepcopy(second))
    s.animations[1].name = "again"
    with pytest.warns(retromesh.LossWarning, match="end to end"):
        doc = retromesh.from_scene(s, "b3d")
    anim = next(c for n, _ in doc.walk() for c in n.children if isinstance(c, AnimChunk))
    assert anim.frames == 98           # keys at frames 1..49 and 50..98
    frames = np.concatenate([c.keys["frame"] for n, _ in doc.walk() for c in n.children
                             if isinstance(c, Keys)])
    assert frames.min() == 1 and frames.max() == 98 and (frames == 49).any() and (frames == 50).any()


def test_json_dump_build_identity():
    from retromesh import jsoncodec
    for data in (wiggle_bytes(), crate_bytes()):
        doc = retromesh.read(data, format="b3d")
        assert retromesh.to_bytes(jsoncodec.loads(jsoncodec.dumps(doc))) == data


def test_resampling_when_times_are_off_frames():
    from retromesh.scene import Animation, Channel
    s = make_examples.wiggle_scene()
    j = s.skins[0].joints[1]
    s.animations = [Animation(name="odd", channels=[
        Channel(j, "rotation", [0.0, 0.05, 0.13], [[0, 0, 0, 1], [0, 0, 0.3, 0.95], [0, 0, 0, 1]]),
        Channel(j, "translation", [0.0, 0.2], [[0, 0, 0], [0, 1, 0]], "STEP")])]
    doc = retromesh.from_scene(s, "b3d", fps=30)
    keys = [c for n, _ in doc.walk() for c in n.children if isinstance(c, Keys)]
    rot = next(k for k in keys if k.flags == 4).keys
    assert list(rot["frame"]) == [1, 2, 3, 4, 5]             # 0 .. 0.13 s at 30 fps
    assert np.allclose(np.linalg.norm(rot["rotation"], axis=1), 1, atol=1e-5)
    pos = next(k for k in keys if k.flags == 1).keys
    assert np.allclose(pos["position"][:-1], 0) and np.allclose(pos["position"][-1], [0, 1, 0])


def test_assimp_reads_what_we_write(tmp_path):
    """An independent reader (assimp, where installed) loads our B3D output."""
    import shutil
    import subprocess
    if not shutil.which("assimp"):
        pytest.skip("assimp-utils not installed")
    for name, data in (("wiggle.b3d", wiggle_bytes()), ("crate.b3d", crate_bytes())):
        (tmp_path / name).write_bytes(data)
        res = subprocess.run(["assimp", "info", str(tmp_path / name)], capture_output=True,
                             text=True, timeout=120)
        assert res.returncode == 0, res.stdout + res.stderr
        assert "Meshes:" in res.stdout


def test_truncation_and_huge_lengths_at_every_chunk_boundary():
    import re
    for data in (wiggle_bytes(), crate_bytes()):
        tags = [m.start() for m in re.finditer(rb"BB3D|TEXS|BRUS|NODE|MESH|VRTS|TRIS|BONE|KEYS|ANIM",
                                               data)]
        for at in tags:
            for cut in (at, at + 4, at + 8, at + 9):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    read_or_format_error(data[:cut], "x.b3d", scene=True)
            for value in (0x7FFFFFFF, -1, -(2**31), 0x10000):
                b = bytearray(data)
                struct.pack_into("<i", b, at + 4, value)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    read_or_format_error(bytes(b), "x.b3d", scene=True)


def test_embedded_images_are_written_beside_the_b3d(tmp_path):
    """A GLB with its textures inside (as Blender exports) gives a B3D plus the image files."""
    s = make_examples.crate_scene()
    s.textures[0].uri = None
    s.textures[0].name = "crate wood"
    s.textures[0].image = make_examples.crate_png()
    s.textures[0].mime_type = "image/png"
    retromesh.save(s, tmp_path / "in.glb")
    written = retromesh.convert(tmp_path / "in.glb", tmp_path / "box.b3d")
    assert sorted(p.name for p in written) == ["box.b3d", "crate_wood.png"]
    assert (tmp_path / "crate_wood.png").read_bytes() == make_examples.crate_png()
    doc = retromesh.read(tmp_path / "box.b3d")
    assert [t.file for t in doc.textures] == [b"crate_wood.png"]
    # and back: the texture found beside the B3D is embedded again
    retromesh.convert(tmp_path / "box.b3d", tmp_path / "again.glb", save_options={"embed_images": True})
    assert retromesh.load(tmp_path / "again.glb").textures[0].image == make_examples.crate_png()


def test_big_mesh_is_split_into_tris_irrlicht_can_index():
    """Irrlicht makes one 16-bit mesh buffer per TRIS: no TRIS may use over 65535 vertices."""
    from retromesh.formats.b3d.chunks import MAX_TRIS_VERTICES, Tris
    from retromesh.scene import Mesh, Node, Primitive, Scene
    n = 100_000 * 3
    pos = np.random.default_rng(1).random((n, 3)).astype(np.float32)
    s = Scene()
    s.nodes[s.add_node(Node(name="m"))].mesh = s.add_mesh(Mesh(primitives=[
        Primitive(positions=pos, indices=np.arange(n, dtype=np.uint32))]))
    doc = retromesh.read(retromesh.to_bytes(retromesh.from_scene(s, "b3d")), format="b3d")
    tris = [c for c in doc.chunks() if isinstance(c, Tris)]
    assert len(tris) > 1 and sum(len(t.triangles) for t in tris) == 100_000
    assert all(len(np.unique(t.triangles)) <= MAX_TRIS_VERTICES for t in tris)



def _checked_read(data: bytes):
    """The document the checked readers (not the fast path) make of ``data``."""
    from retromesh.binio import Reader
    from retromesh.formats.b3d import chunks
    return chunks.read_checked(Reader(data))


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(documents)
def test_fast_path_reads_what_the_checked_readers_read(doc):
    from retromesh.binio import Reader
    from retromesh.formats.b3d import chunks
    data = retromesh.to_bytes(doc)
    fast = chunks.read_fast(Reader(data))
    assert fast is not None and _equal(fast, _checked_read(data))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_fast_path_gives_up_where_the_checked_readers_fail(data):
    from retromesh.binio import Reader
    from retromesh.formats.b3d import chunks
    b = bytearray(data.draw(st.sampled_from([wiggle_bytes(), crate_bytes()])))
    if data.draw(st.booleans()):
        del b[data.draw(st.integers(1, len(b) - 1)):]
    for _ in range(data.draw(st.integers(0, 6))):
        b[data.draw(st.integers(0, len(b) - 1))] = data.draw(st.integers(0, 255))
    fast = chunks.read_fast(Reader(bytes(b)))
    try:
        checked = _checked_read(bytes(b))
    except retromesh.FormatError:
        assert fast is None
        return
    assert fast is None or _equal(fast, checked)
