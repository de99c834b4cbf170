#!/usr/bin/env bash
# Blender 4.5 LTS for the same tier (tests/test_blender.py runs once per installed Blender):
# ~370 MB wheel, cached like 4.2's; about 1.5 min to install, 2 min of tests.
# RETROMESH_SKIP_BPY45=1 leaves it out.
set -euo pipefail
[ -z "${RETROMESH_SKIP_BPY45:-}" ] || { echo "31-blender45: skipped (RETROMESH_SKIP_BPY45)"; exit 1; }
export RETROMESH_BPY_SPEC="bpy==4.5.*" RETROMESH_BPY_NUMPY="numpy==1.26.*"
export RETROMESH_BPY_VENV="${RETROMESH_BPY45_VENV:-$HOME/.cache/retromesh/bpy45}"
exec bash "$(dirname "$0")/30-blender.sh"
