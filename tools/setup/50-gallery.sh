#!/usr/bin/env bash
# Gallery tier: Debian's Chromium (headless thumbnails and the browser test) and the viewer
# bundle (three.js from npm, bundled by esbuild into ~/.cache/retromesh, once per version).
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 \
    || echo "note: chromium not installed (gallery thumbnails and browser tests will skip)"
fi
PYTHONPATH=src python3 -m retromesh.gallery.assets
