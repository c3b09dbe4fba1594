#!/usr/bin/env bash
# The change feed's event stream with npm `eventsource` (installed once into build/tools/eventsource),
# across stream ends and a service restart. Skipped (exit 77) only where npm is absent.
#   changes_stream.sh CONTENTLAKE_BINARY SOURCE_DIR
set -euo pipefail
binary=$1 source=$2
. "$source/tests/client/npm-tool.sh"
npm_tool eventsource 2.0.2
exec /usr/bin/python3 "$source/tests/client/changes_stream.py" "$binary" "$source" "$tool_modules"
