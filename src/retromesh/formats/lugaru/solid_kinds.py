"""Which Lugaru ``.solid`` models the game turns at load time, and how (``osslugaru/lugaru``).

``Model::Rotate(x, y, z)`` calls ``DoRotation`` on every vertex, which turns about Y by ``y``
degrees, then about Z by ``z``, then about X by ``x`` (right-handed, column vectors):
``Rotate(x, y, z) = Rx(x) Rz(z) Ry(y)``. The rotations the game applies when it loads a model,
by kind (the file names the game loads are the keys of :data:`KINDS`):

==========  ======================================  ==============================  =========================
kind        models                                  game code                       turn
==========  ======================================  ==============================  =========================
character   Body*, BodyLow, Rabbit, Wolf*, WolfLow  ``Skeleton::Load``:             Rx(180)
            (+ Belt, the clothes drawn over them)   ``Rotate(180, 0, 0)``
object      Box, Cool, Wall, Tunnel, Chimney,       ``Object::Object``:             Rx(90) Rz(1) Ry(1)
            Spike, Weird, Rock, TreeTrunk, Leaves,  ``Rotate(90, 1, 1)``;
            Bush; Hawk                              ``GameInitDispose``: the same
platform    Platform                                ``Rotate(90, 0, 0)`` then       Rx(90) Rz(1) Ry(1) Rx(90)
                                                    ``Rotate(90, 1, 1)``
knife       ThrowingKnife                           ``Weapon::Load``:               Ry(90) Rx(90)
                                                    ``Rotate(90, 0, 0)``,
                                                    ``Rotate(0, 90, 0)``
blade       Sword, Staff                            ... then ``Rotate(0, 0, 90)``   Rz(90) Ry(90) Rx(90)
plain       Eye, Cornea, Iris (and unknown names)   no rotation                     --
==========  ======================================  ==============================  =========================

The one-degree turns about Y and Z in ``Rotate(90, 1, 1)`` are the game's (``DoRotation``
applies any non-zero angle): objects stand upright as the game shows them, 1 degree off plumb.
Per-instance turns (an object's ``pitch``/``yaw``, a rock's ``yaw * 5``) and scales (objects
0.3 x level scale, characters 0.04, hawk 0.03, knife and sword 0.001, staff 0.005) belong to a
level or a character, not to the model, and are not applied.

After the turn: characters and objects stand along +Y (TreeTrunk, Leaves and Bush grow
upwards from y = 0; Wall and Chimney stand on their long side), the hawk lies flat in XZ,
weapons point along +Z (blade and staff head towards +Z), as in the game's model space.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ...transforms import matrix_to_quat

__all__ = ["KINDS", "ROTATIONS", "kind_of_name", "rotation_matrix", "rotation_quat", "game_rotate",
           "CW_KINDS"]


def game_rotate(x: float, y: float, z: float) -> np.ndarray:
    """The 3x3 matrix of Lugaru's ``Model::Rotate(x, y, z)`` (degrees): ``Rx(x) Rz(z) Ry(y)``."""
    a, b, c = np.radians([x, y, z])
    rx = np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])
    ry = np.array([[np.cos(b), 0, np.sin(b)], [0, 1, 0], [-np.sin(b), 0, np.cos(b)]])
    rz = np.array([[np.cos(c), -np.sin(c), 0], [np.sin(c), np.cos(c), 0], [0, 0, 1]])
    return rx @ rz @ ry


#: the load-time calls of each kind, in order (later calls apply on top of earlier ones)
_CALLS: dict[str, list[tuple[float, float, float]]] = {
    "character": [(180, 0, 0)],
    "object": [(90, 1, 1)],
    "platform": [(90, 0, 0), (90, 1, 1)],
    "knife": [(90, 0, 0), (0, 90, 0)],
    "blade": [(90, 0, 0), (0, 90, 0), (0, 0, 90)],
    "plain": [],
}


def _compose(calls) -> np.ndarray:
    m = np.eye(3)
    for c in calls:
        m = game_rotate(*c) @ m
    return m


#: kind -> 3x3 rotation the game applies when it loads such a model
ROTATIONS: dict[str, np.ndarray] = {k: _compose(v) for k, v in _CALLS.items()}

#: model file stem (lower case) -> kind, for every .solid the game loads
KINDS: dict[str, str] = {
    **{n: "character" for n in ("body", "body2", "body3", "body4", "body5", "body6", "body7",
                                "bodylow", "rabbit", "wolf", "wolf2", "wolf3", "wolf4", "wolf5",
                                "wolf6", "wolf7", "wolflow", "belt")},
    **{n: "object" for n in ("box", "cool", "wall", "tunnel", "chimney", "spike", "weird",
                             "rock", "treetrunk", "leaves", "bush", "hawk")},
    "platform": "platform", "throwingknife": "knife", "sword": "blade", "staff": "blade",
    **{n: "plain" for n in ("eye", "cornea", "iris")},
}

#: kinds whose shipped models are stored clockwise-outward (Belt, a CCW character, aside)
CW_KINDS = ("character", "knife", "blade")


def kind_of_name(name: str | Path | None) -> str | None:
    """The kind of a model file name (``Models/TreeTrunk.solid``, ``lugaru__Wall``), or None."""
    if name is None:
        return None
    stem = Path(str(name)).stem.lower()
    stem = stem.rsplit("__", 1)[-1]          # corpus names carry a "game__" prefix
    return KINDS.get(stem)


def rotation_matrix(kind: str) -> np.ndarray:
    return ROTATIONS[kind]


def rotation_quat(kind: str) -> list[float]:
    """The kind's rotation as a glTF quaternion ``x, y, z, w`` (w >= 0)."""
    q = np.asarray(matrix_to_quat(ROTATIONS[kind]), np.float64)
    if q[3] < 0:
        q = -q
    return [float(v) for v in q]
