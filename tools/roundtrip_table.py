"""How many files come back byte for byte through ``format -> .glb -> format`` (issue 32).

    python tools/roundtrip_table.py FILE_OR_FOLDER... [--ext b3d] [--api] [--blender VENV] [-q]

For every model file (folders are searched recursively for ``--ext``, repeatable; default:
every extension retromesh reads except glTF), in a temporary folder: the file is converted to
GLB and the GLB back to the file's format under its own name, as a user does:

* default: the ``retromesh`` command line (``retromesh convert FILE -o mid.glb``, which finds
  the companions beside the file itself, then ``retromesh convert mid.glb -o back/NAME``);
* ``--api``: the same through :func:`retromesh.convert` in this process (faster), companions
  named as ``retromesh.batch.companions`` finds them;
* ``--blender VENV``: the GLB goes through Blender as the extension takes it (import with the
  extension's options, export unedited), in the ``bpy`` venv ``VENV`` (tools/setup/30-blender.sh),
  with retromesh from this checkout's ``src`` and the packages the extension ships beside it
  (Pillow, lupa: installed into a temporary folder for that Python, from the extension build's
  wheel cache when it has them).

Then every file written back is compared with the file of the same name beside the original
(the model, its companions and the textures written back, compared with the texture file
retromesh read: beside the model or in the game's layout, such as a mod's ``textures/``). A
file counts as identical when all of them are, byte for byte, and no companion that was read
is missing. Prints one line per file
(the first differing offset, or what went wrong) and ``identical n / N``.

Family-generic: nothing here knows a format; it only uses the public API and the command line.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

#: the Blender side of ``--blender``: the extension's operators from this checkout's source
_BLENDER = r'''
import json, os, sys, traceback
sys.path[:0] = [ARGS["src"], ARGS["site"]]
from retromesh.blender import addon
out = []
for job in ARGS["jobs"]:
    try:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        if not hasattr(bpy.ops.import_scene, "retromesh") or "retromesh" not in dir(bpy.ops.import_scene):
            addon.register()
        folder = os.path.dirname(job["files"][0])
        r = bpy.ops.import_scene.retromesh(filepath=job["files"][0], directory=folder,
                                           files=[{"name": os.path.basename(f)} for f in job["files"]])
        os.makedirs(os.path.dirname(job["out"]), exist_ok=True)
        e = bpy.ops.export_scene.retromesh(filepath=job["out"])
        out.append({"import": list(r), "export": list(e)})
    except Exception:
        out.append({"error": traceback.format_exc()[-1500:]})
emit(out)
'''


def model_files(args: list[str], exts: list[str]) -> list[Path]:
    out: list[Path] = []
    for a in args:
        p = Path(a).resolve()
        if p.is_dir():
            out += sorted(f for f in p.rglob("*") if f.is_file()
                          and f.suffix.lower().lstrip(".") in exts)
        else:
            out.append(p)
    return out


def default_extensions() -> list[str]:
    from retromesh import registry
    names = set()
    for fmt in registry.formats():
        if fmt.name not in ("glb", "gltf") and fmt.from_scene is not None:
            names.update(fmt.extensions)
    return sorted(names)


def companions_of(src: Path) -> list[Path]:
    from retromesh.batch import companions
    out: list[Path] = []
    for v in companions(src).values():
        out += [Path(x) for x in (v if isinstance(v, list) else [v])]
    return out


def _cli(*args: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-m", "retromesh", "convert", *args, "--overwrite"],
                          capture_output=True, text=True, env=env)
    if done.returncode:
        raise RuntimeError((done.stdout + done.stderr).strip().splitlines()[-1:] or "failed")


def to_glb(src: Path, glb: Path, api: bool) -> None:
    if not api:
        return _cli(str(src), "-o", str(glb))
    import retromesh
    from retromesh.batch import companions
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retromesh.convert(src, glb, **companions(src))


def from_glb(glb: Path, target: Path, api: bool) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if not api:
        return _cli(str(glb), "-o", str(target))
    import retromesh
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retromesh.convert(glb, target)


def compare(src: Path, back: Path) -> str | None:
    """None when every file written back equals its original and no companion is missing;
    else where the first difference is."""
    written = {p.name: p for p in back.iterdir() if p.is_file()}
    for comp in [src, *companions_of(src)]:
        if comp.name not in written:
            return f"{comp.name}: not written back"
    for name, p in sorted(written.items(), key=lambda kv: kv[0] != src.name):
        orig = src.parent / name
        if not orig.is_file():          # a texture read from the game's layout (textures/)
            from retromesh.textures import TextureFinder
            orig = TextureFinder(src.parent).find(name) or orig
        if not orig.is_file():
            return f"{name}: written back, no such file beside the original"
        a, b = orig.read_bytes(), p.read_bytes()
        if a != b:
            n = min(len(a), len(b))
            at = next((i for i in range(n) if a[i] != b[i]), n)
            return f"{name}: first difference at byte {at} of {len(a)} (back: {len(b)} bytes)"
    return None


#: the packages the extension ships beside retromesh (its wheels), and where its build caches them
SHIPPED = ("pillow", "lupa")
WHEEL_CACHE = Path.home() / ".cache" / "retromesh" / "extension-wheels"


def shipped_site(venv: Path, dest: Path) -> Path:
    """:data:`SHIPPED` installed for the venv's Python into ``dest`` (not into the venv: the
    tests of the extension must still see what the extension alone brings)."""
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-deps", "--only-binary=:all:", "--target", str(dest),
                    "--find-links", str(WHEEL_CACHE), *SHIPPED], check=True)
    return dest


def blender_pass(venv: Path, jobs: list[dict], site: Path) -> list[dict]:
    """Import + export each job in Blender (one process); returns each job's result."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from helpers import blender_run
    return blender_run.run(_BLENDER, {"src": str(SRC), "site": str(site), "jobs": jobs},
                           venv=venv, timeout=3600)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--ext", action="append", help="extensions to take from folders")
    ap.add_argument("--api", action="store_true", help="retromesh.convert instead of the CLI")
    ap.add_argument("--blender", type=Path, metavar="VENV", help="through Blender (a bpy venv)")
    ap.add_argument("-q", "--quiet", action="store_true", help="only the differing files")
    ap.add_argument("--json", type=Path, help="write {file: result} here")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(SRC))
    files = model_files(a.paths, [e.lower().lstrip(".") for e in a.ext] if a.ext
                        else default_extensions())
    results: dict[str, str | None] = {}
    with tempfile.TemporaryDirectory(prefix="roundtrip-") as tmp:
        todo = []
        for k, src in enumerate(files):
            work = Path(tmp) / str(k)
            work.mkdir()
            try:
                to_glb(src, work / "mid.glb", a.api)
                if a.blender:
                    todo.append((src, work))
                    continue
                from_glb(work / "mid.glb", work / "back" / src.name, a.api)
                results[str(src)] = compare(src, work / "back")
            except Exception as exc:            # a table row, not a crash
                results[str(src)] = f"failed: {str(exc)[:200]}"
        if todo:
            jobs = [{"files": [str(src), *map(str, companions_of(src))],
                     "out": str(work / "back" / src.name)} for src, work in todo]
            site = shipped_site(a.blender, Path(tmp) / "site")
            for (src, work), res in zip(todo, blender_pass(a.blender, jobs, site)):
                if "error" in res or res.get("export") != ["FINISHED"]:
                    results[str(src)] = f"Blender: {res.get('error', res)}"[-300:]
                else:
                    results[str(src)] = compare(src, work / "back")
    same = sum(r is None for r in results.values())
    for f, r in results.items():
        if r is not None or not a.quiet:
            print(f"{'identical' if r is None else 'DIFFERS  '}  {f}" + (f"  -- {r}" if r else ""))
    print(f"identical {same} / {len(results)}")
    if a.json:
        a.json.write_text(json.dumps(results, indent=1))
    return 0 if same == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
