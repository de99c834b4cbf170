"""``retromesh info`` and ``retromesh check`` parse each file once (the native counts and the
scene of ``info`` come from one document; the companions ``check`` judges together are the ones
the scene is made of): counted by wrapping every registered format's ``read``."""
from __future__ import annotations

import collections
from pathlib import Path

import pytest

from helpers.cli import run
from retromesh import registry
from retromesh.readonce import reading_once


@pytest.fixture
def reads(monkeypatch) -> collections.Counter:
    """Calls of each format's ``read``, by (format, file name)."""
    counts: collections.Counter = collections.Counter()
    for fmt in registry.formats():
        if fmt.read is None:
            continue

        def counted(r, _read=fmt.read, _name=fmt.name):
            counts[(_name, Path(r.file).name if r.file else None)] += 1
            return _read(r)
        monkeypatch.setitem(vars(fmt), "read", counted)     # a frozen record: no setattr
    return counts


CASES = [("lostsaga/column.msh", {"column.msh", "column.skl", "column_wave.ani"}),
         ("overgrowth/stick.phxbn", {"stick.phxbn", "walk.anm", "wave.anm"}),
         ("westwood/tank.vxl", {"tank.vxl", "tank.hva"}),
         ("crate.b3d", {"crate.b3d"})]


@pytest.mark.parametrize("command", ["info", "check"])
@pytest.mark.parametrize("name, files", CASES)
def test_each_file_is_parsed_once(examples, reads, command, name, files):
    res = run(command, examples / name)
    assert res.exit_code == 0, res.output
    assert {f for _, f in reads} >= files           # the companions were read...
    assert set(reads.values()) == {1}, reads        # ...and every file once


def test_outside_the_scope_nothing_is_kept(examples, reads):
    import retromesh
    path = examples / "crate.b3d"
    retromesh.read(path)
    retromesh.read(path)
    assert reads[("b3d", "crate.b3d")] == 2
    with reading_once():
        first = retromesh.read(path)
        assert retromesh.read(path) is first
        assert retromesh.read(path.read_bytes(), format="b3d") is not first   # no name: no key
    assert reads[("b3d", "crate.b3d")] == 3
    assert retromesh.read(path) is not first
