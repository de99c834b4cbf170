"""retromesh: read, write, inspect and convert the 3D asset formats of classic games.

Public API::

    doc = retromesh.read("character.b3d")      # native, lossless document
    data = retromesh.to_bytes(doc)             # byte-identical to the file
    retromesh.write(doc, "copy.b3d")           # atomic write
    scene = retromesh.load("character.b3d")    # format-neutral Scene (glTF conventions)
    retromesh.save(scene, "character.glb")     # .glb / .gltf or any format with from_scene
    retromesh.formats()                        # the registered formats
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, overload

from . import registry
from .errors import (
    DocumentError,
    EngineWarning,
    FormatError,
    LimitError,
    LossWarning,
    MissingTextureWarning,
    NoSceneError,
    RefusedError,
    RetromeshError,
    UnknownFormatError,
    UnsupportedError,
)
from .fileio import Source, atomic_write_many, read_source
from .registry import Format
from .safenames import safe_name

if TYPE_CHECKING:
    from .scene import Scene

#: the native document type a caller expects from :func:`read` (``type=PhxbnFile``)
_D = TypeVar("_D")

__version__ = "0.1.0"

__all__ = [
    "read", "write", "to_bytes", "load", "save", "formats", "detect", "convert",
    "Scene", "Format",
    "RetromeshError", "FormatError", "UnknownFormatError", "LimitError", "UnsupportedError",
    "DocumentError", "LossWarning", "MissingTextureWarning", "RefusedError", "EngineWarning",
    "NoSceneError",
]


def __getattr__(name: str) -> Any:
    # Scene and the modules that use numpy are loaded when asked for (``retromesh.Scene``,
    # ``retromesh.scene.LIMITS``): ``import retromesh`` loads no numpy, so that the command
    # line can load it its own way (:mod:`retromesh.cli`)
    if name == "Scene":
        from .scene import Scene
        globals()["Scene"] = Scene
        return Scene
    if not name.startswith("_"):
        import importlib
        import importlib.util
        if importlib.util.find_spec(f"{__name__}.{name}") is not None:
            return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'retromesh' has no attribute {name!r}")


def formats() -> list[Format]:
    """Every registered format (name, family, extensions, what it supports)."""
    return registry.formats()


def detect(source: Source, format: str | None = None) -> Format:
    """The format ``source`` would be read as."""
    data, name, _ = read_source(source)
    return registry.detect(data[:registry.SNIFF_BYTES], name, format)


def _read(source: Source, format: str | None) -> tuple[Any, Format, str | None, Path | None]:
    data, name, path = read_source(source)
    fmt = registry.detect(data[:registry.SNIFF_BYTES], name, format)
    doc = registry.parse(fmt, data, name, path)
    return doc, fmt, name, path


# read's result is typed by the document type the caller names (``type=``): no format is
# listed here, so a new format's documents are typed the moment it is registered
@overload
def read(source: Source, format: str | None = None) -> Any: ...
@overload
def read(source: Source, format: str | None = None, *, type: type[_D]) -> _D: ...


def read(source: Source, format: str | None = None, *, type: type[Any] | None = None) -> Any:
    """Read a file (path, bytes or binary file object) into its native document.

    ``type=``: the document type expected (``retromesh.read(p, type=PhxbnFile)``, typed as
    that): a file read as another format raises UnknownFormatError.
    """
    doc, fmt, name, _ = _read(source, format)
    if type is not None and not isinstance(doc, type):
        raise UnknownFormatError(f"a file read as {type.__name__}", file=name, offset=0,
                                 got=f"a {fmt.name} file ({doc.__class__.__name__})")
    return doc


def to_bytes(doc: Any) -> bytes:
    """Serialise a native document (``write(read(f))`` is byte-identical to ``f``)."""
    fmt = registry.format_of(doc)
    if fmt.write is None:
        raise UnsupportedError(f"{fmt.name} documents cannot be written as one byte string")
    return registry.serialize(fmt, fmt.write, doc)


def write(doc: Any, target: str | os.PathLike) -> list[Path]:
    """Write a native document atomically; returns the paths written."""
    return atomic_write_many(registry.outputs_of(doc, Path(target)))


def load(source: Source, format: str | None = None, **options: Any) -> Scene:
    """Read a file and convert it to a format-neutral :class:`Scene`.

    ``options`` are the format's conversion options (``skeleton=``, ``animations=``,
    ``hva=``, ``fps=`` ...; see ``retromesh formats``), and for every format ``scale=``
    (default 1: the game's units), a uniform factor applied to the whole scene
    (:mod:`retromesh.units`), and ``mods={"lua": True, "texture_path": [...]}``: a model in a
    Luanti mod gets the textures and named clips its registrations give (this RUNS the mod's
    Lua, fenced in a child process: :mod:`retromesh.luanti`; off unless asked for).
    """
    scale = _pop_scale(options)
    mods = options.pop("mods", None)
    doc, fmt, name, path = _read(source, format)
    if path is not None and fmt.to_scene is not None:
        options.setdefault("source", path)
    return _scaled(_dressed(registry.convert_to_scene(fmt, doc, name, **options), path, mods),
                   scale)


def _dressed(scene: Scene, path: Path | None, mods: dict[str, Any] | None) -> Scene:
    """``scene`` as the Luanti mod it lies in shows it, when ``mods`` asks for it
    (:func:`retromesh.luanti.scene.dress`: runs the mod's Lua, fenced)."""
    if not mods or path is None:
        return scene
    from .luanti.scene import dress
    return dress(scene, path, **mods)


def _pop_scale(options: dict[str, Any]) -> float:
    from .units import check_scale
    return check_scale(options.pop("scale", 1.0))


def _scaled(scene: Scene, scale: float) -> Scene:
    if scale != 1.0:
        from .units import scale_scene
        scale_scene(scene, scale)
    return scene


def from_scene(scene: Scene, format: str, **options: Any) -> Any:
    """Convert a Scene to the native document(s) of ``format``."""
    return registry.convert_from_scene(registry.get(format), scene, **options)


def save(scene: Scene, target: str | os.PathLike, format: str | None = None, *,
         force: bool = False, **options: Any) -> list[Path]:
    """Write a Scene as ``target``'s format (from its extension unless ``format`` is given).

    Returns every path written (a format may write companion files beside the target).
    The files are first judged by the game's rules (those of ``retromesh check``,
    ``docs/check-rules.md``): when the engine would refuse one, :class:`RefusedError` is raised
    and nothing is written, unless ``force=True``; every other finding is an
    :class:`EngineWarning`.
    """
    return _save(scene, Path(target), format, options, force=force)


def _save(scene: Scene, target: Path, format: str | None, options: dict[str, Any],
          validated: bool = False, force: bool = False) -> list[Path]:
    fmt = registry.get(format) if format else registry.target_format(target)
    options = _image_options_for(fmt.from_scene, options)
    return _write_result(registry.convert_from_scene(fmt, scene, _validated=validated, **options),
                         target, force)


#: writing options every target accepts; targets with no use for them never see them
_IMAGE_OPTIONS = ("embed_images", "texture_path")


def _image_options_for(func: Any, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` without ``embed_images``/``texture_path`` when ``func`` takes neither."""
    if func is None or not any(k in options for k in _IMAGE_OPTIONS):
        return options
    try:
        params = registry.signature(func).parameters
    except (TypeError, ValueError):
        return options
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return options
    return {k: v for k, v in options.items() if k not in _IMAGE_OPTIONS or k in params}


def _write_result(result: Any, target: Path, force: bool = False) -> list[Path]:
    """Write what ``from_scene`` or a converter returned: one document, or a dict whose key
    ``""`` is the main document, keys starting with ``.`` or ``_`` are suffixes to the
    target's stem (``".skl"``, ``"_walk.ani"``), keys starting with ``/`` are file names
    beside it (``"/walk.anm"``: the name a companion was read from, :mod:`.filenames`) and
    other keys are file names beside it too (``"skin.png"``); values are documents, or bytes
    written as they are. Two keys naming one file (letter case aside): the later gets ``_2``."""
    docs = result if isinstance(result, dict) else {"": result}
    files: dict[Path, bytes] = {}
    judged: dict[Path, Any] = {}
    taken = {target.name.lower()}
    for key, doc in docs.items():
        if key == "":
            path = target
        else:
            wanted = target.stem + key if key[0] in "._" else key.lstrip("/")
            # keys come from the content (texture, companion names): a plain name in the
            # target's folder, whatever they say
            name = safe_name(wanted)
            if name != wanted:
                warnings.warn(LossWarning(f"output file name {key!r} is not a plain file name; "
                                          f"written as {name!r} beside {target.name}"),
                              stacklevel=3)
            name = _unique_name(name, taken)
            path = target.with_name(name)
        if isinstance(doc, (bytes, bytearray)):
            files[path] = bytes(doc)
        else:
            judged[path] = doc
            files.update(registry.outputs_of(doc, path))
    from .checking import guard
    guard(judged, force=force)      # the game's rules, before anything is written
    return atomic_write_many(files)


def _unique_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name`` with ``_2``, ``_3``... before its extension when a file of the
    same output already has it (a LossWarning says so)."""
    stem, ext = os.path.splitext(name)
    final, k = name, 2
    while final.lower() in taken:
        final, k = f"{stem}_{k}{ext}", k + 1
    if final != name:
        warnings.warn(LossWarning(f"two output files are named {name!r}; the second is "
                                  f"written as {final!r}"), stacklevel=4)
    taken.add(final.lower())
    return final


def convert(source: Source, target: str | os.PathLike, format: str | None = None,
            target_format: str | None = None, save_options: dict[str, Any] | None = None,
            *, force: bool = False, **options: Any) -> list[Path]:
    """Convert a file to ``target``'s format; returns the paths written.

    A direct native-to-native converter is used when one is registered (VXL <-> VOX);
    otherwise the file goes through a :class:`Scene`. ``options`` go to the reading side
    (``to_scene``; ``scale=`` as in :func:`load`), ``save_options`` to the writing side
    (``from_scene``). What is written is judged first as :func:`save` does (``force``).
    """
    target = Path(target)
    save_options = dict(save_options or {})
    scale = _pop_scale(options)
    mods = options.pop("mods", None)
    doc, fmt, name, path = _read(source, format)
    tfmt = registry.get(target_format) if target_format else registry.target_format(target)
    direct = registry.converter(fmt.name, tfmt.name)
    if direct is not None and scale != 1.0:
        raise UnsupportedError(f"scale does not apply to the direct {fmt.name} -> {tfmt.name} "
                               "conversion (voxels have no units)")
    if direct is not None:
        if path is not None:
            options.setdefault("source", path)
        save_options = _image_options_for(direct, save_options)
        result = registry.serialize(tfmt, direct, doc, **options, **save_options)
        return _write_result(result, target, force)
    if path is not None and fmt.to_scene is not None:
        options.setdefault("source", path)
    if "texture_path" in save_options and fmt.to_scene is not None and \
            "texture_path" in registry.signature(fmt.to_scene).parameters:
        options.setdefault("texture_path", save_options["texture_path"])  # skins found reading
    scene = _scaled(_dressed(registry.convert_to_scene(fmt, doc, name, **options), path, mods),
                    scale)
    del doc                     # the native document is not needed while writing
    # validated by convert_to_scene (scaling keeps it valid unless it overflows float32)
    return _save(scene, target, tfmt.name, save_options, validated=scale == 1.0 and not mods,
                 force=force)
