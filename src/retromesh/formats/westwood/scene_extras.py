"""The kept data of ``.vxl`` (+ ``.hva``): what glTF has no place for rides in node extras, so
that ``.vxl -> .glb -> .vxl`` gives the files back (:mod:`.scene_write` restores them).

``to_scene`` puts on every limb node ``vxl_limb`` (the whole limb: raw name, header words,
scale, tailer matrix, bounds, size, normal table and its span tables and span data, zlib +
base64) and on the root node ``vxl_file`` (header words, palette, remap range, raw body and
trailing bytes, the palette and meshing options the scene was made with) and ``hva_file`` (the
``.hva`` as it was read, zlib + base64, the fps and the section each limb took its matrices
from). Node extras are where Blender keeps them (custom properties, exported again with
``export_extras``); values are JSON strings.

This module writes these records (:func:`limb_extras`, :func:`file_extras`,
:func:`hva_extras`) and reads them back, checked (:func:`kept_limb`, :func:`kept_file`,
:func:`kept_hva`): extras come from any glTF, so a damaged record reads as "nothing kept",
never as a crash.
"""
from __future__ import annotations

import base64
import json
import zlib
from typing import Any

import numpy as np

from ... import extras as xt
from ...binio import Reader
from ...errors import RetromeshError
from .hva import HvaFile, read as read_hva, write as write_hva
from .voxels import check_spans
from .vxl import Limb, VxlFile

__all__ = ["FILE_KEY", "HVA_KEY", "LIMB_KEY", "MAX_UNPACKED", "file_extras", "hva_extras",
           "kept_file", "kept_hva", "kept_limb", "limb_extras", "pack", "unpack"]

LIMB_KEY = "vxl_limb"
FILE_KEY = "vxl_file"
HVA_KEY = "hva_file"


def pack(data: bytes) -> str:
    return base64.b64encode(zlib.compress(bytes(data), 9)).decode("ascii")


#: kept data decompresses to at most this (a 255^3 limb's spans are under 90 MB): extras come
#: from files, so a zlib bomb in them must not become gigabytes
MAX_UNPACKED = 96 << 20


def unpack(text: str) -> bytes:
    """Bytes kept by :func:`pack`; ValueError when not base64 + zlib or over MAX_UNPACKED."""
    z = zlib.decompressobj()
    out = z.decompress(base64.b64decode(text.encode("ascii"), validate=True), MAX_UNPACKED)
    if z.unconsumed_tail or not z.eof:
        raise ValueError(f"kept data is not one zlib stream of at most {MAX_UNPACKED} bytes")
    return out

def kept_file(text: Any) -> dict[str, Any] | None:
    """The ``vxl_file`` record, decoded and type-checked; None when it is not one we wrote
    (extras come from any glTF: a broken record means "not a kept file", never a crash)."""
    try:
        d = json.loads(text)
        b64 = lambda k: base64.b64decode(d[k].encode("ascii"), validate=True)   # noqa: E731
        rec = {"magic": b64("magic"), "trailing": b64("trailing"),
               "palette": np.frombuffer(b64("palette"), np.uint8).reshape(256, 3).copy(),
               "scene_palette": np.frombuffer(b64("scene_palette"), np.uint8).reshape(256, 3),
               "palette_count": int(d["palette_count"]),
               "remap": tuple(int(v) for v in d["remap"]),
               "limbs": int(d["limbs"]), "greedy": d["greedy"], "normals": d["normals"],
               "raw_body": None, "no_hva": d.get("no_hva") is True}
        if len(rec["remap"]) != 2 or not isinstance(rec["greedy"], bool) or \
                not isinstance(rec["normals"], str):
            return None
        if d.get("raw_body") is not None:
            data, offs = d["raw_body"]
            rec["raw_body"] = (unpack(data), np.array(offs, np.uint32).reshape(-1, 3))
        return rec
    except (TypeError, ValueError, KeyError, AttributeError, OverflowError, zlib.error):
        return None

def _floats(a: Any) -> list[float]:
    return [float(v) for v in np.asarray(a, np.float32).reshape(-1)]


def limb_extras(limb: Limb) -> str:
    start = np.asarray(limb.span_start, "<i4").tobytes()
    end = np.asarray(limb.span_end, "<i4").tobytes()
    return json.dumps({
        "name": base64.b64encode(bytes(limb.name)).decode("ascii"), "index": int(limb.index),
        "unknown1": int(limb.unknown1), "unknown2": int(limb.unknown2),
        "scale": float(np.float32(limb.scale)), "transform": _floats(limb.transform),
        "bounds_min": _floats(limb.bounds_min), "bounds_max": _floats(limb.bounds_max),
        "size": [int(v) for v in limb.size], "normal_type": int(limb.normal_type),
        "spans": pack(start + end + bytes(limb.span_data)), "columns": len(limb.span_start),
    }, separators=(",", ":"))


def kept_limb(text: Any) -> Limb | None:
    try:
        d = json.loads(text)
        n = int(d["columns"])
        raw = unpack(d["spans"])
        limb = Limb(name=base64.b64decode(d["name"]), index=int(d["index"]),
                    unknown1=int(d["unknown1"]), unknown2=int(d["unknown2"]),
                    span_start=np.frombuffer(raw[:4 * n], "<i4").astype(np.int32),
                    span_end=np.frombuffer(raw[4 * n:8 * n], "<i4").astype(np.int32),
                    span_data=raw[8 * n:], scale=float(np.float32(d["scale"])),
                    transform=np.array(d["transform"], np.float32).reshape(3, 4),
                    bounds_min=np.array(d["bounds_min"], np.float32).reshape(3),
                    bounds_max=np.array(d["bounds_max"], np.float32).reshape(3),
                    normal_type=int(d["normal_type"]))
        size = xt.integers(d["size"], 3, 0, 255)
        if size is None:
            return None
        limb.xsize, limb.ysize, limb.zsize = size
        if n != limb.xsize * limb.ysize or not 0 <= limb.normal_type <= 255 or \
                not all(0 <= v < 2**32 for v in (limb.index, limb.unknown1, limb.unknown2)):
            return None
        check_spans(limb.span_start, limb.span_end, limb.span_data, (size[0], size[1], size[2]))
        return limb
    except (ValueError, KeyError, TypeError, AttributeError, OverflowError, zlib.error):
        return None     # SpanError is a ValueError


def file_extras(doc: VxlFile, palette: np.ndarray, greedy: bool, normals: str,
                with_hva: bool = True) -> str:
    """The ``vxl_file`` record; ``no_hva`` (only when true, so records of files read with
    their ``.hva`` stay as they were) says the file was read without one."""
    raw = doc.raw_body
    return json.dumps({**({} if with_hva else {"no_hva": True}),
        "magic": base64.b64encode(doc.magic).decode("ascii"),
        "palette_count": int(doc.palette_count), "remap": [int(doc.remap_start), int(doc.remap_end)],
        "palette": base64.b64encode(np.asarray(doc.palette, np.uint8).tobytes()).decode("ascii"),
        "scene_palette": base64.b64encode(np.asarray(palette, np.uint8).tobytes()).decode("ascii"),
        "trailing": base64.b64encode(bytes(doc.trailing)).decode("ascii"),
        "raw_body": None if raw is None else [pack(raw.data),
                                              np.asarray(raw.offsets).reshape(-1).tolist()],
        "limbs": len(doc.limbs), "greedy": bool(greedy), "normals": normals,
    }, separators=(",", ":"))


def hva_extras(hdoc: HvaFile, sections: list[int | None], fps: float) -> str:
    return json.dumps({"hva": pack(write_hva(hdoc)), "sections": sections, "fps": float(fps)},
                      separators=(",", ":"))


def kept_hva(text: Any, n_limbs: int) -> tuple[HvaFile | None, list[int | None], float]:
    """The ``hva_file`` record: (the kept ``.hva``, the section each limb took its matrices
    from, fps); ``(None, [None] * n_limbs, 6.0)`` when there is none or it is damaged."""
    hdoc: HvaFile | None = None
    sections: list[int | None] = [None] * n_limbs
    fps = 6.0
    if isinstance(text, str):
        try:
            d = json.loads(text)
            hdoc = read_hva(Reader(unpack(d["hva"]), file="kept.hva"))
            n_sec = hdoc.matrices.shape[1] if hdoc.frames else 0
            sections = [None if v is None else xt.integer({0: v}, 0, -1, 0, n_sec - 1)
                        for v in d["sections"]]
            fps = xt.number(d, "fps", -1.0, 1e-3, 1e6)
            if not isinstance(d["sections"], list) or -1 in sections or fps < 0:
                raise ValueError("kept HVA record out of range")
        except (ValueError, KeyError, TypeError, AttributeError, zlib.error, RetromeshError):
            # damaged extras: a new HVA from the scene
            hdoc, sections, fps = None, [None] * n_limbs, 6.0
    return hdoc, sections, fps
