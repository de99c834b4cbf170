"""The wheels inside the Blender extension zip.

retromesh's own wheel comes from whatever Python runs the build:

- installed from a wheel or with ``pip install .``: packed again from the installed files the
  distribution's ``RECORD`` lists (the package, ``METADATA``, ``WHEEL``, entry points, licences);
- a checkout (the package imported from ``src/`` beside ``pyproject.toml``, editable or through
  ``PYTHONPATH``): built from that source tree with ``pip wheel``;
- or a wheel file given by name (e.g. the one published on PyPI).

Its dependencies are fetched as wheels for Blender's Python and platforms: a pure-Python wheel
when one exists, else one wheel per (Python, platform). Blender installs, of an extension's
wheels, the ones whose tags match its own Python and platform (Blender 4.2 already does), so
one zip may carry wheels for several Pythons. Nothing here imports bpy.
"""
from __future__ import annotations

import base64
import hashlib
import importlib.metadata as metadata
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from email.message import Message
from email.parser import Parser
from pathlib import Path

__all__ = ["PLATFORMS", "WheelName", "retromesh_wheel", "build_from_checkout", "pack_installed",
           "wheel_metadata", "wheel_file_text", "fetch_wheels"]

#: Blender platform -> the pip platform tag its binary wheels are fetched with (pip also takes
#: wheels of older manylinux / macOS tags); Blender 4.2 needs glibc 2.28 and macOS 11.2
PLATFORMS: dict[str, str] = {
    "linux-x64": "manylinux_2_28_x86_64",
    "macos-arm64": "macosx_11_0_arm64",
    "macos-x64": "macosx_11_0_x86_64",
    "windows-arm64": "win_arm64",
    "windows-x64": "win_amd64",
}
#: a fixed date for every zip entry, so that the same files make the same wheel
_EPOCH = (1980, 1, 1, 0, 0, 0)


def norm(name: str) -> str:
    """A project name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _arch(tag: str) -> str | None:
    for suffix, arch in (("x86_64", "x64"), ("amd64", "x64"), ("aarch64", "arm64"), ("arm64", "arm64")):
        if tag.endswith("_" + suffix):
            return arch
    return None


def _blender_platforms(tag: str) -> set[str]:
    """The Blender platforms a wheel platform tag runs on (as Blender's installer reads it)."""
    if tag.startswith("macosx_") and tag.endswith("_universal2"):
        return {"macos-x64", "macos-arm64"}
    system = next((s for prefix, s in (("manylinux", "linux"), ("linux_", "linux"),
                                       ("macosx_", "macos"), ("win_", "windows"))
                   if tag.startswith(prefix)), None)
    arch = _arch(tag)
    return {f"{system}-{arch}"} if system and arch else set()


@dataclass(frozen=True)
class WheelName:
    """The tags of a wheel's file name (``name-version[-build]-python-abi-platform.whl``)."""
    name: str
    version: str
    pythons: tuple[str, ...]
    abis: tuple[str, ...]
    platform_tags: tuple[str, ...]

    @classmethod
    def parse(cls, filename: str) -> WheelName:
        parts = Path(filename).name.removesuffix(".whl").split("-")
        if len(parts) not in (5, 6):
            raise ValueError(f"{filename!r} is not a wheel file name")
        py, abi, plat = parts[-3:]
        return cls(parts[0], parts[1], tuple(py.split(".")), tuple(abi.split(".")),
                   tuple(plat.split(".")))

    @property
    def pure(self) -> bool:
        return "any" in self.platform_tags

    def runs_on(self, platform: str) -> bool:
        """True when Blender on ``platform`` (e.g. ``linux-x64``) installs this wheel."""
        return self.pure or any(platform in _blender_platforms(t) for t in self.platform_tags)

    def runs_with(self, python: str) -> bool:
        """True when a Python of version ``python`` (``"3.11"``) takes this wheel."""
        major, minor = (int(v) for v in python.split("."))
        for tag in self.pythons:
            m = re.fullmatch(r"(?:py|cp)(\d)(\d*)", tag)
            if not m or int(m.group(1)) != major:
                continue
            if not m.group(2) or int(m.group(2)) == minor:
                return True
            if "abi3" in self.abis and int(m.group(2)) <= minor:
                return True
        return False


# -- retromesh's own wheel ----------------------------------------------------------------------

def _package_dir() -> Path:
    import retromesh
    return Path(retromesh.__file__).resolve().parent


def source_tree() -> Path | None:
    """The checkout retromesh is imported from (``<root>/src/retromesh`` beside
    ``<root>/pyproject.toml``), or None when it runs from installed files."""
    pkg = _package_dir()
    root = pkg.parents[1]
    if pkg.parent.name == "src" and (root / "pyproject.toml").is_file():
        return root
    return None


def retromesh_wheel(dest: Path, wheel: str | Path | None = None) -> Path:
    """retromesh's wheel in ``dest``: ``wheel`` when given, else built from the checkout or
    packed from the installed distribution (see the module's docstring)."""
    dest.mkdir(parents=True, exist_ok=True)
    if wheel is not None:
        wheel = Path(wheel)
        if norm(WheelName.parse(wheel.name).name) != "retromesh":
            raise RuntimeError(f"{wheel} is not a retromesh wheel")
        return Path(shutil.copy2(wheel, dest / wheel.name))
    root = source_tree()
    if root is not None:
        return build_from_checkout(root, dest)
    return pack_installed(dest)


def build_from_checkout(root: Path, dest: Path) -> Path:
    with tempfile.TemporaryDirectory(prefix="retromesh-src-") as tmp:
        copy = Path(tmp) / "src"
        copy.mkdir()
        # copied away from any stale build/ of the checkout
        for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
            if (root / name).is_file():
                shutil.copy2(root / name, copy / name)
        shutil.copytree(root / "src", copy / "src",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
        before = set(dest.glob("*.whl"))
        pip("wheel", "--no-deps", "-w", str(dest), str(copy))
    made = [w for w in dest.glob("retromesh-*.whl") if w not in before]
    if len(made) != 1:
        raise RuntimeError(f"pip wheel of {root} made {len(made)} retromesh wheels")
    return made[0]


def _installed_distribution() -> metadata.Distribution:
    try:
        dist = metadata.distribution("retromesh")
    except metadata.PackageNotFoundError:
        raise RuntimeError("retromesh is neither installed (no retromesh-*.dist-info on sys.path) "
                           "nor run from a checkout; install it with `pip install retromesh` "
                           "or `pip install .`, or pass a retromesh wheel") from None
    init = Path(str(dist.locate_file("retromesh/__init__.py"))).resolve()
    if init.parent != _package_dir():
        raise RuntimeError(f"the retromesh imported ({_package_dir()}) is not the installed "
                           f"distribution's ({init.parent}); pass a retromesh wheel instead")
    return dist


def pack_installed(dest: Path, dist: metadata.Distribution | None = None) -> Path:
    """Pack the installed retromesh distribution (``dist``: default the one imported) into a
    wheel: the files its ``RECORD`` lists under ``retromesh/`` (no bytecode) and its dist-info
    (no installer's records)."""
    dist = dist if dist is not None else _installed_distribution()
    files = [f for f in dist.files or [] if "__pycache__" not in f.parts and not f.name.endswith(".pyc")]
    package = sorted(f for f in files if f.parts[0] == "retromesh")
    info = sorted(f for f in files if f.parts[0].endswith(".dist-info")
                  and (f.name in ("METADATA", "WHEEL", "entry_points.txt", "top_level.txt")
                       or f.parts[1:2] == ("licenses",)))
    names = {f.name for f in info}
    if not package or not {"METADATA", "WHEEL"} <= names:
        raise RuntimeError(f"the installed retromesh at {dist.locate_file('')} lists no package "
                           "files (an editable install away from its checkout?); pass a wheel")
    wheel_text = dist.read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in wheel_text.splitlines() if line.startswith("Tag:")]
    if tags != ["py3-none-any"]:
        raise RuntimeError(f"the installed retromesh is tagged {tags}, not py3-none-any")
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / f"retromesh-{dist.version}-py3-none-any.whl"
    record = f"{info[0].parts[0]}/RECORD"
    rows = []
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for f in package + info:
            data = Path(str(dist.locate_file(f))).read_bytes()
            _write(z, f.as_posix(), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            rows.append(f"{f.as_posix()},sha256={digest},{len(data)}")
        _write(z, record, ("\n".join([*rows, f"{record},,"]) + "\n").encode())
    return target


def _write(z: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, _EPOCH)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    z.writestr(info, data)


def wheel_file_text(wheel: Path, suffix: str) -> str | None:
    """The text of the first member of ``wheel`` in a ``.dist-info`` whose path ends with
    ``suffix`` (e.g. ``/METADATA``, ``licenses/LICENSE``), or None."""
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            top = name.split("/", 1)[0]
            if top.endswith(".dist-info") and name.endswith(suffix):
                return z.read(name).decode("utf-8")
    return None


def wheel_metadata(wheel: Path) -> Message:
    """The core metadata (``METADATA``) of a wheel."""
    text = wheel_file_text(wheel, "/METADATA")
    if text is None:
        raise RuntimeError(f"{wheel} has no METADATA")
    return Parser().parsestr(text)


# -- the dependencies' wheels -------------------------------------------------------------------

def pip(*args: str) -> None:
    cmd = [sys.executable, "-m", "pip", *args, "--disable-pip-version-check", "--quiet"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")


def _of(folder: Path | None, name: str, version: str) -> list[Path]:
    """The wheels of ``name==version`` in ``folder``."""
    if folder is None or not folder.is_dir():
        return []
    out = []
    for p in folder.glob("*.whl"):
        try:
            w = WheelName.parse(p.name)
        except ValueError:
            continue
        if norm(w.name) == norm(name) and w.version == version:
            out.append(p)
    return sorted(out)


def _download(pin: str, python: str, platform: str | None, work: Path) -> list[Path]:
    """``pip download`` of one wheel of ``pin`` into a fresh folder under ``work`` (pure when
    ``platform`` is None); the files, or [] when there is none."""
    folder = Path(tempfile.mkdtemp(prefix="dl-", dir=work))
    common = ["download", "--no-deps", "--only-binary=:all:", "--python-version", python,
              "-d", str(folder), pin]
    tags = (["--platform", "any", "--implementation", "py"] if platform is None
            else ["--platform", PLATFORMS[platform], "--implementation", "cp"])
    try:
        pip(*common, *tags)
    except RuntimeError:
        return []
    return sorted(folder.glob("*.whl"))


def _covers(wheels: list[Path], python: str, platform: str) -> Path | None:
    for p in wheels:
        w = WheelName.parse(p.name)
        if w.runs_with(python) and w.runs_on(platform):
            return p
    return None


def fetch_wheels(pins: list[str], pythons: list[str], platforms: list[str], dest: Path,
                 cache: Path | None = None) -> list[str]:
    """Put into ``dest`` the wheels of every ``name==version`` pin for every Python and
    platform asked for (one pure wheel when the project has one); ``cache`` is looked in first
    and filled. Returns what is missing, as ``"pin (python, platform)"`` lines."""
    dest.mkdir(parents=True, exist_ok=True)
    missing: list[str] = []
    with tempfile.TemporaryDirectory(prefix="retromesh-wheels-") as tmp:
        for pin in pins:
            missing += _fetch_one(pin, pythons, platforms, dest, cache, Path(tmp))
    return missing


def _fetch_one(pin: str, pythons: list[str], platforms: list[str], dest: Path,
               cache: Path | None, work: Path) -> list[str]:
    name, _, version = pin.partition("==")
    known = _of(cache, name, version) + _of(dest, name, version)

    def pure_of(paths: list[Path]) -> Path | None:
        return next((p for p in paths if WheelName.parse(p.name).pure
                     and all(WheelName.parse(p.name).runs_with(py) for py in pythons)), None)

    pure = pure_of(known)
    if pure is None and not known:          # nothing known yet: a pure wheel, if there is one
        known += _download(pin, pythons[0], None, work)
        pure = pure_of(known)
    chosen = [pure] if pure is not None else []
    missing = []
    for python in pythons if pure is None else ():
        for platform in platforms:
            hit = _covers(known, python, platform)
            if hit is None:
                got = _download(pin, python, platform, work)
                known += got
                hit = _covers(got, python, platform)
            if hit is None:
                missing.append(f"{pin} (Python {python}, {platform})")
            else:
                chosen.append(hit)
    for p in dict.fromkeys(chosen):
        if p.parent != dest:
            shutil.copy2(p, dest / p.name)
        if cache is not None and not (cache / p.name).exists():
            cache.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, cache / p.name)
    return missing
