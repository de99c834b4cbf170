"""Import the example builders of examples/make_examples.py for use as test fixtures."""
from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parents[1] / "examples" / "make_examples.py"
_spec = importlib.util.spec_from_file_location("make_examples", _PATH)
make_examples = importlib.util.module_from_spec(_spec)
sys.modules["make_examples"] = make_examples
_spec.loader.exec_module(make_examples)


@functools.cache
def wiggle_bytes() -> bytes:
    import retromesh
    doc = retromesh.from_scene(make_examples.wiggle_scene(), "b3d")
    return retromesh.to_bytes(doc)


@functools.cache
def crate_bytes() -> bytes:
    import retromesh
    return retromesh.to_bytes(retromesh.from_scene(make_examples.crate_scene(), "b3d"))
