"""Colour conversions of the Westwood family: palette bytes are sRGB, glTF vertex colours are
linear (the sRGB transfer function, both ways).

:func:`srgb_to_linear` makes a palette's vertex colours (:mod:`.scene`), and
:func:`linear_to_srgb` turns a mesh's colours back into palette bytes (:mod:`.voxelize`).
"""
from __future__ import annotations

import numpy as np

__all__ = ["linear_to_srgb", "srgb_to_linear"]


def srgb_to_linear(c: np.ndarray) -> np.ndarray:
    c = np.asarray(c, np.float64)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(c: np.ndarray) -> np.ndarray:
    c = np.clip(np.asarray(c, np.float64), 0.0, 1.0)
    return np.where(c <= 0.0031308, c * 12.92, 1.055 * c ** (1 / 2.4) - 0.055)
