"""Structure-aware fuzzing of the data our writers keep in glTF extras.

Every writer reads back what ``to_scene`` put in extras (B3D chunk layouts, kept .vxl/.vox
files, Lost Saga and LithTech records...). A glTF from the internet can carry anything there,
so each case takes one example scene, replaces one value somewhere in its extras with a hostile
JSON value (wrong type, huge or negative number, garbage base64, empty or nested container) and
saves the scene with every writer. Allowed: success, a LossWarning, a RetromeshError the writer
raised itself. A finding: any other exception, or a DocumentError wrapping one (the registry's
"failed on this content").

    python tools/fuzz/extras.py [--cases 2000] [--seed 1]
"""
from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import tempfile
import traceback
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

import retromesh  # noqa: E402

EX = ROOT / "examples"
#: (example, load options) whose scenes carry the extras each writer restores
SCENES = [
    ("crate.b3d", {}), ("wiggle.b3d", {}),
    ("lostsaga/column.msh", {"skeleton": EX / "lostsaga/column.skl",
                             "animations": [EX / "lostsaga/column_wave.ani"]}),
    ("lithtech/model_v12.abc", {}), ("lithtech/model_v6.abc", {}), ("lithtech/model.lta", {}),
    ("westwood/tank.vxl", {}), ("westwood/tank.vox", {}),
    ("lugaru/box.solid", {}),
    ("overgrowth/stick.phxbn", {"mesh": EX / "overgrowth/stick.obj",
                                "animations": [EX / "overgrowth/walk.anm"]}),
]
TARGETS = ["out.glb", "out.b3d", "out.msh", "out.abc", "out.lta", "out.vxl", "out.vox",
           "out.solid", "out.phxbn"]

HOSTILE = [None, True, 0, -1, 2**31, 2**32 + 5, -2**63, 10**30, 1e308, -0.0, 0.5, "", "x",
           "!!not base64", "AAAA", "eJwDAAAAAAE=", [], [1], [[1, 2]], ["a", None], {}, {"a": 1},
           [0] * 17, list(range(5)), {"": []}]


def containers(scene) -> list[dict]:
    out = [scene.extras]
    out += [n.extras for n in scene.nodes] + [m.extras for m in scene.meshes]
    out += [p.extras for m in scene.meshes for p in m.primitives]
    out += [m.extras for m in scene.materials] + [a.extras for a in scene.animations]
    out += [s.extras for s in scene.skins]
    return [c for c in out if isinstance(c, dict) and c]


def slots(value, path=()):
    """Every (container, key) inside a JSON value, JSON-in-strings included."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield value, k
            yield from slots(v)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield value, i
            yield from slots(v)


def mutate(scene, rng: random.Random) -> str:
    boxes = containers(scene)
    box = rng.choice(boxes)
    # a JSON text in extras (the kept records) is mutated inside, then written back as text
    places = list(slots(box))
    holder, key = rng.choice(places)
    old = holder[key]
    if isinstance(old, str) and old[:1] in "{[" and rng.random() < 0.8:
        try:
            inner = json.loads(old)
        except ValueError:
            inner = None
        if isinstance(inner, (dict, list)) and (inner_places := list(slots(inner))):
            h2, k2 = rng.choice(inner_places)
            h2[k2] = copy.deepcopy(rng.choice(HOSTILE))
            holder[key] = json.dumps(inner)
            return f"{key!r} -> inner {k2!r} = {h2[k2]!r:.40}"
    holder[key] = copy.deepcopy(rng.choice(HOSTILE))
    return f"{key!r} = {holder[key]!r:.40}"


def run(cases: int, seed: int) -> dict[str, dict]:
    rng = random.Random(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bases = [retromesh.load(EX / name, **opts) for name, opts in SCENES]
    findings: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for case in range(cases):
            k = rng.randrange(len(bases))
            scene = copy.deepcopy(bases[k])
            what = mutate(scene, rng)
            for target in TARGETS:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        retromesh.save(scene, Path(tmp) / target)
                except retromesh.RetromeshError as exc:
                    cause = exc.__cause__
                    if cause is None or isinstance(cause, retromesh.RetromeshError):
                        continue
                    err = cause
                except Exception as exc:
                    err = exc
                else:
                    continue
                frame = traceback.extract_tb(err.__traceback__)[-1]
                sig = f"{type(err).__name__} at {Path(frame.filename).name}:{frame.lineno} ({target})"
                if sig not in findings:
                    findings[sig] = {"case": case, "scene": SCENES[k][0], "edit": what,
                                     "message": str(err)[:200]}
                    print(sig, findings[sig], flush=True)
    return findings


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    found = run(a.cases, a.seed)
    print(f"{a.cases} cases, {len(found)} findings")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
