"""The table of formats and the one funnel every read goes through.

A format module builds one :class:`Format` per file type and calls :func:`register` at import
time. Detection order: an explicit ``format=``; else the formats claiming the file's extension,
confirmed by their ``sniff`` when they have one; else the formats whose magic is certain. A
file is never silently handed to another parser: a mismatch raises UnknownFormatError.

:func:`parse` and :func:`convert_to_scene` wrap the format's functions so that no stray
``struct.error``/``IndexError``/``ValueError``/``MemoryError``/... escapes: each becomes a
FormatError carrying the file, byte offset and field path where it happened (a
DocumentError/UnsupportedError raised while reading is about the input too: FormatError).
:func:`convert_from_scene` and :func:`serialize` are the writing funnels: the Scene is validated
(and fixed up for game formats, :meth:`Scene.for_writing`) before ``from_scene``, and a stray
exception of a writer becomes a DocumentError naming the format and what failed.
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.util
import inspect
import sys
import warnings
from collections.abc import Callable, Mapping
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import (
    DocumentError,
    FormatError,
    LimitError,
    UnknownFormatError,
    UnsupportedError,
    UnsupportedInputError,
)
from .records import record

if TYPE_CHECKING:            # binio imports numpy: loaded with the first file read
    from .binio import Reader
    from .fileio import Parts
    from .findings import Finding

__all__ = ["Format", "Companion", "register", "unregister", "declared", "known", "lookup",
           "format_index", "companion_extensions", "is_companion", "sniffs", "GROUPING",
           "target_format", "keeping", "register_converter", "converter", "formats", "get",
           "detect", "parse", "format_of", "convert_to_scene", "convert_from_scene", "serialize",
           "outputs_of", "SNIFF_BYTES", "claiming", "converters_to", "lazy"]

#: how many leading bytes sniff functions see
SNIFF_BYTES = 4096

#: the modules imported on first use of the registry (each registers its formats)
FORMAT_MODULES = (
    "retromesh.gltf",
    "retromesh.image",
    "retromesh.formats.b3d",
    "retromesh.formats.lugaru",
    "retromesh.formats.overgrowth",
    "retromesh.formats.lithtech",
    "retromesh.formats.lostsaga",
    "retromesh.formats.westwood",
)

#: how the files of a format group with others, in the order a file claims its companions
#: (a folder conversion, files picked together in Blender's importer): a ``descriptor`` names
#: the files it goes with (Overgrowth's character XML), a ``model`` is the main file of a
#: model, a ``side`` file goes beside a model (ragdoll volumes, an exchange copy), a
#: ``skeleton`` is the main file only when no model took it, a ``part`` (an animation, a mesh
#: read with its skeleton) is the main file only when picked alone
GROUPING = ("descriptor", "model", "side", "skeleton", "part")


@record(frozen=True)
class Companion:
    """A file read with a format's file: the reading option naming it (``role``), its format,
    and where it is found.

    ``beside``: name patterns (``{stem}`` is the main file's stem, ``*`` any text; letter case
    ignored) looked for beside the main file by ``convert``, ``info``, ``check``, a folder
    conversion and Blender's importer; none: the companion is only read when named
    (``--skeleton``) or picked with the main file in Blender. ``many``: the option takes a list
    (``animations``). ``by_reader``: the format's reader finds it beside the file by itself
    (``tank.hva`` of ``tank.vxl``), so no option is needed. ``picked_only``: looked for
    beside only when the main file is picked in Blender (a ``.skl``'s ``.msh``: a conversion
    reads the skeleton with the mesh's group). ``role`` empty: the reader follows names
    written inside the file (Overgrowth's XML), the companion is listed only.
    """
    role: str
    format: str
    beside: tuple[str, ...] = ()
    many: bool = False
    by_reader: bool = False
    picked_only: bool = False


@record(frozen=True)
class Format:
    """One file type.

    ``read(reader) -> doc`` parses a :class:`~retromesh.binio.Reader` (whose ``file`` and
    ``source_path`` tell where the data came from); ``write(doc) -> bytes``;
    ``outputs(doc, path) -> {path: bytes}`` for types written as several files;
    ``to_scene(doc, *, source=None, **options) -> Scene``;
    ``from_scene(scene, **options) -> doc | {suffix: doc}`` (a dict writes companion files
    named ``<stem><suffix>`` beside the main one, the key ``""`` being the main document; the
    keys of companions and animations come from :mod:`retromesh.filenames`, which gives each
    the name of the file it was read from, noted by :func:`convert_to_scene`).
    ``sniff(head) -> bool`` sees the first :data:`SNIFF_BYTES` bytes; ``magic_certain`` says
    that a positive sniff is proof enough without the extension.
    """
    name: str
    family: str
    description: str
    extensions: tuple[str, ...]
    doc_types: tuple[type, ...] = ()
    sniff: Callable[[bytes], bool] | None = None
    magic_certain: bool = False
    read: Callable[[Reader], Any] | None = None
    write: Callable[[Any], bytes] | None = None
    outputs: Callable[[Any, Path], Mapping[Path, bytes | Parts]] | None = None
    to_scene: Callable[..., Any] | None = None
    from_scene: Callable[..., Any] | None = None
    endian: str = "<"
    #: options ``to_scene`` takes (``skeleton``, ``animations``, ``hva``, ``fps``...)
    scene_options: tuple[str, ...] = field(default=())
    #: the files read with this one (roles, formats, name patterns): folder grouping, Blender's
    #: importer, ``convert``/``info``/``check`` and the ``formats`` table derive from it
    companions: tuple[Companion, ...] = ()
    #: how its files group with others (one of :data:`GROUPING`)
    grouping: str = "model"
    #: an exchange copy or side file (``.vox`` beside ``.vxl``): beside a game model of the
    #: same stem in a folder conversion, it leaves the plain output name to it
    yields_name: bool = False
    #: its extension is shared by many unrelated files (``.xml``): a folder scan takes a file
    #: only when the format's ``sniff`` recognises it
    shared_extension: bool = False
    #: what Blender's importer does with it: ``import`` (the file dialog), ``drop`` (drag and
    #: drop), ``export``; None: import and drop when it converts to a scene (or is a companion
    #: with a role of one that does), export when it converts from one
    blender: tuple[str, ...] | None = None
    #: writing options ``from_scene`` hands on through ``**options`` (``-O`` checks them)
    forwards: tuple[str, ...] = ()
    #: ``group_folder(files) -> [(main, options, other files taken)]``: models a folder
    #: conversion makes of files the name patterns of ``companions`` cannot group (Lugaru's
    #: extensionless characters: a figure and the animations the game plays on it)
    group_folder: Callable[[list[Path]], list[tuple[Path, dict[str, Any], list[Path]]]] | None \
        = None
    #: the same for files picked together in Blender's importer
    group_picked: Callable[[list[Path]], list[tuple[Path, dict[str, Any], list[Path]]]] | None \
        = None
    #: folder names (lower case) whose files without an extension are of this type, as a game
    #: keeps them (Lugaru's ``Data/Skeleton/BasicFigure``): see :func:`detect`
    folders: tuple[str, ...] = ()
    #: ``info(doc) -> {name: number}``: native counts for ``retromesh info``
    info: Callable[[Any], dict[str, Any]] | None = None
    #: ``check(doc) -> [Finding, ...]``: the game's rules the document breaks
    #: (:mod:`retromesh.findings`, run by :mod:`retromesh.checking` for ``retromesh check`` and
    #: before a conversion writes the format)
    check: Callable[[Any], list[Finding]] | None = None

    def companion_names(self) -> list[str]:
        """The extensions of its companions, each once (the ``formats`` table)."""
        out: list[str] = []
        for c in self.companions:
            for e in companion_extensions(c)[:1]:
                if e not in out:
                    out.append(e)
        return out

    def supports(self) -> dict[str, bool]:
        return {
            "read": self.read is not None,
            "write": self.write is not None or self.outputs is not None,
            "to_scene": self.to_scene is not None,
            "from_scene": self.from_scene is not None,
        }


_FORMATS: dict[str, Format] = {}
_CONVERTERS: dict[tuple[str, str], Callable[..., Any]] = {}
_BROKEN: dict[str, BaseException] = {}
_imported: set[str] = set()


def register_converter(source: str, target: str, fn: Callable[..., Any]) -> None:
    """A direct native-to-native conversion (``fn(doc, **options) -> doc``) that ``convert``
    prefers over going through a Scene (e.g. VXL <-> MagicaVoxel VOX keeps the voxels)."""
    _CONVERTERS[(source, target)] = fn


def converter(source: str, target: str) -> Callable[..., Any] | None:
    _ensure_for(source)
    _ensure_for(target)
    return _CONVERTERS.get((source, target))


def register(fmt: Format, **code: Any) -> Format:
    """Register ``fmt``: a format a family's manifest declares, with its code (``read=``,
    ``write=``, ``to_scene=``, ``sniff=``, ``doc_types=``...) given here."""
    if code:
        fmt = dataclasses.replace(fmt, **code)
    if fmt.name in _FORMATS and _FORMATS[fmt.name] != fmt:
        raise RuntimeError(f"format {fmt.name!r} registered twice")
    _FORMATS[fmt.name] = fmt
    return fmt


def unregister(name: str) -> None:
    """Forget format ``name`` (tests that register a throwaway format)."""
    _FORMATS.pop(name, None)


# -- manifests: what each family declares, read without importing the family ----------------

def _manifest(mod: str) -> Any:
    """The ``manifest`` module of family ``mod`` (``<package>/manifest.py``: the family's
    formats as plain declarations, importing nothing but this module), loaded without running
    the family's ``__init__`` (which imports its readers); None when it has none."""
    name = f"{mod}.manifest"
    if name in sys.modules:
        return sys.modules[name]
    try:
        spec = importlib.util.find_spec(mod)
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(folder) / "manifest.py"
        if path.is_file():
            break
    else:
        return None
    mspec = importlib.util.spec_from_file_location(name, path)
    if mspec is None or mspec.loader is None:
        return None
    module = importlib.util.module_from_spec(mspec)
    sys.modules[name] = module       # the family's own ``from .manifest import`` finds it
    try:
        mspec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _declared_by(mod: str) -> tuple[Format, ...]:
    manifest = _manifest(mod)
    return tuple(getattr(manifest, "FORMATS", ())) if manifest is not None else ()


def declared() -> dict[str, Format]:
    """Every format the families of :data:`FORMAT_MODULES` declare (name -> the declaration:
    extensions, companions, grouping...; no code), without importing any family."""
    return {f.name: f for mod in FORMAT_MODULES for f in _declared_by(mod)}


def known() -> list[Format]:
    """Every format registered so far or declared by a family (a declared one without its code
    until its family is imported): what grouping files by name needs, no family imported."""
    out = declared()
    out.update(_FORMATS)
    return sorted(out.values(), key=lambda f: (f.family, f.name))


def lookup(name: str) -> Format | None:
    """The registered or declared format ``name`` (no family imported), None when unknown."""
    return _FORMATS.get(name) or declared().get(name)


def format_index() -> dict[str, str]:
    """Format name or extension -> the FORMAT_MODULES entry that registers every format
    claiming it (read off the manifests), so that reading one file imports one family; a key
    not listed imports them all."""
    index: dict[str, str] = {}
    shared: set[str] = set()
    for mod in FORMAT_MODULES:
        for f in _declared_by(mod):
            for key in (f.name, *f.extensions):
                if index.get(key, mod) != mod:
                    shared.add(key)
                index.setdefault(key, mod)
    return {k: v for k, v in index.items() if k not in shared}


#: format_index() of the FORMAT_MODULES it was built for
_INDEX: dict[tuple[str, ...], dict[str, str]] = {}


def _index() -> dict[str, str]:
    key = tuple(FORMAT_MODULES)
    if key not in _INDEX:
        _INDEX.clear()
        _INDEX[key] = format_index()
    return _INDEX[key]


def companion_extensions(c: Companion) -> tuple[str, ...]:
    """The extensions a companion's files have: its format's, else those of its patterns
    (Lost Saga's material script ``<mesh>.txt``, a format that claims no extension)."""
    fmt = lookup(c.format)
    if fmt is not None and fmt.extensions:
        return fmt.extensions
    return tuple(dict.fromkeys(Path(p).suffix.lower().lstrip(".") for p in c.beside
                               if Path(p).suffix))


class _Lazy:
    """``module.name``, imported when first called, or when its signature or docstring is
    asked for (the registry reads a format's options off its signature): a family registers
    its rarely used functions without importing their modules at start-up."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.__name__ = module, name

    def target(self) -> Any:
        return getattr(importlib.import_module(self.module), self.__name__)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.target()(*args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(self.target())

    @property
    def __doc__(self) -> str | None:  # type: ignore[override]
        return self.target().__doc__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Lazy) and (other.module, other.__name__) == \
            (self.module, self.__name__)

    def __hash__(self) -> int:
        return hash((self.module, self.__name__))


def lazy(module: str, name: str) -> Any:
    """A callable standing for ``module.name`` (a dotted module path) that imports the module
    only when first used; usable wherever :func:`register` or :func:`register_converter`
    take a function."""
    return _Lazy(module, name)


def _load(mod: str) -> None:
    """Import one family module (once); a failure is recorded in ``broken()`` and warned."""
    if mod in _imported:
        return
    _imported.add(mod)
    try:
        importlib.import_module(mod)
    except ModuleNotFoundError as exc:   # a family not written yet
        if exc.name != mod:
            _BROKEN[mod] = exc
    except Exception as exc:             # one broken family must not take the others down
        _BROKEN[mod] = exc
    if mod in _BROKEN:
        err = _BROKEN[mod]
        warnings.warn(f"format module {mod} failed to load: {type(err).__name__}: {err}",
                      RuntimeWarning, stacklevel=4)


def _ensure_loaded() -> None:
    for mod in FORMAT_MODULES:          # each imported once (_load)
        _load(mod)


def _ensure_for(key: str) -> None:
    """Import the family that registers the format or extension ``key`` (all when unknown)."""
    mod = _index().get(key.lower().lstrip("."))
    if mod is None or mod not in FORMAT_MODULES:
        _ensure_loaded()
    else:
        _load(mod)


def _ensure_for_file(head: bytes, filename: str | None, format: str | None) -> None:
    """What :func:`detect` needs loaded: the family of ``format`` or of the extension when one
    of its formats recognises ``head``; every family otherwise (to look for certain magic)."""
    if format:
        _ensure_for(format)
        return
    ext = _extension(filename)
    if not ext or ext not in _index():
        _ensure_loaded()
        return
    _ensure_for(ext)
    for f in list(_FORMATS.values()):
        if ext in f.extensions and f.sniff is not None:
            try:
                if f.sniff(head):
                    return
            except Exception:
                break
    _ensure_loaded()


def broken() -> dict[str, BaseException]:
    """Format modules that failed to import (the tests require this to be empty)."""
    _ensure_loaded()
    return dict(_BROKEN)


def formats() -> list[Format]:
    _ensure_loaded()
    return sorted(_FORMATS.values(), key=lambda f: (f.family, f.name))


def claiming(extension: str) -> list[Format]:
    """The formats claiming ``extension`` (``"b3d"`` or ``".b3d"``), importing only the family
    that registers them (every family when the extension is not in :func:`format_index`)."""
    ext = extension.lower().lstrip(".")
    _ensure_for(ext)
    return [f for f in formats_loaded() if ext and ext in f.extensions]


def converters_to(target: str) -> dict[str, Callable[..., Any]]:
    """Direct converters into format ``target`` (source name -> function). A converter is
    registered by the family of its target, so only that family is imported."""
    _ensure_for(target)
    return {src: fn for (src, tgt), fn in _CONVERTERS.items() if tgt == target}


def formats_loaded() -> list[Format]:
    """The formats registered so far (no family imported)."""
    return sorted(_FORMATS.values(), key=lambda f: (f.family, f.name))


def get(name: str) -> Format:
    key = name.lower().lstrip(".")
    _ensure_for(key)
    if key not in _FORMATS and not any(key in f.extensions for f in _FORMATS.values()):
        _ensure_loaded()
    if key in _FORMATS:
        return _FORMATS[key]
    for f in _FORMATS.values():
        if key in f.extensions:
            return f
    raise UnknownFormatError(f"one of the formats {', '.join(sorted(_FORMATS))}", got=repr(name))


def format_of(doc: Any) -> Format:
    """The format whose native document type ``doc`` is."""
    for f in list(_FORMATS.values()):        # the family that made ``doc`` is loaded
        if isinstance(doc, f.doc_types):
            return f
    _ensure_loaded()
    for f in _FORMATS.values():
        if isinstance(doc, f.doc_types):
            return f
    raise UnsupportedError(f"{type(doc).__name__} is not the native document of any format")


def keeping(path: str | Path) -> list[Format]:
    """The formats that keep files without an extension in ``path``'s folder (Lugaru's
    ``Skeleton/`` and ``Animations/``); none for a file with an extension."""
    p = Path(path)
    if p.suffix:
        return []
    folder = p.parent.name.lower()
    _ensure_loaded()
    return [f for f in _FORMATS.values() if folder and folder in f.folders]


def target_format(target: str | Path) -> Format:
    """The format a written file will have: its extension's (or format name's, ``x.glb``,
    ``x.lugaru-skeleton``), else, for a name without one, the format keeping such files in
    the folder it goes to (``Data/Skeleton/BasicFigure``)."""
    path = Path(target)
    if not path.suffix:
        folder = path.parent.name.lower()
        _ensure_loaded()
        for f in _FORMATS.values():
            if folder and folder in f.folders and f.from_scene is not None:
                return f
    return get(path.suffix or "?")


def _extension(filename: str | None) -> str:
    if not filename:
        return ""
    return Path(filename).suffix.lower().lstrip(".")


def sniffs(fmt: Format, head: bytes) -> bool:
    """Whether ``fmt``'s ``sniff`` recognises ``head`` (False without one, or when it fails)."""
    if fmt.sniff is None:
        return False
    try:
        return bool(fmt.sniff(head))
    except Exception:        # a sniff must never turn bad bytes into a crash
        return False


def detect(head: bytes, filename: str | None = None, format: str | None = None) -> Format:
    """Pick the format of a file from an explicit name, its extension and its first bytes."""
    _ensure_for_file(head, filename, format)
    if format:
        fmt = get(format)
        return fmt
    ext = _extension(filename)
    candidates = [f for f in _FORMATS.values() if ext and ext in f.extensions]
    if candidates:
        sniffed = [f for f in candidates if sniffs(f, head)]
        if sniffed:
            return sniffed[0]
        certain = [f for f in _FORMATS.values() if f.magic_certain and sniffs(f, head)]
        unsniffable = [f for f in candidates if f.sniff is None]
        if len(unsniffable) == 1 and not certain:
            return unsniffable[0]
        names = ", ".join(f.name for f in candidates)
        if certain:
            other = certain[0]
            raise UnknownFormatError(
                f"a {names} file for the extension .{ext}", file=filename, offset=0,
                got=f"the magic of {other.name} ({other.description}); pass format="
                    f"{other.name!r} to read it as that")
        raise UnknownFormatError(f"the signature of a {names} file", file=filename, offset=0,
                                 got=repr(head[:16]))
    if not ext and filename:
        # an extensionless file in a folder a format names (Data/Skeleton/BasicFigure)
        folder = Path(filename).parent.name.lower()
        for f in _FORMATS.values():
            if folder in f.folders and sniffs(f, head):
                return f
    certain = [f for f in _FORMATS.values() if f.magic_certain and sniffs(f, head)]
    if certain:
        return certain[0]
    raise UnknownFormatError("a file type retromesh knows (by extension or magic)",
                             file=filename, offset=0,
                             got=f"extension {ext!r} and leading bytes {head[:16]!r}")


_STRAY = (ArithmeticError, IndexError, KeyError, ValueError, MemoryError, RecursionError,
          UnicodeError, TypeError, AttributeError, AssertionError, LookupError, EOFError, OSError)


def _struct_error() -> type[Exception]:
    import struct
    return struct.error


def _input_error(exc: BaseException) -> type[FormatError]:
    if isinstance(exc, (MemoryError, RecursionError)):
        return LimitError
    return UnsupportedInputError if isinstance(exc, UnsupportedError) else FormatError


def parse(fmt: Format, data: bytes | bytearray | memoryview, file: str | None = None,
          source_path: Path | None = None) -> Any:
    """Run ``fmt.read`` on ``data``; anything but a FormatError becomes one. Inside
    :func:`retromesh.readonce.reading_once`, a file parsed before gives its first document."""
    if fmt.read is None:
        raise UnsupportedError(f"{fmt.name} files cannot be read")
    from . import readonce
    kept = readonce.recall(fmt.name, file, len(data))
    if kept is not None:
        return kept
    from .binio import Reader
    reader = Reader(data, file=file, endian=fmt.endian)
    reader.source_path = source_path  # type: ignore[attr-defined]
    try:
        doc = fmt.read(reader)
        readonce.remember(fmt.name, file, len(data), doc)
        return doc
    except FormatError as exc:
        exc.with_file(file)             # fills in the file, keeps the exception's own chain
        raise
    except (_struct_error(), DocumentError, UnsupportedError, *_STRAY) as exc:
        error = _input_error(exc)
        raise error(f"a well-formed {fmt.name} file", file=file, offset=reader.pos,
                    path=reader.path or None,
                    got=f"{type(exc).__name__}: {exc}") from exc


@functools.lru_cache(maxsize=256)
def signature(func: Callable[..., Any]) -> inspect.Signature:
    """``inspect.signature``, once per function (a folder converts many files: every file's
    options are checked against the format's functions)."""
    return inspect.signature(func)


def convert_to_scene(fmt: Format, doc: Any, file: str | None = None, **options: Any):
    """Run ``fmt.to_scene``; a document whose content cannot form a scene raises FormatError."""
    if fmt.to_scene is None:
        raise UnsupportedError(f"{fmt.name} files have no 3D content to convert")
    accepted = signature(fmt.to_scene).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
    for key in options:
        if not takes_any and key not in accepted:
            raise UnsupportedError(f"{fmt.name} conversion does not take the option {key!r}")
    try:
        scene = fmt.to_scene(doc, **options)
        if fmt.family != "glTF 2.0":        # a glTF file carries the names it was made from
            from .filenames import record as record_files
            record_files(scene, options.get("source"), options,
                         is_companion(fmt))
        return scene.validate()
    except FormatError as exc:
        exc.with_file(file)             # fills in the file, keeps the exception's own chain
        raise
    except (_struct_error(), DocumentError, UnsupportedError, *_STRAY) as exc:
        if isinstance(exc, OSError) and not isinstance(exc, EOFError):
            raise
        error = _input_error(exc)
        raise error(f"content that forms a valid {fmt.name} scene", file=file,
                    path="to_scene", got=f"{type(exc).__name__}: {exc}") from exc


def is_companion(fmt: Format) -> bool:
    """``fmt``'s files are read beside others' (an ``.ani`` or ``.anm`` with its skeleton)."""
    return any(c.format == fmt.name for f in formats_loaded() for c in f.companions)


def _writer_failed(fmt: Format, stage: str, exc: BaseException) -> DocumentError:
    return DocumentError(f"{fmt.name} {stage} failed on this content: "
                         f"{type(exc).__name__}: {str(exc)[:300]}")


def convert_from_scene(fmt: Format, scene: Any, *, _validated: bool = False,
                       **options: Any) -> Any:
    """Run ``fmt.from_scene`` on a validated scene; anything but a RetromeshError becomes a
    DocumentError saying which writer failed and why. ``_validated``: the scene was made by
    :func:`convert_to_scene` just before (``retromesh.convert``) and not touched since."""
    if fmt.from_scene is None:
        raise UnsupportedError(f"cannot write {fmt.name} files from a scene")
    signature(fmt.from_scene).bind(scene, **options)   # TypeError: a caller's mistake
    if fmt.family == "glTF 2.0":
        scene = scene if _validated else scene.validate()
    else:
        scene = scene.for_writing(validated=_validated)
    try:
        return fmt.from_scene(scene, **options)
    except (_struct_error(), *_STRAY) as exc:
        if isinstance(exc, OSError) and not isinstance(exc, EOFError):
            raise
        raise _writer_failed(fmt, "from_scene", exc) from exc


def serialize(fmt: Format, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run a format's ``write``/``outputs`` (or a direct converter); a stray exception becomes
    a DocumentError."""
    try:
        return fn(*args, **kwargs)
    except (_struct_error(), *_STRAY) as exc:
        if isinstance(exc, OSError) and not isinstance(exc, EOFError):
            raise
        raise _writer_failed(fmt, "writer", exc) from exc


def outputs_of(doc: Any, target: Path) -> dict[Path, Any]:
    """The files writing ``doc`` as ``target`` makes: {path: bytes or Parts} (a format may
    write companions beside ``target``)."""
    fmt = format_of(doc)
    if fmt.outputs is not None:
        return serialize(fmt, fmt.outputs, doc, target)
    if fmt.write is None:
        raise UnsupportedError(f"{fmt.name} documents cannot be written as one byte string")
    return {target: serialize(fmt, fmt.write, doc)}
