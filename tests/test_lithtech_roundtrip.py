"""Nothing lost for LithTech ABC v9-v13 on the plain path ``.abc -> .glb -> .abc``
(retromesh.convert both ways, no options): every count ``info()`` reports and the structure the
game uses (version, node names/hierarchy/flags, pieces and their LODs, weight sets, child
models, sockets, anim bindings, animation names/key times/key strings) come back equal."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import retromesh
from conftest import ROOT, corpus_params
from helpers.blendersim import drop_repeats
from helpers.roundtrip import differences, gltf_round_trip
from retromesh import LossWarning
from retromesh.formats import lithtech
from retromesh.formats.lithtech import abc, samples


def summary(doc: abc.AbcModel) -> dict:
    """Everything the round trip must keep, as plain values (floats rounded to float32 noise)."""
    def r(x, n=4):
        return [round(float(v), n) for v in np.asarray(x, np.float64).reshape(-1)]
    h = doc.header
    out = {f"info.{k}": v for k, v in lithtech.info(doc).items()}
    out.update({
        "version": doc.version, "lod_count": h.lod_count,
        "command_string": h.command_string, "lod_distances": r(h.lod_distances),
        "nodes": [(n.name, n.index, n.flags, n.child_count) for n in doc.nodes],
        "pieces": [(p.name, p.material_index, round(p.specular_power, 4), round(p.specular_scale, 4),
                    p.lod_weight, [(len(lod.faces), len(lod.vertices), len(lod.weights))
                                   for lod in p.lods]) for p in doc.pieces],
        "weight_sets": [(w.name, r(w.weights)) for w in doc.weight_sets],
        "child_models": [(c.name, c.build_number, len(c.transforms)) for c in doc.child_models],
        "child_model_transforms": [r(c.transforms["location"], 3) + r(c.transforms["rotation"], 3)
                                   for c in doc.child_models[1:]],
        "sockets": [(s.node, s.name, r(s.location, 3)) for s in doc.sockets],
        "anim_bindings": [(b.name, r(b.extents, 3), r(b.origin, 3)) for b in doc.anim_bindings],
        "animations": [(a.name, a.unknown, a.interpolation_ms, list(map(int, a.key_times)),
                        list(a.key_strings), r(a.extents, 3)) for a in doc.animations],
    })
    return out


def round_trip(src: Path | bytes, tmp_path: Path) -> tuple[abc.AbcModel, abc.AbcModel]:
    if isinstance(src, bytes):
        path = tmp_path / "in.abc"
        path.write_bytes(src)
        src = path
    back = gltf_round_trip(src, tmp_path)[""]
    return retromesh.read(src), retromesh.read(back)


EXAMPLES = [pytest.param(p, id=p.name) for p in sorted((ROOT / "examples" / "lithtech").glob("*.abc"))
            if lithtech.sniff_version(p.read_bytes()[:64]) != 6]


@pytest.mark.parametrize("path", EXAMPLES + corpus_params("abc", "*.abc"))
def test_files_survive_gltf(path, tmp_path):
    if lithtech.sniff_version(path.read_bytes()[:64]) == 6:
        pytest.skip("v6 has its own layout: tests/test_lithtech_v6_write.py")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)    # files with > 4 weights per vertex
        doc, back = round_trip(path, tmp_path)
    assert differences(summary(doc), summary(back)) == {}


@pytest.mark.parametrize("version", [9, 10, 11, 12, 13])
def test_samples_survive_gltf(version, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)     # nothing may be lost, nothing approximated
        doc, back = round_trip(samples.sample_bytes(version), tmp_path)
    assert differences(summary(doc), summary(back)) == {}


# -- what a Blender import + export does to the glTF (glTF-Blender-IO 4.2) -------------------
def blenderish(scene, *, keep_node_extras: bool = True, resample_fps: float | None = None):
    """The scene as Blender would give it back: every scene's nodes in one scene (the importer
    brings all nodes in), no animation extras (the importer drops them), optionally no node
    extras (exported without ``export_extras``) and keys sampled per frame."""
    from retromesh.scene import Channel
    for _, roots in scene.extra_scenes:
        scene.roots.extend(r for r in roots if r not in scene.roots)
    scene.extra_scenes = []
    for a in scene.animations:
        a.extras = {}
        if resample_fps:
            end = max(float(c.times[-1]) for c in a.channels)
            frames = np.arange(0, int(np.floor(end * resample_fps + 1e-9)) + 1) / resample_fps
            a.channels = [drop_repeats(Channel(c.node, c.path, frames, c.sample(frames),
                                                c.interpolation)) for c in a.channels]
    rng = np.random.default_rng(1)
    for m in scene.meshes:          # each face corner's normal a few 1e-4 off, as Blender writes
        for p in m.primitives:
            n = p.normals + rng.normal(scale=2e-4, size=p.normals.shape)
            p.normals = (n / np.linalg.norm(n, axis=1, keepdims=True)).astype(np.float32)
    if not keep_node_extras:
        for n in scene.nodes:
            n.extras = {k: v for k, v in n.extras.items() if k == "abc_socket"}
    return scene


@pytest.mark.parametrize("keep_node_extras", [True, False])
def test_blender_like_scene_keeps_lods_and_animation_data(keep_node_extras, tmp_path):
    doc = samples.build_sample(12)
    glb = tmp_path / "m.glb"
    retromesh.save(lithtech.scene.to_scene(doc), glb)
    sc = blenderish(retromesh.load(glb), keep_node_extras=keep_node_extras)
    sc.animations.reverse()                         # Blender exports actions sorted by name
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        back = abc.read(retromesh.binio.Reader(abc.write(lithtech.scene.from_scene(sc))))
    diff = differences(summary(doc), summary(back))
    if not keep_node_extras:
        # node flags live in node extras only (Blender: bone custom properties, export_extras)
        assert [(n.name, n.child_count) for n in back.nodes] == \
            [(n.name, n.child_count) for n in doc.nodes]
        diff.pop("nodes")
    assert diff == {}


def test_per_frame_keys_come_back_at_the_file_key_times(tmp_path):
    doc = samples.build_sample(12)
    glb = tmp_path / "m.glb"
    retromesh.save(lithtech.scene.to_scene(doc), glb)
    sc = blenderish(retromesh.load(glb), resample_fps=24.0)
    assert len(sc.animations[1].channels[0].times) == 8          # 0..291.7 ms, not 300 ms
    with pytest.warns(LossWarning, match="sampled at the 2 key times of the original"):
        back = abc.read(retromesh.binio.Reader(abc.write(lithtech.scene.from_scene(sc))))
    assert differences(summary(doc), summary(back)) == {}
    for a0, a1 in zip(doc.animations, back.animations):
        dots = np.abs((a0.transforms["rotation"] * a1.transforms["rotation"]).sum(-1))
        assert np.abs(dots - 1).max() < 1e-2


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(times=st.lists(st.integers(0, 3_600_000), min_size=3, max_size=3, unique=True))
def test_any_key_times_come_back_to_the_millisecond(times, tmp_path):
    doc = samples.build_sample(12)
    doc.animations[0].key_times = np.array(sorted(times), "<u4")
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        _, back = round_trip(abc.write(doc), tmp_path)
    assert differences(summary(doc), summary(back)) == {}


def test_scene_extras_live_on_the_gltf_scene(tmp_path):
    """Blender's importer and exporter keep the extras of the glTF scene, not the root's."""
    import json
    import struct
    glb = tmp_path / "m.glb"
    retromesh.convert(ROOT / "examples" / "lithtech" / "model_v12.abc", glb)
    data = glb.read_bytes()
    js = json.loads(data[20:20 + struct.unpack_from("<I", data, 12)[0]])
    assert "extras" not in js and js["scenes"][js.get("scene", 0)]["extras"]["abc_version"] == 12
    assert retromesh.load(glb).extras["abc_version"] == 12
