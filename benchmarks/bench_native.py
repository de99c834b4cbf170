"""Native bulk throughput: B3D ``to_bytes``/``read`` of the 1M-vertex skinned file
and the Westwood span decoder on the worst-case 255^3 limb, against a bare memory copy.

    python benchmarks/bench_native.py [--vertices 1000000] [--side 255] [--src DIR] [--reuse-memory]

Best CPU time (``process_time``, steadier than wall time on a shared machine) of 3 runs, as
MB/s of the file (B3D) or of the span data (VXL). ``to_bytes`` makes one copy of the bulk arrays
into a fresh bytes object, so its bound is the "memory copy" line, a copy into fresh memory
(whose page faults cost most of it on a busy machine). ``--src /work/main/src`` measures another
checkout for a before/after. Goals: to_bytes >= 1.5 GB/s, the worst-case VXL read >= 500 MB/s.

A 60 MB output in fresh 4 KiB pages costs more to fault in than to fill (a ``bytes`` copy
runs at ~1.4 GB/s here against 5+ GB/s into mapped memory), so ``to_bytes`` builds its result with
``retromesh.bigbytes.join``, which advises huge pages for it as numpy does for its arrays (before:
1.3 GB/s; after: 3+ GB/s). ``--reuse-memory`` repeats the run in a child where glibc keeps freed
memory (``GLIBC_TUNABLES`` mmap and trim thresholds at 4 GiB), as in a long-running process.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def best(fn, repeat: int = 3):
    t, out = float("inf"), None
    for _ in range(repeat):
        out = None          # the previous result is freed outside the timed part
        c = time.process_time()
        out = fn()
        t = min(t, time.process_time() - c)
    return t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vertices", type=int, default=1_000_000)
    ap.add_argument("--side", type=int, default=255)
    ap.add_argument("--src", default=str(ROOT / "src"))
    ap.add_argument("--reuse-memory", action="store_true",
                    help="also measure with glibc keeping freed memory (a child process)")
    args = ap.parse_args()
    if args.reuse_memory:
        env = dict(os.environ, GLIBC_TUNABLES="glibc.malloc.mmap_threshold=4294967296:"
                                              "glibc.malloc.trim_threshold=4294967296")
        argv = [a for a in sys.argv[1:] if a != "--reuse-memory"]
        print("-- glibc keeping freed memory (GLIBC_TUNABLES mmap/trim thresholds 4 GiB):")
        subprocess.run([sys.executable, __file__, *argv], env=env, check=True)
        print("-- glibc's defaults:")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    sys.path.insert(0, args.src)
    import numpy as np
    from bench_b3d import big_scene
    from bench_westwood import big_grid

    import retromesh
    from retromesh.formats.westwood.voxels import decode_spans, encode_spans
    print(f"src {Path(retromesh.__file__).parent}")
    doc0 = retromesh.from_scene(big_scene(args.vertices, bones=64, frames=100), "b3d")
    data = retromesh.to_bytes(doc0)
    del doc0
    mb = len(data) / 1e6
    t_copy, _ = best(lambda: bytearray(data))
    t_read, doc = best(lambda: retromesh.read(data, format="b3d"))
    t_write, out = best(lambda: retromesh.to_bytes(doc))
    assert out == data
    print(f"B3D, {args.vertices:,} skinned vertices, {mb:.1f} MB:")
    print(f"  memory copy (bytearray)  {mb / t_copy:8.0f} MB/s")
    print(f"  read                     {mb / t_read:8.0f} MB/s")
    print(f"  to_bytes                 {mb / t_write:8.0f} MB/s   (goal 1500; "
          f"{t_copy / t_write:.2f}x the speed of the copy above)")
    grid = big_grid(args.side)
    start, end, spans = encode_spans(grid)
    from bench_westwood import _worst_limb, palette

    from retromesh.formats.westwood import vxl
    raw = vxl.write(vxl.VxlFile(palette=palette(), limbs=[_worst_limb(args.side)]))
    t_vxl, _ = best(lambda: retromesh.read(raw, format="vxl"))
    t_dec, back = best(lambda: decode_spans(start, end, spans, grid.size))
    assert np.array_equal(back.mask, grid.mask) and np.array_equal(back.colour, grid.colour)
    print(f"VXL worst case {args.side}^3 limb, {len(raw) / 1e6:.1f} MB file, "
          f"{int(grid.mask.sum()):,} voxels:")
    print(f"  read (every span checked) {len(raw) / 1e6 / t_vxl:7.0f} MB/s   (goal 500)")
    print(f"  decode into the full grid {len(spans) / 1e6 / t_dec:7.0f} MB/s   (what a conversion "
          "adds: three 16.6M-cell arrays)")


if __name__ == "__main__":
    main()
