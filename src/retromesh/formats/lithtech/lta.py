"""LithTech ``.lta`` text models (LithTech 2.2, Talon, Jupiter; ModelEdit and the exporters):
the whitespace-preserving reader and writer.

An LTA file is a sequence of s-expressions. The grammar is the engine's own (``libs/ltamgr``,
``CLTAReader::NextToken``):

=============  ==========================================================================
token          text
=============  ==========================================================================
whitespace     space, ``\\t``, ``\\r``, ``\\n`` only (between tokens; no comment syntax)
``(`` ``)``    open and close a list
string         ``"`` anything but ``"`` ``"`` (no escapes; kept with its quotes)
value          a run of bytes other than whitespace, ``(``, ``)`` and ``"``
=============  ==========================================================================

The document (:class:`LtaFile`) is flat: every token as it was written (``tokens``) and the
exact text before each token and after the last one (``gaps``: indentation, trailing spaces,
blank lines), so ``write(read(f)) == f`` for any file the grammar accepts, however it was
laid out, and unknown nodes ride along untouched. A ``)`` with no list open is kept and
ignored, as the engine ignores it (files made by LithTech's tools end with one too many).
Being flat, it never recurses: a 100,000-deep nesting costs nothing to read and is refused
with the line and column where it passes :data:`MAX_DEPTH` (the engine's ``MAX_LTA_DEPTH``,
1024). :func:`tree` gives the nested view (built with an explicit stack) that
:mod:`.lta_model` maps to the model records.

Deviations from the engine's reader, all refused where the engine guesses: an unterminated
string (the engine ends it at the end of the file), lists left open at the end, values
longer than 1023 bytes (the engine truncates them to ``MAX_VALUE_LENGTH``). Each
:class:`~retromesh.FormatError` names the byte offset and ``line L, column C`` (1-based; a
tab counts as one column).

New text (:func:`modeledit_text`) is laid out as ModelEdit's ``CLTAWriter`` lays it out, so a
diff against a ModelEdit file of the same model shows only changed values: a list opens on a
new line indented with one tab per depth (``"\\n" + tabs + "("``) unless it follows a closed
list (then one tab); every value is followed by one space; ``)`` is followed by a newline and
``depth - 1`` tabs; numbers are ``%.6f`` (``LTA_DECIMAL_ACCURACY``) and integers ``%d``.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import field
from typing import Any

from ...binio import Reader
from ...errors import DocumentError, FormatError, LimitError
from ...findings import Finding, error
from ...records import record

__all__ = ["LtaFile", "Lst", "read", "write", "parse", "tree", "modeledit_text", "fmt_float",
           "line_column", "MAX_DEPTH", "MAX_TEXT", "MAX_VALUE", "info", "check", "sniff", "kind",
           "OTHER_KINDS"]

#: deepest nesting read (the engine's MAX_LTA_DEPTH)
MAX_DEPTH = 1024
#: largest text read (a NOLF2 character with every animation is tens of MB)
MAX_TEXT = 512 << 20
#: longest value or string (the engine's MAX_VALUE_LENGTH - 1; longer ones it truncates)
MAX_VALUE = 1023

#: LTA texts that are no model, by their first node: LithTech's RenderStylesEditor saves
#: ``(renderstyle Name (renderstates ...) (renderpass ...))`` in the same grammar. They read,
#: write back byte for byte, ``info``/``dump``/``check`` as text; they have no scene.
OTHER_KINDS = {b"renderstyle": "render style"}

_TOKEN = re.compile(rb'([ \t\r\n]*)(\(|\)|"[^"]*"|[^ \t\r\n()"]+)')
_SPACE = re.compile(rb"[ \t\r\n]*")


@record
class LtaFile:
    """An LTA text as tokens and the exact text around them (``len(gaps) == len(tokens) + 1``)."""
    tokens: list[bytes] = field(default_factory=list)
    gaps: list[bytes] = field(default_factory=lambda: [b""])


class Lst:
    """A list of the nested view: ``items`` are :class:`Lst` or token indices (atoms);
    ``at`` is the token index of its ``(``."""
    __slots__ = ("at", "items")

    def __init__(self, at: int) -> None:
        self.at = at
        self.items: list[Lst | int] = []


def line_column(text: bytes, offset: int) -> tuple[int, int]:
    line = text.count(b"\n", 0, offset) + 1
    return line, offset - (text.rfind(b"\n", 0, offset) + 1) + 1


def _fail(text: bytes, offset: int, expected: str, got: object = None, *, limit: bool = False,
          file: str | None = None) -> FormatError:
    line, col = line_column(text, offset)
    cls = LimitError if limit else FormatError
    return cls(expected, file=file, offset=offset, path=f"line {line}, column {col}", got=got)


def parse(text: bytes, file: str | None = None) -> LtaFile:
    """``text`` as an :class:`LtaFile`; FormatError (line and column) when it breaks the
    grammar, LimitError past :data:`MAX_TEXT` or :data:`MAX_DEPTH`."""
    if len(text) > MAX_TEXT:
        raise LimitError(f"an LTA text of at most {MAX_TEXT} bytes", file=file, got=len(text))
    found = _TOKEN.findall(text)
    gaps = [g for g, _ in found]
    tokens = [t for _, t in found]
    used = sum(map(len, gaps)) + sum(map(len, tokens))
    tail = text[used:]
    if _SPACE.fullmatch(tail) is None or used + len(tail) != len(text):
        _locate_bad_text(text, file)
    gaps.append(tail)
    doc = LtaFile(tokens=tokens, gaps=gaps)
    _check_nesting(doc, text, file)
    return doc


def _locate_bad_text(text: bytes, file: str | None) -> None:
    pos = 0
    for m in _TOKEN.finditer(text):
        if m.start() != pos:
            break
        pos = m.end()
    pos += len(_SPACE.match(text, pos).group(0))  # type: ignore[union-attr]  # always matches
    if text[pos:pos + 1] == b'"':
        raise _fail(text, pos, 'a string closed by "', "the end of the file", file=file)
    raise _fail(text, pos, "an LTA token", text[pos:pos + 16], file=file)


def _offsets(doc: LtaFile) -> list[int]:
    out, pos = [], 0
    for g, t in zip(doc.gaps, doc.tokens):
        pos += len(g)
        out.append(pos)
        pos += len(t)
    return out


def _check_nesting(doc: LtaFile, text: bytes, file: str | None) -> None:
    depth = 0
    opened: list[int] = []
    bad: tuple[int, str, object, bool] | None = None
    for i, t in enumerate(doc.tokens):
        if t == b"(":
            depth += 1
            if depth > MAX_DEPTH:
                bad = (i, f"lists nested at most {MAX_DEPTH} deep", depth, True)
                break
            if len(opened) < MAX_DEPTH:
                opened.append(i)
        elif t == b")":
            if depth:       # a stray ')' at the top is ignored, as the engine does
                depth -= 1
                opened.pop()
        elif len(t) > MAX_VALUE + (2 if t[:1] == b'"' else 0):
            bad = (i, f"a value of at most {MAX_VALUE} bytes", len(t), False)
            break
    if bad is None and depth:
        bad = (opened[-1], "a ')' for every '('", f"{depth} lists still open at the end", False)
    if bad is not None:
        i, expected, got, limit = bad
        raise _fail(text, _offsets(doc)[i], expected, got, limit=limit, file=file)


def read(r: Reader) -> LtaFile:
    return parse(r.rest(), r.file)


def write(doc: LtaFile) -> bytes:
    gaps, tokens = doc.gaps, doc.tokens
    if len(gaps) != len(tokens) + 1:
        raise DocumentError(f"an LtaFile has one gap more than tokens ({len(tokens)} tokens, "
                            f"{len(gaps)} gaps)")
    parts = [b""] * (2 * len(tokens) + 1)
    parts[0::2] = gaps
    parts[1::2] = tokens
    return b"".join(parts)


def tree(doc: LtaFile) -> list[Lst | int]:
    """The top-level items of ``doc`` as nested :class:`Lst` (an explicit stack: no recursion).
    ``doc`` must be balanced (as :func:`parse` makes it)."""
    top: list[Lst | int] = []
    stack: list[list[Lst | int]] = [top]
    for i, t in enumerate(doc.tokens):
        if t == b"(":
            node = Lst(i)
            stack[-1].append(node)
            stack.append(node.items)
        elif t == b")":
            if len(stack) > 1:
                stack.pop()
        else:
            stack[-1].append(i)
    return top


# -- writing new text as ModelEdit does -----------------------------------------------------
def fmt_float(v: float) -> bytes:
    """A real as ModelEdit prints it (``%.*f`` at LTA_DECIMAL_ACCURACY 6)."""
    return b"%.6f" % v


def modeledit_text(items: list[Any]) -> LtaFile:
    """New LTA text of a nested Python tree (a list is a list; ``bytes`` a token written as it
    is, e.g. ``b'"name"'``; ``str`` a quoted string; ``int``/``float`` numbers), laid out as
    ModelEdit's writer does (see the module docstring). Iterative: any depth."""
    tokens: list[bytes] = []
    gaps: list[bytes] = []
    pend = b""                  # text waiting to precede the next token
    depth = 0
    newline, tab = True, False  # CLTAWriter's m_bPrintNewline and m_bPrintTab
    stack: list[Iterator[Any]] = [iter(items)]
    while stack:
        item = next(stack[-1], _END)
        if item is _END:
            stack.pop()
            if len(stack) == 0:
                break
            gaps.append(pend)
            tokens.append(b")")
            depth -= 1
            pend = b"\n" + b"\t" * max(depth - 1, 0)
            tab, newline = True, False
            continue
        if isinstance(item, list):
            pend += (b"\n" + b"\t" * depth) if newline else b"\t"
            gaps.append(pend)
            tokens.append(b"(")
            pend = b""
            depth += 1
            tab = False
            stack.append(iter(item))
            continue
        if tab:
            pend += b"\t"
            tab = False
        newline = True
        gaps.append(pend)
        tokens.append(_atom(item))
        pend = b" "
    gaps.append(pend)
    return LtaFile(tokens=tokens, gaps=gaps)


_END = object()


def _atom(v: Any) -> bytes:
    if isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return b'"' + v.encode("latin-1", "replace") + b'"'
    if isinstance(v, bool):
        return b"1" if v else b"0"
    if isinstance(v, int):
        return b"%d" % v
    return fmt_float(float(v))


# -- registry helpers ----------------------------------------------------------------------
def sniff(head: bytes) -> bool:
    """An LTA text: whitespace, then ``(`` and one of the top nodes models start with."""
    s = head.lstrip(b" \t\r\n")
    return s.startswith(b"(") and s[1:].lstrip(b" \t\r\n").startswith(
        (b"lt-model-0", b"file-info", b"on-load-cmds", b"hierarchy", *OTHER_KINDS))


def kind(doc: LtaFile) -> str:
    """``"model"``, or what :data:`OTHER_KINDS` names the text by its first node."""
    first = next((i for i, t in enumerate(doc.tokens) if t == b"("), None)
    if first is None or first + 1 >= len(doc.tokens):
        return "model"
    return OTHER_KINDS.get(bytes(doc.tokens[first + 1]), "model")


def info(doc: LtaFile) -> dict[str, Any]:
    lists = sum(1 for t in doc.tokens if t == b"(")
    return {"kind": kind(doc), "tokens": len(doc.tokens), "lists": lists,
            "top nodes": sum(1 for x in tree(doc) if isinstance(x, Lst))}


def check(doc: LtaFile) -> list[Finding]:
    out: list[Finding] = []
    if not any(isinstance(x, Lst) for x in tree(doc)):
        out.append(error("lta.empty", "the LTA text holds no list"))
    return out
