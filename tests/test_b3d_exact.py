"""Unedited means identical, edited means only the edit changes (issue 32), for B3D.

Every B3D example and corpus model (``corpus/b3d`` and the Luanti mods' ``models/``) goes
``.b3d -> .glb -> .b3d`` through :func:`retromesh.convert` and comes back byte for byte; one
value edited in the scene (a node moved, a key turned, a normal changed) changes that value
only; a GLB made before the records of :mod:`retromesh.formats.b3d.exact` existed (its extras
in the old layout) still converts back; and a glTF the format has no place for (morph targets
and their weight keys) is written with a LossWarning naming it.
"""
from __future__ import annotations

import struct
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest

import retromesh
from conftest import CORPUS, EXAMPLES
from helpers.roundtrip import first_difference, gltf_round_trip
from retromesh import LossWarning, restore
from retromesh.formats import b3d
from retromesh.formats.b3d import Keys, NodeChunk, Vrts

FILES = sorted(EXAMPLES.glob("*.b3d")) + sorted((CORPUS / "b3d").glob("*.b3d")) \
    + sorted(CORPUS.glob("luanti/**/models/*.b3d"))


@pytest.mark.parametrize("src", FILES, ids=lambda p: p.name)
def test_unedited_trip_through_glb_is_byte_identical(src, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")              # textures not found beside a corpus file
        back = gltf_round_trip(src, tmp_path)[""]
    data, got = src.read_bytes(), back.read_bytes()
    assert got == data, first_difference(retromesh.read(src), retromesh.read(back))


def _scene(name: str, editor: bool = False) -> retromesh.Scene:
    """The scene of the GLB made from example or corpus file ``name`` (skipped when absent);
    ``editor``: the GLB the Blender extension makes (``restore.editor_records``)."""
    src = next((p for p in FILES if p.name == name), None)
    if src is None:
        pytest.skip(f"no {name}")
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        glb = Path(tmp) / "m.glb"
        if editor:
            with restore.editor_records():
                retromesh.convert(src, glb)
        else:
            retromesh.convert(src, glb)
        return retromesh.load(glb)


def _doc(scene: retromesh.Scene) -> b3d.B3dFile:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = retromesh.from_scene(scene, "b3d")
    return out[""] if isinstance(out, dict) else out


def _chunks(doc: b3d.B3dFile) -> list:
    return list(doc.chunks())


def _same_but(a: b3d.B3dFile, b: b3d.B3dFile, changed) -> None:
    """``a`` and ``b`` have the same chunks, each written to the same bytes, except those for
    which ``changed(chunk_a)`` is true."""
    ca, cb = _chunks(a), _chunks(b)
    assert [type(x) for x in ca] == [type(x) for x in cb]
    for x, y in zip(ca, cb):
        if changed(x):
            continue
        if isinstance(x, NodeChunk):
            assert struct.pack("<10f", *x.position, *x.scale, *x.rotation) == \
                struct.pack("<10f", *y.position, *y.scale, *y.rotation), x.name
        elif not isinstance(x, b3d.MeshChunk):
            assert first_difference(x, y) is None, (type(x).__name__, first_difference(x, y))


def test_moving_one_node_changes_that_node_only():
    scene = _scene("wiggle.b3d")
    before = _doc(scene)
    i = next(k for k, n in enumerate(scene.nodes) if n.name == "bone2")
    scene.nodes[i].translation = scene.nodes[i].translation + (0.25, 0.0, 0.0)
    # a rest pose edited as Blender's edit mode does it: the bind matrices follow the bones
    worlds = scene.world_matrices()
    for skin in scene.skins:
        mesh_node = next(k for k, n in enumerate(scene.nodes) if n.skin is not None)
        skin.inverse_bind_matrices = np.linalg.inv(worlds[skin.joints]) @ worlds[mesh_node]
    after = _doc(scene)
    _same_but(before, after, lambda c: isinstance(c, NodeChunk) and c.name == b"bone2")
    moved = next(c for c in after.chunks() if isinstance(c, NodeChunk) and c.name == b"bone2")
    was = next(c for c in before.chunks() if isinstance(c, NodeChunk) and c.name == b"bone2")
    assert moved.position[0] == pytest.approx(was.position[0] + 0.25)
    assert moved.rotation == was.rotation and moved.scale == was.scale


def test_turning_one_key_changes_that_key_only():
    scene = _scene("mobsanimal__mobs_kitten.b3d")       # rotations glTF had to renormalise
    before = _doc(scene)
    ch = next(c for a in scene.animations for c in a.channels if c.path == "rotation"
              and len(c.times) > 3)
    name = scene.nodes[ch.node].name.encode()
    ch.values = ch.values.copy()
    ch.values[2] = (0.0, 0.0, 0.0, 1.0)
    after = _doc(scene)

    def node_keys(doc):
        node = next(c for c in doc.chunks() if isinstance(c, NodeChunk) and c.name == name)
        return np.concatenate([k.keys["rotation"] for k in node.children
                               if isinstance(k, Keys) and k.flags & 4])
    was, now = node_keys(before), node_keys(after)
    differ = np.flatnonzero(np.any(was.view(np.uint32) != now.view(np.uint32), axis=1))
    assert differ.tolist() == [2] and now[2].tolist() == [1.0, 0.0, 0.0, 0.0]
    _same_but(before, after, lambda c: isinstance(c, Keys))


def test_changing_one_normal_changes_that_vertex_only():
    scene = _scene("mobsanimal__mobs_kitten.b3d")       # normals that are not unit length
    before = _doc(scene)
    p = scene.meshes[0].primitives[0]
    p.normals = p.normals.copy()
    p.normals[5] = (0.0, 1.0, 0.0)
    after = _doc(scene)
    va, vb = (next(c for c in d.chunks() if isinstance(c, Vrts)) for d in (before, after))
    n0, n1 = va.vertices["normal"], vb.vertices["normal"]
    differ = np.flatnonzero(np.any(n0.view(np.uint32) != n1.view(np.uint32), axis=1))
    assert differ.tolist() == [5]
    assert va.vertices["position"].tobytes() == vb.vertices["position"].tobytes()


#: what this branch added to the extras; a GLB of an earlier release has none of them
NEW_NODE_KEYS = ("order", "trs", "kexact", "bexact")
NEW_TRIS_KEYS = ("exact", "src")


@pytest.mark.parametrize("name", ["wiggle.b3d", "h3dview__castel.b3d", "mobsanimal__mobs_bee.b3d"])
def test_a_glb_in_the_old_layout_still_converts_back(name):
    """Extras as the earlier release wrote them: the file comes back as it did then (chunks in
    the writer's order, values from glTF), with the same counts."""
    scene = _scene(name)
    scene.extras.pop("b3d_kexact", None)
    for n in scene.nodes:
        for k in NEW_NODE_KEYS:
            n.extras.get("b3d", {}).pop(k, None)
    for m in scene.meshes:
        for r in m.extras.get("b3d_tris", []):
            for k in NEW_TRIS_KEYS:
                r.pop(k, None)
    back = _doc(scene)
    src = next(p for p in FILES if p.name == name)
    fmt = retromesh.registry.get("b3d")
    assert fmt.info(back) == fmt.info(retromesh.read(src))


def test_morph_targets_and_their_weight_keys_are_named_when_dropped(tmp_path):
    from retromesh.formats.b3d.samples import crate_scene
    from retromesh.scene import Animation, Channel, MorphTarget
    s = crate_scene()
    p = s.meshes[0].primitives[0]
    p.targets = [MorphTarget(positions=np.zeros_like(p.positions))]
    s.meshes[0].weights = [0.0]
    s.animations.append(Animation(name="blink", channels=[
        Channel(node=0, path="weights", times=np.array([0.0, 1.0]), values=np.array([[0.0], [1.0]]))]))
    with pytest.warns(LossWarning) as caught:
        retromesh.save(s, tmp_path / "x.b3d")
    texts = [str(w.message) for w in caught]
    assert any("'crate'" in t and "morph targets" in t for t in texts), texts
    assert any("'blink'" in t and "weight" in t for t in texts), texts
    assert retromesh.read(tmp_path / "x.b3d").root_nodes


@pytest.mark.parametrize("junk", [None, 7, "x", "z:!!", [1, 2], {"n": 3, "f32": "AAAA"},
                                  [None, {"n": -1}], ["z:AAAA", {"n": 2, "rows": "x", "f32": 5}],
                                  {"v": "AAAAAA==", "w": "z:"}, "ABCDEFGH" * 7])
def test_broken_exact_records_never_crash(junk):
    scene = _scene("mobsanimal__mobs_kitten.b3d")
    for n in scene.nodes:
        for k in NEW_NODE_KEYS:
            if k in n.extras["b3d"] or k == "trs":
                n.extras["b3d"][k] = junk
    for m in scene.meshes:
        for r in m.extras.get("b3d_tris", []):
            r["exact"] = {"normal": junk, "color": junk} if junk is not None else junk
            r["src"] = junk
    doc = _doc(scene)
    assert retromesh.read(retromesh.to_bytes(doc), format="b3d").root_nodes


def test_the_original_file_gives_back_its_bits_under_blender_like_noise():
    """What the Blender extension does (formats/b3d/original.py): values a hair off (as
    Blender's float handling leaves them) are written with the file's bits; an edit is kept."""
    src = next(p for p in FILES if p.name == "wiggle.b3d")
    scene = _scene("wiggle.b3d")
    rng = np.random.default_rng(1)
    for m in scene.meshes:
        for p in m.primitives:
            p.positions = p.positions + rng.normal(0, 1e-6, p.positions.shape).astype(np.float32)
            p.uvs = [uv + rng.normal(0, 1e-7, uv.shape).astype(np.float32) for uv in p.uvs]
    for a in scene.animations:
        for c in a.channels:
            c.values = c.values + rng.normal(0, 1e-6, c.values.shape).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        noisy = retromesh.from_scene(scene, "b3d", original=src.read_bytes())
        assert retromesh.to_bytes(noisy[""] if isinstance(noisy, dict) else noisy) == \
            src.read_bytes()
        p = scene.meshes[0].primitives[0]
        p.positions = p.positions.copy()
        p.positions[3] += (0.0, 0.5, 0.0)
        edited = retromesh.from_scene(scene, "b3d", original=src.read_bytes())
    edited = edited[""] if isinstance(edited, dict) else edited
    was = retromesh.read(src)
    va, vb = (next(c for c in d.chunks() if isinstance(c, Vrts)) for d in (was, edited))
    differ = np.flatnonzero(np.any(va.vertices["position"] != vb.vertices["position"], axis=1))
    assert differ.tolist() == [3]
    assert retromesh.to_bytes(edited).replace(vb.vertices.tobytes(), b"") == \
        src.read_bytes().replace(va.vertices.tobytes(), b"")


def _as_blender_marks(scene: retromesh.Scene) -> None:
    from retromesh.extras import BLENDER_MARK
    scene.extras[BLENDER_MARK] = "test"


def test_names_blender_made_unique_and_vertices_it_split_come_back():
    """cubewater_test as Blender gives it back (without running Blender): every name the file
    has twice renamed ``Object03.001``..., and in each mesh whose file vertices look like split
    copies (they carry ``_B3D_V``) one vertex split in two: the file comes back byte for byte."""
    src = next((p for p in FILES if p.name == "b3dng__cubewater_test.b3d"), None)
    scene = _scene("b3dng__cubewater_test.b3d", editor=True)
    _as_blender_marks(scene)
    seen: dict[str, int] = {}
    for node in scene.nodes:
        k = seen.get(node.name, 0)
        seen[node.name] = k + 1
        if k:
            node.name = f"{node.name}.{k:03d}"
    assert any("." in n.name for n in scene.nodes)
    split = 0
    for m in scene.meshes:
        for p in m.primitives:
            if "_B3D_V" not in p.attributes:
                continue
            n = len(p.positions)
            at = 0                                         # vertex 0 gets a copy at the end
            p.positions = np.r_[p.positions, p.positions[at:at + 1]]
            p.uvs = [np.r_[uv, uv[at:at + 1]] for uv in p.uvs]
            for name in ("normals", "colors"):
                if getattr(p, name) is not None:
                    setattr(p, name, np.r_[getattr(p, name), getattr(p, name)[at:at + 1]])
            p.attributes = {k: np.r_[a, a[at:at + 1]] for k, a in p.attributes.items()}
            idx = p.indices.copy()
            idx[np.flatnonzero(idx == at)[-1:]] = n            # its last use takes the copy
            p.indices = idx
            split += 1
    assert split
    assert retromesh.to_bytes(_doc(scene)) == src.read_bytes()


def test_twin_triangles_come_back_whichever_copy_blender_kept():
    """castel's ``Right tower`` as Blender gives it back: of each pair of triangles on the same
    three vertices, one is gone, the earlier one for some pairs, the later one for others."""
    src = next((p for p in FILES if p.name == "h3dview__castel.b3d"), None)
    scene = _scene("h3dview__castel.b3d")
    _as_blender_marks(scene)
    dropped = 0
    for m in scene.meshes:
        for p, rec in zip(m.primitives, m.extras["b3d_tris"]):
            if "twins" not in rec:
                continue
            tri = p.indices.reshape(-1, 3)
            gone = []
            for j, first in enumerate(rec["twins0"]):
                later = [e[0] for e in rec["twins"] if sorted(e[1:]) == sorted(first[1:])]
                # one copy of the set stays: the first (j even) or the last
                gone += later if j % 2 == 0 else [first[0], *later[:-1]]
            p.indices = np.delete(tri, gone, axis=0).reshape(-1)
            dropped += len(gone)
    assert dropped
    assert retromesh.to_bytes(_doc(scene)) == src.read_bytes()


def test_node_rotations_and_skin_matrices_in_one_pass_are_the_per_node_ones():
    """to_scene's batched NODE rotations (``exact.node_trs``) and skin world matrices (one
    matrix product per depth) hold the bits of the per-node computations they replaced:
    the records and the inverse bind matrices of GLBs already written depend on them."""
    from retromesh.formats.b3d.axes import rot_to_gltf
    from retromesh.formats.b3d.exact import node_trs
    rng = np.random.default_rng(7)
    f = rng.normal(size=(64, 10)).astype(np.float32).astype(np.float64)
    f[0, 6:10] = (1.0, 0.0, -0.0, 0.0)
    f[1, 6:10] = 0.0
    f[2, 6:10] = (1e-14, 0.0, 0.0, 0.0)
    f[3, 6:10] = (-0.0, -1.0, 0.0, -0.0)
    _, r, _ = node_trs(f)
    for k in range(len(f)):
        assert r[k].tobytes() == rot_to_gltf(f[k, 6:10]).tobytes(), k
    scene = b3d.to_scene(retromesh.read(EXAMPLES / "wiggle.b3d"))
    worlds = scene.world_matrices()
    assert scene.skins
    for k, skin in enumerate(scene.skins):
        mesh_node = next(i for i, n in enumerate(scene.nodes) if n.skin == k)
        ibm = np.linalg.inv(worlds[skin.joints]) @ worlds[mesh_node]
        assert ibm.tobytes() == skin.inverse_bind_matrices.tobytes()
