"""Reading mods as Luanti does (retromesh.luanti.mods / forms): registrations, looks, clips,
load order, media; on the corpus (mobs_animal, minetest_game's player_api and carts) and on
fixtures of each API's form."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import CORPUS

pytest.importorskip("lupa")

from retromesh.luanti.forms import clips_of, looks_of, registrations
from retromesh.luanti.mods import (
    ModSpec,
    find_mods,
    gather_media,
    load_order,
    mod_of,
    read_mods,
    world_for_model,
)

LUANTI = CORPUS / "luanti"
needs_corpus = pytest.mark.skipif(not (LUANTI / "mobs_animal").is_dir(), reason="no Luanti corpus")


@pytest.fixture(scope="module")
def animals():
    return read_mods([LUANTI / "mobs_animal"])


@needs_corpus
def test_mobs_animal_registers_its_ten_mobs_and_fifteen_sheep(animals) -> None:
    assert not animals.problems, animals.problems
    models = {r.model for r in animals.registrations}
    assert models == {f"mobs_{n}.b3d" for n in ("bee", "bunny", "chicken", "cow", "kitten",
                                                "panda", "penguin", "pumba", "rat", "sheep")}
    sheep = animals.for_model("mobs_sheep.b3d")
    assert len(sheep) == 15 and sheep[0].name == "mobs_animal:sheep_black"
    assert sheep[0].looks[0].textures == (
        "mobs_sheep_base.png^(mobs_sheep_wool.png^[multiply:#212121b0)",)
    assert sheep[0].looks[1].name == "mobs_animal:sheep_black:gotten"


@needs_corpus
def test_the_cow_looks_and_clips(animals) -> None:
    (cow,) = animals.for_model("MOBS_COW.B3D")
    assert cow.api == "mobs_redo" and cow.mod == "mobs_animal" and cow.source == "cow.lua:22"
    assert [(l.name, l.textures) for l in cow.looks] == [
        ("mobs_animal:cow", ("mobs_cow.png",)), ("mobs_animal:cow#2", ("mobs_cow2.png",))]
    lengths = {c.name: round((c.end - c.start) / c.speed, 3) for c in cow.clips}
    assert lengths == {"stand": 2.0, "walk": 1.45, "run": 0.5, "punch": 0.75, "die": 0.8,
                       "replace": 1.5}
    loops = {c.name: c.loop for c in cow.clips}
    assert loops["die"] is False and loops["replace"] is False and loops["walk"] is True


@needs_corpus
def test_chicken_variants_child_and_numbered_clips(animals) -> None:
    (chicken,) = animals.for_model("mobs_chicken.b3d")
    assert chicken.looks[0].textures == ("mobs_chicken.png",)
    assert [l.name for l in chicken.looks][-1] == "mobs_animal:chicken:child"
    stand1 = next(c for c in chicken.clips if c.name == "stand1")
    assert (stand1.start, stand1.end, stand1.speed) == (31, 70, 32)
    (kitten,) = animals.for_model("mobs_kitten.b3d")
    assert kitten.visual_size == (0.5, 0.5, 0.5)


@needs_corpus
def test_media_of_the_mod_and_the_missing_sheep_textures(animals) -> None:
    assert animals.media["mobs_cow.png"] == LUANTI / "mobs_animal" / "textures" / "mobs_cow.png"
    assert "mobs_cow.b3d" in animals.media
    assert "mobs_sheep_base.png" not in animals.media      # deliberately absent (NC licence)


@needs_corpus
def test_minetest_game_player_api_and_carts() -> None:
    world = read_mods([LUANTI / "minetest_game"])
    assert world.mods == ("player_api", "carts") and not world.problems
    (character,) = world.for_model("character.b3d")
    assert character.api == "player_api" and character.looks[0].textures == ("character.png",)
    stand = character.clips[0]
    assert (stand.name, stand.start, stand.end, stand.speed) == ("stand", 0, 79, 30)
    (cart,) = world.for_model("carts_cart.b3d")
    assert cart.api == "entity" and cart.looks[0].textures == ("carts_cart.png",)
    assert world.media["character.png"].parent.name == "models"


@needs_corpus
def test_world_for_model_reads_the_mod_it_lies_in() -> None:
    model = LUANTI / "mobs_animal" / "models" / "mobs_cow.b3d"
    assert mod_of(model) == (LUANTI / "mobs_animal").resolve()
    world = world_for_model(model)
    assert world is not None and world.for_model("mobs_cow.b3d")
    assert world_for_model(model, lua=False).registrations == []


def test_a_model_in_no_mod_has_no_world(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "x.b3d").write_bytes(b"")
    assert mod_of(tmp_path / "models" / "x.b3d") is None
    assert world_for_model(tmp_path / "models" / "x.b3d") is None


def _mod(root: Path, name: str, conf: str = "", lua: str = "") -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "mod.conf").write_text(f"name = {name}\n{conf}")
    (d / "init.lua").write_text(lua)
    return d


def test_load_order_follows_luanti(tmp_path: Path) -> None:
    mods = [ModSpec("b", tmp_path), ModSpec("a", tmp_path), ModSpec("c", tmp_path, ("a",)),
            ModSpec("d", tmp_path, (), ("c", "missing")), ModSpec("e", tmp_path, ("nope",)),
            ModSpec("p", tmp_path, in_modpack=True)]
    # satisfied mods are taken last-first (a stack), each releasing its dependants at once
    assert [m.name for m in load_order(mods)] == ["b", "a", "c", "d", "p", "e"]


def test_find_mods_in_modpacks_games_and_trees(tmp_path: Path) -> None:
    game = tmp_path / "games" / "g"
    (game / "mods").mkdir(parents=True)
    (game / "game.conf").write_text("title = G\n")
    _mod(game / "mods", "gmod")
    pack = game / "mods" / "pack"
    pack.mkdir()
    (pack / "modpack.conf").write_text("name = pack\n")
    _mod(pack, "inner", "depends = gmod\n")
    _mod(tmp_path / "mods", "loose")
    (tmp_path / "mods" / ".hidden").mkdir()
    games: list[Path] = []
    found = find_mods(tmp_path, games)
    assert sorted(m.name for m in found) == ["gmod", "inner", "loose"]
    assert games == [game]
    assert next(m for m in found if m.name == "inner").in_modpack
    assert [m.name for m in find_mods(pack)] == ["inner"]


def test_media_later_mods_win_and_links_out_are_skipped(tmp_path: Path) -> None:
    a = _mod(tmp_path, "a")
    b = _mod(tmp_path, "b", "depends = a\n")
    for mod in (a, b):
        (mod / "textures" / "sub").mkdir(parents=True)
        (mod / "textures" / "same.png").write_bytes(mod.name.encode())
    (a / "textures" / "sub" / "deep.png").write_bytes(b"")
    (a / "textures" / "_skipped").mkdir()
    (a / "textures" / "_skipped" / "no.png").write_bytes(b"")
    (b / "textures" / "out.png").symlink_to("/etc/hostname")
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "same.png").write_bytes(b"extra")
    (extra / "only_extra.png").write_bytes(b"")
    order = load_order(find_mods(tmp_path))
    media = gather_media(order, texture_path=[extra])
    assert media["same.png"] == b / "textures" / "same.png"
    assert "deep.png" in media and "no.png" not in media and "out.png" not in media
    assert media["only_extra.png"] == extra / "only_extra.png"


def test_the_apis_forms(tmp_path: Path) -> None:
    lua = """
player_api.register_model("p.b3d", {animation_speed = 20, textures = {"p.png", ""},
    animations = {stand = {x = 0, y = 40}, walk = {x = 41, y = 60}}})
mcl_mobs.register_mob("x:mcl", {visual = "mesh", mesh = "mcl.b3d", rotate = 270,
    textures = {{"mcl.png", "blank.png"}}, visual_size = {x = 3, y = 2},
    animation = {speed_normal = 25, walk_start = 0, walk_end = 40, run_start = 0, run_end = 40,
        run_speed = 50}})
mcl_mobs:register_mob("x:mcl2", {visual = "mesh", mesh = "mcl2.b3d", textures = {"one.png"}})
creatura.register_mob("x:crea", {mesh = "crea.b3d", textures = {"c1.png", "c2.png^c3.png"},
    child_textures = {"baby.png"},
    animations = {stand = {range = {x = 1, y = 59}, speed = 10, loop = true},
        die = {range = {x = 60, y = 80}, speed = 20, loop = false},
        idle = {{range = {x = 90, y = 100}, speed = 5}, {range = {x = 101, y = 120}, speed = 5}}}})
core.register_entity("x:kit", {initial_properties = {visual = "mesh", mesh = "kit.b3d",
    textures = {"k.png"}}, logic = function() end,
    animation = {walk = {range = {x = 1, y = 12}, speed = 25, loop = true},
        stand = {range = {x = 20, y = 30}}}})
core.register_entity("x:sprite", {visual = "sprite", textures = {"s.png"}})
"""
    world = read_mods([_mod(tmp_path, "x", "", lua)])
    assert not world.problems, world.problems
    by = {r.name: r for r in world.registrations}
    assert set(by) == {"p.b3d", "x:mcl", "x:mcl2", "x:crea", "x:kit"}
    p = by["p.b3d"]
    assert p.api == "player_api" and p.looks[0].textures == ("p.png", "")
    assert [(c.name, c.speed) for c in p.clips] == [("stand", 20), ("walk", 20)]
    mcl = by["x:mcl"]
    assert mcl.rotate == 270 and mcl.visual_size == (3, 2, 3)
    assert mcl.looks[0].textures == ("mcl.png", "blank.png")
    assert {c.name: c.speed for c in mcl.clips} == {"walk": 25, "run": 50}
    assert by["x:mcl2"].looks[0].textures == ("one.png",)
    crea = by["x:crea"]
    assert [(l.name, l.textures) for l in crea.looks] == [
        ("x:crea", ("c1.png",)), ("x:crea#2", ("c2.png^c3.png",)), ("x:crea:child", ("baby.png",))]
    assert [(c.name, c.start, c.end, c.speed, c.loop) for c in crea.clips] == [
        ("stand", 1, 59, 10, True), ("die", 60, 80, 20, False), ("idle", 90, 100, 5, True),
        ("idle2", 101, 120, 5, True)]
    kit = by["x:kit"]
    assert kit.api == "mobkit" and kit.looks[0].textures == ("k.png",)
    assert [(c.name, c.speed) for c in kit.clips] == [("walk", 25), ("stand", 15)]


def test_a_real_api_mod_in_the_run_is_captured_once(tmp_path: Path) -> None:
    # the API mod defines mobs itself; its register_mob calls register_entity: one record
    _mod(tmp_path, "mobs", "", """
mobs = {mod = "redo"}
function mobs:register_mob(name, def)
    core.register_entity(name, {initial_properties = {visual = "mesh", mesh = def.mesh}})
end
""")
    _mod(tmp_path, "zoo", "depends = mobs\n",
         'mobs:register_mob("zoo:cat", {visual = "mesh", mesh = "cat.b3d", textures = {"c.png"}})\n')
    world = read_mods([tmp_path])
    assert world.mods == ("mobs", "zoo")
    assert [(r.name, r.api, r.mod) for r in world.registrations] == [("zoo:cat", "mobs_redo", "zoo")]


def test_a_missing_hard_dependency_stands_in_as_no_ops(tmp_path: Path) -> None:
    lua = ('local s = default.node_sound_metal_defaults()\n'
           'core.register_entity("y:cart", {visual = "mesh", mesh = "cart.b3d", sounds = s})\n')
    world = read_mods([_mod(tmp_path, "y", "depends = default\n", lua)])
    assert not world.problems and [r.name for r in world.registrations] == ["y:cart"]


def test_clip_rules_without_lua() -> None:
    clips = clips_of("mobs_redo", {"animation": {
        "speed_normal": 10, "stand_start": 0, "stand_end": 20, "stand2_start": 21,
        "stand2_end": 30, "stand2_speed": 30, "die_start": 31, "die_end": 41, "die_loop": False,
        "die_rotate": True, "bad_start": "x", "bad_end": 3, "zero_start": 1, "zero_end": 2,
        "zero_speed": 0}})
    assert [(c.name, c.speed, c.loop) for c in clips] == [
        ("stand", 10, True), ("stand2", 30, True), ("die", 10, False)]
    assert clips_of("mobs_redo", {"animation": {"walk_start": 1, "walk_end": 9}})[0].speed == 15
    looks = looks_of("mobs_redo", "m", {"textures": ["a.png", {"not": "a string"}]})
    assert looks[0].textures == ("a.png", "")
    assert registrations({"api": "entity", "name": "n", "def": {"visual": "cube"}}) == []


def test_an_api_defined_twice_and_reached_early_is_captured(tmp_path: Path) -> None:
    # VoxeLibre's mcl_mobs: a compat wrapper read before the function exists, then the real one;
    # another mod touched the global first (`mcl_mobs = mcl_mobs or {}`)
    _mod(tmp_path, "early", "", "mcl_mobs = mcl_mobs or {}\nmcl_mobs.flag = true\n")
    _mod(tmp_path, "mcl_mobs", "depends = early\n", """
mcl_mobs = {}
local old = mcl_mobs.register_mob
function mcl_mobs.register_mob(self, name, def)
    if type(self) == "string" then def = name; name = self end
    return old(name, def)
end
function mcl_mobs.register_mob(name, def)
    core.register_entity(name, {initial_properties = {visual = "mesh", mesh = def.mesh}})
end
""")
    _mod(tmp_path, "mobs_mc", "depends = mcl_mobs\n", """
local def = {visual = "mesh", mesh = "cow.b3d", textures = {{"cow.png", "blank.png"}}}
mcl_mobs.register_mob("mobs_mc:cow", def)
local moo = table.copy(def)
moo.textures = {{"moo.png", "red.png"}, {"moo2.png", "brown.png"}}
mcl_mobs.register_mob("mobs_mc:mooshroom", moo)
""")
    world = read_mods([tmp_path])
    assert not world.problems, world.problems
    assert [(r.name, r.api) for r in world.registrations] == [
        ("mobs_mc:cow", "mcl_mobs"), ("mobs_mc:mooshroom", "mcl_mobs")]
    assert [l.textures for l in world.for_model("cow.b3d")[1].looks] == [
        ("moo.png", "red.png"), ("moo2.png", "brown.png")]


@needs_corpus
def test_the_sheep_textures_are_missing_with_a_warning_each(animals) -> None:
    from retromesh.luanti.texmod import TextureResolver

    resolver = TextureResolver(animals.media)
    image, warnings = resolver.resolve(animals.for_model("mobs_sheep.b3d")[0].looks[0].textures[0])
    assert image is None
    assert [w.split(": ", 1)[1] for w in warnings] == [
        "missing media 'mobs_sheep_base.png' (left out)", "missing media 'mobs_sheep_wool.png' (left out)"]
    image, warnings = resolver.resolve(animals.for_model("mobs_cow.b3d")[0].looks[1].textures[0])
    assert image is not None and image.size == (128, 128) and not warnings


def test_a_mod_name_luanti_would_refuse_is_the_folders(tmp_path: Path) -> None:
    _mod(tmp_path, "My-Mod", "", "")
    (tmp_path / "My-Mod" / "mod.conf").write_text("name = ../evil\n")
    assert [m.name for m in find_mods(tmp_path)] == ["my_mod"]
