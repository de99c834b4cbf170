"""The contract every registered format keeps, checked on each family's samples.

Every family's ``samples`` module gives the same API: ``documents()`` (format name -> a small
complete native document built with our own writers, as read from its file; ``"name:variant"``
for another layout of one format), ``WITHOUT_SAMPLE`` (format name -> why it has none) and
``write_example(folder)``. For every sample:

* lossless: the sample's bytes read back give an equal document that writes the same bytes;
* found: its bytes under its extension are detected as its format;
* valid: the game's rules (``check``) find no error in it;
* bad input: truncations, huge counts and random byte flips give only ``FormatError``, when
  read and when converted to a scene;
* a format with ``to_scene`` gives a GLB the Khronos validator passes with 0 errors / 0 warnings;
* a format with ``from_scene`` too: the unedited trip ``file -> .glb -> file`` keeps every count
  ``info()`` reports (what the game uses; the families' own tests compare more).

A registered format with neither a sample nor a stated reason fails the suite.
"""
from __future__ import annotations

import importlib
import warnings
from types import ModuleType
from typing import Any

import pytest

import retromesh
from helpers.gltfcheck import assert_valid_many
from helpers.malformed import assert_malformed_safe, byte_flips, read_or_format_error
from helpers.roundtrip import differences, gltf_round_trip, native_round_trip
from retromesh import registry

#: formats registered outside the families' packages (no samples module), and why
NO_SAMPLE = {
    "glb": "glTF is the target of every conversion: tests/test_gltf_native.py",
    "gltf": "glTF is the target of every conversion: tests/test_gltf_native.py",
    "png": "an image of no game (retromesh.image): tests/test_image_png.py",
}

#: samples whose scene needs files beside them, and why (their own tests build those)
NO_SCENE_ALONE = {
    "lugaru-animation": "an animation holds joint positions only: its scene needs the skeleton "
                        "(tests/test_lugaru_native.py)",
    "overgrowth-xml": "a character XML names its rig, model and animations: its scene needs the "
                      "folder layout (tests/test_overgrowth_xml.py)",
}


#: ``info()`` counts an unedited trip through glTF may change, and why
TRIP_DROPS = {
    "cms": {"trailing bytes": "bytes after the collision mesh are not the game's data: kept "
                              "by the native round trip, not carried through glTF"},
}


#: samples the game's rules find errors in, and why
CHECK_ERRORS = {
    "sav:v2": "the game reads only version-3 saves: the older layout is read and written back "
              "for what it holds",
    "overgrowth-xml": "the files the character names are not beside the sample",
}


def family_samples() -> list[ModuleType]:
    """The ``samples`` module of every family package that registers formats."""
    return [importlib.import_module(f"{m}.samples") for m in registry.FORMAT_MODULES
            if m.startswith("retromesh.formats.")]


def all_samples() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mod in family_samples():
        docs = mod.documents()
        assert not docs.keys() & out.keys(), f"{mod.__name__}: a sample named twice"
        out.update(docs)
    return out


SAMPLES = all_samples()


def format_name(key: str) -> str:
    return key.split(":", 1)[0]


def sample_bytes(key: str) -> bytes:
    return retromesh.to_bytes(SAMPLES[key])


def test_every_registered_format_has_a_sample_or_a_reason():
    without = dict(NO_SAMPLE)
    for mod in family_samples():
        assert callable(mod.documents) and callable(mod.write_example), mod.__name__
        without.update(mod.WITHOUT_SAMPLE)
    registered = {f.name for f in registry.formats()}
    sampled = {format_name(k) for k in SAMPLES}
    assert registered - sampled - without.keys() == set(), "formats with no sample and no reason"
    assert (sampled | without.keys()) - registered == set(), "samples of unregistered formats"
    assert sampled & without.keys() == set(), "a format both sampled and excused"
    assert set(NO_SCENE_ALONE) <= sampled and set(CHECK_ERRORS) <= SAMPLES.keys()


def test_every_family_writes_its_example(tmp_path):
    for mod in family_samples():
        folder = tmp_path / mod.__name__.split(".")[-2]
        paths = mod.write_example(folder)
        assert paths and all(p.is_file() and p.parent == folder for p in paths), mod.__name__


@pytest.mark.parametrize("key", SAMPLES)
def test_round_trip_is_byte_identical(key):
    doc = SAMPLES[key]
    assert registry.format_of(doc).name == format_name(key)
    native_round_trip(doc, format_name(key))      # a sample is a document as read from its file


@pytest.mark.parametrize("key", SAMPLES)
def test_sample_is_detected_and_breaks_no_rule(key):
    fmt = registry.get(format_name(key))
    data = sample_bytes(key)
    if fmt.extensions:
        head = data[:registry.SNIFF_BYTES]
        assert registry.detect(head, f"sample.{fmt.extensions[0]}").name == fmt.name
    if fmt.check is not None:
        errors = [f for f in fmt.check(SAMPLES[key]) if getattr(f, "is_error", False)]
        assert bool(errors) == (key in CHECK_ERRORS), errors


@pytest.mark.filterwarnings("ignore")          # what a damaged file loses is not the point here
@pytest.mark.parametrize("key", SAMPLES)
def test_bad_input_gives_only_format_error(key):
    name = format_name(key)
    fmt = registry.get(name)
    data = sample_bytes(key)
    file = f"sample.{fmt.extensions[0] if fmt.extensions else name}"
    assert_malformed_safe(data, file, name, scene=True, endian=fmt.endian)
    for variant in byte_flips(data, count=150):
        read_or_format_error(variant, file, name, scene=True)


def test_every_scene_is_a_valid_glb(tmp_path):
    paths = []
    for key, doc in SAMPLES.items():
        fmt = registry.get(format_name(key))
        if fmt.to_scene is None or fmt.name in NO_SCENE_ALONE:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")        # e.g. an animation without its skeleton
            scene = registry.convert_to_scene(fmt, doc, f"sample.{fmt.name}")
        path = tmp_path / f"{key.replace(':', '_')}.glb"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")        # textures named but not beside the sample
            retromesh.save(scene, path)
        paths.append(path)
    assert len(paths) >= 15
    assert_valid_many(paths)


TRIPS = [k for k in SAMPLES if registry.get(format_name(k)).supports()["from_scene"]
         and format_name(k) not in NO_SCENE_ALONE]


@pytest.mark.filterwarnings("ignore")     # samples converted alone (no skeleton, no texture)
@pytest.mark.parametrize("key", TRIPS)
def test_unedited_trip_through_gltf_keeps_the_counts(key, tmp_path):
    fmt = registry.get(format_name(key))
    src = tmp_path / f"sample.{fmt.extensions[0] if fmt.extensions else 'bin'}"
    src.write_bytes(sample_bytes(key))
    back = gltf_round_trip(src, tmp_path, format=fmt.name, validate=False)[""]
    before = fmt.info(retromesh.read(src, format=fmt.name))
    after = fmt.info(retromesh.read(back, format=fmt.name))
    dropped = TRIP_DROPS.get(fmt.name, {})
    assert {k: v for k, v in differences(before, after).items() if k not in dropped} == {}
