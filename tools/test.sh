#!/usr/bin/env bash
# The whole test suite from nothing: installs retromesh (not editable: the suite tests the copy a
# user's `pip install .` makes, found through retromesh.__file__) with its test and lint
# dependencies and the Khronos glTF-Validator (npm), runs the linters (ruff, mypy, deptry: a
# finding fails the script), runs every tools/setup/*.sh (each installs what one tier of real-client
# checks needs: it may fail soft, and that tier then skips with its reason), then runs pytest.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
# assimp-utils is optional: an independent B3D reader and the benchmark's reference
if ! command -v assimp >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && apt-get install -y -qq assimp-utils) >/dev/null 2>&1 || echo "note: assimp-utils not installed"
fi
# a stale build/ of an earlier install would be packed again (setuptools reuses build/lib)
rm -rf build
python3 -m pip install --quiet --disable-pip-version-check ".[test,lint]"
# the configurations are in pyproject.toml ([tool.ruff], [tool.mypy], [tool.deptry])
python3 -m ruff check src tests
python3 -m mypy src/retromesh
# declared equals imported: the package alone, then with its tests, examples, benchmarks, tools
python3 -m deptry src
python3 -m deptry src tests examples benchmarks tools --optional-dependencies-dev-groups lint
npm install --prefix tools/gltf-validator --no-audit --no-fund --no-package-lock --silent
for setup in tools/setup/*.sh; do
  [ -e "$setup" ] || continue
  start=$SECONDS
  bash "$setup" || echo "note: $setup failed; its tier will skip"
  echo "setup: $setup took $((SECONDS - start)) s"
done
python3 -m pytest -q "$@"
