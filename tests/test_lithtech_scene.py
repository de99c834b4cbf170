"""LithTech .abc <-> Scene <-> glTF: skins, LODs, sockets, animations, v6 morph targets,
from_scene round trips (positions, UVs, weights, key transforms within 1e-4)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import trimesh

import retromesh
from helpers.gltfcheck import assert_valid, assert_valid_many
from helpers.roundtrip import gltf_round_trip
from retromesh import LossWarning
from retromesh.formats.lithtech import abc, samples, scene as ls, scene_read_v6 as ls_v6
from retromesh.scene import Animation, Channel, Mesh, Node, Primitive, Scene, Skin
from retromesh.transforms import compose_trs, world_matrices

S3 = np.array([1.0, 1.0, -1.0])
S4 = np.diag([1.0, 1.0, -1.0, 1.0])
V9 = [9, 10, 11, 12, 13]


# -- helpers -------------------------------------------------------------------------------
def pose_world(scene: Scene, anim: Animation | None, t: float) -> np.ndarray:
    """World matrices of every node at time ``t`` of ``anim`` (rest pose when None)."""
    T = np.stack([n.translation for n in scene.nodes])
    R = np.stack([n.rotation for n in scene.nodes])
    Sc = np.stack([n.scale for n in scene.nodes])
    if anim is not None:
        for c in anim.channels:
            if c.path == "weights":
                continue
            v = c.sample(np.array([t]))[0]
            {"translation": T, "rotation": R, "scale": Sc}[c.path][c.node] = v
    return world_matrices(compose_trs(T, R, Sc), scene.parents())


def skinned_positions(scene: Scene, node: int, anim: Animation | None, t: float) -> np.ndarray:
    """glTF linear blend skinning of one skinned mesh node at time ``t``."""
    world = pose_world(scene, anim, t)
    nd = scene.nodes[node]
    skin = scene.skins[nd.skin]
    jm = world[skin.joints] @ skin.inverse_bind_matrices
    out = []
    for p in scene.meshes[nd.mesh].primitives:
        ph = np.concatenate([p.positions.astype(np.float64), np.ones((len(p.positions), 1))], 1)
        acc = np.zeros((len(ph), 3))
        for k in range(4):
            acc += p.weights[:, k:k + 1] * np.einsum("nij,nj->ni", jm[p.joints[:, k]], ph)[:, :3]
        out.append(acc)
    return np.concatenate(out)


def engine_positions(doc: abc.AbcModel, piece: int, anim: int, key: int) -> np.ndarray:
    """The LithTech engine's skinning in file space: sum(bias * W_node(key) @ weight.location),
    keys parent-relative, flag 0x02 nodes placed by their bind offset."""
    nodes = doc.nodes
    parents, _ = ls.tree_parents([n.child_count for n in nodes])
    m = np.stack([n.matrix.astype(np.float64) for n in nodes])
    tr = doc.animations[anim].transforms[:, key]
    local = compose_trs(tr["location"].astype(np.float64), tr["rotation"].astype(np.float64),
                        np.ones((len(nodes), 3)))
    for j, n in enumerate(nodes):
        if n.flags & 2:
            bind_local = m[j] if parents[j] < 0 else np.linalg.inv(m[parents[j]]) @ m[j]
            local[j, :3, 3] = bind_local[:3, 3]
    world = world_matrices(local, parents)
    lod = doc.pieces[piece].lods[0]
    counts = lod.vertices["weight_count"].astype(int)
    owner = np.repeat(np.arange(len(counts)), counts)
    w = lod.weights
    loc = np.concatenate([w["location"].astype(np.float64), np.ones((len(w), 1))], 1)
    placed = np.einsum("nij,nj->ni", world[w["node"].astype(int)], loc)[:, :3]
    out = np.zeros((len(counts), 3))
    np.add.at(out, owner, placed * w["bias"][:, None])
    return out


def mesh_node(scene: Scene, name: str) -> int:
    return next(i for i, n in enumerate(scene.nodes) if n.name == name and n.mesh is not None)


def match(gl_bind: np.ndarray, abc_bind: np.ndarray) -> np.ndarray:
    """For each glTF vertex, the ABC vertex at the same bind position."""
    d = np.linalg.norm(gl_bind[:, None, :] - abc_bind[None, :, :], axis=2)
    return d.argmin(axis=1)


# -- to_scene ------------------------------------------------------------------------------
@pytest.mark.parametrize("version", V9)
def test_to_scene_structure(version):
    doc = samples.build_sample(version)
    sc = ls.to_scene(doc)
    sc.validate()
    assert sc.counts()["joints"] == 6 and len(sc.skins) == 1
    names = [n.name for n in sc.nodes]
    assert names[:6] == ["root", "torso", "head", "arm_l", "hand_l", "arm_r"]
    assert sc.parents()[:6] == [-1, 0, 1, 1, 3, 1]
    # inverse bind = inverse of the converted model-space matrix
    m = np.stack([n.matrix.astype(np.float64) for n in doc.nodes])
    assert np.allclose(sc.skins[0].inverse_bind_matrices, np.linalg.inv(S4 @ m @ S4), atol=1e-6)
    # rest pose = bind pose
    assert np.allclose(sc.world_matrices()[:6], S4 @ m @ S4, atol=1e-5)
    # LOD 0 in the default scene, LOD 1 in the "lods" scene (with the skeleton root)
    assert {"body", "head"} <= {sc.nodes[r].name for r in sc.roots}
    lods = dict(sc.extra_scenes)["lods"]
    assert {sc.nodes[r].name for r in lods} == {"root", "body_lod1", "head_lod1"}
    # sockets under their nodes, converted
    eyes = names.index("Eyes")
    assert sc.parents()[eyes] == 2 and sc.nodes[eyes].extras["abc_socket"]
    assert np.allclose(sc.nodes[eyes].translation, np.array(doc.sockets[0].location) * S3)
    # materials per material index, specular in extras
    assert [m.name for m in sc.materials] == ["material_0", "material_1"]
    assert sc.materials[1].extras["specular_power"] == 20.0
    # bind pose check reported
    for mesh in sc.meshes:
        assert mesh.extras["bind_max_deviation"] < 1e-5
    assert sc.extras["command_string"] == "Rigid 0 ShadowEnable 1"
    assert [w["name"] for w in sc.extras["weight_sets"]] == ["upper", "empty"]
    assert len(sc.extras["child_models"]) == 2


def test_to_scene_without_lods():
    sc = ls.to_scene(samples.build_sample(12), lods=False)
    assert not sc.extra_scenes and all("_lod" not in m.name for m in sc.meshes)


@pytest.mark.parametrize("version", V9)
def test_animations(version):
    doc = samples.build_sample(version)
    sc = ls.to_scene(doc)
    assert [a.name for a in sc.animations] == ["idle", "wave"]
    idle = sc.animations[0]
    assert np.allclose(idle.channels[0].times, [0.0, 0.5, 1.0])
    assert idle.extras["markers"] == [{"time": 0.5, "string": "SOUND_KEY step"}]
    assert idle.extras["interpolation_ms"] == 200
    # the second animation has 250 ms on file from v12 on; before, the engine's default
    assert sc.animations[1].extras["interpolation_ms"] == (250 if version >= 12 else 200)
    # flag 0x02 (torso) uses the bind offset, flag 0 (arm_l) the key translation
    parents = sc.parents()
    for ch in idle.channels:
        if ch.path != "translation":
            continue
        node = doc.nodes[ch.node]
        if node.flags & 2:
            assert np.allclose(ch.values, sc.nodes[ch.node].translation, atol=1e-6)
        else:
            loc = doc.animations[0].transforms[ch.node]["location"] * S3
            assert np.allclose(ch.values, loc, atol=1e-6)
    assert parents[0] == -1


@pytest.mark.parametrize("version", [9, 12, 13])
def test_skinning_matches_engine(version):
    """glTF skinning of the converted scene == the engine's formula at every key (file -> S)."""
    doc = samples.build_sample(version)
    sc = ls.to_scene(doc)
    for pi, pname in enumerate(["body", "head"]):
        node = mesh_node(sc, pname)
        bind = skinned_positions(sc, node, None, 0.0)
        abc_bind = doc.pieces[pi].lods[0].vertices["location"] * S3
        idx = match(bind, abc_bind)
        assert np.abs(bind - abc_bind[idx]).max() < 1e-5
        for ai, anim in enumerate(sc.animations):
            for k, t in enumerate(doc.animations[ai].key_times):
                got = skinned_positions(sc, node, anim, t / 1000.0)
                want = engine_positions(doc, pi, ai, k) * S3
                assert np.abs(got - want[idx]).max() < 1e-4


def test_scaled_bind_matrices_animate_without_scale():
    """A bind matrix with scale: the engine's animated world is parent @ T @ R (no scale), so
    the glTF animation must not keep the rest pose's scale on that node."""
    doc = samples.build_sample(12)
    m = doc.nodes[3].matrix.astype(np.float64)
    m[:3, :3] *= 2.0
    doc.nodes[3].matrix = m.astype("<f4")
    lod = doc.pieces[0].lods[0]
    counts = lod.vertices["weight_count"].astype(int)
    owner = np.repeat(np.arange(len(counts)), counts)
    sel = lod.weights["node"] == 3                      # keep the file's bind pose consistent
    loc = np.linalg.inv(m) @ np.c_[lod.vertices["location"][owner[sel]], np.ones(sel.sum())].T
    lod.weights["location"][sel] = loc[:3].T
    sc = ls.to_scene(doc)
    node = mesh_node(sc, "body")
    bind = skinned_positions(sc, node, None, 0.0)
    idx = match(bind, lod.vertices["location"] * S3)
    for ai, anim in enumerate(sc.animations):
        for k, t in enumerate(doc.animations[ai].key_times):
            got = skinned_positions(sc, node, anim, t / 1000.0)
            assert np.abs(got - (engine_positions(doc, 0, ai, k) * S3)[idx]).max() < 1e-4


def test_more_than_four_weights_warns():
    doc = samples.build_sample(12, heavy=True)
    with pytest.warns(LossWarning, match="more than 4 weights"):
        sc = ls.to_scene(doc)
    p = sc.meshes[0].primitives[0]
    assert np.allclose(p.weights.sum(1), 1.0, atol=1e-6)
    assert sc.meshes[0].extras["vertices_with_dropped_weights"] == 1


def test_uv_split_and_winding():
    doc = samples.build_sample(12)
    lod = doc.pieces[0].lods[0]
    sc = ls.to_scene(doc)
    p = sc.meshes[0].primitives[0]
    # 8 box corners used with several UVs each -> more glTF vertices than ABC vertices
    assert len(p.positions) > len(lod.vertices)
    assert len(p.indices) == lod.faces.shape[0] * 3
    tri = p.indices.reshape(-1, 3)
    # first face: corners 0, 1, 2 of the file become 0, 2, 1 (reversed winding), positions S-mirrored
    f0 = lod.faces[0]
    pos_file = lod.vertices["location"][f0["vertex"].astype(int)] * S3
    assert np.allclose(p.positions[tri[0]], pos_file[[0, 2, 1]])
    assert np.allclose(p.uvs[0][tri[0]], f0["uv"][[0, 2, 1]])


def test_v6_scene_morph_targets():
    doc = samples.build_sample(6)
    sc = ls.to_scene(doc)
    sc.validate()
    assert sc.extras["vertex_animation"] == "morph targets"
    prim = sc.meshes[0].primitives[0]
    nkeys = sum(len(a.keys) for a in doc.animations)
    assert len(prim.targets) == nkeys == len(sc.meshes[0].weights)
    weights = [c for a in sc.animations for c in a.channels if c.path == "weights"]
    assert len(weights) == 2 and weights[0].values.shape == (3, nkeys)
    # first key of the first animation is the bind pose: its target moves nothing
    assert np.abs(prim.targets[0].positions).max() < 1e-6
    assert np.abs(prim.targets[1].positions).max() > 0.01
    # bind positions: vertex in its node's space placed by the first key (FlipMat = 1: no mirror)
    assert sc.extras["flip_mat"] == 1 and sc.extras["fix_anim_keyframes"] == 1
    world = sc.world_matrices()
    v = doc.geometry.vertices
    body_v = np.append(v["location"][0].astype(np.float64), 1.0)
    assert np.min(np.linalg.norm(prim.positions - (world[1] @ body_v)[:3], axis=1)) < 1e-5
    no_morph = ls.to_scene(doc, morph=False)
    assert not no_morph.meshes[0].primitives[0].targets
    mirrored = ls.to_scene(doc, flip_mat=0)
    assert mirrored.extras["flip_mat"] == 0


def test_v6_without_transform_info_defaults():
    sc = ls.to_scene(samples.build_sample(6, transform_info=False))
    assert sc.extras["flip_mat"] == 1 and sc.extras["fix_anim_keyframes"] == 1


# -- glTF ----------------------------------------------------------------------------------
def test_gltf_of_every_version_is_valid(tmp_path):
    paths = []
    for v in samples.SAMPLE_VERSIONS:
        src = tmp_path / f"m{v}.abc"
        retromesh.write(samples.build_sample(v), src)
        out = tmp_path / f"m{v}.glb"
        retromesh.convert(src, out)
        paths.append(out)
    infos = assert_valid_many(paths)
    for v, info in zip(samples.SAMPLE_VERSIONS, infos):
        assert info["animationCount"] == 2 and info["hasSkins"]
        assert info["maxUVs"] == 1 and info["maxInfluences"] == 4
        assert info["hasMorphTargets"] == (v == 6)
    for p in paths:
        assert len(trimesh.load(p).geometry) >= 1


def test_node_forest_gets_a_common_root(tmp_path):
    """Child counts that end early leave several trees; the glTF skin still needs a common
    root (the validator rejected SKIN_NO_COMMON_ROOT before)."""
    doc = samples.build_sample(12)
    doc.nodes[0].child_count, doc.nodes[1].child_count = 0, 1
    assert any("4 node trees" in p.message for p in ls.structural_problems(doc))
    sc = ls.to_scene(doc)
    hub = sc.skins[0].skeleton
    assert sc.nodes[hub].name == "abc_roots" and sc.roots.count(hub) == 1
    assert sorted(sc.nodes[hub].children) == [0, 1, 3, 5]
    assert dict(sc.extra_scenes)["lods"][0] == hub
    out = tmp_path / "forest.glb"
    retromesh.save(sc, out)
    assert_valid(out)


def test_key_times_that_float32_runs_together_are_dropped():
    doc = samples.build_sample(12)
    doc.animations[0].key_times = np.array([0, 2**32 - 2, 2**32 - 1], "<u4")
    with pytest.warns(LossWarning, match="1 keys"):
        sc = ls.to_scene(doc)
    assert len(sc.animations[0].channels[0].times) == 2


def test_gltf_reader_keeps_extras(tmp_path):
    out = tmp_path / "m.glb"
    retromesh.save(ls.to_scene(samples.build_sample(12)), out)
    back = retromesh.load(out)
    assert back.nodes[1].extras["abc_flags"] == 2
    assert back.animations[0].extras["markers"][0]["string"] == "SOUND_KEY step"


# -- from_scene ----------------------------------------------------------------------------
def _round_trip(tmp_path, doc, version=12):
    src = tmp_path / "a.abc"
    retromesh.write(doc, src)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)      # nothing may be lost
        back = gltf_round_trip(src, tmp_path, save_options={"version": version})[""]
    return retromesh.read(back)


@pytest.mark.parametrize("version", [12, 9, 13])
def test_from_scene_round_trip_through_gltf(tmp_path, version):
    doc = samples.build_sample(12)
    back = _round_trip(tmp_path, doc, version)
    assert back.version == version
    assert back.header.lod_count == 2 and [p.name for p in back.pieces] == [b"body", b"head"]
    for p0, p1 in zip(doc.pieces, back.pieces):
        assert len(p1.lods[1].faces) == len(p0.lods[1].faces)
    assert np.allclose(back.header.lod_distances, doc.header.lod_distances)
    assert [n.name for n in back.nodes] == [n.name for n in doc.nodes]
    assert [n.flags for n in back.nodes] == [n.flags for n in doc.nodes]
    assert [n.child_count for n in back.nodes] == [n.child_count for n in doc.nodes]
    assert np.abs(np.stack([n.matrix for n in back.nodes])
                  - np.stack([n.matrix for n in doc.nodes])).max() < 1e-5
    for a0, a1 in zip(doc.animations, back.animations):
        assert a0.name == a1.name and a0.key_strings == a1.key_strings
        assert list(a0.key_times) == list(a1.key_times)
        assert np.abs(a0.transforms["location"] - a1.transforms["location"]).max() < 1e-4
        dots = np.abs((a0.transforms["rotation"] * a1.transforms["rotation"]).sum(-1))
        assert np.abs(dots - 1).max() < 1e-4
        if version >= 12:
            assert a0.interpolation_ms == a1.interpolation_ms
    assert [s.name for s in back.sockets] == [s.name for s in doc.sockets]
    for s0, s1 in zip(doc.sockets, back.sockets):
        assert np.allclose(s0.location, s1.location, atol=1e-5)
    # geometry: positions, UVs and weights survive (compare the converted scenes)
    sc0, sc1 = ls.to_scene(doc, lods=False), ls.to_scene(back)
    for name in ("body", "head"):
        p0 = sc0.meshes[[m.name for m in sc0.meshes].index(name)].primitives[0]
        p1 = sc1.meshes[[m.name for m in sc1.meshes].index(name)].primitives[0]
        key0 = np.round(np.concatenate([p0.positions, p0.uvs[0]], 1), 4)
        key1 = np.round(np.concatenate([p1.positions, p1.uvs[0]], 1), 4)
        o0, o1 = np.lexsort(key0.T[::-1]), np.lexsort(key1.T[::-1])
        assert np.abs(key0[o0] - key1[o1]).max() < 1e-4
        w0 = np.sort(p0.weights, 1)[o0]
        w1 = np.sort(p1.weights, 1)[o1]
        assert np.abs(w0 - w1).max() < 1e-4
        for ai in range(2):
            n0, n1 = mesh_node(sc0, name), mesh_node(sc1, name)
            t = sc0.animations[ai].channels[0].times[-1]
            g0 = skinned_positions(sc0, n0, sc0.animations[ai], t)[o0]
            g1 = skinned_positions(sc1, n1, sc1.animations[ai], t)[o1]
            assert np.abs(g0 - g1).max() < 1e-4


def _blender_like_scene() -> Scene:
    """An armature object (rotated, moved) holding a two-bone chain, a skinned quad, one
    animation with keys at non-millisecond-free times, what a Blender glTF export looks like."""
    sc = Scene(name="blender")
    arm = sc.add_node(Node(name="Armature", translation=[1.0, 0.0, -2.0],
                           rotation=[0.0, np.sin(np.pi / 8), 0.0, np.cos(np.pi / 8)]))
    b0 = sc.add_node(Node(name="Bone", translation=[0.0, 0.5, 0.0]), arm)
    b1 = sc.add_node(Node(name="Bone.001", translation=[0.0, 1.0, 0.0],
                          rotation=[np.sin(0.2), 0.0, 0.0, np.cos(0.2)]), b0)
    world = sc.world_matrices()
    pos = np.array([[-.5, 0, 0], [.5, 0, 0], [.5, 2, 0], [-.5, 2, 0]], float)
    pos = (world[arm] @ np.concatenate([pos, np.ones((4, 1))], 1).T).T[:, :3]
    prim = Primitive(positions=pos, indices=np.array([0, 1, 2, 0, 2, 3]),
                     uvs=[np.array([[0, 1], [1, 1], [1, 0], [0, 0]], float)],
                     joints=np.array([[0, 1, 0, 0]] * 4), weights=np.array(
                         [[1, 0, 0, 0], [.7, .3, 0, 0], [.2, .8, 0, 0], [0, 1, 0, 0]], float))
    mi = sc.add_mesh(Mesh(name="Quad", primitives=[prim]))
    si = sc.add_skin(Skin(joints=[b0, b1], inverse_bind_matrices=np.linalg.inv(world[[b0, b1]])))
    mesh = Node(name="Quad", translation=[0.0, 0.0, 0.0])
    mesh.mesh, mesh.skin = mi, si
    sc.add_node(mesh)
    times = np.array([0.0, 0.25, 0.5])
    ang = np.array([0.0, 0.6, -0.4])
    rot = np.stack([np.sin(ang / 2), np.zeros(3), np.zeros(3), np.cos(ang / 2)], 1)
    sc.animations.append(Animation(name="Bend", channels=[
        Channel(node=b1, path="rotation", times=times, values=rot),
        Channel(node=b0, path="translation", times=times[[0, 2]],
                values=np.array([[0, .5, 0], [0, .7, 0]], float)),
        Channel(node=arm, path="rotation", times=times[[0, 2]],
                values=np.array([[0, np.sin(np.pi / 8), 0, np.cos(np.pi / 8)], [0, 0, 0, 1]], float))]))
    return sc.validate()


def test_blender_like_armature_does_not_explode(tmp_path):
    sc = _blender_like_scene()
    glb = tmp_path / "blender.glb"
    retromesh.save(sc, glb)
    assert_valid(glb)
    loaded = retromesh.load(glb)
    out = tmp_path / "blender.abc"
    retromesh.save(loaded, out)
    doc = retromesh.read(out)
    assert doc.version == 12 and [n.name for n in doc.nodes] == [b"Bone", b"Bone.001"]
    back = ls.to_scene(doc)
    quad0 = next(i for i, n in enumerate(sc.nodes) if n.mesh is not None)
    quad1 = mesh_node(back, "Quad")
    for t in (0.0, 0.1, 0.25, 0.4, 0.5):
        g0 = skinned_positions(sc, quad0, sc.animations[0], t)
        g1 = skinned_positions(back, quad1, back.animations[0], t)
        idx = match(skinned_positions(sc, quad0, None, 0), skinned_positions(back, quad1, None, 0))
        assert np.abs(g0 - g1[idx]).max() < 1e-4, t
    retromesh.save(back, tmp_path / "again.glb")
    info = assert_valid(tmp_path / "again.glb")
    assert info["animationCount"] == 1 and info["hasSkins"]


def test_scaled_armature_keeps_its_size():
    """A constant scale on the armature object (Blender's "unapplied scale") has no place in
    ABC keys: it is baked into the weight locations, so the engine's skinning of the written
    file matches the glTF at every key (the scale used to be dropped: a model 3x too small
    with its limbs drawn towards the root)."""
    sc = _blender_like_scene()
    sc.nodes[0].scale = np.array([3.0, 3.0, 3.0])
    world = sc.world_matrices()
    quad = next(i for i, n in enumerate(sc.nodes) if n.mesh is not None)
    prim = sc.meshes[0].primitives[0]
    prim.positions = (world[0] @ np.linalg.inv(world[0] @ np.diag([1 / 3, 1 / 3, 1 / 3, 1]))
                      @ np.c_[prim.positions, np.ones(4)].T).T[:, :3]
    sc.skins[0].inverse_bind_matrices = np.linalg.inv(world[[1, 2]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        doc = abc.read(retromesh.binio.Reader(abc.write(ls.from_scene(sc))))
    assert ls.structural_problems(doc) == []
    for k, ms in enumerate(doc.animations[0].key_times):
        want = skinned_positions(sc, quad, sc.animations[0], ms / 1000.0)
        assert np.abs(engine_positions(doc, 0, 0, k) * S3 - want).max() < 1e-4, ms


def test_animated_scale_is_reported():
    sc = _blender_like_scene()
    sc.animations[0].channels.append(Channel(node=2, path="scale", times=np.array([0.0, 0.5]),
                                             values=np.array([[1.0, 1, 1], [1.0, 2, 1]])))
    with pytest.warns(LossWarning, match="scale"):
        ls.from_scene(sc)


def test_animated_unskinned_mesh_keeps_its_motion():
    """A rigid mesh under an animated node (no skin) becomes a node of its own with keys."""
    sc = Scene()
    mi = sc.add_mesh(Mesh(name="tri", primitives=[Primitive(
        positions=np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float), indices=np.array([0, 1, 2]))]))
    spin = sc.add_node(Node(name="spinner", translation=[2.0, 0, 0], scale=[2.0, 2.0, 2.0]))
    tri = Node(name="tri", translation=[0, 1.0, 0])
    tri.mesh = mi
    ti = sc.add_node(tri, spin)
    q = np.array([[0, 0, 0, 1], [0, 0, np.sin(0.5), np.cos(0.5)], [0, np.sin(1), 0, np.cos(1)]])
    sc.animations.append(Animation(name="spin", channels=[
        Channel(node=spin, path="rotation", times=np.array([0.0, 0.5, 1.0]), values=q)]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        doc = abc.read(retromesh.binio.Reader(abc.write(ls.from_scene(sc))))
    assert [n.name for n in doc.nodes] == [b"tri"]
    for k, ms in enumerate(doc.animations[0].key_times):
        pose = pose_world(sc, sc.animations[0], ms / 1000.0)[ti]
        want = (pose @ np.c_[sc.meshes[0].primitives[0].positions, np.ones(3)].T).T[:, :3]
        assert np.abs(engine_positions(doc, 0, 0, k) * S3 - want).max() < 1e-4, ms


def _tri_mesh(sc: Scene, name: str) -> int:
    return sc.add_mesh(Mesh(name=name, primitives=[Primitive(
        positions=np.array([[0, 0, 0], [0.2, 0, 0], [0, 0.5, 0]], float), indices=np.array([0, 1, 2]))]))


def test_unskinned_props_stay_where_the_gltf_puts_them():
    """A static prop beside an animated skeleton must not follow ABC node 0 (a bone), and a
    prop on a joint whose rest pose differs from its bind pose sits where it rests."""
    sc = _blender_like_scene()
    prop = Node(name="prop", translation=[3.0, 0, 0])
    prop.mesh = _tri_mesh(sc, "prop")
    pi = sc.add_node(prop)
    sc.animations[0].channels = [c for c in sc.animations[0].channels if c.node == 2]
    sc.nodes[1].rotation = np.array([0, 0, np.sin(0.3), np.cos(0.3)])     # rest != bind
    hat = Node(name="hat", translation=[0.1, 0.2, 0])
    hat.mesh = _tri_mesh(sc, "hat")
    hi = sc.add_node(hat, 1)
    doc = ls.from_scene(sc)
    assert [n.name for n in doc.nodes] == [b"root", b"Bone", b"Bone.001"]
    tri = np.c_[sc.meshes[1].primitives[0].positions, np.ones(3)]
    for k, ms in enumerate(doc.animations[0].key_times):
        world = pose_world(sc, sc.animations[0], ms / 1000.0)
        for piece, node in ((1, pi), (2, hi)):
            want = (world[node] @ tri.T).T[:, :3]
            assert np.abs(engine_positions(doc, piece, 0, k) * S3 - want).max() < 1e-5, (ms, piece)


def test_mirrored_unskinned_mesh_keeps_its_facing():
    sc = Scene()
    node = Node(name="tri", scale=[-1.0, 1.0, 1.0])
    node.mesh = _tri_mesh(sc, "tri")
    sc.add_node(node)
    back = ls.to_scene(ls.from_scene(sc))
    p = back.meshes[0].primitives[0]
    t = p.positions[p.indices.reshape(-1, 3)].astype(np.float64)
    # glTF draws a node with a negative determinant with its winding reversed: the mirrored
    # triangle still faces +Z, as the normal (inverse transpose) says
    assert np.cross(t[0, 1] - t[0, 0], t[0, 2] - t[0, 0])[2] > 0


def test_odd_extras_do_not_break_from_scene():
    """Extras are whatever a user or another tool left in the glTF: values of the wrong type
    or range fall back to the defaults (a string flag was an internal ValueError)."""
    sc = ls.to_scene(samples.build_sample(12))
    sc.nodes[1].extras.update(abc_flags="two", abc_index=10**9)
    sc.nodes[2].extras.update(abc_flags=True, abc_index="7")      # a bool or a string is no number
    sc.animations[0].extras.update(interpolation_ms=None, unknown="x",
                                   markers=[{"time": float("inf"), "string": "a"}, 3])
    sc.animations[1].extras["markers"] = 5
    sc.materials[0].extras["specular_power"] = "shiny"
    sc.extras.update(weight_sets={"upper": ["a"] * 6}, lod_distances=[0, float("nan")])
    doc = abc.read(retromesh.binio.Reader(abc.write(ls.from_scene(sc))))
    assert doc.nodes[1].flags == 0 and doc.nodes[1].index == 1
    assert doc.nodes[2].flags == 0 and doc.nodes[2].index == 2
    assert doc.animations[0].interpolation_ms == 200 and doc.animations[0].unknown == -1
    assert doc.pieces[0].specular_power == 0.0 and doc.weight_sets == []


def test_big_primitive_is_split_into_pieces():
    """ABC faces index vertices with uint16: a 90601-vertex glTF mesh used to be refused."""
    g = 301
    y, x = np.mgrid[0:g, 0:g].reshape(2, -1).astype(float)
    pos = np.c_[x, y, np.sin(x * 0.1)]
    q = (np.arange(g - 1)[:, None] * g + np.arange(g - 1)[None, :]).reshape(-1)
    idx = np.c_[q, q + 1, q + g + 1, q, q + g + 1, q + g].reshape(-1)
    sc = Scene()
    node = Node(name="grid", translation=[0, 0, 1.0])
    node.mesh = sc.add_mesh(Mesh(name="grid", primitives=[Primitive(
        positions=pos, indices=idx, uvs=[pos[:, :2] / g])]))
    sc.add_node(node)
    doc = abc.read(retromesh.binio.Reader(abc.write(ls.from_scene(sc))))
    assert len(doc.pieces) >= 2 and all(len(p.lods[0].vertices) <= 0xFFFF for p in doc.pieces)
    assert [p.name for p in doc.pieces][:2] == [b"grid_part0", b"grid_part1"]
    tris = np.concatenate([p.lods[0].vertices["location"][p.lods[0].faces["vertex"].astype(int)]
                           for p in doc.pieces]) * S3
    want = pos[idx.reshape(-1, 3)] + [0, 0, 1.0]
    key = lambda t: np.sort(np.round(t, 4).reshape(len(t), -1).view("f8,f8,f8,f8,f8,f8,f8,f8,f8").ravel())  # noqa: E731
    # same triangles (winding mirrored by the axis flip: corners 0, 2, 1)
    assert np.array_equal(key(tris[:, [0, 2, 1]]), key(want))


def test_singular_inverse_bind_matrix_is_reported():
    sc = _blender_like_scene()
    sc.skins[0].inverse_bind_matrices[1] = 0.0
    with pytest.warns(LossWarning, match="singular"):
        doc = ls.from_scene(sc)
    assert np.allclose(doc.nodes[1].matrix, S4 @ sc.world_matrices()[2] @ S4, atol=1e-6)


def test_non_indexed_partial_triangle_is_left_out():
    sc = Scene()
    node = Node(name="a")
    node.mesh = sc.add_mesh(Mesh(name="a", primitives=[Primitive(positions=np.eye(4, 3))]))
    sc.add_node(node)
    assert len(ls.from_scene(sc).pieces[0].lods[0].faces) == 1


def test_key_times_beyond_uint32_ms_are_refused():
    sc = _blender_like_scene()
    sc.animations[0].channels[0].times = np.array([0.0, 1.0, 5e6], np.float32)
    with pytest.raises(retromesh.DocumentError, match="uint32 milliseconds"):
        ls.from_scene(sc)       # they wrapped round silently before


def test_static_scene_to_abc(tmp_path):
    sc = Scene()
    prim = Primitive(positions=np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float),
                     indices=np.array([0, 1, 2]))
    mi = sc.add_mesh(Mesh(name="tri", primitives=[prim]))
    node = Node(name="tri", translation=[0, 0, 5])
    node.mesh = mi
    sc.add_node(node)
    doc = retromesh.from_scene(sc, "abc")
    assert [n.name for n in doc.nodes] == [b"root"] and len(doc.animations) == 1
    back = ls.to_scene(abc.read(retromesh.binio.Reader(abc.write(doc))))
    p = back.meshes[0].primitives[0]
    assert np.allclose(np.sort(p.positions[:, 2]), [5, 5, 5])
    out = tmp_path / "tri.glb"
    retromesh.save(back, out)
    assert_valid(out)


def test_convert_cli_api_paths(tmp_path):
    src = tmp_path / "m.abc"
    retromesh.write(samples.build_sample(6), src)
    out = tmp_path / "m.gltf"
    retromesh.convert(src, out, morph=False)
    info = assert_valid(out)
    assert not info["hasMorphTargets"]
    with pytest.raises(retromesh.UnsupportedError):
        retromesh.load(src, skeleton=src)


def test_check_reports_inconsistent_bind_pose():
    doc = samples.build_sample(12)
    assert retromesh.registry.get("abc").check(doc) == []
    doc.pieces[0].lods[0].weights["location"][0] += (0.5, 0.0, 0.0)
    problems = retromesh.registry.get("abc").check(doc)
    assert any("bind positions" in p.message and not p.is_error for p in problems)
    sc = ls.to_scene(doc)
    assert sc.meshes[0].extras["bind_max_deviation"] > 0.1


def test_v6_flip_mat_mirrors():
    doc = samples.build_sample(6)
    a = ls.to_scene(doc).meshes[0].primitives[0]
    b = ls.to_scene(doc, flip_mat=0).meshes[0].primitives[0]
    assert np.allclose(np.sort(a.positions * S3, 0), np.sort(b.positions, 0), atol=1e-6)
    # mirrored with the winding reversed: each face's normal is the mirror of the other's
    def normals(p):
        t = p.positions[p.indices.reshape(-1, 3)].astype(np.float64)
        return np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])
    assert np.allclose(normals(b), normals(a) * S3, atol=1e-6)


# -- generated skinned scenes through ABC ---------------------------------------------------
from hypothesis import (  # noqa: E402
    HealthCheck,
    given,
    settings,
    strategies as st,
)

unit = st.floats(-1.0, 1.0, allow_nan=False)


def _quat(draw):
    q = np.array([draw(unit) for _ in range(4)]) + np.array([0, 0, 0, 1.5])
    return q / np.linalg.norm(q)


@st.composite
def skinned_scenes(draw):
    sc = Scene()
    parent = None
    if draw(st.booleans()):                         # an armature object above the joints
        parent = sc.add_node(Node(name="Armature", translation=[draw(unit) for _ in range(3)],
                                  rotation=_quat(draw),
                                  scale=[draw(st.sampled_from([1.0, 0.5, 2.5]))] * 3))
    nj = draw(st.integers(1, 5))
    joints = []
    for j in range(nj):
        p = parent if j == 0 else joints[draw(st.integers(0, j - 1))]
        if j > 0 and draw(st.booleans()) and parent is None:
            p = None                                # several roots -> a synthetic ABC root
        joints.append(sc.add_node(Node(name=f"j{j}", translation=[draw(unit) for _ in range(3)],
                                       rotation=_quat(draw)), p))
    world = sc.world_matrices()
    nv = 6
    pos = np.array([[draw(unit) for _ in range(3)] for _ in range(nv)])
    jo = np.array([[draw(st.integers(0, nj - 1)) for _ in range(4)] for _ in range(nv)])
    w = np.array([[draw(st.floats(0.0, 1.0)) for _ in range(4)] for _ in range(nv)]) + [1e-3, 0, 0, 0]
    w /= w.sum(1, keepdims=True)
    prim = Primitive(positions=pos, indices=np.array([0, 1, 2, 3, 4, 5]),
                     uvs=[np.array([[draw(unit), draw(unit)] for _ in range(nv)])],
                     joints=jo, weights=w)
    bind = world[joints]
    if draw(st.booleans()):                         # a bind pose that is not the rest pose
        bind = bind @ compose_trs([draw(unit) * 0.1 for _ in range(3)], _quat(draw), np.ones(3))
    si = sc.add_skin(Skin(joints=joints, inverse_bind_matrices=np.linalg.inv(bind)))
    mesh = Node(name="m")
    mesh.mesh, mesh.skin = sc.add_mesh(Mesh(name="m", primitives=[prim])), si
    sc.add_node(mesh)
    chans = []
    for node in ([parent] if parent is not None else []) + joints:
        nk = draw(st.integers(1, 3))
        ms = sorted(draw(st.sets(st.integers(0, 2000), min_size=nk, max_size=nk)))
        times = np.array(ms) / 1000.0
        if draw(st.booleans()):
            chans.append(Channel(node=node, path="rotation", times=times,
                                 values=np.stack([_quat(draw) for _ in ms])))
        if draw(st.booleans()):
            chans.append(Channel(node=node, path="translation", times=times,
                                 values=np.array([[draw(unit) for _ in range(3)] for _ in ms]),
                                 interpolation=draw(st.sampled_from(["LINEAR", "STEP"]))))
    if chans:
        sc.animations.append(Animation(name="a", channels=chans))
    return sc.validate()


def _corners(scene: Scene, node: int, g: np.ndarray) -> np.ndarray:
    """Per-vertex positions ``g`` of a one-primitive mesh node, per face corner."""
    return g[scene.meshes[scene.nodes[node].mesh].primitives[0].indices.astype(np.int64)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(skinned_scenes())
def test_generated_scenes_survive_abc(sc):
    _survives_abc(sc)


def _one_joint_scene(positions: list, uvs: list, parent: bool, n_joints: int) -> Scene:
    """A mesh of two triangles skinned to the first of ``n_joints`` joints at the origin (under
    an armature node when ``parent``), as the generator above builds them."""
    sc = Scene()
    top = sc.add_node(Node(name="Armature")) if parent else None
    j0 = sc.add_node(Node(name="j0"), top)
    joints = [j0] + [sc.add_node(Node(name=f"j{k}"), j0) for k in range(1, n_joints)]
    nv = len(positions)
    prim = Primitive(positions=np.array(positions, np.float32), indices=np.arange(nv, dtype=np.uint32),
                     uvs=[np.array(uvs, np.float32)], joints=np.zeros((nv, 4), np.uint16),
                     weights=np.tile(np.array([1.0, 0, 0, 0], np.float32), (nv, 1)))
    si = sc.add_skin(Skin(joints=joints, inverse_bind_matrices=np.tile(np.eye(4), (n_joints, 1, 1))))
    mesh = Node(name="m")
    mesh.mesh, mesh.skin = sc.add_mesh(Mesh(name="m", primitives=[prim])), si
    sc.add_node(mesh)
    return sc.validate()


def test_vertices_alike_but_for_uvs_survive_abc():
    # six vertices at one place: one ABC vertex, two glTF vertices again (one per UV)
    sc = _one_joint_scene([[0, 0, 0]] * 6, [[0, 0]] * 5 + [[0, 1]], False, 1)
    doc = _survives_abc(sc)
    assert len(doc.pieces[0].lods[0].vertices) == 1


def test_keys_a_millisecond_apart_keep_their_values():
    # float32 1.999 s is 1.99899995 s: sampled at 1.999 s the rotation must be the key's own,
    # not 5e-5 of the way to a key 1 ms later that turns it by 135 degrees
    sc = _one_joint_scene([[0, 0, 0], [0, 1, 0], [0, 0, 1]] * 2, [[0, 0]] * 6, True, 5)
    q = np.array([[0, 0, 0, 1], [0, 0, 0.5547002, 0.8320503], [0, 0, -0.5547002, 0.8320503]])
    sc.animations.append(Animation(name="a", channels=[Channel(
        node=1, path="rotation", times=np.array([0, 1.999, 2.0], np.float32), values=q)]))
    doc = _survives_abc(sc)
    assert doc.animations[0].key_times.tolist() == [0, 1999, 2000]
    rot = doc.animations[0].transforms["rotation"]        # (nodes, keys), file axes
    j0 = next(i for i, n in enumerate(doc.nodes) if n.name == b"j0")
    assert np.allclose(np.abs(rot[j0, 1] @ (q[1] * [-1, -1, 1, 1])), 1.0, atol=1e-7)


def _survives_abc(sc: Scene) -> abc.AbcModel:
    """``sc`` -> ABC -> Scene poses the mesh as ``sc`` does at every key, and the ABC posed by
    the engine's rules does too; returns the ABC model."""
    doc = ls.from_scene(sc)
    back = ls.to_scene(abc.read(retromesh.binio.Reader(abc.write(doc))))
    m0 = next(i for i, n in enumerate(sc.nodes) if n.mesh is not None)
    m1 = mesh_node(back, "m")
    ref0 = skinned_positions(sc, m0, None, 0.0) if not sc.animations else None
    anim0 = sc.animations[0] if sc.animations else None
    anim1 = back.animations[0] if sc.animations else None
    times = np.unique(np.concatenate([c.times for c in anim0.channels])) if anim0 else [0.0]
    # compared per face corner: glTF vertices that differ only in their UVs are one ABC vertex
    # (UVs are per corner there), so the vertex lists need not match, the corners do. The ABC
    # keys are the union of the key times: compare there (between keys STEP and LINEAR differ
    # by design)
    for t in times:
        g0 = _corners(sc, m0, skinned_positions(sc, m0, anim0, float(t)))
        g1 = _corners(back, m1, skinned_positions(
            back, m1, anim1 if anim1 is not None else back.animations[0], float(t)))
        assert np.abs(g0 - g1).max() < 1e-4, (t, np.abs(g0 - g1).max())
    if ref0 is not None:
        assert len(back.animations) == 1
    # and the engine's own skinning (weight locations, rigid keys) of the file we wrote
    abc_corners = doc.pieces[0].lods[0].faces["vertex"][:, [0, 2, 1]].reshape(-1).astype(np.int64)
    for k, ms in enumerate(doc.animations[0].key_times):
        g0 = _corners(sc, m0, skinned_positions(sc, m0, anim0, ms / 1000.0))
        engine = engine_positions(doc, 0, 0, k)[abc_corners] * S3
        assert np.abs(engine - g0).max() < 1e-4, ms
    return doc


def test_v6_morph_limit(monkeypatch):
    monkeypatch.setattr(ls_v6, "MAX_TARGETS", 2)
    with pytest.warns(LossWarning, match="morph-target limits"):
        sc = ls.to_scene(samples.build_sample(6))
    assert not sc.meshes[0].primitives[0].targets
    assert not [c for a in sc.animations for c in a.channels if c.path == "weights"]


def test_from_scene_warns_about_what_abc_cannot_hold():
    sc = ls.to_scene(samples.build_sample(6))
    with pytest.warns(LossWarning, match="morph targets"):
        doc = ls.from_scene(sc, version=12)          # v6 keeps them (test_lithtech_v6_write)
    assert doc.version == 12 and len(doc.nodes) == 4


def test_top4_keeps_the_four_strongest_weights_in_file_order_on_ties():
    # three paths (weights already strongest first, a vertex of more than 16, the table sort)
    # must agree with a plain stable sort by vertex and bias
    from retromesh.formats.lithtech.scene_read import top4_weights
    rng = np.random.default_rng(5)
    for trial in range(300):
        counts = rng.integers(0, [3, 7, 20][trial % 3], 12)
        owner = np.repeat(np.arange(12), counts)
        node = rng.integers(0, 6, len(owner))
        bias = rng.choice([0.0, 0.25, 0.5, 1.0, np.nan, -1.0], len(owner))
        if trial % 2:
            bias = bias[np.lexsort((-np.nan_to_num(bias, nan=-9.0), owner))]
        with np.errstate(invalid="ignore"):
            joints, weights, dropped, empty = top4_weights(owner, node, bias, 12)
        clean = np.where(np.isfinite(bias) & (bias > 0), bias, 0.0)
        order = np.lexsort((-clean, owner))
        lost = none = 0
        for v in range(12):
            mine = order[owner[order] == v]
            lost += int((clean[mine[4:]] > 0).any())
            want_w = np.zeros(4, np.float32)
            want_w[:min(4, len(mine))] = clean[mine[:4]]
            want_j = np.zeros(4, np.uint16)
            want_j[:min(4, len(mine))] = node[mine[:4]]
            if want_w.sum() <= 0:
                none += 1
                want_w, want_j = np.array([1, 0, 0, 0], np.float32), np.zeros(4, np.uint16)
            want_w = want_w / want_w.sum(keepdims=True)
            want_j[want_w == 0] = 0
            assert np.array_equal(weights[v], want_w) and np.array_equal(joints[v], want_j)
        assert (dropped, empty) == (lost, none)
