"""Overgrowth character, rig and object XML -> one Scene; registers the ``overgrowth-xml``
format (descriptors in :mod:`.ogxml`, the chain and its rules in :mod:`.ogchain`).

* **character**: the skeleton of the rig's ``bone_path`` (bone masses from ``mass_path``)
  skinning the object's ``<Model>`` (as :mod:`.scene` converts a ``.phxbn`` + ``.obj``), the
  ``<ColorMap>`` embedded as the base colour texture, and every ``.anm`` the ``<animations>``
  element names (synced-group ``.xml`` files followed to their ``.anm`` files). An animation is
  named after its role (``idle``), a group member after the role and its file
  (``movement/r_run``); one file used by several roles is converted once, its roles in the
  animation's extras. ``roles`` (``--set roles=idle,movement``) keeps some roles only.
  ``<morphs>`` (and the permanent ``<appearance morph>``, at weight 1) become morph targets.
* **rig**: the skeleton skinning its ``model_path`` OBJ (no texture).
* **object**: the ``<Model>`` as a static mesh with its colour map.

The normal map is not a glTF ``normalTexture``: Overgrowth's character and object normal maps
are object-space, glTF's tangent-space; its engine path is kept in the material's extras
(``normal_map``) with the shader name. Everything the descriptors say (paths, scales, fur and
morph models, team, channels) goes to the scene's ``extras["overgrowth"]``.

A rule the engine enforces (see :mod:`.ogchain`) that fails makes ``to_scene`` raise a
FormatError with the engine's message; ``strict=False`` turns them into LossWarnings and goes on
when a skeleton and a model were found. ``data_path``: more game or mod folders to resolve
``Data/…`` paths in (after the ones found around the file).
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import FormatError, LossWarning
from ...findings import Finding
from ...scene import Material, MorphTarget, Scene, Texture, TextureRef
from ...textures import gltf_image
from . import ogxml
from .obj import ObjFile
from .ogchain import Chain, Parts
from .ogxml import OgXmlFile
from .scene import obj_to_scene, phxbn_to_scene

__all__ = ["ogxml_to_scene", "check", "info"]


def _list(value: Any, sep: str = ",") -> list[str]:
    """A list option given as a list, or as one string of items separated by ``sep``."""
    if value is None:
        return []
    if isinstance(value, Path):
        return [str(value)]
    if isinstance(value, str):
        return [p for p in value.split(sep) if p]
    return [str(v) for v in value]


def _stem(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]


def check(doc: OgXmlFile) -> list[Finding]:
    """The engine's rules along the descriptor's chain (files exist, parse, agree)."""
    chain = Chain(doc, load=False)
    parts = chain.resolve()
    chain.check_shown_model(parts)
    return chain.findings


def info(doc: OgXmlFile) -> dict[str, Any]:
    out = ogxml.info(doc)
    chain = Chain(doc, load=False)
    parts = chain.resolve()
    out["data_roots"] = len(chain.roots.roots)
    if parts.animations is not None:
        out["animation_files"] = len(parts.animations)
    out["problems"] = len(chain.findings)
    return out


def _refuse(doc: OgXmlFile, findings: list[Finding], strict: bool) -> None:
    errors = [f for f in findings if f.is_error]
    for f in findings:
        if not f.is_error or not strict:
            warnings.warn(f"{f.rule}: {f.message}", LossWarning, stacklevel=4)
    if errors and strict:
        first = errors[0]
        more = f" (and {len(errors) - 1} more: retromesh check lists them)" if len(errors) > 1 else ""
        raise FormatError(f"a {doc.kind} the engine loads (strict=false converts what it can)",
                          file=doc.path, path=first.rule, got=first.message + more)


def _material(scene: Scene, parts: Parts, name: str) -> int | None:
    settings = parts.settings or {}
    extras: dict[str, Any] = {k: parts.paths[k] for k in ("color_map", "normal_map")
                              if k in parts.paths}
    if "shader" in settings:
        extras["shader"] = settings["shader"]
    mat = Material(name=name, double_sided=bool(settings.get("double_sided")), extras=extras)
    if parts.color_map is not None:
        raw, rel = parts.color_map
        try:
            data, mime = gltf_image(raw)
        except ValueError as exc:
            warnings.warn(f"{rel}: {exc}; the material has no texture", LossWarning,
                          stacklevel=3)
        else:
            wrap = 33071 if settings.get("clamp_texture") else 10497
            tex = scene.add_texture(Texture(name=_stem(rel), image=data, mime_type=mime,
                                            wrap_s=wrap, wrap_t=wrap,
                                            extras={"overgrowth_path": rel}))
            mat.base_color_texture = TextureRef(tex)
    return scene.add_material(mat)


def _add_morphs(scene: Scene, parts: Parts) -> None:
    """Morph OBJs as morph targets: per triangle corner ``morph - model`` (as stored), taken to
    the merged vertices through the primitive's indices (one index per corner, in order)."""
    base = parts.model
    assert base is not None and parts.morphs
    mesh = scene.meshes[0]
    prim = mesh.primitives[0]
    if prim.indices is None or len(prim.indices) != len(base.corners):
        return
    idx = np.asarray(prim.indices, dtype=np.int64)
    bpos = base.positions[base.corners[:, 0]]
    names, weights = [], []
    for name, morph, rel in parts.morphs:
        delta_c = morph.positions[morph.corners[:, 0]] - bpos
        delta = np.zeros((len(prim.positions), 3))
        delta[idx] = delta_c
        if not np.all(np.isfinite(delta)):
            warnings.warn(f"{rel}: coordinates that are not finite: left out", LossWarning,
                          stacklevel=4)
            continue
        if np.abs(delta[idx] - delta_c).max(initial=0.0) > 1e-5:
            warnings.warn(f"{rel}: corners merged in the mesh move apart in this morph; the "
                          "target keeps one of them", LossWarning, stacklevel=4)
        prim.targets.append(MorphTarget(positions=delta.astype(np.float32), name=name))
        names.append(name)
        weights.append(1.0 if name == "permanent" else 0.0)
    if names:
        mesh.weights = weights
        mesh.extras["targetNames"] = names
        mesh.extras["overgrowth_morphs"] = {n: r for n, _, r in parts.morphs}


def _skinned(doc: OgXmlFile, parts: Parts, *, animations: Any, fps: float | None,
             root_motion: bool) -> Scene:
    if parts.skeleton is None or parts.model is None:
        missing = "skeleton" if parts.skeleton is None else "model"
        raise FormatError(f"a {missing} (see the warnings and `retromesh check`)", file=doc.path)
    anims: list[Any] = [{name: anm} for name, anm, _, _ in parts.animations or []]
    anims += list(animations) if isinstance(animations, (list, tuple)) else \
        _list(animations, os.pathsep)
    bone = parts.paths.get("bone_path", "skeleton")
    model = parts.model if parts.model_text is None else ObjFile.parsed(parts.model_text,
                                                                        parts.model)
    scene = phxbn_to_scene(parts.skeleton, source=Path(bone), mesh=model,
                           animations=anims, fps=fps, root_motion=root_motion)
    model_name = _stem(parts.paths.get("model") or parts.paths.get("model_path") or "mesh")
    for mesh in scene.meshes:
        mesh.name = model_name
    for node in scene.nodes:
        if node.name == "mesh_mesh":
            node.name = model_name
    roles = {name: (path, rs) for name, _, path, rs in parts.animations or []}
    for a in scene.animations:
        if a.name in roles:
            a.extras.update(overgrowth_path=roles[a.name][0], roles=roles[a.name][1])
    if parts.morphs:
        _add_morphs(scene, parts)
    if parts.kind == "character" or parts.color_map is not None:
        mi = _material(scene, parts, model_name)
        for mesh in scene.meshes:
            for prim in mesh.primitives:
                prim.material = mi
    return scene


def _static(doc: OgXmlFile, parts: Parts) -> Scene:
    if parts.model is None:
        raise FormatError("a model (see the warnings and `retromesh check`)", file=doc.path)
    scene = obj_to_scene(ObjFile(parts.model_text or b""),
                         source=Path(parts.paths.get("model", "model")))
    mi = _material(scene, parts, _stem(parts.paths.get("model", "model")))
    for mesh in scene.meshes:
        for prim in mesh.primitives:
            prim.material = mi
    return scene


def ogxml_to_scene(doc: OgXmlFile, *, source: Path | None = None, animations: Any = None,
                   roles: Any = None, data_path: Any = None, fps: float | None = None,
                   root_motion: bool = True, strict: bool = True) -> Scene:
    if source is not None and doc.path is None:
        doc.path = str(source)
    role_list = _list(roles) or None
    chain = Chain(doc, data_path=_list(data_path, os.pathsep), roles=role_list)
    parts = chain.resolve()
    chain.check_shown_model(parts)
    _refuse(doc, chain.findings, strict)
    if doc.kind == "object":
        scene = _static(doc, parts)
    else:
        scene = _skinned(doc, parts, animations=animations, fps=fps, root_motion=root_motion)
    name = Path(doc.path).stem if doc.path else doc.kind
    scene.name = name
    scene.extras["overgrowth"] = {"kind": doc.kind, **parts.paths,
                                  **{k: v for k, v in (parts.settings or {}).items()}}
    return scene
