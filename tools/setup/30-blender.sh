#!/usr/bin/env bash
# Blender tier (tests/test_blender.py): a venv of its own holding the pinned `bpy` wheel from PyPI,
# so Blender's numpy never meets the project's. The ~300 MB wheel is kept in
# ~/.cache/retromesh/wheels so reruns install offline (first install ~0.5-1.5 min, then ~1 s).
# Override the venv with RETROMESH_BPY_VENV (31-blender45.sh reuses this script for 4.5).
set -euo pipefail
BPY_SPEC="${RETROMESH_BPY_SPEC:-bpy==4.2.*}"
# the numpy Blender 4.2 ships (the wheel itself does not pin it and would take numpy 2)
NUMPY_SPEC="${RETROMESH_BPY_NUMPY:-numpy==1.26.*}"
VENV="${RETROMESH_BPY_VENV:-$HOME/.cache/retromesh/bpy42}"
WHEELS="$HOME/.cache/retromesh/wheels"
PY="${RETROMESH_BPY_PYTHON:-python3}"
# bpy 4.2 is built for CPython 3.11 only
"$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || {
  echo "30-blender: $PY is not Python 3.11 (bpy 4.2 needs 3.11)"; exit 1; }
STAMP="$VENV/.retromesh-installed"
if [ -x "$VENV/bin/python" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$BPY_SPEC $NUMPY_SPEC" ]; then
  echo "30-blender: $BPY_SPEC already in $VENV"; exit 0
fi
mkdir -p "$WHEELS"
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
# fill the wheel cache (a no-op when the wheels are already there), then install from it only
"$VENV/bin/pip" download --quiet --disable-pip-version-check --only-binary=:all: -d "$WHEELS" "$BPY_SPEC" $NUMPY_SPEC \
  || echo "30-blender: download failed; trying the cached wheels"
"$VENV/bin/pip" install --quiet --disable-pip-version-check --no-index --find-links "$WHEELS" "$BPY_SPEC" $NUMPY_SPEC
# Blender's importer scripts need these system libraries on a bare machine (Debian names)
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  if ! "$VENV/bin/python" -c 'import bpy' >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq libxrender1 libxxf86vm1 libxfixes3 libxi6 libxkbcommon0 libsm6 libgl1 libegl1 libxkbcommon-x11-0) >/dev/null 2>&1 || true
  fi
fi
"$VENV/bin/python" -c 'import bpy, os; print("30-blender: bpy", bpy.app.version_string); os._exit(0)'
echo "$BPY_SPEC $NUMPY_SPEC" > "$STAMP"
