# Inside Blender with the retromesh extension: import ARGS["files"] (an Overgrowth skeleton with
# its mesh and animations) through File > Import > Classic game model, make the action of
# ARGS["action"] the armature's, pose the bone ARGS["bone"] ARGS["degrees"] about its own X at
# frame ARGS["frame"] (a keyframe, as a user poses a character), then File > Export to
# ARGS["out"]; emit the import and export results and warnings.
import math
import os

import addon_utils
from mathutils import Quaternion

bpy.ops.wm.read_factory_settings(use_empty=True)
addon_utils.enable("bl_ext.user_default.retromesh", default_set=True)
from retromesh.blender import addon as rm_addon  # noqa: E402  (importable once enabled)

files = ARGS["files"]
res = {"import": list(bpy.ops.import_scene.retromesh(
    filepath=files[0], directory=os.path.dirname(files[0]),
    files=[{"name": os.path.basename(f)} for f in files]))}
arm = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
res["actions"] = sorted(a.name for a in bpy.data.actions)
action = next(a for a in bpy.data.actions if a.name.startswith(ARGS["action"]))
arm.animation_data.action = action
bpy.context.scene.frame_set(ARGS["frame"])
pb = arm.pose.bones[ARGS["bone"]]
pb.rotation_mode = "QUATERNION"
pb.rotation_quaternion = pb.rotation_quaternion @ Quaternion((1.0, 0.0, 0.0), math.radians(ARGS["degrees"]))
pb.keyframe_insert("rotation_quaternion", frame=ARGS["frame"])
os.makedirs(os.path.dirname(ARGS["out"]), exist_ok=True)
res["export"] = list(bpy.ops.export_scene.retromesh(filepath=ARGS["out"]))
res["export_warnings"] = list(rm_addon.LAST_WARNINGS)
emit(res)
