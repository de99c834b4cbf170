"""LithTech LTA text models and LTC (compressed LTA): byte round trips of our own writer's
text and of any layout the grammar allows, ModelEdit's layout, glTF both ways (an unedited trip
gives the text back), .abc -> .lta -> .abc counts, hostile input (line and column), the LTC
codec and its bomb limit. Fixtures are made by our own writers."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import retromesh
from helpers.cli import run
from helpers.gltfcheck import assert_valid
from retromesh import FormatError, LossWarning, NoSceneError
from retromesh.binio import Reader
from retromesh.errors import LimitError
from retromesh.formats import lithtech
from retromesh.formats.lithtech import lta, lta_model, lta_scene, ltc, samples


def _text() -> bytes:
    return samples.lta_sample()


# -- the text: grammar, layout, byte round trips --------------------------------------------
def test_sample_text_round_trips_and_is_modeledit_layout():
    text = _text()
    doc = lta.parse(text)
    assert lta.write(doc) == text
    assert text.startswith(b"\n(lt-model-0 \n\t(on-load-cmds \n\t\t(\n\t\t\t(anim-bindings ")
    assert text.endswith(b"\t\t)\n\t)\n)\n")
    assert b"(set-global-radius 1.500000 )" in text and b'("torso" 2 )' in text


def test_modeledit_layout_rules():
    # CLTAWriter: "\n"+tabs before a list after a value, "\t" before a list that follows a
    # closed list or opens a list of lists, a space after every value, ")\n" + (depth-1) tabs
    # after every list (ModelEdit's files show the "(\t(" of a list of lists)
    out = lta.write(lta.modeledit_text([[b"a", [b"b", 1, 2.5], [b"c", "s"], [[1.0, -0.0]]]]))
    assert out == (b'\n(a \n\t(b 1 2.500000 )\n\t(c "s" )\n\t(\t(1.000000 -0.000000 )\n\t)\n)\n')


_atom = st.one_of(st.from_regex(rb"[A-Za-z0-9_.+\-]{1,8}", fullmatch=True),
                  st.from_regex(rb'"[^"]{0,6}"', fullmatch=True))
_space = st.from_regex(rb"[ \t\r\n]{0,4}", fullmatch=True)
_tree = st.recursive(_atom, lambda kids: st.lists(kids, max_size=5), max_leaves=40)


def _layout(item, spaces) -> bytes:
    if isinstance(item, bytes):
        return item
    parts = [b"("]
    for k in item:
        parts.append(next(spaces))
        parts.append(_layout(k, spaces))
    parts.append(next(spaces) + b")")
    return b"".join(parts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_tree.filter(lambda t: isinstance(t, list)), min_size=1, max_size=3),
       st.lists(_space, min_size=1, max_size=64))
def test_any_whitespace_comes_back_byte_for_byte(trees, spaces):
    ring = iter(spaces * 400)
    text = b"".join(next(ring) + _layout(t, ring) for t in trees) + next(ring)
    doc = lta.parse(text)
    assert lta.write(doc) == text
    assert sum(isinstance(x, lta.Lst) for x in lta.tree(doc)) == len(trees)


def test_a_stray_close_at_the_top_is_kept_as_the_engine_ignores_it():
    text = b"(lt-model-0 (hierarchy (children ())))\n)\n"
    doc = lta.parse(text)
    assert lta.write(doc) == text and len(lta.tree(doc)) == 1


# -- hostile text ---------------------------------------------------------------------------
def _error(text: bytes, cls=FormatError) -> FormatError:
    with pytest.raises(cls) as e:
        lithtech.lta_info(lta.parse(text, "bad.lta"))
    assert e.value.offset is not None and "line" in (e.value.path or ""), e.value
    return e.value


def test_unbalanced_and_truncated_text_name_line_and_column():
    # the innermost list left open
    assert _error(b"(lt-model-0\n  (hierarchy (children ())").path == "line 2, column 3"
    err = _error(b'(a\n  (name "unterminated)\n')
    assert err.path == "line 2, column 9" and "string" in err.expected
    for cut in range(1, len(_text()), 997):
        try:
            lithtech.lta_info(lta.parse(_text()[:cut]))
        except FormatError as exc:
            assert exc.path and exc.path.startswith("line")


def test_deep_nesting_is_refused_without_recursion():
    err = _error(b"(" * 100000 + b")" * 100000, LimitError)
    assert err.path == f"line 1, column {lta.MAX_DEPTH + 1}"


def test_bad_numbers_name_line_and_column():
    text = _text().replace(b"(set-global-radius 1.500000 )", b"(set-global-radius 1.5x )")
    err = _error(text)
    line = text[:err.offset].count(b"\n") + 1
    assert err.path.startswith(f"line {line}, ") and text[err.offset:].startswith(b"1.5x")
    with pytest.raises(FormatError, match="line"):
        retromesh.load(text, format="lta")


def test_long_values_are_refused():
    with pytest.raises(FormatError, match="1023"):
        lta.parse(b"(a " + b"x" * 2000 + b")")


# -- glTF both ways -------------------------------------------------------------------------
def test_lta_to_glb_and_back_is_byte_identical(tmp_path):
    src = tmp_path / "model.lta"
    src.write_bytes(_text())
    glb = tmp_path / "model.glb"
    retromesh.convert(src, glb)
    info = assert_valid(glb)
    assert info["hasSkins"] and info["animationCount"] == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", LossWarning)
        retromesh.convert(glb, tmp_path / "back.lta")
    assert (tmp_path / "back.lta").read_bytes() == src.read_bytes()
    retromesh.convert(glb, tmp_path / "back.ltc")
    assert ltc.decompress((tmp_path / "back.ltc").read_bytes()) == src.read_bytes()


def test_lta_and_ltc_wear_the_skins_an_abc_there_would(tmp_path):
    from retromesh.formats.lithtech import dtx, dtx_pixels
    models = tmp_path / "Chars" / "Models"
    models.mkdir(parents=True)
    (models / "hero.lta").write_bytes(_text())
    (models / "hero2.ltc").write_bytes(ltc.compress(_text()))
    rgba = np.full((8, 8, 4), 255, np.uint8)
    for name in ("hero", "hero2"):
        (tmp_path / "Chars" / "Skins").mkdir(exist_ok=True)
        (tmp_path / "Chars" / "Skins" / f"{name}.dtx").write_bytes(
            dtx.write(dtx_pixels.from_rgba(rgba, bpp=dtx.BPP_DXT1)))
    for src in (models / "hero.lta", models / "hero2.ltc"):
        scene = retromesh.load(src)
        assert scene.textures and scene.materials[0].base_color_texture is not None
        glb = tmp_path / (src.stem + ".glb")
        retromesh.convert(src, glb)
        assert_valid(glb)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LossWarning)
            retromesh.convert(glb, tmp_path / ("back" + src.suffix))
        assert (tmp_path / ("back" + src.suffix)).read_bytes() == src.read_bytes()


def test_an_edited_scene_is_written_as_new_modeledit_text(tmp_path):
    src = tmp_path / "model.lta"
    src.write_bytes(_text())
    sc = retromesh.load(src)
    for m in sc.meshes:
        for p in m.primitives:
            p.positions = p.positions * 2.0
    with pytest.warns(LossWarning) as caught:
        doc = lta_scene.from_scene(sc)
    assert any("differs from the LTA text" in str(w.message) for w in caught)
    new = lta.write(doc)
    assert new != _text() and new.startswith(b"\n(lt-model-0 ")
    before, after = (lithtech.lta_info(lta.parse(t)) for t in (_text(), new))
    assert {k: v for k, v in before.items() if k not in ("tokens", "lists")} == \
        {k: v for k, v in after.items() if k not in ("tokens", "lists")}


def test_kept_text_in_extras_is_checked():
    assert lta_scene.unpack("not base64!") is None
    assert lta_scene.unpack(lta_scene.pack(b"(a)")) == b"(a)"
    import base64
    import zlib
    bomb = base64.b64encode(zlib.compress(b"\0" * (lta.MAX_TEXT + 10))).decode()
    assert lta_scene.unpack(bomb) is None


# -- .abc <-> .lta ----------------------------------------------------------------------------
@pytest.mark.parametrize("version", [9, 12, 13, 6])
def test_abc_to_lta_to_abc_keeps_every_count(version, tmp_path):
    src = tmp_path / "m.abc"
    src.write_bytes(samples.sample_bytes(version))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)     # v6 morph targets
        retromesh.convert(src, tmp_path / "m.lta")
    back = tmp_path / "back.abc"
    retromesh.convert(tmp_path / "m.lta", back)
    was = lithtech.info(retromesh.read(src))
    now = lithtech.info(retromesh.read(back))
    if version == 6:       # a v6 model becomes v12 records (LTA describes those)
        assert now["nodes"] == was["nodes"] and now["triangles"] == was["triangles"]
        assert now["animations"] == was["animations"] and now["keyframes"] == was["keyframes"]
        return
    assert {k: v for k, v in now.items() if k != "version"} == \
        {k: v for k, v in was.items() if k != "version"}


def test_lta_records_match_the_abc_values():
    model = samples.build_sample(12)
    back = lta_model.to_model(lta.parse(lta.write(lta_model.from_model(model))))
    for p, q in zip(model.pieces, back.pieces):
        for a, b in zip(p.lods, q.lods):
            np.testing.assert_allclose(a.vertices["location"], b.vertices["location"], atol=1e-6)
            np.testing.assert_array_equal(a.faces["vertex"], b.faces["vertex"])
            np.testing.assert_allclose(a.faces["uv"], b.faces["uv"], atol=1e-6)
            np.testing.assert_allclose(a.weights["bias"], b.weights["bias"], atol=1e-6)
            np.testing.assert_allclose(a.weights["location"], b.weights["location"], atol=1e-4)
    assert [n.flags for n in model.nodes] == [n.flags for n in back.nodes]
    assert [s.name for s in model.sockets] == [s.name for s in back.sockets]
    for a, b in zip(model.animations, back.animations):
        assert a.key_strings == b.key_strings and list(a.key_times) == list(b.key_times)
        assert a.interpolation_ms == b.interpolation_ms
        np.testing.assert_allclose(a.transforms["rotation"], b.transforms["rotation"], atol=1e-6)


def test_files_without_the_wrapper_read_alike():
    text = _text()
    head = b"\n(lt-model-0 "
    assert text.startswith(head)
    # a Maya exporter's layout: file-info, then the model's lists at the top
    stripped = b'(file-info (filename "x.lta"))' + text[len(head):text.rindex(b")")]
    keys = ("nodes", "pieces", "vertices", "weights", "animations", "sockets", "anim bindings")
    a = lithtech.lta_info(lta.parse(stripped))
    b = lithtech.lta_info(lta.parse(text))
    assert {k: a[k] for k in keys} == {k: b[k] for k in keys}


def test_a_render_style_reads_writes_back_and_has_no_scene(tmp_path):
    # RenderStylesEditor saves render styles in the same grammar (laid out as ModelEdit does):
    # they read, write back, info and check as text, and convert to nothing, saying why
    text = lta.write(lta.modeledit_text([[b"renderstyle", b"Nameless", [
        b"renderstates", [b"clipmode", b"RENDERSTYLE_FULLCLIP"]],
        [b"lightmaterial", [b"ambient", 1.0, 1.0, 1.0, 1.0]]]]))
    f = tmp_path / "rs_plain.lta"
    f.write_bytes(text)
    doc = retromesh.read(f)
    assert retromesh.to_bytes(doc) == text and lta.kind(doc) == "render style"
    assert lithtech.lta_info(doc)["kind"] == "render style"
    assert lithtech.lta_check(doc) == []
    with pytest.raises(NoSceneError, match="render style"):
        retromesh.convert(f, tmp_path / "x.glb")
    ltc_file = tmp_path / "rs_plain.ltc"
    retromesh.convert(f, ltc_file)
    assert retromesh.to_bytes(retromesh.read(ltc_file).lta) == text
    assert run("check", f).exit_code == 0


# -- LTC ---------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=3000) | st.builds(lambda a, n: a * n, st.binary(min_size=1, max_size=5),
                                            st.integers(1, 900)))
def test_ltc_codec_round_trips(data):
    packed = ltc.compress(data)
    assert packed[:4] == b"\0\0\0\0"
    assert ltc.decompress(packed) == data


def test_ltc_file_round_trips_and_keeps_another_encoders_stream():
    text = _text()
    packed = ltc.compress(text)
    doc = ltc.read(Reader(packed))
    assert ltc.write(doc) == packed and lta.write(doc.lta) == text
    other = packed + b"\0"                 # a stream with its end marker padded out
    assert ltc.write(ltc.read(Reader(other))) == other
    doc.lta = lta.parse(text.replace(b"1.500000", b"2.500000"))
    assert ltc.decompress(ltc.write(doc)) == text.replace(b"1.500000", b"2.500000")


def test_ltc_bomb_and_broken_streams_are_refused(monkeypatch):
    packed = ltc.compress(b"(" + b"a" * 5000 + b")")
    monkeypatch.setattr(ltc, "MAX_TEXT", 1000)
    with pytest.raises(LimitError) as e:
        ltc.decompress(packed, "bomb.ltc")
    assert e.value.offset is not None
    monkeypatch.undo()
    with pytest.raises(FormatError, match="version 0"):
        ltc.decompress(b"\1\0\0\0" + packed[4:])
    with pytest.raises(FormatError, match="already decoded"):
        # a span from window position 5 before any byte was decoded
        ltc.decompress(b"\0\0\0\0" + bytes([0b0000_0000, 0b0001_0100, 0b0000_0000]))
    for cut in range(4, len(packed), 7):
        try:
            ltc.decompress(packed[:cut])
        except FormatError as exc:
            assert exc.offset is not None
