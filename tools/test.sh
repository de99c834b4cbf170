#!/usr/bin/env bash
# The whole test suite from nothing: installs retromesh with its test dependencies and the
# Khronos glTF-Validator (npm), then runs pytest. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e ".[test]"
npm install --prefix tools/gltf-validator --no-audit --no-fund --no-package-lock --silent
python3 -m pytest -q "$@"
