"""Convert a whole collection with Dask: plan here, convert shards of models on a cluster.

    pip install "retromesh[dask]"                      # dask + distributed
    python examples/dask_batch.py mods/ -o out/        # a LocalCluster of 2 worker processes
    python examples/dask_batch.py /mnt/games -o /mnt/out --scheduler tcp://10.0.0.5:8786

``retromesh.batch.plan`` groups the files into models (a ``.msh`` with its ``.skl`` and ``.ani``
files, a ``.vxl`` with its ``.hva``...) and names the outputs, so companions never land in
different tasks; each Dask task runs ``retromesh.batch.run_jobs`` on one shard of those jobs and
returns one ``Result`` per model (a bad file is a failed Result, never an exception). Dask does
the scheduling; with ``--scheduler`` the inputs and the output folder must be on storage every
worker sees. Workers are processes with one thread each: a conversion holds the GIL.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dask.distributed import Client, LocalCluster

from retromesh import batch


def convert_with_dask(inputs: list[Path], output: Path, *, to: str = "glb", workers: int = 2,
                      shard: int = 32, scheduler: str | None = None) -> list[batch.Result]:
    jobs = batch.plan(inputs, output, to=to)
    cluster = None if scheduler else LocalCluster(n_workers=workers, threads_per_worker=1,
                                                  dashboard_address=None)
    try:
        with Client(scheduler or cluster) as client:
            futures = client.map(batch.run_jobs, batch.shards(jobs, shard), pure=False)
            return [r for part in client.gather(futures) for r in part]
    finally:
        if cluster is not None:
            cluster.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("inputs", nargs="+", type=Path, help="folders and/or files")
    ap.add_argument("-o", "--output", type=Path, required=True, help="output folder")
    ap.add_argument("--to", default="glb", help="output extension (glb)")
    ap.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes")
    ap.add_argument("--shard", type=int, default=32, help="models per task")
    ap.add_argument("--scheduler", help="address of a running Dask scheduler")
    args = ap.parse_args(argv)
    results = convert_with_dask(args.inputs, args.output, to=args.to, workers=args.workers,
                                shard=args.shard, scheduler=args.scheduler)
    failed = [r for r in results if not r.ok]
    for r in failed:
        print(f"failed: {r.message.splitlines()[0]}", file=sys.stderr)
    print(f"{len(results) - len(failed)} converted, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
