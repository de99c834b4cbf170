"""Size and speed of ``format -> .glb -> format`` (issue 32's budgets: GLB at most 10% larger,
conversion at most 5% slower).

    python benchmarks/bench_roundtrip.py FILE_OR_FOLDER... [--ext b3d] [--repeat 5]

For each model file: the GLB's size and the best of ``--repeat`` CPU times of
``retromesh.convert(file, glb)`` and ``retromesh.convert(glb, back)``, in this process. Prints
one line per file and the totals. Run it once with the code before a change and once after
(``PYTHONPATH=<checkout>/src``) to compare: the figures of each run are its own.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

from roundtrip_table import companions_of, default_extensions, model_files


def best(fn, repeat: int) -> float:
    """The best of ``repeat`` CPU times of ``fn()`` (process time: the machine is shared, and
    wall time then measures the neighbours)."""
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--ext", action="append")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args(argv)
    import retromesh
    from retromesh.batch import companions
    print(f"retromesh from {Path(retromesh.__file__).parent}")
    files = model_files(a.paths, [e.lower().lstrip(".") for e in a.ext] if a.ext
                        else default_extensions())
    total = [0, 0.0, 0.0]
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k, src in enumerate(files):
            glb, back = Path(tmp) / f"{k}.glb", Path(tmp) / f"{k}" / src.name
            back.parent.mkdir()
            opts = companions(src)
            t_in = best(lambda s=src, g=glb, o=opts: retromesh.convert(s, g, **o), a.repeat)
            t_out = best(lambda g=glb, b=back: retromesh.convert(g, b), a.repeat)
            size = glb.stat().st_size
            total[0] += size
            total[1] += t_in
            total[2] += t_out
            print(f"{src.name:40} glb {size:>10,} B   to glb {t_in * 1e3:8.1f} ms   "
                  f"back {t_out * 1e3:8.1f} ms   ({len(companions_of(src))} companions)")
    print(f"{'TOTAL':40} glb {total[0]:>10,} B   to glb {total[1] * 1e3:8.1f} ms   "
          f"back {total[2] * 1e3:8.1f} ms   ({len(files)} files)")


if __name__ == "__main__":
    main()
