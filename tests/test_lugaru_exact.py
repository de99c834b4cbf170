"""Unedited means identical (issue 32): every Lugaru example and corpus model through GLB and
back byte for byte: ``.solid`` models, and each skeleton with the animations the game plays on
it (written back in the game's layout, ``Data/Skeleton`` and ``Data/Animations``)."""
from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import retromesh
from conftest import CORPUS, corpus_files
from retromesh.formats.lugaru import samples

DATA = CORPUS / "lugaru" / "Data"
SOLIDS = corpus_files("solid", "*.solid") + corpus_files("lugaru/Data/Models", "*.solid")


def _trip(src: Path, target: Path, fmt: str | None = None, **options) -> list[Path]:
    target.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retromesh.convert(src, target.parent / "mid.glb", **options)
        return retromesh.convert(target.parent / "mid.glb", target, target_format=fmt)


def test_the_example_comes_back(tmp_path):
    (src,) = samples.write_example(tmp_path / "in")
    (back,) = _trip(src, tmp_path / "out" / src.name)
    assert back.read_bytes() == src.read_bytes()


@pytest.mark.skipif(not SOLIDS, reason=f"no Lugaru corpus at {CORPUS}")
def test_every_corpus_model_comes_back(tmp_path):
    differ = []
    for k, src in enumerate(SOLIDS):
        (back,) = _trip(src, tmp_path / str(k) / src.name)
        if back.read_bytes() != src.read_bytes():
            differ.append(src.name)
    assert not differ


def _paired(skeleton: Path, every: int) -> list[Path]:
    """Every ``every``-th of the animations the game plays on ``skeleton`` (Wolf* on the
    wolf's figures, the others on the rabbit's)."""
    wolf = "wolf" in skeleton.name.lower()
    anims = sorted(p for p in (DATA / "Animations").iterdir()
                   if p.name.lower().startswith("wolf") == wolf)
    return anims[::every]


@pytest.mark.skipif(not (DATA / "Skeleton").is_dir(), reason=f"no Lugaru corpus at {CORPUS}")
@pytest.mark.parametrize("name", ["BasicFigure", "BasicFigureLow", "BasicFigureWolf",
                                  "RabbitBelt"])
def test_every_corpus_skeleton_comes_back_with_its_animations(tmp_path, name):
    src = DATA / "Skeleton" / name
    anims = _paired(src, 6) if name != "RabbitBelt" else []
    out = tmp_path / "Data" / "Skeleton" / name
    written = _trip(src, out, "lugaru-skeleton", animations=anims)
    assert out.read_bytes() == src.read_bytes()
    back = {p.name: p for p in written}
    for a in anims:
        assert back[a.name].read_bytes() == a.read_bytes(), a.name
