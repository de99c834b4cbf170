"""A Lugaru character to glTF as the game builds it, and back: fixtures in the game's layout
made by our own writers, and the corpus rabbit and wolf when the corpus is there."""
from __future__ import annotations

import io
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp
from typer.testing import CliRunner

import retromesh
from conftest import CORPUS
from helpers.gltfcheck import assert_valid
from retromesh import LossWarning
from retromesh.formats.lugaru import animation as la, samples, skeleton as ls, solid
from retromesh.formats.lugaru.pose import muscle_angles, muscle_rotations

DATA = CORPUS / "lugaru" / "Data"
needs_corpus = pytest.mark.skipif(not (DATA / "Skeleton").is_dir(), reason="no Lugaru corpus")


def _layout(tmp: Path) -> Path:
    """A rabbit in the game's layout: Skeleton/BasicFigure, Models/Body*.solid, skin, animation."""
    from PIL import Image
    data = tmp / "Data"
    for d in ("Skeleton", "Models", "Textures", "Animations"):
        (data / d).mkdir(parents=True)
    (data / "Skeleton" / "BasicFigure").write_bytes(ls.write(samples.figure()))
    body = samples.body()
    (data / "Models" / "Body.solid").write_bytes(solid.write(body))
    blink = solid.SolidFile(body.vertices.copy(), body.triangles)
    blink.vertices[:8] *= np.float32(0.9)
    (data / "Models" / "Body2.solid").write_bytes(solid.write(blink))
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (120, 90, 60)).save(buf, "JPEG")
    (data / "Textures" / "FurBrown.jpg").write_bytes(buf.getvalue())
    (data / "Animations" / "Walk").write_bytes(la.write(samples.animation(4)))
    no_targets = samples.animation(3)
    no_targets.weapon_target_count = no_targets.weapon_targets = None
    (data / "Animations" / "Sway").write_bytes(la.write(no_targets))
    return data


def _convert_back(glb: Path, out: Path) -> list[Path]:
    return retromesh.convert(glb, out / "Data" / "Skeleton" / "BasicFigure")


def test_fixture_character_converts_valid_and_comes_back_byte_identical(tmp_path):
    data = _layout(tmp_path)
    glb = tmp_path / "rabbit.glb"
    retromesh.convert(data / "Skeleton" / "BasicFigure", glb,
                      animations=[data / "Animations" / "Walk", data / "Animations" / "Sway"])
    info = assert_valid(glb)
    assert info["animationCount"] == 2 and info["hasTextures"]
    scene = retromesh.load(glb)
    mesh = next(m for m in scene.meshes if m.name == "Body")
    assert len(mesh.primitives[0].targets) == 1 and mesh.extras["targetNames"] == ["Body2"]
    assert np.all(mesh.primitives[0].weights[:, 0] == 1)
    written = _convert_back(glb, tmp_path / "out")
    names = sorted(p.relative_to(tmp_path / "out") for p in written)
    assert names == [Path("Data/Animations/Sway"), Path("Data/Animations/Walk"),
                     Path("Data/Skeleton/BasicFigure")]
    for rel in names:
        assert (tmp_path / "out" / rel).read_bytes() == (tmp_path / rel).read_bytes(), rel


def test_animation_alone_finds_its_skeleton_in_the_game_layout(tmp_path):
    data = _layout(tmp_path)
    scene = retromesh.load(data / "Animations" / "Walk")
    assert [a.name for a in scene.animations] == ["Walk"]
    assert any(n.skin is not None for n in scene.nodes)


def test_the_muscle_keeps_its_direction_in_its_own_frame():
    """``FindRotationMuscle`` and the drawing matrix agree: the line between a muscle's joints
    points the same way in the muscle's frame at every frame of an animation."""
    skel = samples.figure()
    anim = samples.animation(6, sway=1.5)
    pos = np.asarray(anim.positions, np.float64)
    rot = muscle_rotations(muscle_angles(pos, skel))
    d = pos[:, skel.muscles["parent1"]] - pos[:, skel.muscles["parent2"]]
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    local = np.einsum("fmji,fmj->fmi", rot, d)          # R^T d
    assert np.allclose(local, local[:1], atol=1e-5)


def test_edited_joint_is_written_and_bone_only_edit_warns(tmp_path):
    data = _layout(tmp_path)
    glb = tmp_path / "rabbit.glb"
    retromesh.convert(data / "Skeleton" / "BasicFigure", glb, animations=[data / "Animations" / "Walk"])
    scene = retromesh.load(glb)
    head = next(i for i, n in enumerate(scene.nodes) if n.name == "head")
    anim = scene.animations[0]
    ch = next(c for c in anim.channels if c.node == head and c.path == "translation")
    ch.values[2, 1] += 0.5
    doc = retromesh.from_scene(scene, "lugaru-skeleton")
    walk = doc.animations["Walk"]
    before = retromesh.read(data / "Animations" / "Walk")
    assert walk.positions[2, 0, 1] == pytest.approx(before.positions[2, 0, 1] + 0.5)
    assert np.array_equal(walk.positions[[0, 1, 3]], before.positions[[0, 1, 3]])
    assert np.array_equal(walk.onground, before.onground)
    # posing a bone (as a Blender user poses the armature) moves the joints it carries
    scene = retromesh.load(glb)
    bone = next(i for i, n in enumerate(scene.nodes) if n.extras.get("lugaru_muscle") == 4)
    rot = next(c for c in scene.animations[0].channels if c.node == bone and c.path == "rotation")
    from retromesh.transforms import quat_multiply
    turn = np.array([0.0, 0.0, np.sin(np.pi / 8), np.cos(np.pi / 8)])        # 45 degrees about Z
    key = int(np.argmin(np.abs(rot.times - ch.times[1])))                   # the key at frame 1
    rot.values[key] = quat_multiply(turn, rot.values[key].astype(float))
    with pytest.warns(LossWarning, match="joint positions they carry"):
        doc = retromesh.from_scene(scene, "lugaru-skeleton")
    walk = doc.animations["Walk"]
    m = samples.figure().muscles[4]                       # joints 3 and 4: the left forearm
    changed = np.nonzero(np.any(walk.positions != before.positions, axis=2))
    assert set(changed[0]) == {1} and set(changed[1]) == {int(m["parent1"]), int(m["parent2"])}
    a, b = walk.positions[1, m["parent1"]], walk.positions[1, m["parent2"]]
    a0, b0 = before.positions[1, m["parent1"]], before.positions[1, m["parent2"]]
    assert np.linalg.norm(a - b) == pytest.approx(np.linalg.norm(
        samples.JOINT_POSITIONS[m["parent1"]] - samples.JOINT_POSITIONS[m["parent2"]]), rel=1e-4)
    c45 = np.sqrt(0.5)
    turned = np.array([[c45, -c45, 0], [c45, c45, 0], [0, 0, 1]]) @ (a0 - b0)   # Rz(45) of the old line
    cos = np.dot(a - b, turned) / np.linalg.norm(a - b) / np.linalg.norm(turned)
    assert np.degrees(np.arccos(np.clip(cos, -1, 1))) < 0.5


def test_fewer_frames_keep_the_joints_and_say_what_is_lost(tmp_path):
    data = _layout(tmp_path)
    glb = tmp_path / "rabbit.glb"
    retromesh.convert(data / "Skeleton" / "BasicFigure", glb, animations=[data / "Animations" / "Walk"])
    scene = retromesh.load(glb)
    for c in scene.animations[0].channels:
        c.times, c.values = c.times[:2], c.values[:2]
    with pytest.warns(LossWarning, match="twists"):
        doc = retromesh.from_scene(scene, "lugaru-skeleton")
    assert doc.animations["Walk"].frame_count == 2


def test_a_foreign_gltf_is_refused_in_words(tmp_path):
    scene = retromesh.Scene(name="x")
    with pytest.raises(retromesh.RetromeshError, match="not made from a Lugaru skeleton"):
        retromesh.from_scene(scene, "lugaru-skeleton")


def test_cli_writes_the_skeleton_and_its_animations_as_the_game_keeps_them(tmp_path):
    from retromesh.cli import app
    data = _layout(tmp_path)
    glb = tmp_path / "r.glb"
    run = CliRunner().invoke(app, ["convert", str(data / "Skeleton" / "BasicFigure"), "-a",
                                   str(data / "Animations" / "Walk"), "-o", str(glb)])
    assert run.exit_code == 0, run.output
    out = tmp_path / "game" / "Data" / "Skeleton"
    out.mkdir(parents=True)
    run = CliRunner().invoke(app, ["convert", str(glb), "-o", str(out / "BasicFigure")])
    assert run.exit_code == 0, run.output
    assert (out / "BasicFigure").read_bytes() == (data / "Skeleton" / "BasicFigure").read_bytes()
    assert (out.parent / "Animations" / "Walk").read_bytes() == (data / "Animations" / "Walk").read_bytes()
    run = CliRunner().invoke(app, ["info", str(data / "Skeleton" / "BasicFigure")])
    assert run.exit_code == 0 and "muscles" in run.output


@needs_corpus
@pytest.mark.parametrize("figure,anims", [("BasicFigure", ["Idle", "SpinKick"]),
                                          ("BasicFigureWolf", ["WolfRun"])])
def test_corpus_character_converts_valid_and_back(tmp_path, figure, anims):
    glb = tmp_path / f"{figure}.glb"
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        retromesh.convert(DATA / "Skeleton" / figure, glb,
                          animations=[DATA / "Animations" / a for a in anims])
    info = assert_valid(glb)
    assert info["animationCount"] == len(anims) and info["hasTextures"]
    scene = retromesh.load(glb)
    body = scene.meshes[scene.nodes[next(i for i in scene.roots if scene.nodes[i].mesh is not None)].mesh]
    assert len(body.primitives[0].targets) == 6               # Body2..7 / Wolf2..7
    if figure == "BasicFigure":
        assert [name for name, _ in scene.extra_scenes] == ["low_detail"]
    out = tmp_path / "Data" / "Skeleton"
    out.mkdir(parents=True)
    retromesh.convert(glb, out / figure)
    assert (out / figure).read_bytes() == (DATA / "Skeleton" / figure).read_bytes()
    for a in anims:
        assert (out.parent / "Animations" / a).read_bytes() == (DATA / "Animations" / a).read_bytes()


def test_folder_conversion_gives_the_figure_its_animations_and_check_reads_them(tmp_path):
    from retromesh.cli import app
    data = _layout(tmp_path)
    run = CliRunner().invoke(app, ["convert", str(data), "-o", str(tmp_path / "out")])
    assert run.exit_code == 0, run.output
    glbs = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.glb"))
    assert glbs == ["Models/Body.glb", "Models/Body2.glb", "Skeleton/BasicFigure.glb"]
    scene = retromesh.load(tmp_path / "out" / "Skeleton" / "BasicFigure.glb")
    assert sorted(a.name for a in scene.animations) == ["Sway", "Walk"]
    run = CliRunner().invoke(app, ["check", str(data)])
    assert run.exit_code == 0 and "Skeleton/BasicFigure (lugaru-skeleton)" in run.output
    assert "Animations/Walk (lugaru-animation)" in run.output


def test_empties_left_at_an_animations_start_are_a_pose_not_a_new_skeleton(tmp_path):
    """Blender writes an animated empty at its current location: the skeleton stays; a rest
    position that no animation starts from is a real edit and is written."""
    data = _layout(tmp_path)
    glb = tmp_path / "rabbit.glb"
    walk = samples.animation(4)
    walk.positions[0, :, 0] += 0.25                     # frame 0 differs from the rest pose
    (data / "Animations" / "Walk").write_bytes(la.write(walk))
    retromesh.convert(data / "Skeleton" / "BasicFigure", glb, animations=[data / "Animations" / "Walk"])
    scene = retromesh.load(glb)
    anim = scene.animations[0]
    for c in anim.channels:
        if c.path == "translation" and "lugaru_joint" in scene.nodes[c.node].extras:
            scene.nodes[c.node].translation = c.values[0].astype(float)
    doc = retromesh.from_scene(scene, "lugaru-skeleton")
    assert ls.write(doc.skeleton) == (data / "Skeleton" / "BasicFigure").read_bytes()
    head = next(i for i, n in enumerate(scene.nodes) if n.name == "head")
    scene.nodes[head].translation = scene.nodes[head].translation + [0, 1.0, 0]
    doc = retromesh.from_scene(scene, "lugaru-skeleton")
    assert doc.skeleton.joints["position"][0, 1] == pytest.approx(samples.JOINT_POSITIONS[0, 1] + 1.0)


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 5), st.data())
def test_generated_animations_survive_the_glb(tmp_path_factory, frames, data):
    tmp = tmp_path_factory.mktemp("gen")
    base = _layout(tmp)
    f32 = st.floats(-3, 3, width=32)
    anim = samples.animation(frames)
    moved = data.draw(hnp.arrays(">f4", (frames, 20, 3), elements=f32))
    anim.positions = (anim.positions + moved).astype(">f4")
    anim.speed = data.draw(hnp.arrays(">f4", frames, elements=st.floats(0.5, 20, width=32)))
    anim.twist = data.draw(hnp.arrays(">f4", (frames, 20), elements=f32))
    anim.label = data.draw(hnp.arrays(">i4", frames, elements=st.integers(0, 9)))
    if data.draw(st.booleans()):
        anim.weapon_target_count = anim.weapon_targets = None
    (base / "Animations" / "Gen").write_bytes(la.write(anim))
    glb = tmp / "g.glb"
    retromesh.convert(base / "Animations" / "Gen", glb)
    out = tmp / "o" / "Skeleton" / "BasicFigure"
    retromesh.convert(glb, out)
    got = (out.parent.parent / "Animations" / "Gen").read_bytes()
    assert got == (base / "Animations" / "Gen").read_bytes()


def test_gallery_makes_one_card_per_character_with_its_animations(tmp_path):
    from retromesh.gallery.build import find_models
    data = _layout(tmp_path)
    models = {str(m.source.relative_to(data)): m for m in find_models([data])}
    assert sorted(models) == ["Models/Body.solid", "Models/Body2.solid", "Skeleton/BasicFigure"]
    anims = models["Skeleton/BasicFigure"].options["animations"]
    assert [a.name for a in anims] == ["Sway", "Walk"]


def test_between_frames_the_angles_move_as_do_animations_moves_them(tmp_path):
    from retromesh.formats.lugaru.pose import between_frames
    times = np.array([0.0, 1.0])
    pos = np.zeros((2, 1, 3))
    pos[1, 0] = (2.0, 0.0, 0.0)
    angles = np.array([[[350.0, 10.0, 350.0]], [[10.0, 30.0, 10.0]]])
    t, p, a = between_frames(times, pos, angles, fps=4)
    assert list(t) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert p[2, 0, 0] == pytest.approx(1.0)
    assert a[2, 0, 0] == pytest.approx(180.0)          # rotate1: linear, the long way round
    assert a[2, 0, 1] == pytest.approx(20.0)
    assert a[2, 0, 2] % 360 == pytest.approx(0.0)      # rotate3: the short way round
    data = _layout(tmp_path)
    dense = retromesh.load(data / "Animations" / "Walk")
    keys = retromesh.load(data / "Animations" / "Walk", between="keys")
    count = [max(len(c.times) for c in s.animations[0].channels if c.path == "rotation")
             for s in (dense, keys)]
    assert count[0] > count[1] == 4


@needs_corpus
@pytest.mark.parametrize("figure,model", [("BasicFigureLow", "BodyLow"), ("RabbitBelt", "Belt")])
def test_corpus_low_and_clothes_skeletons_carry_their_models(tmp_path, figure, model):
    glb = tmp_path / f"{figure}.glb"
    retromesh.convert(DATA / "Skeleton" / figure, glb)
    assert_valid(glb)
    scene = retromesh.load(glb)
    assert [m.name for m in scene.meshes] == [model]
    assert all(n.skin is not None for n in scene.nodes if n.mesh is not None)
    out = tmp_path / "Data" / "Skeleton"
    out.mkdir(parents=True)
    retromesh.convert(glb, out / figure)
    assert (out / figure).read_bytes() == (DATA / "Skeleton" / figure).read_bytes()
