"""Overgrowth XML descriptors: character, rig and object files, read safely, and the paths
they name resolved as the engine resolves them.

The engine (Phoenix, ``Source/Asset/Asset/character.cpp``, ``skeletonasset.cpp``,
``objectfile.cpp``, ``syncedanimation.cpp``, ``Source/Internal/filesystem.cpp``) builds a
character from plain-text XML files:

==================  ==========================================================================
file                what the engine reads
==================  ==========================================================================
character           root element (any name; ``<character>`` in every real file); children
                    ``<appearance obj_path=… skeleton=… [fur=… morph=… model_scale=…
                    default_scale=… channel_0..3=…]>``, ``<animations role="path" …>`` (every
                    attribute: role -> ``.anm`` or synced-group ``.xml``), ``<attacks …>``,
                    ``<tags …>``, ``<team>``, ``<morphs>``, ``<visemes>``, ``<voice>``,
                    ``<clothing>``, ``<soundmod>``
rig (skeleton)      the first element (``<rig>``): ``bone_path`` (``.phxbn``), ``model_path``
                    (the ``.obj`` the weights were made for, loaded centred), optional
                    ``mass_path`` (another rig XML whose bone masses replace the first ones)
object              ``<Object>`` with ``<Model>``, ``<ColorMap>``, ``<NormalMap>``,
                    ``<ShaderName>`` (all four required, in that order of checking), optional
                    ``<MaterialPath>``, ``<WeightMap>``, ``<PaletteMap>``, ``<TranslucencyMap>``,
                    ``<flags clamp_texture= double_sided= transparent=…>``, ``<ColorTint>``…
synced group        any root with ``<CoordLabel>``, ``<Animations><Animation path= coord=…>``
                    (each ``.anm`` or another group ``.xml``), ``<Overshoot>``, ``<InAir>``
==================  ==========================================================================

Paths (``Data/Characters/x.xml``) are relative to a *data root*: the folder holding ``Data/``.
``FindFilePath`` tries each enabled mod's folder first, then the game's folder, and matches
names case-insensitively (``caseCorrect``). Here the roots are found by walking up from the
XML file to the first folder named ``Data`` (its parent is the root); when that root is a mod
(``<game>/Data/Mods/<mod>/``) the game folder follows it; ``data_path`` folders (a game or mod
folder, or its ``Data`` folder) come after. Unlike the engine (``kAbsPath``), an absolute path,
a ``..`` part or a link leading out of its root is refused (:class:`UnsafePath`), and only
regular files are opened; a path must start with ``Data/``, as every asset path of the engine
does (so that a root guessed wrongly exposes no more than a ``Data`` tree).

XML is parsed with the standard library's expat, refusing any DTD (``<!DOCTYPE``), entity
declaration or external entity: an entity bomb is a FormatError, as is malformed XML (with its
line and column). TinyXML trims element text; so does this reader.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import field
from pathlib import Path
from typing import Any
from urllib.parse import quote
from xml.parsers import expat

from ...binio import Reader
from ...errors import FormatError, LimitError
from ...records import record
from ...safenames import UnsafePath, contained_file

__all__ = ["XmlNode", "OgXmlFile", "parse_xml", "sniff", "read", "write", "info", "root_tag",
           "DataRoots", "KINDS", "MAX_XML_BYTES", "MAX_FILE_BYTES"]

#: root element -> kind (the engine's own root names)
KINDS = {"character": "character", "rig": "rig", "Object": "object"}
MAX_XML_BYTES = 16 << 20
MAX_FILE_BYTES = 512 << 20
MAX_DEPTH = 64
MAX_ELEMENTS = 200_000


@record
class XmlNode:
    """One element: its tag, attributes (in file order), trimmed text, children and line."""
    tag: str
    attrib: dict[str, str] = field(default_factory=dict)
    text: str = ""
    children: list[XmlNode] = field(default_factory=list)
    line: int = 0

    def child(self, tag: str) -> XmlNode | None:
        """The first child element named ``tag`` (case-sensitive, as TinyXML)."""
        return next((c for c in self.children if c.tag == tag), None)


class _Refused(Exception):
    pass


def _refuse(what: str) -> Any:          # expat types each handler differently
    def handler(*_args: object) -> None:
        raise _Refused(what)
    return handler


def parse_xml(data: bytes, file: str | None = None) -> XmlNode | None:
    """The root element of ``data``, or FormatError naming the line and column of the first
    problem. DTDs and entities are refused. A document of a declaration or comments only gives
    None (TinyXML loads it as a document without element); an empty one is an error."""
    if len(data) > MAX_XML_BYTES:
        raise LimitError(f"an XML descriptor of at most {MAX_XML_BYTES} bytes", file=file,
                         got=f"{len(data)} bytes")
    p = expat.ParserCreate()
    p.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    p.StartDoctypeDeclHandler = _refuse("a document type declaration (<!DOCTYPE>)")
    p.EntityDeclHandler = _refuse("an entity declaration")
    p.ExternalEntityRefHandler = _refuse("an external entity")
    p.UnparsedEntityDeclHandler = _refuse("an unparsed entity declaration")
    stack: list[XmlNode] = []
    texts: list[list[str]] = []
    out: list[XmlNode] = []
    count = [0]

    def start(tag: str, attrs: list[str]) -> None:
        count[0] += 1
        if len(stack) >= MAX_DEPTH or count[0] > MAX_ELEMENTS:
            raise _Refused(f"more than {MAX_DEPTH} nested or {MAX_ELEMENTS} elements")
        node = XmlNode(tag, dict(zip(attrs[::2], attrs[1::2])), line=p.CurrentLineNumber)
        if stack:
            stack[-1].children.append(node)
        else:
            out.append(node)
        stack.append(node)
        texts.append([])

    def end(_tag: str) -> None:
        node = stack.pop()
        node.text = "".join(texts.pop()).strip()

    def chars(text: str) -> None:
        if texts:
            texts[-1].append(text)

    p.ordered_attributes = True
    p.StartElementHandler = start
    p.EndElementHandler = end
    p.CharacterDataHandler = chars
    try:
        p.Parse(bytes(data), True)
    except expat.ExpatError as exc:
        if exc.code == _NO_ELEMENTS and not out and bytes(data).strip():
            return None          # a declaration or comments only: TinyXML loads it, empty
        raise FormatError("well-formed XML", file=file, offset=p.ErrorByteIndex,
                          path=f"line {exc.lineno}, column {exc.offset + 1}",
                          got=expat.ErrorString(exc.code)) from None
    except _Refused as exc:
        raise FormatError("XML without DTDs or entities (refused: they can expand without "
                          "bound)" if "entit" in str(exc) or "DOCTYPE" in str(exc)
                          else "an XML descriptor of reasonable depth and size",
                          file=file, offset=p.CurrentByteIndex,
                          path=f"line {p.CurrentLineNumber}", got=str(exc)) from None
    return out[0] if out else None


_NO_ELEMENTS = expat.errors.codes[expat.errors.XML_ERROR_NO_ELEMENTS]
_TAG = re.compile(rb"<([A-Za-z_][A-Za-z0-9_.:-]*)")


def root_tag(head: bytes) -> str | None:
    """The name of the first element in ``head``, skipping the declaration, comments and
    processing instructions (None when there is none or the text is not XML-like)."""
    i = 3 if head.startswith(b"\xef\xbb\xbf") else 0
    n = len(head)
    while i < n:
        while i < n and head[i] in b" \t\r\n":
            i += 1
        if head.startswith(b"<?", i):
            j = head.find(b"?>", i)
        elif head.startswith(b"<!--", i):
            j = head.find(b"-->", i)
        elif head.startswith(b"<!", i):
            return None          # a DTD: never ours
        else:
            m = _TAG.match(head, i)
            return m.group(1).decode("ascii") if m else None
        if j < 0:
            return None
        i = j + 2
    return None


def sniff(head: bytes) -> bool:
    return root_tag(head) in KINDS


@record
class OgXmlFile:
    """A descriptor kept as its bytes (``write`` gives them back); ``kind`` is ``character``,
    ``rig`` or ``object``; ``path`` the file it was read from (paths it names resolve from
    there; not written)."""
    kind: str = "character"
    text: bytes = b""
    path: str | None = None

    def root(self) -> XmlNode:
        node = parse_xml(self.text, self.path)
        if node is None:
            raise FormatError("an XML element", file=self.path, offset=0, path="root element")
        return node


def read(r: Reader) -> OgXmlFile:
    data = r.rest()
    node = parse_xml(data, r.file)
    if node is None or node.tag not in KINDS:
        raise FormatError("an Overgrowth <character>, <rig> or <Object> descriptor",
                          file=r.file, offset=0, path="root element",
                          got=f"<{node.tag}>" if node else "no element")
    src = getattr(r, "source_path", None)
    return OgXmlFile(KINDS[node.tag], bytes(data), os.fspath(src) if src else None)


def write(doc: OgXmlFile) -> bytes:
    return bytes(doc.text)


def info(doc: OgXmlFile) -> dict[str, object]:
    node = doc.root()
    out: dict[str, object] = {"kind": doc.kind}
    if doc.kind == "character":
        app = node.child("appearance")
        if app is not None:
            out.update({k: v for k, v in app.attrib.items() if k in ("obj_path", "skeleton")})
        anims = node.child("animations")
        out["animation_roles"] = len(anims.attrib) if anims is not None else 0
    elif doc.kind == "rig":
        out.update({k: v for k, v in node.attrib.items()
                    if k in ("bone_path", "model_path", "mass_path")})
    else:
        for tag in ("Model", "ColorMap", "NormalMap", "ShaderName"):
            c = node.child(tag)
            if c is not None:
                out[tag] = c.text
    return out


# -- data roots ---------------------------------------------------------------------------------

def _split(rel: str) -> list[str]:
    """The parts of an engine path, or UnsafePath (absolute, drive, ``..``, NUL, empty)."""
    if "\0" in rel:
        raise UnsafePath("a NUL byte")
    text = rel.strip().replace("\\", "/")
    if text.startswith("/") or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", text):
        raise UnsafePath("an absolute path")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if not parts:
        raise UnsafePath("no file name")
    if ".." in parts:
        raise UnsafePath("'..' (a parent folder)")
    if parts[0].lower() != "data":
        raise UnsafePath("a path outside Data/ (every asset path of the engine starts there)")
    return parts


def _root_of(folder: Path) -> Path:
    """A data root given by the user: the folder holding ``Data``, or ``Data`` itself."""
    return folder.parent if folder.name.lower() == "data" and not (folder / "Data").is_dir() \
        else folder


class DataRoots:
    """The folders ``Data/…`` paths resolve from, in the engine's order (mod, then game)."""

    def __init__(self, source: str | os.PathLike | None,
                 data_path: Iterable[str | os.PathLike] = ()) -> None:
        roots: list[Path] = []
        if source is not None:
            here = Path(os.path.abspath(source)).parent
            for a in (here, *here.parents):
                if a.name.lower() == "data":
                    roots.append(a.parent)
                    mods = a.parent.parent
                    if mods.name.lower() == "mods" and mods.parent.name.lower() == "data":
                        roots.append(mods.parent.parent)
                    break
        roots += [_root_of(Path(p).expanduser()) for p in data_path]
        self.roots: list[Path] = []
        for r in roots:
            try:
                real = r.resolve()
            except (OSError, RuntimeError):
                continue
            if real.is_dir() and real not in self.roots:
                self.roots.append(real)

    def describe(self) -> str:
        return ", ".join(map(str, self.roots)) or "no data root (the file is not inside a Data folder)"

    @staticmethod
    def _walk(root: Path, parts: list[str]) -> str | None:
        """The case-corrected relative path of ``parts`` below ``root``, or None."""
        folder, found = root, []
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            cand = folder / part
            if not (cand.is_file() if last else cand.is_dir()):
                try:
                    names = [e.name for e in os.scandir(folder) if e.name.lower() == part.lower()]
                except OSError:
                    return None
                names = [n for n in names if ((folder / n).is_file() if last
                                              else (folder / n).is_dir())]
                if not names:
                    return None
                cand = folder / sorted(names)[0]
            found.append(cand.name)
            folder = cand
        return "/".join(found)

    def find(self, rel: str) -> tuple[Path, str] | None:
        """(root, case-corrected relative path) of the first root holding ``rel``; None when
        none does. UnsafePath when ``rel`` would leave its root (also through a link)."""
        parts = _split(rel)
        for root in self.roots:
            hit = self._walk(root, parts)
            if hit is None:
                continue
            real = (root / hit).resolve()
            if not real.is_relative_to(root):
                raise UnsafePath(f"a link leading out of {root}")
            return root, hit
        return None

    def read(self, rel: str, max_bytes: int = MAX_FILE_BYTES) -> tuple[bytes, Path] | None:
        """(bytes, real path) of ``rel``, None when no root holds it (UnsafePath/OSError)."""
        hit = self.find(rel)
        if hit is None:
            return None
        root, found = hit
        data = contained_file(root, quote(found), max_bytes)
        return data, (root / found).resolve()
