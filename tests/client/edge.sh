#!/usr/bin/env bash
# The edge cache end to end: real Varnish (with vmod_xkey) and nginx from deploy/edge/ in front of
# the service (tests/client/edge_api.py). scripts/install-deps --with-test-tools installs them.
#   edge.sh CONTENTLAKE_BINARY SOURCE_DIR
set -euo pipefail
exec /usr/bin/python3 "$2/tests/client/edge_api.py" "$1" "$2"
