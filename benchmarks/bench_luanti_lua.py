"""What running a mod's Lua adds: reading mobs_animal with and without its Lua.

    python benchmarks/bench_luanti_lua.py [MOD_FOLDER ...] [--runs 7]

The issue's budget: reading mobs_animal's Lua adds at most 0.3 s to converting its folder. Each
run reads the folder afresh (the cache of read worlds cleared): mods found, ordered, media
gathered, and, with the Lua, the fenced child process started, every mod's init.lua run and the
registrations turned into records. Prints the median wall and CPU time of each (CPU: this
process's and the Lua process's, what a busy machine does not inflate) and their difference.
The corpus's mobs_animal is used by default (RETROMESH_CORPUS or ../shared/corpus).
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from retromesh.luanti.mods import clear_cache, read_mods  # noqa: E402

CORPUS = Path(os.environ.get("RETROMESH_CORPUS", ROOT.parent / "shared" / "corpus"))


def cpu() -> float:
    """CPU seconds of this process and its finished children (the Lua's process)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def median_seconds(folders: list[Path], lua: bool, runs: int) -> tuple[float, float, int]:
    """Median wall and CPU seconds of reading ``folders``, and the registrations found."""
    walls, cpus, count = [], [], 0
    for _ in range(runs):
        clear_cache()
        start, start_cpu = time.perf_counter(), cpu()
        world = read_mods(folders, lua=lua)
        walls.append(time.perf_counter() - start)
        cpus.append(cpu() - start_cpu)
        count = len(world.registrations)
    return statistics.median(walls), statistics.median(cpus), count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="*", type=Path, default=[CORPUS / "luanti" / "mobs_animal"])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    missing = [f for f in args.folders if not f.is_dir()]
    if missing:
        sys.exit(f"no such folder: {missing[0]}")
    without, without_cpu, _ = median_seconds(args.folders, False, args.runs)
    with_lua, with_cpu, regs = median_seconds(args.folders, True, args.runs)
    names = ", ".join(f.name for f in args.folders)
    print(f"{names} ({regs} registrations naming a model), median of {args.runs}:")
    print(f"  wall: without Lua {without * 1000:.0f} ms, with Lua {with_lua * 1000:.0f} ms: "
          f"the Lua adds {(with_lua - without) * 1000:.0f} ms (budget 300 ms)")
    print(f"  CPU (this process and the Lua's): {without_cpu * 1000:.0f} ms, "
          f"{with_cpu * 1000:.0f} ms: the Lua adds {(with_cpu - without_cpu) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
