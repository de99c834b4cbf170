"""LithTech DTX benchmark: a texture made with our own writer, in every pixel format.

    python benchmarks/bench_dtx.py [--size 1024] [--mips 4]

For each pixel format: wall time of encoding an RGBA image with its mip levels (``from_rgba``),
writing, reading, and decoding level 0 back to RGBA (``to_rgba``), and the file's size.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from retromesh.binio import Reader
from retromesh.formats.lithtech import dtx, dtx_pixels


def image(size: int) -> np.ndarray:
    y, x = np.mgrid[0:size, 0:size]
    return np.stack([x % 256, y % 256, (x ^ y) % 256, (x + y) % 256], -1).astype(np.uint8)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--mips", type=int, default=4)
    args = ap.parse_args()
    rgba = image(args.size)
    print(f"{args.size}x{args.size}, {args.mips} mip levels")
    for name, code in dtx_pixels.BPP_OPTIONS.items():
        t0 = time.perf_counter()
        doc = dtx_pixels.from_rgba(rgba, bpp=code, mips=args.mips)
        t1 = time.perf_counter()
        data = dtx.write(doc)
        t2 = time.perf_counter()
        back = dtx.read(Reader(data))
        t3 = time.perf_counter()
        dtx_pixels.to_rgba(back)
        t4 = time.perf_counter()
        print(f"{name:>5}: encode {t1 - t0:7.3f} s  write {t2 - t1:7.4f} s  read {t3 - t2:7.4f} s"
              f"  decode {t4 - t3:7.3f} s  {len(data):>9} bytes")


if __name__ == "__main__":
    main()
