"""Compile the shipped .ksy descriptions to Python with the Kaitai compiler (npm) and load them."""
from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "ksy"
#: the .ksy files of the copy under test (package data, installed or in the checkout)
KSY = Path(importlib.util.find_spec("retromesh").origin).parent / "ksy"


def compile_all(out: Path) -> dict[str, object]:
    """``{ksy id: generated module}``; skips the caller's test when the compiler is missing."""
    pytest.importorskip("kaitaistruct", reason="kaitaistruct (pip) is not installed")
    if shutil.which("node") is None:
        pytest.skip("node is not installed (needed for the Kaitai compiler)")
    if not (TOOL / "node_modules" / "kaitai-struct-compiler").is_dir():
        pytest.skip("Kaitai compiler missing: run `npm install --prefix tools/ksy` "
                    "(tools/setup/40-kaitai.sh)")
    files = sorted(KSY.glob("*.ksy"))
    res = subprocess.run(["node", str(TOOL / "compile.mjs"), str(out), *map(str, files)],
                         capture_output=True, text=True, timeout=300)
    errors = json.loads(res.stdout or "{}")
    assert not errors, f"Kaitai compiler errors: {errors}"
    sys.path.insert(0, str(out))
    modules = {}
    for f in files:
        spec = importlib.util.spec_from_file_location(f.stem, out / f"{f.stem}.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[f.stem] = mod
        spec.loader.exec_module(mod)
        modules[f.stem] = mod
    return modules


def top_class(module) -> type:
    """The generated top-level class (``blitz3d_b3d`` -> ``Blitz3dB3d``)."""
    name = "".join(part.capitalize() for part in module.__name__.split("_"))
    return getattr(module, name)
