"""The glTF writer's JSON (``GLTF2.gltf_to_json``, made by the encoder's per-object hook) is the
JSON of ``to_dict()`` (the one-pass prune with pygltflib's rules), byte for byte."""
from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from retromesh.gltf import model as g

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-2, 2),
                    st.sampled_from(["", "a", "é"]))
plain = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.tuples(inner, inner),
    st.dictionaries(st.sampled_from(["a", "b", "extensions", "extras"]), inner, max_size=3)),
    max_leaves=12)


def _same(doc: g.GLTF2) -> None:
    want = json.dumps(doc.to_dict(), separators=(",", ":"), allow_nan=False)
    assert doc.gltf_to_json(separators=(",", ":"), indent=None) == want
    assert doc.gltf_to_json() == json.dumps(doc.to_dict(), indent="  ", allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(extras=plain, node_extras=plain, ext=plain, name=st.sampled_from([None, "", "n"]),
       scale=st.sampled_from([None, [], [1.0, 0.0, 1.0], (0.0, 0.0, 0.0)]))
def test_json_is_to_dict(extras, node_extras, ext, name, scale):
    attrs = g.Attributes(POSITION=0, NORMAL=None, TEXCOORD_0=1)
    prim = g.Primitive(attributes=attrs, indices=2, material=None,
                       targets=[{"POSITION": 3, "NORMAL": None}, {}])
    node = g.Node(mesh=0, name=name, scale=scale, children=[], extras=node_extras)
    mat = g.Material(name="m", doubleSided=False, extensions={"KHR_materials_unlit": {},
                                                                 "X": ext})
    doc = g.GLTF2(nodes=[node, g.Node()], meshes=[g.Mesh(primitives=[prim])], materials=[mat],
                  accessors=[g.Accessor(count=0, min=[0.0], max=[])], scene=0,
                  scenes=[g.Scene(nodes=[0], extras=extras if isinstance(extras, dict) else {})])
    doc.extras = {"data": extras, "empty": {}, "zero": 0, "false": False}
    _same(doc)


def _jsonable_reference(value):
    """The writer's jsonable before its fast paths (one call per item)."""
    import math
    from pathlib import Path

    import numpy as np
    if isinstance(value, dict):
        return {str(k): _jsonable_reference(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable_reference(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable_reference(value.tolist())
    if isinstance(value, np.generic):
        return _jsonable_reference(value.item())
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value.decode("latin-1")
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, Path):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


extras_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(),
              st.binary(max_size=3), st.text(max_size=3)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner),
                            st.dictionaries(st.one_of(st.text(max_size=2), st.integers(0, 3)),
                                            inner, max_size=3)),
    max_leaves=16)


@settings(max_examples=300, deadline=None)
@given(value=extras_values, arr=st.lists(st.floats(width=32), max_size=6),
       ints=st.lists(st.integers(-5, 5), max_size=6))
def test_jsonable_fast_paths_change_nothing(value, arr, ints):
    import numpy as np

    from retromesh.gltf.jsonvalues import jsonable
    for v in (value, {"a": np.array(arr, np.float32), "i": np.array(ints, np.int16),
                      "m": np.array(ints, bool).reshape(-1, 1), "t": tuple(arr), "l": arr}):
        got, want = jsonable(v), _jsonable_reference(v)
        assert json.dumps(got) == json.dumps(want)


def _array_maps():
    import numpy as np
    return st.builds(lambda arr, ints, s: {"a": np.array(arr, np.float32), "e": np.zeros((0, 3)),
                                           "i": np.array(ints, np.int16), "s": np.str_(s),
                                           "o": np.array([{"x": None, "y": ints}], object)},
                     st.lists(st.floats(width=32), max_size=3),
                     st.lists(st.integers(-5, 5), max_size=3), st.sampled_from(["", "s"]))


keyed = st.sampled_from(["a", "b", "extensions", "extras", 1, "1"])
extras_trees = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(),
              st.sampled_from(["", "a", b"", b"\xff"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner),
                            st.dictionaries(keyed, inner, max_size=3),
                            st.dictionaries(keyed, inner, max_size=2).map(g.Plain)),
    max_leaves=14)


@settings(max_examples=400, deadline=None)
@given(value=st.dictionaries(keyed, extras_trees | _array_maps(), max_size=4))
def test_extras_json_is_jsonable_pruned_by_the_encoder(value):
    """``extras_json`` (one pass, dicts marked Plain) writes the JSON that ``jsonable`` gave
    once the encoder pruned it as a model's dict."""
    from retromesh.gltf.jsonvalues import extras_json, jsonable
    for make in (lambda x: g.Node(extras=x), lambda x: g.GLTF2(extras=x)):
        old = make(jsonable(value) if value else None)
        new = make(extras_json(value) if value else None)
        assert json.dumps(old, default=g.json_default) == json.dumps(new, default=g.json_default)
