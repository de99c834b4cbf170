"""COMP4 / COMP8 quaternion packings against values computed by hand from the engine's formulas
(QuaternionCompression.cpp), the NaN-avoiding clamp, and the stable ("nearest") variant."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from retromesh.formats.lostsaga.quatcodec import decode_comp4, decode_comp8, encode_comp4, encode_comp8

IDENTITY = [0.0, 0.0, 0.0, 1.0]


def test_comp4_identity_by_hand():
    # k = 3 (w largest); x, y, z = 0 -> int((0 + 1) * 0.5 * 1023) = int(511.5) = 511
    packed = (3 << 30) | (511 << 20) | (511 << 10) | 511
    assert int(encode_comp4([IDENTITY])[0]) == packed == 0xDFF7FDFF
    q = decode_comp4([packed])[0]
    c = 2.0 * (511 / 1023) - 1.0            # = -1/1023
    assert q[:3] == pytest.approx([c, c, c], abs=1e-7)
    assert q[3] == pytest.approx(np.sqrt(1 - 3 * c * c), abs=1e-7)


def test_comp4_first_largest_wins_and_sign_flip():
    # all four equal: x (index 0) is omitted; the kept y, z, w = 0.5 -> int(0.75 * 1023) = 767
    assert int(encode_comp4([[0.5, 0.5, 0.5, 0.5]])[0]) == (0 << 30) | (767 << 20) | (767 << 10) | 767
    # largest is y and negative: the quaternion is negated, k = 1, x, z, w = 0 -> 511
    assert int(encode_comp4([[0.0, -1.0, 0.0, 0.0]])[0]) == (1 << 30) | (511 << 20) | (511 << 10) | 511
    # truncation toward zero: x = -0.6 (z = 0.8 largest) -> int(0.2 * 1023) = int(204.6) = 204
    u = int(encode_comp4([[-0.6, 0.0, 0.8, 0.0]])[0])
    assert u >> 30 == 2 and (u >> 20) & 0x3FF == 204


def test_comp4_decode_order_skips_the_omitted_component():
    # k = 1 (y omitted): bits 29..20 -> x, 19..10 -> z, 9..0 -> w
    packed = (1 << 30) | (1023 << 20) | (0 << 10) | 511
    q = decode_comp4([packed])[0]
    assert q[0] == pytest.approx(1.0) and q[2] == pytest.approx(-1.0)
    assert q[3] == pytest.approx(2 * 511 / 1023 - 1, abs=1e-7)


def test_comp4_clamp_avoids_nan():
    # three kept components of 1.0: 1 - 3 < 0 -> the engine gets NaN, we clamp to 0
    packed = (3 << 30) | (1023 << 20) | (1023 << 10) | 1023
    q = decode_comp4([packed])[0]
    assert np.all(np.isfinite(q)) and q[3] == 0.0


def test_comp8_identity_by_hand():
    # x, y, z: int(0.5 * 65535) = 32767; w: int(1 * 65535) = 65535
    high, low = encode_comp8([IDENTITY])
    assert int(high[0]) == (32767 << 16) | 32767 == 0x7FFF7FFF
    assert int(low[0]) == (32767 << 16) | 65535 == 0x7FFFFFFF
    q = decode_comp8(high, low)[0]
    assert q[:3] == pytest.approx([-1 / 65535] * 3, abs=1e-7)
    assert q[3] == 1.0


def test_comp8_negative_w_is_flipped_and_y_sits_in_the_low_half_of_high():
    s = np.sqrt(0.5)
    high, low = encode_comp8([[0.0, s, 0.0, -s]])        # -> (0, -s, 0, s)
    y = int(high[0]) & 0xFFFF
    assert y == int(np.float32((np.float32(-s) + 1) * 0.5) * np.float32(65535))
    assert int(high[0]) >> 16 == 32767
    assert int(low[0]) & 0xFFFF == int(np.float32(s) * np.float32(65535))
    q = decode_comp8(high, low)[0]
    assert q == pytest.approx([0.0, -s, 0.0, s], abs=5e-5)


def test_comp8_decode_by_hand():
    q = decode_comp8([0xFFFF0000], [0x0000FFFF])[0]
    assert q.tolist() == [1.0, -1.0, -1.0, 1.0]          # no renormalisation on decode


unit = arrays(np.float64, (16, 4), elements=st.floats(-1, 1, allow_nan=False)).filter(
    lambda a: np.all(np.linalg.norm(a, axis=1) > 0.1)).map(
    lambda a: a / np.linalg.norm(a, axis=1)[:, None])


@settings(max_examples=60, deadline=None)
@given(unit)
def test_precision_of_both_packings(q):
    # 10-bit steps (truncated) keep ~0.5 degree, 16-bit steps ~0.01 degree
    # (the dot product in float64: in float32 its own rounding, ~1e-7, is the size of the bound)
    for dec, tol in ((decode_comp4(encode_comp4(q)), 1e-4), (decode_comp8(*encode_comp8(q)), 1e-7)):
        dec = dec.astype(np.float64)
        dot = np.abs(np.einsum("ij,ij->i", dec / np.linalg.norm(dec, axis=1)[:, None], q))
        assert np.all(dot > 1 - tol)


@settings(max_examples=60, deadline=None)
@given(unit)
def test_engine_encoder_drifts_at_most_one_step(q):
    p = encode_comp4(q)
    p2 = encode_comp4(decode_comp4(p))
    same_k = (p >> 30) == (p2 >> 30)
    for shift in (20, 10, 0):
        d = np.abs(((p >> shift) & 0x3FF).astype(int) - ((p2 >> shift) & 0x3FF).astype(int))
        assert np.all(d[same_k] <= 1)
    h, lo = encode_comp8(q)
    h2, lo2 = encode_comp8(decode_comp8(h, lo))
    # COMP8 decodes to a slightly non-unit quaternion: renormalising may add a step
    for a, b in ((h >> 16, h2 >> 16), (h & 0xFFFF, h2 & 0xFFFF), (lo >> 16, lo2 >> 16),
                 (lo & 0xFFFF, lo2 & 0xFFFF)):
        assert np.all(np.abs(a.astype(int) - b.astype(int)) <= 2)


@settings(max_examples=60, deadline=None)
@given(unit)
def test_nearest_rounding_is_stable(q):
    h, lo = encode_comp8(q, rounding="nearest")
    h2, lo2 = encode_comp8(decode_comp8(h, lo), rounding="nearest")
    assert np.array_equal(h, h2) and np.array_equal(lo, lo2)
    p = encode_comp4(q, rounding="nearest")
    p2 = encode_comp4(decode_comp4(p), rounding="nearest")
    # only near-ties of the largest component may pick another packing of the same rotation
    assert np.allclose(np.abs(np.einsum("ij,ij->i", decode_comp4(p), decode_comp4(p2))), 1,
                       atol=1e-5)


def test_degenerate_input_does_not_crash():
    bad = np.array([[0, 0, 0, 0], [np.nan, 0, 0, 1], [np.inf, 0, 0, 0]], dtype=np.float64)
    assert encode_comp4(bad).dtype == np.uint32
    h, lo = encode_comp8(bad)
    assert np.all(np.isfinite(decode_comp8(h, lo)))
    with pytest.raises(ValueError):
        encode_comp4([IDENTITY], rounding="up")
