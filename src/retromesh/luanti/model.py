"""What a mod's registration code says about a model: the records the rest of retromesh uses.

These are plain data, made by :mod:`retromesh.luanti.mods` from what the mod's Lua registered,
and read by the scene mapping (textures per mesh buffer, variants, clips), ``info``, ``check``,
the gallery and the Blender extension. Frame numbers are the Lua's (the engine's): Lua frame
``f`` is B3D key frame ``f + 1`` (Irrlicht subtracts one on load).
"""
from __future__ import annotations

from pathlib import Path

from ..records import record

__all__ = ["Clip", "Look", "Registration", "LuaProblem", "ModWorld"]


@record(frozen=True)
class Clip:
    """One named piece of the model's timeline, as the registration's animation table says.

    ``start``/``end`` are Lua frames (may be fractional); ``speed`` frames per second;
    a clip lasts ``(end - start) / speed`` seconds.
    """
    name: str
    start: float
    end: float
    speed: float
    loop: bool = True


@record(frozen=True)
class Look:
    """One texture set: the texture string of each mesh buffer, in buffer order.

    A string may carry texture modifiers (``a.png^[multiply:#ff0000``, see
    :mod:`retromesh.luanti.texmod`); ``""`` leaves that buffer's texture as the model has it,
    and a list shorter than the buffers leaves the rest alone (as Luanti does).
    ``name`` names the variant: the registration's name for its first set,
    ``<registration>#<n>`` for its further sets (n from 2), ``<registration>:child`` and
    ``<registration>:gotten`` for ``child_texture`` and ``gotten_texture``; creatura's
    ``male_``/``female_``/``child_textures`` are ``<registration>:male`` (``:male#2``...),
    ``:female``, ``:child``.
    """
    name: str
    textures: tuple[str, ...]


@record(frozen=True)
class Registration:
    """One registration that names a model (a mob, an entity, a player model).

    ``api`` is the form it came through: ``"mobs_redo"``, ``"entity"`` (core/minetest
    ``register_entity``), ``"player_api"``, ``"mcl_mobs"``, ``"creatura"``, ``"mobkit"``...
    ``looks[0]`` is the registration's default look. ``visual_size`` is (x, y, z) as the engine
    applies it (z defaults to x); ``rotate`` is mobs_redo's yaw offset in degrees (0 elsewhere).
    ``source`` is ``"<file relative to the mod>:<line>"`` of the registering call when known.
    """
    name: str
    api: str
    mod: str
    model: str
    looks: tuple[Look, ...] = ()
    clips: tuple[Clip, ...] = ()
    visual_size: tuple[float, float, float] = (1.0, 1.0, 1.0)
    rotate: float = 0.0
    source: str = ""


@record(frozen=True)
class LuaProblem:
    """A mod's Lua that failed (error, time or memory limit, refused file access): what ran
    before it is kept. ``where`` is ``"<file>:<line>"`` when known."""
    mod: str
    where: str
    message: str


@record
class ModWorld:
    """Everything read from the mods under the folders the user named.

    ``media`` maps a global media name (``mobs_cow.png``) to its file, gathered as Luanti does
    (every mod's ``textures/``, ``models/``, ``media/``..., later mods winning), then
    ``--texture-path`` folders; ``registrations`` in load order; ``mods`` the names of the
    mods read, in load order.
    """
    registrations: list[Registration]
    problems: list[LuaProblem]
    media: dict[str, Path]
    mods: tuple[str, ...] = ()

    def for_model(self, model_name: str) -> list[Registration]:
        """The registrations naming ``model_name`` (a file name, compared without case), in
        load order: the first gives the default look."""
        key = model_name.lower()
        return [r for r in self.registrations if r.model.lower() == key]
