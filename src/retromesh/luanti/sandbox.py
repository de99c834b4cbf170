"""Running mods' Lua, fenced: a child process under OS limits, stopped from here by the clock.

A mod's registration code is untrusted and is run by default on a plain ``convert``. The fence,
from the inside out (the details are in ``stubs.lua`` and ``sandbox_child.py``):

- the mods' environment has no ``io`` (but a read-only ``io.open`` answering for files inside
  the mod folders: ``nil, message`` for a missing one, an error for one outside), ``os`` reduced
  to ``time``/``clock``/``date``/``difftime``, no ``require``, ``debug``, ``string.dump`` or
  bytecode loading (``load``/``loadstring`` take text only), ``dofile``/``loadfile`` only inside
  the mod folders, and no Python object (lupa's ``python`` global removed, no ``eval`` or
  builtins registered, every attribute access refused);
- a count hook stops a mod past ``timeout`` seconds (the JIT is off, so compiled loops cannot
  skip it), and the mod's own ``pcall``/``xpcall``/``coroutine.resume`` re-raise the time and
  memory limits instead of swallowing them;
- the child process's address space is limited (``RLIMIT_AS``: what it uses at start plus
  ``memory``) and its CPU time (``RLIMIT_CPU``), and this process kills it when a mod runs past
  its time plus a grace second (a loop inside a C library call, which no hook sees). The mods
  after the one that was killed are run again in a new child, without it.

What the child reports comes back as plain JSON (functions dropped): the registrations, as
dictionaries, and the problems as :class:`~retromesh.luanti.model.LuaProblem`.
"""
from __future__ import annotations

import importlib.util
import json
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..records import record
from .model import LuaProblem

__all__ = ["LuaRun", "run_mods", "interpreter", "lua_unavailable", "DEFAULT_TIMEOUT",
           "DEFAULT_MEMORY", "NOT_RUN"]

#: seconds one mod's registration code may run
DEFAULT_TIMEOUT = 5.0
#: bytes of address space mods' Lua may add to the child process
DEFAULT_MEMORY = 512 * 2**20
#: the killed mods after which the rest are given up (each kill costs a new child)
MAX_KILLS = 4
GRACE = 2.0
CHILD = Path(__file__).with_name("sandbox_child.py")
#: how a problem that kept every mod's Lua from running begins (``dress`` warns it once)
NOT_RUN = "the mods' Lua was not run"


@record
class LuaRun:
    """What running the mods gave: registrations (plain JSON objects: ``api``, ``name``,
    ``mod``, ``model``, ``source``, ``def``) in load order, and the problems."""
    registrations: list[dict[str, Any]]
    problems: list[LuaProblem]
    seconds: float = 0.0


def run_mods(mods: Sequence[tuple[str, Path]], *, stand_ins: Sequence[str] = (),
             lenient: Sequence[str] = (), timeout: float = DEFAULT_TIMEOUT,
             memory: int = DEFAULT_MEMORY) -> LuaRun:
    """Run each mod's ``init.lua`` in this order (``(name, folder)`` pairs) in one fenced child
    process; a mod that fails is reported and the others go on. ``stand_ins``: hard
    dependencies missing from the run, whose global tables answer every call with a no-op;
    ``lenient``: the mods that depend on them, for which any global nothing defined does."""
    start = time.perf_counter()
    why = lua_unavailable()
    if why is not None:
        return LuaRun([], [LuaProblem("", "", f"{NOT_RUN} (as with --no-lua): {why}")],
                      time.perf_counter() - start)
    problems: list[LuaProblem] = []
    kept: dict[str, list[dict[str, Any]]] = {}     # a killed mod: what it registered before
    regs: list[dict[str, Any]] = []
    for _ in range(MAX_KILLS + 1):
        todo = [(n, p) for n, p in mods if n not in kept]
        regs, found, killed = _run_child(todo, stand_ins, lenient, timeout, memory)
        problems += found
        if killed is None:
            break
        kept[killed] = [r for r in regs if r.get("mod") == killed]
    else:
        problems += [LuaProblem(n, "", "not run: too many mods had to be stopped")
                     for n, _ in mods if n not in kept]
        regs = []
    order = {n: i for i, (n, _) in enumerate(mods)}
    for killed_regs in kept.values():
        regs += killed_regs
    # load order (a killed mod's registrations go back to its place); sorted() is stable
    regs = sorted(regs, key=lambda r: order.get(str(r.get("mod")), len(order)))
    unique = list(dict.fromkeys(problems))     # a run again reports the earlier mods' again
    return LuaRun(regs, unique, time.perf_counter() - start)


def _lupa_folder() -> str:
    """The folder lupa is installed in (found without importing it), for the child's path."""
    spec = importlib.util.find_spec("lupa")
    origin = spec.origin if spec is not None else None
    return str(Path(origin).parent.parent) if origin else ""


def interpreter() -> Path | None:
    """The Python the child runs on: ``sys.executable``, unless that is not a Python (an
    application that embeds Python may name itself there), then the ``python3.X``/``python3``/
    ``python`` of ``sys.prefix`` (Blender's bundled Python: ``<version>/python/bin``); None
    when there is none. In Blender 4.2+ ``sys.executable`` is its bundled Python already; with
    the ``bpy`` wheel it is the venv's."""
    exe = Path(sys.executable) if sys.executable else None
    if exe is not None and exe.name.lower().startswith("python") and exe.is_file():
        return exe
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    names = ([f"python{version}.exe", "python.exe"] if sys.platform == "win32"
             else [f"python{version}", f"python{sys.version_info[0]}", "python"])
    for folder in (Path(sys.prefix) / "bin", Path(sys.prefix)):
        for name in names:
            if (folder / name).is_file():
                return folder / name
    return None


def lua_unavailable() -> str | None:
    """Why mods' Lua cannot run here (None when it can): no ``lupa`` (a Blender extension
    built for a platform lupa has no wheel for), or no Python to start the child with."""
    if importlib.util.find_spec("lupa") is None:
        return ("lupa, the Lua runtime, is not installed for this Python "
                f"({sys.version_info[0]}.{sys.version_info[1]}, {sys.platform}): "
                "`pip install lupa`; in Blender, an extension zip with lupa's wheel for this "
                "platform")
    if interpreter() is None:
        return f"no Python interpreter found to run it in (sys.executable is {sys.executable!r})"
    return None


def _spawn(stderr: Any) -> subprocess.Popen[bytes]:
    # -I -S: no site packages, environment or script folder on the child's path (its start-up
    # is most of what the Lua costs); it is given lupa's folder alone
    return subprocess.Popen([str(interpreter()), "-I", "-S", str(CHILD), _lupa_folder()],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)


def _reader(stream: Any, lines: queue.Queue[bytes | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def _run_child(mods: list[tuple[str, Path]], stand_ins: Sequence[str], lenient: Sequence[str],
               timeout: float, memory: int,
               ) -> tuple[list[dict[str, Any]], list[LuaProblem], str | None]:
    """One child over ``mods``: (registrations, problems, the mod it was killed in or None)."""
    if not mods:
        return [], [], None
    job = {"mods": [[n, str(p)] for n, p in mods], "stand_ins": list(stand_ins),
           "lenient": list(lenient),
           "timeout": timeout, "memory": memory,
           "cpu": (timeout + GRACE) * (len(mods) + 1) + 2}
    # stderr to a file: a child writing much there never blocks on a full pipe
    with tempfile.TemporaryFile() as errors:
        return _watch(_spawn(errors), job, mods, timeout, errors)


def _watch(proc: subprocess.Popen[bytes], job: dict[str, Any], mods: list[tuple[str, Path]],
           timeout: float, errors: Any,
           ) -> tuple[list[dict[str, Any]], list[LuaProblem], str | None]:
    """Feed the child its job and take its lines, killing it when a mod runs past its time."""
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(job).encode())
        proc.stdin.close()
    except OSError:
        pass
    lines: queue.Queue[bytes | None] = queue.Queue()
    reader = threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True)
    reader.start()
    state = _ChildState()
    allowed = timeout + GRACE
    deadline = time.monotonic() + allowed + 5.0     # the first mod's, and the child's start-up
    try:
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                proc.kill()
                return state.regs, state.problems + [state.stopped(allowed)], state.mod_or(mods)
            if line is None:
                break
            if state.take(line):
                deadline = time.monotonic() + allowed
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        reader.join(timeout=5.0)
        if not reader.is_alive():
            proc.stdout.close()
        errors.seek(0)
        err = errors.read(65536)
    if not state.done:
        return state.regs, state.problems + [state.died(proc.returncode, err)], state.mod_or(mods)
    return state.regs, state.problems, None


class _ChildState:
    """The child's lines as they come: registrations, problems, where it is."""

    def __init__(self) -> None:
        self.regs: list[dict[str, Any]] = []
        self.problems: list[LuaProblem] = []
        self.mod: str | None = None
        self.files: list[str] = []
        self.done = False

    def take(self, line: bytes) -> bool:
        """Take one line; True when a new mod began (its clock starts)."""
        try:
            msg = json.loads(line.decode("utf-8", "replace"))
        except ValueError:
            return False
        kind = msg.get("t")
        if kind == "reg" and isinstance(msg.get("def"), dict):
            self.regs.append(msg)
        elif kind == "problem":
            mod = str(msg.get("mod", ""))
            self.problems.append(LuaProblem(mod, _relative(str(msg.get("where", "")), mod),
                                            str(msg.get("message", ""))))
        elif kind == "file":
            self.files.append(str(msg.get("file", "")))
        elif kind == "left" and self.files:
            self.files.pop()
        elif kind == "begin":
            self.mod, self.files = str(msg.get("mod", "")), []
            return True
        elif kind == "end":
            self.mod = None
        elif kind == "done":
            self.done = True
        elif kind == "fatal":
            self.done = True
            self.problems.append(LuaProblem("", "", str(msg.get("message", ""))))
        return False

    def mod_or(self, mods: list[tuple[str, Path]]) -> str:
        # killed between mods (start-up, the after-load callbacks): the first one not done
        return self.mod if self.mod is not None else mods[0][0]

    def where(self) -> str:
        return _relative(self.files[-1], self.mod or "") if self.files else ""

    def stopped(self, timeout: float) -> LuaProblem:
        return LuaProblem(self.mod or "", self.where(),
                          f"stopped: not done within {timeout:g} s (an endless loop, or stuck in a library "
                          "call); the other mods go on")

    def died(self, code: int | None, err: bytes) -> LuaProblem:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] if err else []
        why = f" ({tail[0]})" if tail else ""
        return LuaProblem(self.mod or "", self.where(),
                          f"the Lua process ended (exit {code}: over its memory or CPU limit?){why}")


def _relative(where: str, mod: str) -> str:
    """``mod/file:line`` as ``file:line`` for the mod itself; another mod's file keeps its mod."""
    prefix = mod + "/"
    return where[len(prefix):] if mod and where.startswith(prefix) else where
