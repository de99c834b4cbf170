"""retromesh.batch (the library's batch API, used by the CLI's folder mode and the gallery) and
fileio.durable_batch (one flush to disk per batch, never a half-written output)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import retromesh
from helpers.make_examples_import import wiggle_bytes
from retromesh import batch, fileio


@pytest.fixture
def folder(tmp_path):
    """Three B3D models (one in a subfolder), a broken one, a Lost Saga model with companions."""
    from retromesh.formats.lostsaga import samples
    src = tmp_path / "in"
    (src / "deep").mkdir(parents=True)
    for p in (src / "a.b3d", src / "b.b3d", src / "deep" / "c.b3d"):
        p.write_bytes(wiggle_bytes())
    (src / "bad.b3d").write_bytes(wiggle_bytes()[:40])
    samples.write_example(src / "ls", "column")
    return src


def test_convert_many_goes_on_past_a_bad_file(folder, tmp_path):
    out = tmp_path / "out"
    results = batch.convert_many([folder], out)
    by_name = {r.job.label: r for r in results}
    assert sorted(by_name) == ["a.b3d", "b.b3d", "bad.b3d", "deep/c.b3d", "ls/column.msh"]
    bad = by_name.pop("bad.b3d")
    assert not bad.ok and "bad.b3d" in bad.message and not bad.written
    assert all(r.ok for r in by_name.values())
    assert (out / "deep" / "c.glb").is_file() and (out / "ls" / "column.glb").is_file()
    column = by_name["ls/column.msh"]
    assert sorted(p.suffix for p in column.job.members) == [".ani", ".skl"]     # read with it
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
    assert not (out / "bad.glb").exists()


def test_a_list_of_files_and_shards_give_the_same_outputs(folder, tmp_path):
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    whole = batch.convert_many(files, tmp_path / "o1", base=folder)
    jobs = batch.plan(files, tmp_path / "o2", base=folder)
    assert [j.label for j in jobs] == [r.job.label for r in whole]
    parts = batch.shards(jobs, 2)
    assert len(parts) == 3 and sum(parts, []) == jobs
    pieces = [r for part in parts for r in batch.run_jobs(part)]
    assert [r.ok for r in pieces] == [r.ok for r in whole]
    for r in whole:
        for w in r.written:
            twin = tmp_path / "o2" / Path(w).relative_to(tmp_path / "o1")
            assert twin.read_bytes() == Path(w).read_bytes()


def test_workers_give_the_results_of_one_process(folder, tmp_path):
    one = batch.convert_many([folder], tmp_path / "o1")
    seen = []
    two = batch.convert_many([folder], tmp_path / "o2", workers=2, on_result=seen.append)
    assert [(r.job.label, r.ok) for r in one] == [(r.job.label, r.ok) for r in two]
    assert sorted(r.job.label for r in seen) == sorted(r.job.label for r in two)


def test_options_go_to_the_formats_that_take_them(folder, tmp_path):
    jobs = batch.plan([folder], tmp_path / "o", load_options={"scale": 2.0, "weights": "raw"})
    for j in jobs:
        assert j.load_options["scale"] == 2.0
        assert ("weights" in j.load_options) == (j.source.suffix == ".b3d")


def test_an_input_is_not_overwritten(tmp_path):
    (tmp_path / "w.b3d").write_bytes(wiggle_bytes())
    [r] = batch.convert_many([tmp_path], tmp_path, to="b3d")
    assert not r.ok and "overwrite" in r.message
    assert (tmp_path / "w.b3d").read_bytes() == wiggle_bytes()


def test_a_rename_that_fails_at_the_commit_fails_its_job(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "w.b3d").write_bytes(wiggle_bytes())
    (tmp_path / "out" / "w.glb").mkdir(parents=True)       # a folder where the output goes
    [r] = batch.convert_many([tmp_path / "in"], tmp_path / "out")
    assert not r.ok and "w.glb" in r.message
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.endswith(".tmp")]


def test_durable_batch_renames_after_one_flush(tmp_path, monkeypatch):
    synced = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    with fileio.durable_batch() as b:
        for i in range(5):
            fileio.atomic_write(tmp_path / f"{i}.bin", b"x" * i)
        assert not list(tmp_path.glob("*.bin"))               # not under their names yet
        assert fileio.written_file(tmp_path / "3.bin").read_bytes() == b"xxx"
        fileio.atomic_write(tmp_path / "3.bin", b"again")       # the last write counts
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{i}.bin" for i in range(5)]
    assert (tmp_path / "3.bin").read_bytes() == b"again" and not b.failed
    if b.syncfs is not None:
        assert len(synced) == 1                                # the folder only


def test_a_crash_mid_batch_leaves_no_output_under_its_name(tmp_path):
    code = ("import os, sys\nfrom retromesh import fileio\n"
            "with fileio.durable_batch():\n"
            f"    fileio.atomic_write({str(tmp_path / 'a.glb')!r}, b'whole')\n"
            "    os._exit(3)\n")
    env = dict(os.environ, PYTHONPATH=str(Path(retromesh.__file__).parents[1]))
    res = subprocess.run([sys.executable, "-c", code], env=env)
    assert res.returncode == 3
    assert not (tmp_path / "a.glb").exists()
    assert [p.name.endswith(".tmp") for p in tmp_path.iterdir()] == [True]


def test_one_positive_rule_for_the_cli_and_the_library():
    from retromesh.clitools.options import OptionError, positive
    from retromesh.errors import DocumentError
    from retromesh.units import positive as rule
    for bad in ("0", -1, float("nan"), "x"):
        with pytest.raises(OptionError) as cli:
            positive("fps", bad)
        with pytest.raises(DocumentError) as lib:
            rule("fps", bad)
        assert str(cli.value) == str(lib.value)
    assert positive("fps", 24) == 24 and positive("fps", "2.5") == 2.5
