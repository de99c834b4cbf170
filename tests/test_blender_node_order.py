"""The bridge puts the nodes of a GLB Blender wrote back in the order retromesh gave them
(Blender sorts objects and children by name): no Blender needed, the GLB is simulated."""
from __future__ import annotations

import copy
import json

from retromesh.blender import bridge
from retromesh.gltf.container import pack, unpack


def _ours() -> dict:
    # root 0 holds HULL (1), TURRET (2), BARREL (3); 3 is animated, 1 a skin joint
    return {"scenes": [{"nodes": [0]}], "scene": 0,
            "nodes": [{"name": "tank", "children": [1, 2, 3]}, {"name": "HULL"},
                      {"name": "TURRET"}, {"name": "BARREL"}],
            "skins": [{"joints": [1, 3], "skeleton": 0}],
            "animations": [{"channels": [{"target": {"node": 3, "path": "rotation"}}]}]}


def _as_blender_writes(doc: dict) -> dict:
    """What Blender's exporter makes of ``doc`` once imported: children first, by name; an
    armature object of its own above the root; one object added in Blender."""
    marked = copy.deepcopy(doc)
    for i, node in enumerate(marked["nodes"]):
        node["extras"] = {bridge.NODE_ORDER: i}
    by_name = {x["name"]: x for x in marked["nodes"]}
    out = [by_name["BARREL"], by_name["HULL"], by_name["TURRET"], dict(by_name["tank"], children=[0, 1, 2]),
           {"name": "Armature", "children": [3]}, {"name": "Cube"}]
    return {"scenes": [{"nodes": [5, 4]}], "scene": 0, "nodes": out,
            "skins": [{"joints": [0, 1], "skeleton": 3}],
            "animations": [{"channels": [{"target": {"node": 0, "path": "rotation"}}]}]}


def test_nodes_come_back_in_our_order():
    doc = _as_blender_writes(_ours())
    bridge.restore_node_order(doc)
    assert [x["name"] for x in doc["nodes"]] == ["Armature", "tank", "HULL", "TURRET", "BARREL", "Cube"]
    assert doc["nodes"][1]["children"] == [2, 3, 4]
    assert doc["nodes"][0]["children"] == [1]
    assert doc["scenes"][0]["nodes"] == [0, 5]             # Blender's own node after ours
    assert doc["skins"] == [{"joints": [4, 2], "skeleton": 1}]     # joint order as Blender wrote it
    assert doc["animations"][0]["channels"][0]["target"]["node"] == 4
    assert all(bridge.NODE_ORDER not in x.get("extras", {}) for x in doc["nodes"])
    assert "extras" not in doc["nodes"][2]                  # emptied extras are dropped


def test_a_glb_without_marks_is_left_alone():
    doc = _ours()
    before = copy.deepcopy(doc)
    bridge.restore_node_order(doc)
    assert doc == before


def test_marks_ride_in_extras_through_encode_and_decode(tmp_path):
    glb = tmp_path / "a.glb"
    doc = {"asset": {"version": "2.0"}, **_ours()}
    doc["nodes"][2]["extras"] = {"kept": 1}
    glb.write_bytes(pack(json.dumps(doc).encode(), None))
    bridge.encode_extras(glb)
    marked = json.loads(unpack(glb.read_bytes())[0])
    assert [x["extras"][bridge.NODE_ORDER] for x in marked["nodes"]] == [0, 1, 2, 3]
    bridge.decode_extras(glb)
    back = json.loads(unpack(glb.read_bytes())[0])
    assert back["nodes"] == doc["nodes"]
