#!/usr/bin/env python3
"""retromesh's mutation fuzzer.

    python tools/fuzz/run.py --family b3d --cases 100000        # a campaign
    python tools/fuzz/run.py --cases 70 --seed 1 --no-save      # what CI runs (every family)

Seeds are the files in ``examples/`` and, for glTF, what our writers make of them (GLB, .gltf
with an embedded buffer, .gltf with a .bin beside it). Each case is a seed mutated by
``mutators.py`` (byte flips, interesting integers/floats, count fields inflated, truncation at
record boundaries, block edits; structure-aware edits for glTF), written beside the seed's
companions into ``<work>/<family>/a/b/in/`` and run by ``worker.py`` in a subprocess with an
address-space cap (RLIMIT_AS) and a timeout: read -> load -> save(.glb) and, per family, save
through the writers of the game formats into ``.../out/``.

Allowed outcomes: success, FormatError while reading, DocumentError/UnsupportedError while
writing. Findings: any other exception, a crash, a hang (``--timeout``), a read or a save taking more
than ``--slow`` seconds of CPU, an allocation hitting the cap or the RSS growing by more than ``--rss-mb``,
and any file opened outside ``in/`` or written outside ``out/``. The first reproducer of each
distinct finding is saved as ``tests/regressions/<family>/<sha1>.<ext>`` (``--no-save`` to
skip), where the normal test suite runs it. A JSON summary goes to stdout.
"""
from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from driver import SRC, Driver
from mutators import mutate_bytes, mutate_gltf

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
REGRESSIONS = ROOT / "tests" / "regressions"

#: family -> (seed files relative to examples/, outputs every case is saved to)
FAMILIES: dict[str, tuple[list[str], list[str]]] = {
    "b3d": (["crate.b3d", "wiggle.b3d"], ["out.glb", "out.b3d"]),
    "gltf": ([], ["out.glb"]),
    "lugaru": (["lugaru/box.solid"], ["out.glb", "out.solid"]),
    "overgrowth": (["overgrowth/walk.anm", "overgrowth/wave.anm", "overgrowth/stick.phxbn",
                    "overgrowth/stick.fzx", "overgrowth/example.sav"], ["out.glb"]),
    "lithtech": (["lithtech/model_v6.abc", "lithtech/model_v12.abc", "lithtech/model.lta",
                  "lithtech/model.ltc"], ["out.glb", "out.abc", "out.lta", "out.ltc"]),
    # textures: read, written back, counted and converted to PNG (no scene of their own)
    "lithtech-dtx": (["lithtech/model_v12.dtx", "lithtech/model_v12_head.dtx",
                      "lithtech/model_v6.dtx"], ["out.png"]),
    "lostsaga": (["lostsaga/column.msh", "lostsaga/column.skl", "lostsaga/column_wave.ani"],
                 ["out.glb", "out.msh"]),
    "westwood": (["westwood/tank.vxl", "westwood/tank.hva", "westwood/tank.vox"],
                 ["out.glb", "out.vxl"]),
}
#: families whose seeds are a game's folder layout (made by our own writers, see layout_seeds):
#: every case copies the whole layout, mutates one of its files, and may read the layout only
LAYOUTS = {"lugaru-character": ["out.glb", "out.lugaru-skeleton"],
           "overgrowth-xml": ["out.glb"],
           "lithtech-skins": ["out.glb", "out.abc"]}
#: layouts read through one file whatever file is mutated (a model, wearing mutated skins)
LAYOUT_INPUT = {"lithtech-skins": "Chars/Models/Hero_Action.abc"}
#: families whose files have no scene: converted to each output by a direct converter
CONVERTED = {"lithtech-dtx"}
FAMILIES.update({name: ([], outputs) for name, outputs in LAYOUTS.items()})

#: writers a mutated glTF is also sent through (one per case, in turn)
GLTF_WRITERS = ["out.b3d", "out.msh", "out.vxl", "out.abc", "out.gltf", "out.solid"]


def gltf_seeds(folder: Path) -> list[Path]:
    """GLB / .gltf files our writers make from the examples (the writers' fixtures)."""
    sys.path.insert(0, str(SRC))
    import warnings

    import retromesh
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("crate.b3d", "wiggle.b3d", "lostsaga/column.msh", "lithtech/model_v12.abc",
                     "westwood/tank.vxl"):
            src = EXAMPLES / name
            stem = Path(name).stem
            scene = retromesh.load(src)
            retromesh.save(scene, folder / f"{stem}.glb")
            retromesh.save(scene, folder / f"{stem}_embedded.gltf", embed_buffer=True)
            out += [folder / f"{stem}.glb", folder / f"{stem}_embedded.gltf"]
        retromesh.save(retromesh.load(EXAMPLES / "crate.b3d"), folder / "crate_bin.gltf")
        out.append(folder / "crate_bin.gltf")
    return out


def prepare_case_dir(work: Path, family: str) -> tuple[Path, Path]:
    """``<work>/<family>/a/b/{in,out}`` with bait around them: a secret file the input must
    not reach, a symlink out of ``in/`` and a FIFO in it."""
    base = work / family / "a" / "b"
    inp, out = base / "in", base / "out"
    inp.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    (base / "secret.txt").write_bytes(b"SECRET-" * 8)
    (work / family / "a" / "x.bin").write_bytes(b"\0" * 64)
    link = inp / "link.bin"
    if not link.is_symlink():
        link.symlink_to("../secret.txt")
    pipe = inp / "pipe.bin"
    if not pipe.exists() and hasattr(os, "mkfifo"):
        os.mkfifo(pipe)
    return inp, out


def _clean(folder: Path, keep: set[str]) -> None:
    for p in folder.iterdir():
        if p.name in keep:
            continue
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink()


def signature(result: dict) -> str:
    status = result["status"]
    if status == "exception":
        return f"exception {result.get('type')} at {result.get('where')}"
    if status == "slow" and result.get("step_cpu_seconds"):
        steps = result["step_cpu_seconds"]
        return f"slow {max(steps, key=steps.get)}"
    if status == "escape":
        return "escape " + result.get("message", "").split(" ")[0]
    return status


FINDINGS = {"exception", "crash", "hang", "memory", "escape", "slow"}


def _is_slow(result: dict, slow: float) -> bool:
    """One step of the case (the read, or one save) over ``slow`` seconds of CPU time: what one
    command does with the file. The machine's load does not count; a case blocked on I/O shows
    up as a hang (``--timeout``)."""
    steps = result.get("step_cpu_seconds")
    if steps:
        return max(steps.values()) > slow
    return result.get("cpu_seconds", result.get("seconds", 0)) > slow


def layout_seeds(family: str, folder: Path) -> list[Path]:
    """A small character in its game's folder layout under ``folder`` (``Data/...``); the
    files a case may mutate, relative to ``folder``."""
    sys.path.insert(0, str(SRC))
    from retromesh.formats.lugaru import (
        animation as lugaru_animation,
        samples as lugaru_samples,
        skeleton as lugaru_skeleton,
        solid,
    )
    from retromesh.formats.overgrowth import ogxml_samples
    folder.mkdir(parents=True, exist_ok=True)
    if family == "overgrowth-xml":
        ogxml_samples.write_character(folder)
    elif family == "lithtech-skins":
        from retromesh.formats.lithtech import dtx_samples, samples
        dtx_samples.write_game_layout(folder, samples.sample_bytes(12))
    else:
        data = folder / "Data"
        for sub in ("Skeleton", "Animations", "Models"):
            (data / sub).mkdir(parents=True, exist_ok=True)
        (data / "Skeleton" / "BasicFigure").write_bytes(
            lugaru_skeleton.write(lugaru_samples.figure()))
        (data / "Animations" / "Idle").write_bytes(
            lugaru_animation.write(lugaru_samples.animation()))
        (data / "Models" / "Body.solid").write_bytes(solid.write(lugaru_samples.body()))
    skip = {".tga", ".png"}                     # images: Pillow's business, not ours
    return sorted(p.relative_to(folder) for p in folder.rglob("*")
                  if p.is_file() and p.suffix.lower() not in skip)


def run_family(family: str, cases: int, rng: random.Random, work: Path, *, save: Path | None,
               timeout: float, slow: float, mem_mb: int, rss_mb: int,
               deadline: float | None = None, log=None, jobs: int = 1) -> dict:
    """``cases`` cases of ``family`` over ``jobs`` workers at once (each with its own case
    folder and a random stream drawn from ``rng``; one job uses ``rng`` itself, so a seed
    replays the same cases)."""
    names, outputs = FAMILIES[family]
    layout = work / f"_{family}_layout" if family in LAYOUTS else None
    if layout is not None:
        seeds = [layout / rel for rel in layout_seeds(family, layout)]
    elif family == "gltf":
        seeds = gltf_seeds(work / "_gltf_seeds")
    else:
        seeds = [EXAMPLES / n for n in names]
    fixed = {"link.bin", "pipe.bin"}
    counts: dict[str, int] = {}
    findings: dict[str, dict] = {}
    lock = threading.Lock()
    numbers = itertools.count()
    started = time.monotonic()

    def record(i: int, result: dict, mutated: bytes, ext: str) -> None:
        counts[result["status"]] = counts.get(result["status"], 0) + 1
        done = sum(counts.values())
        if log and done % 10000 == 0:
            rate = done / max(time.monotonic() - started, 1e-9)
            print(f"[{family}] {done} cases, {rate:.0f}/s, {counts}", file=log, flush=True)
        if result["status"] not in FINDINGS:
            return
        sig = signature(result)
        entry = findings.setdefault(sig, {"count": 0, "example": result})
        entry["count"] += 1
        if entry["count"] > 1:
            return
        digest = hashlib.sha1(mutated).hexdigest()
        entry["sha1"] = digest
        if save is not None:
            dest = save / family / f"{digest}.{ext}"
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(mutated)
            entry["saved"] = str(dest)
        if log:
            print(f"[{family} {i}] {sig}: {result.get('message', '')[:200]}", file=log, flush=True)

    def lane(folder: Path, lane_rng: random.Random) -> None:
        inp, out = prepare_case_dir(folder, family)
        driver = Driver(timeout=timeout, mem_mb=mem_mb, rss_mb=rss_mb)
        try:
            while True:
                with lock:
                    i = next(numbers)
                if i >= cases or (deadline is not None and time.monotonic() > deadline):
                    return
                seed = lane_rng.choice(seeds)
                data = seed.read_bytes()
                ext = seed.suffix.lower().lstrip(".")
                if ext in ("glb", "gltf") and lane_rng.random() < 0.8:
                    mutated = mutate_gltf(data, ext, lane_rng)
                else:
                    mutated = mutate_bytes(data, lane_rng)
                _clean(inp, fixed)
                _clean(out, set())
                case: dict = {}
                if layout is not None:                   # the whole layout, one file mutated
                    shutil.copytree(layout, inp, dirs_exist_ok=True)
                    target = inp / seed.relative_to(layout)
                    case["root"] = str(inp)
                    if family in LAYOUT_INPUT:
                        case["read"] = str(inp / LAYOUT_INPUT[family])
                else:
                    for comp in seed.parent.iterdir():   # companions: .bin, .skl, .hva, .png ...
                        if comp.is_file() and comp.stem.split("_")[0] == seed.stem.split("_")[0]:
                            shutil.copyfile(comp, inp / comp.name)
                    target = inp / seed.name
                if family in CONVERTED:
                    case["convert"] = True
                target.write_bytes(mutated)
                outs = list(outputs)
                if family == "gltf":
                    outs.append(GLTF_WRITERS[i % len(GLTF_WRITERS)])
                result = driver.run({"input": str(target), **case,
                                     "outputs": [str(out / o) for o in outs]})
                if _is_slow(result, slow) and result["status"] not in FINDINGS:
                    result["status"] = "slow"
                    result["message"] = (f"CPU s per step {result.get('step_cpu_seconds')}, "
                                         f"{result['seconds']} s wall")
                with lock:
                    record(i, result, mutated, ext)
        finally:
            driver.stop()

    if jobs <= 1:
        lane(work, rng)
    else:
        threads = [threading.Thread(target=lane, args=(work / f"job{j}", random.Random(rng.random())))
                   for j in range(jobs)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    return {"family": family, "cases": sum(counts.values()), "outcomes": counts,
            "findings": findings, "seconds": round(time.monotonic() - started, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", action="append", choices=sorted(FAMILIES),
                    help="family to fuzz (repeatable; default: all)")
    ap.add_argument("--cases", type=int, default=1000, help="cases per family")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds before a case is a hang")
    ap.add_argument("--slow", type=float, default=1.0, help="seconds after which a case is slow")
    ap.add_argument("--mem-mb", type=int, default=1536, help="address-space cap of the worker")
    ap.add_argument("--rss-mb", type=int, default=400, help="RSS growth counted as a finding")
    ap.add_argument("--minutes", type=float, default=None, help="stop each family after this")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="workers at once (one per core)")
    ap.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temp one)")
    ap.add_argument("--no-save", action="store_true", help="do not save reproducers")
    ap.add_argument("--save-dir", type=Path, default=REGRESSIONS)
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="retromesh-fuzz-"))
    rng = random.Random(args.seed)
    summary = []
    for family in args.family or sorted(FAMILIES):
        deadline = time.monotonic() + args.minutes * 60 if args.minutes else None
        summary.append(run_family(family, args.cases, rng, work,
                                  save=None if args.no_save else args.save_dir,
                                  timeout=args.timeout, slow=args.slow, mem_mb=args.mem_mb,
                                  rss_mb=args.rss_mb, deadline=deadline, log=sys.stderr,
                                  jobs=args.jobs))
        print(json.dumps(summary[-1]), file=sys.stderr, flush=True)
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(summary, indent=1))
    return 1 if any(s["findings"] for s in summary) else 0


if __name__ == "__main__":
    sys.exit(main())
