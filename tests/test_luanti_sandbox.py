"""Mods' Lua runs fenced (retromesh.luanti.sandbox): hostile mods get a clear problem naming
their file within seconds, the other mods still register, nothing outside is read."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("lupa")

from retromesh.luanti.mods import read_mods
from retromesh.luanti.sandbox import run_mods


def make_mod(root: Path, name: str, lua: str, depends: str = "") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "mod.conf").write_text(f"name = {name}\n" + (f"depends = {depends}\n" if depends else ""))
    (folder / "init.lua").write_text(lua)
    return folder


GOOD = 'core.register_entity("good:thing", {initial_properties = {visual = "mesh", ' \
       'mesh = "thing.b3d", textures = {"thing.png"}}})\n'

HOSTILE = {
    "endless": ('core.register_entity("endless:before", {visual = "mesh", mesh = "e.b3d"})\n'
                "local n = 0\nwhile true do n = n + 1 end\n", "init.lua:3", "stopped after"),
    "pcall_loop": ("while true do\n  pcall(function() while true do end end)\nend\n",
                   "init.lua:", "stopped after"),
    "membomb": ("local t = {}\nfor i = 1, 1e6 do\n  pcall(function() t[#t + 1] = "
                'string.rep("x", 2^20) .. i end)\nend\n', "init.lua:", "out of memory"),
    "passwd": ('local f = io.open("/etc/passwd", "r")\n', "init.lua:1", "'/etc/passwd' is outside"),
    "execute": ('os.execute("touch pwned")\n', "init.lua:1", "os.execute refused"),
    "dofile_out": ('dofile("/etc/passwd")\n', "init.lua:1", "'/etc/passwd' is outside"),
    "dump": ("local f = loadstring(string.dump(function() end))\n", "init.lua:1", "string.dump refused"),
    "bytecode": ('local f = load("\\27LJ\\2\\0")\n', "init.lua:1", "bytecode refused"),
    "require": ('local lfs = require("lfs")\n', "init.lua:1", "require('lfs') refused"),
    "write": ('local f = io.open(core.get_modpath("write") .. "/x.txt", "w")\n', "init.lua:1",
              "may only read"),
    "popen": ('io.popen("ls")\n', "init.lua:1", "io.popen refused"),
}


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("mods")
    make_mod(root, "aaa_good", GOOD.replace("good:", "aaa_good:"))
    for name, (lua, _, _) in HOSTILE.items():
        make_mod(root, name, lua)
    make_mod(root, "zzz_good", GOOD.replace("good:", "zzz_good:"))
    mods = sorted((p.name, p) for p in root.iterdir())
    start = time.perf_counter()
    run = run_mods(mods, timeout=1.0, memory=256 * 2**20)
    return run, time.perf_counter() - start, root


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_mod_gets_a_clear_problem_naming_its_file(hostile_run, name: str) -> None:
    run, _, _ = hostile_run
    found = [p for p in run.problems if p.mod == name]
    assert len(found) == 1, run.problems
    _, where, message = HOSTILE[name]
    assert found[0].where.startswith(where), found[0]
    assert message in found[0].message, found[0]


def test_the_other_mods_go_on_and_registrations_before_a_failure_are_kept(hostile_run) -> None:
    run, seconds, root = hostile_run
    names = [r["name"] for r in run.registrations]
    assert names[0] == "aaa_good:thing" and names[-1] == "zzz_good:thing"
    assert "endless:before" in names
    assert not (root / "execute" / "pwned").exists() and not Path("pwned").exists()
    # three mods run into the 1 s limit; everything else is immediate
    assert seconds < 20


def test_no_python_object_and_no_trusted_environment_reach_the_mod(tmp_path: Path) -> None:
    lua = """
assert(python == nil, "python global")
assert(debug == nil and jit == nil and package == nil and ffi == nil, "libraries")
assert(getfenv(0) == _G and getfenv(1) == _G, "getfenv level")
assert(getfenv(core.register_entity) == _G, "getfenv of an engine function")
assert(not pcall(setfenv, core.register_entity, {}), "setfenv on an engine function")
assert(not pcall(function() return string.dump end))
core.register_entity("probe:ok", {visual = "mesh", mesh = "probe.b3d"})
"""
    make_mod(tmp_path, "probe", lua)
    run = run_mods([("probe", tmp_path / "probe")], timeout=2.0)
    assert not run.problems, run.problems
    assert [r["name"] for r in run.registrations] == ["probe:ok"]


def test_io_open_answers_inside_the_mod_only(tmp_path: Path) -> None:
    folder = make_mod(tmp_path, "reader", """
local path = core.get_modpath("reader") .. "/"
local missing, err = io.open(path .. "spawn.lua", "r")
assert(missing == nil and err:find("spawn.lua"), "a missing file is nil, message")
local f = assert(io.open(path .. "data.txt", "r"))
local text = f:read("*a")
f:close()
core.register_entity("reader:" .. text, {visual = "mesh", mesh = "r.b3d"})
local link = io.open(path .. "link.txt")
""")
    (folder / "data.txt").write_text("fine")
    (folder / "link.txt").symlink_to("/etc/hostname")
    run = run_mods([("reader", folder)], timeout=2.0)
    assert [r["name"] for r in run.registrations] == ["reader:fine"]
    assert len(run.problems) == 1 and run.problems[0].where == "init.lua:9"
    assert "outside the mod folders" in run.problems[0].message


def test_a_lua_error_keeps_what_ran_before_it_with_file_and_line(tmp_path: Path) -> None:
    folder = make_mod(tmp_path, "half", 'dofile(core.get_modpath("half") .. "/mobs.lua")\n')
    (folder / "mobs.lua").write_text(
        'mobs:register_mob("half:one", {visual = "mesh", mesh = "one.b3d"})\n'
        "local x = nil\n"
        "x.y = 1\n"
        'mobs:register_mob("half:two", {visual = "mesh", mesh = "two.b3d"})\n')
    world = read_mods([folder])
    assert [r.name for r in world.registrations] == ["half:one"]
    assert world.registrations[0].source == "mobs.lua:1"
    assert len(world.problems) == 1
    assert world.problems[0].where == "mobs.lua:3" and "index local 'x'" in world.problems[0].message


def test_a_loop_inside_a_c_call_is_killed_from_outside(tmp_path: Path) -> None:
    # string.find's backtracking runs in C: no hook sees it; the parent's clock does
    make_mod(tmp_path, "stuck", 'core.register_entity("stuck:before", {visual = "mesh", mesh = "s.b3d"})\n'
             'string.find(string.rep("a", 40000), ".-.-.-.-.-.-.-.-.-b")\n')
    make_mod(tmp_path, "after", GOOD.replace("good:", "after:"))
    start = time.perf_counter()
    run = run_mods([("stuck", tmp_path / "stuck"), ("after", tmp_path / "after")], timeout=0.5)
    assert time.perf_counter() - start < 15
    assert [r["name"] for r in run.registrations] == ["stuck:before", "after:thing"]
    assert len(run.problems) == 1 and run.problems[0].mod == "stuck"
    assert run.problems[0].where == "init.lua" and "not done within" in run.problems[0].message


def test_a_flood_of_registrations_and_huge_strings_are_cut(tmp_path: Path) -> None:
    make_mod(tmp_path, "flood", """
local big = string.rep("x", 8 * 2^20)
core.register_entity("flood:big", {visual = "mesh", mesh = "b.b3d", textures = {big, "t.png"}})
for i = 1, 30000 do core.register_entity("flood:" .. i, {visual = "mesh", mesh = "f.b3d"}) end
""")
    run = run_mods([("flood", tmp_path / "flood")], timeout=10.0)
    assert len(run.registrations) == 20000
    assert run.registrations[0]["def"]["textures"] == [None, "t.png"]
    assert [p.message for p in run.problems] == ["more than 20000 registrations: the rest are not read"]


def test_a_fifo_or_a_conf_linked_out_is_not_read(tmp_path: Path) -> None:
    import os

    folder = make_mod(tmp_path, "fifo", 'dofile(core.get_modpath("fifo") .. "/pipe.lua")\n')
    os.mkfifo(folder / "pipe.lua")
    (folder / "mod.conf").unlink()
    (folder / "mod.conf").symlink_to("/etc/hostname")
    start = time.perf_counter()
    world = read_mods([folder])
    assert time.perf_counter() - start < 10
    assert world.mods == ("fifo",)          # the folder's name: the linked conf is not read
    assert len(world.problems) == 1 and "not a regular file" in world.problems[0].message


def test_os_date_takes_only_the_common_conversions(tmp_path: Path) -> None:
    make_mod(tmp_path, "dates", 'local d = os.date("%Y-%Ez-%")\n'
             'core.register_entity("dates:" .. d, {visual = "mesh", mesh = "d.b3d"})\n')
    run = run_mods([("dates", tmp_path / "dates")], timeout=2.0)
    assert not run.problems and run.registrations[0]["name"].startswith("dates:2")


def test_without_lupa_no_lua_runs_and_the_model_says_why(tmp_path: Path, monkeypatch) -> None:
    """A Blender extension for a platform lupa has no wheel for: no child is started, one
    problem says the Lua was not run (as --no-lua) and why; the model converts as its file
    has it, with that warning."""
    import importlib.util
    import warnings

    import retromesh
    from retromesh.formats.b3d import samples
    from retromesh.luanti import mods, sandbox
    find = importlib.util.find_spec
    monkeypatch.setattr(sandbox.importlib.util, "find_spec",
                        lambda name, *a: None if name == "lupa" else find(name, *a))
    run = run_mods([("good", make_mod(tmp_path, "good", GOOD))])
    assert run.registrations == []
    (problem,) = run.problems
    assert problem.mod == "" and "not run (as with --no-lua)" in problem.message
    assert "lupa" in problem.message
    folder = make_mod(tmp_path / "m", "thing", GOOD)
    (folder / "models").mkdir()
    model = folder / "models" / "thing.b3d"
    retromesh.save(samples.wiggle_scene(), model)
    mods.clear_cache()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scene = retromesh.load(model, mods={"lua": True})
    assert scene.meshes and not scene.extras.get("luanti")
    assert any("was not run" in str(w.message) and "thing.b3d" in str(w.message) for w in caught)


def test_the_child_runs_on_a_python_even_when_sys_executable_is_none(monkeypatch) -> None:
    """An application embedding Python (Blender before 2.91 named itself in sys.executable):
    the python of sys.prefix is used instead."""
    import sys

    from retromesh.luanti import sandbox
    real = sandbox.interpreter()
    assert real is not None and real.name.startswith("python")
    monkeypatch.setattr(sys, "executable", str(Path(sys.prefix) / "blender"))
    found = sandbox.interpreter()
    assert found is not None and found.name.startswith("python") and found.is_file()
