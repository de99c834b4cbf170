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


def describe(path):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    result = bpy.ops.import_scene.gltf(filepath=path)
    scene = bpy.context.scene
    objs = list(scene.objects)
    info = {"result": list(result),
            "objects": {t: sum(o.type == t for o in objs) for t in {o.type for o in objs}},
            "meshes": len(bpy.data.meshes),
            "vertices": sum(len(m.vertices) for m in bpy.data.meshes),
            "triangles": sum(sum(len(p.vertices) - 2 for p in m.polygons) for m in bpy.data.meshes),
            "bones": sum(len(a.bones) for a in bpy.data.armatures),
            "materials": len(bpy.data.materials),
            "actions": len(bpy.data.actions),
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
    mid = start + (end - start) / 2
    scene.frame_set(int(mid), subframe=mid - int(mid))
    p1, b1 = world_positions(depsgraph), bone_matrices()
    info["frames"] = [start, mid]
    info["vertex_motion"] = float(np.abs(p1 - p0).max()) if len(p0) and p0.shape == p1.shape else 0.0
    info["bone_motion"] = float(np.abs(b1 - b0).max()) if len(b0) and b0.shape == b1.shape else 0.0
    info["box"] = box              # Blender axes: X, Y, Z (Z up)
    return info


out = {}
for path in ARGS["files"]:
    try:
        out[path] = describe(path)
    except Exception as exc:       # one bad file must not hide the others
        import traceback
        out[path] = {"error": traceback.format_exc()[-1500:]}
emit(out)
