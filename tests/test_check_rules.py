"""``retromesh check`` judges a file as the game's engine does, and ``convert`` to a game format
refuses what the engine refuses (docs/check-rules.md)."""
from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import retromesh
from conftest import CORPUS, ROOT, corpus_files
from helpers.cli import flat, run
from helpers.make_examples_import import wiggle_bytes
from retromesh import registry
from retromesh.formats import b3d
from retromesh.formats.lostsaga import samples as ls_samples
from retromesh.formats.overgrowth import fzx, samples as og_samples
from retromesh.formats.overgrowth.obj import write_obj


def check_json(*args) -> dict:
    res = run("check", "--json", *args)
    return json.loads(res.output)


def rules_of(*args) -> dict[str, str]:
    """{rule: severity} of every finding ``check --json`` lists."""
    return {f["rule"]: f["severity"] for entry in check_json(*args)["files"]
            for f in entry["findings"]}


@pytest.fixture
def overgrowth(tmp_path):
    return {p.name: p for p in og_samples.write_example(tmp_path / "wf")}


@pytest.fixture
def lostsaga(tmp_path):
    return {p.name: p for p in ls_samples.write_example(tmp_path / "ls")}


# -- Overgrowth ---------------------------------------------------------------------------------

def test_phxbn_beside_an_obj_of_other_vertex_count_is_refused(overgrowth):
    obj = overgrowth["stick.obj"]
    obj.write_bytes(write_obj(np.eye(3), np.array([[0, 1, 2]])))       # one triangle
    res = run("check", overgrowth["stick.phxbn"])
    assert res.exit_code == 1, res.output
    assert "Skeleton file and model file have different vertex counts." in flat(res)
    assert "stick.obj" in flat(res)
    assert rules_of(overgrowth["stick.phxbn"])["phxbn.vertex_count"] == "error"
    # --no-companions judges the skeleton alone; --mesh names the mesh
    assert run("check", "--no-companions", overgrowth["stick.phxbn"]).exit_code == 0
    good = obj.with_name("good.obj")
    good.write_bytes(og_samples.stick_obj())
    assert run("check", "--mesh", good, overgrowth["stick.phxbn"]).exit_code == 0
    assert run("check", "--mesh", obj, overgrowth["stick.phxbn"]).exit_code == 1


def _asymmetric(path: Path) -> None:
    doc = retromesh.read(path)
    doc.points = doc.points.copy()
    doc.points[3] += [0.0, 0.1, 0.0]
    path.write_bytes(retromesh.to_bytes(doc))


def test_asymmetric_skeleton_is_an_error_in_the_engines_words(overgrowth):
    _asymmetric(overgrowth["stick.phxbn"])
    res = run("check", overgrowth["stick.phxbn"])
    assert res.exit_code == 1
    assert "PHXBN skeleton is not symmetrical." in flat(res)


def test_convert_refuses_an_asymmetric_skeleton_unless_forced(overgrowth, tmp_path):
    _asymmetric(overgrowth["stick.phxbn"])
    glb = tmp_path / "s.glb"
    assert run("convert", "--no-companions", overgrowth["stick.phxbn"], "-o", glb).exit_code == 0
    out = tmp_path / "out" / "s.phxbn"
    res = run("convert", glb, "-o", out)
    assert res.exit_code == 1
    assert "not symmetrical" in flat(res) and "--force" in flat(res)
    assert not out.parent.exists() or not any(out.parent.iterdir())     # nothing written
    res = run("convert", glb, "-o", out, "--force")
    assert res.exit_code == 0, res.output
    assert out.is_file() and "phxbn.symmetry" in flat(res)
    # the Python API and the batch the same way
    with pytest.raises(retromesh.RefusedError) as info:
        retromesh.convert(glb, tmp_path / "api" / "s.phxbn")
    assert [f.rule for f in info.value.findings] == ["phxbn.symmetry"]
    with pytest.warns(retromesh.EngineWarning, match="symmetrical"):
        retromesh.convert(glb, tmp_path / "api" / "s.phxbn", force=True)
    from retromesh import batch
    results = batch.convert_many([glb], tmp_path / "b", to="phxbn")
    assert not results[0].ok and "not symmetrical" in results[0].message
    results = batch.convert_many([glb], tmp_path / "f", to="phxbn", force=True)
    assert results[0].ok and any("phxbn.symmetry" in w for w in results[0].warnings)


@pytest.mark.parametrize("path", corpus_files("b3d", "mobsanimal__mobs_chicken.b3d") or
                         [pytest.param(None, marks=pytest.mark.skip(reason="no corpus"))])
def test_chicken_to_phxbn_is_refused(path, tmp_path):
    res = run("convert", path, "-o", tmp_path / "chicken.phxbn")
    assert res.exit_code == 1 and "not symmetrical" in flat(res)
    assert not (tmp_path / "chicken.phxbn").exists()


def test_fzx_label_words_are_the_engines(tmp_path):
    doc = og_samples.fzx_sample()
    doc.objects[0].label = b"Knee Sphere Banana"
    (tmp_path / "k.fzx").write_bytes(fzx.write(doc))
    res = run("check", tmp_path / "k.fzx")
    assert res.exit_code == 1
    assert "'knee', 'banana'" in flat(res)
    found = rules_of(tmp_path / "k.fzx")
    assert found["fzx.token"] == "error" and found["fzx.unplaced"] == "warning"


def test_fzx_sided_parts_and_volume_slots():
    one = [fzx.FzxObject(b"Thigh Capsule")]
    assert [f.rule for f in fzx.check(fzx.FzxFile(objects=one))] == ["fzx.unplaced"]
    six = [fzx.FzxObject(b"L Shin Box M")] * 3 + [fzx.FzxObject(b"R shin sphere")] * 3
    found = fzx.check(fzx.FzxFile(objects=six))
    assert [f.rule for f in found] == ["fzx.shapes_per_bone"] and "R shin" in found[0].message
    assert fzx.check(og_samples.fzx_sample()) == []


# -- Lost Saga ----------------------------------------------------------------------------------

def _noparent_skeleton(path: Path) -> None:
    doc = retromesh.read(path)
    for b in doc.bones:
        if not b.parent:
            b.parent = b"NoParent"
    path.write_bytes(retromesh.to_bytes(doc))


def test_noparent_root_is_valid_and_comes_back_through_gltf(lostsaga, tmp_path):
    skl = lostsaga["column.skl"]
    _noparent_skeleton(skl)
    res = run("check", skl)
    assert res.exit_code == 0, res.output
    assert "does not exist" not in res.output
    glb = tmp_path / "c.glb"
    assert run("convert", lostsaga["column.msh"], "-o", glb).exit_code == 0
    assert run("convert", glb, "-o", tmp_path / "back" / "column.msh").exit_code == 0
    back = retromesh.read(tmp_path / "back" / "column.skl")
    assert [b.parent for b in back.bones] == [b.parent for b in retromesh.read(skl).bones]
    assert back.bones[0].parent == b"NoParent"


def test_missing_parent_is_still_an_error(lostsaga):
    doc = retromesh.read(lostsaga["column.skl"])
    doc.bones[1].parent = b"Nobody"
    found = {f.rule: f.severity for f in registry.get("skl").check(doc)}
    assert found == {"skl.parent": "error"}


def test_unsorted_weights_are_flagged(lostsaga):
    msh = lostsaga["column.msh"]
    doc = retromesh.read(msh)
    doc.weights = doc.weights.copy()
    doc.weights["weight"][0] = [0.0, 0.7, 0.3, 0.0]
    doc.weights["bone"][0] = [0, 1, 0, 0]
    msh.write_bytes(retromesh.to_bytes(doc))
    found = rules_of(msh)
    assert found["msh.weight_order"] == "warning"
    assert "stops at the first weight <= 0" in flat(run("check", msh))


def test_tracks_for_unknown_bones_are_flagged(lostsaga):
    ani = retromesh.read(lostsaga["column_wave.ani"])
    ani.tracks[0].bone = b"Ghost"
    lostsaga["column_wave.ani"].write_bytes(retromesh.to_bytes(ani))
    assert rules_of("--skeleton", lostsaga["column.skl"], lostsaga["column_wave.ani"]) == {
        "ani.bone": "warning"}


# -- Blitz3D ------------------------------------------------------------------------------------

def test_b3d_newer_version_is_refused(tmp_path):
    doc = retromesh.read(wiggle_bytes(), format="b3d")
    doc.version = 201
    (tmp_path / "v.b3d").write_bytes(retromesh.to_bytes(doc))
    res = run("check", tmp_path / "v.b3d")
    assert res.exit_code == 1 and "Blitz3D loads version 1 only" in flat(res)


def test_b3d_node_both_mesh_and_bone_is_refused(tmp_path):
    doc = retromesh.read(wiggle_bytes(), format="b3d")
    node = next(n for n, _ in doc.walk() if n.mesh is not None)
    node.children.append(b3d.Bone(np.array([(0, 1.0), (1, 1.0)], b3d.BONE_DTYPE)))
    (tmp_path / "mb.b3d").write_bytes(retromesh.to_bytes(doc))
    assert rules_of(tmp_path / "mb.b3d") == {"b3d.mesh_bone": "error"}
    assert run("check", tmp_path / "mb.b3d").exit_code == 1


# -- Westwood -----------------------------------------------------------------------------------

def test_vxl_read_with_its_hva(tmp_path):
    from retromesh.formats.westwood import samples as ww_samples
    paths = {p.name: p for p in ww_samples.write_example(tmp_path)}
    vxl = next(p for n, p in paths.items() if n.endswith(".vxl"))
    hva = retromesh.read(vxl.with_suffix(".hva"))
    hva.section_names = hva.section_names[:1]
    hva.matrices = hva.matrices[:, :1]
    vxl.with_suffix(".hva").write_bytes(retromesh.to_bytes(hva))
    entry = check_json(vxl)["files"][0]
    assert entry["companions"] == [vxl.with_suffix(".hva").name]
    assert [f["rule"] for f in entry["findings"]] == ["vxl.hva_sections"]


# -- the whole check ------------------------------------------------------------------------------

def test_json_lists_each_finding_per_file(overgrowth):
    _asymmetric(overgrowth["stick.phxbn"])
    res = run("check", "--json", overgrowth["stick.phxbn"], overgrowth["walk.anm"])
    assert res.exit_code == 1
    data = json.loads(res.output)
    assert data["failed"] == 1 and data["ok"] == 1
    first, second = data["files"]
    # the companions convert reads: the OBJ, and the animations beside the folder's only model
    assert first["format"] == "phxbn" and not first["ok"]
    assert first["companions"] == ["stick.obj", "walk.anm", "wave.anm"]
    assert {"rule", "severity", "message"} <= set(first["findings"][0])
    assert second == {"file": str(overgrowth["walk.anm"]), "format": "anm", "ok": True,
                      "findings": []}


def test_unreadable_file_is_reported_not_raised(tmp_path):
    (tmp_path / "bad.b3d").write_bytes(b"BB3D\x10\x00\x00\x00\x01")
    data = check_json(tmp_path / "bad.b3d")
    assert data["failed"] == 1 and "error" in data["files"][0]


def test_damaged_files_give_only_format_errors(overgrowth, lostsaga, tmp_path):
    """Bytes flipped and cut in every example: check reports, it never crashes."""
    rng = np.random.default_rng(7)
    sources = [*overgrowth.values(), *lostsaga.values(),
               *(p for p in sorted((ROOT / "examples").rglob("*"))
                 if p.suffix in (".b3d", ".abc", ".vxl", ".hva", ".vox", ".solid"))]
    d = tmp_path / "bad"
    d.mkdir()
    for n, src in enumerate(sources):
        data = bytearray(src.read_bytes())
        for k in range(8):
            bad = bytearray(data)
            if k % 2:
                bad = bad[:int(rng.integers(1, len(bad)))]
            else:
                for i in rng.integers(0, len(bad), 4):
                    bad[i] = int(rng.integers(0, 256))
            (d / f"{n}_{k}{src.suffix}").write_bytes(bytes(bad))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = run("check", "--json", d)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert res.exit_code in (0, 1)
    assert "internal error" not in res.output and "Traceback" not in res.output


@pytest.mark.parametrize("folder", [ROOT / "examples", *[p for p in sorted(CORPUS.glob("*"))
                                                         if p.is_dir()]],
                         ids=lambda p: p.name)
def test_valid_files_pass(folder):
    res = run("check", folder)
    assert res.exit_code == 0, res.output
    assert "failed:" not in res.output


# -- the rules are documented ---------------------------------------------------------------------

def test_every_rule_id_is_in_the_docs():
    docs = (ROOT / "docs" / "check-rules.md").read_text()
    listed = set(re.findall(r"`([a-z0-9-]+\.[a-z_0-9]+)`", docs))
    src = ROOT / "src" / "retromesh"
    emitted = set()
    for py in src.rglob("*.py"):
        text = py.read_text()
        emitted |= set(re.findall(r"\b(?:error|warning)\(\s*\"([a-z0-9-]+\.[a-z_0-9]+)\"", text))
        emitted |= set(re.findall(r"long_strings\([^)]*\"([a-z]+\.[a-z_]+)\"\)", text, re.S))
        if py.name == "ogchain.py":                 # Chain._add("name", ...) -> overgrowth-xml.name
            emitted |= {f"overgrowth-xml.{n}" for n in re.findall(r"_add\(\s*\"([a-z_]+)\"", text)}
    assert len(emitted) > 40
    assert sorted(emitted - listed) == []
    for generic in ("round_trip", "scene"):
        assert f"`<format>.{generic}`" in docs


def test_old_save_version_is_refused():
    rules = {f.rule for f in registry.get("sav").check(og_samples.sav_sample(2))}
    assert rules == {"sav.version"}
    assert registry.get("sav").check(og_samples.sav_sample(3)) == []


def test_ragdoll_joint_and_ik_bone_ids_are_bounded(overgrowth):
    doc = retromesh.read(overgrowth["stick.phxbn"])
    doc.control.joints[0].bones = (0, 99)
    doc.simple_ik[0].bone = -1
    rules = {f.rule: f.severity for f in registry.get("phxbn").check(doc)}
    assert rules == {"phxbn.joint_bones": "error", "phxbn.ik_bone": "error",
                     "phxbn.weight_sum": "warning"}


def test_non_invertible_hva_matrix_is_refused_in_openras_words():
    from retromesh.formats.westwood import samples as ww_samples
    _, hva = ww_samples.tank()
    hva.matrices = hva.matrices.copy()
    hva.matrices[2, 0, :, :3] = 0
    found = registry.get("hva").check(hva)
    assert [f.rule for f in found] == ["hva.singular"]
    assert "section 0 frame 2 is invalid because it is not invertible!" in found[0].message


def test_symmetry_is_the_skeleton_loaders_test():
    """Each end within a squared distance of 1e-4 of a mirrored bone's end (the loader's
    test, brute force here) — on random near-symmetric skeletons and a large degenerate one."""
    from retromesh.formats.overgrowth import phxbn
    rng = np.random.default_rng(3)
    mirror = np.array([-1.0, 1.0, 1.0])
    for _ in range(200):
        n = int(rng.integers(1, 12))
        pts = np.round(rng.normal(size=(2 * n, 3)), 2)
        pts[n:] = pts[:n] * mirror + rng.normal(scale=0.006, size=(n, 3))
        ends = rng.integers(0, 2 * n, size=(n, 2))
        doc = phxbn.PhxbnFile(points=pts.astype("<f4"), bone_ends=ends.astype("<i4"))
        p = np.asarray(doc.points, np.float64)
        a, b = p[ends[:, 0]], p[ends[:, 1]]
        near = ((((a[:, None] - (a * mirror)[None]) ** 2).sum(-1) < 1e-4)
                & (((b[:, None] - (b * mirror)[None]) ** 2).sum(-1) < 1e-4))
        assert phxbn.symmetry_problems(doc) == [int(i) for i in np.nonzero(~near.any(1))[0]]
    flat = phxbn.PhxbnFile(points=np.zeros((40000, 3), "<f4"),
                           bone_ends=np.arange(40000).reshape(-1, 2).astype("<i4"))
    assert phxbn.symmetry_problems(flat) == []


def test_one_vertex_count_rule_for_every_caller(tmp_path):
    """``phxbn.vertex_count_problem`` is the rule: the companion check, the scene mapping and
    the descriptor chain say what it says (version 11 refused, older weights misread)."""
    from retromesh.formats.overgrowth import phxbn
    v11, v10 = og_samples.phxbn_fixture(11), og_samples.phxbn_fixture(10)
    corners = len(v11.control.weights)
    assert phxbn.vertex_count_problem(v11, corners) is None
    assert phxbn.vertex_count_problem(v11, corners - 3) == phxbn.VERTEX_COUNTS
    assert phxbn.vertex_count_problem(v10, corners - 3) == phxbn.MISREAD_WEIGHTS
    assert phxbn.vertex_count_problem(og_samples.phxbn_fixture(11, rigging_stage=0), 3) is None
    for version, said in ((11, phxbn.VERTEX_COUNTS), (10, phxbn.MISREAD_WEIGHTS)):
        skel = tmp_path / f"v{version}.phxbn"
        retromesh.write(og_samples.phxbn_fixture(version), skel)
        small = tmp_path / "small.obj"
        small.write_bytes(write_obj(np.eye(3), np.array([[0, 1, 2]])))
        assert said in flat(run("check", "--mesh", small, skel))
        with pytest.raises(retromesh.FormatError, match=re.escape(said)):
            retromesh.load(skel, mesh=small)
