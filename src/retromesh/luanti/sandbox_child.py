"""The child process that runs mods' Lua (started by :mod:`retromesh.luanti.sandbox`).

Run as a script (``python -I -S sandbox_child.py LUPA_FOLDER``), it imports only the standard
library and ``lupa`` (from the folder it is given: no site packages are read at its start):
nothing of retromesh, so it starts fast and its address space is small before the limits are
set. It reads one job (JSON) from stdin::

    {"mods": [[name, folder], ...], "stand_ins": [missing dependency, ...],
     "lenient": [mod whose hard dependencies are missing, ...],
     "timeout": seconds per mod, "memory": bytes, "cpu": seconds for the whole run}

sets its own OS limits (address space: what it uses now plus ``memory``; CPU time), runs each
mod's ``init.lua`` in load order in one Lua state (shared globals, as the engine has) through
``stubs.lua``, and writes JSON lines to stdout as things happen (``begin``/``end`` of a mod,
``file``/``left`` as mod files run, ``reg`` for each registration, ``problem``), so that what
ran before a kill is kept by the parent.

Lua is handed three host functions (upvalues of the trusted stubs, out of the mods' reach):
reading a file inside the mod folders (links resolved), listing such a folder, writing a line.
The runtime registers neither ``python.eval`` nor the builtins, its ``python`` global is removed
and every Python attribute access from Lua is refused.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

MAX_FILE = 16 * 2**20       # a mod's Lua file larger than this is refused


def deny_attributes(obj: object, name: object, is_setting: bool) -> str:
    """lupa's attribute_filter: Lua never reaches a Python attribute."""
    raise AttributeError("no Python attribute is reachable from mods' Lua")


class Host:
    """The file access mods' Lua gets: inside the mod folders of the run only."""

    def __init__(self, mods: list[tuple[str, str]]) -> None:
        self.roots = [(name, os.path.realpath(folder)) for name, folder in mods]

    def locate(self, raw: bytes) -> tuple[str, str, str] | None:
        """(real path, mod, path relative to the mod) when ``raw`` is inside a mod folder."""
        real = os.path.realpath(os.fsdecode(raw))
        for name, root in self.roots:
            if real == root or real.startswith(root + os.sep):
                return real, name, os.path.relpath(real, root).replace(os.sep, "/")
        return None

    def read(self, raw: bytes, as_file: object = None) -> tuple[bytes | None, bytes, bool]:
        """A mod file's text and its chunk name, or (None, message, refused)."""
        shown = raw.decode("utf-8", "replace")
        found = self.locate(raw)
        if found is None:
            what = "io.open" if as_file else "reading"
            return None, (f"{what} refused: '{shown}' is outside the mod folders").encode(), True
        real, mod, rel = found
        if os.path.exists(real) and not os.path.isfile(real):     # a folder, a FIFO...
            return None, f"cannot open {shown}: not a regular file".encode(), False
        try:
            if os.path.getsize(real) > MAX_FILE:
                return None, f"'{shown}' is larger than {MAX_FILE >> 20} MiB".encode(), True
            with open(real, "rb") as f:
                return f.read(), f"@{mod}/{rel}".encode(), False
        except OSError as e:
            return None, f"cannot open {shown}: {e.strerror}".encode(), False

    def listdir(self, raw: bytes, want: int) -> tuple[bytes, ...]:
        """Names in a folder inside a mod: want 0 all, 1 folders, 2 files; sorted."""
        found = self.locate(raw)
        if found is None or not os.path.isdir(found[0]):
            return ()
        out = []
        try:
            for entry in sorted(os.scandir(found[0]), key=lambda e: e.name):
                if want == 0 or (want == 1) == entry.is_dir():
                    out.append(os.fsencode(entry.name))
        except OSError:
            return ()
        return tuple(out)


def emit(line: bytes) -> None:
    sys.stdout.buffer.write(line + b"\n")
    sys.stdout.buffer.flush()


def set_limits(memory: int, cpu: float) -> None:
    """The OS fence: what a mod's own pcall cannot swallow nor a compiled loop skip."""
    try:
        import resource
    except ImportError:         # not on this platform: the parent's wall clock still stops it
        return
    used = 0
    try:
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        used = 256 * 2**20
    limit = used + memory
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError):
        pass
    seconds = max(1, int(cpu + 0.999))
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    except (ValueError, OSError):
        pass


def runtime() -> Any:
    try:
        import lupa.luajit21 as lua_module  # Luanti's own dialect
    except ImportError:
        try:
            import lupa.lua51 as lua_module  # the language LuaJIT implements
        except ImportError:
            return None
    lua = lua_module.LuaRuntime(register_eval=False, register_builtins=False,
                                unpack_returned_tuples=True, encoding=None,
                                attribute_filter=deny_attributes)
    g = lua.globals()
    g.python = None
    lua.eval("package").loaded.python = None
    return lua


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1]:
        sys.path.append(sys.argv[1])        # lupa's folder: the child runs without site packages
    job = json.loads(sys.stdin.buffer.read())
    mods = [(str(n), str(p)) for n, p in job["mods"]]
    lua = runtime()
    if lua is None:
        emit(json.dumps({"t": "fatal", "message": "lupa is not installed"}).encode())
        return 0
    host = Host(mods)
    source = Path(__file__).with_name("stubs.lua").read_bytes()
    loader = lua.eval("loadstring")(source, b"=retromesh stubs")
    api = loader(host.read, host.listdir, emit, time.monotonic, float(job["timeout"]),
                 b"/retromesh-no-world")
    set_limits(int(job["memory"]), float(job["cpu"]))
    lenient = set(job.get("lenient", ()))
    for name, folder in mods:
        api.add_mod(name.encode(), os.path.realpath(folder).encode(), name in lenient)
    for name in job.get("stand_ins", ()):
        api.stand_in(str(name).encode())
    for name, _ in mods:
        api.run_mod(name.encode())
    api.finish()
    emit(b'{"t":"done"}')
    return 0


if __name__ == "__main__":
    sys.exit(main())
