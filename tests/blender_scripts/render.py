# Inside Blender with the retromesh extension: import ARGS["files"] through File > Import >
# Classic game model (retromesh), frame it with a camera and render it with Workbench to
# ARGS["out"] (PNG), a third of the way into its animation.
import math
import os

import addon_utils
from mathutils import Vector

bpy.ops.wm.read_factory_settings(use_empty=True)
addon_utils.enable("bl_ext.user_default.retromesh", default_set=True)
files = ARGS["files"]
r = bpy.ops.import_scene.retromesh(filepath=files[0], directory=os.path.dirname(files[0]),
                                   files=[{"name": os.path.basename(f)} for f in files])
scene = bpy.context.scene
ranges = [a.frame_range for a in bpy.data.actions]
if ranges:
    start, end = min(r_[0] for r_ in ranges), max(r_[1] for r_ in ranges)
    scene.frame_set(int(start + (end - start) / 3))
depsgraph = bpy.context.evaluated_depsgraph_get()
points = []
for obj in scene.objects:
    if obj.type == "MESH" and not obj.name.startswith("Icosphere"):
        ev = obj.evaluated_get(depsgraph)
        mesh = ev.to_mesh()
        points += [ev.matrix_world @ v.co for v in mesh.vertices]
        ev.to_mesh_clear()
lo = Vector((min(p.x for p in points), min(p.y for p in points), min(p.z for p in points)))
hi = Vector((max(p.x for p in points), max(p.y for p in points), max(p.z for p in points)))
center = (lo + hi) / 2
radius = max((p - center).length for p in points)
cam_data = bpy.data.cameras.new("camera")
cam_data.lens = 50
cam = bpy.data.objects.new("camera", cam_data)
scene.collection.objects.link(cam)
direction = Vector((0.9, -1.6, 0.7)).normalized()

fov = 2 * math.atan(18 / 50 * 400 / 640)          # the 36 mm sensor across 640 x 400
cam.location = center + direction * radius / math.sin(fov / 2) * 1.1
cam.rotation_euler = (center - cam.location).to_track_quat("-Z", "Y").to_euler()
scene.camera = cam
for obj in scene.objects:                # the armature's bone shapes stay out of the picture
    if obj.type == "ARMATURE" or obj.name.startswith("Icosphere"):
        obj.hide_render = True
for mat in bpy.data.materials:           # pixel-art textures: show the texels
    for node in mat.node_tree.nodes if mat.node_tree else ():
        if node.type == "TEX_IMAGE":
            node.interpolation = "Closest"
scene.render.engine = "BLENDER_WORKBENCH"
shading = scene.display.shading
shading.light = "STUDIO"
shading.color_type = "TEXTURE"
shading.show_shadows = True
shading.show_cavity = True
scene.display.shading.background_type = "WORLD" if hasattr(shading, "background_type") else None
world = bpy.data.worlds.new("world")
world.color = (0.18, 0.2, 0.24)
scene.world = world
scene.render.resolution_x, scene.render.resolution_y = 640, 400
scene.render.resolution_percentage = 100
scene.render.image_settings.file_format = "PNG"
scene.render.image_settings.color_mode = "RGB"
scene.render.image_settings.compression = 100
scene.render.filepath = ARGS["out"]
bpy.ops.render.render(write_still=True)
emit({"import": list(r), "frame": scene.frame_current})
