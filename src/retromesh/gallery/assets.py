"""The viewer script the gallery's pages load, built once per machine from npm packages.

``viewer.js`` (ours, a few dozen lines on three.js's API) is bundled with three.js — the version
pinned in ``package.json`` — by esbuild into one classic script, because pages opened from
``file://`` may not load ES modules. The build runs ``npm install`` + esbuild in a cache folder
(``$RETROMESH_CACHE`` or ``~/.cache/retromesh``, keyed by a hash of the two files) the first time
a gallery is made, or ahead of time with ``python -m retromesh.gallery.assets``. Each site gets a
copy of the bundle and of three.js's licence.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from importlib import resources
from pathlib import Path

from ..errors import UnsupportedError

__all__ = ["viewer_bundle", "cache_dir"]

_SOURCES = ("viewer.js", "package.json")


def cache_dir() -> Path:
    return Path(os.environ.get("RETROMESH_CACHE") or Path.home() / ".cache" / "retromesh")


def _key() -> str:
    h = hashlib.sha256()
    for name in _SOURCES:
        h.update(resources.files(__package__).joinpath(name).read_bytes())
    return h.hexdigest()[:16]


def viewer_bundle(*, quiet: bool = True) -> tuple[Path, Path]:
    """``(bundle.js, three-LICENSE)``, building them first when this machine has none."""
    folder = cache_dir() / f"viewer-{_key()}"
    bundle, licence = folder / "viewer.bundle.js", folder / "LICENSE-three.txt"
    if bundle.is_file() and licence.is_file():
        return bundle, licence
    npm = shutil.which("npm")
    if npm is None:
        raise UnsupportedError("the gallery's viewer is built from npm packages (three.js) and "
                               "npm is not installed; install Node.js and npm (Debian, Ubuntu: "
                               "apt-get install npm), then run again")
    build = folder.with_name(folder.name + ".build")
    shutil.rmtree(build, ignore_errors=True)
    build.mkdir(parents=True)
    for name in _SOURCES:
        (build / name).write_bytes(resources.files(__package__).joinpath(name).read_bytes())
    out = subprocess.DEVNULL if quiet else None
    try:
        subprocess.run([npm, "install", "--no-audit", "--no-fund", "--no-package-lock",
                        "--loglevel=error"], cwd=build, check=True, stdout=out, timeout=600)
        subprocess.run([str(build / "node_modules" / ".bin" / "esbuild"), "viewer.js", "--bundle",
                        "--minify", "--format=iife", "--log-level=error",
                        "--outfile=viewer.bundle.js"], cwd=build, check=True, stdout=out,
                       timeout=300)
    except (OSError, subprocess.SubprocessError) as exc:
        raise UnsupportedError(f"building the gallery's viewer (npm install three + esbuild in "
                               f"{build}) failed: {exc}") from exc
    shutil.copyfile(build / "node_modules" / "three" / "LICENSE", build / "LICENSE-three.txt")
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("viewer.bundle.js", "LICENSE-three.txt"):
        os.replace(build / name, folder / name)
    shutil.rmtree(build, ignore_errors=True)
    return bundle, licence


if __name__ == "__main__":
    print(viewer_bundle(quiet=False)[0])
