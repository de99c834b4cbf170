"""Exceptions and warnings raised by retromesh.

Every problem with an input file surfaces as :class:`FormatError` (or a subclass), carrying
the file name, the byte offset, the field path inside the document and what was expected.
"""
from __future__ import annotations

__all__ = [
    "RetromeshError",
    "FormatError",
    "UnknownFormatError",
    "LimitError",
    "UnsupportedError",
    "MissingCompanionError",
    "DocumentError",
    "UnsupportedInputError",
    "NoSceneError",
    "RefusedError",
    "LossWarning",
    "EngineWarning",
    "MissingTextureWarning",
]


class RetromeshError(Exception):
    """Base class of every error retromesh raises on purpose."""


class FormatError(RetromeshError):
    """A file does not follow its format.

    ``file`` is the file name (or ``None`` for in-memory data), ``offset`` the absolute byte
    offset where the problem was found, ``path`` the field path (``nodes[3].keys[12].rotation``),
    ``expected`` what the format requires and ``got`` what was found.
    """

    def __init__(
        self,
        expected: str,
        *,
        file: str | None = None,
        offset: int | None = None,
        path: str | None = None,
        got: object = None,
    ) -> None:
        self.expected = expected
        self.file = file
        self.offset = offset
        self.path = path
        self.got = got
        super().__init__(self._message())

    def _message(self) -> str:
        where = []
        where.append(self.file if self.file else "<data>")
        if self.offset is not None:
            where.append(f"byte {self.offset} (0x{self.offset:x})")
        if self.path:
            where.append(self.path)
        text = ": ".join(where) + f": expected {self.expected}"
        if self.got is not None:
            text += f", got {self.got}"
        return text

    def with_file(self, file: str | None) -> FormatError:
        """Fill in the file name when the reader did not know it."""
        if file and not self.file:
            self.file = file
            self.args = (self._message(),)
        return self


class UnknownFormatError(FormatError):
    """The format of an input could not be determined (or a forced format does not match)."""


class LimitError(FormatError):
    """A count, length or depth in the file exceeds what the data or a safety limit allows."""


class UnsupportedError(RetromeshError):
    """The operation exists in principle but not for this format or this content."""


class MissingCompanionError(UnsupportedError):
    """A file that converts only with a companion that is not there (a Lugaru animation
    without any skeleton it could play on). ``retromesh check`` judges the file alone and
    says what it could not check (``unchecked``), without failing."""

    def __init__(self, message: str, unchecked: str = "its conversion") -> None:
        super().__init__(message)
        self.unchecked = unchecked


class UnsupportedInputError(FormatError, UnsupportedError):
    """A reader or ``to_scene`` refused an input it recognises but does not support (a Voxlap
    map named .vxl, an option the file needs): both a FormatError (every input problem is one)
    and the UnsupportedError the reader raised."""


class NoSceneError(UnsupportedInputError):
    """A sound file of a model format's grammar that holds no model (a LithTech ``.lta`` render
    style): it reads and writes back, and has nothing to convert. ``retromesh check`` does not
    count that against it."""


class DocumentError(RetromeshError):
    """A native document or scene cannot be written as it is (a value out of range, a count
    that does not match its array, a string too long for its field...)."""


class RefusedError(DocumentError):
    """What a conversion was about to write breaks rules by which the game's engine refuses the
    file (``error`` findings of ``retromesh check``); nothing was written. ``findings`` lists
    them; ``force=True`` writes such a file anyway."""

    def __init__(self, message: str, findings: list | None = None) -> None:
        super().__init__(message)
        self.findings = list(findings or [])


class LossWarning(UserWarning):
    """A conversion dropped or approximated something; the message says what."""


class EngineWarning(LossWarning):
    """A file being written breaks a rule whose result the game's engine loads but shows or
    animates wrongly (a ``warning`` finding of ``retromesh check``); ``rule`` is its id."""

    def __init__(self, message: str, rule: str = "") -> None:
        super().__init__(message)
        self.rule = rule


class MissingTextureWarning(LossWarning):
    """A texture a model names could not be found (beside the source, in the ``texture_path``
    folders or the game's usual layout); a GLB embeds a placeholder image keeping its name
    (:mod:`retromesh.gltf.placeholder`), a ``.gltf`` keeps it as a relative reference.
    ``name`` is the texture's name as the model gives it."""

    def __init__(self, message: str, name: str = "") -> None:
        super().__init__(message)
        self.name = name
