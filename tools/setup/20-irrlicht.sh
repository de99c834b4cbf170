#!/usr/bin/env bash
# Irrlicht tier (tests/test_irrlicht.py): installs Debian's libirrlicht-dev (Irrlicht 1.8.5, whose
# B3D loader Luanti/Minetest uses) and g++ when missing, then compiles tools/irrlicht/irrcheck.cpp
# into $RETROMESH_CACHE/irrcheck (default ~/.cache/retromesh/irrcheck) as irrcheck-<sha256 of the
# source, 16 hex digits>, so an edited source is rebuilt and an unchanged one is not. Prints the
# binary's path. IRRCHECK_NO_INSTALL=1 skips the apt step (the tests set it when they build).
# Exits non-zero when Irrlicht or a compiler cannot be had: the tier then skips.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
src="$root/tools/irrlicht/irrcheck.cpp"
cache="${RETROMESH_CACHE:-$HOME/.cache/retromesh}/irrcheck"

have_tools() { [ -f /usr/include/irrlicht/irrlicht.h ] && command -v g++ >/dev/null 2>&1; }

if ! have_tools; then
  if [ "${IRRCHECK_NO_INSTALL:-0}" = 1 ]; then
    echo "irrlicht: libirrlicht-dev or g++ missing (run tools/setup/20-irrlicht.sh as root)" >&2; exit 1
  fi
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "irrlicht: libirrlicht-dev and g++ are needed; install them (apt-get install libirrlicht-dev g++)" >&2; exit 1
  fi
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libirrlicht-dev g++; } >/dev/null 2>&1 \
    || { echo "irrlicht: apt-get install libirrlicht-dev g++ failed" >&2; exit 1; }
  have_tools || { echo "irrlicht: still no irrlicht.h or g++ after installing" >&2; exit 1; }
fi

hash="$(sha256sum "$src" | cut -c1-16)"
bin="$cache/irrcheck-$hash"
if [ ! -x "$bin" ]; then
  mkdir -p "$cache"
  tmp="$(mktemp "$cache/.build.XXXXXX")"
  trap 'rm -f "$tmp"' EXIT
  g++ -O1 -std=c++17 -I/usr/include/irrlicht "$src" -o "$tmp" -lIrrlicht \
    || { echo "irrlicht: compiling irrcheck failed" >&2; exit 1; }
  mv -f "$tmp" "$bin"
  trap - EXIT
fi
"$bin" --version >/dev/null || { echo "irrlicht: $bin does not run" >&2; exit 1; }
echo "$bin"
