"""The glTF native path: ``read`` -> ``to_bytes`` / ``write`` / ``info`` of a .glb or .gltf.

``read`` checks what writing back and ``info`` rely on, so a hostile file fails there with a
FormatError naming the field; the JSON is written back as it was read (but for buffer and
image URIs), with work linear in its size.
"""
from __future__ import annotations

import json
import struct

import pytest

import retromesh
from helpers.make_examples_import import wiggle_bytes
from retromesh.registry import get
from test_hostile import _lines_run


def _glb(doc: dict, blob: bytes = b"") -> bytes:
    js = json.dumps(doc, separators=(",", ":")).encode()
    js += b" " * ((-len(js)) % 4)
    body = struct.pack("<II", len(js), 0x4E4F534A) + js
    if blob:
        blob += b"\0" * ((-len(blob)) % 4)
        body += struct.pack("<II", len(blob), 0x004E4942) + blob
    return struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body


ASSET = {"asset": {"version": "2.0"}}


@pytest.mark.parametrize("edit, where", [
    ({"meshes": True}, "meshes"),
    ({"nodes": [5]}, "nodes[0]"),
    ({"nodes": {"a": 1}}, "nodes"),
    ({"images": [{"uri": 5}]}, "images[0].uri"),
    ({"images": [{"mimeType": ["image/png"]}]}, "images[0].mimeType"),
    ({"images": [{"bufferView": 3}]}, "images[0].bufferView"),
    ({"buffers": [{"byteLength": "8"}]}, "buffers[0].byteLength"),
    ({"animations": "walk"}, "animations"),
])
@pytest.mark.parametrize("kind", ["glb", "gltf"])
def test_read_refuses_what_writing_back_and_info_rely_on(edit, where, kind):
    doc = {**ASSET, **edit}
    data = _glb(doc) if kind == "glb" else json.dumps(doc).encode()
    with pytest.raises(retromesh.FormatError) as err:
        retromesh.read(data, format=kind)
    assert err.value.path == where


def test_fields_writing_back_does_not_use_are_kept_as_read(tmp_path):
    """Odd but harmless values (a node's children as a string) are the loader's business:
    written back unchanged, never re-modelled."""
    doc = {**ASSET, "nodes": [{"children": "x", "extras": {"k": [1, {"a": None}]}}],
           "extensionsUsed": ["EXT_unknown"], "extras": {"z": 1}}
    data = _glb(doc)
    back = retromesh.to_bytes(retromesh.read(data, format="glb"))
    assert back == data
    retromesh.write(retromesh.read(data, format="glb"), tmp_path / "x.gltf")
    assert json.loads((tmp_path / "x.gltf").read_text())["nodes"] == doc["nodes"]


def test_info_of_a_read_document_counts_arrays():
    doc = {**ASSET, "nodes": [{}, {}], "meshes": None}
    info = get("glb").info(retromesh.read(_glb(doc), format="glb"))
    assert info["nodes"] == 2 and info["meshes"] == 0


def test_our_glb_writes_back_byte_identical(tmp_path):
    (tmp_path / "wiggle.b3d").write_bytes(wiggle_bytes())
    retromesh.convert(tmp_path / "wiggle.b3d", tmp_path / "wiggle.glb")
    data = (tmp_path / "wiggle.glb").read_bytes()
    doc = retromesh.read(tmp_path / "wiggle.glb")
    assert retromesh.to_bytes(doc) == data
    retromesh.write(doc, tmp_path / "w.gltf")                  # and through .gltf + .bin
    back = retromesh.load(tmp_path / "w.gltf")
    assert len(back.nodes) == len(retromesh.load(tmp_path / "wiggle.glb").nodes)


def test_writing_back_is_linear_in_the_node_count():
    """4x the nodes of a chain costs at most ~4x the Python lines (pygltflib's model, built
    per node, once made a 20,000-node chain take seconds)."""
    def chain(n: int) -> bytes:
        nodes = [{"name": f"n{i}", "children": [i + 1]} for i in range(n - 1)] + [{}]
        return _glb({**ASSET, "scenes": [{"nodes": [0]}], "nodes": nodes})
    runs = {}
    for n in (400, 1600):
        doc = retromesh.read(chain(n), format="glb")
        runs[n] = _lines_run(lambda doc=doc: retromesh.to_bytes(doc))
    assert runs[1600] <= 4 * runs[400] * 1.25, runs
