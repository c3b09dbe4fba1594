#!/usr/bin/env bash
# The OpenAPI replay (tests/client/openapi_responses.py) through Stoplight Prism's validating proxy
# (npm @stoplight/prism-cli, installed once into build/tools/): an independent validator reports each
# response that breaks the document, beside the replay's own checks. Its two limitations (it follows
# a 302, and parses a HEAD answer's absent body) are worked around in the replay, which checks those
# answers against the service itself.
#   openapi_prism.sh CONTENTLAKE_BINARY SOURCE_DIR
set -euo pipefail
binary=$1 source=$2
. "$source/tests/client/npm-tool.sh"
npm_tool @stoplight/prism-cli 5.14.2
exec /usr/bin/python3 "$source/tests/client/openapi_responses.py" "$binary" "$source" "$tool_modules/.bin/prism"
