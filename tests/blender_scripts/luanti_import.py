# Inside Blender with the retromesh extension installed in BLENDER_USER_RESOURCES: File > Import >
# Classic game model (retromesh) of a model lying in its Luanti mod (the mod's Lua run by the
# extension), describe what came in (actions, images and their pixels, material variants), then
# optionally stretch one clip's action (ARGS["stretch"] = [action name part, factor]) and
# File > Export to ARGS["out"].
import os
import sys

import addon_utils
import numpy as np

MODULE = "bl_ext.user_default.retromesh"

bpy.ops.wm.read_factory_settings(use_empty=True)
addon_utils.enable(MODULE, default_set=True)
from retromesh.blender import addon as rm_addon  # noqa: E402  (importable once enabled)

res = {"python": sys.executable}
# the interpreter the sandbox starts its child with, and whether lupa is importable there
from retromesh.luanti import sandbox  # noqa: E402

res["child_python"] = str(sandbox.interpreter())
path = ARGS["file"]
r = bpy.ops.import_scene.retromesh(filepath=path, directory=os.path.dirname(path),
                                   files=[{"name": os.path.basename(path)}],
                                   run_mod_lua=ARGS.get("lua", True))
res["import"] = list(r)
res["import_warnings"] = list(rm_addon.LAST_WARNINGS)
res["actions"] = sorted(a.name for a in bpy.data.actions)
res["variants"] = [v.name for v in getattr(bpy.context.scene,
                                           "gltf2_KHR_materials_variants_variants", [])]
images = []
for im in bpy.data.images:
    if im.type != "IMAGE" or not im.size[0]:
        continue
    px = np.empty(im.size[0] * im.size[1] * im.channels, dtype=np.float32)
    im.pixels.foreach_get(px)
    rgb = px.reshape(-1, im.channels)[:, :3]
    images.append({"name": im.name, "size": list(im.size),
                   "mean": rgb.mean(axis=0).round(4).tolist(),
                   "spread": float(rgb.std()), "max": float(px.max())})
res["images"] = images
# the images the meshes show (their materials' base colour textures)
shown = set()
for obj in bpy.context.scene.objects:
    if obj.type != "MESH":
        continue
    for slot in obj.material_slots:
        mat = slot.material
        if mat is None or not mat.use_nodes:
            continue
        for node in mat.node_tree.nodes:
            if node.type == "TEX_IMAGE" and node.image is not None:
                shown.add(node.image.name)
res["shown_images"] = sorted(shown)
if ARGS.get("probe"):
    # what the export hands retromesh (Blender's GLB, extras decoded): are the clips unedited?
    import retromesh
    from retromesh.blender import bridge
    from retromesh.luanti.clipsback import fold_edited_clips

    export = bpy.ops.export_scene.gltf
    props = set(export.get_rna_type().properties.keys())
    tmp, glb = bridge.temp_glb()
    export(filepath=str(glb), **{k: v for k, v in rm_addon.GLTF_EXPORT.items() if k in props})
    bridge.decode_extras(glb)
    written = retromesh.load(glb)
    res["clips_back"] = sorted(a.name for a in written.animations
                               if "luanti_clip" in a.extras)
    res["folded"] = fold_edited_clips(written) is not written
    tmp.cleanup()
stretch = ARGS.get("stretch")
if stretch:
    part, factor = stretch
    action = next(a for a in bpy.data.actions if part in a.name)
    for fc in action.fcurves:
        for kp in fc.keyframe_points:
            for attr in ("co", "handle_left", "handle_right"):
                v = getattr(kp, attr)
                setattr(kp, attr, (v[0] * factor, v[1]))
    res["stretched"] = action.name
if ARGS.get("out"):
    res["out"] = ARGS["out"]
    os.makedirs(os.path.dirname(ARGS["out"]), exist_ok=True)
    r = bpy.ops.export_scene.retromesh(filepath=ARGS["out"])
    res["export"] = list(r)
    res["export_warnings"] = list(rm_addon.LAST_WARNINGS)
emit(res)
