"""The example builders of examples/make_examples.py as a module (``make_examples``), and the
B3D examples' bytes, built from the B3D family's samples (:mod:`retromesh.formats.b3d.samples`)."""
from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parents[2] / "examples" / "make_examples.py"
_spec = importlib.util.spec_from_file_location("make_examples", _PATH)
make_examples = importlib.util.module_from_spec(_spec)
sys.modules["make_examples"] = make_examples
_spec.loader.exec_module(make_examples)


@functools.cache
def wiggle_bytes() -> bytes:
    import retromesh
    from retromesh.formats.b3d import samples
    return retromesh.to_bytes(retromesh.from_scene(samples.wiggle_scene(), "b3d"))


@functools.cache
def crate_bytes() -> bytes:
    import retromesh
    from retromesh.formats.b3d import samples
    return retromesh.to_bytes(retromesh.from_scene(samples.crate_scene(), "b3d"))
