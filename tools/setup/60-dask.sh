#!/usr/bin/env bash
# Batch tier: Dask (dask + distributed from PyPI, ~15 MB with its dependencies, ~20 s with a warm
# pip cache) for tests/test_batch_dask.py, which runs examples/dask_batch.py on a LocalCluster.
# The tier's test takes ~10-20 s on 2 cores. retromesh itself never needs Dask.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 -c "import dask.distributed" 2>/dev/null && exit 0
# not editable, like tools/test.sh: the tests use the installed copy
python3 -m pip install --quiet --disable-pip-version-check ".[dask]"
