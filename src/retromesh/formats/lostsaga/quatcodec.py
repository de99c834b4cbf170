"""The packed quaternions of Lost Saga animations (``QuaternionCompression.cpp``).

Both codecs work on whole tracks (numpy arrays) and in float32 like the engine.

COMP4 ("smallest three", version 4001), one uint32:

=========  ==========================================================================
bits       meaning
=========  ==========================================================================
31..30     index k (x=0, y=1, z=2, w=3) of the omitted, largest-magnitude component
29..20     first kept component (x, y, z, w order, skipping k)
19..10     second kept component
9..0       third kept component
=========  ==========================================================================

Kept components decode as ``c = 2 * (u / 1023) - 1`` (range -1..1, not +-1/sqrt 2); the omitted one
is ``sqrt(1 - (a^2 + b^2 + c^2))``. The engine does not clamp the radicand; quantisation can push it
slightly below 0 and the engine then gets NaN. We clamp it at 0 (documented deviation).
Encoder (engine ``CompSmallThree``): normalise, pick the largest ``|c|`` (first wins ties), negate
the quaternion when that component is negative, ``u = clamp(int(((c + 1) * 0.5) * 1023), 0, 1023)``
(truncation toward zero).

COMP8 (version 4002), two uint32 ``high, low``: ``x = 2 * (high >> 16) / 65535 - 1``,
``y = 2 * (high & 0xFFFF) / 65535 - 1``, ``z = 2 * (low >> 16) / 65535 - 1``,
``w = (low & 0xFFFF) / 65535`` (w is 0..1: the encoder negates q when w < 0). No renormalisation on
decode. Encoder: normalise, negate if w < 0, ``u = clamp(int(((c + 1) * 0.5) * 65535), 0, 65535)`` for
x, y, z and ``int(w * 65535)`` for w.

Truncation plus renormalisation means that decoding and re-encoding with the engine's encoder can
move a component by one step (COMP8 decodes to a slightly non-unit quaternion, and truncation
turns ``u - epsilon`` into ``u - 1``). ``rounding="engine"`` (default) reproduces the engine bit for
bit; ``rounding="nearest"`` is the stable variant: nearest step, no renormalisation of near-unit
input, so ``encode(decode(p)) == p`` (except where COMP4's largest component ties).
"""
from __future__ import annotations

import numpy as np

__all__ = ["decode_comp4", "encode_comp4", "decode_comp8", "encode_comp8", "normalize32"]

_F = np.float32


def normalize32(q) -> np.ndarray:
    """D3DXQuaternionNormalize in float32 (a zero quaternion stays zero... as identity)."""
    q = np.asarray(q, dtype=np.float32).reshape(-1, 4)
    n = np.sqrt(np.einsum("ij,ij->i", q, q, dtype=np.float32)).astype(np.float32)
    bad = ~(n > 0) | ~np.isfinite(n)
    out = q / np.where(bad, _F(1), n)[:, None]
    out[bad] = (0, 0, 0, 1)
    return out.astype(np.float32)


def decode_comp4(packed) -> np.ndarray:
    """uint32 array (n,) -> float32 quaternions (n, 4) x, y, z, w."""
    p = np.asarray(packed, dtype=np.uint32).reshape(-1)
    k = (p >> np.uint32(30)).astype(np.intp)
    vals = np.empty((len(p), 3), dtype=np.float32)
    for i in range(3):
        shift = np.uint32(10 * (2 - i))
        u = ((p >> shift) & np.uint32(0x3FF)).astype(np.float32)
        vals[:, i] = _F(2) * (u / _F(1023)) - _F(1)
    sq = np.einsum("ij,ij->i", vals, vals, dtype=np.float32).astype(np.float32)
    extra = np.sqrt(np.maximum(_F(1) - sq, _F(0))).astype(np.float32)
    out = np.empty((len(p), 4), dtype=np.float32)
    # column j takes the kept values in order, skipping k
    slot = np.arange(4)[None, :] - (np.arange(4)[None, :] > k[:, None])
    slot = np.clip(slot, 0, 2)
    out[:] = np.take_along_axis(vals, slot, axis=1)
    out[np.arange(len(p)), k] = extra
    return out


def _prepare(q, rounding: str) -> np.ndarray:
    if rounding not in ("engine", "nearest"):
        raise ValueError(f"rounding must be 'engine' or 'nearest', got {rounding!r}")
    if rounding == "engine":
        return normalize32(q)
    q = np.asarray(q, dtype=np.float64).reshape(-1, 4)
    n = np.linalg.norm(q, axis=1)
    far = ~(np.abs(n - 1.0) <= 1e-3)            # keep decoded values exactly where they are
    if np.any(far):
        q = q.copy()
        q[far] = normalize32(q[far])
    return q


def _quantise(scaled: np.ndarray, top: int, rounding: str) -> np.ndarray:
    scaled = np.nan_to_num(scaled)
    u = np.trunc(scaled) if rounding == "engine" else np.floor(scaled + 0.5)
    return np.clip(u, 0, top).astype(np.uint32)


def encode_comp4(q, *, rounding: str = "engine") -> np.ndarray:
    """float quaternions (n, 4) -> uint32 (n,).

    ``rounding="engine"`` is the engine's encoder bit for bit (float32, truncation);
    ``"nearest"`` rounds to the nearest step and does not renormalise near-unit input, so that
    ``encode_comp4(decode_comp4(p), rounding="nearest") == p``.
    """
    q = _prepare(q, rounding)
    k = np.argmax(np.abs(q), axis=1)                     # first maximum wins, like the engine
    neg = q[np.arange(len(q)), k] < 0
    q = np.where(neg[:, None], -q, q)
    out = (k.astype(np.uint32) << np.uint32(30))
    kept = np.ones((len(q), 4), dtype=bool)
    kept[np.arange(len(q)), k] = False
    vals = q[kept].reshape(-1, 3)
    if rounding == "engine":
        scaled = ((vals + _F(1)) * _F(0.5)) * _F(1023)
    else:
        scaled = (vals + 1.0) * 0.5 * 1023.0
    u = _quantise(scaled, 1023, rounding)
    for i in range(3):
        out |= u[:, i] << np.uint32(10 * (2 - i))
    return out.astype(np.uint32)


def decode_comp8(high, low) -> np.ndarray:
    """uint32 arrays (n,), (n,) -> float32 quaternions (n, 4)."""
    h = np.asarray(high, dtype=np.uint32).reshape(-1)
    lo = np.asarray(low, dtype=np.uint32).reshape(-1)
    inv = _F(1.0) / _F(65535.0)
    out = np.empty((len(h), 4), dtype=np.float32)
    out[:, 0] = ((h >> np.uint32(16)).astype(np.float32) * inv) * _F(2) - _F(1)
    out[:, 1] = ((h & np.uint32(0xFFFF)).astype(np.float32) * inv) * _F(2) - _F(1)
    out[:, 2] = ((lo >> np.uint32(16)).astype(np.float32) * inv) * _F(2) - _F(1)
    out[:, 3] = (lo & np.uint32(0xFFFF)).astype(np.float32) * inv
    return out


def encode_comp8(q, *, rounding: str = "engine") -> tuple[np.ndarray, np.ndarray]:
    """float quaternions (n, 4) -> (high, low) uint32 arrays (``rounding`` as for COMP4)."""
    q = _prepare(q, rounding)
    q = np.where((q[:, 3] < 0)[:, None], -q, q)
    if rounding == "engine":
        xyz = ((q[:, :3] + _F(1)) * _F(0.5)) * _F(65535)
        w = q[:, 3] * _F(65535)
    else:
        xyz = (q[:, :3] + 1.0) * 0.5 * 65535.0
        w = q[:, 3] * 65535.0
    u = _quantise(xyz, 65535, rounding)
    uw = _quantise(w, 65535, rounding)
    high = (u[:, 0] << np.uint32(16)) | u[:, 1]
    low = (u[:, 2] << np.uint32(16)) | uw
    return high.astype(np.uint32), low.astype(np.uint32)
