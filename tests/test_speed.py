"""Start-up work (issue #15): what a command imports, and the writers' fast paths giving the
same output as before. Timings live in benchmarks/, never here."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import retromesh
from retromesh import registry

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = [m for m in registry.FORMAT_MODULES if m != "retromesh.gltf"]
GLTF_READING = ("pygltflib", "dataclasses_json", "marshmallow")


def _run(code: str, tmp_path: Path):
    """The JSON a fresh interpreter running ``code`` prints last."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, env=env,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _modules_after(code: str, tmp_path: Path) -> set[str]:
    """The modules a fresh interpreter has imported after ``code``."""
    return set(_run(textwrap.dedent(code) + "\nimport sys, json\n"
                    "print(json.dumps(sorted(sys.modules)))\n", tmp_path))


def _loaded_families(mods: set[str]) -> set[str]:
    return {m for m in registry.FORMAT_MODULES if m in mods}


def test_reading_one_family_imports_only_that_family(tmp_path):
    mods = _modules_after(f"""
        import retromesh
        doc = retromesh.read({str(ROOT / 'examples' / 'crate.b3d')!r})
        assert retromesh.to_bytes(doc)
    """, tmp_path)
    assert _loaded_families(mods) == {"retromesh.formats.b3d"}
    assert not mods & set(GLTF_READING)


def test_writing_glb_imports_no_gltf_reading_library(tmp_path):
    mods = _modules_after(f"""
        import retromesh
        retromesh.convert({str(ROOT / 'examples' / 'crate.b3d')!r}, "crate.glb")
    """, tmp_path)
    assert (tmp_path / "crate.glb").is_file()
    assert _loaded_families(mods) == {"retromesh.formats.b3d", "retromesh.gltf"}
    assert not mods & set(GLTF_READING)
    assert "retromesh.gltf.reader" not in mods


def test_formats_still_loads_every_family(tmp_path):
    mods = _modules_after("import retromesh; retromesh.formats()", tmp_path)
    assert _loaded_families(mods) == set(registry.FORMAT_MODULES)


def test_format_index_matches_what_each_module_registers(tmp_path):
    """FORMAT_INDEX names, for every format name and extension, the one module registering all
    the formats that claim it (reading a file then imports that module alone)."""
    claims = _run("""
        import importlib, json
        from retromesh import registry
        claims = {}
        for mod in registry.FORMAT_MODULES:
            before = set(registry._FORMATS)
            importlib.import_module(mod)
            for name in set(registry._FORMATS) - before:
                f = registry._FORMATS[name]
                for key in (name, *f.extensions):
                    claims.setdefault(key, set()).add(mod)
        print(json.dumps({k: sorted(v) for k, v in claims.items()}))
    """, tmp_path)
    assert {k: [v] for k, v in registry.FORMAT_INDEX.items()} == claims


def _example(ext: str) -> str | None:
    found = sorted((ROOT / "examples").rglob(f"*.{ext}"))
    return str(found[0]) if found else None


@pytest.mark.parametrize("ext,junk", [(e, j) for e in ("b3d", "vxl", "hva", "obj", "msh", "glb",
                                                       "solid", "xyz") for j in (False, True)])
def test_lazy_detection_matches_eager(ext, junk, tmp_path):
    """detect() with only the extension's family loaded picks what it picks with all loaded
    (a real file of the type, and bytes no format recognises)."""
    source = None if junk else _example(ext)
    if not junk and source is None:
        pytest.skip(f"no example .{ext}")
    lazy, eager = _run(f"""
        import json, retromesh
        from retromesh import registry
        head = open({source!r}, "rb").read(4096) if {source!r} else bytes(range(64))
        def pick():
            try:
                return registry.detect(head, "x.{ext}").name
            except retromesh.UnknownFormatError as exc:
                return "unknown"
        lazy = pick()
        registry._ensure_loaded()
        print(json.dumps([lazy, pick()]))
    """, tmp_path)
    assert lazy == eager


def _as_pygltflib(g, value):
    """The same object tree built from pygltflib's classes."""
    from retromesh.gltf import model
    if isinstance(value, (model._Model, model.Attributes)):
        return getattr(g, type(value).__name__)(
            **{k: _as_pygltflib(g, v) for k, v in vars(value).items()})
    if isinstance(value, list):
        return [_as_pygltflib(g, v) for v in value]
    return value


def test_gltf_model_json_is_what_pygltflib_writes():
    """The writer's own JSON model serialises as pygltflib's did (fields, defaults, None and
    empty values dropped, ``extensions`` payloads such as ``KHR_materials_unlit: {}`` kept)."""
    import warnings
    g = pytest.importorskip("pygltflib")
    from make_examples_import import make_examples
    from retromesh.gltf.writer import _json_bytes, scene_to_gltf
    from test_gltf import _scene_with_everything
    seen = b""
    for scene in (_scene_with_everything(), make_examples.crate_scene()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            doc = scene_to_gltf(scene, embed_images=False)
        ours = _json_bytes(doc.gltf)
        theirs = _as_pygltflib(g, doc.gltf).gltf_to_json(separators=(",", ":"), indent=None)
        assert ours == theirs.encode()
        seen += ours
    assert b'"KHR_materials_unlit":{}' in seen
