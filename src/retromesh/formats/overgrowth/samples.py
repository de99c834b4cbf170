"""Small valid Overgrowth files built with our own writers (no game data).

``stick_skeleton()`` is a symmetric 6-bone figure (torso, head, two arms, two legs);
``stick_obj()`` a mesh of one box per bone whose corner weights are in the skeleton;
``wave_animation()``/``walk_animation()`` two short animations. ``phxbn_fixture(version)`` and
``anm_fixture(version, ...)`` give a document of any version with every conditional branch
switched on or off; ``fzx_sample()``, ``sav_sample()`` the rest of the family.
``write_example(folder)`` writes them all (used by the lead's examples script).

``documents()`` gives a small complete native document per format of the family (the
character XML's folder of files: :mod:`.ogxml_samples`): the samples API of every family.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ...transforms import compose_trs
from .anm import WEAPON7_DTYPE, WEAPON8_DTYPE, AnmEvent, AnmFile, AnmIkBone, AnmKeyframe, AnmLabelWeight
from .bones import bone_frames, pack_mats
from .fzx import FzxFile, FzxObject
from .obj import write_obj
from .phxbn import PhxbnFile, PhxControl, PhxJoint, PhxSimpleIk
from .sav import SavArray, SavFile, SavInt, SavLegacyLevel, SavLevel, SavPair

__all__ = ["stick_skeleton", "stick_obj", "wave_animation", "walk_animation", "phxbn_fixture",
           "anm_fixture", "fzx_sample", "sav_sample", "write_example", "documents",
           "WITHOUT_SAMPLE", "box_mesh", "centred_points", "corner_weights"]

#: formats of the family without a sample document, and why
WITHOUT_SAMPLE: dict[str, str] = {}

_RAW_POINTS = np.array([
    [0.0, 0.0, 0.0],      # 0 pelvis
    [0.0, 0.5, 0.0],      # 1 neck
    [0.0, 0.75, 0.0],     # 2 head top
    [0.3, 0.45, 0.0],     # 3 left hand
    [-0.3, 0.45, 0.0],    # 4 right hand
    [0.1, -0.5, 0.05],    # 5 left foot
    [-0.1, -0.5, 0.05],   # 6 right foot
])
BONE_ENDS = np.array([[0, 1], [1, 2], [1, 3], [1, 4], [0, 5], [0, 6]])
PARENTS = np.array([-1, 0, 0, 0, 0, 0])
OBJ_OFFSET = np.array([0.0, 1.0, 0.25])      # where the OBJ sits before the engine centres it
_BOX = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64)
# 12 triangles of a cube, CCW seen from outside (index = 4x + 2y + z bits)
_BOX_TRIS = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])


def box_mesh(points: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(positions (48, 3), triangles (72, 3), bone of each triangle) in skeleton space."""
    bind = bone_frames(points[BONE_ENDS[:, 0]], points[BONE_ENDS[:, 1]])
    pos, tris, owner = [], [], []
    for i, b in enumerate(bind):
        half = np.linalg.norm(points[BONE_ENDS[i, 1]] - points[BONE_ENDS[i, 0]]) / 2
        local = _BOX * np.array([0.05, 0.05, half])
        pos.append((np.c_[local, np.ones(8)] @ b.T)[:, :3])
        tris.append(_BOX_TRIS + 8 * i)
        owner.append(np.full(12, i))
    return np.concatenate(pos), np.concatenate(tris), np.concatenate(owner)


def centred_points() -> np.ndarray:
    """Skeleton points shifted so that the mesh's bounding box is centred on the origin (the
    space the engine's ``_MDL_CENTER`` puts the OBJ in)."""
    pos, _, _ = box_mesh(_RAW_POINTS)
    c = (pos.min(0) + pos.max(0)) / 2
    c[0] = 0.0
    return _RAW_POINTS - c


def corner_weights(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    _, tris, owner = box_mesh(points)
    n = len(tris) * 3
    weights = np.zeros((n, 4), "<f4")
    ids = np.zeros((n, 4), "<f4")
    bone = np.repeat(owner, 3)
    weights[:, 0] = 0.75
    weights[:, 1] = 0.25
    ids[:, 0] = bone
    ids[:, 1] = PARENTS[bone].clip(0)
    # the torso's own corners: all on the torso; the first box gets weights below 0.99 so that
    # the engine's closest-bone rule is exercised
    torso = bone == 0
    weights[torso, 0], weights[torso, 1] = 1.0, 0.0
    weights[:12, 0] = 0.5
    return weights, ids


def _f(x: float) -> float:
    return float(np.float32(x))


def _t(*xs: float) -> tuple:
    return tuple(_f(x) for x in xs)


def stick_skeleton(version: int = 11) -> PhxbnFile:
    return phxbn_fixture(version)


def stick_obj() -> bytes:
    pts = centred_points()
    pos, tris, _ = box_mesh(pts)
    uv = np.c_[(pos[:, 0] - pos[:, 0].min()) / max(np.ptp(pos[:, 0]), 1e-9),
               (pos[:, 1] - pos[:, 1].min()) / max(np.ptp(pos[:, 1]), 1e-9)]
    return write_obj(pos + OBJ_OFFSET, tris, uv, tris, name="stick")


def phxbn_fixture(version: int = 11, rigging_stage: int = 1, joints: bool = True,
                  simple_ik: bool = True) -> PhxbnFile:
    pts = centred_points()
    m = len(BONE_ENDS)
    doc = PhxbnFile(version=version, rigging_stage=rigging_stage,
                    points=pts.astype("<f4"), bone_ends=BONE_ENDS.astype("<i4"))
    if version >= 8:
        doc.point_parents = np.array([-1, 0, 1, 1, 1, 0, 0], "<i4")
        doc.bone_parents = PARENTS.astype("<i4")
    if version >= 6:
        doc.bone_masses = np.linspace(1.0, 2.0, m).astype("<f4")
    if version >= 7:
        doc.bone_com = ((pts[BONE_ENDS[:, 0]] + pts[BONE_ENDS[:, 1]]) / 2).astype("<f4")
    if version >= 9:
        doc.bone_mats = pack_mats(bone_frames(pts[BONE_ENDS[:, 0]], pts[BONE_ENDS[:, 1]]))
    if rigging_stage in (1, 2):
        w, ids = corner_weights(pts)
        js = []
        if joints:
            js = [PhxJoint(0, (-1.5, 0.25), (0, 1), (1.0, 0.0, 0.0)),
                  PhxJoint(1, (-0.5, 0.5, -0.25, 0.25, -0.125, 0.125), (0, 2)),
                  PhxJoint(1, (-0.5, 0.5, -0.25, 0.25, -0.125, 0.125), (0, 3)),
                  PhxJoint(2, (), (0, 4)), PhxJoint(2, (), (0, 5))]
        doc.control = PhxControl(w, ids, PARENTS.astype("<i4"), js,
                                 len(w) if version >= 11 else None)
    if version >= 10:
        doc.simple_ik = [PhxSimpleIk(2, 1, b"leftarm"), PhxSimpleIk(3, 1, b"rightarm"),
                         PhxSimpleIk(4, 1, b"left_leg"), PhxSimpleIk(5, 1, b"right_leg"),
                         PhxSimpleIk(1, 2, b"head")] if simple_ik else []
    return doc


def _pose(angles: np.ndarray) -> np.ndarray:
    """Model-space bone frames for per-bone rotation angles (about each bone's local X)."""
    pts = centred_points()
    bind = bone_frames(pts[BONE_ENDS[:, 0]], pts[BONE_ENDS[:, 1]])
    m = len(bind)
    world = np.empty_like(bind)
    for i in range(m):
        p = PARENTS[i]
        local = bind[i] if p < 0 else np.linalg.inv(bind[p]) @ bind[i]
        # rotate around the bone's start (its joint), about the local X axis
        half = np.linalg.norm(pts[BONE_ENDS[i, 1]] - pts[BONE_ENDS[i, 0]]) / 2
        a = angles[i]
        rot = compose_trs([0, 0, 0], [np.sin(a / 2), 0, 0, np.cos(a / 2)], [1, 1, 1])
        to_start = compose_trs([0, 0, -half], [0, 0, 0, 1], [1, 1, 1])
        pivot = to_start @ rot @ np.linalg.inv(to_start)
        local = local @ pivot
        world[i] = local if p < 0 else world[p] @ local
    return world


def anm_fixture(version: int = 11, *, centered: bool = True, mobility: bool = True,
                weapons: bool = True, events: bool = True, ik_bones: bool = True,
                shape_keys: bool = True, status_keys: bool = True, looping: bool = True,
                keys: int = 4, length: int = 1000, swing: float = 0.6, start: int = 0) -> AnmFile:
    m = len(BONE_ENDS)
    doc = AnmFile(version=version, centered=None, looping=None, start=None, length=length + start)
    is_centered = centered and version >= 10
    if version >= 10:
        doc.centered = 1 if centered else 0
    if version >= 1:
        doc.looping = 1 if looping else 0
    if 1 <= version <= 10:
        doc.start = start
    else:
        doc.length = length
    st = doc.start_ms
    for k in range(keys):
        phase = 2 * np.pi * k / keys
        angles = np.array([0.1 * np.sin(phase), 0.2 * np.cos(phase), swing * np.sin(phase),
                           -swing * np.sin(phase), -swing * np.sin(phase), swing * np.sin(phase)])
        kf = AnmKeyframe(time=st + k * length // keys, bone_mats=pack_mats(_pose(angles)))
        if version >= 4:
            kf.weights = np.full(m, 1.0 - 0.1 * k, "<f4")
        if version >= 7:
            dt = WEAPON8_DTYPE if version >= 8 else WEAPON7_DTYPE
            kf.weapon_mats = np.zeros(1 if weapons else 0, dt)
            if weapons:
                kf.weapon_mats["matrix"][0] = pack_mats(np.eye(4))
                if version >= 8:
                    kf.weapon_mats["relative_id"][0] = 2
                    kf.weapon_mats["relative_weight"][0] = 0.5
        if version >= 9:
            kf.use_mobility = 1 if (mobility and k % 2 == 0) else 0
            if kf.use_mobility:
                mob = np.eye(4)
                mob[:3, 3] = (0.0, 0.0, 0.1 * k)
                kf.mobility = pack_mats(mob)
        if version >= 2:
            kf.events = [AnmEvent(4, b"leftstep"), AnmEvent(-1, b"sound \xe9t\xe9")] \
                if events and k == 1 else []
        if version >= 3:
            kf.ik_bones = [AnmIkBone((0.0,) * 6, np.array([4, 0], "<i4"), b"left_leg")] \
                if ik_bones else []
        if version >= 5:
            kf.shape_keys = [AnmLabelWeight(0.5 * k, b"blink")] if shape_keys else []
        if version >= 6:
            kf.status_keys = [AnmLabelWeight(1.0, b"running")] if status_keys else []
        if is_centered:
            kf.rotation = _f(0.1 * k)
            kf.center_offset = (0.0, 0.0, 0.25 * k)
        doc.keyframes.append(kf)
    return doc


def wave_animation() -> AnmFile:
    return anm_fixture(11, centered=False, mobility=False, weapons=False, ik_bones=False,
                       shape_keys=False, status_keys=False, swing=1.0)


def walk_animation() -> AnmFile:
    return anm_fixture(11, centered=True, mobility=False, weapons=False, shape_keys=False,
                       status_keys=False, keys=6, length=1200)


def fzx_sample() -> FzxFile:
    return FzxFile(1, [
        FzxObject(b"Head Sphere", (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.75), (0.125, 0.125, 0.125)),
        FzxObject(b"Chest Box", _t(0.9659258, 0.2588190, 0.0, 0.0), (0.0, 0.0, 0.25),
                  (0.15625, 0.125, 0.25)),
        FzxObject(b"L Upperarm Capsule M", _t(0.7071068, 0.0, 0.7071068, 0.0), (0.25, 0.0625, 0.5),
                  (0.046875, 0.046875, 0.125)),
    ])


def sav_sample(version: int = 3) -> SavFile:
    if version < 3:
        return SavFile(version, [SavLegacyLevel(b"Levels/intro.xml", bytes(range(16)),
                                                [SavPair(b"progress", b"3")])])
    return SavFile(3, [SavLevel(b"com-wolfire-overgrowth-campaign", b"linear_campaign",
                                b"Levels/intro.xml", bytes(range(16)),
                                [SavPair(b"progress", b"3"), SavPair(b"name", b"caf\xe9")],
                                [SavArray(b"unlocked", [b"a", b"b"])],
                                [SavInt(b"deaths", -2)])])


def documents() -> dict[str, Any]:
    """Format name -> a small complete native document (``"name:variant"`` for more layouts of
    one format)."""
    from ... import read
    from .ogxml_texts import CHARACTER_XML
    return {"phxbn": phxbn_fixture(), "phxbn:v5": phxbn_fixture(5), "anm": anm_fixture(),
            "anm:v1": anm_fixture(1), "fzx": fzx_sample(), "sav": sav_sample(),
            "sav:v2": sav_sample(2), "obj": read(stick_obj(), format="obj"),
            "overgrowth-xml": read(CHARACTER_XML.encode(), format="overgrowth-xml")}


def write_example(folder: str | Path) -> list[Path]:
    """Write stick.phxbn, stick.obj, wave.anm, walk.anm, stick.fzx, example.sav."""
    from .anm import write as write_anm
    from .fzx import write as write_fzx
    from .phxbn import write as write_phxbn
    from .sav import write as write_sav
    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    files = {"stick.phxbn": write_phxbn(stick_skeleton()), "stick.obj": stick_obj(),
             "wave.anm": write_anm(wave_animation()), "walk.anm": write_anm(walk_animation()),
             "stick.fzx": write_fzx(fzx_sample()), "example.sav": write_sav(sav_sample())}
    out = []
    for name, data in files.items():
        (d / name).write_bytes(data)
        out.append(d / name)
    return out
