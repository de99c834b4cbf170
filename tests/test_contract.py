"""The contract every registered format keeps, checked on each family's samples.

Every family's ``samples`` module gives the same API: ``documents()`` (format name -> a small
complete native document built with our own writers; ``"name:variant"`` for another layout of
one format), ``WITHOUT_SAMPLE`` (format name -> why it has none) and ``write_example(folder)``.
For every sample:

* lossless: the file read back writes the same bytes, and reading those gives an equal document;
* bad input: truncations, random byte flips and huge counts give only ``FormatError``;
* a format with ``to_scene`` gives a GLB the Khronos validator passes with 0 errors / 0 warnings.

A registered format with neither a sample nor a stated reason fails the suite.
"""
from __future__ import annotations

import importlib
import warnings
from types import ModuleType
from typing import Any

import pytest

import retromesh
from docequal import first_difference
from gltfcheck import assert_valid_many
from malformed import byte_flips, huge_count_variants, read_or_format_error, truncations
from retromesh import registry

#: formats registered outside the families' packages (no samples module), and why
NO_SAMPLE = {
    "glb": "glTF is the target of every conversion: tests/test_gltf_native.py",
    "gltf": "glTF is the target of every conversion: tests/test_gltf_native.py",
}

#: samples whose scene needs files beside them, and why (their own tests build those)
NO_SCENE_ALONE = {
    "lugaru-animation": "an animation holds joint positions only: its scene needs the skeleton "
                        "(tests/test_lugaru_native.py)",
    "overgrowth-xml": "a character XML names its rig, model and animations: its scene needs the "
                      "folder layout (tests/test_overgrowth_xml.py)",
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
    assert set(NO_SCENE_ALONE) <= sampled


def test_every_family_writes_its_example(tmp_path):
    for mod in family_samples():
        folder = tmp_path / mod.__name__.split(".")[-2]
        paths = mod.write_example(folder)
        assert paths and all(p.is_file() and p.parent == folder for p in paths), mod.__name__


@pytest.mark.parametrize("key", SAMPLES)
def test_round_trip_is_byte_identical(key):
    doc = SAMPLES[key]
    fmt = registry.format_of(doc)
    assert fmt.name == format_name(key)
    data = retromesh.to_bytes(doc)
    back = retromesh.read(data, format=fmt.name)
    assert retromesh.to_bytes(back) == data
    again = retromesh.read(data, format=fmt.name)
    assert first_difference(back, again) is None


@pytest.mark.filterwarnings("ignore")          # what a damaged file loses is not the point here
@pytest.mark.parametrize("key", SAMPLES)
def test_bad_input_gives_only_format_error(key):
    name = format_name(key)
    fmt = registry.get(name)
    data = sample_bytes(key)
    file = f"sample.{fmt.extensions[0] if fmt.extensions else name}"
    for cut in truncations(data, limit=160):
        read_or_format_error(data[:cut], file, name, scene=cut % 8 == 0)
    for variant in byte_flips(data, count=150):
        read_or_format_error(variant, file, name, scene=True)
    for _, variant in huge_count_variants(data, limit=60, endian=fmt.endian):
        read_or_format_error(variant, file, name)


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
