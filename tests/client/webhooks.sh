#!/usr/bin/env bash
# Signed webhooks end to end with a receiver that verifies every delivery with npm
# `standardwebhooks` (installed once into build/tools/standardwebhooks). Skipped (exit 77) only
# where npm is absent.
#   webhooks.sh CONTENTLAKE_BINARY SOURCE_DIR
set -euo pipefail
binary=$1 source=$2
. "$source/tests/client/npm-tool.sh"
npm_tool standardwebhooks 1.1.1
exec /usr/bin/python3 "$source/tests/client/webhooks_api.py" "$binary" "$source" "$tool_modules"
