"""Run a script inside Blender (the ``bpy`` wheel in its own venv, see tools/setup/30-blender.sh).

Each call is one subprocess of the venv's Python with ``BLENDER_USER_RESOURCES`` in a folder of
the caller's choice (a fresh temporary one by default), so nothing touches the user's Blender.
The script sees ``ARGS`` (the JSON-able dict passed in) and ``emit(obj)``, which prints ``obj``
as JSON and leaves with ``os._exit(0)`` (the bpy wheel can crash at interpreter exit). An
exception in the script comes back as :class:`BlenderError` with Blender's traceback.
"""
from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CACHE = Path.home() / ".cache" / "retromesh"
#: the bpy venvs the tier runs with (tools/setup/30-blender.sh, 31-blender45.sh)
VENVS = {"bpy42": Path(os.environ.get("RETROMESH_BPY_VENV", CACHE / "bpy42")),
         "bpy45": Path(os.environ.get("RETROMESH_BPY45_VENV", CACHE / "bpy45"))}
VENV = VENVS["bpy42"]
MARK = "RETROMESH-RESULT "

_RUNNER = f"MARK = {MARK!r}\n" + r'''
import json, os, sys, traceback
ARGS = json.loads(os.environ["RETROMESH_BLENDER_ARGS"])
def emit(obj):
    sys.stdout.flush()
    sys.stdout.write("\n" + MARK + json.dumps(obj, default=str) + "\n")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
try:
    import bpy
    _path = os.environ["RETROMESH_BLENDER_SCRIPT"]
    _g = {"__name__": "__retromesh_script__", "ARGS": ARGS, "emit": emit, "bpy": bpy}
    exec(compile(open(_path, encoding="utf-8").read(), _path, "exec"), _g)
    emit(None)
except BaseException:
    emit({"__error__": traceback.format_exc()})
'''


class BlenderError(RuntimeError):
    pass


def python(venv: Path = VENV) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


@functools.cache
def unavailable(venv: Path = VENV) -> str | None:
    """Why Blender cannot run from ``venv`` (None when it can)."""
    if not python(venv).is_file():
        return (f"no bpy venv at {venv} (run tools/setup/30-blender.sh or 31-blender45.sh, or "
                "set RETROMESH_BPY_VENV / RETROMESH_BPY45_VENV)")
    try:
        version = run("emit(bpy.app.version_string)", timeout=300, venv=venv)
    except (BlenderError, subprocess.TimeoutExpired, OSError) as exc:
        return f"the bpy venv at {venv} cannot run Blender: {str(exc)[-500:]}"
    return None if version else f"the bpy venv at {venv} printed nothing"


class Blender:
    """One bpy venv: ``run`` and ``unavailable`` bound to it."""

    def __init__(self, venv: Path):
        self.venv = Path(venv)

    def unavailable(self) -> str | None:
        return unavailable(self.venv)

    def run(self, script: str, args: dict[str, Any] | None = None, **kw: Any) -> Any:
        return run(script, args, venv=self.venv, **kw)


def run(script: str, args: dict[str, Any] | None = None, *, user_resources: str | Path | None = None,
        timeout: float = 600, venv: Path = VENV) -> Any:
    """Run ``script`` (source text) in Blender; returns what it passed to ``emit``."""
    with tempfile.TemporaryDirectory(prefix="retromesh-bpy-") as tmp:
        script_path = Path(tmp) / "script.py"
        script_path.write_text(script, encoding="utf-8")
        runner = Path(tmp) / "runner.py"
        runner.write_text(_RUNNER, encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        env.update(RETROMESH_BLENDER_ARGS=json.dumps(args or {}, default=str),
                   RETROMESH_BLENDER_SCRIPT=str(script_path),
                   BLENDER_USER_RESOURCES=str(user_resources or Path(tmp) / "user"),
                   PYTHONNOUSERSITE="1")
        done = subprocess.run([str(python(venv)), str(runner)], cwd=tmp, env=env, timeout=timeout,
                              capture_output=True, text=True, errors="replace")
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith(MARK)]
    if not lines:
        raise BlenderError(f"Blender exited with {done.returncode} and no result:\n"
                           f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    result = json.loads(lines[-1][len(MARK):])
    if isinstance(result, dict) and "__error__" in result:
        raise BlenderError(result["__error__"] + "\n--- stdout ---\n" + done.stdout[-3000:])
    return result


if __name__ == "__main__":          # python tests/helpers/blender_run.py script.py  (quick experiments)
    print(json.dumps(run(Path(sys.argv[1]).read_text()), indent=1))
