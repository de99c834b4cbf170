"""Blender tier for what comes back from glTF (docs/lossless.md): the weapon nodes of an
Overgrowth ``.anm`` and the ``.fzx`` volumes go through Blender's own glTF importer and exporter
(with custom properties, as the extension exports), untouched and edited. Skipped when the bpy
venv is absent (tests/helpers/blender_run.py)."""
from __future__ import annotations

import warnings

import numpy as np

import retromesh
from conftest import ROOT
from retromesh import EngineWarning, LossWarning

SCRIPT = r'''
def load():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return list(bpy.ops.import_scene.gltf(filepath=ARGS["src"]))

def save(path):
    return list(bpy.ops.export_scene.gltf(filepath=path, export_format="GLB", export_extras=True))

out = {"import": load()}
weapon = bpy.data.objects.get(ARGS["node"]) if ARGS["node"] else None
out["weapon"] = None if weapon is None else [weapon.type, weapon.parent.name if weapon.parent else None]
out["plain"] = save(ARGS["plain"])
def fcurves(act, slot):
    """The F-curves of ``act`` that animate the object (Blender 4.4+: its slot's channelbag)."""
    if slot is not None and hasattr(act, "layers"):
        from bpy_extras import anim_utils
        bag = anim_utils.action_get_channelbag_for_slot(act, slot)
        return list(bag.fcurves) if bag else []
    return list(act.fcurves)

if weapon is not None:
    ad = weapon.animation_data
    uses = [(ad.action, getattr(ad, "action_slot", None))] if ad and ad.action else []
    uses += [(s.action, getattr(s, "action_slot", None)) for t in (ad.nla_tracks if ad else [])
             for s in t.strips]
    done = set()
    for act, slot in uses:              # every location key of the weapon +0.25 along X, once
        key = (act.name, getattr(slot, "identifier", ""))
        if key in done:
            continue
        done.add(key)
        for fc in fcurves(act, slot):
            if fc.data_path == "location" and fc.array_index == 0:
                for kp in fc.keyframe_points:
                    kp.co[1] += 0.25
                    kp.handle_left[1] += 0.25
                    kp.handle_right[1] += 0.25
    out["edited"] = save(ARGS["edited"])
emit(out)
'''


def _weapon_glb(tmp_path):
    from test_lossless_back import _weapon_anm
    anm, _ = _weapon_anm(tmp_path)
    return anm, tmp_path / "a.glb"


def test_weapon_node_through_blender(blender, tmp_path):
    from retromesh.formats.overgrowth import scene_write as wscene
    from retromesh.formats.overgrowth.bones import unpack_mats
    anm, glb = _weapon_glb(tmp_path)
    res = blender.run(SCRIPT, {"src": str(glb), "node": "weapon0", "plain": str(tmp_path / "p.glb"),
                               "edited": str(tmp_path / "e.glb")})
    assert res["weapon"] == ["EMPTY", "sk"], res          # an empty the user sees, on the armature
    was = np.stack([k.weapon_mats for k in anm.keyframes])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)      # bones resampled per frame by Blender
        plain = wscene.scene_to_anm(retromesh.load(tmp_path / "p.glb"))
        edited = wscene.scene_to_anm(retromesh.load(tmp_path / "e.glb"))
    assert np.stack([k.weapon_mats for k in plain.keyframes]).tobytes() == was.tobytes()
    now = np.stack([k.weapon_mats for k in edited.keyframes])
    moved = unpack_mats(now["matrix"][:, 0])[:, :3, 3] - unpack_mats(was["matrix"][:, 0])[:, :3, 3]
    assert np.allclose(moved, [0.25, 0.0, 0.0], atol=1e-4)
    assert (now["relative_id"] == was["relative_id"]).all()


def test_fzx_through_blender(blender, tmp_path):
    from retromesh.formats.overgrowth.fzx_scene_write import scene_to_fzx
    src = ROOT / "examples" / "overgrowth" / "stick.fzx"
    retromesh.convert(src, tmp_path / "f.glb")
    res = blender.run(SCRIPT, {"src": str(tmp_path / "f.glb"), "node": "", "plain": str(tmp_path / "p.glb")})
    assert res["plain"] == ["FINISHED"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        back = scene_to_fzx(retromesh.load(tmp_path / "p.glb"))
    assert retromesh.to_bytes(back) == src.read_bytes()


def test_b3d_uv_sets_through_blender(blender, tmp_path):
    from test_lossless_back import _b3d_three_by_three
    src = tmp_path / "uv.b3d"
    src.write_bytes(_b3d_three_by_three())
    retromesh.convert(src, tmp_path / "u.glb")
    res = blender.run(SCRIPT, {"src": str(tmp_path / "u.glb"), "node": "", "plain": str(tmp_path / "p.glb")})
    assert res["plain"] == ["FINISHED"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        # what the source file already had: more UV sets than Irrlicht takes (check's warning)
        warnings.filterwarnings("ignore", category=EngineWarning, message=".*b3d.tex_coord_sets")
        retromesh.convert(tmp_path / "p.glb", tmp_path / "back.b3d")
    (va,), (vb,) = ([c.vrts for c in retromesh.read(p).root_nodes[0].children]
                    for p in (src, tmp_path / "back.b3d"))
    assert (vb.tex_coord_sets, vb.tex_coord_set_size) == (3, 3)
    from retromesh.formats.b3d.uvmore import extra_mask
    mask = extra_mask(3, 3)              # what glTF lacks comes back as it was
    assert np.array_equal(va.vertices["uv"][:, mask], vb.vertices["uv"][:, mask])
    assert np.allclose(va.vertices["uv"], vb.vertices["uv"], atol=1e-6)   # Blender's UV noise


def test_abc_radius_and_sublod_through_blender(blender, tmp_path):
    src = ROOT / "examples" / "lithtech" / "model_v12.abc"
    retromesh.convert(src, tmp_path / "m.glb")
    res = blender.run(SCRIPT, {"src": str(tmp_path / "m.glb"), "node": "", "plain": str(tmp_path / "p.glb")})
    assert res["plain"] == ["FINISHED"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)       # key times resampled per frame
        retromesh.convert(tmp_path / "p.glb", tmp_path / "back.abc")
    doc, back = retromesh.read(src), retromesh.read(tmp_path / "back.abc")
    assert back.header.internal_radius == doc.header.internal_radius
    assert [lod.vertices["sublod"].tolist() for p in back.pieces for lod in p.lods] == \
        [lod.vertices["sublod"].tolist() for p in doc.pieces for lod in p.lods]


def test_lta_through_blender_keeps_the_model(blender, tmp_path):
    src = ROOT / "examples" / "lithtech" / "model.lta"
    retromesh.convert(src, tmp_path / "m.glb")
    res = blender.run(SCRIPT, {"src": str(tmp_path / "m.glb"), "node": "", "plain": str(tmp_path / "p.glb")})
    assert res["plain"] == ["FINISHED"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)       # key times resampled per frame
        retromesh.convert(tmp_path / "p.glb", tmp_path / "back.lta")
    from retromesh.formats import lithtech
    keys = ("nodes", "pieces", "lods", "triangles", "vertices", "sockets", "animations",
            "anim bindings", "weight sets", "child models")
    was, now = (lithtech.lta_info(retromesh.read(p)) for p in (src, tmp_path / "back.lta"))
    assert {k: now[k] for k in keys} == {k: was[k] for k in keys}
