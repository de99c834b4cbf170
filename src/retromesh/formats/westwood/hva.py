"""Westwood hierarchical voxel animation (``.hva``): one 3x4 matrix per limb per frame.

| off | type | field |
|---|---|---|
| 0 | char[16] | name (often a path fragment of the tool that wrote it; kept raw) |
| 16 | uint32 | frames |
| 20 | uint32 | sections |
| 24 | char[16] x sections | section names (raw: garbage after the NUL kept) |
| ... | float32[12] x sections x frames | frame-major 3x4 row-major ``[R | t]`` matrices |
| ... | rest | trailing bytes (none in the corpus; kept) |

What the corpus taught (37 files): section names are matched to limbs by name in most files,
but names can repeat (``gmon.hva`` has DUMMY01 twice for limbs DUMMY01 and "Copy Of
DUMMY01"), be empty (``buoy.hva``) or differ completely (``kamaztur.hva`` "section0" for the
limb DUMMY0); ``tsjeep.hva`` has one section (BODY) for a two-limb .vxl (GUN01, BODY). The
scene code therefore matches by name when the names are unique and all found, else by order
when the counts agree, else by name where possible (see :mod:`.scene`). Rotations are
orthonormal except ``mrjtur.hva`` (a uniform scale of about 0.73).
"""
from __future__ import annotations

from dataclasses import field
from typing import Any

import numpy as np

from ...arrays import as_dtype
from ...binio import Reader, Writer
from ...errors import DocumentError
from ...findings import Finding, error
from ...records import record

__all__ = ["HvaFile", "check", "info", "read", "write"]


@record
class HvaFile:
    name: bytes = b"\0" * 16
    section_names: list[bytes] = field(default_factory=list)
    #: (frames, sections, 3, 4) float32
    matrices: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 3, 4), np.float32))
    trailing: bytes = b""

    @property
    def frames(self) -> int:
        return int(self.matrices.shape[0])

    @property
    def labels(self) -> list[str]:
        return [n.split(b"\0", 1)[0].decode("latin-1") for n in self.section_names]


def read(r: Reader) -> HvaFile:
    doc = HvaFile()
    doc.name = r.fixed(16, "name")
    frames = r.u32("frames")
    sections = r.count("sections", 16, "I")
    with r.at("section_names"):
        doc.section_names = [r.fixed(16, f"[{i}]") for i in range(sections)]
    if sections:  # frames was read before sections: its size is known only now
        r.check_count(frames, 48 * sections, "frames")
    m = r.records("<f4", frames * sections * 12, "matrices")
    doc.matrices = m.reshape(frames, sections, 3, 4)
    doc.trailing = r.rest()
    return doc


def write(doc: HvaFile) -> bytes:
    m = as_dtype(doc.matrices, "<f4", "HvaFile.matrices")
    if m.ndim != 4 or m.shape[2:] != (3, 4):
        raise DocumentError(f"HvaFile.matrices must be (frames, sections, 3, 4), got {m.shape}")
    if m.shape[1] != len(doc.section_names):
        raise DocumentError(f"HvaFile has {len(doc.section_names)} section names for "
                            f"{m.shape[1]} matrix columns")
    w = Writer("<")
    w.fixed(doc.name, 16)
    w.pack("2I", m.shape[0], m.shape[1])
    for n in doc.section_names:
        w.fixed(n, 16)
    w.records(m)
    w.raw(doc.trailing)
    return w.getvalue()


def info(doc: HvaFile) -> dict[str, Any]:
    return {"frames": doc.frames, "sections": len(doc.section_names)}


def check(doc: HvaFile) -> list[Finding]:
    problems = []
    m = np.asarray(doc.matrices, np.float64)
    if not np.all(np.isfinite(m)):
        problems.append(error("hva.finite", "non-finite matrix values"))
    elif m.size:
        det = np.linalg.det(m[..., :3])
        frame, section = (int(x[0]) for x in np.nonzero(det == 0)) if np.any(det == 0) else (-1, -1)
        if frame >= 0:
            problems.append(error("hva.singular", f"The transformation matrix for section "
                                  f"{section} frame {frame} is invalid because it is not "
                                  "invertible! (OpenRA's words)"))
    return problems
