"""Key times seen again after a trip through another tool (format-neutral)."""
from __future__ import annotations

import numpy as np

__all__ = ["per_frame"]


def per_frame(ms, kt) -> bool:
    """Whether glTF key times ``ms`` look like an exporter's per-frame sampling of the file's key
    times ``kt`` (Blender samples every frame by default and then drops repeated values): all
    on one frame grid (24, 25, 30, 50 or 60 fps, within 1 ms) and not beyond the file's first
    and last key by more than a frame."""
    ms = np.asarray(ms, np.int64)
    rel = (ms - ms[0]).astype(np.float64)
    for fps in (24, 25, 30, 50, 60):
        frame = 1000.0 / fps
        f = rel / frame
        if np.all(np.abs(f - np.round(f)) * frame <= 1.0):
            return bool(ms[0] >= kt[0] - frame and ms[-1] <= kt[-1] + frame)
    return False
