"""Checked in the real client: Luanti (Debian's ``minetest`` 5.6.1) under ``xvfb-run``.

Real mobs from mobs_animal go B3D -> GLB -> B3D through retromesh (the GLB made with the mod's
Lua, as ``retromesh convert mobs_animal/`` makes it), and once more with an edit (the model's
root node moved, in the GLB's scene, as a Blender user would). One client run
(tests/helpers/luanti_client.py) shows each model as an entity of a generated game — the mesh
our B3D, the textures, ``visual_size`` and a held frame of the ``stand`` clip as the mod's own
registration says — and the test compares the pictures:

* the engine's log has no error about any of our files (a file that is not a B3D, shown too,
  proves that the log check would see one);
* the empty scene is the plain sky, and each original shows (pixels other than the sky's
  colour) around the screen's middle where the entity stands;
* the round-tripped B3D, and the one written from the GLB without retromesh's extras, look
  like the original (pixels within a tolerance: none differ today);
* the edited one does not (the move shows).

The pictures are written to ``$RETROMESH_LUANTI_SHOTS`` when set (to look at them). The tier
skips when minetest or Xvfb is missing (tools/setup/70-luanti.sh installs them). One run of
the client with 14 scenes takes ~20 s on 2 cores with llvmpipe (~25 s for the module).
"""
from __future__ import annotations

import os
import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

import retromesh
from conftest import CORPUS
from helpers import luanti_client as lc

MOBS = CORPUS / "luanti" / "mobs_animal"

#: model file -> the registration that shows it (its textures, visual_size, clips): the cow
#: (big, one texture), the chicken (small, below its origin), the kitten (visual_size 0.5)
MODELS = {"mobs_cow.b3d": "mobs_animal:cow", "mobs_chicken.b3d": "mobs_animal:chicken",
          "mobs_kitten.b3d": "mobs_animal:kitten"}

#: what a file Luanti could not load leaves in its log (5.6.1's GenericCAO and Irrlicht lines:
#: "ERROR[Main]: GenericCAO::addToScene(): Could not load mesh x.b3d"); {names}: the files'
LOAD_ERROR = r"(ERROR|WARNING)\[[^\]]*\]:.*({names})"

#: two pictures "look the same" when at most this share of the model's pixels differ by more
#: than PIXEL_STEP in a channel (llvmpipe is deterministic: 0 differ today; the slack is for a
#: driver that dithers)
SAME_SHARE, PIXEL_STEP = 0.02, 24

#: what is shown of each model: the mod's file, ours through GLB and back, ours with the root
#: moved, ours from the GLB with retromesh's extras taken off (the writer's general path)
KINDS = ("original", "back", "edited", "foreign")

#: the root's move in the edited model, as a share of the model's height
EDIT_MOVE = 0.35


pytestmark = pytest.mark.skipif(not MOBS.is_dir(), reason=f"no luanti corpus at {MOBS}")


def _box_b3d(scene: retromesh.Scene) -> tuple[np.ndarray, np.ndarray]:
    """The bind-pose box of the model's vertices in B3D's own axes (glTF z is B3D's -z)."""
    pts = np.concatenate([p.positions for m in scene.meshes for p in m.primitives]) * (1, 1, -1)
    return pts.min(0), pts.max(0)


def _without_extras(scene: retromesh.Scene) -> retromesh.Scene:
    """The scene as another glTF tool would hand it over: nothing of retromesh's extras (the B3D
    writer then builds the file from the scene alone, not from the native chunks it recorded)."""
    scene.extras = {}
    for group in (scene.nodes, scene.meshes, scene.materials, scene.textures, scene.skins,
                  scene.animations, [p for m in scene.meshes for p in m.primitives]):
        for item in group:
            item.extras = {}
    return scene


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _prepare(model: str, registration, media: dict[str, Path], out: Path) -> dict[str, lc.Entity]:
    """The entities to show for ``model``, by KINDS: its file, and ours through GLB and back,
    with the root moved up (glTF +Y) and from the GLB without our extras."""
    from retromesh.luanti.texmod import file_names
    src = MOBS / "models" / model
    stem = model.removesuffix(".b3d")
    glb, back, edited = out / f"{stem}.glb", out / f"rmv_{stem}_back.b3d", out / f"rmv_{stem}_edit.b3d"
    _quiet(retromesh.convert, src, glb, mods={"lua": True})
    _quiet(retromesh.convert, glb, back)
    scene = _quiet(retromesh.load, glb)
    root = next(i for i, n in enumerate(scene.nodes) if n.mesh is not None)
    low, high = _box_b3d(scene)
    scene.nodes[root].translation = scene.nodes[root].translation + (0, EDIT_MOVE * (high - low)[1], 0)
    _quiet(retromesh.save, scene, edited)
    foreign = out / f"rmv_{stem}_foreign.b3d"
    _quiet(retromesh.save, _without_extras(_quiet(retromesh.load, glb)), foreign)

    textures = registration.looks[0].textures
    files = tuple(media[n] for t in textures for n in file_names(t) if n in media)
    stand = [c for c in registration.clips if c.name == "stand"] or list(registration.clips)
    frame = stand[0].start if stand else 0.0
    size = registration.visual_size
    pos = lc.placed(low, high, size)
    common = dict(textures=textures, media=files, visual_size=size, pos=pos)
    # the foreign file (no extras) keeps the mob's rate, found from its key times: the frame
    # numbers the mod's Lua names play the same moments in every file
    fps = _fps(src)
    assert _fps(foreign) == fps
    return {"original": lc.Entity(f"rmv_{stem}_orig.b3d", src, frame=frame, **common),
            "back": lc.Entity(back.name, back, frame=frame * _fps(back) / fps, **common),
            "edited": lc.Entity(edited.name, edited, frame=frame * _fps(edited) / fps, **common),
            "foreign": lc.Entity(foreign.name, foreign, frame=frame * _fps(foreign) / fps, **common)}


def _fps(path: Path) -> float:
    """The first ANIM's frames per second (Lua frame f plays at f / fps seconds)."""
    from retromesh.formats.b3d.chunks import AnimChunk
    doc = retromesh.read(path)
    return next((c.fps for n, _ in doc.walk() for c in n.children if isinstance(c, AnimChunk)), 60.0)


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    why = lc.unavailable()
    if why:
        pytest.skip(why)
    pytest.importorskip("lupa")
    from retromesh.luanti.mods import read_mods
    out = tmp_path_factory.mktemp("luanti_client")
    world = read_mods([MOBS])
    regs = {r.name: r for r in world.registrations}
    entities = {m: _prepare(m, regs[r], world.media, out) for m, r in MODELS.items()}
    garbage = out / "rmv_garbage.b3d"
    garbage.write_bytes(b"this is not a model\n")
    bad = lc.Entity(garbage.name, garbage, ("mobs_cow.png",), (MOBS / "textures" / "mobs_cow.png",))
    order = [(m, kind) for m in MODELS for kind in KINDS]
    # the file Luanti cannot load stands beside the first original: the scene shows, and the
    # unloadable mesh draws nothing (the picture is the original's)
    first = entities[next(iter(MODELS))]["original"]
    scenes = [[]] + [[entities[m][kind]] for m, kind in order] + [[bad, first]]
    run = lc.render(scenes, out / "client", timeout=240)
    print(f"luanti client: {len(scenes)} scenes in {run.seconds:.1f} s")
    pictures = {"empty": run.images[0], "garbage": run.images[-1]}
    pictures.update({f"{m}:{kind}": img for (m, kind), img in zip(order, run.images[1:-1], strict=True)})
    keep = Path(os.environ["RETROMESH_LUANTI_SHOTS"]) if os.environ.get("RETROMESH_LUANTI_SHOTS") else None
    for name, img in pictures.items():
        lc.save_png(img, out / f"{name.replace(':', '_')}.png")
        if keep:
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(out / f"{name.replace(':', '_')}.png", keep / f"{name.replace(':', '_')}.png")
    return {"pictures": pictures, "log": run.log, "entities": entities, "out": out}


def _differs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (np.abs(a.astype(np.int16) - b.astype(np.int16)) > PIXEL_STEP).any(axis=-1)


def _load_errors(log: str, names: list[str]) -> list[str]:
    pattern = re.compile(LOAD_ERROR.format(names="|".join(re.escape(n) for n in names)), re.IGNORECASE)
    return [line for line in log.splitlines() if pattern.search(line)]


def test_log_check_sees_a_file_luanti_cannot_load(shots):
    """The control: a .b3d that is no model is named in the log (else the next test proves nothing)."""
    assert _load_errors(shots["log"], ["rmv_garbage.b3d"]), shots["log"][-3000:]
    pics = shots["pictures"]
    first = f"{next(iter(MODELS))}:original"
    assert not _differs(pics["garbage"], pics[first]).any()


@pytest.mark.parametrize("model", MODELS)
def test_our_b3d_loads_without_errors(shots, model):
    names = [e.name for e in shots["entities"][model].values()]
    assert not _load_errors(shots["log"], names)


def test_the_empty_scene_is_the_plain_sky(shots):
    assert (shots["pictures"]["empty"] == lc.SKY).all()


@pytest.mark.parametrize("model", MODELS)
def test_the_mob_shows_where_it_stands(shots, model):
    mask = (shots["pictures"][f"{model}:original"] != lc.SKY).any(axis=-1)
    assert mask.sum() > 300, f"{model}: only {mask.sum()} pixels are not the sky"
    ys, xs = np.nonzero(mask)
    h, w = mask.shape
    # lc.placed frames the bind pose's box around the screen's middle (the frame shown differs)
    assert abs(xs.mean() - w / 2) < w / 4 and abs(ys.mean() - h / 2) < h / 4, (xs.mean(), ys.mean())
    assert not mask[:20].any() and not mask[-20:].any(), "the mob is not framed: it touches the screen's edge"


@pytest.mark.parametrize("model", MODELS)
def test_round_trip_renders_as_the_original(shots, model):
    pics = shots["pictures"]
    area = _differs(pics[f"{model}:original"], pics["empty"]).sum()
    changed = _differs(pics[f"{model}:back"], pics[f"{model}:original"]).sum()
    assert changed <= SAME_SHARE * area, f"{model}: {changed} of {area} pixels differ after B3D -> GLB -> B3D"


@pytest.mark.parametrize("model", MODELS)
def test_a_glb_without_our_extras_renders_as_the_original(shots, model):
    pics = shots["pictures"]
    area = _differs(pics[f"{model}:original"], pics["empty"]).sum()
    changed = _differs(pics[f"{model}:foreign"], pics[f"{model}:original"]).sum()
    assert changed <= SAME_SHARE * area, \
        f"{model}: {changed} of {area} pixels differ (GLB without our extras -> B3D)"


@pytest.mark.parametrize("model", MODELS)
def test_an_edit_shows(shots, model):
    pics = shots["pictures"]
    area = _differs(pics[f"{model}:original"], pics["empty"]).sum()
    changed = _differs(pics[f"{model}:edited"], pics[f"{model}:original"]).sum()
    assert changed > 0.2 * area, f"{model}: the moved root changed only {changed} of {area} pixels"
    # moved up as it was in the glTF (+Y is up in both; the mob faces sideways), not gone
    ys0, xs0 = np.nonzero((pics[f"{model}:original"] != lc.SKY).any(axis=-1))
    ys1, xs1 = np.nonzero((pics[f"{model}:edited"] != lc.SKY).any(axis=-1))
    assert len(ys1) > 300
    dy, dx = ys1.mean() - ys0.mean(), xs1.mean() - xs0.mean()
    assert dy < -5 and abs(dx) < abs(dy) / 2, f"{model}: the picture moved by x {dx:.1f}, y {dy:.1f} px"
