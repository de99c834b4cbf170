#!/usr/bin/env bash
# Luanti client tier (tests/test_luanti_client.py): Debian's `minetest` (5.6.1 on bookworm: the
# real client, B3D through its Irrlicht fork, no glTF loader) and `xvfb` (xvfb-run, Xvfb, whose
# -fbdir framebuffer file is the screenshot; xauth for xvfb-run). minetest-data comes with it
# (builtin Lua, shaders, fonts); the tests generate their own tiny game, so no game package.
# Cost: ~12 MB of .deb (~10 s with a fast mirror), kept in $RETROMESH_CACHE/debs (default
# ~/.cache/retromesh/debs) so a reinstall works offline; nothing when already installed.
# Needs root (or password-less sudo) for apt-get; time-boxed by RETROMESH_LUANTI_SETUP_TIMEOUT
# (seconds, default 600). Exits non-zero when the tier cannot run: its tests then skip.
set -euo pipefail
PACKAGES=(minetest xvfb xauth)
cache="${RETROMESH_CACHE:-$HOME/.cache/retromesh}/debs"
limit="${RETROMESH_LUANTI_SETUP_TIMEOUT:-600}"

client() { command -v minetest 2>/dev/null || { [ -x /usr/games/minetest ] && echo /usr/games/minetest; }; }
have_tools() { [ -n "$(client)" ] && command -v xvfb-run >/dev/null 2>&1 && command -v Xvfb >/dev/null 2>&1 \
  && command -v xauth >/dev/null 2>&1; }

if ! have_tools; then
  if [ "$(id -u)" = 0 ]; then
    as_root=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    echo "70-luanti: minetest and xvfb are needed; install them as root (apt-get install ${PACKAGES[*]})" >&2; exit 1
  fi
  command -v apt-get >/dev/null 2>&1 || { echo "70-luanti: no apt-get; install ${PACKAGES[*]} yourself" >&2; exit 1; }
  mkdir -p "$cache/partial"
  apt=(timeout -k 10 "$limit" "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -y -qq
       --no-install-recommends -o "Dir::Cache::archives=$cache")
  # the cached .debs first (offline), then the index (a stale one cannot find the versions)
  { "${apt[@]}" install "${PACKAGES[@]}" || { timeout -k 10 "$limit" "${as_root[@]}" apt-get update -qq \
      && "${apt[@]}" install "${PACKAGES[@]}"; }; } >/dev/null 2>&1 \
    || { echo "70-luanti: apt-get install ${PACKAGES[*]} failed (or took over $limit s)" >&2; exit 1; }
  have_tools || { echo "70-luanti: still no minetest or Xvfb after installing" >&2; exit 1; }
fi
version="$("$(client)" --version 2>/dev/null)" || { echo "70-luanti: $(client) does not run" >&2; exit 1; }
echo "70-luanti: ${version%%$'\n'*} ($(client))"
