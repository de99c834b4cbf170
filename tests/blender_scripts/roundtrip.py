# Inside Blender with the retromesh extension installed in BLENDER_USER_RESOURCES: for each job,
# File > Import > Classic game model (retromesh) the picked files, then File > Export to
# job["out"] (its extension picks the format); optionally apply one edit in between, or import a
# second model (job["also"]) and export only the first one.
import os
import sys
import time

import addon_utils

MODULE = "bl_ext.user_default.retromesh"


def fresh():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    addon_utils.enable(MODULE, default_set=True)


def edit(kind, job):
    """The edits of the editing tests: move one vertex of the first mesh, rename one bone, move
    one bone (job["bone"], in edit mode: its head and tail 0.25 along Blender's X)."""
    if kind == "move_bone":
        arm = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
        bpy.context.view_layer.objects.active = arm
        bpy.ops.object.mode_set(mode="EDIT")
        bone = arm.data.edit_bones[job["bone"]]
        bone.head.x += 0.25
        bone.tail.x += 0.25
        bpy.ops.object.mode_set(mode="OBJECT")
        return {"bone": job["bone"]}
    if kind == "move_vertex":
        obj = next(o for o in bpy.context.scene.objects
                   if o.type == "MESH" and o.data.users and not o.name.startswith("Icosphere"))
        obj.data.vertices[ARGS.get("vertex", 0)].co.z += 0.5
        return {"object": obj.name}
    if kind == "rename_bone":
        arm = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
        bone = arm.data.bones[ARGS.get("bone", 1)]
        old = bone.name
        bone.name = "renamed_" + old
        return {"old": old, "new": bone.name}
    return {}


out = []
for job in ARGS["jobs"]:
    start = time.perf_counter()
    res = {"out": job["out"]}
    try:
        fresh()
        files = job["files"]
        folder = os.path.dirname(files[0])
        r = bpy.ops.import_scene.retromesh(filepath=files[0], directory=folder,
                                           files=[{"name": os.path.basename(f)} for f in files])
        addon = sys.modules[MODULE.rsplit(".", 1)[0] + ".retromesh"] if False else None
        from retromesh.blender import addon as rm_addon
        res["import"] = list(r)
        res["import_warnings"] = list(rm_addon.LAST_WARNINGS)
        res["objects"] = sorted(o.type for o in bpy.context.scene.objects)
        selected_only = False
        if job.get("also"):          # a second model in the same Blender scene; export the first
            first = set(bpy.context.scene.objects)
            also = job["also"]
            r = bpy.ops.import_scene.retromesh(
                filepath=also[0], directory=os.path.dirname(also[0]),
                files=[{"name": os.path.basename(f)} for f in also])
            res["import_also"] = list(r)
            for o in bpy.context.scene.objects:
                o.select_set(o in first)
            selected_only = True
        if job.get("edit"):
            res["edit"] = edit(job["edit"], job)
        os.makedirs(os.path.dirname(job["out"]), exist_ok=True)
        r = bpy.ops.export_scene.retromesh(filepath=job["out"], use_selection=selected_only)
        res["export"] = list(r)
        res["export_warnings"] = list(rm_addon.LAST_WARNINGS)
    except Exception:
        import traceback
        res["error"] = traceback.format_exc()[-2000:]
    res["seconds"] = round(time.perf_counter() - start, 2)
    out.append(res)
emit(out)
