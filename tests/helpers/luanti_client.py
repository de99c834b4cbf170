"""The real Luanti client as a judge: Debian's ``minetest`` (5.6.1) under ``xvfb-run``.

``unavailable()`` says why the tier cannot run (None when it can). ``render(scenes, work)`` starts
ONE client on a throwaway world and shows each scene in turn (start-up is most of a run's cost),
returning one RGB image per scene and the engine's log.

How a run goes:

* ``work/home`` is the client's HOME, so ``~/.minetest`` (games, debug.txt, settings written
  back) is thrown away with it. The game ``rmview`` is generated there: a ``game.conf`` and one
  mod of that name holding the models under test (``models/``), their textures (``textures/``)
  and an ``init.lua`` that registers one entity, ``rmview:model``, whose mesh, textures,
  ``visual_size`` and held frame come from the scene table written into that file.
* The world is ``singlenode`` (all air, no terrain to wait for) with time frozen at noon, a
  plain sky of one colour (SKY; no sun, moon, stars or clouds), no HUD, the player held in
  place (no gravity) looking at the spot where the scene's entities stand. The client runs
  ``--go --world`` (singleplayer: no chat lines on screen; errors are not printed over it).
* The harness drives the mod through a file in the world folder (mod security lets a mod read
  its world): it writes the scene number, the mod swaps the entities and logs
  ``RMVIEW scene <n>``. ``quit`` makes the mod call ``minetest.request_shutdown``.
* The picture is Xvfb's own framebuffer (``-fbdir``: an XWD file the X server keeps current),
  i.e. exactly what a player would see on that screen. The engine's screenshot key (F12) saves
  an all-black PNG under Mesa's llvmpipe on Xvfb (measured with 5.6.1), so it is not used, and no
  window focus or xdotool is needed either. A scene's picture is taken once it has held still
  for three polls after the mod logged it and shows what it should: an empty scene only the
  sky's colour (not a loading screen), any other something else (the client has drawn it).

Every client run is time-boxed (``timeout``); on a timeout the client's process group (which we
started) is ended and an AssertionError carries the log's errors and tail. A run whose server
could not bind its port (two clients started in the same second draw the same one) is started
again.
"""
from __future__ import annotations

import dataclasses
import os
import random
import shutil
import signal
import struct
import subprocess
import time
from pathlib import Path

import numpy as np

#: Debian installs the client as /usr/games/minetest, which is not on every PATH
CANDIDATES = ("minetest", "/usr/games/minetest", "luanti", "/usr/games/luanti")

#: the screen (small: llvmpipe draws every pixel on the CPU)
WIDTH, HEIGHT = 480, 320

#: where the player stands (in nodes; the eyes are EYE_HEIGHT above) and how far down it looks
#: (radians); an Entity's ``pos`` defaults to ENTITY_POS, see ``placed`` for framing a model
PLAYER_POS = (0, 0, 0)
EYE_HEIGHT = 1.625
PITCH = 0.25
#: the plain sky's colour (set_sky type "plain"): what "no model here" looks like
SKY = (96, 160, 224)
ENTITY_POS = (0.0, 0.4, 3.2)


def placed(low: np.ndarray, high: np.ndarray, visual_size: tuple[float, float, float],
           yaw: float = 1.5708) -> tuple[float, float, float]:
    """Where to put an entity so that a model whose box (B3D's own axes and units, i.e. Irrlicht's:
    10 units a node before ``visual_size``) is ``low``..``high`` fills the middle of the screen."""
    size = (np.asarray(high) - np.asarray(low)) * np.asarray(visual_size) / 10
    cx, cy, cz = (np.asarray(high) + np.asarray(low)) / 2 * np.asarray(visual_size) / 10
    # Luanti turns an entity by -yaw about +Y in Irrlicht's left-handed frame
    ox = cx * np.cos(yaw) - cz * np.sin(yaw)
    oz = cx * np.sin(yaw) + cz * np.cos(yaw)
    distance = max(1.2, 1.15 * float(np.linalg.norm(size)))
    tx, ty, tz = (PLAYER_POS[0], PLAYER_POS[1] + EYE_HEIGHT - distance * np.sin(PITCH),
                  PLAYER_POS[2] + distance * np.cos(PITCH))
    return (round(float(tx - ox), 4), round(float(ty - cy), 4), round(float(tz - oz), 4))


def client() -> str | None:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def unavailable() -> str | None:
    """Why the Luanti client tier cannot run here, or None."""
    missing = [what for what, ok in (("minetest (apt-get install minetest)", client()),
                                     ("xvfb-run (apt-get install xvfb)", shutil.which("xvfb-run")),
                                     ("Xvfb", shutil.which("Xvfb")),
                                     ("xauth", shutil.which("xauth"))) if not ok]
    if missing:
        return f"Luanti client tier: missing {', '.join(missing)} (tools/setup/70-luanti.sh installs them)"
    return None


@dataclasses.dataclass
class Entity:
    """One entity to show: ``mesh`` is a model file (copied into the mod under ``name``),
    ``textures`` the entity's texture strings, ``media`` the image files they use."""
    name: str
    mesh: Path
    textures: tuple[str, ...]
    media: tuple[Path, ...] = ()
    visual_size: tuple[float, float, float] = (1.0, 1.0, 1.0)
    frame: float = 0.0
    yaw: float = 1.5708     # side on: the mob's flank faces the camera
    pos: tuple[float, float, float] = ENTITY_POS


def _lua_str(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _lua_scene(entities: list[Entity]) -> str:
    parts = []
    for e in entities:
        tex = ", ".join(_lua_str(t) for t in e.textures)
        x, y, z = e.visual_size
        parts.append(f"{{mesh = {_lua_str(e.name)}, textures = {{{tex}}}, "
                     f"visual_size = {{x = {x!r}, y = {y!r}, z = {z!r}}}, frame = {e.frame!r}, "
                     f"yaw = {e.yaw!r}, pos = {{x = {e.pos[0]!r}, y = {e.pos[1]!r}, z = {e.pos[2]!r}}}}}")
    return "{" + ", ".join(parts) + "}"


INIT_LUA = """\
-- generated by retromesh's tests (tests/helpers/luanti_client.py)
local SCENES = {%(scenes)s}
local SKY = "%(sky)s"
local CMD = minetest.get_worldpath() .. "/rmview_cmd.txt"
local shown, current = {}, nil

minetest.register_entity("rmview:model", {
    initial_properties = {visual = "mesh", mesh = "", physical = false, pointable = false,
                          static_save = false, collisionbox = {0, 0, 0, 0, 0, 0}},
    on_activate = function(self, staticdata)
        local s, i = staticdata:match("^(%%d+):(%%d+)$")
        local e = SCENES[tonumber(s)][tonumber(i)]
        self.object:set_properties({mesh = e.mesh, textures = e.textures, visual_size = e.visual_size})
        self.object:set_animation({x = e.frame, y = e.frame}, 0, 0, false)
        self.object:set_yaw(e.yaw)
    end,
})

local function show(n)
    for _, obj in ipairs(shown) do obj:remove() end
    shown = {}
    for i, e in ipairs(SCENES[n] or {}) do
        shown[#shown + 1] = minetest.add_entity(e.pos, "rmview:model", n .. ":" .. i)
    end
    minetest.log("action", "RMVIEW scene " .. n .. " entities " .. #shown)
end

minetest.register_on_joinplayer(function(player)
    player:set_physics_override({gravity = 0, speed = 0, jump = 0})
    player:set_pos({x = %(px)r, y = %(py)r, z = %(pz)r})
    player:set_look_horizontal(0)
    player:set_look_vertical(%(pitch)r)
    player:hud_set_flags({hotbar = false, healthbar = false, crosshair = false, wielditem = false,
                          breathbar = false, minimap = false, basic_debug = false})
    -- one flat colour behind the models (no sun, moon, stars or sky gradient to vary)
    player:set_sky({type = "plain", base_color = SKY, clouds = false})
    player:set_sun({visible = false, sunrise_visible = false})
    player:set_moon({visible = false})
    player:set_stars({visible = false})
    minetest.set_timeofday(0.5)
    minetest.log("action", "RMVIEW joined")
end)

local wait = 0
minetest.register_globalstep(function(dtime)
    wait = wait + dtime
    if wait < 0.1 then return end
    wait = 0
    local f = io.open(CMD, "r")
    if not f then return end
    local cmd = f:read("*l")
    f:close()
    if cmd == "quit" then
        minetest.request_shutdown()
    elseif cmd and tonumber(cmd) and cmd ~= current then
        current = cmd
        show(tonumber(cmd))
    end
end)
"""

CONF = """\
screen_w = {w}
screen_h = {h}
enable_clouds = false
menu_clouds = false
mg_name = singlenode
static_spawnpoint = {px},{py},{pz}
time_speed = 0
enable_sound = false
enable_minimap = false
viewing_range = 40
fps_max = 30
fps_max_unfocused = 30
pause_on_lost_focus = false
show_debug = false
debug_log_level = info
# errors are not printed over the picture (the test reads them in debug.txt)
chat_log_level = none
server_announce = false
"""


def _write_game(home: Path, scenes: list[list[Entity]]) -> None:
    game = home / ".minetest" / "games" / "rmview"
    mod = game / "mods" / "rmview"
    (mod / "models").mkdir(parents=True)
    (mod / "textures").mkdir()
    (game / "game.conf").write_text("title = retromesh client check\n")
    (mod / "mod.conf").write_text("name = rmview\n")
    for entities in scenes:
        for e in entities:
            shutil.copyfile(e.mesh, mod / "models" / e.name)
            for m in e.media:
                if not (mod / "textures" / m.name).exists():
                    shutil.copyfile(m, mod / "textures" / m.name)
    px, py, pz = PLAYER_POS
    sky = "#" + "".join(f"{c:02x}" for c in SKY)
    (mod / "init.lua").write_text(INIT_LUA % {
        "scenes": ", ".join(_lua_scene(s) for s in scenes), "pitch": PITCH, "sky": sky,
        "px": px, "py": py, "pz": pz})


#: how long a scene with entities may show only the sky before it is taken as it is
SHOW_WAIT = 8.0


def read_xwd(path: Path) -> np.ndarray:
    """An XWD file of a 24/32-bit TrueColor screen (Xvfb's -fbdir) as an (h, w, 3) uint8 RGB array."""
    data = path.read_bytes()
    header = struct.unpack_from(">25I", data)
    header_size, width, height, byte_order, bits_per_pixel, bytes_per_line, ncolors = (
        header[0], header[4], header[5], header[7], header[11], header[12], header[19])
    if bits_per_pixel != 32:
        raise ValueError(f"{path}: {bits_per_pixel} bits per pixel, expected 32")
    start = header_size + ncolors * 12
    rows = np.frombuffer(data, np.uint8, count=bytes_per_line * height, offset=start)
    pixels = rows.reshape(height, bytes_per_line)[:, :width * 4].reshape(height, width, 4)
    # masks red 0xff0000, green 0xff00, blue 0xff: in a little-endian word (byte order 0, what
    # Xvfb writes on x86) the bytes are B, G, R, x; in a big-endian one x, R, G, B
    return pixels[..., [2, 1, 0] if byte_order == 0 else [1, 2, 3]].copy()


@dataclasses.dataclass
class Run:
    images: list[np.ndarray]
    log: str
    seconds: float


def _write_cmd(world: Path, cmd: str) -> None:
    tmp = world / "rmview_cmd.tmp"
    tmp.write_text(cmd + "\n")
    tmp.replace(world / "rmview_cmd.txt")


def _settled(fb: Path, since: float, empty: bool, deadline: float) -> np.ndarray:
    """The framebuffer once it has held still (three equal polls, at least 0.8 s after
    ``since``) and shows what it should: an ``empty`` scene nothing but the plain sky (not a
    loading screen), any other something besides the sky (its entities drawn) or, after
    SHOW_WAIT seconds, whatever it shows (a model Luanti could not load draws nothing: the
    test judges that)."""
    last: np.ndarray | None = None
    still = 0
    while time.monotonic() < deadline:
        time.sleep(0.25)
        img = read_xwd(fb)
        still = still + 1 if last is not None and np.array_equal(img, last) else 0
        last = img
        waited = time.monotonic() - since
        if still < 2 or waited < 0.8:
            continue
        only_sky = bool((img == SKY).all())
        if only_sky if empty else (not only_sky or waited > SHOW_WAIT):
            return img
    raise TimeoutError


class _PortTaken(Exception):
    """The singleplayer server could not bind its port (another client took the same one)."""


def render(scenes: list[list[Entity]], work: Path, *, timeout: float = 120) -> Run:
    """Show ``scenes`` (lists of entities; an empty one shows the plain sky only) in one client
    run; returns their pictures in order. Raises AssertionError (with the log) when the client
    does not get there within ``timeout`` seconds.

    5.6.1 picks the singleplayer server's port at random with the clock (in seconds) as seed,
    so two clients started in the same second take the same port and one fails: that run is
    started again a moment later (up to three times)."""
    why = unavailable()
    if why:
        raise RuntimeError(why)
    end = time.monotonic() + timeout
    for attempt in range(3):
        try:
            return _run(scenes, work / f"run{attempt}", end)
        except _PortTaken:
            time.sleep(1.0 + random.random() * 2)
    raise AssertionError("the Luanti client could not bind a port three times")


def _run(scenes: list[list[Entity]], work: Path, end: float) -> Run:
    home, world, fb = work / "home", work / "world", work / "fb"
    for d in (home, world, fb):
        d.mkdir(parents=True)
    _write_game(home, scenes)
    (world / "world.mt").write_text("gameid = rmview\nbackend = dummy\nplayer_backend = dummy\n"
                                    "auth_backend = sqlite3\nmod_storage_backend = sqlite3\n")
    px, py, pz = PLAYER_POS
    conf = work / "minetest.conf"
    conf.write_text(CONF.format(w=WIDTH, h=HEIGHT, px=px, py=py, pz=pz))
    log = work / "debug.txt"
    cmd = ["timeout", "-k", "5", str(max(1, int(end - time.monotonic()))),
           # -a: the first free display from a random one (two runs at once do not collide)
           "xvfb-run", "-a", "-n", str(random.randrange(100, 900)),
           "-s", f"-screen 0 {WIDTH}x{HEIGHT}x24 -fbdir {fb} -nolisten tcp",
           str(client()), "--config", str(conf), "--go", "--world", str(world), "--logfile", str(log)]
    env = {**os.environ, "HOME": str(home), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    env.pop("DISPLAY", None)
    start = time.monotonic()
    deadline = end - 10
    out = work / "client.out"
    images: list[np.ndarray] = []
    with out.open("wb") as sink:
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
        try:
            _wait_log(log, "RMVIEW joined", proc, deadline)
            for n in range(1, len(scenes) + 1):
                _write_cmd(world, str(n))
                _wait_log(log, f"RMVIEW scene {n} ", proc, deadline)
                since = time.monotonic()
                try:
                    img = _settled(fb / "Xvfb_screen0", since, not scenes[n - 1], deadline)
                except TimeoutError:
                    raise AssertionError(f"scene {n} never settled on screen\n{_tail(log)}") from None
                images.append(img)
            _write_cmd(world, "quit")
            try:
                proc.wait(timeout=max(5.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        finally:
            if proc.poll() is None:
                # our own process group (start_new_session): the client, xvfb-run and its Xvfb
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
    text = log.read_text(errors="replace") if log.exists() else ""
    text += "\n" + out.read_text(errors="replace")
    return Run(images, text, time.monotonic() - start)


def _tail(log: Path, n: int = 12) -> str:
    """The log's errors (at most 10) and last ``n`` lines: what says why a run failed."""
    if not log.exists():
        return "(no debug.txt)"
    lines = log.read_text(errors="replace").splitlines()
    errors = [line for line in lines[:-n] if "ERROR[" in line][:10]
    return "\n".join(errors + ["..."] + lines[-n:])


def _wait_log(log: Path, marker: str, proc: subprocess.Popen, deadline: float) -> None:
    while time.monotonic() < deadline:
        if log.exists() and marker in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            if log.exists() and "Failed to bind socket" in log.read_text(errors="replace"):
                raise _PortTaken
            raise AssertionError(f"the client exited ({proc.returncode}) before {marker!r}\n{_tail(log)}")
        time.sleep(0.1)
    raise AssertionError(f"no {marker!r} in the client's log in time\n{_tail(log)}")


def save_png(img: np.ndarray, path: Path) -> None:
    from PIL import Image
    Image.fromarray(img).save(path)
