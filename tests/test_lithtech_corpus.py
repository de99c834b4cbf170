"""Opt-in conformance over real LithTech files: ``.dtx``, ``.lta``, ``.ltc`` and ``.abc`` made
by LithTech's own tools and games, anywhere under ``$RETROMESH_CORPUS/lithtech`` (skipped when
there is none; none are committed here), and tables of real DTX headers in the layout of
DTX-Meta-Transfer's ``DTX properties - *.csv`` placed there too (every row is built by our
writer and checked). docs/lithtech.md says what was checked and what it gave."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from PIL import Image

import retromesh
from conftest import corpus_files, corpus_params
from helpers.cli import run
from helpers.dtx_headers import csv_headers, texture
from helpers.gltfcheck import assert_valid_many
from retromesh import NoSceneError
from retromesh.binio import Reader
from retromesh.formats.lithtech import dtx, dtx_pixels, lta

pytestmark = pytest.mark.corpus

FOLDER = "lithtech"
MODELS = ("**/*.lta", "**/*.ltc", "**/*.abc", "**/*.LTA", "**/*.LTC", "**/*.ABC")
TEXTURES = ("**/*.dtx", "**/*.DTX")


@pytest.mark.parametrize("path", corpus_params(FOLDER, *TEXTURES, *MODELS))
def test_reads_writes_back_byte_for_byte_and_checks_clean(path):
    data = path.read_bytes()
    doc = retromesh.read(path)
    assert retromesh.to_bytes(doc) == data
    res = run("check", path)
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("path", corpus_params(FOLDER, *TEXTURES))
def test_texture_to_png_and_back(path, tmp_path):
    doc = dtx.read(Reader(path.read_bytes()))
    png = tmp_path / "t.png"
    retromesh.convert(path, png)
    rgba = np.asarray(Image.open(png).convert("RGBA"))
    assert np.array_equal(rgba, dtx_pixels.to_rgba(doc))
    bpp = dtx.bpp_of(doc.header)
    if bpp != dtx.BPP_32 or not isinstance(doc.header, dtx.DtxHeader):
        return                         # the way back re-encodes: only 32-bit is lossless
    back = tmp_path / "t.dtx"
    retromesh.convert(png, back, save_options={"mips": doc.header.mip_count})
    again = dtx.read(Reader(back.read_bytes()))
    assert again.levels[0] == doc.levels[0]


def _is_model(path) -> bool:
    text = retromesh.read(path)
    if path.suffix.lower() == ".abc":
        return True
    return lta.kind(text.lta if hasattr(text, "lta") else text) == "model"


def test_models_to_gltf_and_back(tmp_path):
    files = corpus_files(FOLDER, *MODELS)
    if not files:
        pytest.skip("no LithTech corpus")
    outs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", retromesh.LossWarning)
        for i, f in enumerate(files):
            glb = tmp_path / f"{i}-{f.stem}.glb"
            if not _is_model(f):
                with pytest.raises(NoSceneError):
                    retromesh.convert(f, glb)
                continue
            retromesh.convert(f, glb)
            outs.append(glb)
            back = tmp_path / f"{i}-{f.stem}-back{f.suffix}"
            retromesh.convert(glb, back)
            assert back.read_bytes() == f.read_bytes(), f.name
    if outs:
        assert_valid_many(outs)


@pytest.mark.parametrize("path", corpus_params(FOLDER, "**/*.csv"))
def test_every_real_header_row_builds_reads_and_checks(path):
    rows, _ = csv_headers(path)
    if not rows:
        pytest.skip(f"{path.name} is no table of DTX headers")
    seen: set[str] = set()
    for name, header, light in rows:
        key = repr((header, light))
        if key in seen:
            continue
        seen.add(key)
        doc = texture(header, light)
        data = dtx.write(doc)
        back = dtx.read(Reader(data))
        assert back == doc and dtx.write(back) == data, name
        assert not [f for f in dtx.check(back) if f.is_error], name
        dtx_pixels.to_rgba(back)
