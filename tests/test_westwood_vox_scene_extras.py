"""Nothing lost for MagicaVoxel .vox: ``.vox -> .glb -> .vox`` gives the file back
byte for byte when nothing was edited (also after a Blender-like renumbering of the meshes);
an edited model is voxelised again in its own grid, a moved one keeps its voxels."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings

import retromesh
from conftest import ROOT, corpus_params
from helpers.gltfcheck import assert_valid
from retromesh import LossWarning
from retromesh.formats.westwood import vox, vox_scene_extras, vox_scene_write
from retromesh.scene import Mesh, Node, Primitive
from test_westwood_vox import vox_docs

TANK = ROOT / "examples" / "westwood" / "tank.vox"


def _glb_scene(src: Path, tmp_path: Path, **load):
    glb = tmp_path / "mid.glb"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        retromesh.save(retromesh.load(src, **load), glb)
    return glb, retromesh.load(glb)


def _models(doc: vox.VoxFile) -> list[tuple[tuple, np.ndarray]]:
    sizes = [(c.x, c.y, c.z) for c in doc.chunks if isinstance(c, vox.VoxSize)]
    vox_ = [np.sort(np.asarray(c.voxels).view("<u4").reshape(-1)) for c in doc.chunks
            if isinstance(c, vox.VoxXyzi)]
    return list(zip(sizes, vox_))


def _blenderish(scene):
    """Vertices renumbered and unwelded (one vertex per corner, reversed order), as Blender's
    exporter may give them back; extras kept (export_extras)."""
    for m in scene.meshes:
        for p in m.primitives:
            tri = p.indices.astype(np.int64).reshape(-1, 3)[::-1]
            idx = tri[:, [1, 2, 0]].reshape(-1)      # triangles reversed, same winding
            p.positions, p.normals = p.positions[idx], p.normals[idx]
            p.colors = p.colors[idx] if p.colors is not None else None
            p.indices = np.arange(len(idx), dtype=np.uint32)
    return scene


@pytest.mark.parametrize("path", [pytest.param(TANK, id="tank.vox")] + corpus_params("vox", "*.vox"))
def test_untouched_vox_comes_back_byte_for_byte(path, tmp_path):
    glb, scene = _glb_scene(path, tmp_path)
    assert_valid(glb)
    out = tmp_path / "back.vox"
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)     # nothing approximated
        retromesh.convert(glb, out)
    assert out.read_bytes() == path.read_bytes()


def test_blender_like_renumbering_still_counts_as_unchanged(tmp_path):
    _, scene = _glb_scene(TANK, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        doc = vox_scene_write.from_scene(_blenderish(scene))
    assert vox.write(doc) == TANK.read_bytes()


def test_loaded_scale_is_measured_back_in_voxels(tmp_path):
    _, scene = _glb_scene(TANK, tmp_path, scale=0.25)
    assert vox.write(vox_scene_write.from_scene(scene)) == TANK.read_bytes()


def test_edited_model_is_voxelised_again_in_its_own_grid(tmp_path):
    _, scene = _glb_scene(TANK, tmp_path)
    orig = vox.read(retromesh.binio.Reader(TANK.read_bytes()))
    node = next(n for n in scene.nodes if n.name == "TURRET")
    prim = scene.meshes[node.mesh].primitives[0]
    # one corner pulled out by 2 voxels along glTF +Y (vox +Z)
    prim.positions = prim.positions.copy()
    corner = np.argmax(prim.positions[:, 1])
    prim.positions[corner, 1] += 2.0
    with pytest.warns(LossWarning, match="TURRET"):
        doc = vox_scene_write.from_scene(scene)
    before, after = _models(orig), _models(doc)
    assert [s for s, _ in before] == [s for s, _ in after]          # SIZE kept
    k = [i for i, n in enumerate(n for n in scene.nodes if vox_scene_extras.INSTANCE_KEY in n.extras)
         if n.name == "TURRET"][0]
    mid = vox.placements(orig, len(before))[k][0]
    for i, ((_, a), (_, b)) in enumerate(zip(before, after)):
        assert np.array_equal(a, b) == (i != mid), i
    assert vox.palette_of(doc).tobytes() == vox.palette_of(orig).tobytes()
    # the other chunks (scene graph, layers) as they were
    assert [c for c in doc.chunks if isinstance(c, vox.VoxChunk)] == \
        [c for c in orig.chunks if isinstance(c, vox.VoxChunk)]


def test_moved_model_keeps_its_voxels_and_gets_a_new_translation(tmp_path):
    _, scene = _glb_scene(TANK, tmp_path)
    orig = vox.read(retromesh.binio.Reader(TANK.read_bytes()))
    ni = next(i for i, n in enumerate(scene.nodes) if n.name == "BARREL")
    scene.nodes[ni].translation = scene.nodes[ni].translation + np.array([0.0, 3.0, 0.0])
    doc = vox_scene_write.from_scene(scene)
    assert all(s0 == s1 and np.array_equal(a, b)
               for (s0, a), (s1, b) in zip(_models(doc), _models(orig), strict=True))
    k = [n.name for n in scene.nodes if vox_scene_extras.INSTANCE_KEY in n.extras].index("BARREL")
    t0 = vox.placements(orig, 3)[k][1][:3, 3]
    t1 = vox.placements(doc, 3)[k][1][:3, 3]
    assert np.allclose(t1 - t0, [0, 0, 3])                       # glTF +Y is vox +Z


def test_new_mesh_or_options_voxelise_from_scratch(tmp_path):
    _, scene = _glb_scene(TANK, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        assert vox.write(vox_scene_write.from_scene(scene, resolution=16)) != TANK.read_bytes()
        assert vox.write(vox_scene_write.from_scene(scene, native=False)) != TANK.read_bytes()
        box = Primitive(positions=np.array([[0, 0, 0], [4, 0, 0], [0, 4, 0]], np.float32),
                        indices=np.array([0, 1, 2], np.uint32))
        scene.add_node(Node(name="new", mesh=scene.add_mesh(Mesh(name="new", primitives=[box]))))
        assert vox.write(vox_scene_write.from_scene(scene)) != TANK.read_bytes()


def test_damaged_extras_fall_back_to_voxelising(tmp_path):
    _, scene = _glb_scene(TANK, tmp_path)
    root = next(n for n in scene.nodes if vox_scene_extras.FILE_KEY in n.extras)
    root.extras[vox_scene_extras.FILE_KEY] = '{"file": "not base64!", "greedy": true, "instances": 3}'
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        doc = vox_scene_write.from_scene(scene)
    assert vox.write(doc) != TANK.read_bytes()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(doc=vox_docs())
def test_hypothesis_any_vox_survives_glb(doc, tmp_path):
    data = vox.write(doc)
    src = tmp_path / "h.vox"
    src.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)      # voxels outside their model's size
        glb = tmp_path / "h.glb"
        try:
            scene = retromesh.load(src)
        except retromesh.FormatError:           # a scene graph of random bytes
            assume(False)
        retromesh.save(scene, glb)
        back = vox_scene_write.from_scene(retromesh.load(glb))
    assert vox.write(back) == data
