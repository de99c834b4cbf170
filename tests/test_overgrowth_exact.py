"""Unedited means identical, edited means only the edit (issue 32): Overgrowth files through
GLB and back byte for byte on the plain path (companions included), and an edit changes what
it edits only (formats/overgrowth/exact.py, docs/lossless.md)."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import retromesh
from retromesh.batch import companions
from retromesh.errors import LossWarning
from retromesh.formats.overgrowth import samples
from retromesh.formats.overgrowth.exact import SOURCE_ATTRS, sources
from retromesh.formats.overgrowth.scene_extras import (
    ANM_EXACT_KEY,
    OBJ_EXACT_KEY,
    WEIGHTS_EXACT_KEY,
)
from retromesh.gltf.container import pack, unpack

EXAMPLES = ["stick.phxbn", "stick.obj", "walk.anm", "wave.anm", "stick.fzx"]


@pytest.fixture
def example(tmp_path) -> dict[str, Path]:
    return {p.name: p for p in samples.write_example(tmp_path / "in")}


def trip(src: Path, out: Path, **options) -> list[Path]:
    """``src`` (with the companions ``convert`` finds beside it) -> GLB -> ``out``/its name."""
    out.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retromesh.convert(src, out / "mid.glb", **{**companions(src), **options})
        return retromesh.convert(out / "mid.glb", out / src.name)


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_comes_back_byte_for_byte(example, tmp_path, name):
    src = example[name]
    written = trip(src, tmp_path / "back")
    assert written
    for p in written:
        assert p.read_bytes() == (src.parent / p.name).read_bytes(), p.name


OBJS = {
    "crlf_comments_quads": b"# made by hand\r\nmtllib x.mtl\r\no q\r\nv 0.000000 0.000000 0.000000"
                           b"\r\nv 1.000000 0.000000 0.000000\r\nv 0.000000 1.000000 0.000000\r\n"
                           b"v 1.0 1.0 0.0\r\nvt 0.0 0.0\r\nvt 1.0 0.0\r\nvt 0.0 1.0\r\n"
                           b"vt 1.0 1.0 0.0\r\nvn 0 0 1\r\ns off\r\nusemtl m\r\n"
                           b"f 1/1/1 2/2/1 4/4/1 3/3/1\r\n",
    "relative_and_exponents": b"v 1e-05 -0.0 -0.000000\nv 1.5 2.25 -3.125\n"
                              b"v  0.1   0.2   0.3 \nv 9 9 9\nf -4 -3 -2\n",
    "fan_unused_vertex": b"v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv -1 0.5 0\nv 7 7 7\n"
                         b"vn 0 0 2\nf 1//1 2//1 3//1 4//1 5//1\n",
    "many_digits": b"v 123.456789012 -98.7654321 0.000000001\nv 1 2 3\nv 4 5 6.5\nf 1 2 3\n",
    "no_last_newline": b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3",
}


@pytest.mark.parametrize("name", OBJS)
def test_obj_text_comes_back_as_written(tmp_path, name):
    src = tmp_path / f"{name}.obj"
    src.write_bytes(OBJS[name])
    (back,) = trip(src, tmp_path / "back")
    assert back.read_bytes() == OBJS[name]


def test_the_character_mesh_keeps_the_files_vertices(example, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scene = retromesh.load(example["stick.phxbn"], **companions(example["stick.phxbn"]))
    (prim,) = scene.meshes[0].primitives
    cols = {k: prim.attributes[a].astype(int) for k, a in enumerate(SOURCE_ATTRS)
            if a in prim.attributes}
    src = sources(cols.pop(0), cols, scene.meshes[0].extras[OBJ_EXACT_KEY])
    obj = retromesh.read(example["stick.obj"]).mesh()
    # the corners in the file's order, each vertex one (v, vt, vn) with one weighting
    assert np.array_equal(src[prim.indices], obj.corners)
    rows = np.c_[src, prim.weights, prim.joints]
    assert len(np.unique(rows, axis=0)) == len(prim.positions)


def _glb_scene(example, tmp_path, name="stick.phxbn"):
    glb = tmp_path / "mid.glb"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retromesh.convert(example[name], glb, **companions(example[name]))
        return retromesh.load(glb)


def _save(scene, target: Path) -> list[Path]:
    target.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return retromesh.save(scene, target)


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def test_a_moved_vertex_changes_its_v_line_only(example, tmp_path):
    scene = _glb_scene(example, tmp_path)
    prim = scene.meshes[0].primitives[0]
    v = prim.attributes["_OBJ_V"].astype(int)
    # a vertex inside the bounding box in every axis, moved a little inward (the engine
    # centres the OBJ on its box: a vertex that widens it moves the skeleton too)
    lo, hi = prim.positions.min(0), prim.positions.max(0)
    inside = np.all((prim.positions > lo) & (prim.positions < hi), axis=1)
    e = int(v[inside][0])
    moved = v == e                                   # every split copy of OBJ vertex e
    prim.positions[moved] *= np.float32(0.9)
    _save(scene, tmp_path / "out" / "stick.phxbn")
    a, b = _lines(example["stick.obj"]), _lines(tmp_path / "out" / "stick.obj")
    assert len(a) == len(b)
    changed = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    assert changed == [a.index(next(ln for ln in a if ln.startswith(b"v "))) + e]
    for name in ("stick.phxbn", "walk.anm", "wave.anm"):
        assert (tmp_path / "out" / name).read_bytes() == example[name].read_bytes(), name


def test_an_edited_topology_is_written_anew_with_a_warning(example, tmp_path):
    scene = _glb_scene(example, tmp_path, "stick.obj")
    prim = scene.meshes[0].primitives[0]
    prim.indices = prim.indices[:-3]                 # one triangle less
    with pytest.warns(LossWarning, match="faces were edited"):
        retromesh.save(scene, tmp_path / "out" / "stick.obj")
    obj = retromesh.read(tmp_path / "out" / "stick.obj").mesh()
    assert obj.triangle_count == retromesh.read(example["stick.obj"]).mesh().triangle_count - 1


def test_a_rotated_bone_key_changes_that_bone_and_its_children_only(example, tmp_path):
    scene = _glb_scene(example, tmp_path, "walk.anm")
    anim = scene.animations[0]
    bone = next(i for i, n in enumerate(scene.nodes) if n.extras.get("phxbn_bone") == 4)
    ch = next(c for c in anim.channels if c.node == bone and c.path == "rotation")
    key_t = 0.2                                      # the file's second key (200 ms)
    k = int(np.argmin(np.abs(ch.times - key_t)))
    q = ch.values[k].astype(np.float64)
    turn = np.array([0.0, np.sin(0.2), 0.0, np.cos(0.2)])          # 0.4 rad about Y
    x1, y1, z1, w1 = q
    x2, y2, z2, w2 = turn
    ch.values[k] = [w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2, w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                    w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2, w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2]
    _save(scene, tmp_path / "out" / "walk.anm")
    a, b = retromesh.read(example["walk.anm"]), retromesh.read(tmp_path / "out" / "walk.anm")
    for ka, kb in zip(a.keyframes, b.keyframes):
        x = np.asarray(ka.bone_mats, np.float32).view(np.uint32)
        y = np.asarray(kb.bone_mats, np.float32).view(np.uint32)
        rows = sorted({int(r) for r in np.nonzero((x != y).any(1))[0]})
        assert rows == ([4] if ka.time == 200 else []), (ka.time, rows)
        assert ka.rotation == kb.rotation and ka.center_offset == kb.center_offset


def _weight_edited(example, scene, tmp_path):
    """Vertex 7 of ``scene`` (the stick's GLB) given weights 0.5/0.5 on bones 1 and 2 and
    saved: the ``.phxbn`` rows that differ from the file read, the rows of vertex 7's
    corners, and the weights written."""
    prim = scene.meshes[0].primitives[0]
    prim.weights[7] = [0.5, 0.5, 0.0, 0.0]
    prim.joints[7] = [1, 2, 0, 0]
    _save(scene, tmp_path / "out" / "stick.phxbn")
    a = retromesh.read(example["stick.phxbn"]).control
    b = retromesh.read(tmp_path / "out" / "stick.phxbn").control
    corners = set(np.nonzero(prim.indices == 7)[0].tolist())
    wa, wb = np.asarray(a.weights), np.asarray(b.weights)
    ia, ib = np.asarray(a.ids), np.asarray(b.ids)
    differ = set(np.nonzero((wa != wb).any(1) | (ia != ib).any(1))[0].tolist())
    return differ, corners, wb


def test_an_edited_weight_changes_its_corners_only(example, tmp_path):
    differ, corners, _ = _weight_edited(example, _glb_scene(example, tmp_path), tmp_path)
    assert differ and differ <= corners


def _strip_records(glb: Path) -> None:
    """The GLB as the previous release wrote it: no exact records, no source attributes."""
    text, binary = unpack(glb.read_bytes())
    doc = json.loads(text)
    for m in doc.get("meshes", []):
        for k in (OBJ_EXACT_KEY, WEIGHTS_EXACT_KEY):
            m.get("extras", {}).pop(k, None)
        for p in m["primitives"]:
            for a in SOURCE_ATTRS:
                p["attributes"].pop(a, None)
    for n in doc.get("nodes", []):
        n.get("extras", {}).pop(ANM_EXACT_KEY, None)
    glb.write_bytes(pack(json.dumps(doc).encode(), binary))


def test_a_glb_without_the_records_converts_back_as_before(example, tmp_path):
    glb = tmp_path / "mid.glb"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retromesh.convert(example["stick.phxbn"], glb, **companions(example["stick.phxbn"]))
        _strip_records(glb)
        written = retromesh.convert(glb, tmp_path / "out" / "stick.phxbn")
    assert {p.name for p in written} == {"stick.phxbn", "stick.obj", "walk.anm", "wave.anm"}
    scene = retromesh.load(glb)
    obj = retromesh.read(tmp_path / "out" / "stick.obj").mesh()
    # written from the glTF vertices, as the previous release did
    assert len(obj.positions) == len(scene.meshes[0].primitives[0].positions)
    assert obj.triangle_count == retromesh.read(example["stick.obj"]).mesh().triangle_count


def _morph_findings(xml: Path) -> list[str]:
    from retromesh.formats.overgrowth.ogxml_scene_read import check
    return [f.message for f in check(retromesh.read(xml)) if f.rule == "overgrowth-xml.morph"]


def test_the_characters_model_keeps_matching_its_morphs(tmp_path):
    from retromesh.formats.overgrowth.ogxml_samples import write_character
    xml = write_character(tmp_path / "game")
    model = xml.parents[1] / "Models" / "Characters" / "stick.obj"
    original = model.read_bytes()
    assert not _morph_findings(xml)
    glb = tmp_path / "stick.glb"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retromesh.convert(xml, glb)
        written = retromesh.convert(glb, tmp_path / "back" / "r_stick.phxbn")
    back = next(p for p in written if p.suffix == ".obj")
    assert back.read_bytes() == original                 # vertex for vertex: morphs still fit
    # a model whose vertices were re-ordered (same corner count) no longer fits its morphs
    obj = retromesh.read(model).mesh()
    order = np.arange(len(obj.positions))[::-1]
    rank = np.argsort(order)
    from retromesh.formats.overgrowth.obj import write_obj
    model.write_bytes(write_obj(obj.positions[order], rank[obj.corners[:, 0]].reshape(-1, 3)))
    assert any("vertex for vertex" in m for m in _morph_findings(xml))


def _unnormalised(example) -> None:
    """The example's .phxbn with weights that do not sum to 1 (scaled per vertex)."""
    doc = retromesh.read(example["stick.phxbn"])
    ctl = doc.control
    w = np.asarray(ctl.weights, np.float32)
    factor = (1.0 + 0.37 * np.arange(len(w)) % 1.3).astype(np.float32)[:, None]
    doc.control = type(ctl)((w * factor).astype("<f4"), ctl.ids, ctl.hier_parents, ctl.joints,
                            ctl.num_vertices)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retromesh.write(doc, example["stick.phxbn"])


def test_weights_that_do_not_sum_to_1_come_back_and_an_edit_changes_its_corners_only(
        example, tmp_path):
    _unnormalised(example)
    back = trip(example["stick.phxbn"], tmp_path / "back")
    assert (tmp_path / "back" / "stick.phxbn").read_bytes() == example["stick.phxbn"].read_bytes()
    assert back
    scene = _glb_scene(example, tmp_path)
    assert "scale" in scene.meshes[0].extras[WEIGHTS_EXACT_KEY]   # the smaller record
    differ, corners, wb = _weight_edited(example, scene, tmp_path)
    assert differ and differ <= corners
    assert np.allclose(wb[sorted(differ)], [0.5, 0.5, 0.0, 0.0])


#: an OBJ of numbers of 9 and 10 digits (remainders modulo 1024), minus signs on zeros, a
#: comment; and its text record as the release before "m_bits" wrote it (remainders a byte
#: or two each, every token's minus sign in its flags)
_OBJ = (b"# kept\nv 0.05 -0.882295275 0.175119332\nv -0.05 1.38229528 -0.0\n"
        b"v 0.000001 -1.25 0.5\nvt 0.581110908 0.40692266\nvt 0 1\nvt 0.418889092 -0.000000\n"
        b"vn 0.000000 -1.000000 0.000000\nvn -0.577350 0.577350 -0.577350\n"
        b"f 1/1/1 2/2/2 3/3/2\nf 3/3/1 2/2/2 1/1/1\n")
_OLD_OBJ_RECORD = {
    "template": "eJxTVshOLSjhKlNgAEFMugQblQeThTHSFBj1mfSZkUmsYgCrTA7S",
    "d": "eJxj6uRs4mhka2Lk5GBg4GxjA0MALpEEbQ==",
    "m": "eJxjZRBlesL8m1mCmYGBkaGZmZWhhkGLCcRuYWRAAQB1LQPX", "mod": [1024, 1024, 2],
    "corners": 6, "n": 21, "of_v": {"vt": "eJxjYGBgYIRiAAAYAAM="}}


def test_obj_text_records_old_and_new_give_the_file_back(example):
    """The record of the release before (a byte or two a remainder) and the ones written now
    (``m_bits`` bits a remainder where that is smaller; a minus sign kept on zeros only) all
    give the text back from the values an unedited GLB holds."""
    from retromesh.formats.overgrowth.exact import obj_text
    from retromesh.formats.overgrowth.obj import parse_obj
    from retromesh.formats.overgrowth.scene import obj_exact_record, simulated_values
    rng = np.random.default_rng(5)
    rows = rng.normal(size=(400, 3))
    many = "".join(f"v {x:.6f} {y:.6f} {z:.6f}\n" for x, y, z in rows.tolist()) + \
        "".join(f"f {i + 1} {i + 2} {i + 3}\n" for i in range(398))
    stick = example["stick.obj"].read_bytes()         # (repeated numbers: bytes are smaller)
    for text, old, bits in ((_OBJ, _OLD_OBJ_RECORD, None), (many.encode(), None, True),
                            (stick, None, False)):
        obj = parse_obj(text)
        values = simulated_values(obj, np.zeros(3))
        new = obj_exact_record(text, obj, np.zeros(3))
        assert new is not None and bits in (None, "m_bits" in new)
        for record in (old, new):
            if record is not None:
                assert obj_text(record, values, obj.corners) == text
