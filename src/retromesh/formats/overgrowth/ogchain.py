"""Following an Overgrowth descriptor as the engine does: character -> object XML (model,
colour and normal maps) and rig XML (``.phxbn``, its ``.obj``, ``mass_path``) and the
animations, every problem a :class:`~retromesh.findings.Finding` in the engine's words.

Rules (``overgrowth-xml.<name>``; the engine's message first where it has one):

==================  =============================================================================
rule                when
==================  =============================================================================
bone_path           the rig has no ``bone_path`` or it names no file: "Could not find bone_path
                    file from attribute." (``SkeletonAsset`` sub error 1)
rig_root            the character's ``skeleton`` XML has no root element or its root is not
                    ``<rig>``: "Missing root Rig node in xml file." (sub error 2; the engine
                    itself only notices a missing element, and crashes on a root without
                    ``bone_path``)
symmetry            a bone has no X-mirrored twin: "PHXBN skeleton is not symmetrical." plus the
                    engine's extended " Asymmetrical bones: bone i at a, b" (sub error 3)
vertex_count        the ``.phxbn`` vertex count differs from the rig's ``model_path`` OBJ (the
                    engine's check, version 11) or from the object's ``<Model>`` it skins:
                    "Skeleton file and model file have different vertex counts." (sub error 4)
model_path          the rig has no ``model_path`` or it names no file
object_model,       ``<Model>``, ``<ColorMap>``, ``<NormalMap>``, ``<ShaderName>`` missing:
object_color_map,   "Model name not found. Aborting object load." ... (``ObjectFile``)
object_normal_map,
object_shader
appearance          the character has no ``<appearance>`` or no ``obj_path``/``skeleton``
                    attribute (the engine reads a null string: a crash)
missing_file        a named file is in no data root: 'Unable to find "…" in any of the
                    requested locations.' (``FindFilePath``)
unsafe_path         a path that is absolute, has ``..`` or leads out of its root (refused here;
                    the engine would try it)
malformed           a named XML, ``.phxbn``, ``.obj`` or ``.anm`` file does not parse
morph               a morph OBJ (``<model>_<label>[step].obj``, or ``<appearance morph>``) missing
                    or with another triangle corner count than the model (a warning: it is left
                    out)
animation           an animation entry the engine cannot use (no ``path``, an extension other
                    than ``.anm``/``.xml``, synced groups nested too deep or in a circle)
==================  =============================================================================
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import registry
from ...errors import FormatError, RetromeshError
from ...findings import Finding, error, warning
from ...records import record
from ...safenames import UnsafePath
from .anm import AnmFile
from .obj import ObjMesh
from .ogxml import DataRoots, OgXmlFile, XmlNode, parse_xml
from .phxbn import NOT_SYMMETRICAL, PhxbnFile, symmetry_problems, vertex_count_problem

__all__ = ["Chain", "Parts", "RULE"]

RULE = "overgrowth-xml"
MAX_GROUP_DEPTH = 8
MAX_MASS_DEPTH = 4


@record
class Parts:
    """What a descriptor resolves to (engine paths as written, files as loaded)."""
    kind: str
    paths: dict[str, str]                    # role (object, rig, bone_path, ...) -> engine path
    model: ObjMesh | None = None             # the mesh shown (object <Model>, else rig model)
    model_text: bytes | None = None          # the object's <Model> file as read
    skeleton: PhxbnFile | None = None
    color_map: tuple[bytes, str] | None = None   # raw bytes, engine path
    animations: list[tuple[str, AnmFile, str, list[str]]] | None = None  # name, doc, path, roles
    morphs: list[tuple[str, ObjMesh, str]] | None = None   # target name, mesh, engine path
    settings: dict[str, object] | None = None


def _fmt(p: np.ndarray) -> str:
    return "(" + ", ".join(f"{float(x):g}" for x in p) + ")"


class Chain:
    """Resolves one descriptor; :attr:`findings` lists every problem met on the way."""

    def __init__(self, doc: OgXmlFile, data_path: list[str] | tuple[str, ...] = (),
                 roles: list[str] | None = None, load: bool = True) -> None:
        self.doc = doc
        self.roots = DataRoots(doc.path, data_path)
        self.roles = roles
        self.load = load             # False: check files exist and parse, skip image bytes
        self.findings: list[Finding] = []
        # files read so far by engine path: a character's OBJ is named by its object, its rig
        # and its mass rig, and is read once
        self._read: dict[str, bytes] = {}

    # -- helpers ---------------------------------------------------------------------------
    def _add(self, name: str, message: str, severity: str = "error") -> None:
        f = (error if severity == "error" else warning)(f"{RULE}.{name}", message)
        if f not in self.findings:
            self.findings.append(f)

    def _file(self, rel: str, what: str, where: str) -> bytes | None:
        if rel in self._read:
            return self._read[rel]
        try:
            hit = self.roots.read(rel)
        except UnsafePath as exc:
            self._add("unsafe_path", f"{where}: {rel!r} is refused ({exc})")
            return None
        except OSError as exc:
            self._add("missing_file", f"{where}: {rel} could not be read ({exc.strerror or exc})")
            return None
        if hit is None:
            self._add("missing_file", f'Unable to find "{rel}" in any of the requested '
                                      f"locations. ({what}, named by {where}; data roots: "
                                      f"{self.roots.describe()})")
            return None
        self._read[rel] = hit[0]
        return hit[0]

    def _exists(self, rel: str, where: str) -> bool | None:
        """Whether a data root holds ``rel``; None when the path is refused (reported)."""
        try:
            return self.roots.find(rel) is not None
        except UnsafePath as exc:
            self._add("unsafe_path", f"{where}: {rel!r} is refused ({exc})")
            return None

    def _xml(self, rel: str, what: str, where: str) -> tuple[XmlNode | None, bool]:
        """(root element or None, whether the file was found and parsed)."""
        data = self._file(rel, what, where)
        if data is None:
            return None, False
        try:
            return parse_xml(data, rel), True
        except FormatError as exc:
            self._add("malformed", str(exc))
            return None, False

    def _parse(self, fmt_name: str, data: bytes, rel: str) -> Any:
        try:
            doc = registry.parse(registry.get(fmt_name), data, rel)
            return doc.mesh(rel) if fmt_name == "obj" else doc
        except RetromeshError as exc:
            self._add("malformed", str(exc))
        return None

    # -- the chain ---------------------------------------------------------------------------
    def resolve(self) -> Parts:
        root = self.doc.root()
        name = self.doc.path or "<data>"
        parts = Parts(self.doc.kind, {}, settings={})
        if self.doc.kind == "character":
            self._character(root, name, parts)
        elif self.doc.kind == "rig":
            self._rig_node(root, name, parts, None)
        else:
            self._object_node(root, name, parts)
        return parts

    def _character(self, root: XmlNode, where: str, parts: Parts) -> None:
        app = root.child("appearance")
        settings = parts.settings if parts.settings is not None else {}
        if app is None:
            self._add("appearance", f"{where}: no <appearance> element (the engine loads an "
                                    "empty obj_path and skeleton)")
        else:
            for attr in ("obj_path", "skeleton"):
                if attr not in app.attrib:
                    self._add("appearance", f"{where} line {app.line}: <appearance> has no "
                                            f"{attr} attribute (the engine reads a null string: "
                                            "a crash)")
            for key in ("model_scale", "default_scale", "fur", "morph",
                        *(f"channel_{i}" for i in range(4))):
                if key in app.attrib:
                    settings[key] = app.attrib[key]
            if "obj_path" in app.attrib:
                parts.paths["object"] = app.attrib["obj_path"]
                node, ok = self._xml(app.attrib["obj_path"], "object XML",
                                     f"{where} <appearance obj_path>")
                if node is not None:
                    self._object_node(node, app.attrib["obj_path"], parts)
                elif ok:
                    self._add("object_model", "Model name not found. Aborting object load. "
                                              f"({app.attrib['obj_path']}: no element)")
            if "skeleton" in app.attrib:
                self._rig(app.attrib["skeleton"], f"{where} <appearance skeleton>", parts)
        anims = root.child("animations")
        if anims is not None:
            self._animations(anims, where, parts)
        self._morphs(root, app, where, parts)
        for tag in ("team", "clothing"):
            c = root.child(tag)
            if c is not None and c.text:
                settings[tag] = c.text

    def _object_node(self, node: XmlNode, where: str, parts: Parts) -> None:
        if node.tag != "Object":
            self._add("object_model", f"Model name not found. Aborting object load. ({where}: "
                                      f"the root is <{node.tag}>, not <Object>)")
            return
        values = {}
        for tag, rule, words in (("Model", "object_model", "Model name"),
                                 ("ColorMap", "object_color_map", "Color map"),
                                 ("NormalMap", "object_normal_map", "Normal map"),
                                 ("ShaderName", "object_shader", "Shader name")):
            c = node.child(tag)
            if c is None:
                self._add(rule, f"{words} not found. Aborting object load. ({where}: no "
                                f"<{tag}>)")
                return
            values[tag] = c.text
        parts.paths.update(model=values["Model"], color_map=values["ColorMap"],
                           normal_map=values["NormalMap"])
        settings = parts.settings if parts.settings is not None else {}
        settings["shader"] = values["ShaderName"]
        flags = node.child("flags")
        if flags is not None:
            for key in ("clamp_texture", "double_sided", "transparent"):
                if flags.attrib.get(key) == "true":
                    settings[key] = True
        data = self._file(values["Model"], "model", f"{where} <Model>")
        if data is not None:
            parts.model = self._parse("obj", data, values["Model"])
            parts.model_text = data
        self._image(values["ColorMap"], f"{where} <ColorMap>", parts, keep=True)
        self._image(values["NormalMap"], f"{where} <NormalMap>", parts, keep=False)

    def _image(self, rel: str, where: str, parts: Parts, keep: bool) -> None:
        """An image as ``FindImagePath`` finds it: the file, else ``<file>_converted.dds``."""
        for cand in (rel, rel + "_converted.dds"):
            there = self._exists(cand, where)
            if there is None:
                return
            if not there:
                continue
            if keep and self.load:
                data = self._file(cand, "texture", where)
                if data is not None:
                    parts.color_map = (data, cand)
            return
        self._add("missing_file", f'Unable to find "{rel}" in any of the requested locations. '
                                  f"(texture, named by {where}; data roots: "
                                  f"{self.roots.describe()})")

    def _rig(self, rel: str, where: str, parts: Parts) -> None:
        parts.paths["rig"] = rel
        node, ok = self._xml(rel, "rig XML", where)
        if not ok:
            return
        if node is None or node.tag != "rig":
            got = f"its root is <{node.tag}>" if node is not None else "it has no element"
            self._add("rig_root", f"Missing root Rig node in xml file. ({rel}: {got}; the "
                                  "skeleton value under <appearance> must name an XML file "
                                  "with a <rig> element)")
            return
        self._rig_node(node, rel, parts, None)

    def _rig_node(self, node: XmlNode, where: str, parts: Parts, seen: list[str] | None) -> None:
        bone = node.attrib.get("bone_path")
        there = None if bone is None else self._exists(bone, f"{where} bone_path")
        if not there:
            if there is False or bone is None:
                self._add("bone_path", "Could not find bone_path file from attribute. ("
                          + (f"{where}: no bone_path attribute" if bone is None else
                             f'{where}: "{bone}" is in no data root: {self.roots.describe()}')
                          + ")")
            return
        assert bone is not None
        parts.paths["bone_path"] = bone
        data = self._file(bone, "skeleton", f"{where} bone_path")
        skel = self._parse("phxbn", data, bone) if data is not None else None
        model_rel = node.attrib.get("model_path")
        rig_model = None
        if model_rel is None:
            self._add("model_path", f"{where}: the rig has no model_path attribute")
        else:
            parts.paths["model_path"] = model_rel
            mdata = self._file(model_rel, "model", f"{where} model_path")
            rig_model = self._parse("obj", mdata, model_rel) if mdata is not None else None
            if parts.model is None and parts.kind != "character":
                parts.model = rig_model
        if skel is None:
            return
        parts.skeleton = skel
        mass = node.attrib.get("mass_path")
        if mass is not None:
            parts.paths["mass_path"] = mass
            masses = self._masses(mass, f"{where} mass_path", [where, *(seen or [])])
            if masses is not None and skel.bone_masses is not None:
                n = min(len(masses), len(skel.bone_masses))
                new = np.array(skel.bone_masses, copy=True)
                new[:n] = masses[:n]
                skel.bone_masses = new
        self._skeleton_rules(skel, bone)
        if rig_model is not None:
            self._vertex_count(skel, rig_model, bone, model_rel or "")

    def _masses(self, rel: str, where: str, seen: list[str]) -> np.ndarray | None:
        if rel in seen or len(seen) > MAX_MASS_DEPTH:
            self._add("bone_path", f"{where}: mass_path rigs nested too deep or in a circle")
            return None
        node, ok = self._xml(rel, "mass rig XML", where)
        if not ok or node is None:
            return None
        sub = Parts("rig", {})
        self._rig_node(node, rel, sub, seen)
        if sub.skeleton is None or sub.skeleton.bone_masses is None:
            return None
        return np.asarray(sub.skeleton.bone_masses)

    def _skeleton_rules(self, skel: PhxbnFile, bone: str) -> None:
        bad = symmetry_problems(skel)
        if bad:
            p = np.asarray(skel.points, dtype=np.float64)
            e = np.asarray(skel.bone_ends, dtype=np.int64)
            where = ", ".join(f"bone {i} at {_fmt(p[e[i, 0]])}, {_fmt(p[e[i, 1]])}"
                              for i in bad[:8])
            more = f" and {len(bad) - 8} more" if len(bad) > 8 else ""
            self._add("symmetry", f"{NOT_SYMMETRICAL} Asymmetrical bones: {where}{more} ({bone})")

    def _vertex_count(self, skel: PhxbnFile, model: ObjMesh, bone: str, model_rel: str) -> None:
        ctl = skel.control
        if ctl is None:
            return
        stored = ctl.num_vertices if ctl.num_vertices is not None else len(ctl.weights)
        corners = len(model.corners)
        said = vertex_count_problem(skel, corners)
        if said is not None:
            self._add("vertex_count", f"{said} ({bone} has {stored} vertices, "
                                      f"{model_rel} {corners} triangle corners)")

    def check_shown_model(self, parts: Parts) -> None:
        """The object's ``<Model>`` is what the skeleton's weights skin."""
        if parts.kind == "character" and parts.skeleton is not None and parts.model is not None \
                and parts.paths.get("model") != parts.paths.get("model_path"):
            self._vertex_count(parts.skeleton, parts.model, parts.paths.get("bone_path", ""),
                               parts.paths.get("model", ""))

    # -- morphs ------------------------------------------------------------------------------
    def _morphs(self, root: XmlNode, app: XmlNode | None, where: str, parts: Parts) -> None:
        """``<morphs>`` children not marked ``default="true"``: ``num_steps`` files each
        (``GetMorphPath``: the model's path without ``.obj``, ``_<label>[step].obj``); the
        ``<appearance morph>`` file is applied in full (a target of weight 1)."""
        model = parts.paths.get("model")
        if model is None or parts.model is None:
            return
        wanted: list[tuple[str, str]] = []
        node = root.child("morphs")
        for m in node.children if node is not None else []:
            if m.attrib.get("default") == "true":
                continue
            try:
                steps = int(m.attrib.get("num_steps", "1"))
            except ValueError:
                steps = 1
            names = [m.tag] if steps == 1 else [f"{m.tag}{j}" for j in range(max(0, min(steps, 64)))]
            wanted += [(n, model[:-4] + "_" + n + ".obj") for n in names]
        if app is not None and "morph" in app.attrib:
            wanted.append(("permanent", app.attrib["morph"]))
        found: list[tuple[str, ObjMesh, str]] = []
        for name, rel in wanted:
            there = self._exists(rel, f"{where} <morphs>")
            if not there:
                if there is False:
                    self._add("morph", f'{where}: the morph "{name}" has no file {rel}', "warning")
                continue
            data = self._file(rel, "morph", f"{where} <morphs>")
            mesh = self._parse("obj", data, rel) if data is not None else None
            if mesh is None:
                continue
            if len(mesh.corners) != len(parts.model.corners):
                self._add("morph", f"{rel}: {len(mesh.corners)} triangle corners, the model "
                                   f"{model} {len(parts.model.corners)}: left out", "warning")
                continue
            if len(mesh.positions) != len(parts.model.positions) or \
                    not np.array_equal(mesh.corners[:, 0], parts.model.corners[:, 0]):
                # the engine takes a morph vertex for vertex: a model whose vertices were
                # re-ordered or re-split (an edited mesh) no longer matches the morphs made
                # for it, though the corner counts agree
                self._add("morph", f"{rel}: its vertices are not the model's vertex for vertex "
                                   f"({len(mesh.positions)} v lines, the model {model} "
                                   f"{len(parts.model.positions)}, or faces that use others): "
                                   "the morph no longer matches its base", "warning")
            found.append((name, mesh, rel))
        parts.morphs = found

    # -- animations --------------------------------------------------------------------------
    def _animations(self, node: XmlNode, where: str, parts: Parts) -> None:
        found: dict[str, tuple[str, AnmFile, str, list[str]]] = {}
        for role, rel in node.attrib.items():
            if self.roles is not None and role not in self.roles:
                continue
            for path, label in self._anim_files(rel, f"{where} <animations {role}>", role, 0,
                                                []):
                key = path.lower()
                if key in found:
                    found[key][3].append(role)
                    continue
                data = self._file(path, "animation", f"{where} <animations {role}>")
                anm = self._parse("anm", data, path) if data is not None else None
                if anm is not None:
                    found[key] = (label, anm, path, [role])
        parts.animations = list(found.values())

    def _anim_files(self, rel: str, where: str, label: str, depth: int,
                    seen: list[str]) -> list[tuple[str, str]]:
        ext = rel.rsplit(".", 1)[-1].lower() if "." in rel else ""
        if ext == "anm":
            return [(rel, label)]
        if ext != "xml":
            self._add("animation", f"{where}: {rel!r} is neither an .anm nor a synced-group "
                                   ".xml (the engine loads nothing)", "warning")
            return []
        if depth >= MAX_GROUP_DEPTH or rel.lower() in seen:
            self._add("animation", f"{where}: synced animation groups nested more than "
                                   f"{MAX_GROUP_DEPTH} deep or in a circle at {rel}")
            return []
        node, _ = self._xml(rel, "synced animation group", where)
        if node is None:
            return []
        group = node.child("Animations")
        out: list[tuple[str, str]] = []
        for i, a in enumerate(group.children if group is not None else []):
            path = a.attrib.get("path")
            if path is None:
                self._add("animation", f"{rel} line {a.line}: <{a.tag}> has no path attribute "
                                       "(the engine reads a null string: a crash)")
                continue
            stem = path.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0] or str(i)
            out += self._anim_files(path, f"{rel} line {a.line}", f"{label}/{stem}",
                                    depth + 1, [*seen, rel.lower()])
        return out
