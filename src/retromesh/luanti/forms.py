"""A registration's definition (as the mod's Lua left it) as the game uses it: the model, the
texture sets, the named clips, the scale.

Each API keeps these in its own form; what the engine and the API do with them is followed:

=============  ==========================================================================
API            looks / clips
=============  ==========================================================================
mobs_redo,     ``textures``: a list of sets (one picked per mob) or one set;
mcl_mobs       ``child_texture``: a list of sets, the first used; ``gotten_texture``: a set.
               ``animation``: flat keys ``<name>_start``/``_end``/``_speed``/``_loop``; speed
               from ``<name>_speed``, then ``speed_normal``, then 15; ``_loop = false`` plays
               once; numbered variants (``stand1``..``stand4``, ``punch2``) are clips of their
               own. ``rotate``: yaw offset in degrees.
player_api     ``register_model(name, def)``: the model is ``name``; ``textures``: one set;
               ``animations = {stand = {x = 0, y = 79}}`` at ``animation_speed`` (default 30,
               player_api's own), looping.
creatura       ``textures`` (and ``male_``/``female_``/``child_textures``): each entry is a look
               (a string is a one-texture set); ``animations = {walk = {range = {x, y},
               speed, loop}}``, or a list of such variants (one picked).
entity,        ``core.register_entity``: ``initial_properties`` over the deprecated top-level
mobkit         properties (the engine reads both, that order); ``textures``: one set;
               mobkit's ``animation`` has creatura's form (speed defaults to the engine's 15).
=============  ==========================================================================

``visual_size`` is ``{x, y, z}``; z defaults to x (``lua_api.md``; the engine reads a missing x
or y as 0). Frames are the Lua's: see :class:`~retromesh.luanti.model.Clip`.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .model import Clip, Look, Registration

__all__ = ["registrations", "clips_of", "looks_of", "properties", "visual_size", "ENGINE_SPEED"]

#: the engine's set_animation default frame speed; mobs_redo's default too
ENGINE_SPEED = 15.0
#: player_api's default animation_speed
PLAYER_API_SPEED = 30.0
FLAT_APIS = ("mobs_redo", "mcl_mobs")


def registrations(raw: Mapping[str, Any]) -> list[Registration]:
    """The :class:`Registration` records of one captured registration (the child's ``reg``
    line): one per model it names (creatura's ``meshes`` and ``child_mesh``, mobs_redo's
    ``gotten_mesh`` are models of their own), none when it names no model (a sprite, a cube)."""
    api = str(raw.get("api", ""))
    d = raw.get("def")
    if not isinstance(d, dict):
        return []
    props = properties(d)
    if api != "player_api" and props.get("visual") not in (None, "mesh"):
        return []
    name, mod = str(raw.get("name", "")), str(raw.get("mod", ""))
    source = str(raw.get("source", ""))
    if source.startswith(mod + "/"):
        source = source[len(mod) + 1:]
    base = Registration(name=name, api=api, mod=mod, model="", clips=clips_of(api, d),
                        visual_size=visual_size(props.get("visual_size")),
                        rotate=_number(d.get("rotate"), 0.0) if api in FLAT_APIS else 0.0,
                        source=source)
    looks = looks_of(api, name, props)
    out = []
    for model, model_looks in _models(api, raw, props, looks):
        if isinstance(model, str) and model:
            out.append(replace(base, model=model, looks=model_looks))
    return out


def _models(api: str, raw: Mapping[str, Any], props: Mapping[str, Any],
            looks: tuple[Look, ...]) -> list[tuple[Any, tuple[Look, ...]]]:
    """(model, its looks) for each model a definition names."""
    name = str(raw.get("name", ""))
    if api == "player_api":
        return [(raw.get("model"), looks)]
    meshes = props.get("meshes") if api == "creatura" else None
    if isinstance(meshes, list) and meshes:
        per_mesh = props.get("mesh_textures")
        out = []
        for i, mesh in enumerate(meshes):
            own = per_mesh[i] if isinstance(per_mesh, list) and i < len(per_mesh) else None
            out.append((mesh, tuple(_named(name, _entry_list(own))) if own is not None else looks))
    else:
        out = [(props.get("mesh"), looks)]
    if api == "creatura" and props.get("child_mesh"):
        child = tuple(l for l in looks if l.name.startswith(f"{name}:child"))
        out.append((props.get("child_mesh"), child))
    if api in FLAT_APIS and props.get("gotten_mesh"):
        gotten = tuple(l for l in looks if l.name.startswith(f"{name}:gotten"))
        out.append((props.get("gotten_mesh"), gotten))
    return out


def properties(d: Mapping[str, Any]) -> dict[str, Any]:
    """An entity's object properties: ``initial_properties`` over the top-level ones."""
    props = dict(d)
    inner = d.get("initial_properties")
    if isinstance(inner, dict):
        props.update(inner)
    return props


def visual_size(v: Any) -> tuple[float, float, float]:
    if not isinstance(v, dict):
        return (1.0, 1.0, 1.0)
    x = _number(v.get("x"), 0.0)
    y = _number(v.get("y"), 0.0)
    return (x, y, _number(v.get("z"), x))


# --- looks ------------------------------------------------------------------------------

def _texture_set(v: Any) -> tuple[str, ...] | None:
    """One set: a list of texture strings (anything else in it leaves that buffer alone)."""
    if isinstance(v, str):
        return (v,)
    if isinstance(v, list) and v and not any(isinstance(x, list) for x in v):
        return tuple(x if isinstance(x, str) else "" for x in v)
    return None


def _set_list(v: Any) -> list[tuple[str, ...]]:
    """A list of sets, or one set (mobs_redo accepts both)."""
    if isinstance(v, list) and v and all(isinstance(x, list) for x in v):
        return [s for s in (_texture_set(x) for x in v) if s is not None]
    one = _texture_set(v)
    return [one] if one is not None else []


def _entry_list(v: Any) -> list[tuple[str, ...]]:
    """creatura's: each entry a look (a string or a set)."""
    if isinstance(v, str):
        return [(v,)]
    if not isinstance(v, list):
        return []
    return [s for s in (_texture_set(x) for x in v) if s is not None]


def _named(base: str, sets: list[tuple[str, ...]]) -> list[Look]:
    return [Look(base if i == 0 else f"{base}#{i + 1}", s) for i, s in enumerate(sets)]


def looks_of(api: str, name: str, props: Mapping[str, Any]) -> tuple[Look, ...]:
    """The registration's texture sets, the default first (named as :class:`Look` says)."""
    looks: list[Look] = []
    if api in FLAT_APIS:
        looks += _named(name, _set_list(props.get("textures")))
        child = _set_list(props.get("child_texture"))[:1]
        looks += _named(f"{name}:child", child)
        gotten = _set_list(props.get("gotten_texture"))[:1]
        looks += _named(f"{name}:gotten", gotten)
    elif api == "creatura":
        looks += _named(name, _entry_list(props.get("textures")))
        for group in ("male", "female", "child"):
            looks += _named(f"{name}:{group}", _entry_list(props.get(f"{group}_textures")))
    else:
        looks += _named(name, _set_list(props.get("textures"))[:1])
    return tuple(looks)


# --- clips ------------------------------------------------------------------------------

def _number(v: Any, default: float) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return default
    return float(v)


def _frame(v: Any) -> float | None:
    n = _number(v, math.nan)
    return None if math.isnan(n) else n


def clips_of(api: str, d: Mapping[str, Any]) -> tuple[Clip, ...]:
    """The named clips of a definition's animation table, ordered by start frame."""
    clips: list[Clip] = []
    for key in ("animation", "animations"):
        table = d.get(key)
        if isinstance(table, dict):
            clips += _flat_clips(table)
            default = (_number(d.get("animation_speed"), PLAYER_API_SPEED) if api == "player_api"
                       else ENGINE_SPEED)
            clips += _nested_clips(table, default)
    unique: dict[str, Clip] = {}
    for c in clips:
        unique.setdefault(c.name, c)
    return tuple(sorted(unique.values(), key=lambda c: (c.start, c.name)))


def _flat_clips(table: Mapping[str, Any]) -> list[Clip]:
    """mobs_redo / mcl_mobs: ``<name>_start``, ``<name>_end``, ``_speed``, ``_loop``."""
    out = []
    normal = _number(table.get("speed_normal"), ENGINE_SPEED)
    for key in table:
        if not key.endswith("_start"):
            continue
        name = key[:-len("_start")]
        start, end = _frame(table[key]), _frame(table.get(f"{name}_end"))
        if not name or start is None or end is None:
            continue
        speed = _number(table.get(f"{name}_speed"), normal)
        if speed <= 0:
            continue        # a frozen pose: no length to cut
        out.append(Clip(name, start, end, speed, table.get(f"{name}_loop") is not False))
    return out


def _range_clip(name: str, v: Mapping[str, Any], default_speed: float) -> Clip | None:
    rng = v.get("range")
    if isinstance(rng, dict):
        start, end = _frame(rng.get("x")), _frame(rng.get("y"))
    elif isinstance(rng, list) and len(rng) == 2:
        start, end = _frame(rng[0]), _frame(rng[1])
    else:
        start, end = _frame(v.get("x")), _frame(v.get("y"))
    if start is None or end is None:
        return None
    speed = _number(v.get("speed", v.get("frame_speed")), default_speed)
    if speed <= 0:
        return None
    return Clip(name, start, end, speed, v.get("loop") is not False)


def _nested_clips(table: Mapping[str, Any], default_speed: float) -> list[Clip]:
    """player_api ``{x, y}``; creatura / mobkit ``{range = {x, y}, speed, loop}``, or a list of
    such variants (the first keeps the name, the others ``<name>2``, ``<name>3``...)."""
    out = []
    for name, v in table.items():
        variants = v if isinstance(v, list) else [v]
        for i, one in enumerate(variants):
            if isinstance(one, dict):
                clip = _range_clip(name if i == 0 else f"{name}{i + 1}", one, default_speed)
                if clip is not None:
                    out.append(clip)
    return out
