#!/usr/bin/env bash
# The blob routes with `blobs.backend = s3` against s3rver (npm, installed once into build/tools/s3rver),
# for what s3rver implements: see tests/client/blobs_api.py. Skipped (exit 77) only where npm is absent.
#   blobs_s3rver.sh CONTENTLAKE_BINARY SOURCE_DIR
set -euo pipefail
binary=$1 source=$2
version=3.7.1
tools="$source/build/tools/s3rver"
if ! command -v npm >/dev/null 2>&1; then
  echo "SKIPPED: npm is not installed, so s3rver cannot be; scripts/install-deps --with-test-tools installs it" >&2
  exit 77
fi
if [ ! -x "$tools/node_modules/.bin/s3rver" ] || ! "$tools/node_modules/.bin/s3rver" --version 2>/dev/null | grep -qx "$version"; then
  mkdir -p "$tools"
  npm install --prefix "$tools" --no-audit --no-fund --silent "s3rver@$version" >/dev/null
fi
exec /usr/bin/python3 "$source/tests/client/blobs_api.py" "$binary" "$source" "s3rver:$tools"
