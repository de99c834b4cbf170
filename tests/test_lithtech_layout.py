"""LithTech .abc read from files assembled byte by byte with ``struct`` after the documented
layout (format-facts C, haekb's reader and 010 templates), independently of our writer: the
reader must find every field where the layout puts it, the writer must give the same bytes
back, and to_scene must convert the axes as the facts say."""
from __future__ import annotations

import struct

import numpy as np
import pytest

import retromesh
from retromesh.formats.lithtech import abc_v6, scene as ls


def s(text: bytes) -> bytes:
    return struct.pack("<H", len(text)) + text


def sections(*parts: tuple[bytes, bytes]) -> bytes:
    out = b""
    for i, (name, body) in enumerate(parts):
        head = s(name)
        nxt = -1 if i == len(parts) - 1 else len(out) + len(head) + 4 + len(body)
        out += head + struct.pack("<i", nxt) + body
    return out


def f(*v: float) -> bytes:
    return struct.pack(f"<{len(v)}f", *v)


# node 0 "root" at (1, 2, 3); node 1 "arm" (flag 0x02) 1 unit further along +X, turned 90
# degrees about Y. Row-major LTMatrix, translation in m[3], m[7], m[11].
M_ROOT = (1, 0, 0, 1, 0, 1, 0, 2, 0, 0, 1, 3, 0, 0, 0, 1)
M_ARM = (0, 0, 1, 2, 0, 1, 0, 2, -1, 0, 0, 3, 0, 0, 0, 1)


def v9_file(version: int) -> bytes:
    h = struct.pack("<I", version) + struct.pack("<11I", 2, 1, 2, 1, 1, 1, 3, 4, 1, 1, 1)
    if version >= 13:
        h += struct.pack("<I", 77)
    h += struct.pack("<2I", 5, 28) + s(b"Rigid 1") + f(2.5) + struct.pack("<I", 1) + bytes(60) + f(0.0)
    piece = struct.pack("<H", 3) + f(5.0, 1.5) + (f(0.75) if version > 9 else b"")
    piece += struct.pack("<H", 0) + s(b"body")
    face = b"".join(f(u, v) + struct.pack("<H", i)
                    for u, v, i in ((0.0, 0.25, 0), (1.0, 0.5, 1), (0.5, 1.0, 2)))
    piece += struct.pack("<I", 1) + face + struct.pack("<I", 3)
    # vertex 0: one weight on root; vertex 1: two weights; vertex 2: one weight on arm
    piece += struct.pack("<2H", 1, 0) + struct.pack("<I", 0) + f(0, 0, 0, 1.0) + f(1, 2, 3) + f(0, 0, 1)
    piece += struct.pack("<2H", 2, 5) + struct.pack("<I", 0) + f(1, 0, 0, 0.25) \
        + struct.pack("<I", 1) + f(0, 0, 0, 0.75) + f(2, 2, 3) + f(0, 1, 0)
    piece += struct.pack("<2H", 1, 0) + struct.pack("<I", 1) + f(0, 1, 0, 1.0) + f(2, 3, 3) + f(1, 0, 0)
    pieces = struct.pack("<2I", 4, 1) + piece
    nodes = s(b"root") + struct.pack("<HB", 0, 1) + f(*M_ROOT) + struct.pack("<I", 1)
    nodes += s(b"arm") + struct.pack("<HB", 1, 2) + f(*M_ARM) + struct.pack("<I", 0)
    nodes += struct.pack("<I", 1) + s(b"upper") + struct.pack("<I", 2) + f(0.0, 1.0)
    child = struct.pack("<H", 1) + s(b"") + struct.pack("<I", 9) + f(1, 2, 3, 0, 0, 0, 1) \
        + f(1, 0, 0, 0, 0.5, 0, 0.5)
    anim = struct.pack("<I", 1) + f(4, 5, 6) + s(b"idle") + struct.pack("<i", -1)
    if version >= 12:
        anim += struct.pack("<I", 250)
    anim += struct.pack("<I", 2) + struct.pack("<I", 0) + s(b"") + struct.pack("<I", 400) + s(b"SOUND step")
    sq = float(np.sqrt(0.5))
    keys = {0: [(1, 2, 3, 0, 0, 0, 1), (1, 2, 3, 0, 0, 0, 1)],
            1: [(1, 0, 0, 0, sq, 0, sq), (9, 9, 9, 0, 0, sq, sq)]}
    for j in (0, 1):
        if version >= 13:
            anim += struct.pack("<i", -1)
        for k in keys[j]:
            anim += f(*k) + (f(0.0, 0.0) if version >= 13 else b"")
    sockets = struct.pack("<I", 1) + struct.pack("<I", 1) + s(b"hand") + f(0, 0, 0, 1) + f(0.5, 0, 0)
    bindings = struct.pack("<I", 1) + s(b"idle") + f(4, 5, 6) + f(0, 0, 0)
    return sections((b"Header", h), (b"Pieces", pieces), (b"Nodes", nodes), (b"ChildModels", child),
                    (b"Animation", anim), (b"Sockets", sockets), (b"AnimBindings", bindings))


@pytest.mark.parametrize("version", [9, 10, 11, 12, 13])
def test_hand_assembled_v9_to_v13(version):
    data = v9_file(version)
    doc = retromesh.read(data, format="abc")
    assert retromesh.to_bytes(doc) == data
    h = doc.header
    assert (h.version, h.node_count, h.lod_count, h.string_count, h.string_length_total) \
        == (version, 2, 1, 5, 28)
    assert h.unknown_v13 == (77 if version >= 13 else None)
    assert h.command_string == b"Rigid 1" and h.internal_radius == 2.5 and list(h.lod_distances) == [0.0]
    p = doc.pieces[0]
    assert (p.material_index, p.specular_power, p.specular_scale, p.name) == (3, 5.0, 1.5, b"body")
    assert p.lod_weight == (None if version == 9 else 0.75)
    lod = p.lods[0]
    assert lod.faces["vertex"].tolist() == [[0, 1, 2]]
    assert lod.faces["uv"][0].tolist() == [[0.0, 0.25], [1.0, 0.5], [0.5, 1.0]]
    assert lod.vertices["weight_count"].tolist() == [1, 2, 1] and lod.vertices["sublod"].tolist() == [0, 5, 0]
    assert lod.vertices["location"].tolist() == [[1, 2, 3], [2, 2, 3], [2, 3, 3]]
    assert lod.weights["node"].tolist() == [0, 0, 1, 1]
    assert lod.weights["bias"].tolist() == [1.0, 0.25, 0.75, 1.0]
    assert [n.name for n in doc.nodes] == [b"root", b"arm"] and [n.flags for n in doc.nodes] == [1, 2]
    assert doc.nodes[1].matrix[:3, 3].tolist() == [2, 2, 3]          # translation column
    assert doc.weight_sets[0].name == b"upper" and doc.weight_sets[0].weights.tolist() == [0.0, 1.0]
    assert doc.child_models[0].build_number == 9
    a = doc.animations[0]
    assert a.name == b"idle" and a.extents == (4, 5, 6) and a.unknown == -1
    assert a.interpolation_ms == (250 if version >= 12 else None)
    assert a.key_times.tolist() == [0, 400] and a.key_strings == [b"", b"SOUND step"]
    assert a.transforms["location"][1].tolist() == [[1, 0, 0], [9, 9, 9]]
    sock = doc.sockets[0]
    assert sock.node == 1 and sock.name == b"hand" and sock.location == (0.5, 0, 0)
    assert doc.anim_bindings[0].name == b"idle" and doc.anim_bindings[0].extents == (4, 5, 6)
    assert retromesh.registry.get("abc").check(doc) == []         # consistent bind pose
    # the facts' axis rule: positions (x, y, -z), quaternions (-x, -y, z, w), S m S
    sc = ls.to_scene(doc)
    world = sc.world_matrices()
    assert np.allclose(world[1][:3, 3], [2, 2, -3])
    S = np.diag([1.0, 1, -1, 1])
    assert np.allclose(sc.skins[0].inverse_bind_matrices[1],
                       np.linalg.inv(S @ np.array(M_ARM, float).reshape(4, 4) @ S))
    # the arm is rotation-only (flag 0x02): its key translation (9, 9, 9) is not used
    tr = [c for c in sc.animations[0].channels if c.node == 1 and c.path == "translation"][0]
    assert np.allclose(tr.values, [[1, 0, 0], [1, 0, 0]])
    rot = [c for c in sc.animations[0].channels if c.node == 1 and c.path == "rotation"][0]
    assert np.allclose(rot.values[1], [0, 0, np.sqrt(0.5), np.sqrt(0.5)], atol=1e-6)
    assert np.allclose(rot.times, [0.0, 0.4])
    prim = sc.meshes[0].primitives[0]
    assert np.allclose(sorted(map(tuple, prim.positions)), sorted([(1, 2, -3), (2, 2, -3), (2, 3, -3)]))


def v6_file() -> bytes:
    head = s(abc_v6.TOKEN) + s(b"")
    geo = f(0, 0, 0, 1, 1, 1) + struct.pack("<I", 0) + struct.pack("<H", 0) + struct.pack("<I", 1)
    geo += f(0, 0, 1, 0, 0, 1) + struct.pack("<3H", 0, 1, 2) + struct.pack("<3b", 0, 0, 127)
    geo += struct.pack("<2I", 3, 3)
    for x, y in ((0, 0), (1, 0), (0, 1)):
        geo += f(x, y, 0) + struct.pack("<3b", 0, 0, 127) + struct.pack("<B", 1) + struct.pack("<2H", 0, 0)
    nodes = f(0, 0, 0, 0, 0, 0) + s(b"null") + struct.pack("<HB", 0, 1) + struct.pack("<I", 0) \
        + struct.pack("<I", 1)
    nodes += f(0, 0, 0, 1, 1, 1) + s(b"body") + struct.pack("<HB", 1, 6) + struct.pack("<I", 3) \
        + struct.pack("<3H", 0, 1, 2) + struct.pack("<I", 0)
    anim = struct.pack("<I", 1) + s(b"wave") + struct.pack("<I", 100) + f(0, 0, 0, 1, 1, 1) \
        + struct.pack("<I", 2)
    anim += struct.pack("<I", 0) + f(0, 0, 0, 1, 1, 1) + s(b"") + struct.pack("<I", 100) \
        + f(0, 0, 0, 1, 1, 1) + s(b"x")
    anim += f(0, 0, 0, 0, 0, 0, 1) * 2 + f(1, 1, 1) + f(0, 0, 0)                   # null: no MD verts
    anim += f(5, 0, 0, 0, 0, 0, 1) * 2                                             # body keys
    anim += bytes([0, 0, 0, 10, 0, 0, 0, 10, 0]) + bytes([0, 0, 0, 20, 0, 0, 0, 20, 0])   # [key][vert][3]
    anim += f(0.1, 0.1, 0.1) + f(0, 0, 0)                                          # scale, transform
    return sections((b"Header", head), (b"Geometry", geo), (b"Nodes", nodes), (b"Animation", anim),
                    (b"AnimDims", f(1, 1, 1)), (b"TransformInfo", struct.pack("<2i", 1, 1)))


def test_hand_assembled_v6():
    data = v6_file()
    doc = retromesh.read(data, format="abc")
    assert retromesh.to_bytes(doc) == data
    assert [n.name for n in doc.nodes] == [b"null", b"body"] and doc.nodes[1].md_verts.tolist() == [0, 1, 2]
    g = doc.geometry
    assert g.faces["vertex"].tolist() == [[0, 1, 2]] and g.vertices["node"].tolist() == [1, 1, 1]
    a = doc.animations[0]
    assert a.keys["time"].tolist() == [0, 100] and a.key_strings == [b"", b"x"]
    assert a.tracks[1].deform[1].tolist() == [[0, 0, 0], [20, 0, 0], [0, 20, 0]]
    assert a.tracks[1].scale == pytest.approx((0.1, 0.1, 0.1))
    sc = ls.to_scene(doc)
    prim = sc.meshes[0].primitives[0]
    # key 0 places the deformed vertices (byte * 0.1) with the body node at x = 5
    assert np.allclose(sorted(map(tuple, prim.positions)), [(5, 0, 0), (5, 1, 0), (6, 0, 0)], atol=1e-6)
    # key 1 doubles them: the second morph target moves vertex (6, 0, 0) by +1 in x
    disp = prim.targets[1].positions
    assert np.allclose(np.abs(disp).sum(), 2.0, atol=1e-5)
