"""Blender tier of issue 32 for Westwood (``.vxl`` + ``.hva``, ``.vox``) and Lugaru (``.solid``,
skeleton + animations): File > Import > Classic game model, then File > Export, unedited,
gives back every file byte for byte; one limb, model instance, vertex or joint moved in
Blender changes that part of the files and nothing else. The extension's operators run from
this checkout's ``src`` (tools/roundtrip_table.py --blender runs the same over whole folders).
Skipped when the bpy venv is absent (tests/helpers/blender_run.py)."""
from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

import retromesh
from conftest import CORPUS, EXAMPLES
from retromesh.formats.lugaru.skeleton import BODYPARTS
from test_lugaru_character import _layout

SRC = Path(__file__).resolve().parents[1] / "src"

SCRIPT = r'''
import os, sys
sys.path.insert(0, ARGS["src"])
from retromesh.blender import addon

def fcurves(act, slot):
    """The F-curves of ``act`` that animate the object (Blender 4.4+: its slot's channelbag)."""
    if slot is not None and hasattr(act, "layers"):
        from bpy_extras import anim_utils
        bag = anim_utils.action_get_channelbag_for_slot(act, slot)
        return list(bag.fcurves) if bag else []
    return list(act.fcurves)

def move_object(name, dx, key=None):
    """Object ``name`` moved ``dx`` along Blender's X: every location X key of its actions
    (only key number ``key`` of the first action when given), or its location when it has
    none."""
    obj = bpy.data.objects[name]
    ad = obj.animation_data
    uses = [(ad.action, getattr(ad, "action_slot", None))] if ad and ad.action else []
    uses += [(s.action, getattr(s, "action_slot", None)) for t in (ad.nla_tracks if ad else [])
             for s in t.strips]
    moved, done = 0, set()
    for act, slot in uses:
        if act is None or act.name in done:
            continue
        done.add(act.name)
        for fc in fcurves(act, slot):
            if fc.data_path == "location" and fc.array_index == 0:
                for k, kp in enumerate(fc.keyframe_points):
                    if key is None or (k == key and not moved):
                        kp.co[1] += dx
                        kp.handle_left[1] += dx
                        kp.handle_right[1] += dx
                        moved += 1
    if not moved:
        obj.location.x += dx
        moved = 1
    return moved

def move_vertex(index, dz):
    obj = next(o for o in bpy.context.scene.objects if o.type == "MESH")
    obj.data.vertices[index].co.z += dz
    return 1

out = []
for job in ARGS["jobs"]:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    if "retromesh" not in dir(bpy.ops.import_scene):
        addon.register()
    files = job["files"]
    r = bpy.ops.import_scene.retromesh(filepath=files[0], directory=os.path.dirname(files[0]),
                                       files=[{"name": os.path.basename(f)} for f in files])
    res = {"import": list(r)}
    edit = job.get("edit")
    if edit and edit[0] == "object":
        res["moved"] = move_object(*edit[1:])
    elif edit and edit[0] == "vertex":
        res["moved"] = move_vertex(*edit[1:])
    os.makedirs(os.path.dirname(job["out"]), exist_ok=True)
    res["export"] = list(bpy.ops.export_scene.retromesh(filepath=job["out"]))
    res["warnings"] = list(addon.LAST_WARNINGS)
    out.append(res)
emit(out)
'''

WW = EXAMPLES / "westwood"
JEEP = CORPUS / "vxl" / "rv__jeep.vxl"


def _jobs(tmp: Path, lugaru: Path) -> dict[str, dict]:
    anims = [str(lugaru / "Animations" / n) for n in ("Walk", "Sway")]
    jobs = {
        "tank.vxl": {"files": [str(WW / "tank.vxl"), str(WW / "tank.hva")], "out": "plain/tank.vxl"},
        "tank.vox": {"files": [str(WW / "tank.vox")], "out": "plain/tank.vox"},
        "box.solid": {"files": [str(EXAMPLES / "lugaru" / "box.solid")], "out": "plain/box.solid"},
        "character": {"files": anims, "out": "plain/Data/Skeleton/BasicFigure"},
        # edits: a limb's keys, a model instance, one vertex, one joint at one frame
        "turret moved": {"files": [str(WW / "tank.vxl"), str(WW / "tank.hva")],
                         "out": "limb/tank.vxl", "edit": ["object", "TURRET", 0.5]},
        "instance moved": {"files": [str(WW / "tank.vox")], "out": "instance/tank.vox",
                           "edit": ["object", "TURRET", 2.0]},
        "vertex moved": {"files": [str(EXAMPLES / "lugaru" / "box.solid")], "out": "vertex/box.solid",
                         "edit": ["vertex", 0, 0.25]},
        "joint moved": {"files": anims, "out": "joint/Data/Skeleton/BasicFigure",
                        "edit": ["object", "leftwrist", 0.5, 1]},
    }
    if JEEP.is_file():
        jobs["rv__jeep.vxl"] = {"files": [str(JEEP), str(JEEP.with_suffix(".hva"))],
                                "out": "plain/rv__jeep.vxl"}
    for job in jobs.values():
        job["out"] = str(tmp / job["out"])
    return jobs


@pytest.fixture(scope="module")
def exported(blender, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("voxel-lugaru-exact")
    lugaru = _layout(tmp / "in") / ""
    jobs = _jobs(tmp / "out", lugaru)
    results = blender.run(SCRIPT, {"src": str(SRC), "jobs": list(jobs.values())}, timeout=1800)
    got = {}
    for (name, job), res in zip(jobs.items(), results):
        assert res["import"] == ["FINISHED"] and res["export"] == ["FINISHED"], (name, res)
        got[name] = {**res, "out": Path(job["out"]), "files": [Path(f) for f in job["files"]]}
    got["lugaru"] = lugaru
    return got


def _same_files(res: dict) -> None:
    for f in res["files"]:
        if f.parent.name == "Animations":        # a Lugaru animation: in Data/Animations
            back = res["out"].parent.parent / "Animations" / f.name
        else:
            back = res["out"].parent / f.name
        assert back.read_bytes() == f.read_bytes(), f"{f.name} changed through Blender"


@pytest.mark.parametrize("name", ["tank.vxl", "tank.vox", "box.solid", "rv__jeep.vxl"])
def test_unedited_through_blender_is_identical(exported, name):
    if name not in exported:
        pytest.skip(f"no {name} in the corpus")
    res = exported[name]
    assert not res["warnings"], res["warnings"]
    _same_files(res)


def test_unedited_lugaru_character_through_blender_is_identical(exported):
    res = exported["character"]
    assert not res["warnings"], res["warnings"]
    _same_files(res)
    skel = exported["lugaru"] / "Skeleton" / "BasicFigure"
    assert res["out"].read_bytes() == skel.read_bytes()


def test_a_moved_limb_changes_its_own_hva_matrices_only(exported):
    res = exported["turret moved"]
    assert res["moved"] > 0
    assert res["out"].read_bytes() == (WW / "tank.vxl").read_bytes()       # voxels as they were
    was = retromesh.read(WW / "tank.hva")
    now = retromesh.read(res["out"].with_suffix(".hva"))
    assert now.section_names == was.section_names and now.name == was.name
    turret = [n.split(b"\0")[0] for n in was.section_names].index(b"TURRET")
    others = [s for s in range(len(was.section_names)) if s != turret]
    assert now.matrices[:, others].tobytes() == was.matrices[:, others].tobytes()
    moved = now.matrices[:, turret, :, 3] - was.matrices[:, turret, :, 3]
    assert np.all(np.abs(moved).max(axis=1) > 0.1), moved               # every frame's key moved
    assert np.allclose(now.matrices[:, turret, :, :3], was.matrices[:, turret, :, :3], atol=1e-6)


def test_a_moved_vox_instance_changes_its_own_transform_chunk_only(exported):
    res = exported["instance moved"]
    was, now = retromesh.read(WW / "tank.vox"), retromesh.read(res["out"])
    assert len(was.chunks) == len(now.chunks)
    changed = [i for i, (a, b) in enumerate(zip(was.chunks, now.chunks))
               if pickle.dumps(a) != pickle.dumps(b)]
    assert len(changed) == 1 and getattr(now.chunks[changed[0]], "id", None) == b"nTRN", changed


def test_a_moved_vertex_changes_that_vertex_of_the_solid_only(exported):
    res = exported["vertex moved"]
    was = retromesh.read(EXAMPLES / "lugaru" / "box.solid")
    now = retromesh.read(res["out"])
    assert np.array_equal(was.triangles, now.triangles)
    a, b = np.asarray(was.vertices), np.asarray(now.vertices)
    assert a.shape == b.shape
    changed = np.flatnonzero(np.any(a != b, axis=1))
    assert len(changed) == 1, changed
    assert np.abs(b[changed] - a[changed]).max() > 1e-3


def test_a_moved_joint_changes_that_joint_at_that_frame_only(exported):
    res = exported["joint moved"]
    lugaru = exported["lugaru"]
    assert res["moved"] == 1, res
    assert res["out"].read_bytes() == (lugaru / "Skeleton" / "BasicFigure").read_bytes()
    sway = res["out"].parent.parent / "Animations" / "Sway"
    walk = res["out"].parent.parent / "Animations" / "Walk"
    was_walk, was_sway = (retromesh.read(lugaru / "Animations" / n) for n in ("Walk", "Sway"))
    # one key of the joint in one of the two actions
    now = {p.name: retromesh.read(p) for p in (walk, sway)}
    diffs = {n: np.argwhere(np.any(now[n].positions != w.positions, axis=2))
             for n, w in (("Walk", was_walk), ("Sway", was_sway))}
    changed = [(n, d.tolist()) for n, d in diffs.items() if len(d)]
    assert len(changed) == 1 and len(changed[0][1]) == 1, changed      # one joint of one frame
    name, ((frame, joint),) = changed[0]
    was = was_walk if name == "Walk" else was_sway
    assert joint == next(j for j, n in enumerate(retromesh.read(
        lugaru / "Skeleton" / "BasicFigure").joints["label"]) if BODYPARTS[n] == "leftwrist")
    for field in ("twist", "onground", "speed", "twist2", "label"):
        assert np.array_equal(getattr(now[name], field), getattr(was, field)), field
