# Inside Blender with the retromesh extension installed in BLENDER_USER_RESOURCES: what the
# extension's dialogs offer (the import and export file filters, the drag-and-drop handler's
# extensions), then for each of ARGS["jobs"] File > Import > Classic game model (retromesh) of
# its files and what came in: objects, and per material the images its nodes use (name, size,
# whether the pixels are there and not all one colour).
import os

import addon_utils

MODULE = "bl_ext.user_default.retromesh"
bpy.ops.wm.read_factory_settings(use_empty=True)
addon_utils.enable(MODULE, default_set=True)


def prop_default(op, name):
    return op.get_rna_type().properties[name].default


handler = next(c for c in bpy.types.FileHandler.__subclasses__()
               if getattr(c, "bl_idname", "") == "IO_FH_retromesh")
out = {"import_filter": prop_default(bpy.ops.import_scene.retromesh, "filter_glob"),
       "export_filter": prop_default(bpy.ops.export_scene.retromesh, "filter_glob"),
       "drop": handler.bl_file_extensions, "jobs": []}


def image_facts(img):
    px = list(img.pixels[:4096]) if img.size[0] else []
    return {"name": img.name, "size": list(img.size), "has_data": img.has_data,
            "varied": len({round(v, 3) for v in px}) > 4}


for files in ARGS["jobs"]:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    addon_utils.enable(MODULE, default_set=True)
    r = bpy.ops.import_scene.retromesh(filepath=files[0], directory=os.path.dirname(files[0]),
                                       files=[{"name": os.path.basename(f)} for f in files])
    mats = {}
    for obj in bpy.context.scene.objects:
        if obj.type != "MESH":
            continue
        for slot in obj.material_slots:
            mat = slot.material
            if mat is None or not mat.node_tree:
                continue
            imgs = [image_facts(n.image) for n in mat.node_tree.nodes
                    if n.type == "TEX_IMAGE" and n.image is not None]
            mats[mat.name] = imgs
    out["jobs"].append({"files": files, "import": list(r),
                        "objects": sorted(o.type for o in bpy.context.scene.objects),
                        "materials": mats})
emit(out)
