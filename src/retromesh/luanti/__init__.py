"""Luanti (Minetest) mods as the game shows their models.

A model file in a mod does not say how the game shows it: the mod's Lua does (the textures of
each mesh buffer, the named clips cut from the one B3D timeline, the scale). This package finds
the mod a model lies in, runs the mod's registration code in a fenced child process
(:mod:`.sandbox`), and keeps every registration that names a model as a
:class:`~retromesh.luanti.model.Registration` (:mod:`.model`; each API's form read by
:mod:`.forms`); :mod:`.mods` finds and orders the mods and gathers media as Luanti does;
:mod:`.texmod` resolves texture strings with modifiers into images. docs/luanti.md says how.
"""
from __future__ import annotations
