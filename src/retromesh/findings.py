"""What ``retromesh check`` reports: one :class:`Finding` per rule a file breaks.

A rule says what a game's engine does with a file. ``error``: the engine refuses it (or
crashes, hangs, or reads something else than what was written), so ``check`` fails and
``convert`` to that format refuses to write it unless ``--force``. ``warning``: the engine
loads it but shows or animates it wrongly. Every rule has a stable id, ``<format>.<name>``
(``phxbn.mirror``), listed with its source in ``docs/check-rules.md``.
"""
from __future__ import annotations

from .records import record

__all__ = ["ERROR", "WARNING", "Finding", "error", "warning"]

ERROR = "error"
WARNING = "warning"


@record(frozen=True)
class Finding:
    """One broken rule: its id, what is wrong in the engine's words where they are known,
    and whether the engine refuses the file (``error``) or mis-loads it (``warning``)."""
    rule: str
    message: str
    severity: str = ERROR

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    def as_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "severity": self.severity, "message": self.message}


def error(rule: str, message: str) -> Finding:
    return Finding(rule, message, ERROR)


def warning(rule: str, message: str) -> Finding:
    return Finding(rule, message, WARNING)

