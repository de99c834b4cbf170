"""examples/dask_batch.py: retromesh.batch fanned out by Dask on a LocalCluster (needs the
``dask`` extra: ``pip install '.[dask]'``, or tools/setup/60-dask.sh)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import retromesh
from helpers.make_examples_import import wiggle_bytes

pytest.importorskip("dask.distributed", reason="Dask is not installed (pip install '.[dask]' "
                    "or bash tools/setup/60-dask.sh)")

ROOT = Path(__file__).resolve().parents[1]


def test_the_dask_example_converts_a_folder_in_shards(tmp_path):
    from retromesh.formats.lostsaga import samples
    src = tmp_path / "in"
    (src / "sub").mkdir(parents=True)
    for name in ("a.b3d", "b.b3d", "sub/c.b3d", "sub/d.b3d"):
        (src / name).write_bytes(wiggle_bytes())
    (src / "sub" / "broken.b3d").write_bytes(b"nope")
    samples.write_example(src / "ls", "column")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(retromesh.__file__).parents[1]), os.environ.get("PYTHONPATH", "")]))
    res = subprocess.run([sys.executable, str(ROOT / "examples" / "dask_batch.py"), str(src),
                          "-o", str(tmp_path / "out"), "--workers", "2", "--shard", "2"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 1, res.stderr               # one file is broken: it says so
    assert "5 converted, 1 failed" in res.stdout
    assert "broken.b3d" in res.stderr
    out = sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*.glb"))
    assert out == ["a.glb", "b.glb", "ls/column.glb", "sub/c.glb", "sub/d.glb"]
    assert (tmp_path / "out" / "a.glb").read_bytes()[:4] == b"glTF"
