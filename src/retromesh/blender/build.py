"""Build the Blender extension zip: ``retromesh-<version>.zip``.

Layout of the zip (Blender 4.2 extension, manifest schema 1.0.0)::

    blender_manifest.toml     id "retromesh", type add-on, Blender >= 4.2, the wheels below
    __init__.py               register()/unregister() delegating to retromesh.blender.addon
    wheels/retromesh-*.whl    this package (built with ``pip wheel --no-deps``)
    wheels/*.whl              retromesh's runtime dependencies Blender lacks (pure Python ones
                              with ``pip download --platform any``; per-platform wheels otherwise)

numpy is not packed: Blender ships it. typer and rich are only used by the command line, which
the add-on never imports. Nothing here imports bpy.
"""
from __future__ import annotations

import importlib.metadata as metadata
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

__all__ = ["build_extension", "runtime_dependencies", "manifest_text", "BLENDER_SHIPS", "CLI_ONLY"]

#: packages Blender's own Python already has (packing them would shadow Blender's copies)
BLENDER_SHIPS = frozenset({"numpy", "requests", "certifi", "idna", "urllib3", "charset-normalizer",
                           "zstandard", "cython"})
#: packages only the command line imports
CLI_ONLY = frozenset({"typer", "rich"})
#: wheels looked for when a dependency has no pure-Python wheel (Blender installs the one that fits)
PLATFORMS = ("manylinux_2_28_x86_64", "win_amd64", "macosx_11_0_arm64", "macosx_10_15_x86_64")
BLENDER_PYTHON = "3.11"
BLENDER_VERSION_MIN = "4.2.0"

_ROOT_INIT = '''"""retromesh for Blender: File > Import/Export > Classic game model (retromesh).

The add-on itself lives in the retromesh wheel (retromesh.blender.addon)."""


def register():
    from retromesh.blender import addon
    addon.register()


def unregister():
    from retromesh.blender import addon
    addon.unregister()
'''


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _project_root() -> Path:
    root = Path(__file__).resolve().parents[3]
    if not (root / "pyproject.toml").is_file():
        raise RuntimeError("build_extension needs retromesh's source tree (pyproject.toml not "
                           f"found at {root}); run it from a checkout")
    return root


def _project() -> dict:
    return tomllib.loads((_project_root() / "pyproject.toml").read_text("utf-8"))["project"]


def _marker_ok(req: str) -> bool:
    """False for requirements that only apply to extras or to other Pythons than Blender's."""
    if ";" not in req:
        return True
    marker = req.split(";", 1)[1]
    if "extra" in marker:
        return False
    try:
        from packaging.markers import Marker
    except ImportError:                       # pragma: no cover - pip always vendors it
        from pip._vendor.packaging.markers import Marker  # type: ignore[assignment]  # (the same, vendored)
    return Marker(marker).evaluate({"python_version": BLENDER_PYTHON,
                                    "python_full_version": BLENDER_PYTHON + ".0", "extra": ""})


def _req_name(req: str) -> str:
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
    assert m is not None, req                 # a requirement starts with its name
    return _norm(m.group(1))


def runtime_dependencies() -> list[str]:
    """Requirement pins (``name==version``) of every package the add-on needs that Blender
    lacks: retromesh's dependencies minus numpy (Blender ships it) and the CLI-only ones,
    followed transitively through the installed distributions."""
    skip = BLENDER_SHIPS | CLI_ONLY
    todo = [r for r in _project()["dependencies"] if _marker_ok(r)]
    pins: dict[str, str] = {}
    while todo:
        req = todo.pop()
        name = _req_name(req)
        if name in skip or name in pins:
            continue
        try:
            pins[name] = f"{name}=={metadata.version(name)}"
            todo += [r for r in (metadata.requires(name) or []) if _marker_ok(r)]
        except metadata.PackageNotFoundError:
            pins[name] = req.split(";", 1)[0].strip().replace(" ", "")
    return sorted(pins.values())


def _pip(*args: str) -> None:
    cmd = [sys.executable, "-m", "pip", *args, "--disable-pip-version-check", "--quiet"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")


def _download(pin: str, dest: Path) -> None:
    common = ("download", "--no-deps", "--only-binary=:all:", "--python-version", BLENDER_PYTHON,
              "-d", str(dest), pin)
    try:
        _pip(*common, "--platform", "any", "--implementation", "py")
        return
    except RuntimeError:
        pass
    got = 0
    for plat in PLATFORMS:
        try:
            _pip(*common, "--platform", plat, "--implementation", "cp")
            got += 1
        except RuntimeError:
            pass
    if not got:
        raise RuntimeError(f"no wheel of {pin} for Blender's Python {BLENDER_PYTHON}")


def manifest_text(version: str, wheels: list[str], platforms: list[str] | None = None) -> str:
    """``blender_manifest.toml`` (schema 1.0.0) for the given wheel file names."""
    project = _project()
    lines = [
        'schema_version = "1.0.0"',
        'id = "retromesh"',
        f'version = "{version}"',
        'name = "retromesh"',
        'tagline = "Import and export classic game models (B3D, Lugaru, ABC, VXL)"',
        'maintainer = "retromesh developers"',
        'type = "add-on"',
        'tags = ["Import-Export"]',
        f'blender_version_min = "{BLENDER_VERSION_MIN}"',
        'license = ["SPDX:MIT"]',
        "wheels = [",
        *[f'  "./wheels/{w}",' for w in wheels],
        "]",
    ]
    if platforms:
        lines.append("platforms = [" + ", ".join(f'"{p}"' for p in platforms) + "]")
    lines += ["", "[permissions]", 'files = "Read and write the model files you import and export"']
    assert project["name"] == "retromesh"
    return "\n".join(lines) + "\n"


def build_extension(out_dir: str | Path, *, wheel_cache: str | Path | None = None) -> Path:
    """Write ``<out_dir>/retromesh-<version>.zip``, a Blender extension; returns its path.

    ``wheel_cache``: a folder of already downloaded dependency wheels to reuse (and fill)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    version = _project()["version"]
    with tempfile.TemporaryDirectory(prefix="retromesh-ext-") as tmp:
        wheels = Path(tmp) / "wheels"
        wheels.mkdir()
        _pip("wheel", "--no-deps", "-w", str(wheels), str(_clean_copy(Path(tmp) / "src")))
        for pin in runtime_dependencies():
            name, _, ver = pin.partition("==")
            cached = _cached(wheel_cache, name, ver) if wheel_cache and ver else []
            if cached:
                for w in cached:
                    shutil.copy2(w, wheels / w.name)
                continue
            _download(pin, wheels)
            if wheel_cache and ver:
                Path(wheel_cache).mkdir(parents=True, exist_ok=True)
                for w in _cached(wheels, name, ver):
                    shutil.copy2(w, Path(wheel_cache) / w.name)
        names = sorted(w.name for w in wheels.glob("*.whl"))
        pure = all(n.endswith("-any.whl") for n in names)
        target = out_dir / f"retromesh-{version}.zip"
        partial = target.with_name(target.name + ".part")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("blender_manifest.toml",
                       manifest_text(version, names, None if pure else _manifest_platforms()))
            z.writestr("__init__.py", _ROOT_INIT)
            for n in names:
                z.write(wheels / n, f"wheels/{n}")
        partial.replace(target)
    return target


def _clean_copy(dest: Path) -> Path:
    """The files a wheel is built from, copied away from any stale ``build/`` of the checkout."""
    root = _project_root()
    dest.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (root / name).is_file():
            shutil.copy2(root / name, dest / name)
    shutil.copytree(root / "src", dest / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    return dest


def _manifest_platforms() -> list[str]:
    return ["linux-x64", "windows-x64", "macos-arm64", "macos-x64"]


def _cached(folder: str | Path, name: str, version: str) -> list[Path]:
    stem = re.sub(r"[-_.]+", "_", name).lower()
    return [p for p in Path(folder).glob("*.whl")
            if p.name.lower().startswith(f"{stem}-{version}-")]
