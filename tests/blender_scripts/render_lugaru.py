# Inside Blender: import ARGS["glb"] with Blender's glTF importer (the first animation plays;
# ARGS["action"], when given, is put on the armature instead), then render the meshes (the
# low-detail model and the bone shapes left out) with Workbench at each of ARGS["frames"] to
# ARGS["out"] % k, the camera framing the pose from the direction ARGS["dir"].
import math

from mathutils import Vector

bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_scene.gltf(filepath=ARGS["glb"])
scene = bpy.context.scene
arm = next((o for o in scene.objects if o.type == "ARMATURE"), None)
info = {"actions": [a.name for a in bpy.data.actions],
        "objects": [(o.name, o.type) for o in scene.objects]}
want = ARGS.get("action")
if want and arm is not None:
    action = bpy.data.actions.get(want)
    if action is not None:
        arm.animation_data_create()
        arm.animation_data.action = action
if arm is not None and arm.animation_data and arm.animation_data.action:
    info["used"] = arm.animation_data.action.name
    info["range"] = list(arm.animation_data.action.frame_range)
cam = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
scene.collection.objects.link(cam)
scene.camera = cam
scene.render.engine = "BLENDER_WORKBENCH"
scene.display.shading.light = "STUDIO"
scene.display.shading.color_type = "TEXTURE"
world = bpy.data.worlds.new("world")
world.color = (0.18, 0.2, 0.24)
scene.world = world
scene.render.resolution_x = scene.render.resolution_y = 400
scene.render.image_settings.file_format = "PNG"
for o in scene.objects:
    if o.type != "MESH" or o.name in ("BodyLow", "WolfLow") or o.name.startswith("Icosphere"):
        o.hide_render = True
out = []
for k, frame in enumerate(ARGS["frames"]):
    scene.frame_set(frame)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    points = []
    for o in scene.objects:
        if o.type == "MESH" and not o.hide_render:
            ev = o.evaluated_get(depsgraph)
            mesh = ev.to_mesh()
            points += [ev.matrix_world @ v.co for v in mesh.vertices]
            ev.to_mesh_clear()
    lo = Vector([min(p[i] for p in points) for i in range(3)])
    hi = Vector([max(p[i] for p in points) for i in range(3)])
    center = (lo + hi) / 2
    radius = max((p - center).length for p in points)
    direction = Vector(ARGS.get("dir", (0.6, -1.6, 0.3))).normalized()
    cam.location = center + direction * radius / math.sin(math.radians(20)) * 1.05
    cam.rotation_euler = (center - cam.location).to_track_quat("-Z", "Y").to_euler()
    scene.render.filepath = ARGS["out"] % k
    bpy.ops.render.render(write_still=True)
    out.append({"frame": frame, "lo": list(lo), "hi": list(hi)})
info["renders"] = out
emit(info)
