"""What a Blender glTF import + export does to animation keys (glTF-Blender-IO 4.2), for the
round-trip tests that imitate it without Blender."""
from __future__ import annotations

import numpy as np


def drop_repeats(c):
    """Keys whose value equals both neighbours' left out (Blender's "optimize animation size")."""
    v = np.asarray(c.values, np.float64).reshape(len(c.times), -1)
    same = np.all(np.abs(np.diff(v, axis=0)) < 1e-6, axis=1)
    keep = np.ones(len(v), bool)
    keep[1:-1] = ~(same[:-1] & same[1:])
    c.times, c.values = c.times[keep], c.values[keep]
    return c
