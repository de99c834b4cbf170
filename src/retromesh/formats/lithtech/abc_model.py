"""The in-memory document of a v9-v13 LithTech ``.abc`` model: one dataclass per section,
the numpy record types of its bulk data, and :class:`AbcModel` (the sections in chain order).

The layout, the deviations from the spec and the reader/writer live in :mod:`.abc`, which
re-exports every name defined here.
"""
from __future__ import annotations

from dataclasses import field

import numpy as np

from ...errors import DocumentError
from ...records import record
from .common import TRANSFORM

__all__ = ["AbcModel", "HeaderSection", "PiecesSection", "Piece", "Lod", "NodesSection", "Node",
           "WeightSet", "ChildModelsSection", "ChildModel", "AnimationSection", "Animation",
           "SocketsSection", "Socket", "AnimBindingsSection", "AnimBinding", "CORNER", "VERTEX",
           "WEIGHT", "TRANSFORM", "TRANSFORM13", "VERSIONS"]

VERSIONS = (9, 10, 11, 12, 13)

#: one face corner: u, v and the vertex it uses (faces are (n, 3) arrays of these)
CORNER = np.dtype([("uv", "<f4", (2,)), ("vertex", "<u2")])
#: a vertex without its weights (the weights of all vertices are one flat WEIGHT array)
VERTEX = np.dtype([("weight_count", "<u2"), ("sublod", "<u2"), ("location", "<f4", (3,)),
                   ("normal", "<f4", (3,))])
WEIGHT = np.dtype([("node", "<u4"), ("location", "<f4", (3,)), ("bias", "<f4")])
#: v13 keyframe transform (two unknown floats after the quaternion)
TRANSFORM13 = np.dtype([("location", "<f4", (3,)), ("rotation", "<f4", (4,)),
                        ("extra", "<f4", (2,))])

COUNT_FIELDS = ("keyframe_count", "animation_count", "node_count", "piece_count",
                "child_model_count", "face_count", "vertex_count", "weight_count", "lod_count",
                "socket_count", "weight_set_count")


# -- the document --------------------------------------------------------------------------
@record
class HeaderSection:
    version: int = 12
    keyframe_count: int = 0
    animation_count: int = 0
    node_count: int = 0
    piece_count: int = 0
    child_model_count: int = 0
    face_count: int = 0
    vertex_count: int = 0
    weight_count: int = 0
    lod_count: int = 1
    socket_count: int = 0
    weight_set_count: int = 0
    unknown_v13: int | None = None          # present in v13 only
    string_count: int = 0
    string_length_total: int = 0
    command_string: bytes = b""
    internal_radius: float = 0.0
    lod_distance_count: int = 0
    padding: bytes = bytes(60)
    lod_distances: np.ndarray = field(default_factory=lambda: np.zeros(0, "<f4"))
    gap: bytes = b""


@record
class Lod:
    faces: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), CORNER))   # (n, 3) CORNER
    vertices: np.ndarray = field(default_factory=lambda: np.zeros(0, VERTEX))
    weights: np.ndarray = field(default_factory=lambda: np.zeros(0, WEIGHT))       # flat, in vertex order


@record
class Piece:
    material_index: int = 0
    specular_power: float = 0.0
    specular_scale: float = 1.0
    lod_weight: float | None = 1.0          # absent in v9
    unknown: int = 0
    name: bytes = b""
    lods: list[Lod] = field(default_factory=list)


@record
class PiecesSection:
    weight_count: int = 0
    pieces: list[Piece] = field(default_factory=list)
    gap: bytes = b""


@record
class Node:
    name: bytes = b""
    index: int = 0
    flags: int = 0
    matrix: np.ndarray = field(default_factory=lambda: np.eye(4, dtype="<f4"))  # (4, 4) float32
    child_count: int = 0


@record
class WeightSet:
    name: bytes = b""
    weights: np.ndarray = field(default_factory=lambda: np.zeros(0, "<f4"))


@record
class NodesSection:
    nodes: list[Node] = field(default_factory=list)
    weight_sets: list[WeightSet] | None = field(default_factory=list)
    gap: bytes = b""


@record
class ChildModel:
    name: bytes = b""
    build_number: int = 0
    transforms: np.ndarray = field(default_factory=lambda: np.zeros(0, TRANSFORM))


@record
class ChildModelsSection:
    child_models: list[ChildModel] = field(default_factory=list)
    extra: bool = False                      # v13 transforms with two extra floats
    gap: bytes = b""


@record
class Animation:
    extents: tuple[float, ...] | None = (0.0, 0.0, 0.0)   # None: from_scene computes them
    name: bytes = b""
    unknown: int = -1
    interpolation_ms: int | None = 200       # absent before v12
    key_times: np.ndarray = field(default_factory=lambda: np.zeros(0, "<u4"))
    key_strings: list[bytes] = field(default_factory=list)
    markers: np.ndarray | None = None        # v13: one int32 per node (usually -1)
    transforms: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), TRANSFORM))  # (nodes, keys)


@record
class AnimationSection:
    animations: list[Animation] = field(default_factory=list)
    gap: bytes = b""


@record
class Socket:
    node: int = 0
    name: bytes = b""
    rotation: tuple[float, ...] = (0.0, 0.0, 0.0, 1.0)
    location: tuple[float, ...] = (0.0, 0.0, 0.0)


@record
class SocketsSection:
    sockets: list[Socket] = field(default_factory=list)
    gap: bytes = b""


@record
class AnimBinding:
    name: bytes = b""
    extents: tuple[float, ...] = (0.0, 0.0, 0.0)
    origin: tuple[float, ...] = (0.0, 0.0, 0.0)


@record
class AnimBindingsSection:
    bindings: list[AnimBinding] = field(default_factory=list)
    gap: bytes = b""


SECTION_NAMES = {
    HeaderSection: b"Header", PiecesSection: b"Pieces", NodesSection: b"Nodes",
    ChildModelsSection: b"ChildModels", AnimationSection: b"Animation",
    SocketsSection: b"Sockets", AnimBindingsSection: b"AnimBindings",
}


@record
class AbcModel:
    """A v9-v13 ABC file: its sections in chain order."""
    sections: list = field(default_factory=list)

    def _find(self, cls):
        for s in self.sections:
            if isinstance(s, cls):
                return s
        return None

    @property
    def header(self) -> HeaderSection:
        h = self._find(HeaderSection)
        if h is None:
            raise DocumentError("the ABC model has no Header section")
        return h

    @property
    def version(self) -> int:
        return self.header.version

    @property
    def pieces(self) -> list[Piece]:
        s = self._find(PiecesSection)
        return s.pieces if s else []

    @property
    def nodes(self) -> list[Node]:
        s = self._find(NodesSection)
        return s.nodes if s else []

    @property
    def weight_sets(self) -> list[WeightSet]:
        s = self._find(NodesSection)
        return (s.weight_sets or []) if s else []

    @property
    def child_models(self) -> list[ChildModel]:
        s = self._find(ChildModelsSection)
        return s.child_models if s else []

    @property
    def animations(self) -> list[Animation]:
        s = self._find(AnimationSection)
        return s.animations if s else []

    @property
    def sockets(self) -> list[Socket]:
        s = self._find(SocketsSection)
        return s.sockets if s else []

    @property
    def anim_bindings(self) -> list[AnimBinding]:
        s = self._find(AnimBindingsSection)
        return s.bindings if s else []
