"""B3D -> glTF -> B3D fidelity (issues #10, #11): weights, fps, materials, structure, axes.

Fixtures are B3D documents built with our own chunk classes and writer."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import retromesh
from helpers.b3dbuild import bone as _bone, keys as _keys, quad_mesh as _quad_mesh
from helpers.gltfcheck import assert_valid
from retromesh.formats.b3d import (
    AnimChunk,
    B3dFile,
    Bone,
    Brus,
    BrushEntry,
    Keys,
    MeshChunk,
    NodeChunk,
    Texs,
    TextureEntry,
    Tris,
    Vrts,
    vrts_dtype,
)
from retromesh.formats.b3d.axes import rot_to_gltf

# -- fixtures --------------------------------------------------------------------------------


def _skinned(weight: float, fps: float = 0.0, empty_bone: bool = False) -> B3dFile:
    """A quad on node 'body' with two bones (left/right vertices), a key track on 'right'."""
    right = NodeChunk(b"right", (1, 0, 0), children=[
        _bone([(1, weight), (2, weight)]),
        _keys(1 | 4, [1, 11], position=[(1, 0, 0), (1, 2, 0)], rotation=[(1, 0, 0, 0)] * 2)])
    left = NodeChunk(b"left", children=[_bone([(0, weight), (3, weight)])])
    body = NodeChunk(b"body", children=[_quad_mesh(), left, right, AnimChunk(0, 10, fps)])
    if empty_bone:
        body.children.insert(3, NodeChunk(b"tip", children=[_bone([])]))
    return B3dFile(1, [Texs([TextureEntry(b"skin.png", 1, 2)]),
                       Brus(1, [BrushEntry(b"skin", (1, 1, 1, 1), 0.0, 1, 0, [0])]), body])


def _through_glb(doc: B3dFile, tmp_path, **load):
    """B3D -> GLB (validated) -> B3D; returns the GLB scene and the document read back."""
    (tmp_path / "in.b3d").write_bytes(retromesh.to_bytes(doc))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", retromesh.LossWarning)
        scene = retromesh.load(tmp_path / "in.b3d", **load)
        retromesh.save(scene, tmp_path / "a.glb")
        assert_valid(tmp_path / "a.glb")
        retromesh.convert(tmp_path / "a.glb", tmp_path / "b.b3d")
    return retromesh.load(tmp_path / "a.glb"), retromesh.read(tmp_path / "b.b3d")


def _chunks(doc, kind):
    return [c for n, _ in doc.walk() for c in n.children if isinstance(c, kind)]


def _node(doc, name: bytes) -> NodeChunk:
    return next(n for n, _ in doc.walk() if n.name == name)


# -- #10.2 all-zero BONE weights -------------------------------------------------------------

def test_zero_weights_follow_their_bone_as_in_blitz3d(tmp_path):
    scene, back = _through_glb(_skinned(0.0), tmp_path)
    prim = scene.meshes[0].primitives[0]
    joints = [scene.nodes[j].name for j in scene.skins[0].joints]
    named = [joints[j] for j in prim.joints[:, 0]]
    assert named == ["left", "right", "right", "left"]
    assert np.allclose(prim.weights[:, 0], 1.0)
    # back to B3D: the weights the file had (0.0), so Irrlicht sees the same file
    for name in (b"left", b"right"):
        bone = next(c for c in _node(back, name).children if isinstance(c, Bone))
        assert len(bone.weights) == 2 and np.all(bone.weights["weight"] == 0.0)


def test_zero_weights_raw_option_keeps_irrlichts_reading():
    data = retromesh.to_bytes(_skinned(0.0))
    scene = retromesh.load(data, format="b3d", weights="raw")
    prim = scene.meshes[0].primitives[0]
    assert np.all(prim.joints[:, 0] == 0) and np.allclose(prim.weights[:, 0], 1.0)
    with pytest.raises(retromesh.errors.UnsupportedError, match="weights"):
        retromesh.load(data, format="b3d", weights="nonsense")


def test_weights_not_summing_to_one_are_written_back_as_the_file_had_them(tmp_path):
    _, back = _through_glb(_skinned(0.5), tmp_path)
    for name in (b"left", b"right"):
        bone = next(c for c in _node(back, name).children if isinstance(c, Bone))
        assert np.allclose(bone.weights["weight"], 0.5)


@pytest.mark.parametrize("name", ["h3dview__hog.b3d", "h3dview__human.b3d", "h3dview__ninja.b3d"])
def test_corpus_zero_weight_files_animate(name):
    from conftest import CORPUS
    path = CORPUS / "b3d" / name
    if not path.exists():
        pytest.skip("no corpus")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", retromesh.LossWarning)
        scene = retromesh.load(path)
        raw = retromesh.load(path, weights="raw")
    p = scene.meshes[0].primitives[0]
    named = p.joints[:, 0] != 0
    assert named.mean() > 0.99                     # every vertex a BONE names follows it
    assert np.all(raw.meshes[0].primitives[0].joints[:, 0] == 0)


# -- #10.3 fps 0 -----------------------------------------------------------------------------

def test_fps_zero_plays_at_25_and_stays_zero(tmp_path):
    scene, back = _through_glb(_skinned(1.0, fps=0.0), tmp_path)
    times = scene.animations[0].channels[0].times
    assert np.allclose(times, [0.0, 10 / 25])      # frames 1 and 11 at Irrlicht's 25 fps
    anim = _chunks(back, AnimChunk)
    assert [(a.frames, a.fps) for a in anim] == [(10, 0.0)]


def test_fps_zero_without_extras_still_25():
    doc = _skinned(1.0, fps=0.0)
    body = doc.root_nodes[0]
    body.children = [c for c in body.children if not isinstance(c, AnimChunk)]   # no ANIM
    scene = retromesh.load(retromesh.to_bytes(doc), format="b3d")
    assert np.allclose(scene.animations[0].channels[0].times[-1], 10 / 25)


@pytest.mark.parametrize("fps", [60.0, 24.0, 30.0])
def test_a_glb_without_our_extras_keeps_its_keys_on_frames(tmp_path, fps):
    """Another tool's glTF (no extras) of a mob made at ``fps``: its keys stay on frames, so
    that the frame numbers a mod's Lua names still address the same poses."""
    doc = _skinned(1.0, fps=fps)
    right = doc.root_nodes[0].children[2]
    right.children[1] = _keys(1 | 4, [1, 2, 7, 12], position=[(1, 0, 0), (1, 1, 0), (1, 3, 0),
                                                         (1, 2, 0)], rotation=[(1, 0, 0, 0)] * 4)
    scene = retromesh.load(retromesh.to_bytes(doc), format="b3d")
    scene.extras.clear()
    for thing in (*scene.nodes, *scene.meshes, *scene.animations, *scene.materials):
        thing.extras.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", retromesh.LossWarning)
        retromesh.save(scene, tmp_path / "bare.b3d")
    back = retromesh.read(tmp_path / "bare.b3d")
    assert [a.fps for a in _chunks(back, AnimChunk)] == [fps]
    keys = [k for k in _chunks(back, Keys) if len(k.keys) > 1]
    assert keys and np.array_equal(keys[0].keys["frame"] - keys[0].keys["frame"][0], [0, 1, 6, 11])


# -- #10.4 materials and structure -----------------------------------------------------------

def _lightmapped() -> B3dFile:
    texs = Texs([TextureEntry(b"wall.jpg", 1, 2), TextureEntry(b"light.bmp", 65585, 5)])
    brus = Brus(2, [BrushEntry(b"plain", (2.0, 2.0, 2.0, 1.0), 0.25, 1, 2, [0, -1]),
                    BrushEntry(b"lit", (1, 1, 1, 1), 0.0, 3, 0, [0, 1])])
    root = NodeChunk(b"room", (5, 1, 2), (1, 1, 1), (0.7071, 0, 0.7071, 0),
                     children=[_quad_mesh(0, (0, 1), sets=2, flags=3)])
    return B3dFile(1, [texs, brus, root])


def test_lightmap_flags_blend_and_colour_survive(tmp_path):
    doc = _lightmapped()
    scene, back = _through_glb(doc, tmp_path)
    assert len(scene.textures) == 2
    lit = next(m for m in scene.materials if m.name == "lit")
    assert scene.textures[lit.base_color_texture.texture].uri == "wall.jpg"
    layers = lit.extras["b3d_brush"]["textures"]
    assert scene.textures[layers[1]["texture"]].uri == "light.bmp"
    assert back.textures == doc.textures                 # flags 65585 / 1, blend 5 / 2
    assert back.brushes == doc.brushes                   # colour 2.0, shininess, blend, fx, ids
    v = _chunks(back, MeshChunk)[0].vrts
    assert (v.flags, v.tex_coord_sets, v.tex_coord_set_size) == (3, 2, 2)
    assert [t.brush_id for t in _chunks(back, MeshChunk)[0].tris] == [0, 1]


def test_mesh_stays_on_its_node(tmp_path):
    """mtg doors: one NODE with a MESH away from the origin; no new root joint appears."""
    doc = _lightmapped()
    _, back = _through_glb(doc, tmp_path)
    assert [(n.name, d) for n, d in back.walk()] == [(b"room", 0)]
    assert np.allclose(back.root_nodes[0].position, (5, 1, 2), atol=1e-6)


def test_empty_bone_chunks_are_kept(tmp_path):
    doc = _skinned(1.0, empty_bone=True)
    _, back = _through_glb(doc, tmp_path)
    assert len(_chunks(back, Bone)) == len(_chunks(doc, Bone)) == 3
    assert len(next(c for c in _node(back, b"tip").children if isinstance(c, Bone)).weights) == 0


# -- #10.6 one texture per file, one material per brush -------------------------------------

def test_repeated_texture_files_give_one_texture_each():
    texs = Texs([TextureEntry(b"a.png", 1, 2), TextureEntry(b"a.png", 1, 2),
                 TextureEntry(b"b.png", 1, 2), TextureEntry(b"a.png", 1, 2)])
    brus = Brus(1, [BrushEntry(b"x", texture_ids=[0]), BrushEntry(b"y", texture_ids=[1]),
                    BrushEntry(b"z", texture_ids=[2]), BrushEntry(b"x", texture_ids=[0])])
    root = NodeChunk(b"r", children=[_quad_mesh(0, (0, 1))])
    scene = retromesh.load(retromesh.to_bytes(B3dFile(1, [texs, brus, root])), format="b3d")
    assert sorted(t.uri for t in scene.textures) == ["a.png", "b.png"]
    assert len(scene.materials) == 3                     # brush 3 repeats brush 0
    assert scene.materials[0].extras["b3d_brush"]["ids"] == [0, 3]


# -- #11 structure: keys layout and jumps ----------------------------------------------------

def test_keys_layout_and_jumps_are_kept(tmp_path):
    doc = _skinned(1.0, fps=24.0)
    right = _node(doc, b"right")
    right.children[1] = _keys(7, [1, 5, 5, 9], position=[(1, 0, 0), (1, 1, 0), (1, 3, 0), (1, 0, 0)],
                              scale=[(1, 1, 1)] * 4, rotation=[(1, 0, 0, 0)] * 4)
    _, back = _through_glb(doc, tmp_path)
    keys = [c for c in _node(back, b"right").children if isinstance(c, Keys)]
    assert [(k.flags, list(k.keys["frame"])) for k in keys] == [(7, [1, 5, 5, 9])]
    assert np.allclose(keys[0].keys["position"][1:3], [(1, 1, 0), (1, 3, 0)], atol=1e-5)


# -- #11 unknown chunks ------------------------------------------------------------------------

def test_unknown_chunks_come_back_where_they_were(tmp_path):
    """h3dview cube (a SEQS after ANIM) and mobs_kitten (an XXXX first): chunks we do not read
    ride in extras and are written back in place, at the top, in a NODE and in a MESH."""
    from retromesh.formats.b3d import RawChunk
    doc = _skinned(1.0)
    body = doc.root_nodes[0]
    doc.children[0:0] = [RawChunk(b"XXXX", b"first\0")]
    doc.children.insert(2, RawChunk(b"SEQS", bytes(range(256))))
    doc.children.append(RawChunk(b"LAST", b""))
    body.children.append(RawChunk(b"SEQS", b"Animation\0\1\0\0\0"))
    body.mesh.children.insert(1, RawChunk(b"MESx", b"\xff" * 7))

    def layout(d):
        return [[type(c).__name__ if not isinstance(c, RawChunk) else (c.tag, c.payload)
                 for c in parent] for parent in (d.children, body_of(d).children, body_of(d).mesh.children)]

    def body_of(d):
        return d.root_nodes[0]
    _, back = _through_glb(doc, tmp_path)
    assert layout(back) == layout(doc)


# -- #10.8 orientation: the exact inverse of Luanti's glTF loader ------------------------------

def _irr_quat_matrix_transposed(wxyz):
    """Irrlicht's quaternion(x, y, z, w).getMatrix_transposed() as a column-vector matrix
    (Irrlicht's getMatrix is the usual rotation matrix; B3D NODE/KEYS use the transpose)."""
    w, x, y, z = np.asarray(wxyz, float) / np.linalg.norm(wxyz)
    r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    return r.T


@pytest.mark.parametrize("seed", range(5))
def test_b3d_to_gltf_is_the_inverse_of_luantis_gltf_loader(seed):
    """Irrlicht's B3D loader builds LocalMatrix = T(p) R(q)^T S(s) from a NODE and uses vertex
    positions as stored; Luanti's glTF loader (irr/src/CGLTFMeshFileLoader.cpp) turns a glTF
    node matrix M into Z M Z and a position p into Z p (Z = diag(1, 1, -1)). Our glTF must
    give back exactly Irrlicht's matrices and positions."""
    rng = np.random.default_rng(seed)
    p, s, q = rng.normal(size=3), rng.uniform(0.5, 2, 3), rng.normal(size=4)
    node = NodeChunk(b"n", tuple(p), tuple(s), tuple(q), children=[_quad_mesh(-1, (-1,))])
    scene = retromesh.load(retromesh.to_bytes(B3dFile(1, [node])), format="b3d")
    irr = np.eye(4)
    irr[:3, :3] = _irr_quat_matrix_transposed(q) @ np.diag(s)
    irr[:3, 3] = p
    z = np.diag([1.0, 1.0, -1.0, 1.0])
    assert np.allclose(z @ scene.nodes[0].matrix @ z, irr, atol=1e-6)
    raw = node.mesh.vrts.vertices["position"]
    assert np.allclose(scene.meshes[0].primitives[0].positions * [1, 1, -1], raw)
    assert np.allclose(rot_to_gltf([1, 0, 0, 0]), [0, 0, 0, 1])


def test_keys_without_anim_get_no_anim_back(tmp_path):
    doc = _skinned(1.0)
    body = doc.root_nodes[0]
    body.children = [c for c in body.children if not isinstance(c, AnimChunk)]
    _, back = _through_glb(doc, tmp_path)
    assert _chunks(back, AnimChunk) == []
    assert len(_chunks(back, Keys)) == len(_chunks(doc, Keys))


@pytest.mark.parametrize("junk", [None, 7, "x", [1, 2], {"ids": ["a"]}, {"ids": [1e300]},
                                  {"textures": 3}, {"v": 1, "mesh": {"vrts": [1, 99, -3]},
                                                    "keys": ["q"], "anim": [None, "n", {}]},
                                  {"mesh": "s", "bone": "yes", "keys": 5, "anim": 3, "color": "red",
                                   "ids": [0], "textures": [{"texs": 0, "file": 5, "flags": "z"}]}])
def test_foreign_or_broken_extras_never_crash(junk):
    """Extras are data from the outside: a broken record is ignored, never a crash."""
    scene = retromesh.load(retromesh.to_bytes(_lightmapped()), format="b3d")
    for m in scene.materials:
        m.extras["b3d_brush"] = junk
    for n in scene.nodes:
        n.extras["b3d"] = junk if isinstance(junk, dict) else n.extras["b3d"]
    for p in scene.meshes[0].primitives:
        p.extras["b3d_weights"] = junk
        p.extras["b3d_brush"] = junk
    scene.extras["b3d_unused_texs"] = junk
    doc = retromesh.from_scene(scene, "b3d")
    retromesh.read(retromesh.to_bytes(doc), format="b3d")


def test_a_second_animation_of_the_same_bones_goes_end_to_end():
    import copy
    scene = retromesh.load(retromesh.to_bytes(_skinned(1.0, fps=24.0)), format="b3d")
    scene.animations.append(copy.deepcopy(scene.animations[0]))
    scene.animations[1].name = "again"
    with pytest.warns(retromesh.LossWarning, match="end to end"):
        doc = retromesh.from_scene(scene, "b3d")
    frames = sorted(f for k in _chunks(doc, Keys) for f in k.keys["frame"])
    assert frames[0] == 1 and frames[-1] == 22           # 1..11, then 12..22


def test_what_blender_keeps_is_enough_for_fps_and_frames():
    """Blender's glTF importer keeps node, mesh and material extras as custom properties, not
    animation or primitive extras: fps 0 and the frame numbers still come back."""
    scene = retromesh.load(retromesh.to_bytes(_skinned(1.0, fps=0.0)), format="b3d")
    for a in scene.animations:
        a.extras.clear()
    for p in scene.meshes[0].primitives:
        p.extras.clear()
    doc = retromesh.from_scene(scene, "b3d")
    assert [(a.frames, a.fps) for a in _chunks(doc, AnimChunk)] == [(10, 0.0)]
    assert sorted(f for k in _chunks(doc, Keys) for f in k.keys["frame"]) == [1, 11]


def test_check_warns_about_zero_weight_vertices():
    from retromesh.formats.b3d import check
    problems = check(_skinned(0.0))
    assert any("4 vertices have only zero BONE weights" in p.message and not p.is_error
               for p in problems)
    assert not any("zero BONE weights" in p.message for p in check(_skinned(1.0)))


# -- property: any B3D structure survives B3D -> GLB -> B3D -----------------------------------

from hypothesis import (  # noqa: E402
    HealthCheck,
    given,
    settings,
    strategies as st,
)


@st.composite
def _b3d_structures(draw):
    n_tex = draw(st.integers(0, 3))
    texs = [TextureEntry(draw(st.sampled_from([b"a.png", b"b.png", b"c d.jpg"])),
                         draw(st.sampled_from([1, 9, 3, 0x10031])), draw(st.integers(0, 5)))
            for _ in range(n_tex)]
    n_brush = draw(st.integers(0, 3))
    n_layers = draw(st.integers(0, 2))
    brushes = [BrushEntry(draw(st.sampled_from([b"m", b"n"])),
                          tuple(draw(st.sampled_from([0.5, 1.0, 2.0])) for _ in range(3)) + (1.0,),
                          0.0, draw(st.integers(1, 3)), draw(st.sampled_from([0, 2, 16])),
                          [draw(st.integers(-1, n_tex - 1)) for _ in range(n_layers)])
               for _ in range(n_brush)]
    sets = draw(st.integers(0, 2))
    flags = draw(st.integers(0, 3))
    v = np.zeros(6, vrts_dtype(flags, sets, 2 if sets else 0))
    v["position"] = draw(st.permutations([(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (2, 0, 1),
                                          (2, 1, 1)]))
    if flags & 1:
        v["normal"] = (0, 0, 1)
    if flags & 2:
        v["color"] = 1.0
    brush_ids = st.integers(-1, n_brush - 1)
    mesh = MeshChunk(draw(brush_ids), [Vrts(flags, sets, 2 if sets else 0, v)])
    for tri in ([[0, 1, 2], [0, 2, 3]], [[1, 4, 5], [1, 5, 2]])[:draw(st.integers(1, 2))]:
        mesh.children.append(Tris(draw(brush_ids), np.array(tri, np.int32)))
    n_bones = draw(st.integers(0, 3))
    fps = draw(st.sampled_from([0.0, 24.0, 60.0]))
    root = NodeChunk(b"root", (draw(st.sampled_from([0.0, 3.0])), 0, 0), children=[mesh])
    parent = root
    for b in range(n_bones):
        weights = draw(st.lists(st.tuples(st.integers(0, 5), st.sampled_from([0.0, 0.25, 1.0])),
                                max_size=6, unique_by=lambda x: x[0]))
        node = NodeChunk(b"bone%d" % b, (0, 1, 0), children=[_bone(weights)])
        if draw(st.booleans()):
            frames = sorted(draw(st.lists(st.integers(1, 30), min_size=1, max_size=4)))
            k_flags = draw(st.sampled_from([1, 2, 4, 5, 7]))
            node.children.append(_keys(k_flags, frames, **{
                f: v for f, v, bit in (("position", (0, 1, 0), 1), ("scale", (1, 1, 1), 2),
                                       ("rotation", (1, 0, 0, 0), 4)) if k_flags & bit}))
        parent.children.append(node)
        parent = node if draw(st.booleans()) else parent
    if draw(st.booleans()):         # a static mesh after the skeleton, away from the origin
        root.children.append(NodeChunk(b"prop", (0, 0, 2), (2, 2, 2), (0.6, 0.8, 0, 0), children=[
            _quad_mesh(draw(brush_ids), (draw(brush_ids),), sets=sets, flags=flags)]))
    if draw(st.booleans()):
        holder = draw(st.sampled_from([root, parent]))
        holder.children.append(AnimChunk(draw(st.integers(0, 2)), draw(st.integers(0, 40)), fps))
    children = ([Texs(texs)] if texs else []) + ([Brus(n_layers, brushes)] if brushes else [])
    return B3dFile(1, children + [root])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_b3d_structures())
def test_generated_structures_survive_glb_round_trip(doc):
    from test_b3d_corpus import _native_counts
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", retromesh.LossWarning)
        scene = retromesh.load(retromesh.to_bytes(doc), format="b3d")
        glb = retromesh.to_bytes(retromesh.from_scene(scene, "glb"))
        back = retromesh.from_scene(retromesh.load(glb, format="glb"), "b3d")
    before, after = _native_counts(doc), _native_counts(back)
    for key in before:
        assert before[key] == after[key], key
    # every vertex used (two TRIS, sharing two vertices): the same VRTS and BONE entries
    from retromesh.formats.b3d import info
    if len(doc.root_nodes[0].mesh.tris) == 2:
        assert {k: info(back)[k] for k in ("vertices", "weights")} == \
            {k: info(doc)[k] for k in ("vertices", "weights")}


def test_keys_at_late_frames_are_not_resampled(tmp_path):
    """A GLB holds times as float32: frame 300004 at 25 fps comes back some hundredths of a frame
    off, still that frame (not a resampled track of 300000 keys; a fuzzed file with a key near
    frame 2**31 needed gigabytes that way)."""
    doc = _skinned(1.0, fps=25.0)
    right = _node(doc, b"right")
    right.children[1] = _keys(1, [1, 300_004], position=[(1, 0, 0), (1, 2, 0)])
    _, back = _through_glb(doc, tmp_path)
    keys = [c for c in _node(back, b"right").children if isinstance(c, Keys)]
    assert [list(k.keys["frame"]) for k in keys] == [[1, 300_004]]
