# Inside Blender: import each GLB of ARGS["files"] with Blender's own glTF importer (defaults,
# as a user does) into an empty scene and describe what Blender made of it.
import math

import numpy as np


def world_positions(depsgraph):
    out = []
    for obj in bpy.context.scene.objects:
        if obj.type != "MESH":
            continue
        ev = obj.evaluated_get(depsgraph)
        mesh = ev.to_mesh()
        co = np.empty(len(mesh.vertices) * 3, dtype=np.float64)
        mesh.vertices.foreach_get("co", co)
        co = co.reshape(-1, 3)
        m = np.array(ev.matrix_world)
        out.append(co @ m[:3, :3].T + m[:3, 3])
        ev.to_mesh_clear()
    return np.concatenate(out) if out else np.zeros((0, 3))


def bone_matrices():
    out = []
    for obj in bpy.context.scene.objects:
        if obj.type == "ARMATURE":
            for pb in obj.pose.bones:
                out.append(np.array(obj.matrix_world @ pb.matrix))
        else:
            out.append(np.array(obj.matrix_world))
    return np.array(out)


def bone_shapes():
    return {pb.custom_shape for o in bpy.data.objects if o.type == "ARMATURE"
            for pb in o.pose.bones if pb.custom_shape is not None}


def describe(path):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    result = bpy.ops.import_scene.gltf(filepath=path)
    scene = bpy.context.scene
    shapes = bone_shapes()                 # the importer's bone display shapes are no content
    for obj in shapes:
        bpy.data.objects.remove(obj)
    objs = list(scene.objects)
    meshes = {o.data for o in objs if o.type == "MESH"}
    info = {"result": list(result),
            "objects": {t: sum(o.type == t for o in objs) for t in {o.type for o in objs}},
            "meshes": len(meshes),
            "vertices": sum(len(m.vertices) for m in meshes),
            "triangles": sum(sum(len(p.vertices) - 2 for p in m.polygons) for m in meshes),
            "bones": sum(len(a.bones) for a in bpy.data.armatures),
            "materials": len(bpy.data.materials),
            "actions": len(bpy.data.actions),
            "action_names": sorted(a.name for a in bpy.data.actions),
            # KHR_materials_variants, as Blender's glTF importer keeps them (its own property)
            "variants": [v.name for v in getattr(scene, "gltf2_KHR_materials_variants_variants",
                                                 [])],
            "images": []}
    for im in bpy.data.images:
        if im.type != "IMAGE":
            continue
        w, h = im.size
        lit = False
        if w and h:
            px = np.empty(w * h * im.channels, dtype=np.float32)
            im.pixels.foreach_get(px)
            lit = bool(px.size and px.max() > 0)
        info["images"].append({"name": im.name, "size": [w, h], "has_data": bool(im.has_data),
                               "pixels": lit, "packed": im.packed_file is not None})
    depsgraph = bpy.context.evaluated_depsgraph_get()
    ranges = [a.frame_range for a in bpy.data.actions]
    start = min((r[0] for r in ranges), default=scene.frame_start)
    end = max((r[1] for r in ranges), default=scene.frame_end)
    scene.frame_set(int(math.floor(start)))
    p0, b0 = world_positions(depsgraph), bone_matrices()
    box = (p0.max(0) - p0.min(0)).tolist() if len(p0) else [0, 0, 0]
    info["frames"] = [start, end]
    info["vertex_motion"] = info["bone_motion"] = 0.0
    for k in range(1, 9):                  # a pose may hold for a while: look across the range
        frame = start + (end - start) * k / 8
        scene.frame_set(int(frame), subframe=frame - int(frame))
        p1, b1 = world_positions(depsgraph), bone_matrices()
        if len(p0) and p0.shape == p1.shape:
            info["vertex_motion"] = max(info["vertex_motion"], float(np.abs(p1 - p0).max()))
        if len(b0) and b0.shape == b1.shape:
            info["bone_motion"] = max(info["bone_motion"], float(np.abs(b1 - b0).max()))
    info["box"] = box              # Blender axes: X, Y, Z (Z up)
    return info


out = {}
for path in ARGS["files"]:
    try:
        out[path] = describe(path)
    except Exception:       # one bad file must not hide the others
        import traceback
        out[path] = {"error": traceback.format_exc()[-1500:]}
emit(out)
