"""Building the Blender extension without Blender and without the network: wheel tags as
Blender's installer reads them, the manifest's Blender range, one zip per platform, and
retromesh's wheel packed from installed files. (Installing the zips into Blender: test_blender.)"""
from __future__ import annotations

import importlib.metadata as metadata
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from retromesh.blender.build import blender_versions, build_extensions, manifest_text
from retromesh.blender.wheels import PLATFORMS, WheelName, fetch_wheels, pack_installed

LICENCE = "MIT License\n\nCopyright (c) 2026 retromesh contributors\n"
META = """Metadata-Version: 2.4
Name: retromesh
Version: 9.8.7
Author: retromesh contributors
License-Expression: MIT
Project-URL: Homepage, https://example.org/retromesh
Project-URL: Issues, https://example.org/retromesh/issues
Requires-Dist: numpy>=1.26
Requires-Dist: typer<0.29,>=0.12
Requires-Dist: pureone>=1
Requires-Dist: binone>=2
Requires-Dist: pytest>=8; extra == "test"
"""
PILLOW_LINUX = "pillow-13.0.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"


def _wheel(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return path


def _cache(folder: Path) -> Path:
    """Fake dependency wheels: a pure one, and a binary one for every Python and platform."""
    folder.mkdir()
    _wheel(folder / "pureone-1.0-py3-none-any.whl", {})
    tags = {"linux-x64": "manylinux_2_28_x86_64", "macos-arm64": "macosx_11_0_arm64",
            "macos-x64": "macosx_10_10_x86_64", "windows-arm64": "win_arm64",
            "windows-x64": "win_amd64"}
    for py in ("cp311", "cp313"):
        for tag in tags.values():
            _wheel(folder / f"binone-2.0-{py}-{py}-{tag}.whl", {})
    return folder


def _own_wheel(folder: Path) -> Path:
    folder.mkdir()
    return _wheel(folder / "retromesh-9.8.7-py3-none-any.whl",
                  {"retromesh/__init__.py": "", "retromesh-9.8.7.dist-info/METADATA": META,
                   "retromesh-9.8.7.dist-info/licenses/LICENSE": LICENCE})


@pytest.fixture
def offline(monkeypatch):
    """Dependencies pinned as in the fake cache; pip downloads find nothing (the list of the
    downloads tried)."""
    versions = {"pureone": "1.0", "binone": "2.0"}

    def version(name):
        if name in versions:
            return versions[name]
        raise metadata.PackageNotFoundError(name)
    monkeypatch.setattr(metadata, "version", version)
    monkeypatch.setattr(metadata, "requires", lambda name: [])

    tried: list[tuple] = []

    def download(*args):
        tried.append(args[:3])
        return []
    monkeypatch.setattr("retromesh.blender.wheels._download", download)
    return tried


def test_wheel_tags_as_blenders_installer_reads_them():
    w = WheelName.parse(PILLOW_LINUX)
    assert w.runs_on("linux-x64") and not w.runs_on("windows-x64")
    assert w.runs_with("3.11") and not w.runs_with("3.13")
    mac = WheelName.parse("x-1-cp311-cp311-macosx_10_10_universal2.whl")
    assert mac.runs_on("macos-arm64") and mac.runs_on("macos-x64")
    assert WheelName.parse("x-1-cp38-abi3-win_arm64.whl").runs_with("3.13")
    assert WheelName.parse("x-1-py2.py3-none-any.whl").runs_on("windows-arm64")
    assert set(PLATFORMS) == {"linux-x64", "macos-arm64", "macos-x64", "windows-arm64", "windows-x64"}


def test_blender_range_follows_the_pythons_the_wheels_are_for():
    assert blender_versions(["3.11"]) == ("4.2.0", "5.1.0")
    assert blender_versions(["3.11", "3.13"]) == ("4.2.0", None)
    assert blender_versions(["3.13"]) == ("5.1.0", None)
    with pytest.raises(RuntimeError, match="3.12"):
        blender_versions(["3.12"])


def test_manifest_has_licence_maintainer_website_copyright_and_version_range():
    meta = Parser().parsestr(META)
    m = tomllib.loads(manifest_text("9.8.7", [PILLOW_LINUX], ["linux-x64"], meta=meta,
                                    licence=LICENCE, pythons=["3.11"]))
    assert m["license"] == ["SPDX:MIT"]
    assert m["maintainer"] == "retromesh contributors <https://example.org/retromesh/issues>"
    assert m["website"] == "https://example.org/retromesh"
    assert m["copyright"] == ["2026 retromesh contributors"]
    assert (m["blender_version_min"], m["blender_version_max"]) == ("4.2.0", "5.1.0")
    assert m["platforms"] == ["linux-x64"]
    # pure wheels only: any Blender from 4.2 on
    pure = tomllib.loads(manifest_text("9.8.7", ["a-1-py3-none-any.whl"], meta=meta, pythons=["3.11"]))
    assert "blender_version_max" not in pure and "platforms" not in pure


def test_one_zip_per_platform_holds_only_that_platforms_wheels(tmp_path, offline):
    zips = build_extensions(tmp_path / "dist", platforms=list(PLATFORMS),
                            wheel_cache=_cache(tmp_path / "cache"), wheel=_own_wheel(tmp_path / "own"))
    assert [z.name for z in zips] == [f"retromesh-9.8.7-{p.replace('-', '_')}.zip" for p in PLATFORMS]
    for platform, path in zip(PLATFORMS, zips):
        with zipfile.ZipFile(path) as z:
            m = tomllib.loads(z.read("blender_manifest.toml").decode())
            assert z.read("LICENSE").decode() == LICENCE
            assert {"__init__.py", "LICENSE", "blender_manifest.toml"} < set(z.namelist())
            listed = {w.removeprefix("./") for w in m["wheels"]}
            assert listed == {n for n in z.namelist() if n.startswith("wheels/")}
        assert m["platforms"] == [platform] and m["version"] == "9.8.7"
        binary = [WheelName.parse(w) for w in listed if w.startswith("wheels/binone")]
        assert len(binary) == 2 and all(w.runs_on(platform) for w in binary)
        assert {"wheels/pureone-1.0-py3-none-any.whl", "wheels/retromesh-9.8.7-py3-none-any.whl"} < listed
        assert not any("numpy" in w or "typer" in w for w in listed)
    assert offline == []                    # everything came from the cache


def test_one_zip_for_every_platform_and_python(tmp_path, offline):
    (path,) = build_extensions(tmp_path / "dist", pythons=["3.11"],
                               wheel_cache=_cache(tmp_path / "cache"), wheel=_own_wheel(tmp_path / "own"))
    with zipfile.ZipFile(path) as z:
        m = tomllib.loads(z.read("blender_manifest.toml").decode())
    assert path.name == "retromesh-9.8.7.zip"
    assert m["platforms"] == list(PLATFORMS) and m["blender_version_max"] == "5.1.0"
    assert sum("binone" in w for w in m["wheels"]) == len(PLATFORMS)      # cp311 only


def test_a_platform_without_wheels_is_an_error_not_a_broken_zip(tmp_path, offline):
    cache = _cache(tmp_path / "cache")
    for w in cache.glob("binone-*win_arm64.whl"):
        w.unlink()
    missing = fetch_wheels(["pureone==1.0", "binone==2.0"], ["3.11"], ["windows-arm64"],
                           tmp_path / "pool", cache)
    assert missing == ["binone==2.0 (Python 3.11, windows-arm64)"]
    assert offline == [("binone==2.0", "3.11", "windows-arm64")]
    with pytest.raises(RuntimeError, match="windows-arm64"):
        build_extensions(tmp_path / "dist", platforms=["windows-arm64"], wheel_cache=cache,
                         wheel=_own_wheel(tmp_path / "own"))
    with pytest.raises(RuntimeError, match="unknown platform"):
        build_extensions(tmp_path / "dist", platforms=["amiga-m68k"], wheel=_own_wheel(tmp_path / "own2"))


def test_a_platform_without_lupa_gets_a_zip_without_it_and_a_warning(tmp_path, offline, monkeypatch):
    """lupa (mods' Lua) is optional: where PyPI has no wheel of it the zip is built without
    it (the import then reads the model as --no-lua does) and the build warns."""
    monkeypatch.setattr(metadata, "version", {"pureone": "1.0", "binone": "2.0", "lupa": "2.8"}.get)
    cache = _cache(tmp_path / "cache")
    _wheel(cache / "lupa-2.8-cp311-cp311-manylinux_2_28_x86_64.whl", {})
    own = _own_wheel(tmp_path / "own")
    with zipfile.ZipFile(own, "a") as z:
        meta = z.read("retromesh-9.8.7.dist-info/METADATA").decode() + "Requires-Dist: lupa>=2.0\n"
    _wheel(own, {"retromesh/__init__.py": "", "retromesh-9.8.7.dist-info/METADATA": meta,
                 "retromesh-9.8.7.dist-info/licenses/LICENSE": LICENCE})
    with pytest.warns(UserWarning, match=r"no lupa wheel for Python 3.11, windows-arm64.*--no-lua"):
        linux, win = build_extensions(tmp_path / "dist", platforms=["linux-x64", "windows-arm64"],
                                      pythons=["3.11"], wheel_cache=cache, wheel=own)
    for path, lupa in ((linux, 1), (win, 0)):
        with zipfile.ZipFile(path) as z:
            assert sum(n.startswith("wheels/lupa-") for n in z.namelist()) == lupa, path


def test_installed_files_pack_into_a_wheel_with_a_record(tmp_path):
    """What `pip install` left (RECORD, installer files, bytecode) packs into the wheel it was."""
    site = tmp_path / "site"
    (site / "retromesh" / "__pycache__").mkdir(parents=True)
    info = site / "retromesh-9.8.7.dist-info"
    (info / "licenses").mkdir(parents=True)
    files = {"retromesh/__init__.py": "x = 1\n", "retromesh/__pycache__/__init__.cpython-311.pyc": "",
             "retromesh-9.8.7.dist-info/METADATA": META, "retromesh-9.8.7.dist-info/INSTALLER": "pip\n",
             "retromesh-9.8.7.dist-info/WHEEL": "Wheel-Version: 1.0\nTag: py3-none-any\n",
             "retromesh-9.8.7.dist-info/licenses/LICENSE": LICENCE}
    for name, text in files.items():
        (site / name).write_text(text)
    (info / "RECORD").write_text("".join(f"{n},,\n" for n in [*files, "../../bin/retromesh",
                                                                "retromesh-9.8.7.dist-info/RECORD"]))
    wheel = pack_installed(tmp_path / "out", metadata.PathDistribution(info))
    assert wheel.name == "retromesh-9.8.7-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        record = z.read("retromesh-9.8.7.dist-info/RECORD").decode().splitlines()
    assert sorted(names) == sorted(["retromesh/__init__.py", "retromesh-9.8.7.dist-info/METADATA",
                                    "retromesh-9.8.7.dist-info/WHEEL",
                                    "retromesh-9.8.7.dist-info/licenses/LICENSE",
                                    "retromesh-9.8.7.dist-info/RECORD"])
    assert record[0].startswith("retromesh/__init__.py,sha256=") and record[0].endswith(",6")
    assert record[-1] == "retromesh-9.8.7.dist-info/RECORD,,"


def test_command_line_platform_all_means_one_zip_per_platform(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from retromesh.cli import app
    calls = []

    def fake(out, **kw):
        calls.append(kw)
        (tmp_path / "x.zip").write_bytes(b"z")
        return [tmp_path / "x.zip"]
    monkeypatch.setattr("retromesh.blender.build.build_extensions", fake)
    done = CliRunner().invoke(app, ["blender", "build", "-o", str(tmp_path), "--platform", "all",
                                    "--python", "3.11"])
    assert done.exit_code == 0, done.output
    assert calls[0]["platforms"] == list(PLATFORMS) and list(calls[0]["pythons"]) == ["3.11"]
    assert "x.zip" in done.output
    CliRunner().invoke(app, ["blender", "build", "-o", str(tmp_path)])
    assert calls[1]["platforms"] is None and list(calls[1]["pythons"]) == ["3.11", "3.13"]
