#!/usr/bin/env bash
# The blob routes with `blobs.backend = s3` against s3rver (npm, installed once into build/tools/s3rver),
# for what s3rver implements: see tests/client/blobs_api.py. Skipped (exit 77) only where npm is absent.
#   blobs_s3rver.sh CONTENTLAKE_BINARY SOURCE_DIR
set -euo pipefail
binary=$1 source=$2
. "$source/tests/client/npm-tool.sh"
npm_tool s3rver 3.7.1
exec /usr/bin/python3 "$source/tests/client/blobs_api.py" "$binary" "$source" "s3rver:$(dirname "$tool_modules")"
