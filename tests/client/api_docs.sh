#!/usr/bin/env bash
# The API reference in headless Chromium: Debian's `chromium` (scripts/install-deps
# --with-test-tools installs it) driven by puppeteer-core from npm, installed once under
# build/tools/ (it downloads no browser). See tests/client/api_docs.py.
#   api_docs.sh CONTENTLAKE_BINARY SOURCE_DIR
set -euo pipefail
binary=$1 source=$2
. "$source/tests/client/npm-tool.sh"
chromium=$(command -v chromium || true)
if [ -z "$chromium" ]; then
  echo "SKIPPED: chromium is not installed; scripts/install-deps --with-test-tools installs it" >&2
  if [ "${CI:-}" = "true" ]; then echo "FAILED: a skip is a failure under CI=true" >&2; exit 1; fi
  exit 77
fi
npm_tool puppeteer-core 25.16.0
exec /usr/bin/python3 "$source/tests/client/api_docs.py" "$binary" "$source" "$tool_modules" "$chromium"
