"""Blender tier of issue 32 for Lost Saga and LithTech: every example of the two families
imported and exported by the retromesh extension, unedited, compared byte for byte with the
files read (companions included); one edit (a moved bone) per family. Skipped without the bpy
venv (tests/helpers/blender_run.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import EXAMPLES
from helpers.exact import differing
from test_blender import SCRIPTS, extension, extension_zip  # noqa: F401  (fixtures)

GROUPS = {
    "column.msh": [EXAMPLES / "lostsaga" / n for n in ("column.msh", "column.skl", "column_wave.ani")],
    "model_v12.abc": [EXAMPLES / "lithtech" / "model_v12.abc"],
    "model_v6.abc": [EXAMPLES / "lithtech" / "model_v6.abc"],
}


@pytest.fixture(scope="module")
def trips(blender, extension, tmp_path_factory):  # noqa: F811
    out = tmp_path_factory.mktemp("exact")
    jobs = [{"name": k, "files": [str(f) for f in v], "out": str(out / k.replace(".", "_") / k)}
            for k, v in GROUPS.items()]
    res = blender.run((SCRIPTS / "roundtrip.py").read_text(), {"jobs": jobs},
                      user_resources=extension["user"])
    return {job["name"]: r for job, r in zip(jobs, res)}


#: measured with Blender 4.2 and 4.5: Blender stores floats its own way (UVs flipped twice, bone
#: matrices through its own axes, keys sampled per frame, image names without extension), and the
#: records compare bit for bit or hold no original for values the plain path gives back as
#: they are (UVs, positions, key values). Not done yet: see docs/lossless.md.
THROUGH_BLENDER = pytest.mark.xfail(reason="issue 32: Blender's float noise is not put back for "
                                    "these families yet (docs/lossless.md)", strict=False)


@THROUGH_BLENDER
@pytest.mark.parametrize("name", GROUPS)
def test_unedited_example_through_blender_is_identical(trips, name):
    res = trips[name]
    assert "error" not in res, res["error"]
    files = list(GROUPS[name])
    if name.endswith(".msh"):
        files.append(EXAMPLES / "lostsaga" / "column.txt")
    assert differing(files, Path(res["out"]).parent) == {}
