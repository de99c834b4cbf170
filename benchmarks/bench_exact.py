"""What "unedited means identical" costs (issue 32): GLB size and conversion times of the Lost
Saga and LithTech examples, the Lost Saga corpus and a larger synthetic LithTech model, both
ways, with the companions the CLI reads.

    python benchmarks/bench_exact.py [--repeat N] [--src DIR]

``--src`` picks the retromesh source tree to measure (default: this checkout's ``src``), so that
the figures before and after a change come from one script:

    python benchmarks/bench_exact.py --src /path/to/main/src > before.txt
    python benchmarks/bench_exact.py > after.txt

Prints one line per model: GLB bytes, best time of ``model -> GLB`` and of ``GLB -> model``,
and whether the files written back are identical to the ones read. Never asserts timings.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def sources(tmp: Path) -> list[Path]:
    from bench_lithtech import big_model
    from measure import CORPUS

    import retromesh
    out = [ROOT / "examples" / "lostsaga" / n for n in ("column.msh", "column.skl", "column_wave.ani")]
    out += sorted(p for p in (CORPUS / "lostsaga").glob("*.*") if p.suffix in (".msh", ".ani", ".cms"))
    out += sorted((ROOT / "examples" / "lithtech").glob("*.abc"))
    big = tmp / "big_v12.abc"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retromesh.write(big_model(20000, 3, 40, 4, 30, False), big)
    return out + [big]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--src", type=Path, default=ROOT / "src")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(args.src.resolve()))
    from measure import timed

    import retromesh
    from retromesh import batch
    print(f"# retromesh from {Path(retromesh.__file__).parent}")
    print(f"{'model':48} {'GLB bytes':>10} {'to GLB ms':>10} {'back ms':>9}  identical")
    with tempfile.TemporaryDirectory() as tmpname:
        tmp = Path(tmpname)
        tot = [0, 0.0, 0.0]
        for src in sources(tmp):
            glb, back = tmp / f"{src.stem}.glb", tmp / "back" / src.name
            back.parent.mkdir(exist_ok=True)
            opts = batch.companions(src)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t_to, _ = timed(lambda s=src, g=glb, o=opts: retromesh.convert(s, g, **o),
                                args.repeat)
                t_back, _ = timed(lambda g=glb, b=back: retromesh.convert(g, b), args.repeat)
            read = [src, *batch.members(opts)]
            if src.suffix == ".msh" and src.with_suffix(".txt").is_file():
                read.append(src.with_suffix(".txt"))
            same = all((back.parent / f.name).is_file() and
                       (back.parent / f.name).read_bytes() == f.read_bytes() for f in read)
            size = glb.stat().st_size
            tot[0] += size
            tot[1] += t_to
            tot[2] += t_back
            print(f"{src.name:48} {size:>10} {t_to * 1000:>10.1f} {t_back * 1000:>9.1f}  {same}")
        print(f"{'total':48} {tot[0]:>10} {tot[1] * 1000:>10.1f} {tot[2] * 1000:>9.1f}")


if __name__ == "__main__":
    main()
