"""The Blender side of the extension (imported only inside Blender: it imports bpy).

``import_scene.retromesh``: retromesh reads the picked files (main file + companions, see
:mod:`retromesh.blender.bridge`), writes a temporary GLB, and Blender's own glTF importer loads
it with the options that keep what retromesh put there (custom properties from ``extras``, the
bind pose, unmerged vertices, the file's normals).

``export_scene.retromesh``: Blender's glTF exporter writes a temporary GLB with ``extras``
(custom properties), every action as its own animation and the keys as they are (no resampling,
no key optimisation), then retromesh converts it to the format of the chosen extension, writing
the companions beside it. Every LossWarning goes to Blender's report.
"""
from __future__ import annotations

from pathlib import Path

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, StringProperty
from bpy.types import Operator, OperatorFileListElement
from bpy_extras.io_utils import ExportHelper, ImportHelper

from . import bridge

LABEL = "Classic game model (retromesh)"

#: glTF importer options (Blender 4.2) that keep what retromesh wrote
GLTF_IMPORT = dict(merge_vertices=False, import_shading="NORMALS", bone_heuristic="BLENDER",
                   guess_original_bind_pose=True, import_pack_images=True)
#: glTF exporter options that keep what retromesh needs to write the game format back
GLTF_EXPORT = dict(export_format="GLB", export_extras=True, export_yup=True, export_apply=False,
                   export_texcoords=True, export_normals=True, export_tangents=False,
                   export_materials="EXPORT", export_image_format="AUTO",
                   export_vertex_color="MATERIAL", export_skins=True, export_all_influences=True,
                   export_def_bones=False, export_leaf_bone=False, export_morph=True,
                   export_animations=True, export_animation_mode="ACTIONS",
                   export_force_sampling=False, export_optimize_animation_size=False,
                   export_anim_slide_to_zero=False, export_bake_animation=False,
                   export_reset_pose_bones=True, export_rest_position_armature=True,
                   export_cameras=False, export_lights=False,
                   # vertex attributes named "_...": the source index a family carries per
                   # vertex (Overgrowth OBJ), so that an unedited mesh keeps its vertices
                   export_attributes=True)


def _known(op_props: set[str], options: dict) -> dict:
    """Only the options this Blender's glTF operator has (they change between versions)."""
    return {k: v for k, v in options.items() if k in op_props}


def _op_props(op) -> set[str]:
    return set(op.get_rna_type().properties.keys())


#: the LossWarnings of the last import or export (what Blender's report showed; for scripts)
LAST_WARNINGS: list[str] = []


def _report_warnings(op: Operator, messages: list[str]) -> None:
    LAST_WARNINGS.extend(messages)
    for m in messages:
        op.report({"WARNING"}, m)


def _put_animation_extras(objects, extras: dict[str, dict]) -> None:
    """Blender's importer leaves animations' extras out; its exporter writes action custom
    properties as the animation's extras. The importer names each object's NLA track after the
    glTF animation whose action it holds."""
    for obj in objects:
        ad = obj.animation_data
        if ad is None:
            continue
        for track in ad.nla_tracks:
            values = extras.get(track.name)
            if not values:
                continue
            for strip in track.strips:
                if strip.action is not None:
                    for key, value in values.items():
                        strip.action[key] = value


class IMPORT_SCENE_OT_retromesh(Operator, ImportHelper):
    """Import classic game models (B3D, Lugaru/Overgrowth, LithTech ABC, Lost Saga, Westwood VXL)
    with their skeletons and animations"""
    bl_idname = "import_scene.retromesh"
    bl_label = LABEL
    bl_options = {"REGISTER", "UNDO", "PRESET"}

    filter_glob: StringProperty(default=";".join(f"*.{e}" for e in bridge.IMPORT_EXTENSIONS),
                                options={"HIDDEN"})
    files: CollectionProperty(type=OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"})
    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})

    find_companions: BoolProperty(
        name="Find companions", default=True,
        description="Also load the skeleton, animations and meshes lying beside the file "
                    "under the names retromesh writes them")
    fps: FloatProperty(name="Frame rate", default=0.0, min=0.0, max=1000.0,
                       description="Animation frame rate for formats that count frames "
                                   "(0: the format's own default)")
    run_mod_lua: BoolProperty(
        name="Run the mod's Lua", default=True,
        description="A model in a Luanti mod: RUN the mod's Lua (fenced: a child process with "
                    "time and memory limits, no io/os, files only inside the mod) to get the "
                    "textures and named clips the mod registers")
    shading: EnumProperty(name="Shading", default="NORMALS",
                          items=(("NORMALS", "Use file normals", ""), ("FLAT", "Flat", ""),
                                 ("SMOOTH", "Smooth", "")))

    def _paths(self) -> list[Path]:
        if self.files and self.directory:
            return [Path(self.directory) / f.name for f in self.files if f.name]
        return [Path(self.filepath)]

    def execute(self, context):
        import retromesh
        LAST_WARNINGS.clear()
        jobs = bridge.group_files(self._paths(), find_beside=self.find_companions)
        gltf = bpy.ops.import_scene.gltf
        props = _op_props(gltf)
        done = 0
        for job in jobs:
            options = {}
            if self.fps > 0:
                options["fps"] = self.fps
            if self.run_mod_lua:
                options["mods"] = {"lua": True}
            tmp, glb = bridge.temp_glb()
            try:
                notes = bridge.load_to_glb(job, glb, **options)
                _report_warnings(self, notes)
                anim_extras = bridge.encode_extras(glb)
                files = bridge.files_record(glb)
                before = set(bpy.data.objects)
                result = gltf(filepath=str(glb),
                              **_known(props, {**GLTF_IMPORT, "import_shading": self.shading}))
                if "FINISHED" not in result:
                    self.report({"ERROR"}, f"{job.main.name}: Blender's glTF importer failed")
                    continue
                new = set(bpy.data.objects) - before
                for obj in new:
                    if obj.parent is None:
                        obj["retromesh_source"] = str(job.main)
                        if isinstance(files, str):
                            obj[bridge.FILES_PROPERTY] = files
                _put_animation_extras(new, anim_extras)
                done += 1
            except (retromesh.RetromeshError, OSError) as exc:
                self.report({"ERROR"}, f"{job.main.name}: {exc}")
            finally:
                tmp.cleanup()
        if not done:
            return {"CANCELLED"}
        self.report({"INFO"}, f"imported {done} of {len(jobs)} file(s) with retromesh")
        return {"FINISHED"}


class EXPORT_SCENE_OT_retromesh(Operator, ExportHelper):
    """Export to a classic game format (chosen by the file extension), with its skeleton,
    animations and material files beside it"""
    bl_idname = "export_scene.retromesh"
    bl_label = LABEL
    bl_options = {"REGISTER", "PRESET"}

    filename_ext = ".b3d"
    check_extension = None          # the extension the user types picks the format
    filter_glob: StringProperty(default=";".join(f"*.{e}" for e in bridge.EXPORT_EXTENSIONS),
                                options={"HIDDEN"})
    use_selection: BoolProperty(name="Selected only", default=False,
                                description="Export the selected objects only")

    def execute(self, context):
        import retromesh
        LAST_WARNINGS.clear()
        target = Path(self.filepath)
        if not target.suffix and not bridge.names_a_format(target):
            self.report({"ERROR"}, "give the file an extension: it chooses the format "
                                   f"({', '.join('.' + e for e in bridge.EXPORT_EXTENSIONS)})")
            return {"CANCELLED"}
        gltf = bpy.ops.export_scene.gltf
        tmp, glb = bridge.temp_glb()
        try:
            result = gltf(filepath=str(glb),
                          **_known(_op_props(gltf), {**GLTF_EXPORT, "use_selection": self.use_selection}))
            if "FINISHED" not in result or not glb.is_file():
                self.report({"ERROR"}, "Blender's glTF exporter failed")
                return {"CANCELLED"}
            written, notes = bridge.convert_glb(glb, target)
        except (retromesh.RetromeshError, OSError) as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        finally:
            tmp.cleanup()
        _report_warnings(self, notes)
        self.report({"INFO"}, "wrote " + ", ".join(p.name for p in written))
        return {"FINISHED"}


class IO_FH_retromesh(bpy.types.FileHandler):
    """Drag and drop of game model files onto the 3D viewport (.obj stays Blender's own)."""
    bl_idname = "IO_FH_retromesh"
    bl_label = "retromesh"
    bl_import_operator = "import_scene.retromesh"
    bl_file_extensions = ";".join("." + e for e in bridge.IMPORT_EXTENSIONS if e != "obj")

    @classmethod
    def poll_drop(cls, context):
        return context.area is not None and context.area.type == "VIEW_3D"


def _menu_import(self, context):
    self.layout.operator(IMPORT_SCENE_OT_retromesh.bl_idname, text=LABEL)


def _menu_export(self, context):
    self.layout.operator(EXPORT_SCENE_OT_retromesh.bl_idname, text=LABEL)


_CLASSES = (IMPORT_SCENE_OT_retromesh, EXPORT_SCENE_OT_retromesh, IO_FH_retromesh)


def register() -> None:
    for cls in _CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.TOPBAR_MT_file_import.append(_menu_import)
    bpy.types.TOPBAR_MT_file_export.append(_menu_export)


def unregister() -> None:
    bpy.types.TOPBAR_MT_file_export.remove(_menu_export)
    bpy.types.TOPBAR_MT_file_import.remove(_menu_import)
    for cls in reversed(_CLASSES):
        bpy.utils.unregister_class(cls)
