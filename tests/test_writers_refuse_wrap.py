"""Every writer refuses a value too big for its field, naming the field, instead of writing a
different number (numpy's astype would wrap 70000 to 4464 as a uint16)."""
from __future__ import annotations

import numpy as np
import pytest

import retromesh
from conftest import ROOT
from retromesh.errors import DocumentError
from retromesh.formats.b3d.chunks import Brus, Keys, Tris
from retromesh.formats.lithtech import samples as abc_samples
from retromesh.formats.lostsaga import samples as ls_samples
from retromesh.formats.lostsaga.cms import CmsFile
from retromesh.formats.overgrowth import samples as og_samples
from retromesh.scene import MorphTarget, Primitive

EX = ROOT / "examples"


def wide(a: np.ndarray) -> np.ndarray:
    """``a`` with every integer field widened to int64 (so it can hold what its file cannot)."""
    a = np.asarray(a)
    if a.dtype.names is None:
        return a.astype(np.int64) if a.dtype.kind in "iu" else a.copy()
    dt = np.dtype([(n, "<i8" if a.dtype[n].base.kind in "iu" else a.dtype[n].base, a.dtype[n].shape)
                   for n in a.dtype.names])
    out = np.zeros(a.shape, dt)
    for n in a.dtype.names:
        out[n] = a[n]
    return out


def refused(doc, pattern: str) -> None:
    with pytest.raises(DocumentError, match=pattern):
        retromesh.to_bytes(doc)


def chunks(doc, cls):
    todo = list(doc.children)
    while todo:
        c = todo.pop(0)
        if isinstance(c, cls):
            yield c
        todo[:0] = getattr(c, "children", [])


# -- B3D ----------------------------------------------------------------------------------

def test_b3d():
    doc = retromesh.read(EX / "crate.b3d")
    tris = next(chunks(doc, Tris))
    tris.triangles = wide(tris.triangles)
    tris.triangles[3, 1] = 2 ** 32 + 1
    refused(doc, r"^TRIS\.triangles\[3\]\[1\]: 4294967297 does not fit int32")
    doc = retromesh.read(EX / "crate.b3d")
    next(chunks(doc, Brus)).brushes[0].texture_ids = [2 ** 32 + 1]
    refused(doc, r"^BRUS\.brushes\[0\]\.texture_ids\[0\]: 4294967297 does not fit int32")
    doc = retromesh.read(EX / "wiggle.b3d")
    keys = next(chunks(doc, Keys))
    keys.keys = wide(keys.keys)
    keys.keys["frame"][1] = -(2 ** 31) - 1
    refused(doc, r"^KEYS\.keys\[1\]\.frame: -2147483649 does not fit int32")


# -- LithTech -----------------------------------------------------------------------------

@pytest.mark.parametrize("version", [9, 10, 11, 12, 13])
def test_lithtech_abc(version):
    model = abc_samples.build_sample(version)
    lod = model.pieces[0].lods[0]
    lod.faces = wide(lod.faces)
    lod.faces["vertex"][2, 1] = 70000
    refused(model, r"^pieces\[0\]\.lods\[0\]\.faces\[2\]\[1\]\.vertex: 70000 does not fit uint16")
    model = abc_samples.build_sample(version)
    lod = model.pieces[0].lods[0]
    lod.weights = wide(lod.weights)
    lod.weights["node"][0] = 2 ** 32
    refused(model, r"^pieces\[0\]\.lods\[0\]\.weights\[0\]\.node: 4294967296 does not fit uint32")
    model = abc_samples.build_sample(version)
    model.animations[0].key_times = [0, 2 ** 32 + 500, 2 ** 32 + 1000]
    refused(model, r"^animations\[0\]\.key_times\[1\]: 4294967796 does not fit uint32")


def test_lithtech_abc_v6():
    model = abc_samples.build_sample(6)
    geo = model.sections[1]
    geo.faces = wide(geo.faces)
    geo.faces["vertex"][0, 2] = 70000
    refused(model, r"^faces\[0\]\.vertex\[2\]: 70000 does not fit uint16")
    model = abc_samples.build_sample(6)
    geo = model.sections[1]
    geo.vertices = wide(geo.vertices)
    geo.vertices["node"][5] = 256
    refused(model, r"^vertices\[5\]\.node: 256 does not fit uint8")
    model = abc_samples.build_sample(6)
    node = next(n for n in model.nodes if len(n.md_verts))
    i = model.nodes.index(node)
    node.md_verts = wide(node.md_verts)
    node.md_verts[0] = -1
    refused(model, rf"^nodes\[{i}\]\.md_verts\[0\]: -1 does not fit uint16")


# -- Lost Saga ----------------------------------------------------------------------------

def test_lostsaga_msh():
    doc = retromesh.read(EX / "lostsaga" / "column.msh")
    doc.faces = wide(doc.faces)
    doc.faces[4, 2] = 70000
    refused(doc, r"^msh: faces\[4\]\[2\]: 70000 does not fit uint16")
    doc = retromesh.read(EX / "lostsaga" / "column.msh")
    doc.submeshes = wide(doc.submeshes)
    doc.submeshes["face_count"][0] = 2 ** 31
    refused(doc, r"^msh: submeshes\[0\]\.face_count: 2147483648 does not fit int32")


def test_lostsaga_cms():
    doc = CmsFile(positions=np.zeros((3, 3), np.float32), faces=[[0, 1, 70000]])
    refused(doc, r"^cms: faces\[0\]\[2\]: 70000 does not fit uint16")


def test_lostsaga_ani():
    doc = retromesh.read(EX / "lostsaga" / "column_wave.ani")
    track = doc.tracks[1]
    track.keys = wide(track.keys)
    track.keys["time"][2] = 2 ** 31
    refused(doc, r"^ani: tracks\[1\]\.keys\[2\]\.time: 2147483648 does not fit int32")


def test_lostsaga_skl():
    # a skeleton's arrays are all float32; its integers are scalars, refused by the Writer
    doc = retromesh.read(EX / "lostsaga" / "column.skl")
    doc.version = 2 ** 32
    refused(doc, "4294967296")


def test_lostsaga_skinned_column_faces():
    msh_doc = ls_samples.skinned_column(1)[0]
    msh_doc.faces = np.asarray(msh_doc.faces, np.float64)
    msh_doc.faces[0, 0] = 1.5
    refused(msh_doc, r"^msh: faces\[0\]\[0\]: 1\.5 is not a whole number for uint16")


# -- Overgrowth, Lugaru---------------------------------------------------------------------

def test_overgrowth_phxbn():
    doc = retromesh.read(EX / "overgrowth" / "stick.phxbn")
    doc.bone_ends = wide(doc.bone_ends)
    doc.bone_ends[1, 1] = 2 ** 31
    refused(doc, r"^bone_ends\[1\]\[1\]: 2147483648 does not fit int32")
    doc = retromesh.read(EX / "overgrowth" / "stick.phxbn")
    doc.bone_parents = [-1] + [2 ** 40] * (len(doc.bone_ends) - 1)
    refused(doc, r"^bone_parents\[1\]: 1099511627776 does not fit int32")


def test_overgrowth_anm():
    doc = og_samples.anm_fixture()
    kf = doc.keyframes[1]
    kf.ik_bones[0].path = [0, 2 ** 31]
    refused(doc, r"^keyframes\[1\]\.ik_bones\[0\]\.path\[1\]: 2147483648 does not fit int32")
    doc = og_samples.anm_fixture()
    kf = doc.keyframes[0]
    kf.weapon_mats = wide(kf.weapon_mats)
    kf.weapon_mats["relative_id"][0] = -(2 ** 40)
    refused(doc, r"^keyframes\[0\]\.weapon_mats\[0\]\.relative_id: -1099511627776 does not fit")


def test_lugaru_solid():
    doc = retromesh.read(EX / "lugaru" / "box.solid")
    doc.triangles = wide(doc.triangles)
    doc.triangles["i1"][3] = 40000
    refused(doc, r"^SolidFile\.triangles\[3\]\.i1: 40000 does not fit int16 \(-32768\.\.32767\)")


# -- Westwood -----------------------------------------------------------------------------

def test_westwood_vxl():
    doc = retromesh.read(EX / "westwood" / "tank.vxl")
    doc.palette = wide(doc.palette)
    doc.palette[7, 2] = 256
    refused(doc, r"^VxlFile\.palette\[7\]\[2\]: 256 does not fit uint8")
    doc = retromesh.read(EX / "westwood" / "tank.vxl")
    limb = doc.limbs[1]
    limb.span_start = wide(limb.span_start)
    limb.span_start[0] = 2 ** 31
    refused(doc, r"^limbs\[1\]\.span_start\[0\]: 2147483648 does not fit int32")


def test_westwood_hva():
    # an HVA holds float matrices only: a number no float32 can be is refused by name
    doc = retromesh.read(EX / "westwood" / "tank.hva")
    m = doc.matrices.astype(object)
    m[0, 0, 0, 3] = 10 ** 400
    doc.matrices = m
    refused(doc, r"^HvaFile\.matrices: ")


def test_westwood_vox():
    doc = retromesh.read(EX / "westwood" / "tank.vox")
    from retromesh.formats.westwood.vox import VoxRgba, VoxXyzi
    xyzi = next(c for c in doc.chunks if isinstance(c, VoxXyzi))
    xyzi.voxels = wide(xyzi.voxels)
    xyzi.voxels["x"][5] = 256
    refused(doc, r"^XYZI\.voxels\[5\]\.x: 256 does not fit uint8")
    doc = retromesh.read(EX / "westwood" / "tank.vox")
    rgba = next(c for c in doc.chunks if isinstance(c, VoxRgba))
    rgba.colors = wide(rgba.colors)
    rgba.colors[9, 3] = -1
    refused(doc, r"^RGBA\.colors\[9\]\[3\]: -1 does not fit uint8")


# -- Scene --------------------------------------------------------------------------------

def test_scene_arrays():
    pos = np.zeros((3, 3), np.float32)
    w = np.tile([1.0, 0, 0, 0], (3, 1))
    with pytest.raises(DocumentError, match=r"^Primitive\.joints\[2\]\[0\]: 70000 does not "
                                            r"fit uint16"):
        Primitive(pos, joints=[[0, 0, 0, 0], [1, 0, 0, 0], [70000, 0, 0, 0]], weights=w)
    with pytest.raises(DocumentError, match=r"^Primitive\.indices\[1\]: -1 does not fit uint32"):
        Primitive(pos, indices=[0, -1, 2])
    with pytest.raises(DocumentError, match=r"^Primitive\.indices\[0\]: 4294967296 does not fit"):
        Primitive(pos, indices=np.array([2 ** 32, 1, 2]))
    with pytest.raises(DocumentError, match=r"^MorphTarget\.positions: "):
        MorphTarget(positions=[["a", "b", "c"]])
    p = Primitive(pos, indices=np.array([0, 1, 2], np.int64))
    assert p.indices.dtype == np.uint32 and p.indices.tolist() == [0, 1, 2]
