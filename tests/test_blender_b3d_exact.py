"""Blender tier of issue 32 for B3D: File > Import > Classic game model, then File > Export,
unedited, gives back the file byte for byte (the examples, a Luanti mob, mobs whose bones have
a rest scale Blender drops, and the two models Blender re-splits: castel's twin triangles,
cubewater_test's names taken twice and vertices that look like split copies); one bone moved
in Blender changes that bone's keys and nothing else (wiggle, and the cow's scaled spine).
The extension's operators run from this checkout's ``src`` (tools/roundtrip_table.py
--blender runs the same over every file).
Skipped when the bpy venv is absent (tests/helpers/blender_run.py)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import retromesh
from conftest import CORPUS, EXAMPLES
from helpers.roundtrip import first_difference
from retromesh.formats import b3d

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

def move_bone(name, dx):
    """Every location X key of pose bone ``name`` moved by ``dx``, in each action using it."""
    arm = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
    ad = arm.animation_data
    uses = [(ad.action, getattr(ad, "action_slot", None))] if ad and ad.action else []
    uses += [(s.action, getattr(s, "action_slot", None)) for t in ad.nla_tracks for s in t.strips]
    done, moved = set(), 0
    for act, slot in uses:
        if act is None or act.name in done:
            continue
        done.add(act.name)
        for fc in fcurves(act, slot):
            if fc.data_path == f'pose.bones["{name}"].location' and fc.array_index == 0:
                for kp in fc.keyframe_points:
                    kp.co[1] += dx
                    kp.handle_left[1] += dx
                    kp.handle_right[1] += dx
                    moved += 1
    return moved

out = []
for job in ARGS["jobs"]:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    if "retromesh" not in dir(bpy.ops.import_scene):
        addon.register()
    f = job["file"]
    r = bpy.ops.import_scene.retromesh(filepath=f, directory=os.path.dirname(f),
                                       files=[{"name": os.path.basename(f)}])
    res = {"import": list(r)}
    if job.get("bone"):
        res["moved"] = move_bone(job["bone"], 0.25)
    os.makedirs(os.path.dirname(job["out"]), exist_ok=True)
    res["export"] = list(bpy.ops.export_scene.retromesh(filepath=job["out"]))
    res["warnings"] = list(addon.LAST_WARNINGS)
    out.append(res)
emit(out)
'''

MOB = CORPUS / "luanti" / "mobs_animal" / "models" / "mobs_rat.b3d"
#: bones with a rest scale (the cow's spine 3.77, the penguin's 17.45)
COW = CORPUS / "b3d" / "mobsanimal__mobs_cow.b3d"
SCALED = [COW, CORPUS / "b3d" / "mobsanimal__mobs_penguin.b3d"]
#: Blender re-splits these: twin triangles (castel), names taken twice and file vertices that
#: look like split copies (cubewater_test)
RESPLIT = [CORPUS / "b3d" / "h3dview__castel.b3d", CORPUS / "b3d" / "b3dng__cubewater_test.b3d"]
FILES = [EXAMPLES / "wiggle.b3d", EXAMPLES / "crate.b3d", MOB, *SCALED, *RESPLIT]
#: (file, bone moved in Blender)
EDITS = [(EXAMPLES / "wiggle.b3d", "bone0"), (COW, "Front Spine")]


@pytest.fixture(scope="module")
def exported(blender, tmp_path_factory):
    out = tmp_path_factory.mktemp("b3d-exact")
    jobs = [{"file": str(f), "out": str(out / "plain" / f.name)} for f in FILES if f.is_file()]
    jobs += [{"file": str(f), "out": str(out / f"bone{k}" / f.name), "bone": bone}
             for k, (f, bone) in enumerate(EDITS) if f.is_file()]
    results = blender.run(SCRIPT, {"src": str(SRC), "jobs": jobs})
    for res in results:
        assert res["import"] == ["FINISHED"] and res["export"] == ["FINISHED"], res
    return {(job["file"], job.get("bone")): (Path(job["out"]), res)
            for job, res in zip(jobs, results)}


@pytest.mark.parametrize("src", FILES, ids=lambda p: p.name)
def test_unedited_through_blender_is_byte_identical(exported, src):
    if not src.is_file():
        pytest.skip(f"no {src}")
    out, _ = exported[(str(src), None)]
    assert out.read_bytes() == src.read_bytes(), \
        first_difference(retromesh.read(src), retromesh.read(out))


@pytest.mark.parametrize("src,bone", EDITS, ids=lambda v: getattr(v, "name", v))
def test_a_bone_moved_in_blender_changes_its_keys_only(exported, src, bone):
    if not src.is_file():
        pytest.skip(f"no {src}")
    out, res = exported[(str(src), bone)]
    assert res["moved"] > 0, res
    before, after = list(retromesh.read(src).chunks()), list(retromesh.read(out).chunks())
    assert [type(c) for c in before] == [type(c) for c in after]
    owner = None
    changed = []
    for a, b in zip(before, after):
        if isinstance(a, b3d.NodeChunk):
            owner = a.name
        if first_difference(a, b) is not None and not isinstance(a, (b3d.NodeChunk, b3d.MeshChunk)):
            changed.append((owner, type(a).__name__))
        elif isinstance(a, b3d.NodeChunk):
            assert (a.position, a.scale, a.rotation) == (b.position, b.scale, b.rotation), a.name
    name = bone.encode()
    assert changed == [(name, "Keys")], changed
    keys_a = next(c for n in retromesh.read(src).chunks() if isinstance(n, b3d.NodeChunk)
                  and n.name == name for c in n.children if isinstance(c, b3d.Keys))
    keys_b = next(c for n in retromesh.read(out).chunks() if isinstance(n, b3d.NodeChunk)
                  and n.name == name for c in n.children if isinstance(c, b3d.Keys))
    moved = keys_b.keys["position"] - keys_a.keys["position"]
    assert np.allclose(np.linalg.norm(moved, axis=1), 0.25, atol=1e-3), moved[:3]
    assert np.array_equal(keys_a.keys["frame"], keys_b.keys["frame"])
