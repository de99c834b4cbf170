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


def _moved_key(tmp_path, name: str, node: str, record: str | None = None):
    """The example ``name`` and what comes back after its GLB's second translation key of
    ``node`` moved by 0.125 (the GLB holding ``record``, when given, as its only .abc record)."""
    src = EXAMPLES / "lithtech" / name
    glb = tmp_path / "m.glb"
    retromesh.convert(src, glb)
    scene = retromesh.load(glb)
    if record is not None:
        assert record in scene.extras and not {"abc_exact", "abc_v6_blocks"} - {record} & \
            set(scene.extras)
    c = next(c for c in scene.animations[0].channels
             if c.path == "translation" and scene.nodes[c.node].name == node)
    c.values[1] = c.values[1] + np.float32(0.125)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        retromesh.save(scene, tmp_path / "back.abc")
    return retromesh.read(src), retromesh.read(tmp_path / "back.abc")


def test_moved_key_changes_that_node_only(tmp_path):
    was, now = _moved_key(tmp_path, "model_v12.abc", "arm_l")
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
    assert [scene.extras.pop(k, None) for k in ("abc_exact", "abc_rows", "abc_v6_blocks")] != [None, None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        retromesh.save(scene, tmp_path / name)
    was, now = retromesh.read(EXAMPLES / "lithtech" / name), retromesh.read(tmp_path / name)
    assert lithtech.info(was) == lithtech.info(now)
    assert retromesh.to_bytes(now) != retromesh.to_bytes(was)      # recomputed, as before


def _odd_weights_file() -> bytes:
    """The sample v12 model with vertices whose weights the writer lays out otherwise: one
    names a node twice, one has a zero weight, one has five weights."""
    from retromesh.formats.lithtech.abc import WEIGHT
    doc = samples.documents()["abc"]
    lod = doc.pieces[0].lods[0]
    v, w = np.array(lod.vertices), np.asarray(lod.weights)
    starts = np.cumsum(v["weight_count"]) - v["weight_count"]
    lists = [w[s:s + c] for s, c in zip(starts, v["weight_count"])]
    n = len(doc.nodes)
    for i, extra in ((0, [(0, 0.25)]), (1, [(1 % n, 0.0)]), (2, [(k % n, 0.05) for k in range(5)])):
        rows = np.zeros(len(extra), WEIGHT)
        rows["node"] = [x for x, _ in extra]
        rows["bias"] = [b for _, b in extra]
        rows["location"] = v["location"][i]
        lists[i] = np.concatenate([lists[i][:5 - len(extra)], rows])
        v["weight_count"][i] = len(lists[i])
    lod.vertices, lod.weights = v, np.concatenate(lists)
    return retromesh.to_bytes(doc)


def test_weights_the_writer_lays_out_otherwise_come_back(tmp_path):
    """A node named twice, a zero weight, more than 4 weights: glTF holds the 4 largest,
    merged and renormalised; the record keeps those vertices' weights as the file has them."""
    src = tmp_path / "src" / "odd.abc"
    src.parent.mkdir()
    src.write_bytes(_odd_weights_file())
    assert plain_trip(src, tmp_path) == {}


def test_moved_vertex_changes_that_vertex_only(tmp_path):
    src = EXAMPLES / "lithtech" / "model_v12.abc"
    glb = tmp_path / "m.glb"
    retromesh.convert(src, glb)
    scene = retromesh.load(glb)
    prim = scene.meshes[0].primitives[0]
    was = retromesh.read(src)
    lod = was.pieces[0].lods[0]
    # the glTF vertices of file vertex 0: the ones at its place
    at = np.flatnonzero((prim.positions == prim.positions[0]).all(axis=1))
    prim.positions[at] += np.float32(0.25)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LossWarning)
        retromesh.save(scene, tmp_path / "back.abc")
    now = retromesh.read(tmp_path / "back.abc")
    a, b = np.asarray(lod.vertices), np.asarray(now.pieces[0].lods[0].vertices)
    moved = {i for i in range(len(a)) if a[i].tobytes() != b[i].tobytes()}
    assert moved == {0}
    wa, wb = np.asarray(lod.weights), np.asarray(now.pieces[0].lods[0].weights)
    c = int(a["weight_count"][0])
    assert wa[c:].tobytes() == wb[c:].tobytes()                 # the other vertices' weights
    assert not np.array_equal(wa["location"][:c], wb["location"][:c])
    for x, y in zip(was.sections, now.sections):
        if type(x).__name__ != "PiecesSection":
            assert _same(x, y), type(x).__name__


def test_glb_with_the_whole_file_record_converts_back(tmp_path):
    """GLBs written before the per-field record hold ``abc_exact`` (the file block by block
    against the bytes the writer wrote then, ``legacy``): they still come back byte for byte
    (made here as that release made them)."""
    from retromesh.binio import Reader
    from retromesh.formats.lithtech import abc as abcmod, scene as lscene
    for name in ("model_v12.abc", "model_v6.abc"):
        data = (EXAMPLES / "lithtech" / name).read_bytes()
        glb = tmp_path / f"{name}.glb"
        retromesh.convert(EXAMPLES / "lithtech" / name, glb)
        scene = retromesh.load(glb)
        scene.extras.pop("abc_rows", None)
        if scene.extras.pop("abc_v6_blocks", None) is not None:
            scene.extras["abc_exact"] = V6_RECORD_FEDF238
        if "abc_exact" not in scene.extras:             # as the release before wrote it
            doc = abcmod.read(Reader(data, file="abc"))
            old = lscene.to_scene(doc)
            old.extras.pop("abc_rows")
            lscene.keep_whole_file(old, doc)
            scene.extras["abc_exact"] = old.extras["abc_exact"]
        retromesh.save(scene, tmp_path / name)
        assert (tmp_path / name).read_bytes() == data, name


#: the whole-file record of ``model_v6.abc`` as the tree at fedf238 (before ``abc_v6_blocks``)
#: wrote it in the GLB: its blocks are against the legacy writer's bytes
V6_RECORD_FEDF238 = {
    "block": 64, "size": 2032, "at": "eAFjZGBgYMSBmYDi7FjkQOIgPTAaXT8ABZgAHw==",
    "crc": "keBl5ya7GO+3bCQ8oD2fYH55cUAJjs+h++paJaVTnrX0MQYnUZUF2CFPZIVdVC6P9kxthCKNnSetNc/C/vUn"
           "QZ7/vIgTncJOaxqEcNqWHYkiN/W8",
    "check": "ufSy5ACYaXYSn6WZre0nU3l5eXm8vLy8vLy8vLz+vNS8Edn+ElHUvLy8/rzU2NjY2Nh42J167HjO+Z3YeNid",
    "xor": "eAFjYCAfNNYT0EtQQT0hEwgqiLpJwA0EFSxTJWACQQX69V34jSCo4GJ9GX4T8ChgxKKTEjEk4xpwsEHC5MohGYnC"
           "JNc8fPpQLMDBAet3mt+8EIs8WO7zbfFFuOSg4mB1WNggIXLloMZRTlHbAVQxb9bF60pYvAY2e//ZScq45LCIEysE"
           "NhuqGJkNEkLmI7NBcvgBAHoOKKo="}


def test_v6_record_predicts_the_writer():
    """The v6 record's model (:mod:`.exact_v6`, made without the v9..v13 writer) is what the
    writer writes from the GLB, for every v6 file here; the record holds only blocks."""
    from retromesh import restore
    from retromesh.binio import Reader
    from retromesh.formats.lithtech import abc_v6, exact_v6, scene as lscene
    for name, make in FILES.items():
        data = make()
        if not data.startswith(b"\x06\x00Header") or b"File v6" not in data[:80]:
            continue
        doc = abc_v6.read(Reader(data, file="abc"))
        scene = lscene.to_scene(doc)
        assert "abc_exact" not in scene.extras, name
        made = exact_v6.predicted(scene, doc)
        assert made is not None, name
        scene.extras.pop(exact_v6.KEY, None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            back = abc_v6.write(lscene.from_scene(restore.as_glb_holds(scene)))
        assert abc_v6.write(made) == back, name


def test_v6_moved_key_changes_that_node_only(tmp_path):
    """A v6 model (record ``abc_v6_blocks``): a moved key changes its node's track only."""
    was, now = _moved_key(tmp_path, "model_v6.abc", "arm", record="abc_v6_blocks")
    names = [n.name for n in was.nodes]
    k = names.index(b"arm")
    changed = {(ai, j) for ai, (x, y) in enumerate(zip(was.animations, now.animations))
               for j in range(len(names))
               if x.tracks[j].transforms.tobytes() != y.tracks[j].transforms.tobytes()}
    assert changed == {(0, k)}
    assert was.geometry.vertices.tobytes() == now.geometry.vertices.tobytes()
    assert was.geometry.faces.tobytes() == now.geometry.faces.tobytes()
