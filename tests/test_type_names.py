"""The ``$type`` names of ``retromesh dump`` JSON and of documents kept in GLB extras are
``"<family>:<Class>"`` and do not move with modules; the module-path names written before
(``"retromesh.formats.wolfire.phxbn:PhxbnFile"``) are still read (``jsoncodec.OLD_MODULES``)."""
from __future__ import annotations

import dataclasses
import importlib
import json
import pkgutil
import struct
import sys
from pathlib import Path
from typing import Any

import pytest

import retromesh
from conftest import FAMILIES, ROOT
from helpers.cli import run
from retromesh import jsoncodec
from retromesh.formats.lugaru import animation as la, samples as lugaru_samples, skeleton as ls, solid

EX = ROOT / "examples"

#: where each class of the split Wolfire package lived (the names 0.1 wrote)
_WOLFIRE = {"retromesh.formats.lugaru.skeleton": "lugaru_skeleton",
            "retromesh.formats.lugaru.animation": "lugaru_animation",
            "retromesh.formats.lugaru.character": "lugaru_character",
            "retromesh.formats.lugaru.solid": "solid"}


#: modules whose classes came after the family names: no dump ever named them by module path
NEW_MODULES = {"retromesh.formats.lithtech.dtx", "retromesh.formats.lithtech.lta",
               "retromesh.formats.lithtech.ltc"}


def _old_name(new: str) -> str:
    """The module-path name the previous release wrote for the class ``new`` names."""
    cls = jsoncodec.class_of(new)
    assert cls is not None, new
    mod = cls.__module__
    if mod in NEW_MODULES:
        return new
    if mod.startswith("retromesh.formats.overgrowth."):
        mod = "retromesh.formats.wolfire." + mod.rsplit(".", 1)[1]
    elif mod in _WOLFIRE:
        mod = "retromesh.formats.wolfire." + _WOLFIRE[mod]
    assert mod in jsoncodec.OLD_MODULES, mod
    return f"{mod}:{cls.__qualname__}"


def _with_old_names(value: Any) -> Any:
    """``value`` (JSON, or JSON kept as a string in extras) with every ``$type`` old-style."""
    if isinstance(value, dict):
        out = {k: _with_old_names(v) for k, v in value.items()}
        if isinstance(value.get("$type"), str):
            out["$type"] = _old_name(value["$type"])
        return out
    if isinstance(value, list):
        return [_with_old_names(v) for v in value]
    if isinstance(value, str) and value.startswith("{") and "$type" in value:
        return json.dumps(_with_old_names(json.loads(value)), separators=(",", ":"))
    return value


def _family_classes(family: str) -> list[type]:
    pkg = importlib.import_module(f"retromesh.formats.{family}")
    for m in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"{pkg.__name__}.{m.name}")
    return [v for name, mod in list(sys.modules.items())
            if name.startswith(f"{pkg.__name__}.") and mod is not None
            for v in vars(mod).values()
            if isinstance(v, type) and dataclasses.is_dataclass(v) and v.__module__ == name]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_class_of_a_family_has_a_name_of_its_own(family):
    classes = _family_classes(family)
    assert classes
    names = {jsoncodec.type_name(c) for c in classes}
    assert len(names) == len(classes)               # unique within the family
    for c in classes:
        assert jsoncodec.type_name(c) == f"{family}:{c.__qualname__}"
        assert jsoncodec.class_of(jsoncodec.type_name(c)) is c


def test_names_that_are_no_class_read_as_none():
    for name in ("overgrowth:NoSuchThing", "nosuchfamily:PhxbnFile", "os:system", "json:loads",
                 "retromesh.formats.wolfire.nosuch:PhxbnFile", ":", ""):
        assert jsoncodec.class_of(name) is None
    with pytest.raises(retromesh.FormatError, match="known retromesh document type"):
        jsoncodec.decode({"$type": "os:system"})


def _documents() -> list[tuple[str, Any]]:
    out = []
    for family in FAMILIES:
        docs = importlib.import_module(f"retromesh.formats.{family}.samples").documents()
        out += [(f"{family}/{name}", doc) for name, doc in docs.items()]
    return out


@pytest.mark.parametrize(("name", "doc"), _documents(), ids=[n for n, _ in _documents()])
def test_dump_json_with_old_names_still_builds(name, doc, tmp_path):
    new = jsoncodec.encode(doc)
    assert ":" in new["$type"] and "." not in new["$type"].split(":")[0]
    old = _with_old_names(new)
    assert old["$type"].startswith("retromesh.formats.") or \
        jsoncodec.class_of(new["$type"]).__module__ in NEW_MODULES
    assert jsoncodec.encode(jsoncodec.decode(old)) == new
    fmt = retromesh.registry.format_of(doc)
    if fmt.write is None or not (fmt.extensions or fmt.folders):
        return                      # nothing `build` can name a file of (a material script)
    (tmp_path / "old.json").write_text(json.dumps(old))
    # an extensionless format is written into the folder it is found in (Data/Skeleton/...)
    target = tmp_path / "out" / (f"x.{fmt.extensions[0]}" if fmt.extensions
                                 else f"{fmt.folders[0]}/X")
    res = run("build", tmp_path / "old.json", "-o", target)
    assert res.exit_code == 0, res.output
    assert target.read_bytes() == retromesh.to_bytes(doc)


def _glb_with_old_names(src: Path, dst: Path) -> None:
    """``src`` as the previous release wrote it: the same GLB with old ``$type`` names kept
    in its extras (the JSON chunk rewritten, the binary chunk as it was)."""
    data = src.read_bytes()
    (length,) = struct.unpack_from("<I", data, 12)
    gltf = json.loads(data[20:20 + length])
    assert "$type" in json.dumps(gltf)
    text = json.dumps(_with_old_names(gltf), separators=(",", ":")).encode()
    assert b"retromesh.formats.wolfire." in text
    text += b" " * (-len(text) % 4)
    rest = data[20 + length:]
    dst.write_bytes(struct.pack("<III", 0x46546C67, 2, 12 + 8 + len(text) + len(rest))
                    + struct.pack("<II", len(text), 0x4E4F534A) + text + rest)


def test_overgrowth_glb_with_old_names_converts_back(tmp_path):
    files = {p.name: p for p in
             importlib.import_module("retromesh.formats.overgrowth.samples").write_example(tmp_path)}
    retromesh.convert(files["stick.phxbn"], tmp_path / "new.glb", mesh=files["stick.obj"],
                      animations=[files["walk.anm"]])
    _glb_with_old_names(tmp_path / "new.glb", tmp_path / "old.glb")
    # the kept documents are what makes the way back whole: read under the old names, they
    # give the very files the GLB of today gives (read as nothing, they would not)
    for name in ("new", "old"):
        retromesh.convert(tmp_path / f"{name}.glb", tmp_path / name / "stick.phxbn")
    for f in ("stick.phxbn", "walk.anm", "stick.obj"):
        assert (tmp_path / "old" / f).read_bytes() == (tmp_path / "new" / f).read_bytes()
    assert retromesh.read(tmp_path / "old" / "stick.phxbn").simple_ik == \
        retromesh.read(files["stick.phxbn"]).simple_ik


def test_lugaru_character_glb_with_old_names_converts_back(tmp_path):
    data = tmp_path / "Data"
    for d in ("Skeleton", "Models", "Animations"):
        (data / d).mkdir(parents=True)
    figure = ls.write(lugaru_samples.figure())
    walk = la.write(lugaru_samples.animation(4))
    (data / "Skeleton" / "BasicFigure").write_bytes(figure)
    (data / "Models" / "Body.solid").write_bytes(solid.write(lugaru_samples.body()))
    (data / "Animations" / "Walk").write_bytes(walk)
    retromesh.convert(data / "Skeleton" / "BasicFigure", tmp_path / "new.glb",
                      animations=[data / "Animations" / "Walk"])
    _glb_with_old_names(tmp_path / "new.glb", tmp_path / "old.glb")
    out = tmp_path / "out" / "Data" / "Skeleton" / "BasicFigure"
    retromesh.convert(tmp_path / "old.glb", out)
    assert out.read_bytes() == figure
    assert (out.parent.parent / "Animations" / "Walk").read_bytes() == walk
