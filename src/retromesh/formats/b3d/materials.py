"""TEXS/BRUS <-> scene textures and materials, both directions.

To the scene: one :class:`Texture` per distinct file and wrap mode (none for an empty file name:
the layer stays in the brush record only), one :class:`Material` per
distinct brush (brushes that differ only by their index share one material). Each material
keeps, in ``extras["b3d_brush"]``, what glTF has no place for: the brush indices it stands
for, the unclamped colour (Blitz3D brushes may say 2.0), shininess, blend, fx, ``n_texs`` and
every texture layer with its TEXS index, flags, blend and transform. A second layer (a
lightmap on the second UV set, as Blitz3D and Irrlicht 1.8 draw it) is a texture of the scene
referred to only from these extras. TEXS entries no brush uses go to
``scene.extras["b3d_unused_texs"]``; the records of brushes no TRIS or MESH uses, to
``scene.extras["b3d_unused_brushes"]`` too (Blender's exporter leaves out unused materials).

Back to B3D: when a material carries ``b3d_brush`` and its base texture still names the same
file, its brushes and TEXS entries are written exactly as recorded (same indices); materials
without it (a glTF made elsewhere, or an edited texture) get brushes computed from the glTF
material as before.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import numpy as np

from ...scene import Material, Scene, Texture, TextureRef
from .axes import WRAP_CLAMP, WRAP_REPEAT
from .chunks import B3dFile, Brus, BrushEntry, Texs, TextureEntry

__all__ = ["materials_to_scene", "brushes_from_scene"]


# a brush colour and a texture's position/scale as the Scene types them (the file holds
# 4 and 2 floats)
RGBA = tuple[float, float, float, float]
UV = tuple[float, float]


def _texture_name(entry: TextureEntry) -> str:
    return entry.file.decode("utf-8", "replace").replace("\\", "/")


def _tex_record(tid: int, t: TextureEntry, scene_tex: int) -> dict[str, Any]:
    return {"texs": tid, "file": t.file.decode("latin-1"), "flags": int(t.flags),
            "blend": int(t.blend), "position": [float(x) for x in t.position],
            "scale": [float(x) for x in t.scale], "rotation": float(t.rotation),
            "texture": scene_tex}


def _entry_of(rec: dict[str, Any]) -> TextureEntry:
    pos, scale = [float(x) for x in rec["position"]], [float(x) for x in rec["scale"]]
    if len(pos) != 2 or len(scale) != 2:
        raise ValueError("a texture position and scale have 2 numbers")
    return TextureEntry(str(rec.get("file", "")).encode("latin-1"), _i32(rec["flags"]), _i32(rec["blend"]),
                        tuple(pos), tuple(scale), float(rec["rotation"]))


def materials_to_scene(doc: B3dFile, scene: Scene) -> dict[int, int]:
    """Scene textures and materials for TEXS/BRUS; returns brush index -> material index."""
    entries = doc.textures
    tex_of_key: dict[tuple, int] = {}
    tex_map: dict[int, int] = {}
    for i, t in enumerate(entries):
        name = _texture_name(t)
        if not name:        # no file (real mod models have them): no image to invent
            tex_map[i] = -1
            continue
        wrap = (WRAP_CLAMP if t.flags & 16 else WRAP_REPEAT,
                WRAP_CLAMP if t.flags & 32 else WRAP_REPEAT)
        key = (name, wrap)
        if key not in tex_of_key:
            tex_of_key[key] = scene.add_texture(Texture(name=Path(name).stem, uri=name,
                                                        wrap_s=wrap[0], wrap_t=wrap[1]))
        tex_map[i] = tex_of_key[key]
    used_texs: set[int] = set()
    mat_of_key: dict[tuple, int] = {}
    out: dict[int, int] = {}
    for bi, b in enumerate(doc.brushes):
        layers = [(tid, entries[tid]) if 0 <= tid < len(entries) else (tid, None)
                  for tid in b.texture_ids]
        bkey = (b.name, tuple(b.color), b.shininess, b.blend, b.fx, len(b.texture_ids),
               tuple((tid, (t.file, t.flags, t.blend, tuple(t.position), tuple(t.scale), t.rotation)
                      if t else None) for tid, t in layers))
        if bkey in mat_of_key:
            out[bi] = mat_of_key[bkey]
            scene.materials[out[bi]].extras["b3d_brush"]["ids"].append(bi)
            continue
        used_texs.update(tid for tid, t in layers if t is not None)
        out[bi] = mat_of_key[bkey] = scene.add_material(_material(b, bi, layers, tex_map))
    unused = [_tex_record(i, t, tex_map[i]) for i, t in enumerate(entries) if i not in used_texs]
    if unused:
        scene.extras["b3d_unused_texs"] = unused
    return out


def _material(b: BrushEntry, bi: int, layers: list, tex_map: dict[int, int]) -> Material:
    mat = Material(name=b.name.decode("utf-8", "replace"),
                   base_color=cast(RGBA, tuple(min(max(float(c), 0.0), 1.0) for c in b.color)),
                   unlit=bool(b.fx & 1), double_sided=bool(b.fx & 16))
    mat.extras["b3d_brush"] = {
        "ids": [bi], "name": b.name.decode("latin-1"), "color": [float(c) for c in b.color],
        "shininess": float(b.shininess), "blend": int(b.blend), "fx": int(b.fx),
        "textures": [_tex_record(tid, t, tex_map[tid]) if t is not None else {"texs": tid}
                     for tid, t in layers]}
    if b.color[3] < 1.0 or b.fx & 32:
        mat.alpha_mode = "BLEND"
    present = [(tid, t) for tid, t in layers if t is not None and tex_map[tid] >= 0]
    if present:
        # Irrlicht puts a texture on the second UV set (flags & 0x10000, a lightmap) into layer
        # 2 and the next one into layer 1; glTF's base colour is that layer 1
        base = next(((tid, t) for tid, t in present if not t.flags & 0x10000), present[0])
        tid, t = base
        mat.base_color_texture = TextureRef(
            texture=tex_map[tid], texcoord=1 if t.flags & 0x10000 else 0,
            offset=cast(UV, tuple(float(x) for x in t.position)),
            scale=cast(UV, tuple(float(x) for x in t.scale)),
            rotation=float(t.rotation))
        if t.flags & 4 and mat.alpha_mode == "OPAQUE":
            mat.alpha_mode = "MASK"
        elif t.flags & 2:
            mat.alpha_mode = "BLEND"
    return mat


# -- back to B3D ---------------------------------------------------------------------------

def _image_file_name(t: Texture, index: int) -> str:
    """A file name for an image embedded in the scene (B3D refers to textures by name)."""
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in (t.name or "")) or f"texture{index}"
    ext = ".jpg" if t.mime_type == "image/jpeg" else ".png"
    return stem if stem.lower().endswith(ext) else stem + ext


def _texture_file(scene: Scene, index: int, images: dict[str, bytes]) -> str:
    t = scene.textures[index]
    if t.uri is None and t.image is not None:
        name = _image_file_name(t, index)
        images[name] = t.image
        return name
    return t.uri or t.name or f"texture{index}.png"


_I32 = 2**31


def _i32(x) -> int:
    v = int(x)
    if not -_I32 <= v < _I32:
        raise ValueError(f"{v} is not a 32-bit integer")
    return v


def _recorded(m: Material, scene: Scene, check_texture: bool = True) -> dict[str, Any] | None:
    """The material's ``b3d_brush`` record, checked and typed, when the material still matches
    it (same base texture file); None otherwise."""
    rec = m.extras.get("b3d_brush")
    if not isinstance(rec, dict):
        return None
    try:
        # (an empty file name is dropped from glTF extras: such a layer still has its flags)
        layers = [(_i32(x["texs"]), _entry_of(x) if "file" in x or "flags" in x else None,
                   int(x.get("texture", -1))) for x in rec.get("textures", [])]
        out: dict[str, Any] = {"ids": [_i32(i) for i in rec["ids"]], "layers": layers,
               "name": str(rec.get("name", m.name)).encode("latin-1", "replace"),
               "color": tuple(float(c) for c in rec.get("color", m.base_color)),
               "shininess": float(rec.get("shininess", 0.0)),
               "blend": _i32(rec.get("blend", 1)), "fx": _i32(rec.get("fx", 0))}
        if not out["ids"] or len(out["color"]) != 4 or len(layers) > 8:
            return None
        ref = m.base_color_texture
        files = {_texture_name(e) for _, e, _ in layers if e and e.file}
        if not check_texture:
            return out
        if ref is None:
            return out if not files else None
        t = scene.textures[ref.texture]
        if (t.uri or "") not in files and not (t.uri is None and t.image is not None):
            return None
        return out
    except (KeyError, TypeError, ValueError, IndexError, OverflowError, AttributeError):
        return None


def brushes_from_scene(scene: Scene, images: dict[str, bytes]
                       ) -> tuple[Texs, Brus, dict[int, list[int]], dict[int, int]]:
    """TEXS and BRUS for the scene's materials; returns them, material -> its brush indices (the
    first is the one to use when a primitive names none) and recorded brush index -> written
    brush index. Embedded images to write go to ``images``."""
    records = {mi: _recorded(m, scene) for mi, m in enumerate(scene.materials)}
    texs_slots: dict[int, TextureEntry] = {}
    brush_slots: dict[int, BrushEntry] = {}
    n_texs = 0
    for mi, rec in records.items():
        if rec is None:
            continue
        m = scene.materials[mi]
        color = rec["color"]
        if not np.allclose(np.clip(color, 0, 1), m.base_color, atol=1e-6):
            color = tuple(float(c) for c in m.base_color)     # edited: the glTF colour wins
        for tid, entry, _ in rec["layers"]:
            if entry is not None:
                texs_slots.setdefault(tid, entry)
        n_texs = max(n_texs, len(rec["layers"]))
        for bi in rec["ids"]:
            brush_slots.setdefault(bi, BrushEntry(rec["name"], color, rec["shininess"], rec["blend"],
                                                  rec["fx"], [tid for tid, _, _ in rec["layers"]]))
    spare = scene.extras.get("b3d_unused_brushes")
    for x in spare if isinstance(spare, list) else []:
        rec = _recorded(Material(extras={"b3d_brush": x}), scene, check_texture=False)
        if rec is None or any(bi in brush_slots for bi in rec["ids"]):
            continue
        for tid, entry, _ in rec["layers"]:
            if entry is not None:
                texs_slots.setdefault(tid, entry)
        n_texs = max(n_texs, len(rec["layers"]))
        for bi in rec["ids"]:
            brush_slots[bi] = BrushEntry(rec["name"], rec["color"], rec["shininess"], rec["blend"],
                                         rec["fx"], [tid for tid, _, _ in rec["layers"]])
    unused = scene.extras.get("b3d_unused_texs")
    for x in unused if isinstance(unused, list) else []:
        try:
            texs_slots.setdefault(_i32(x["texs"]), _entry_of(x))
        except (KeyError, TypeError, ValueError, OverflowError, AttributeError):
            pass
    texs = Texs([texs_slots[i] for i in sorted(texs_slots)])
    tex_ids = {old: new for new, old in enumerate(sorted(texs_slots))}
    brush_ids = {old: new for new, old in enumerate(sorted(brush_slots))}
    entries = [brush_slots[i] for i in sorted(brush_slots)]
    for e in entries:      # ids of no TEXS entry (dangling in the file) are kept as they were
        e.texture_ids = [tex_ids.get(t, t) for t in e.texture_ids]
    brush_of: dict[int, list[int]] = {}
    for mi, rec in records.items():
        if rec is not None:
            brush_of[mi] = [brush_ids[b] for b in rec["ids"]]
    tex_index: dict[tuple, int] = {}
    for mi, m in enumerate(scene.materials):
        if records[mi] is not None:
            continue
        tids = []
        ref = m.base_color_texture
        if ref is not None and 0 <= ref.texture < len(scene.textures):
            tids.append(_computed_texture(scene, m, ref, images, texs, tex_index))
        fx = (1 if m.unlit else 0) | (16 if m.double_sided else 0)
        entries.append(BrushEntry((m.name or f"material{mi}").encode("utf-8"),
                                  tuple(float(c) for c in m.base_color), 0.0, 1, fx, tids))
        brush_of[mi] = [len(entries) - 1]
    n_texs = max([n_texs] + [len(e.texture_ids) for e in entries])
    for e in entries:
        e.texture_ids = e.texture_ids + [-1] * (n_texs - len(e.texture_ids))
    for rec in (r for r in records.values() if r is not None):
        for _, entry, ti in rec["layers"]:
            if entry is not None and 0 <= ti < len(scene.textures):
                t = scene.textures[ti]
                if t.uri is None and t.image is not None:       # embedded: write it beside
                    name = entry.file.decode("latin-1").replace("\\", "/").rsplit("/", 1)[-1]
                    if _is_named(t, name):
                        images.setdefault(name, t.image)
    return texs, Brus(n_texs, entries), brush_of, brush_ids


def _is_named(t: Texture, file: str) -> bool:
    """Whether the embedded image ``t`` is still the texture file ``file`` a brush record names
    (the record keeps its texture's index; an editor that dropped a texture, such as Blender
    one whose file was never found, shifts the others into its place: the image there is
    another file's, and writing it under this name would make a file the model never had)."""
    if not t.name:
        return True
    own = t.name.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return own in (file.lower(), file.rsplit(".", 1)[0].lower())


def _computed_texture(scene: Scene, m: Material, ref: TextureRef, images: dict[str, bytes],
                      texs: Texs, tex_index: dict[tuple, int]) -> int:
    t = scene.textures[ref.texture]
    name = _texture_file(scene, ref.texture, images)
    flags = 1 | 8
    if m.alpha_mode == "BLEND":
        flags |= 2
    elif m.alpha_mode == "MASK":
        flags |= 4
    if t.wrap_s == WRAP_CLAMP:
        flags |= 16
    if t.wrap_t == WRAP_CLAMP:
        flags |= 32
    if ref.texcoord == 1:
        flags |= 0x10000
    key = (name, flags, tuple(ref.offset), tuple(ref.scale), ref.rotation)
    if key not in tex_index:
        tex_index[key] = len(texs.textures)
        texs.textures.append(TextureEntry(name.encode("utf-8"), flags, 2, tuple(ref.offset),
                                          tuple(ref.scale), ref.rotation))
    return tex_index[key]
