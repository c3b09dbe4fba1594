#!/usr/bin/env bash
# The change feed's event stream with npm `eventsource` (installed once into build/tools/eventsource),
# across stream ends and a service restart. Skipped (exit 77) only where npm is absent.
#   changes_stream.sh CONTENTLAKE_BINARY SOURCE_DIR
set -euo pipefail
binary=$1 source=$2
version=2.0.2
tools="$source/build/tools/eventsource"
if ! command -v npm >/dev/null 2>&1; then
  echo "SKIPPED: npm is not installed, so eventsource cannot be; scripts/install-deps --with-test-tools installs it" >&2
  exit 77
fi
if ! grep -qs "\"version\": \"$version\"" "$tools/node_modules/eventsource/package.json"; then
  mkdir -p "$tools"
  npm install --prefix "$tools" --no-audit --no-fund --silent "eventsource@$version" >/dev/null
fi
exec /usr/bin/python3 "$source/tests/client/changes_stream.py" "$binary" "$source" "$tools/node_modules"
