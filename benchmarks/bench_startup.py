"""Start-up benchmark: what a one-file conversion costs in its own process.

    python benchmarks/bench_startup.py [--runs 10] [--src DIR] [--python EXE] [--top 15]

Prints the heaviest imports (``python -X importtime``, cumulative) of
``retromesh convert examples/crate.b3d -o x.glb``, then the median wall time over ``--runs``
interleaved runs of: a bare ``python -c "import numpy"`` (the floor), the library call
(``retromesh.convert`` in ``python -c``) and the command. ``--src`` runs another checkout's
``src`` (e.g. ``/work/main/src`` for a before/after), ``--python`` another interpreter (e.g. a
venv with another typer). The goal: the command within 2x the numpy floor.

Anything a site-packages ``.pth`` file imports at interpreter start (such as ``certifi``
in some sandboxed environments) is paid by the floor as well and is listed apart.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def importtime(python: str, args: list[str], env: dict[str, str]) -> list[tuple[int, int, str]]:
    err = subprocess.run([python, "-X", "importtime", *args], env=env, capture_output=True,
                         text=True, check=True).stderr
    rows = []
    for line in err.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, self_us, cum_us, name = (p.strip() for p in line.replace("import time:", "|").split("|"))
        rows.append((int(self_us), int(cum_us), name))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--src", default=str(ROOT / "src"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=args.src)
    src_model = str(ROOT / "examples" / "crate.b3d")
    out = Path(tempfile.mkdtemp()) / "x.glb"
    cmds = {
        "python -c 'import numpy' (floor)": ["-c", "import numpy"],
        "retromesh.convert (library)": ["-c", "import retromesh; "
                                        f"retromesh.convert({src_model!r}, {str(out)!r})"],
        "retromesh convert crate.b3d (CLI)": ["-m", "retromesh", "convert", src_model, "-o", str(out),
                                              "--overwrite"],
    }
    # the CLI may not know --overwrite (older trees): fall back to writing a fresh target
    probe = subprocess.run([args.python, *cmds["retromesh convert crate.b3d (CLI)"]], env=env,
                           capture_output=True, text=True)
    if probe.returncode != 0:
        cmds["retromesh convert crate.b3d (CLI)"] = ["-m", "retromesh", "convert", src_model, "-o",
                                                     str(out)]
    print(f"python {args.python}  src {args.src}")
    site = {n for _, _, n in importtime(args.python, ["-c", "pass"], env)}
    rows = importtime(args.python, cmds["retromesh convert crate.b3d (CLI)"], env)
    print(f"\nheaviest imports of the CLI conversion (cumulative ms; {len(rows)} modules):")
    for self_us, cum_us, name in sorted(rows, key=lambda r: -r[1])[:args.top]:
        tag = "  (interpreter start, .pth)" if name.strip() in site else ""
        print(f"  {cum_us / 1000:8.1f} {self_us / 1000:8.1f}  {name}{tag}")
    watched = ("pydantic", "pygltflib", "dataclasses_json", "marshmallow", "certifi", "rich",
               "typer", "click", "PIL")
    present = sorted({n.strip().split(".")[0] for _, _, n in rows} & set(watched))
    # importlib.import_module (how the registry loads families) is not listed by importtime
    cli_args = cmds["retromesh convert crate.b3d (CLI)"][2:]
    probe = (f"import runpy, sys\nsys.argv = ['retromesh', *{cli_args!r}]\ntry:\n"
             "    runpy.run_module('retromesh', run_name='__main__')\nexcept SystemExit:\n    pass\n"
             "print(' '.join(sorted(m for m in sys.modules if m.startswith('retromesh.formats.')"
             " and m.count('.') == 2 or m == 'retromesh.gltf')))")
    fams = subprocess.run([args.python, "-c", probe], env=env, capture_output=True, text=True,
                          check=True).stdout.strip().splitlines()[-1:]
    fams = fams[0].split() if fams else []
    print(f"  heavy packages imported: {', '.join(present) or 'none'}")
    print(f"  format modules imported: {', '.join(fams) or 'none'}")

    times: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(args.runs):                      # interleaved: the load of the machine is shared
        for k, c in cmds.items():
            t = time.perf_counter()
            subprocess.run([args.python, *c], env=env, check=True, capture_output=True)
            times[k].append(time.perf_counter() - t)
            out.unlink(missing_ok=True)
    floor = statistics.median(times["python -c 'import numpy' (floor)"])
    print(f"\nwall time, median of {args.runs} interleaved runs:")
    for k, ts in times.items():
        med = statistics.median(ts)
        print(f"  {k:38s} {med * 1000:7.1f} ms  {med / floor:4.2f}x floor")
    cli = statistics.median(times["retromesh convert crate.b3d (CLI)"])
    print(f"goal: CLI <= 2.00x floor: {'met' if cli <= 2 * floor else 'NOT met'} "
          f"({cli / floor:.2f}x)")


if __name__ == "__main__":
    main()
