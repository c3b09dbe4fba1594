#!/usr/bin/env bash
# The shipped systemd unit (deploy/systemd/contentlake.service) passes `systemd-analyze verify`
# with no message at all (verify only warns about an unknown or misspelt directive, so any output
# fails the test), its ExecStart pointed at the built binary.
#   systemd_unit.sh CONTENTLAKE_BINARY SOURCE_DIR
set -euo pipefail
binary=$1 source=$2
command -v systemd-analyze >/dev/null || { echo "systemd-analyze is missing (Debian: systemd)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sed "s|/usr/local/bin/contentlake|$binary|" "$source/deploy/systemd/contentlake.service" > "$dir/contentlake.service"
out=$(systemd-analyze verify "$dir/contentlake.service" 2>&1) || { echo "$out" >&2; exit 1; }
if [ -n "$out" ]; then echo "$out" >&2; exit 1; fi
grep -q '^ExecStart=.* serve ' "$dir/contentlake.service"
echo "systemd unit: systemd-analyze verify is silent"
