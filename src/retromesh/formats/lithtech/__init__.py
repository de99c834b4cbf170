"""LithTech ``.abc`` models: v9-v13 (No One Lives Forever family, :mod:`.abc`) and v6
(Shogo / Blood 2, :mod:`.abc_v6`), registered as one format ``abc``; ``.dtx`` textures
(:mod:`.dtx`, pixels in :mod:`.dtx_pixels`), the models' skins (:mod:`.skins`), which convert
to and from ``.png`` (:mod:`.dtx_image`; the ``png`` format is :mod:`retromesh.image`'s, no
game's) and are an image format of :mod:`retromesh.imageformats` (a model of another family
naming a ``.dtx`` finds it too);
``.lta`` text models (ModelEdit's, :mod:`.lta`, read as ABC records by :mod:`.lta_model`) and
``.ltc`` (LTA compressed, :mod:`.ltc`), both to and from a scene through the ABC mapping
(:mod:`.lta_scene`) and converted to and from ``.abc`` directly.

Both versions start with a ``Header`` section; what follows its next-section offset tells them
apart (a uint32 version 9..13, or the v6 token string ``MonolithExport Model File v6``).
:mod:`.scene` converts to and from :class:`~retromesh.scene.Scene` (both ways for every
version; a v6 scene is written back as v6); :mod:`.samples` builds
small complete files of every version with our own writers.
"""
from __future__ import annotations

import importlib
import struct
from typing import Any

from ...binio import Reader
from ...errors import DocumentError
from ...findings import Finding
from ...imageformats import ImageFormat, register as register_image
from ...registry import lazy, register, register_converter
from . import abc, abc_v6, dtx, lta, ltc, scene
from .abc import AbcModel
from .abc_v6 import AbcV6Model
from .lta import LtaFile
from .ltc import LtcFile
from .manifest import ABC, DTX, LTA, LTC

#: submodules imported when first used (``lithtech.samples``...), not with the family: an
#: ``.abc`` conversion needs none of them (the command line starts faster)
_LAZY = ("dtx_image", "lta_model", "lta_scene", "samples")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _lazy(module: str, name: str) -> Any:
    return lazy(f"{__name__}.{module}", name)


def _to_model(text: LtaFile) -> AbcModel:
    from .lta_model import to_model
    return to_model(text)


__all__ = ["abc", "abc_v6", "dtx", "lta", "lta_model", "lta_scene", "ltc", "scene",
           "samples", "AbcModel", "AbcV6Model", "LtaFile", "LtcFile", "read", "write",
           "sniff_version", "lta_info", "lta_check"]


def sniff_version(head: bytes) -> int | None:
    """6 or 9..13 from the first 16+ bytes of a file, or None when it is no ABC we know."""
    if len(head) < 16 or head[:8] != b"\x06\x00Header":
        return None
    v = struct.unpack_from("<I", head, 12)[0]
    if v in abc.VERSIONS:
        return v
    return 6 if head[14:28] == b"MonolithExport"[:len(head[14:28])] else None


def read(r: Reader) -> AbcModel | AbcV6Model:
    head = r.peek(64)
    if len(head) >= 14 and head[:8] == b"\x06\x00Header":
        v = struct.unpack_from("<I", head, 12)[0] if len(head) >= 16 else None
        if v not in abc.VERSIONS and head[14:].startswith(b"MonolithExport"):
            return abc_v6.read(r)
    return abc.read(r)


def write(doc: AbcModel | AbcV6Model) -> bytes:
    if isinstance(doc, AbcV6Model):
        return abc_v6.write(doc)
    if isinstance(doc, AbcModel):
        return abc.write(doc)
    raise DocumentError(f"{type(doc).__name__} is not an ABC model")


def info(doc: AbcModel | AbcV6Model) -> dict[str, Any]:
    if isinstance(doc, AbcV6Model):
        g = doc.geometry
        return {
            "version": 6,
            "nodes": len(doc.nodes),
            "triangles": len(g.faces) if g else 0,
            "vertices": len(g.vertices) if g else 0,
            "lods": (len(g.vertex_start) - 1) if g else 0,
            "deformation nodes": sum(1 for n in doc.nodes if len(n.md_verts)),
            "animations": len(doc.animations),
            "keyframes": sum(len(a.key_strings) for a in doc.animations),
            "sections": len(doc.sections),
        }
    lods = [l for p in doc.pieces for l in p.lods]
    return {
        "version": doc.version,
        "pieces": len(doc.pieces),
        "lods": doc.header.lod_count,
        "triangles": sum(len(l.faces) for l in lods),
        "vertices": sum(len(l.vertices) for l in lods),
        "weights": sum(len(l.weights) for l in lods),
        "nodes": len(doc.nodes),
        "weight sets": len(doc.weight_sets),
        "child models": len(doc.child_models),
        "animations": len(doc.animations),
        "keyframes": sum(len(a.key_strings) for a in doc.animations),
        "sockets": len(doc.sockets),
        "anim bindings": len(doc.anim_bindings),
        "sections": len(doc.sections),
    }


def check(doc: AbcModel | AbcV6Model) -> list[Finding]:
    return scene.structural_problems(doc)


def _sniff(head: bytes) -> bool:
    return sniff_version(head) is not None


register(ABC, doc_types=(AbcModel, AbcV6Model), sniff=_sniff, read=read, write=write,
         to_scene=scene.to_scene, from_scene=scene.from_scene, info=info, check=check)
register(DTX, doc_types=(dtx.DtxTexture,), sniff=dtx.sniff, read=dtx.read, write=dtx.write,
         info=dtx.info, check=dtx.check)
register_converter("dtx", "png", _lazy("dtx_image", "dtx_to_png"))
register_converter("png", "dtx", _lazy("dtx_image", "png_to_dtx"))
register_image(ImageFormat("dtx", ("dtx",), sniff=dtx.sniff, open=_lazy("dtx_image", "open_image")))


def lta_info(doc: LtaFile | LtcFile) -> dict[str, Any]:
    """The counts of the ABC model the text describes (as ``info`` of an ``.abc``), and the
    text's own."""
    text = doc.lta if isinstance(doc, LtcFile) else doc
    if lta.kind(text) != "model":     # a render style: only the text's own counts
        return {**(ltc.info(doc) if isinstance(doc, LtcFile) else lta.info(doc))}
    out = info(_to_model(text))
    del out["version"], out["sections"]
    return {**out, **(ltc.info(doc) if isinstance(doc, LtcFile) else lta.info(doc))}


def lta_check(doc: LtaFile | LtcFile) -> list[Finding]:
    text = doc.lta if isinstance(doc, LtcFile) else doc
    if lta.kind(text) != "model":
        return lta.check(text)
    return lta.check(text) + scene.structural_problems(_to_model(text))


register(LTA, doc_types=(LtaFile,), sniff=lta.sniff, read=lta.read, write=lta.write,
         to_scene=_lazy("lta_scene", "to_scene"), from_scene=_lazy("lta_scene", "from_scene"),
         info=lta_info, check=lta_check)
register(LTC, doc_types=(LtcFile,), sniff=ltc.sniff, read=ltc.read, write=ltc.write,
         to_scene=_lazy("lta_scene", "ltc_to_scene"),
         from_scene=_lazy("lta_scene", "ltc_from_scene"), info=lta_info, check=lta_check)

register_converter("abc", "lta", _lazy("lta_scene", "abc_to_lta"))
register_converter("lta", "abc", _lazy("lta_scene", "lta_to_abc"))
register_converter("lta", "ltc", _lazy("lta_scene", "lta_to_ltc"))
register_converter("ltc", "lta", _lazy("lta_scene", "ltc_to_lta"))
