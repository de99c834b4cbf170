from __future__ import annotations

import sys
from pathlib import Path

import pytest

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
