"""LithTech .abc: a model converted to GLB and back without an edit is the same bytes (issue 32,
docs/lossless.md): the examples, every version's sample and the files assembled byte by byte
after the documented layout (tests/test_lithtech_layout.py, "another exporter"). An edited key
changes its node's keys only; the GLB stays valid (Khronos validator 0/0)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import retromesh
from conftest import EXAMPLES
from helpers.exact import plain_trip
from retromesh import LossWarning
from retromesh.formats import lithtech
from retromesh.formats.lithtech import samples
from test_lithtech_layout import v6_file, v9_file

FILES = {p.name: (lambda p=p: p.read_bytes()) for p in sorted((EXAMPLES / "lithtech").glob("*.abc"))}
FILES.update({f"sample_{k.replace(':', '_')}.abc": (lambda d=d: retromesh.to_bytes(d))
              for k, d in samples.documents().items() if k.split(":")[0] == "abc"})  # (not dtx)
FILES.update({f"layout_v{v}.abc": (lambda v=v: v9_file(v)) for v in (9, 10, 11, 12, 13)})
FILES["layout_v6.abc"] = v6_file


@pytest.mark.parametrize("name", FILES)
def test_unedited_model_comes_back_byte_for_byte(name, tmp_path):
    src = tmp_path / "src" / name
    src.parent.mkdir()
    src.write_bytes(FILES[name]())
    assert plain_trip(src, tmp_path, validate=True) == {}


def test_moved_key_changes_that_node_only(tmp_path):
    src = EXAMPLES / "lithtech" / "model_v12.abc"
    glb = tmp_path / "m.glb"
    retromesh.convert(src, glb)
    scene = retromesh.load(glb)
    c = next(c for c in scene.animations[0].channels
             if c.path == "translation" and scene.nodes[c.node].name == "arm_l")
    c.values[1] = c.values[1] + np.float32(0.125)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        retromesh.save(scene, tmp_path / "back.abc")
    was, now = retromesh.read(src), retromesh.read(tmp_path / "back.abc")
    for a, b in zip(was.sections, now.sections):
        if type(a).__name__ != "AnimationSection":
            assert _same(a, b), type(a).__name__
    names = [n.name for n in was.nodes]
    k = names.index(b"arm_l")
    for ai, (x, y) in enumerate(zip(was.animations, now.animations)):
        for j in range(len(names)):
            if ai == 0 and j == k:
                continue
            assert x.transforms[j].tobytes() == y.transforms[j].tobytes(), (ai, names[j])
    moved = now.animations[0].transforms[k]["location"][1] - was.animations[0].transforms[k]["location"][1]
    assert np.abs(moved).max() == pytest.approx(0.125, abs=1e-5)


def _same(a, b) -> bool:
    from helpers.roundtrip import docs_equal
    return docs_equal(a, b)


@pytest.mark.parametrize("name", ["model_v12.abc", "model_v6.abc"])
def test_glb_without_records_still_converts_back(name, tmp_path):
    """A GLB of the previous release (no record): written as before, from the scene."""
    glb = tmp_path / "m.glb"
    retromesh.convert(EXAMPLES / "lithtech" / name, glb)
    scene = retromesh.load(glb)
    assert [scene.extras.pop(k, None) for k in ("abc_exact", "abc_rows")] != [None, None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        retromesh.save(scene, tmp_path / name)
    was, now = retromesh.read(EXAMPLES / "lithtech" / name), retromesh.read(tmp_path / name)
    assert lithtech.info(was) == lithtech.info(now)
    assert retromesh.to_bytes(now) != retromesh.to_bytes(was)      # recomputed, as before
