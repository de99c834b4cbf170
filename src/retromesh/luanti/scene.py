"""A model as its mod shows it: the registrations of :class:`~.model.ModWorld` put on a Scene.

One function, :func:`dress`, finds the mod a model lies in (:func:`retromesh.luanti.mods.world_for_model`)
and applies what its registrations say (:func:`apply`); ``load``/``convert`` (and so ``info``,
``check``, the gallery and the Blender import) call it with the ``mods=`` reading option.

Textures, as Luanti assigns them (``GenericCAO`` gives texture ``i`` of the object's
``textures`` to material/mesh buffer ``i``): a B3D has one mesh buffer per TRIS chunk in file
order (two TRIS sharing a brush still take two slots); a glTF buffer takes the texture whose
index its material's ``baseColorTexture`` names (``CGLTFMeshFileLoader::setTextureSlot``).
``""`` and a list shorter than the buffers leave those buffers as the model has them. The first
registration (load order) gives the default look; every other look (further texture sets,
other registrations of the model, ``child_texture``/``gotten_texture``) becomes a
``KHR_materials_variants`` variant named after its :class:`~.model.Look` (in
``extensionsUsed`` only: Luanti refuses any ``extensionsRequired``).

Clips: each registration's animation table becomes a named animation cut from the model's
timeline as the engine plays it: Lua frame ``f`` is B3D key frame ``f + 1`` (Irrlicht counts
from 0), a clip ``start..end`` at ``speed`` frames a second lasts ``(end - start) / speed``
seconds. For a glTF model the Lua's frames are the timeline's seconds. The whole timeline stays
the first animation (frames no clip covers are kept; the way back to B3D writes it).

``visual_size`` and mobs_redo's ``rotate`` are not baked into the geometry (Luanti applies them
to the model file as it is: a GLB put back in the mod would get them twice); they are recorded
in ``scene.extras["luanti"]`` and listed by ``info``.

:func:`undress` takes it all off again (the clip animations, the materials made for looks on
buffers the model gave none) so the way back to B3D writes the model's own bytes.
"""
from __future__ import annotations

import copy
import importlib
import io
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import LossWarning, MissingTextureWarning
from ..scene import Material, Scene, Texture, TextureRef
from .clipsback import fold_edited_clips
from .model import Look, ModWorld, Registration
from .timeline import cut_clip, lua_frame_times

__all__ = ["dress", "apply", "undress", "buffer_slots", "cut_clip", "summary", "MODEL_SUFFIXES",
           "lua_frame_times"]

#: the model files Luanti loads (``doc/lua_api.md``)
MODEL_SUFFIXES = (".b3d", ".glb", ".gltf", ".obj", ".x")
#: (rule, message) of what a mod's registrations get wrong (``check --luanti``)
Problem = tuple[str, str]
#: the key under ``scene.extras`` (the default glTF scene's extras: Blender keeps them)
KEY = "luanti"


def dress(scene: Scene, path: Path, *, lua: bool = True,
          texture_path: Iterable[str | Path] = (), within: str | Path | None = None,
          problems: list[Problem] | None = None) -> Scene:
    """``scene`` (read from ``path``) as the mod it lies in shows it; unchanged when the file
    is in no mod or no registration names it. Lua problems of the mod, textures not found and
    clips beyond the model's frames are warnings, also appended to ``problems`` (rule,
    message) when given; so are registrations naming a model no mod ships. ``within``: the
    folder the user named (every mod under it is read: media and APIs are global)."""
    if not lua or Path(path).suffix.lower() not in MODEL_SUFFIXES:
        return scene
    try:        # (by name: the mod reader is built beside this module, on its own branch)
        mods = importlib.import_module(".mods", __package__)
    except ImportError:     # (a build without the mod reader: the model as its file has it)
        return scene
    world = mods.world_for_model(Path(path), texture_path=[Path(p) for p in texture_path],
                                 within=Path(within) if within is not None else None)
    if world is None:
        return scene
    for p in world.problems:
        where = f" ({p.where})" if p.where else ""
        if not p.mod:           # (no mod ran: no lupa, no Python to run it in, a dead child)
            _note(problems, "luanti.lua", f"{Path(path).name}: {p.message}; the model is "
                  "shown as its file has it (the mod's textures and clips left out)")
            continue
        _note(problems, "luanti.lua", f"mod {p.mod}: its Lua failed{where}: {p.message}; the "
              "registrations made before it are kept")
    if problems is not None:
        media = {k.lower() for k in world.media}
        for r in world.registrations:
            if r.model and r.model.lower() not in media:
                problems.append(("luanti.missing_model", f"{r.name} ({r.source or r.mod}) "
                                 f"names model {r.model!r}, which no mod ships"))
    return apply(world, Path(path).name, scene, problems)


def _note(problems: list[Problem] | None, rule: str, message: str) -> None:
    if problems is not None:
        problems.append((rule, message))
    warnings.warn(LossWarning(message), stacklevel=3)


# -- textures ------------------------------------------------------------------------------

def buffer_slots(scene: Scene, gltf: bool = False) -> list[tuple[int, int, int]]:
    """(mesh, primitive, texture slot) of every mesh buffer, in Luanti's buffer order.

    B3D: a buffer per TRIS in file order (the scene's meshes and primitives are in that order),
    slot = buffer number. glTF: the slot is the glTF texture index of the material's base
    colour texture (the scene's textures are the file's), else the buffer number."""
    out: list[tuple[int, int, int]] = []
    for mi, mesh in enumerate(scene.meshes):
        for pi, p in enumerate(mesh.primitives):
            if p.mode != 4 or not len(p.positions):
                continue
            slot = len(out)
            if gltf and p.material is not None:
                ref = scene.materials[p.material].base_color_texture
                if ref is not None:
                    slot = ref.texture
            out.append((mi, pi, slot))
    return out


def _texture_image(text: str, world: ModWorld) -> tuple[tuple[bytes, str] | str, list[str]]:
    """((image bytes, MIME type) or why there is none, notes) of a texture string: a plain
    name is the media file as it is; one with modifiers is made by
    :func:`retromesh.luanti.texmod.resolve_texture` (its notes: modifiers not handled...)."""
    name = text.strip()
    if "^" not in name and "[" not in name:
        path = world.media.get(name)
        if path is None:
            return "not found in the mods' media", []
        data = Path(path).read_bytes()
        return (data, "image/jpeg" if data[:2] == b"\xff\xd8" else "image/png"), []
    try:        # (by name: the modifier module is built beside this one, on its own branch)
        texmod: Any = importlib.import_module(".texmod", __package__)
    except ImportError:
        return "texture modifiers are not handled in this build", []
    image, notes = texmod.resolve_texture(text, world.media)
    if image is None:
        return "; ".join(notes) or "nothing could be made of it", []
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return (buf.getvalue(), "image/png"), list(notes)


class _Looks:
    """Materials and textures made for texture strings (one per model material and string)."""

    def __init__(self, scene: Scene, world: ModWorld, label: str,
                 problems: list[Problem] | None) -> None:
        self.scene, self.world, self.label, self.problems = scene, world, label, problems
        self.textures: dict[str, int | None] = {}
        self.materials: dict[tuple[int | None, str], int] = {}

    def texture(self, text: str) -> int | None:
        if text not in self.textures:
            got, notes = _texture_image(text, self.world)
            for note in notes:
                _note(self.problems, "luanti.texture_modifier", f"{self.label}: texture "
                      f"{text[:80]!r}: {note}")
            if isinstance(got, str):
                what = got if got.startswith("texture ") else f"texture {text!r} of the mod: {got}"
                message = f"{self.label}: {what}; that buffer keeps the model's own texture"
                if self.problems is not None:
                    self.problems.append(("luanti.missing_texture", message))
                warnings.warn(MissingTextureWarning(message, text), stacklevel=4)
                self.textures[text] = None
            else:
                stem = Path(text.split("^", 1)[0]).stem or "texture"
                self.textures[text] = self.scene.add_texture(Texture(
                    name=stem if text == stem + ".png" else text, image=got[0],
                    mime_type=got[1], extras={"luanti_texture": text}))
        return self.textures[text]

    def material(self, original: int | None, text: str) -> int | None:
        """The material of a buffer whose model material is ``original`` showing ``text``
        (None: the texture is missing, the buffer keeps ``original``)."""
        key = (original, text)
        if key not in self.materials:
            tex = self.texture(text)
            if tex is None:
                return original
            base = self.scene.materials[original] if original is not None else Material()
            mat = copy.deepcopy(base)
            mat.name = f"{base.name or 'material'} {Path(text.split('^', 1)[0]).stem}".strip()
            old = base.base_color_texture
            mat.base_color_texture = TextureRef(texture=tex,
                                                texcoord=old.texcoord if old else 0)
            mat.extras["luanti_look"] = text
            self.materials[key] = self.scene.add_material(mat)
        return self.materials[key]


def _apply_looks(scene: Scene, looks: list[Look], gltf: bool, made: _Looks) -> None:
    """The first look on the buffers, the others as variants."""
    slots = buffer_slots(scene, gltf)
    original = {(mi, pi): scene.meshes[mi].primitives[pi].material for mi, pi, _ in slots}
    shown: list[dict[tuple[int, int], int | None]] = []
    for look in looks:
        per = {}
        for mi, pi, slot in slots:
            text = look.textures[slot] if 0 <= slot < len(look.textures) else ""
            per[(mi, pi)] = made.material(original[(mi, pi)], text) if text else \
                original[(mi, pi)]
        shown.append(per)
    if not shown:
        return
    for (mi, pi), m in shown[0].items():
        scene.meshes[mi].primitives[pi].material = m
    if len(looks) < 2:
        return
    first = len(scene.variants)
    scene.variants.extend(look.name for look in looks)
    for mi, pi, _ in slots:
        groups: dict[int, list[int]] = {}
        for v, per in enumerate(shown):
            m = per[(mi, pi)]
            if m is not None:
                groups.setdefault(m, []).append(first + v)
        prim = scene.meshes[mi].primitives[pi]
        if len(groups) > 1 or (groups and prim.material not in groups):
            prim.variants = sorted(groups.items(), key=lambda kv: kv[1][0])


# -- clips ---------------------------------------------------------------------------------

def _clips(scene: Scene, regs: list[Registration], gltf: bool, label: str,
           problems: list[Problem] | None) -> list[dict]:
    """The registrations' clips as animations after the timeline; their records."""
    if not scene.animations or not any(r.clips for r in regs):
        return []
    timeline = scene.animations[0]
    zero, per_frame = lua_frame_times(timeline, gltf)
    last = timeline.duration
    taken = {a.name for a in scene.animations}
    made: dict[tuple[float, float, float], str] = {}
    records = []
    for reg in regs:
        for clip in reg.clips:
            key = (clip.start, clip.end, clip.speed)
            if key in made:
                continue
            name = clip.name if clip.name not in taken else f"{clip.name} ({reg.name})"
            t0, t1 = zero + clip.start * per_frame, zero + clip.end * per_frame
            if t1 < t0:
                _note(problems, "luanti.clip_range", f"{label}: {reg.name} clip {clip.name!r} "
                      f"ends ({clip.end:g}) before it starts ({clip.start:g}); left out")
                continue
            if t1 > last + 1e-6:
                _note(problems, "luanti.clip_range", f"{label}: {reg.name} clip {clip.name!r} "
                      f"reaches Lua frame {clip.end:g}, beyond the model's last frame "
                      f"({(last - zero) / per_frame:g}); its end holds the last pose")
            speed = clip.speed if clip.speed > 0 else 15.0
            anim = cut_clip(timeline, t0, t1, 1.0 / (per_frame * speed), name)
            rec = {"name": name, "clip": clip.name, "registration": reg.name,
                   "start": clip.start, "end": clip.end, "speed": clip.speed, "loop": clip.loop}
            anim.extras["luanti_clip"] = rec
            scene.animations.append(anim)
            taken.add(name)
            made[key] = name
            records.append(rec)
    return records


# -- the whole ------------------------------------------------------------------------------

def _registration_record(reg: Registration) -> dict[str, Any]:
    return {"name": reg.name, "api": reg.api, "mod": reg.mod, "source": reg.source,
            "looks": [{"name": lk.name, "textures": list(lk.textures)} for lk in reg.looks],
            "clips": [{"name": c.name, "start": c.start, "end": c.end, "speed": c.speed,
                       "loop": c.loop} for c in reg.clips],
            "visual_size": list(reg.visual_size), "rotate": reg.rotate}


def apply(world: ModWorld, model_name: str, scene: Scene,
          problems: list[Problem] | None = None) -> Scene:
    """Put the registrations of ``world`` naming ``model_name`` on ``scene`` (in place; also
    returned): default look, variants, clips; a record in ``scene.extras["luanti"]``."""
    regs = world.for_model(model_name)
    if not regs:
        return scene
    gltf = Path(model_name).suffix.lower() in (".glb", ".gltf")
    label = model_name
    looks = [look for r in regs for look in r.looks]
    _apply_looks(scene, looks, gltf, _Looks(scene, world, label, problems))
    clips = _clips(scene, regs, gltf, label, problems)
    scene.extras[KEY] = {"registrations": [_registration_record(r) for r in regs],
                         "clips": [c["name"] for c in clips],
                         "timeline": scene.animations[0].name if scene.animations else None}
    return scene


def summary(scene: Scene) -> list[dict[str, Any]]:
    """The registrations recorded on a dressed scene (for ``info``): name, api, texture sets,
    clips with their seconds."""
    rec = scene.extras.get(KEY)
    regs = rec.get("registrations") if isinstance(rec, dict) else None
    out = []
    for r in regs if isinstance(regs, list) else []:
        out.append({
            "name": r.get("name"), "api": r.get("api"), "source": r.get("source"),
            "textures": [lk.get("textures") for lk in r.get("looks", [])],
            "clips": {c["name"]: round((c["end"] - c["start"]) / (c["speed"] or 15.0), 4)
                      for c in r.get("clips", [])},
            "visual_size": r.get("visual_size"), "rotate": r.get("rotate")})
    return out


def undress(scene: Scene) -> Scene:
    """``scene`` without what :func:`apply` added that the model file has no place for: the
    clip animations (an edited one first written back into the timeline by
    :func:`~.clipsback.fold_edited_clips`), and on buffers the model gave no material, the
    looks' materials. A shallow copy when there is anything to take off (the caller's scene is
    not changed)."""
    scene = fold_edited_clips(scene)     # (edited clips back into the timeline first)
    rec = scene.extras.get(KEY)
    clip_names = set(rec.get("clips") or []) if isinstance(rec, dict) else set()
    clips = [i for i, a in enumerate(scene.animations)
             if "luanti_clip" in a.extras or a.name in clip_names]
    bare = {i for i, m in enumerate(scene.materials)
            if "luanti_look" in m.extras and "b3d_brush" not in m.extras}
    if not clips and not bare and not scene.variants:
        return scene
    out = copy.copy(scene)
    out.animations = [a for i, a in enumerate(scene.animations) if i not in clips]
    out.variants = []
    out.meshes = []
    for mesh in scene.meshes:
        mesh = copy.copy(mesh)
        mesh.primitives = [copy.copy(p) for p in mesh.primitives]
        for p in mesh.primitives:
            p.variants = []
            if p.material in bare:
                p.material = None
        out.meshes.append(mesh)
    return out

