"""Nothing lost for Lost Saga on the plain path ``file -> .glb -> file``
(retromesh.convert both ways): every count ``info()`` reports, for the file and each companion
(``.skl``, ``.ani``), and the structure the game uses (bone names and parents, submeshes, mesh
bone list, control points, animation events, total time, tracks and their key times) come back
equal."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import retromesh
from conftest import ROOT, corpus_params
from helpers.blendersim import drop_repeats
from helpers.roundtrip import differences as summary_differences, gltf_round_trip
from retromesh import LossWarning, MissingTextureWarning, registry
from retromesh.formats.lostsaga import AniFile, CmsFile, MshFile, SklFile, samples
from retromesh.formats.lostsaga.common import ANIMATION_VER_COMP4, ANIMATION_VER_COMP8, ANIMATION_VER_DEFAULT

EXAMPLES = ROOT / "examples" / "lostsaga"


FORMATS = {MshFile: "msh", SklFile: "skl", AniFile: "ani", CmsFile: "cms"}


def summary(doc) -> dict:
    """Everything the round trip must keep, as plain values."""
    out = {f"info.{k}": v for k, v in registry.get(FORMATS[type(doc)]).info(doc).items()}
    if isinstance(doc, MshFile):
        out.update(submeshes=[(int(s["vertex_count"]), int(s["face_count"])) for s in doc.submeshes],
                   bone_names=doc.bone_names, mesh_type=doc.mesh_type,
                   control_points=[(c.type, c.bone) for c in doc.control_points or []])
    elif isinstance(doc, SklFile):
        out.update(bones=[(b.name, b.parent) for b in doc.bones], version=doc.version,
                   linked_skeleton=doc.linked_skeleton)
    elif isinstance(doc, AniFile):
        out.update(version=doc.version, total_time=doc.total_time,
                   events=[(e.type, e.info, round(e.time, 3)) for e in doc.events],
                   tracks=[(t.bone, t.weight, list(map(int, t.keys["time"]))) for t in doc.tracks])
    return out


def differences(a, b) -> dict:
    return summary_differences(summary(a), summary(b))


round_trip = gltf_round_trip        # src -> mid.glb -> back<suffix>: the written files by suffix


CASES = [
    pytest.param("column.msh", {"skeleton": "column.skl", "animations": ["column_wave.ani"]},
                 id="column.msh+skl+ani"),
    pytest.param("column_wave.ani", {"skeleton": "column.skl"}, id="column_wave.ani+skl"),
    pytest.param("column.skl", {}, id="column.skl"),
]


@pytest.mark.parametrize("name, companions", CASES)
def test_examples_survive_gltf(name, companions, tmp_path):
    load = {k: ([EXAMPLES / x for x in v] if isinstance(v, list) else EXAMPLES / v)
            for k, v in companions.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        warnings.simplefilter("ignore", MissingTextureWarning)   # no texture image in examples
        out = round_trip(EXAMPLES / name, tmp_path, **load)
    originals = {Path(name).suffix: EXAMPLES / name}
    if name.endswith(".msh"):            # a .msh comes back with its skeleton and animation
        originals[".skl"] = load["skeleton"]
        originals[".ani"] = load["animations"][0]
    assert set(originals) <= set(out)
    for suffix, path in originals.items():
        assert differences(retromesh.read(path), retromesh.read(out[suffix])) == {}, suffix


@pytest.mark.parametrize("path", corpus_params("lostsaga"))
def test_corpus_files_survive_gltf(path, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)    # no skeleton beside the meshes
        out = round_trip(path, tmp_path)
    back = out[path.suffix]
    assert differences(retromesh.read(path), retromesh.read(back)) == {}


@pytest.mark.parametrize("version", [ANIMATION_VER_DEFAULT, ANIMATION_VER_COMP4, ANIMATION_VER_COMP8])
def test_sample_animation_survives_gltf(version, tmp_path):
    msh, skl = samples.skinned_column()
    skl.linked_skeleton = b"biped_base"
    ani = samples.wave_animation(skl, version)
    ani.tracks = ani.tracks[::-1]                 # not in skeleton order
    ani.tracks[0].weight = 0.5
    for doc, name in ((msh, "s.msh"), (skl, "s.skl"), (ani, "s.ani")):
        retromesh.write(doc, tmp_path / name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        out = round_trip(tmp_path / "s.ani", tmp_path, skeleton=tmp_path / "s.skl")
        assert differences(ani, retromesh.read(out[".ani"])) == {}
        retromesh.convert(tmp_path / "mid.glb", tmp_path / "back2.skl")
    assert differences(skl, retromesh.read(tmp_path / "back2.skl")) == {}


@pytest.mark.parametrize("version, mesh_type", [(2000, 0), (2001, 2), (2002, 0)])
def test_sample_meshes_survive_gltf(version, mesh_type, tmp_path):
    doc = samples.full_mesh(version, mesh_type)
    retromesh.write(doc, tmp_path / "m.msh")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        out = round_trip(tmp_path / "m.msh", tmp_path)
    assert differences(doc, retromesh.read(out[".msh"])) == {}


# -- what a Blender import + export does to the glTF (glTF-Blender-IO 4.2) -------------------
def blenderish(scene, resample_fps: float | None = None):
    """No animation extras (Blender's importer drops them; the scene's it keeps), and keys
    sampled per frame as its exporter does by default."""
    from retromesh.scene import Channel
    for a in scene.animations:
        a.extras = {}
        if resample_fps:
            end = max(float(c.times[-1]) for c in a.channels)
            frames = np.arange(0, int(np.floor(end * resample_fps + 1e-9)) + 1) / resample_fps
            a.channels = [drop_repeats(Channel(c.node, c.path, frames, c.sample(frames),
                                                c.interpolation)) for c in a.channels]
    return scene


@pytest.mark.parametrize("fps", [None, 24.0])
def test_blender_like_scene_keeps_events_length_and_keys(fps, tmp_path):
    glb = tmp_path / "c.glb"
    retromesh.convert(EXAMPLES / "column.msh", glb, skeleton=EXAMPLES / "column.skl",
                      animations=[EXAMPLES / "column_wave.ani"])
    sc = blenderish(retromesh.load(glb), fps)
    if fps:
        assert max(len(c.times) for c in sc.animations[0].channels) == 25    # per frame, not 21
        assert min(len(c.times) for c in sc.animations[0].channels) == 2     # repeats dropped
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LossWarning)
        paths = retromesh.save(sc, tmp_path / "back.msh")
    resampled = [str(w.message) for w in caught if "sampled at the key times" in str(w.message)]
    assert len(resampled) == (1 if fps else 0)
    back = {p.suffix: p for p in paths}
    a0, a1 = retromesh.read(EXAMPLES / "column_wave.ani"), retromesh.read(back[".ani"])
    assert differences(a0, a1) == {}
    for t0, t1 in zip(a0.tracks, a1.tracks):
        assert np.abs(t0.keys["translation"] - t1.keys["translation"]).max() < 1e-2


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_track_key_times_come_back_to_the_millisecond(data, tmp_path):
    msh, skl = samples.skinned_column()
    ani = samples.wave_animation(skl, keys=4)
    for t in ani.tracks:
        t.keys["time"] = sorted(data.draw(st.lists(st.integers(0, 3_600_000), min_size=4,
                                                   max_size=4, unique=True)))
    ani.total_time = int(max(int(t.keys["time"][-1]) for t in ani.tracks))
    ani.events[0].time = float(data.draw(st.integers(0, ani.total_time)))
    for doc, name in ((skl, "s.skl"), (ani, "s.ani")):
        retromesh.write(doc, tmp_path / name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        out = round_trip(tmp_path / "s.ani", tmp_path, skeleton=tmp_path / "s.skl")
    assert differences(ani, retromesh.read(out[".ani"])) == {}


def test_submeshes_joined_by_an_exporter_are_cut_again(tmp_path):
    """Blender joins the primitives that share a material (here: none) into one."""
    from retromesh.scene import Primitive
    doc = samples.full_mesh(2000, mesh_type=0)
    doc.weights = doc.bone_names = None
    doc.vertex_mask &= ~0x18
    retromesh.write(doc, tmp_path / "m.msh")
    retromesh.convert(tmp_path / "m.msh", tmp_path / "m.glb")
    sc = retromesh.load(tmp_path / "m.glb")
    mesh = sc.meshes[0]
    prims, base, idx = mesh.primitives, 0, []
    for p in prims:
        idx.append(p.indices + base)
        base += len(p.positions)
    joined = Primitive(positions=np.concatenate([p.positions for p in prims]),
                       normals=np.concatenate([p.normals for p in prims]),
                       tangents=np.concatenate([p.tangents for p in prims]),
                       uvs=[np.concatenate([p.uvs[k] for p in prims]) for k in range(2)],
                       colors=np.concatenate([p.colors for p in prims]),
                       indices=np.concatenate(idx).astype(np.uint32))
    mesh.primitives = [joined]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        back = registry.get("msh").from_scene(sc)
    assert differences(doc, back) == {}
