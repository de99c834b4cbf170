from __future__ import annotations

import sys
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
