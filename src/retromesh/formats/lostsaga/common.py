"""Shared pieces of the Lost Saga ("io3DEngine") formats: tokens, strings, axes.

Strings are ``int32 length`` + ``length`` bytes, no terminator (engine ``ReadString``); they are
kept as raw ``bytes`` because they are not always ASCII (Korean tools wrote some of them).
A negative length (which the engine reads as "empty") cannot be written back and is rejected.

The engine is Direct3D 9: left-handed, +Y up. The conversion to glTF (right-handed, +Y up) is a
mirror of Z, applied once at the edge: positions/normals/translations ``(x, y, -z)``, quaternions
``(x, y, z, w) -> (-x, -y, z, w)``, matrices ``S M S`` (``S = diag(1, 1, -1, 1)``), triangle
winding reversed. UVs are top-left based in both: no flip.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...binio import Reader, Writer
from ...findings import Finding, error

SKELETON_TOKEN = b"SKL\0"
ANIMATION_TOKEN = b"ANI\0"
MESH_TOKEN = b"MSH\0"
COL_MESH_TOKEN = b"CMS\0"

SKELETON_VERSION = 1000
MESH_VERSION = 2000
VERTEX_COLOR_MESH_VERSION = 2001
MESH_CONTROL_POINT_VERSION = 2002
ANIMATION_VER_DEFAULT = 4000
ANIMATION_VER_COMP4 = 4001
ANIMATION_VER_COMP8 = 4002
COL_MESH_VERSION = 5000

_MIRROR3 = np.array([1.0, 1.0, -1.0])
_MIRRORQ = np.array([-1.0, -1.0, 1.0, 1.0])


#: the engine reads strings into ``char[MAX_PATH]`` buffers
MAX_PATH = 260


def long_strings(strings, what: str, rule: str) -> list[Finding]:
    """``check`` findings for strings the engine's MAX_PATH buffers cannot hold."""
    n = sum(1 for b in strings if len(b) >= MAX_PATH)
    return [error(rule, f"{n} {what} of {MAX_PATH}+ bytes overflow the engine's MAX_PATH "
                  "buffers")] if n else []


def read_str(r: Reader, what: str = "string") -> bytes:
    return r.pstring("i", what)


def write_str(w: Writer, b: bytes) -> None:
    w.pstring(bytes(b), "i")


def text(b: bytes) -> str:
    """Display text of a raw name: UTF-8, else CP949 (Korean), else Latin-1."""
    for enc in ("utf-8", "cp949"):
        try:
            return b.decode(enc)
        except UnicodeDecodeError:
            pass
    return b.decode("latin-1")


def encode_name(s: str) -> bytes:
    return s.encode("utf-8")


def magic(r: Reader, token: bytes, name: str) -> None:
    got = r.raw(4, "magic")
    if got != token:
        raise r.fail(f"the {name} token {token!r}", repr(got), offset=0, field="magic")


def vec_to_gltf(v) -> np.ndarray:
    """D3D left-handed vectors (..., 3) -> glTF (x, y, -z)."""
    return np.asarray(v, dtype=np.float64) * _MIRROR3


vec_from_gltf = vec_to_gltf


def quat_to_gltf(q) -> np.ndarray:
    """D3DX quaternions (..., 4) x, y, z, w -> glTF x, y, z, w across the Z mirror."""
    return np.asarray(q, dtype=np.float64) * _MIRRORQ


quat_from_gltf = quat_to_gltf


def prescale(v: np.ndarray) -> np.ndarray:
    """Rows divided by their largest magnitude (no overflow when squaring huge floats)."""
    if not v.size:
        return v / np.ones(v.shape[:-1] + (1,))
    # the largest magnitude column by column (a reduction over the short axis was 5x slower);
    # magnitudes are >= +0.0, so the same bits (a NaN row is divided by 1.0 either way)
    a = np.abs(v)
    m = a[..., 0].copy()
    for c in range(1, v.shape[-1]):
        np.maximum(m, a[..., c], out=m)
    m = m[..., None]
    return v / np.where(m > 0, m, 1.0)


def nan_to_num(a: Any, **kwargs: Any) -> np.ndarray:
    """``np.nan_to_num(a, **kwargs)`` (a copy), numpy's tests for NaN and each infinity only
    when some value is not finite (they cost several times the test)."""
    out = np.array(a)
    return out if np.isfinite(out).all() else np.nan_to_num(out, copy=False, **kwargs)


def unit_rows(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows scaled to unit length, and which rows could not be (zero, tiny or not finite: they
    become zeros)."""
    v = prescale(np.asarray(v, dtype=np.float64))
    n = np.linalg.norm(v, axis=1)
    bad = ~np.isfinite(n) | (n < 1e-8)
    out = np.where(bad[:, None], 0.0, v / np.where(bad, 1.0, n)[:, None])
    return out, bad
