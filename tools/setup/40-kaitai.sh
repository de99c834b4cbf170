#!/usr/bin/env bash
# Kaitai Struct compiler (npm, JavaScript API) for the .ksy conformance tests (tests/test_ksy.py).
set -euo pipefail
cd "$(dirname "$0")/../ksy"
npm install --no-audit --no-fund --no-package-lock --silent
