"""What a glTF made from a game file carries back into that format: each value comes back as it
was read when the user left it alone, or a LossWarning names it (docs/lossless.md)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import retromesh
from conftest import ROOT
from gltfcheck import assert_valid
from retromesh import LossWarning
from retromesh.formats import lithtech
from retromesh.formats.lithtech import abc


def _glb(src, tmp_path, name="mid.glb"):
    glb = tmp_path / name
    retromesh.convert(src, glb)
    assert_valid(glb)
    return glb


# -- LithTech ABC: InternalRadius and SubLOD vertex indices -----------------------------------
def test_abc_radius_and_sublod_come_back_unedited(tmp_path):
    src = ROOT / "examples" / "lithtech" / "model_v12.abc"
    glb = _glb(src, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        retromesh.convert(glb, tmp_path / "back.abc")
    doc, back = retromesh.read(src), retromesh.read(tmp_path / "back.abc")
    assert back.header.internal_radius == doc.header.internal_radius == 1.5
    was = [lod.vertices["sublod"].tolist() for p in doc.pieces for lod in p.lods]
    assert sum(v != 0 for lod in was for v in lod) == 20
    assert [lod.vertices["sublod"].tolist() for p in back.pieces for lod in p.lods] == was


def test_abc_edited_geometry_recomputes_the_radius_and_warns(tmp_path):
    sc = retromesh.load(_glb(ROOT / "examples" / "lithtech" / "model_v12.abc", tmp_path))
    for m in sc.meshes:
        for p in m.primitives:
            p.positions = p.positions * 3.0
    with pytest.warns(LossWarning, match="internal radius 1.5"):
        doc = lithtech.scene.from_scene(sc)
    far = max(np.linalg.norm(p.lods[0].vertices["location"], axis=1).max() for p in doc.pieces)
    assert doc.header.internal_radius == pytest.approx(far, rel=1e-6) and far > 4.5


def test_abc_sublod_of_a_mesh_with_other_vertices_is_warned(tmp_path):
    sc = retromesh.load(_glb(ROOT / "examples" / "lithtech" / "model_v12.abc", tmp_path))
    mesh = next(m for m in sc.meshes if m.extras.get("sublod"))
    mesh.extras["sublod"] = mesh.extras["sublod"][:-1]
    with pytest.warns(LossWarning, match="SubLOD"):
        doc = lithtech.scene.from_scene(sc)
    assert isinstance(doc, abc.AbcModel)
