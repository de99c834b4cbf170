"""Run the Khronos glTF-Validator (npm ``gltf-validator``, see tools/gltf-validator) on files.

``validate(paths)`` returns one report dict per file. ``assert_valid(path)`` fails the test on
any error or warning and returns the report's ``info`` block (counts of skins, animations,
UV sets ...) so that tests can assert what survived the conversion.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "gltf-validator"


def available() -> bool:
    return shutil.which("node") is not None and (TOOL / "node_modules" / "gltf-validator").is_dir()


def validate(paths: list[Path]) -> list[dict]:
    if not available():
        if os.environ.get("CI"):
            pytest.fail("gltf-validator is not installed (run the README's test command)")
        pytest.skip("gltf-validator is not installed (npm install in tools/gltf-validator)")
    out = subprocess.run(["node", str(TOOL / "validate.mjs"), *map(str, paths)],
                         capture_output=True, text=True, check=True, timeout=600)
    results = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert len(results) == len(paths), out.stderr
    return results


def problems(result: dict) -> list[str]:
    if "error" in result:
        return [result["error"]]
    issues = result["report"]["issues"]
    return [f"{m['code']} {m.get('pointer', '')}: {m['message']}" for m in issues["messages"]
            if m["severity"] <= 1]   # 0 error, 1 warning


def assert_valid_many(paths: list[Path]) -> list[dict]:
    """Validate several files in one node process; fail on any error or warning."""
    results = validate(list(paths))
    bad = {r["file"]: problems(r) for r in results if problems(r)}
    assert not bad, json.dumps(bad, indent=1)[:4000]
    return [r["report"]["info"] for r in results]


def assert_valid(path: Path) -> dict:
    return assert_valid_many([path])[0]
