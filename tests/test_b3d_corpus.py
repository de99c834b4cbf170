"""Conformance over the real B3D files in ../shared/corpus/b3d (skipped when it is absent)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import retromesh
from conftest import corpus_files, corpus_params
from helpers.gltfcheck import assert_valid_many
from helpers.malformed import assert_malformed_safe
from retromesh.formats.b3d import Bone, Keys, Vrts

pytestmark = pytest.mark.corpus


@pytest.mark.parametrize("path", corpus_params("b3d", "*.b3d"))
def test_byte_round_trip(path):
    data = path.read_bytes()
    doc = retromesh.read(path)
    assert retromesh.to_bytes(doc) == data


def test_every_glb_passes_the_validator(tmp_path):
    files = corpus_files("b3d", "*.b3d")
    if not files:
        pytest.skip("no corpus")
    outs, expected = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", retromesh.LossWarning)
        for f in files:
            doc = retromesh.read(f)
            out = tmp_path / (f.stem + ".glb")
            retromesh.save(retromesh.load(f), out)
            outs.append(out)
            chunks = _chunks(doc)
            has_keys = any(isinstance(c, Keys) and len(c.keys) for c in chunks)
            vrts = [c for c in chunks if isinstance(c, Vrts)]
            expected.append({
                "skins": any(isinstance(c, Bone) for c in chunks),
                "animations": has_keys,
                "uvs": max((min(v.tex_coord_sets, 2) for v in vrts if v.tex_coord_set_size), default=0),
                "vertices": sum(len(v.vertices) for v in vrts),
            })
    infos = assert_valid_many(outs)
    for f, info, exp in zip(files, infos, expected):
        assert info["hasSkins"] == exp["skins"], f.name
        assert (info["animationCount"] > 0) == exp["animations"], f.name
        assert info["maxUVs"] == exp["uvs"], f.name
        if exp["skins"]:
            assert info["maxInfluences"] >= 1
    trimesh = pytest.importorskip("trimesh")
    for out in outs:
        loaded = trimesh.load(out)
        assert len(loaded.geometry) >= 1, out.name


def _chunks(doc):
    stack = list(doc.children)
    out = []
    while stack:
        c = stack.pop()
        out.append(c)
        stack.extend(getattr(c, "children", []))
    return out


def _world_corners_and_weights(doc):
    """Triangle corners in scene space (via our glTF conversion), the bone weights of each
    corner by bone name, and the raw keys per node name."""
    scene = retromesh.registry.convert_to_scene(retromesh.registry.get("b3d"), doc)
    worlds = scene.world_matrices()
    corners, weights = [], []
    for i, n in enumerate(scene.nodes):
        if n.mesh is None:
            continue
        for p in scene.meshes[n.mesh].primitives:
            if n.skin is None:
                m = worlds[i]
            else:
                skin = scene.skins[n.skin]
                m = worlds[skin.joints[0]] @ skin.inverse_bind_matrices[0]
            pts = p.positions @ m[:3, :3].T + m[:3, 3]
            tri = p.indices.reshape(-1, 3)
            corners.append(pts[tri].reshape(-1, 9))
            if n.skin is not None:
                names = np.array([scene.nodes[j].name for j in scene.skins[n.skin].joints], object)
                w = [dict() for _ in range(len(p.positions))]
                for k in range(4):
                    for v in np.nonzero(p.weights[:, k] > 0)[0]:
                        w[v][names[p.joints[v, k]]] = float(p.weights[v, k])
                weights.extend(tuple(sorted(w[c].items())) for c in tri.reshape(-1))
    c = np.concatenate(corners) if corners else np.zeros((0, 9))
    return c, weights


def _keys(doc):
    out = {}
    for node, _ in doc.walk():
        for c in node.children:
            if isinstance(c, Keys):
                for field, bit in (("position", 1), ("scale", 2), ("rotation", 4)):
                    if c.flags & bit:
                        d = out.setdefault((node.name, field), {})
                        for f, v in zip(c.keys["frame"], c.keys[field]):
                            d[int(f)] = v
    return out


@pytest.mark.parametrize("path", corpus_params("b3d", "*.b3d"))
def test_round_trip_through_gltf_keeps_geometry_weights_and_keys(path, tmp_path):
    """corpus B3D -> GLB -> B3D: same vertex positions, triangles, weights and key values."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", retromesh.LossWarning)
        original = retromesh.read(path)
        retromesh.save(retromesh.load(path), tmp_path / "a.glb")
        retromesh.convert(tmp_path / "a.glb", tmp_path / "b.b3d")
        back = retromesh.read(tmp_path / "b.b3d")
    c1, w1 = _world_corners_and_weights(original)
    c2, w2 = _world_corners_and_weights(back)
    assert c1.shape == c2.shape
    o1 = np.lexsort(np.round(c1, 3).T[::-1])
    o2 = np.lexsort(np.round(c2, 3).T[::-1])
    assert np.allclose(c1[o1], c2[o2], atol=1e-5)
    if w1:
        tri_w1 = [tuple(w1[3 * t:3 * t + 3]) for t in o1]
        tri_w2 = [tuple(w2[3 * t:3 * t + 3]) for t in o2]
        for a, b in zip(tri_w1, tri_w2):
            for ca, cb in zip(a, b):
                assert [n for n, _ in ca] == [n for n, _ in cb]
                assert np.allclose([w for _, w in ca], [w for _, w in cb], atol=1e-5)
    import shutil
    import subprocess
    if shutil.which("assimp"):          # an independent reader loads what we wrote ...
        def assimp_loads(p):
            return subprocess.run(["assimp", "info", str(p)], capture_output=True, text=True,
                                  timeout=120)
        res = assimp_loads(tmp_path / "b.b3d")
        # ... when it loads the original (assimp rejects keys past ANIM.frames, which the round
        # trip keeps as the file has them)
        assert res.returncode == 0 or assimp_loads(path).returncode != 0, res.stdout[-2000:]
    k1, k2 = _keys(original), _keys(back)
    assert set(k1) == set(k2)
    for key in k1:
        assert sorted(k1[key]) == sorted(k2[key]), key
        for frame, value in k1[key].items():
            other = k2[key][frame]
            if key[1] == "rotation" and np.dot(value, other) < 0:
                other = -other
            assert np.allclose(value, other, atol=1e-5), (key, frame)


@pytest.mark.parametrize("path", corpus_params("b3d", "mtg__*.b3d", "h3dview__b*.b3d"))
def test_malformed_corpus_files(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_malformed_safe(path.read_bytes(), path.name, scene=True)


def _native_counts(doc):
    """What Irrlicht and Blitz3D see of a file's structure: TEXS, BRUS, and per NODE (path of
    names) its MESH (brush, VRTS flags/sets/size, TRIS brushes), BONE, KEYS (flags, length),
    ANIM (flags, frames, fps)."""
    from retromesh.formats.b3d import AnimChunk, Brus, MeshChunk, RawChunk
    out = {"texs": [(t.file, t.flags, t.blend, tuple(t.position), tuple(t.scale), t.rotation)
                    for t in doc.textures],
           "brus": [(b.name, tuple(b.color), b.shininess, b.blend, b.fx, tuple(b.texture_ids))
                    for b in doc.brushes],
           "n_texs": [c.n_texs for c in doc.children if isinstance(c, Brus)], "nodes": [],
           "unknown chunks": [(c.tag, c.payload) for c in doc.chunks() if isinstance(c, RawChunk)]}

    def walk(n, path):
        path = path + "/" + n.name.decode("latin-1")
        kids = []
        for c in n.children:
            if isinstance(c, MeshChunk):
                v = c.vrts
                kids.append(("MESH", c.brush_id, v.flags, v.tex_coord_sets, v.tex_coord_set_size,
                             sorted(t.brush_id for t in c.tris)))
            elif isinstance(c, Bone):
                kids.append(("BONE",))
            elif isinstance(c, Keys):
                kids.append(("KEYS", c.flags, len(c.keys)))
            elif isinstance(c, AnimChunk):
                kids.append(("ANIM", c.flags, c.frames, c.fps))
        out["nodes"].append((path, sorted(kids, key=str)))
        for c in n.nodes:
            walk(c, path)
    for r in doc.root_nodes:
        walk(r, "")
    return out


@pytest.mark.parametrize("path", corpus_params("b3d", "*.b3d"))
def test_round_trip_through_gltf_keeps_the_native_structure(path, tmp_path):
    """corpus B3D -> GLB -> B3D: same nodes (names, hierarchy), meshes, bones (empty ones too),
    KEYS chunks and lengths, ANIM (fps 0 stays 0), TEXS and BRUS entries, unknown chunks."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", retromesh.LossWarning)
        retromesh.save(retromesh.load(path), tmp_path / "a.glb")
        retromesh.convert(tmp_path / "a.glb", tmp_path / "b.b3d")
    before, after = _native_counts(retromesh.read(path)), _native_counts(retromesh.read(tmp_path / "b.b3d"))
    for key in before:
        assert before[key] == after[key], key


def test_cubewater_one_texture_per_file_one_material_per_brush():
    files = corpus_files("b3d", "b3dng__cubewater_test.b3d")
    if not files:
        pytest.skip("no corpus")
    doc = retromesh.read(files[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", retromesh.LossWarning)
        scene = retromesh.load(files[0])
    assert len(scene.textures) == len({t.file for t in doc.textures}) == 7
    assert len(scene.materials) == len({(b.name, tuple(b.color), b.shininess, b.blend, b.fx,
                                         tuple(b.texture_ids)) for b in doc.brushes})
