"""LTA / LTC <-> :class:`~retromesh.scene.Scene`, through the ABC mapping (:mod:`.scene`).

``to_scene`` reads the text as ABC model records (:func:`.lta_model.to_model`) and maps them
as an ``.abc`` is mapped, so ``.lta -> .glb`` keeps what ``.abc -> .glb`` keeps (hierarchy,
pieces, LODs, weights, sockets, animations, anim bindings, weight sets, child models, in the
same extras). The text itself rides in the scene's extras, ``lta_text`` (zlib + base64:
a few bytes per vertex), so nodes ABC has no record for (``tools-info``, ``add-node-obb-list``,
``file-info``, render styles, unknown ones) and the exact layout come back.

``from_scene`` makes the ABC records of the scene (:func:`.scene.from_scene`, v12) and
compares them with the records of the kept text (the ABC mapping gives an unedited model back
byte for byte), else with those the kept text gives after the same trip (text -> records ->
scene as a GLB holds it -> records) with reals within :data:`TOLERANCE`: alike, the scene
is unedited and the kept text is written as it was, byte for byte; else the records are
written as new ModelEdit text (:func:`.lta_model.from_model`), with a LossWarning naming what
the kept text had that the new one has not.
"""
from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from typing import Any

from ... import jsoncodec, restore
from ...errors import DocumentError, FormatError, LossWarning
from ...scene import Scene
from . import abc as abcmod, lta, scene as abc_scene
from .abc_model import AbcModel
from .abc_v6 import AbcV6Model
from .lta import LtaFile
from .lta_model import from_model, to_model
from .ltc import LtcFile

__all__ = ["to_scene", "from_scene", "ltc_to_scene", "ltc_from_scene", "abc_to_lta", "lta_to_abc",
           "lta_to_ltc", "ltc_to_lta", "TEXT_KEY", "pack", "unpack"]

TEXT_KEY = "lta_text"


def pack(text: bytes) -> str:
    """The LTA text as the scene keeps it (:func:`retromesh.restore.pack_bytes`, zlib level 9)."""
    return restore.pack_bytes(text, 9)


def unpack(value: Any) -> bytes | None:
    """The text :func:`pack` kept, or None (not ours, damaged, or past ``lta.MAX_TEXT``)."""
    return restore.unpack_bytes(value, lta.MAX_TEXT)


def to_scene(doc: LtaFile, *, source=None, lods: bool = True,
             texture_path: Iterable[str | os.PathLike] = ()) -> Scene:
    """An LTA text as a Scene (see the module docstring), wearing the skins an ``.abc`` of the
    same name and place would (:mod:`.skins`)."""
    model = to_model(doc, getattr(source, "name", None) if source is not None else None)
    sc = abc_scene.to_scene(model, lods=lods, source=source, texture_path=texture_path)
    sc.extras = dict(sc.extras or {})
    sc.extras[TEXT_KEY] = pack(lta.write(doc))
    return sc


def _model(scene: Scene) -> AbcModel:
    model = abc_scene.from_scene(scene, version=12)
    assert isinstance(model, AbcModel)      # version 12 is never a v6 model
    return model


def abc_to_lta(doc: AbcModel | AbcV6Model, **options: Any) -> LtaFile:
    """An ABC model as new LTA text, without a glTF between (a v6 model goes through its
    scene: LTA describes v9-v13 records)."""
    if isinstance(doc, AbcV6Model):
        doc = _model(abc_scene.to_scene(doc))
    return from_model(doc)


def lta_to_abc(doc: LtaFile, *, version: int = 12, **options: Any) -> AbcModel:
    """The ABC model an LTA text describes (``version`` 9..13)."""
    if version not in abcmod.VERSIONS:
        raise DocumentError(f"LTA converts to ABC versions {abcmod.VERSIONS}, not {version}")
    return to_model(doc, version=version)


#: how far a value may move and still count as unedited: a glTF stores float32 and Blender
#: recomputes matrices, while an LTA prints 6 decimals (an edit below 5e-7 cannot show)
TOLERANCE = 1e-5


def same(a: Any, b: Any) -> bool:
    """Two JSON trees (:func:`retromesh.jsoncodec.encode`) alike, floats within TOLERANCE."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, float) or isinstance(y, float):
            if not isinstance(x, (int, float)) or not isinstance(y, (int, float)) or \
                    abs(x - y) > TOLERANCE * max(1.0, abs(x)):
                return False
        elif isinstance(x, dict) and isinstance(y, dict):
            if x.keys() != y.keys():
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif x != y:
            return False
    return True


def _unedited(kept: bytes, model: AbcModel) -> bool:
    """Whether ``model`` (the records of a scene) is what the kept text gives: the same ABC
    bytes (the ABC mapping puts an unedited model back byte for byte), else the same records
    as the kept text's own trip through a scene as a GLB holds it, reals within TOLERANCE."""
    try:
        target = to_model(lta.parse(kept))
        if abcmod.write(target) == abcmod.write(model):
            return True
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref_scene = restore.as_glb_holds(abc_scene.to_scene(target))
            # as a glTF file holds it: empty values are left out of its JSON
            ref_scene.extras = {k: v for k, v in (ref_scene.extras or {}).items()
                                if v not in ([], {}, "")}
            ref = jsoncodec.encode(_model(ref_scene))
    except FormatError:
        return False
    return same(ref, jsoncodec.encode(model))


def from_scene(scene: Scene, **options: Any) -> LtaFile:
    """A Scene as LTA text: the kept text when the scene is unedited, else new ModelEdit text."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = _model(scene)
    kept = unpack((scene.extras or {}).get(TEXT_KEY))
    if kept is not None:
        if _unedited(kept, model):
            return lta.parse(kept)
        warnings.warn("the scene differs from the LTA text it was read from; written as new "
                      "ModelEdit text (nodes ABC has no record for, such as tools-info and "
                      "add-node-obb-list values, and the old layout are not kept)",
                      LossWarning, stacklevel=2)
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return from_model(model)


def ltc_to_scene(doc: LtcFile, *, source=None, lods: bool = True,
                 texture_path: Iterable[str | os.PathLike] = ()) -> Scene:
    return to_scene(doc.lta, source=source, lods=lods, texture_path=texture_path)


def ltc_from_scene(scene: Scene, **options: Any) -> LtcFile:
    """As :func:`from_scene`, compressed as the engine compresses (``ltc.write``)."""
    return LtcFile(lta=from_scene(scene, **options))


def lta_to_ltc(doc: LtaFile, **options: Any) -> LtcFile:
    return LtcFile(lta=doc)


def ltc_to_lta(doc: LtcFile, **options: Any) -> LtaFile:
    return doc.lta

