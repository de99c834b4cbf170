"""The shipped examples: each converts to a glTF the validator accepts (as the README shows),
and each is what examples/make_examples.py makes today."""
from __future__ import annotations

import warnings
from pathlib import Path

from typer.testing import CliRunner

from helpers.gltfcheck import assert_valid_many
from helpers.make_examples_import import make_examples
from retromesh.cli import app

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# (arguments after `retromesh convert`, expected: skins, animations)
COMMANDS = [
    (["wiggle.b3d"], True, 1),
    (["crate.b3d"], False, 0),
    (["overgrowth/stick.phxbn", "--mesh", "overgrowth/stick.obj", "--animation", "overgrowth/wave.anm",
      "--animation", "overgrowth/walk.anm"], True, 2),
    (["lugaru/box.solid"], False, 0),
    (["overgrowth/stick.fzx"], False, 0),
    (["lithtech/model_v12.abc"], True, None),
    (["lithtech/model_v6.abc"], None, None),
    (["lithtech/model.lta"], True, 2),
    (["lostsaga/column.msh", "--skeleton", "lostsaga/column.skl", "--animation",
      "lostsaga/column_wave.ani"], True, 1),
    (["westwood/tank.vxl"], False, 1),
    (["westwood/tank.vox"], False, 0),
]


def test_examples_convert_to_valid_gltf(tmp_path):
    runner = CliRunner()
    outs = []
    for i, (args, _, _) in enumerate(COMMANDS):
        out = tmp_path / f"{i}_{Path(args[0]).stem}.glb"
        argv = ["convert", str(EXAMPLES / args[0])]
        argv += [str(EXAMPLES / a) if "/" in a or a.endswith((".anm", ".ani")) else a for a in args[1:]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = runner.invoke(app, argv + ["-o", str(out)])
        assert res.exit_code == 0, (args, res.output)
        outs.append(out)
    infos = assert_valid_many(outs)
    for (args, skins, anims), info in zip(COMMANDS, infos, strict=True):
        if skins is not None:
            assert info["hasSkins"] == skins, args
        if anims is not None:
            assert info["animationCount"] == anims, args


def test_examples_are_up_to_date(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make_examples.main(tmp_path)
    fresh = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    for rel, data in fresh.items():
        assert (EXAMPLES / rel).read_bytes() == data, \
            f"examples/{rel} is stale: run examples/make_examples.py"


def _options(args: list[str]) -> dict:
    """The companion flags of a COMMANDS entry as the library's reading options."""
    opts: dict = {}
    for flag, value in zip(args[1::2], args[2::2], strict=True):
        if flag == "--animation":
            opts.setdefault("animations", []).append(EXAMPLES / value)
        else:
            opts[flag.lstrip("-")] = EXAMPLES / value
    return opts


def test_every_example_converts_without_a_warning(tmp_path):
    """What a newcomer runs first: no example names a texture it does not ship, no palette is
    left to the game, nothing is approximated (warnings are errors here)."""
    import retromesh
    from retromesh import batch
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i, (args, _, _) in enumerate(COMMANDS):
            retromesh.convert(EXAMPLES / args[0], tmp_path / f"{i}.glb", **_options(args))
    results = batch.convert_many([EXAMPLES], tmp_path / "folder")   # companions grouped
    assert results and all(r.ok for r in results), [r.message for r in results if not r.ok]
    assert {str(r.job.label): r.warnings for r in results if r.warnings} == {}
    shipped = {p.name for p in EXAMPLES.rglob("*.png")}
    assert "column_diffuse.png" in shipped
