"""Scene -> .vxl by voxelisation (``retromesh convert model.glb -o model.vxl``)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import retromesh
from helpers.gltfcheck import assert_valid
from retromesh import DocumentError, LossWarning
from retromesh.formats.westwood import hva, samples, vxl
from retromesh.formats.westwood.meshing import visible_quads
from retromesh.formats.westwood.scene_write import from_scene
from retromesh.formats.westwood.voxelize import fill_interior
from retromesh.scene import Material, Mesh, Node, Primitive, Scene


@pytest.fixture()
def tank_glb(tmp_path):
    doc, h = samples.tank()
    (tmp_path / "tank.vxl").write_bytes(vxl.write(doc))
    (tmp_path / "tank.hva").write_bytes(hva.write(h))
    retromesh.convert(tmp_path / "tank.vxl", tmp_path / "tank.glb")
    return tmp_path / "tank.glb"


def _surface_cells(mask):
    q = visible_quads(mask, np.zeros(mask.shape, np.int32), greedy=False)
    return tuple(np.floor(q.corners.mean(1) - 0.5 * q.normals).astype(int).T)


def test_our_own_glb_comes_back_voxel_for_voxel(tank_glb, tmp_path):
    with pytest.warns(LossWarning, match="animations"):
        written = retromesh.convert(tank_glb, tmp_path / "back.vxl",
                                    save_options={"voxel_size": 1.0})
    assert {p.name for p in written} == {"back.vxl", "back.hva"}
    a = retromesh.read(tmp_path / "tank.vxl")
    b = retromesh.read(tmp_path / "back.vxl")
    assert [limb.label for limb in b.limbs] == ["HULL", "TURRET", "BARREL"]
    for la, lb in list(zip(a.limbs, b.limbs))[:2]:     # the barrel sits off the voxel grid
        ga, gb = la.voxels(), lb.voxels()
        assert np.array_equal(ga.mask, gb.mask)
        cell = _surface_cells(ga.mask)
        ca, cb = ga.colour[cell], gb.colour[cell]
        remap = (ca >= 16) & (ca <= 31)
        assert np.array_equal(a.palette[ca[~remap]], b.palette[cb[~remap]])
        assert np.all((cb[remap] >= 16) & (cb[remap] <= 31))
    out = tmp_path / "again.glb"
    retromesh.convert(tmp_path / "back.vxl", out)
    assert assert_valid(out)["drawCallCount"] >= 3
    assert retromesh.load(out).counts()["meshes"] == 3


def _box_scene(size=(2.0, 1.0, 3.0), colour=(1.0, 0.0, 0.0, 1.0)) -> Scene:
    lo = -np.array(size) / 2
    corners = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)]) * size + lo
    faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    scene = Scene()
    m = scene.add_material(Material(name="red", base_color=colour))
    mesh = scene.add_mesh(Mesh(primitives=[Primitive(positions=corners, indices=faces.reshape(-1),
                                                     material=m)]))
    scene.add_node(Node(name="box", mesh=mesh, translation=np.array([5.0, 0, 0])))
    return scene


def test_foreign_box_is_filled_and_coloured():
    out = from_scene(_box_scene(), resolution=30)
    doc = out[""]
    g = doc.limbs[0].voxels()
    # glTF (2, 1, 3) -> VXL (z, x, y) = (3, 2, 1) at 10 voxels per unit
    assert g.size == (30, 20, 10)
    assert g.count == 30 * 20 * 10                      # the interior is filled
    assert tuple(doc.palette[g.colour[0, 0, 0]]) == (255, 0, 0)
    assert g.normal.max() < 244
    assert out[".hva"].matrices.shape == (1, 1, 3, 4)
    # bounds in voxel units (k = 1, as the games and vengi write them)
    limb = doc.limbs[0]
    assert np.allclose((limb.bounds_max - limb.bounds_min) / np.array(limb.size), 1)
    # placed where the box was (glTF x 4..6) in voxels of 0.1: x 40..60; scale=0.1 gives the
    # scene's units back
    for scale, unit in ((1.0, 10.0), (0.1, 1.0)):
        scene = retromesh.registry.get("vxl").to_scene(doc, scale=scale)
        world = scene.world_matrices()
        node = next(i for i, n in enumerate(scene.nodes) if n.mesh is not None)
        p = scene.meshes[0].primitives[0].positions
        pw = p @ world[node][:3, :3].T + world[node][:3, 3]
        assert np.allclose(pw.min(0), np.array([4, -0.5, -1.5]) * unit, atol=1e-3)
        assert np.allclose(pw.max(0), np.array([6, 0.5, 1.5]) * unit, atol=1e-3)


def test_vox_models_are_placed_in_voxels():
    """glb -> vox: the _t of every model is in voxels, like its voxels (two boxes 10 voxels
    apart stay 10 voxels apart, not 1)."""
    from retromesh.formats.westwood import vox, vox_scene_write
    scene = _box_scene()
    scene.add_node(Node(name="box2", mesh=0, translation=np.array([5.0, 0, 1.0])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        v = vox_scene_write.from_scene(scene, resolution=40)      # extent 4 -> 0.1 per voxel
    t = [m[:3, 3] for _, m, _ in vox.placements(v, 2)]
    # glTF +Z (1.0 = 10 voxels) is VXL/VOX +x
    assert np.allclose(t[1] - t[0], [10, 0, 0])


def test_ts_table_and_no_fill():
    doc = from_scene(_box_scene(), resolution=12, game="ts", fill=False)[""]
    g = doc.limbs[0].voxels()
    assert doc.limbs[0].normal_type == 2 and g.normal.max() < 36
    assert g.count < np.prod(g.size)


def test_fill_interior_keeps_open_notches_empty():
    m = np.zeros((5, 5, 5), bool)
    m[0, :, :] = m[4, :, :] = m[:, 0, :] = m[:, 4, :] = m[:, :, 0] = True   # open at z = 4
    full = fill_interior(m)
    assert not full[2, 2, 4] and not full[2, 2, 2]      # the box is open along +z
    closed = m.copy()
    closed[:, :, 4] = True
    assert fill_interior(closed).all()


def test_errors():
    with pytest.raises(DocumentError, match="no triangles"):
        from_scene(Scene())
    with pytest.raises(DocumentError, match="255"):
        from_scene(_box_scene(), resolution=300)
    with pytest.raises(DocumentError, match="game"):
        from_scene(_box_scene(), game="c&c")
    # options arrive from the CLI as JSON values or strings
    for bad in ({"resolution": "abc"}, {"resolution": 0}, {"voxel_size": "abc"},
                {"voxel_size": -1.0}, {"voxel_size": float("nan")}):
        with pytest.raises(DocumentError, match="must be"):
            from_scene(_box_scene(), **bad)


def test_many_colours_use_the_fixed_palette():
    scene = _box_scene()
    p = scene.meshes[0].primitives[0]
    rng = np.random.default_rng(0)
    p.colors = np.c_[rng.random((8, 3)), np.ones(8)].astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        doc = from_scene(scene, resolution=40)[""]
    used = np.unique(doc.limbs[0].voxels().colour[doc.limbs[0].voxels().mask])
    assert not np.any((used >= 16) & (used <= 31)) and 0 not in used


def test_glb_to_vox(tank_glb, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        retromesh.convert(tank_glb, tmp_path / "tank.vox", save_options={"resolution": 40})
    doc = retromesh.read(tmp_path / "tank.vox")
    assert len(retromesh.formats.westwood.vox.models(doc)) == 3
    assert_valid(retromesh.convert(tmp_path / "tank.vox", tmp_path / "v.glb")[0])


@pytest.mark.parametrize("sx", [1, -1])
def test_mirroring_node_keeps_the_shape(sx):
    """A node whose matrix mirrors (an HVA with det < 0) turns its triangles clockwise in
    world space; the surface samples must still move inwards (a U-shaped limb came back with
    its notch filled)."""
    from retromesh.formats.westwood.hva import HvaFile
    from retromesh.formats.westwood.scene import to_scene
    from retromesh.formats.westwood.voxels import VoxelGrid
    from retromesh.formats.westwood.vxl import Limb, VxlFile
    g = VoxelGrid.empty((5, 4, 3))
    g.mask[:] = True
    g.mask[1:4, 1:, :] = False                    # a U open towards +y
    g.colour[g.mask] = 100
    limb = Limb.from_grid(g, "U")
    m = np.eye(3, 4, dtype=np.float32)
    m[0, 0] = sx
    h = HvaFile(section_names=[limb.name], matrices=m[None, None].copy())
    scene = to_scene(VxlFile(palette=samples.palette(), limbs=[limb]), hva=h)
    back = from_scene(scene, voxel_size=1.0, fill=False)[""].limbs[0].voxels()
    assert np.array_equal(back.mask, g.mask if sx == 1 else g.mask[::-1])
