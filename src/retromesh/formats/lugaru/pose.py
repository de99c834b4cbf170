"""How Lugaru poses a character from joint positions (osslugaru/lugaru ``Skeleton.cpp``
``FindForwards``/``FindRotationMuscle``, ``Person.cpp`` ``DrawSkeleton``), vectorised over
frames and muscles.

* ``FindForwards``: ``forward`` is the normal of the triangle of ``forward_joints`` (joint
  indices), ``lowforward`` of ``low_forward_joints``; five "special forwards" (0 the forward;
  1/2 the right/left elbow away from the shoulder-wrist middle, 3/4 the right/left hip-ankle
  middle away from the knee, each plus 0.4 forward, normalised).
* ``FindRotationMuscle``: three angles in degrees per muscle from its joints ``p1``, ``p2``:
  ``rotate2 = asin((p1.y - p2.y) / |p1 - p2|)``; ``rotate1 = acos((p1.z - p2.z) / |flat|)``,
  ``360 - rotate1`` when ``p1.x > p2.x``; ``rotate3`` from the body part's forward turned by
  ``DoRotation(fwd, 0, rotate1 - 90, 0)`` then ``(0, 0, rotate2 - 90)``, flattened:
  ``acos(-fwd.z)``, ``360 - ...`` when ``fwd.x < 0``. The hands' forward is -X/+X in the
  HangOn animation; feet forwards get ``y -= 0.3``. Non-normal results (NaN, 0) become 0.
* Drawing: a vertex owned by muscle m is stored (``Skeleton::Load``) as
  ``Ry(r3) Rz(r2 - 90) Ry(r1 - 90) (v - mid)`` at the skeleton's rest angles and drawn as
  ``T(mid) Ry(90 - r1) Rz(90 - r2) Ry(-r3) (prop * local)``: the muscle's bone matrix is
  ``T(mid) R`` with a per-body-part ``prop`` scale (:func:`muscle_proportions`).
  ``DoAnimations`` rounds each angle down to 1/100 degree (``(int)(r * 100) % 36000 / 100``)
  and, between two frames, moves the joints and these angles linearly (``rotate3`` the short
  way round): :func:`between_frames`.
"""
from __future__ import annotations

import numpy as np

from ...arrays import distinct, isin
from ...transforms import matrix_to_quat
from .skeleton import BODYPARTS, SkeletonFile

__all__ = ["forwards", "muscle_angles", "muscle_rotations", "muscle_proportions",
           "label_index", "between_frames"]

_L = {name: i for i, name in enumerate(BODYPARTS)}
_DEG = 360.0 / 6.2831853


def _norm(v: np.ndarray) -> np.ndarray:
    d = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.where(d == 0, v, v / np.where(d == 0, 1, d))


def label_index(doc: SkeletonFile) -> np.ndarray:
    """``jointlabels``: the joint index of each body part (0 when no joint has the label)."""
    out = np.zeros(max(len(BODYPARTS), 1), np.int64)
    labels = np.asarray(doc.joints["label"], np.int64)
    for i, lab in enumerate(labels):
        if 0 <= lab < len(out):
            out[lab] = i
    return out


def forwards(pos: np.ndarray, doc: SkeletonFile) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(forward (F, 3), lowforward (F, 3), specialforward (F, 5, 3)) of joint positions (F, J, 3)."""
    fj = np.clip(np.asarray(doc.forward_joints, np.int64), 0, pos.shape[1] - 1)
    lj = np.clip(np.asarray(doc.low_forward_joints, np.int64), 0, pos.shape[1] - 1)
    fwd = _norm(np.cross(pos[:, fj[1]] - pos[:, fj[0]], pos[:, fj[2]] - pos[:, fj[0]]))
    low = _norm(np.cross(pos[:, lj[1]] - pos[:, lj[0]], pos[:, lj[2]] - pos[:, lj[0]]))
    li = label_index(doc)

    def at(name: str) -> np.ndarray:
        return pos[:, li[_L[name]]]
    sp = np.empty((pos.shape[0], 5, 3))
    sp[:, 0] = fwd
    sp[:, 1] = _norm(at("rightelbow") - (at("rightshoulder") + at("rightwrist")) / 2 + fwd * .4)
    sp[:, 2] = _norm(at("leftelbow") - (at("leftshoulder") + at("leftwrist")) / 2 + fwd * .4)
    sp[:, 3] = _norm((at("righthip") + at("rightankle")) / 2 - at("rightknee") + low * .4)
    sp[:, 4] = _norm((at("lefthip") + at("leftankle")) / 2 - at("leftknee") + low * .4)
    return fwd, low, sp


def _which_forward(doc: SkeletonFile) -> np.ndarray:
    """Per muscle: 0..4 a special forward, 5 the lowforward, 6 the forward (by parent1's label)."""
    labels = np.asarray(doc.joints["label"], np.int64)
    lower = np.asarray(doc.joints["lower"]) != 0
    groups = {0: ("head",), 1: ("rightshoulder", "rightelbow", "rightwrist", "righthand"),
              2: ("leftshoulder", "leftelbow", "leftwrist", "lefthand"),
              3: ("righthip", "rightknee", "rightankle", "rightfoot"),
              4: ("lefthip", "leftknee", "leftankle", "leftfoot")}
    out = []
    for p1 in np.asarray(doc.muscles["parent1"], np.int64):
        lab = labels[p1]
        pick = next((g for g, names in groups.items() if lab in [_L[n] for n in names]), None)
        out.append(pick if pick is not None else (5 if lower[p1] else 6))
    return np.asarray(out, np.int64)


def _rot_y(deg: np.ndarray) -> np.ndarray:
    a = np.radians(deg)
    c, s = np.cos(a), np.sin(a)
    m = np.zeros(a.shape + (3, 3))
    m[..., 0, 0], m[..., 0, 2], m[..., 1, 1], m[..., 2, 0], m[..., 2, 2] = c, s, 1, -s, c
    return m


def _rot_z(deg: np.ndarray) -> np.ndarray:
    a = np.radians(deg)
    c, s = np.cos(a), np.sin(a)
    m = np.zeros(a.shape + (3, 3))
    m[..., 0, 0], m[..., 0, 1], m[..., 1, 0], m[..., 1, 1], m[..., 2, 2] = c, -s, s, c, 1
    return m


def _normal_or_zero(x: np.ndarray) -> np.ndarray:
    ok = np.isfinite(x) & (np.abs(x) >= np.finfo(np.float32).tiny)
    return np.where(ok, x, 0.0)


def muscle_angles(pos: np.ndarray, doc: SkeletonFile, hang: bool = False,
                  rounded: bool = False) -> np.ndarray:
    """``(F, M, 3)`` rotate1, rotate2, rotate3 (degrees) of every muscle at joint positions
    ``pos`` (F, J, 3). ``hang``: the HangOn animation's hand forwards; ``rounded``: as
    ``DoAnimations`` keeps them (1/100 degree, modulo 360)."""
    pos = np.asarray(pos, np.float64)
    m = doc.muscles
    i1 = np.clip(np.asarray(m["parent1"], np.int64), 0, pos.shape[1] - 1)
    i2 = np.clip(np.asarray(m["parent2"], np.int64), 0, pos.shape[1] - 1)
    p1, p2 = pos[:, i1], pos[:, i2]
    d = p1 - p2
    with np.errstate(invalid="ignore", divide="ignore"):
        dist = np.linalg.norm(d, axis=-1)
        r2 = np.where(d[..., 1] > dist, np.pi / 2, np.arcsin(d[..., 1] / dist)) * _DEG
        flat = np.hypot(d[..., 0], d[..., 2])
        r1 = np.where(d[..., 2] > flat, 0.0, np.arccos(d[..., 2] / flat)) * _DEG
        r1 = np.where(p1[..., 0] > p2[..., 0], 360 - r1, r1)
        r1, r2 = _normal_or_zero(r1), _normal_or_zero(r2)
        fwd, low, sp = forwards(pos, doc)
        table = np.concatenate([sp, low[:, None], fwd[:, None]], axis=1)     # (F, 7, 3)
        f = table[:, _which_forward(doc)].copy()                             # (F, M, 3)
        labels = np.asarray(doc.joints["label"], np.int64)
        l1, l2 = labels[i1], labels[i2]
        if hang:
            for name, x in (("righthand", -1.0), ("lefthand", 1.0)):
                sel = (l1 == _L[name]) | (l2 == _L[name])
                f[:, sel] = (x, 0.0, 0.0)
        for name in ("rightfoot", "leftfoot"):
            sel = (l1 == _L[name]) | (l2 == _L[name])
            f[:, sel, 1] -= .3
        f = np.einsum("fmij,fmj->fmi", _rot_y(r1 - 90), f)
        f = np.einsum("fmij,fmj->fmi", _rot_z(r2 - 90), f)
        f[..., 1] = 0
        f = f / np.linalg.norm(f, axis=-1, keepdims=True)
        inside = (f[..., 2] <= 1) & (f[..., 2] >= -1)
        r3 = np.where(inside, np.arccos(np.where(inside, -f[..., 2], 0)), np.pi) * _DEG
        r3 = _normal_or_zero(np.where(f[..., 0] < 0, 360 - r3, r3))
    out = np.stack([r1, r2, r3], axis=-1)
    if rounded:
        out = np.fmod(np.trunc(out * 100), 36000) / 100
    return out


#: seconds: in-between samples nearer a frame than this are not made (see between_frames)
SAMPLE_GAP = 2e-3


def between_frames(times: np.ndarray, pos: np.ndarray, angles: np.ndarray,
                   fps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The engine's pose between frames, sampled at ``fps`` (the frame times always included):
    ``DoAnimations`` moves joints linearly from frame k to k+1 and the muscle angles too
    (``rotate3`` taken the short way round, ``rotate1``/``rotate2`` as they are).
    Returns (times (S,), joint positions (S, J, 3), angles (S, M, 3))."""
    f = len(times)
    if f < 2 or fps <= 0:
        return times, pos, angles
    grid = np.arange(0.0, float(times[-1]), 1.0 / fps)
    # a sample this close to a frame is left out: Blender's importer merges keys less than
    # 0.01 of its frames apart (0.4 ms at 24 fps) into one, at the frame's time with the
    # sample's value, and the frame's pose would come back off
    ft = np.asarray(times, np.float64)
    j = np.clip(np.searchsorted(ft, grid), 1, f - 1)
    near = np.minimum(np.abs(ft[j] - grid), np.abs(grid - ft[j - 1])) < SAMPLE_GAP
    t = distinct(np.concatenate([times, grid[~near]]))
    k = np.clip(np.searchsorted(times, t, side="right") - 1, 0, f - 2)
    u = np.clip((t - times[k]) / (times[k + 1] - times[k]), 0.0, 1.0)
    new = angles[1:].copy()
    r3 = new[..., 2]
    old3 = angles[:-1, :, 2]
    r3 -= 360 * (r3 > old3 + 180)
    r3 += 360 * (r3 < old3 - 180)
    uu = u[:, None, None]
    ang = angles[:-1][k] * (1 - uu) + new[k] * uu
    p = pos[:-1][k] * (1 - uu) + pos[1:][k] * uu
    return t, p, ang


def muscle_rotations(angles: np.ndarray) -> np.ndarray:
    """``(..., 3, 3)`` drawing rotations ``Ry(90 - r1) Rz(90 - r2) Ry(-r3)``."""
    r1, r2, r3 = angles[..., 0], angles[..., 1], angles[..., 2]
    return _rot_y(90 - r1) @ _rot_z(90 - r2) @ _rot_y(-r3)


def rotations_as_quats(rot: np.ndarray) -> np.ndarray:
    """glTF quaternions (x, y, z, w) of ``(..., 3, 3)`` rotations, continuous along axis 0."""
    q = np.asarray(matrix_to_quat(rot), np.float64)
    if q.ndim == 3:                    # (F, M, 4): no sign flips between frames
        for k in range(1, len(q)):     # (frames, not vertices)
            flip = np.einsum("mi,mi->m", q[k], q[k - 1]) < 0
            q[k, flip] *= -1
    return q


#: ``PersonType`` proportions (head, body, arms, legs) as (x, y, z) scales
PROPORTIONS = {
    "rabbit": ((1.2,) * 3, (1.05,) * 3, (1.0,) * 3, (1.1, 1.05, 1.1)),
    "wolf": ((1.1,) * 3, (1.1,) * 3, (1.1,) * 3, (1.1,) * 3),
    "none": ((1.0,) * 3,) * 4,
}


def muscle_proportions(doc: SkeletonFile, creature: str) -> np.ndarray:
    """``(M, 3)`` scale of each muscle's vertices in ``DrawSkeleton``: the sum of the
    proportions whose test the muscle's joints pass (abdomen: body; elbow, wrist, hand:
    arms; knee, ankle, foot: legs; head: head). A muscle passing none would collapse its
    vertices to its middle; it gets 1 instead."""
    prop = np.asarray(PROPORTIONS.get(creature, PROPORTIONS["none"]), np.float64)
    labels = np.asarray(doc.joints["label"], np.int64)
    n = len(labels)
    p1 = labels[np.clip(np.asarray(doc.muscles["parent1"], np.int64), 0, max(n - 1, 0))]
    p2 = labels[np.clip(np.asarray(doc.muscles["parent2"], np.int64), 0, max(n - 1, 0))]
    L = _L

    def among(x: np.ndarray, *names: str) -> np.ndarray:
        return isin(x, [L[k] for k in names])
    tests = [
        among(p1, "head") | among(p2, "head"),
        among(p1, "abdomen") | among(p2, "abdomen"),
        among(p1, "lefthand", "righthand", "leftwrist", "rightwrist", "leftelbow", "rightelbow")
        | among(p2, "leftelbow", "rightelbow"),
        among(p1, "leftfoot", "rightfoot", "leftankle", "rightankle", "leftknee", "rightknee")
        | among(p2, "leftknee", "rightknee"),
    ]
    out = sum(t[:, None] * prop[k] for k, t in enumerate(tests))
    out = np.asarray(out, np.float64).reshape(len(p1), 3)
    out[np.all(out == 0, axis=1)] = 1.0
    return out
