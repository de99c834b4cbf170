"""Records already written keep decoding (issue 32, docs/lossless.md): GLBs written by earlier
releases carry them in extras, so each kind of record must keep its encoding.

``GOLDEN`` holds one record of each kind as the code before the records' tools were shared
(``retromesh.restore``) wrote them, for the inputs below: the code now must write the same
strings and put the values read back from them."""
from __future__ import annotations

import numpy as np

from retromesh import restore
from retromesh.formats.b3d import exact as b3d
from retromesh.formats.b3d.axes import rot_to_gltf
from retromesh.formats.b3d.chunks import BONE_DTYPE, Bone, Keys, keys_dtype
from retromesh.formats.lithtech import lta_scene
from retromesh.formats.lostsaga import scene_extras as ls
from retromesh.formats.overgrowth import exact as og
from retromesh.scene import Scene

GOLDEN: dict = {
    "keep_rows": {
        "at": "eAFjYmBgYAZiJiBmAWIAAHQADA==",
        "xor": "eAFjZGBg+P//PwMjkAZhZigNpBqAGAxgYiB5AIxXA4o=",
    },
    "keep_table": {
        "at": "eAFjZGBgYAJiAAAYAAQ=",
        "rows": "eAFjYGiwz7tttp8BCLbn3rZT9Zxkr+optJ8RKJ4LFGcEiu8AiqsBxVWA4gBw3w9z",
    },
    "keep_bytes": {
        "block": 64,
        "size": 300,
        "at": "eAFjYGBgYAJiAAAQAAM=",
        "crc": "iPErj82SOGg=",
        "check": "hA8=",
        "xor": "eAFjYAACRhBBLmggVyNYHwAf+wCC",
    },
    "keep_bytes_whole": {
        "whole": ("eAFjYOcTlVHWMrSwd/MNiU7KLCiva+2ZPGvhivXb9h45fenmg+fvvjJy8IvJqmgbWTq4+4XGJGcVVtS39U6ZvWjl"
             "hu37jp65fOvhi/ffmDgFxOVUdYytHD38w2JTsosqG9r7ps5ZvGrjjv3Hzl65/ejlh+/MXIIS8mq6JtZOngHhcak5"
             "xVWNHf3T5i5ZvWnngePnrt55/OrjDxZuIUkFdT1TG2evwIj4tNyS6qbOCdPnLV2zedfBE+ev3X3y+tNPVh5hKUUN"
             "fTNbF++gyIT0vNKa5q6JM+YvW7tl96GTF67fe/rm8y82XhFpJU0DcztXn+CoxIz8stqW7kkzFyxft3XP4VMXb9x/"
             "9vYLA6leBwBU2o35"),
        "crc": [3897669975, 290],
    },
    "b3d_pack": {
        "n": 20,
        "rows": "AgAAAAMAAAACAAAABAAAAA==",
        "f32": "bts2PwAAgL8lSZK+JUkSviVJEj8lSZK/AAAAgAAAAABu2zY/JUkSPyVJkr+3bdu+",
    },
    "b3d_pack_big": {
        "n": 300,
        "rows": ("AAAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMA"
             "AAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAA"
             "AwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMA"
             "AAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAA"
             "AwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMA"
             "AAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAAAwAAAAMAAAADAAAA"
             "AwAAAA=="),
        "f32": ("z:eJztzLEVhSAMQNHMwAyygiXWzOAMMIMzZAZnkA5qZ2CZ/9AUv7Wn4Z4knKfF++JzhggCETJ4yOCBoy8wfqshII"
             "YaxXiiOtuf20uKMcXeQUFAoUOEDhE4xgTj92IIiLEYyXiis/29fe/Odb1WOEHghBUcXOBAYYcONygccBi3sRsOrt"
             "n+3m6tbmFrgw2kjrfJ9keQZwhjqEYIY1ffAdq7a++uvbvZ/t7+AckIkas="),
    },
    "og_xor": {
        "rows": 12,
        "xor": "eJxjZGBgYARiZihNKoDpg5lBKYCZR6x7AApAABc=",
        "check": "eJy7Y26fYr7phOwaf4sLACNnBYg=",
    },
    "og_tables": {
        "vt": "eJxjYGBgYIRiAAAYAAM=",
        "vn": "eJxjYGBgYIRiAAAYAAM=",
    },
    "lta_text": "eNrTyCnRzc1PSc3RNeBSUNDIz9PNyU9M0U3OTSnW1OQCAI5fCPA=",
    "ls_script": {
        "text": "ePkaFQPb09dXyE4tKOHKRQgBADwfBhc=",
        "generated": "04b46775a2d9879a5a68ff40",
    },
}


#: a BONE record and a rotation key record of the first version (the values kept), as main
#: wrote them before the second (for ``inputs()["bone"]`` and the keys of
#: :func:`test_b3d_key_records_put_back_what_was_read`)
OLD_B3D_BONE = {"v": "BAAAAP3///8CAAAA/f///wIAAAA=", "w": "AACAPgAAgD+amZk+AAAAPzMzMz8="}
OLD_B3D_KEYS = [["AgAAAAEAAAA=", {"n": 6, "rows": "AQAAAAEAAAABAAAA",
                                  "f32": "/v9/PwAAAAAXt9E4AAAAAPQENT/0BDU/AAAAAAAAAAAAAAA/AAAAPwAAAD8CAAA/"}]]

#: the second version of the per-node record (``d``, ``c``), as GLBs of the release before the
#: one-per-model record hold it, for the keys of :func:`test_b3d_key_records_put_back_what_was_read`
OLD_B3D_KEYS_V2 = [["n:Eg==", {"n": 6, "rows": "o:EQE=", "d": "n:Dg4RABER", "c": "+F4o"}]]
#: the one record of a model's rotation keys (scene extras ``b3d_kexact``): nodes 3 and 7, the
#: keys of :func:`test_b3d_key_records_put_back_what_was_read` and two more on node 7 (one whose
#: distance does not fit in int32: a -NaN, kept as its value)
B3D_SCENE_KEYS = {"nodes": "n:QyY=", "f": "o:EgQ=", "d": "n:Dg4RABERAAA=", "c": "R/Sang==",
                  "rows": "n:ETE=", "w": "o:Aw==", "wf": "AADA/wAAAAAAAAAAAAAAAA=="}

def grid(n: int, w: int, k: int = 17) -> np.ndarray:
    return (((np.arange(n * w) * 5) % k - k // 2) / 7).astype(np.float32).reshape(n, w)

def nudged(a: np.ndarray, rows: list[int]) -> np.ndarray:
    b = a.copy()
    b[rows] = np.nextafter(b[rows], np.float32(9))
    return b

def inputs() -> dict:
    was = grid(20, 3)
    was[7, 0] = -0.0
    back = nudged(was, [2, 5, 11])
    back[7, 0] = 0.0
    big = grid(300, 4, 23)
    big_naive = nudged(big, list(range(0, 300, 3)))
    tab = grid(4, 3)
    tab_back = nudged(tab, [1, 3])
    data = bytes((i * 7) % 251 for i in range(300))
    changed = bytearray(data)
    changed[5] ^= 1
    changed[130] ^= 0x80
    data_back = bytes(changed)
    bone = np.zeros(5, BONE_DTYPE)
    bone["vertex"] = [4, 1, 3, 0, 2]
    bone["weight"] = [0.25, 1, 0.3, 0.5, 0.7]
    orig = grid(12, 4)
    written = nudged(orig, [0, 4, 9])
    ins = grid(12, 3, 13)
    corners = np.array([[0, 0, 0], [1, 1, 1], [2, 2, 2], [0, 0, 0]], np.int64)
    return locals()


def records(x: dict) -> dict:
    return {
        "keep_rows": restore.keep_rows(x["was"], x["back"]),
        "keep_table": restore.keep_table(x["tab"], x["tab_back"]),
        "keep_bytes": restore.keep_bytes(x["data"], x["data_back"]),
        "keep_bytes_whole": restore.keep_bytes(x["data"], x["data_back"][:290]),
        "b3d_pack": b3d.pack(x["was"], x["back"]),
        "b3d_pack_big": b3d.pack(x["big"], x["big_naive"]),
        "og_xor": og.xor_record(x["orig"], x["written"], x["ins"]),
        "og_tables": og.source_tables(x["corners"]),
        "lta_text": lta_scene.pack(b"(lt-model-0\n  (on-load-cmds))\n"),
        "ls_script": ls.script_record(b"// kept\nmaterial a\n", b"material a\n"),
    }


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return np.array_equal(restore.bits(a), restore.bits(b))


def test_records_are_written_as_before():
    assert records(inputs()) == GOLDEN


def test_restore_records_put_back_what_was_read():
    x = inputs()
    out = x["back"].copy()
    assert restore.put_back_rows(out, x["was"], GOLDEN["keep_rows"], lambda w: w) == 4
    assert same_bits(out, x["was"])
    out = x["tab_back"].copy()
    assert restore.put_back_table(out, GOLDEN["keep_table"]) == 2
    assert same_bits(out, x["tab"])
    assert restore.put_back_bytes(x["data_back"], GOLDEN["keep_bytes"]) == (x["data"], 2)
    assert restore.put_back_bytes(x["data_back"][:290], GOLDEN["keep_bytes_whole"]) == (x["data"], 1)


def test_b3d_records_put_back_what_was_read():
    x = inputs()
    got = b3d.unpack(GOLDEN["b3d_pack"], 20, 3)
    assert got is not None and got[0].tolist() == [2, 5, 7, 11]
    for key, was, back in (("b3d_pack", x["was"], x["back"]),
                           ("b3d_pack_big", x["big"], x["big_naive"])):
        out = back.copy()
        b3d.restore_rows(out, lambda k: k, was, GOLDEN[key], 0.0)
        assert same_bits(out, was)
    bone = x["bone"]
    written = np.sort(bone, order="vertex")
    written["weight"] = np.nextafter(written["weight"], np.float32(2))
    for rec in (OLD_B3D_BONE, b3d.bone_record(bone, np.zeros(5, bool))):
        b = Bone(weights=written)
        b3d.restore_bone(b, rec)
        assert b.weights.tobytes() == bone.tobytes()


def test_b3d_bone_records_keep_only_the_weights_the_way_back_changes():
    """Version 3 of the BONE record: made against the weights the GLB holds, it keeps only the
    entries whose weight does not come back bit for bit (their places and file values); the
    file's bits come back, an edited weight stays edited, and without the GLB's weights (or
    for an editor) the bone keeps all (version 2)."""
    bone = np.zeros(4, BONE_DTYPE)
    bone["vertex"] = [3, 0, 1, 2]                   # (not in the writer's order: ``v`` too)
    bone["weight"] = [0.25, 0.5, 0.3, 1.0]
    odd = np.zeros(4, bool)
    joints = np.array([[1, 2, 0, 0]] * 4, np.uint16)
    glb = np.zeros((4, 4), np.float32)
    glb[:, 0] = bone["weight"][np.argsort(bone["vertex"])]
    glb[1, 0] = np.nextafter(glb[1, 0], np.float32(2))     # vertex 1: a float32 unit off
    glb[:, 1] = 1 - glb[:, 0]
    rec = b3d.bone_records([bone], odd, lambda: (np.arange(4), joints, glb, [1]))[0]
    assert rec is not None and set(rec) == {"v", "ws", "wf"}
    assert np.frombuffer(restore.unpack_words(rec["wf"]), "<f4").tolist() == [np.float32(0.3)]
    assert set(b3d.bone_records([bone], odd)[0]) == {"v", "wu", "wi"}
    written = np.zeros(4, BONE_DTYPE)
    written["vertex"] = [0, 1, 2, 3]
    written["weight"] = glb[:, 0]
    b = Bone(weights=written.copy())
    b3d.restore_bone(b, rec)
    assert b.weights.tobytes() == bone.tobytes()
    edited = written.copy()
    edited["weight"][1] = 0.6
    b = Bone(weights=edited)
    b3d.restore_bone(b, rec)
    assert b.weights["weight"].tolist() == [np.float32(0.25), np.float32(0.5), np.float32(0.6),
                                            np.float32(1.0)]


def key_chunks(q: np.ndarray) -> list[list[Keys]]:
    k = np.zeros(len(q), keys_dtype(4))
    k["frame"] = np.arange(len(q))
    k["rotation"] = q
    return [[Keys(4, k)]]


def test_b3d_key_records_put_back_what_was_read():
    """Both versions of the rotation key record (the first keeps the values, the second their
    distance from the value the way back gives): the file's keys come back, an edited one not."""
    q = np.array([[1, 0, 0, 0], [0.9999999, 0, 0.0001, 0], [0.7071068, 0.7071068, 0, 0],
                  [0.5, 0.5, 0.5, 0.5000001], [0, 1, 0, 0], [-0.0, 0, 1, 0]], np.float32)
    flips = np.array([0, 0, 1, 1, 0, 0], bool)
    made = b3d.keys_records(key_chunks(q), flips)
    assert made[0][1]["d"] and "f32" not in made[0][1]
    assert made == OLD_B3D_KEYS_V2
    for recs in (OLD_B3D_KEYS, OLD_B3D_KEYS_V2, made):
        written = b3d.rotation_naive(q)
        written[flips] *= -1
        chunks = key_chunks(written)
        b3d.restore_keys(chunks, recs, 0.0)
        assert same_bits(chunks[0][0].keys["rotation"], q)
        edited = written.copy()
        edited[1] = (0.0, 0.0, 1.0, 0.0)
        chunks = key_chunks(edited)
        b3d.restore_keys(chunks, recs, 0.0)
        got = chunks[0][0].keys["rotation"]
        assert same_bits(got[[0, 2, 3]], q[[0, 2, 3]]) and same_bits(got[1], edited[1])


def b3d_scene_keys() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The file keys of :data:`B3D_SCENE_KEYS`, the glTF rotations written from them, flips."""
    q = np.array([[1, 0, 0, 0], [0.9999999, 0, 0.0001, 0], [0.7071068, 0.7071068, 0, 0],
                  [0.5, 0.5, 0.5, 0.5000001], [0, 1, 0, 0], [-0.0, 0, 1, 0],
                  [0, 0, 0, 0], [0.6, 0.8, 0, 0.0000001]], np.float32)
    q[6, 0] = np.array([0xFFC00000], np.uint32).view(np.float32)[0]      # -NaN
    return q, rot_to_gltf(q.astype(np.float64)).astype(np.float32), np.array([2, 3, 7])


def test_b3d_scene_key_record_puts_back_what_was_read():
    """The one record of a model's rotation keys (scene extras ``b3d_kexact``): every node's
    keys come back bit for bit; an edited key and a node with another number of keys keep
    what the scene has."""
    q, g, flipped = b3d_scene_keys()
    made = b3d.keys_scene_record(np.array([3, 7]), np.array([6, 2]), q, g, flipped)
    assert made == B3D_SCENE_KEYS

    def written() -> np.ndarray:
        w = b3d.rotation_naive(q)
        w[flipped] *= -1
        return w

    def chunks_of(w: np.ndarray) -> dict[int, list[Keys]]:
        a, b = key_chunks(w[:4])[0][0], key_chunks(w[4:6])[0][0]     # node 3: two chunks
        return {3: [a, b], 7: key_chunks(w[6:])[0], 5: key_chunks(w[:1])[0]}

    def back(chunks: dict[int, list[Keys]]) -> np.ndarray:
        return np.concatenate([c.keys["rotation"] for n in (3, 7) for c in chunks[n]])

    chunks = chunks_of(written())
    b3d.restore_keys_scene(chunks, B3D_SCENE_KEYS, 0.0)
    assert same_bits(back(chunks), q)
    edited = written()
    edited[1] = (0.0, 0.0, 1.0, 0.0)
    chunks = chunks_of(edited)
    b3d.restore_keys_scene(chunks, B3D_SCENE_KEYS, 0.0)
    got = back(chunks)
    assert same_bits(got[1], edited[1]) and same_bits(np.delete(got, 1, 0), np.delete(q, 1, 0))
    chunks = chunks_of(written())
    chunks[7] = key_chunks(written()[6:7])[0]           # node 7 lost a key: left as it is
    b3d.restore_keys_scene(chunks, B3D_SCENE_KEYS, 0.0)
    assert same_bits(back(chunks)[:6], q[:6])
    assert same_bits(chunks[7][0].keys["rotation"], written()[6:7])
    for junk in (None, 7, {"nodes": "n:Qw=="}, {**B3D_SCENE_KEYS, "nodes": "o:Aw=="},
                 {**B3D_SCENE_KEYS, "c": "x"}, {**B3D_SCENE_KEYS, "w": "o:Bw=="}):
        chunks = chunks_of(written())
        b3d.restore_keys_scene(chunks, junk, 0.0)
        assert same_bits(back(chunks), written())

def test_b3d_normal_records_put_back_what_was_read():
    """Normals not of unit length (and a zero one), both versions of the record: the file's
    come back, an edited one not."""
    nrm = (grid(20, 3) * np.float32(1.25)).astype(np.float32)
    nrm[4] = 0.0
    naive = b3d.normal_naive(nrm)
    naive[4] = (0.0, 1.0, 0.0)                  # glTF computed one
    for rec in (b3d.pack(nrm, naive), b3d.pack_normals(nrm, naive)):
        out = naive.copy()
        out[7] = (1.0, 0.0, 0.0)                # edited
        b3d.restore_rows(out, b3d.normal_naive, out.copy(), rec, 0.0, degenerate=True)
        keep = np.arange(20) != 7
        assert same_bits(out[keep], nrm[keep]) and same_bits(out[7], np.float32([1, 0, 0]))


def test_overgrowth_records_put_back_what_was_read():
    x = inputs()
    out, same = restore.xor_rows(GOLDEN["og_xor"], x["written"], x["ins"])
    assert same.all() and same_bits(out, x["orig"])
    c = x["corners"]
    assert np.array_equal(og.sources(c[:, 0], {}, {"of_v": GOLDEN["og_tables"]}), c)


def test_text_records_put_back_what_was_read():
    assert lta_scene.unpack(GOLDEN["lta_text"]) == b"(lt-model-0\n  (on-load-cmds))\n"
    scene = Scene(extras={"lostsaga_script": GOLDEN["ls_script"]})
    assert ls.kept_script(scene, b"material a\n") == b"// kept\nmaterial a\n"
    assert ls.kept_script(scene, b"material b\n") == b"material b\n"
    assert restore.unpack_bytes(GOLDEN["lta_text"][:-8]) is None        # cut short


def test_xor_records_by_byte_planes_put_back_what_was_read():
    """xor_record(planes=True) keeps the XOR byte plane by byte plane ("xor_planes"): read
    back as the plain "xor" is (GOLDEN["og_xor"] above), an edited row not put back."""
    x = inputs()
    record = restore.xor_record(x["orig"], x["written"], x["ins"], planes=True)
    assert record is not None and "xor" not in record and "xor_planes" in record
    out, same = restore.xor_rows(record, x["written"], x["ins"])
    assert same.all() and same_bits(out, x["orig"])
    ins = np.array(x["ins"], np.float32)
    ins[3] += 1.0                                       # an edited row: written as computed
    out, same = restore.xor_rows(record, x["written"], ins)
    assert not same[3] and same_bits(out[3], np.asarray(x["written"], np.float32)[3])
