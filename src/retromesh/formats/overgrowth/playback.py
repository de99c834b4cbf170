"""Overgrowth ``.anm`` playback as the engine's ``GetMatrices`` does it (engine facts in
:mod:`.scene`): four keys, Catmull-Rom weights, ``BlendFourBones`` rotation blending and the
linear root motion of centred files."""
from __future__ import annotations

import numpy as np

from ...errors import DocumentError
from ...transforms import decompose_trs
from .anm import AnmFile, AnmKeyframe
from .bones import catmull_rom_weights, unpack_mats

__all__ = ["sorted_keys", "sample_animation"]


def sorted_keys(anm: AnmFile) -> tuple[list[AnmKeyframe], np.ndarray, float]:
    start = anm.start_ms
    kfs = sorted(anm.keyframes, key=lambda k: k.time)
    times = np.array([k.time - start for k in kfs], dtype=np.float64)
    length = float(anm.length - start)
    return kfs, times, length


def sample_animation(anm: AnmFile, parents: np.ndarray, n_bones: int, sample_ms: np.ndarray):
    """Engine playback at ``sample_ms``: (translations (S, m, 3), rotations (S, m, 4),
    root (S, 3) centre offsets, (S,) rotations or None)."""
    kfs, times, length = sorted_keys(anm)
    n = len(kfs)
    mats = np.zeros((n, n_bones, 4, 4))
    mats[:] = np.eye(4)
    for k, kf in enumerate(kfs):
        a = np.asarray(kf.bone_mats, dtype=np.float64).reshape(-1, 16)[:n_bones]
        mats[k, :len(a)] = unpack_mats(a)
    if not np.all(np.isfinite(mats)):
        raise DocumentError("animation matrices must be finite")
    local = mats.copy()
    has_p = parents >= 0
    if np.any(has_p):
        pi = np.where(has_p, parents, 0)
        local[:, has_p] = np.linalg.inv(mats[:, pi[has_p]]) @ mats[:, has_p]
    t, r, _ = decompose_trs(local)
    s = np.asarray(sample_ms, dtype=np.float64)
    fid = np.searchsorted(times, s, side="right") - 1
    if anm.is_looping:
        idx = np.stack([(fid + n + j - 1) % n for j in range(4)], 1)
    else:
        idx = np.stack([np.clip(fid + j - 1, 0, n - 1) for j in range(4)], 1)
    ft = times[idx[:, 1]].copy()
    nt = times[idx[:, 2]].copy()
    ft = np.where(ft > s, ft - length, ft)
    nt = np.where(nt < s, nt + length, nt)
    den = nt - ft
    with np.errstate(divide="ignore", invalid="ignore"):
        interp = np.where((idx[:, 1] != idx[:, 2]) & (den != 0), (s - ft) / np.where(den != 0, den, 1), 0.0)
    interp = np.clip(np.nan_to_num(interp), 0.0, 1.0)
    w = catmull_rom_weights(interp)                              # (S, 4)
    T = np.einsum("sj,sjmc->smc", w, t[idx])
    R = _blend_four_rotations(r[idx], w)
    if anm.is_centered:
        rot = np.array([k.rotation for k in kfs], dtype=np.float64)
        off = np.array([k.center_offset for k in kfs], dtype=np.float64)
        if not (np.all(np.isfinite(rot)) and np.all(np.isfinite(off))):
            raise DocumentError("root motion values must be finite")
        ka, kb = idx[:, 1], idx[:, 2]
        root_t = off[ka] * (1 - interp[:, None]) + off[kb] * interp[:, None]
        root_r = rot[ka] * (1 - interp) + rot[kb] * interp
        return T, R, root_t, root_r
    return T, R, None, None


def _blend_four_rotations(q: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The engine's ``BlendFourBones`` on rotations: successive slerps with the running
    weight ratios. ``q`` is (S, 4, m, 4) (sample, key, bone, xyzw) unit quaternions (from
    ``decompose_trs``), ``w`` (S, 4)."""
    total = w[:, 0] + w[:, 1]
    ratio = np.where(total > 0, w[:, 1] / np.where(total > 0, total, 1.0), 0.0)
    x = _slerp_unit(q[:, 0], q[:, 1], ratio)
    x[total <= 0] = (0.0, 0.0, 0.0, 1.0)
    for j in (2, 3):
        total = total + w[:, j]
        ratio = np.where(total > 0, w[:, j] / np.where(total > 0, total, 1.0), 0.0)
        x = np.where((total > 0)[:, None, None], _slerp_unit(x, q[:, j], ratio), x)
    return x


def _slerp_unit(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``transforms.quat_slerp`` for unit quaternions ``(S, m, 4)`` and one ``t`` per sample
    ``(S,)``, with the per-bone scalars computed once (not per component): the sampling of
    long animations is bounded by ``scene.LIMITS``, and this is most of its cost."""
    d = np.einsum("smc,smc->sm", a, b)
    sign = np.where(d < 0, -1.0, 1.0)
    d = np.minimum(np.abs(d), 1.0)
    theta = np.arccos(d)
    sin = np.sin(theta)
    small = sin < 1e-6
    safe = np.where(small, 1.0, sin)
    t = t[:, None]
    wa = np.where(small, 1.0 - t, np.sin((1.0 - t) * theta) / safe)
    wb = np.where(small, t, np.sin(t * theta) / safe) * sign
    out = wa[..., None] * a + wb[..., None] * b
    # |out| is 1 up to rounding (unit inputs, b on a's side): no zero to guard against
    out /= np.sqrt(np.einsum("smc,smc->sm", out, out))[..., None]
    return out
