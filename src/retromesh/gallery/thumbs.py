"""Thumbnails: the model's own viewer page in headless Chromium, screenshotted.

Chromium renders WebGL on the CPU (SwiftShader), so no display and no GPU are needed; the page
frames the model on its bounding box at the rest pose, from the front and a little above.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["browser", "screenshot"]

_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def browser() -> str | None:
    """The Chromium executable, or None."""
    for name in _CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def screenshot(page: Path, png: Path, *, size: int = 256, budget_ms: int = 8000,
               timeout: float = 60.0) -> bool:
    """Render ``page`` (a local HTML file) to ``png``; False when no browser or it failed."""
    exe = browser()
    if exe is None:
        return False
    with tempfile.TemporaryDirectory(prefix="retromesh-chromium-") as profile:
        cmd = [exe, "--headless", "--no-sandbox", "--use-angle=swiftshader",
               "--enable-unsafe-swiftshader", "--disable-gpu-sandbox", "--hide-scrollbars",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--no-first-run", "--mute-audio", f"--user-data-dir={profile}",
               f"--window-size={size},{size}", f"--virtual-time-budget={budget_ms}",
               f"--screenshot={png}", page.resolve().as_uri()]
        try:
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=timeout, check=False)
        except (OSError, subprocess.SubprocessError):
            return False
    return png.is_file() and png.stat().st_size > 0
