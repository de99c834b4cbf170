"""Mutators: generic binary ones (bit flips, interesting integers and floats, count fields
inflated, truncation at record boundaries, block edits) and structure-aware glTF ones (JSON
values of the wrong type, indices out of range, hostile strides/counts/URIs, cyclic nodes,
wrong-length TRS, deep nesting, many nodes)."""
from __future__ import annotations

import json
import math
import random
import struct

INT32 = [0, 1, 2, 3, 4, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF,
         0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 0x40000000]
FLOATS = [math.nan, math.inf, -math.inf, 3.4028234663852886e38, -3.4028234663852886e38, 0.0, -0.0,
          1e-45, 1e30, -1.0, 65536.0]


def _tag_positions(data: bytes) -> list[int]:
    """Offsets of 4-letter upper-case ASCII tags (chunk ids in B3D, VXL, VOX, LithTech)."""
    out = []
    for i in range(0, max(len(data) - 4, 0)):
        b = data[i:i + 4]
        if all(65 <= c <= 90 or 48 <= c <= 57 for c in b) and 65 <= b[0] <= 90:
            out.append(i)
            if len(out) > 400:
                break
    return out


def _small_ints(data: bytes) -> list[int]:
    """Offsets of little-endian uint32 values 1..65535 (likely counts, sizes, offsets)."""
    out = []
    for i in range(0, len(data) - 3):
        v = int.from_bytes(data[i:i + 4], "little")
        if 0 < v < 65536:
            out.append(i)
    return out


def _plausible_floats(data: bytes) -> list[int]:
    out = []
    for i in range(0, len(data) - 3, 4):
        v = struct.unpack_from("<f", data, i)[0]
        if math.isfinite(v) and 1e-3 < abs(v) < 1e5:
            out.append(i)
    return out


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        if not buf:
            buf = bytearray(b"\0")
        op = rng.randrange(11)
        n = len(buf)
        if op == 0:                                  # bit flips
            for _ in range(rng.randint(1, 8)):
                i = rng.randrange(n)
                buf[i] ^= 1 << rng.randrange(8)
        elif op == 1:                                # an interesting byte
            buf[rng.randrange(n)] = rng.choice((0, 1, 0x7F, 0x80, 0xFF, 0xFE))
        elif op == 2 and n >= 4:                     # an interesting int32 anywhere
            i = rng.randrange(n - 3)
            buf[i:i + 4] = struct.pack("<I", rng.choice(INT32))
        elif op in (3, 4) and n >= 4:                # a count field inflated
            cands = _small_ints(bytes(buf))
            if cands:
                i = rng.choice(cands)
                v = int.from_bytes(buf[i:i + 4], "little")
                new = rng.choice([0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, 0, v * 1000, v + 1,
                                  max(v - 1, 0), v * 65536, 0xFFFFFFFF - v])
                buf[i:i + 4] = struct.pack("<I", new & 0xFFFFFFFF)
        elif op == 5 and n >= 4:                     # NaN / inf / FLT_MAX in a float
            cands = _plausible_floats(bytes(buf))
            if cands:
                i = rng.choice(cands)
                buf[i:i + 4] = struct.pack("<f", rng.choice(FLOATS))
        elif op == 6:                                # truncation at a record boundary
            cands = _tag_positions(bytes(buf))
            cuts = [c + d for c in cands for d in (0, 4, 8)] or [rng.randrange(n)]
            cut = rng.choice(cuts + [rng.randrange(n)])
            del buf[min(cut, n):]
        elif op == 7:                                # block removed
            i = rng.randrange(n)
            del buf[i:i + rng.randint(1, 64)]
        elif op == 8:                                # block duplicated
            i = rng.randrange(n)
            block = buf[i:i + rng.randint(1, 256)]
            j = rng.randrange(len(buf) + 1)
            buf[j:j] = block
        elif op == 9:                                # block zeroed / 0xff
            i = rng.randrange(n)
            k = rng.randint(1, 32)
            buf[i:i + k] = bytes([rng.choice((0, 0xFF))]) * len(buf[i:i + k])
        elif op == 10 and n >= 2:                    # int16 extremes
            i = rng.randrange(n - 1)
            buf[i:i + 2] = struct.pack("<H", rng.choice((0, 0x7FFF, 0x8000, 0xFFFF)))
    return bytes(buf)


# -- glTF ----------------------------------------------------------------------------------
URI_ATTACKS = ["../secret.txt", "../../x.bin", "%2e%2e/secret.txt", "%2E%2E%2Fsecret.txt",
               "/etc/passwd", "/etc/hostname", "/dev/zero", "C:\\Windows\\win.ini", "C:/x.bin",
               "file:///etc/passwd", "http://example.com/x.bin", "//host/share/x.bin",
               "data:application/octet-stream;base64,!!!!", "data:,abc", "data:;base64,QUJD",
               "data:application/octet-stream;base64,AAAA====AAAA", "sub/../../secret.txt",
               "link.bin", "pipe.bin", ".", "", "..", "a\0b.bin", "CON", "nul.png",
               "x" * 300 + ".bin", "../out/evil.bin", "folder/", "%00.bin"]
WRONG = [None, "x", {}, [], True, False, -1, 0, 1, 2 ** 31, 2 ** 32 + 5, -2 ** 31, 1e308, 1.5,
         [1, 2, 3, 4, 5], [0], ["a"], {"a": 1}, 10 ** 30, "../../etc/passwd"]


def _paths(obj, prefix=()):
    yield prefix, obj
    if len(prefix) > 12:
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:64]):
            yield from _paths(v, prefix + (i,))


def _set(root, path, value):
    obj = root
    for p in path[:-1]:
        obj = obj[p]
    obj[path[-1]] = value


def _targeted(doc: dict, rng: random.Random) -> None:
    """One hostile edit of a known glTF field."""
    def pick(key):
        arr = doc.get(key)
        items = [x for x in arr if isinstance(x, dict)] if isinstance(arr, list) else []
        return rng.choice(items) if items else None

    op = rng.randrange(12)
    if op == 0 and pick("accessors") is not None:
        a = pick("accessors")
        a["count"] = rng.choice([0, 2 ** 31, 2 ** 31 - 1, 2 ** 26, 100_000_000, -1, a.get("count", 1) + 1])
        if rng.random() < 0.3:
            a.pop("bufferView", None)
    elif op == 1 and pick("bufferViews") is not None:
        v = pick("bufferViews")
        v["byteStride"] = rng.choice([-64, -2 ** 31, 0, 1, 3, 4, 256, 252, 2 ** 31, 7])
    elif op == 2 and pick("bufferViews") is not None:
        v = pick("bufferViews")
        key = rng.choice(["byteOffset", "byteLength", "buffer"])
        v[key] = rng.choice([-1, 2 ** 31, 2 ** 32, v.get(key, 0) + 1, v.get(key, 0) * 1000, 0])
    elif op == 3:
        doc.setdefault("buffers", [{"byteLength": 4}])
        target = pick("images") if rng.random() < 0.3 and doc.get("images") else pick("buffers")
        if target is not None:
            target["uri"] = rng.choice(URI_ATTACKS)
            target.pop("bufferView", None)
    elif op == 4 and pick("nodes") is not None:               # a cycle or a second parent
        nodes = [n for n in doc["nodes"] if isinstance(n, dict)]
        a, b = rng.randrange(len(nodes)), rng.randrange(len(nodes))
        nodes[a].setdefault("children", []).append(b)
    elif op == 5 and pick("nodes") is not None:                # wrong-length TRS / matrices
        n = pick("nodes")
        key = rng.choice(["translation", "rotation", "scale", "matrix"])
        n[key] = rng.choice([[], [1.0] * 5, [0.0] * 16, [1e308] * 16, [0, 0, 0], [0, 0, 0, 0],
                             [1.0] * 16, "x", [None, 1, 2]])
    elif op == 6 and pick("accessors") is not None:
        a = pick("accessors")
        a[rng.choice(["componentType", "type"])] = rng.choice([5124, 5130, 0, "VEC5", "MAT4",
                                                              "SCALAR", 5126, 5121, None])
    elif op == 7 and pick("accessors") is not None:            # sparse
        a = pick("accessors")
        a["sparse"] = {"count": rng.choice([1, 2 ** 31, 3]),
                       "indices": {"bufferView": rng.randrange(4), "componentType": 5125,
                                   "byteOffset": rng.choice([0, 2 ** 31])},
                       "values": {"bufferView": rng.randrange(4)}}
    elif op == 8:
        doc.setdefault("extras", {})
        if isinstance(doc["extras"], dict):
            doc["extras"]["source_dir"] = rng.choice([5, "/etc", "../private", None, ["x"]])
    elif op == 9 and pick("meshes") is not None:               # indices and mode
        p = rng.choice(pick("meshes").get("primitives") or [{}])
        if isinstance(p, dict):
            if rng.random() < 0.5:
                p.pop("indices", None)
            else:
                p["mode"] = rng.choice([0, 1, 3, 5, 6, 7, -1])
    elif op == 10 and rng.random() < 0.02:                      # many nodes (work bound; rare:
        # writers take seconds on 20,000 nodes)
        doc["nodes"] = (doc.get("nodes") or []) + [{"name": f"n{i}"} for i in range(20000)]
    elif op == 11 and pick("animations") is not None:
        an = pick("animations")
        s = rng.choice(an.get("samplers") or [{}])
        if isinstance(s, dict):
            s[rng.choice(["input", "output", "interpolation"])] = rng.choice(
                [0, 1, 99, -1, "CUBICSPLINE", "STEP", "BOGUS", None])


def mutate_gltf_json(doc: dict, rng: random.Random) -> dict:
    for _ in range(rng.choice((1, 1, 2, 3))):
        r = rng.random()
        if r < 0.45:
            _targeted(doc, rng)
            continue
        paths = [p for p, _ in _paths(doc) if p]
        if not paths:
            continue
        path = rng.choice(paths)
        if r < 0.75:
            _set(doc, path, rng.choice(WRONG))
        elif r < 0.85:
            parent = doc
            for p in path[:-1]:
                parent = parent[p]
            if isinstance(parent, dict):
                parent.pop(path[-1], None)
            elif isinstance(parent, list) and parent:
                parent.pop(path[-1] if path[-1] < len(parent) else -1)
        elif r < 0.95:
            obj = doc
            for p in path[:-1]:
                obj = obj[p]
            v = obj[path[-1]]
            if isinstance(v, int) and not isinstance(v, bool):
                obj[path[-1]] = rng.choice([v + 1, v - 1, -v, v * 1000, 2 ** 31 - 1, 2 ** 53])
            elif isinstance(v, list) and v:
                v.extend(v[:rng.randint(1, 4)])
        else:                                                  # deep nesting
            deep: list = []
            for _ in range(rng.choice((50, 5000, 200000))):
                deep = [deep]
            _set(doc, path, deep)
    return doc


def split_glb(data: bytes) -> tuple[dict, bytes] | None:
    try:
        n = struct.unpack_from("<I", data, 12)[0]
        doc = json.loads(data[20:20 + n])
        rest = data[20 + n:]
        blob = rest[8:8 + struct.unpack_from("<I", rest, 0)[0]] if len(rest) >= 8 else b""
        return doc, blob
    except Exception:
        return None


def join_glb(doc: dict, blob: bytes) -> bytes:
    js = _dumps(doc)
    js += b" " * ((-len(js)) % 4)
    body = struct.pack("<II", len(js), 0x4E4F534A) + js
    if blob:
        blob += b"\0" * ((-len(blob)) % 4)
        body += struct.pack("<II", len(blob), 0x004E4942) + blob
    return struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body


def _dumps(doc: dict) -> bytes:
    try:
        return json.dumps(doc).encode("utf-8")
    except RecursionError:
        return b'{"asset": {"version": "2.0"}, "extras": ' + b"[" * 100000 + b"]" * 100000 + b"}"


def mutate_gltf(data: bytes, ext: str, rng: random.Random) -> bytes:
    """A structure-aware mutation of a .glb/.gltf (sometimes followed by a byte mutation)."""
    try:
        return _mutate_gltf(data, ext, rng)
    except (TypeError, KeyError, IndexError, AttributeError, ValueError):
        return mutate_bytes(data, rng)        # an edit that did not fit this document


def _mutate_gltf(data: bytes, ext: str, rng: random.Random) -> bytes:
    if ext == "glb":
        parts = split_glb(data)
        if parts is None:
            return mutate_bytes(data, rng)
        doc, blob = parts
        if rng.random() < 0.15:
            blob = mutate_bytes(blob, rng) if blob else blob
        out = join_glb(mutate_gltf_json(doc, rng), blob)
    else:
        try:
            doc = json.loads(data)
        except Exception:
            return mutate_bytes(data, rng)
        out = _dumps(mutate_gltf_json(doc, rng))
    if rng.random() < 0.15:
        out = mutate_bytes(out, rng)
    return out
