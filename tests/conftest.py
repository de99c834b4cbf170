from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# CI runs the property tests with a fixed seed so that a landing never depends on luck;
# locally they explore new examples every run (and remember failures in .hypothesis/).
settings.register_profile("ci", derandomize=True, database=None, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if __import__("os").environ.get("CI") else "dev")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))

from helpers import blender_run  # noqa: E402  (tests/ is on the path only from here)

#: real files made by the games and tools (never committed here); see its PROVENANCE.md
CORPUS = Path(__import__("os").environ.get("RETROMESH_CORPUS", ROOT.parent / "shared" / "corpus"))


def corpus_files(folder: str, *patterns: str) -> list[Path]:
    d = CORPUS / folder
    if not d.is_dir():
        return []
    out: list[Path] = []
    for pat in patterns or ("*",):
        out += sorted(d.glob(pat))
    return out


def corpus_params(folder: str, *patterns: str):
    """pytest params over corpus files; one skipped param when the corpus is absent."""
    files = corpus_files(folder, *patterns)
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"no corpus at {CORPUS / folder}"))]
    return [pytest.param(f, id=f.name) for f in files]


#: the example models shipped in the repository (examples/make_examples.py)
EXAMPLES = ROOT / "examples"

#: family package name -> its samples module (the same API in every family: test_contract.py)
FAMILIES = ("b3d", "lithtech", "lostsaga", "lugaru", "overgrowth", "westwood")


@pytest.fixture(scope="session", params=sorted(blender_run.VENVS))
def blender(request: pytest.FixtureRequest) -> blender_run.Blender:
    """The Blender runner of tests/helpers/blender_run.py (tests/test_blender*.py): Blender 4.2
    LTS, and 4.5 LTS when tools/setup/31-blender45.sh installed it."""
    runner = blender_run.Blender(blender_run.VENVS[request.param])
    reason = runner.unavailable()
    if reason:
        pytest.skip(f"Blender tier ({request.param}): {reason}")
    return runner


@pytest.fixture(scope="session")
def examples() -> Path:
    """The shipped examples folder (read only)."""
    return EXAMPLES


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The folder of real game files (may be absent: use :func:`corpus_params` to skip)."""
    return CORPUS


@pytest.fixture()
def example_files(tmp_path: Path) -> Callable[[str], dict[str, Path]]:
    """``example_files("westwood")`` writes that family's example (``samples.write_example``)
    into ``tmp_path/<family>`` and returns its files by name."""
    def write(family: str) -> dict[str, Path]:
        if family not in FAMILIES:
            raise ValueError(f"no family {family!r} (one of {', '.join(FAMILIES)})")
        import importlib
        samples = importlib.import_module(f"retromesh.formats.{family}.samples")
        return {p.name: p for p in samples.write_example(tmp_path / family)}
    return write


@pytest.fixture()
def tank(example_files: Callable[[str], dict[str, Path]]) -> Path:
    """``tank.vxl`` with ``tank.hva`` and ``tank.vox`` beside it (the Westwood example)."""
    return example_files("westwood")["tank.vxl"]
