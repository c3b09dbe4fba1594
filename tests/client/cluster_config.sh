#!/usr/bin/env bash
# The shipped cluster deployment (deploy/cluster/) is valid as written: HAProxy 2.6 accepts its
# configuration (`haproxy -c`), and the node unit template passes `systemd-analyze verify` with no
# message (as an instance, its ExecStart pointed at the built binary).
#   cluster_config.sh CONTENTLAKE_BINARY SOURCE_DIR
set -euo pipefail
binary=$1 source=$2
command -v haproxy >/dev/null || { echo "haproxy is missing (Debian: haproxy)" >&2; exit 1; }
command -v systemd-analyze >/dev/null || { echo "systemd-analyze is missing (Debian: systemd)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
haproxy -c -q -f "$source/deploy/cluster/haproxy.cfg"
haproxy -c -q -f "$source/deploy/cluster/haproxy-postgresql.cfg"
# Patroni's own validator on patroni.yml (it checks that the addresses it would listen on are free
# here, so those are made loopback ones first; the file is otherwise as shipped). etcd.conf.yml has
# no validator (etcd ignores a key it does not know): the failover test runs etcd from it.
if command -v patroni >/dev/null; then
  sed -E 's/^(  listen: )10\.0\.0\.2[0-9]:/\1127.0.0.1:/' "$source/deploy/cluster/patroni.yml" > "$dir/patroni.yml"
  out=$(patroni --validate-config "$dir/patroni.yml" 2>&1) || { echo "patroni.yml: $out" >&2; exit 1; }
else
  echo "patroni is missing (scripts/install-deps --with-test-tools installs it)" >&2; exit 1
fi
sed "s|/usr/local/bin/contentlake|$binary|" "$source/deploy/cluster/contentlake@.service" > "$dir/contentlake@node1.service"
out=$(systemd-analyze verify "$dir/contentlake@node1.service" 2>&1) || { echo "$out" >&2; exit 1; }
if [ -n "$out" ]; then echo "$out" >&2; exit 1; fi
# Every variable the example environment file sets is one the configuration table documents (a
# test of its own checks that table against the service's keys).
while IFS='=' read -r key _; do
  case "$key" in ''|'#'*) continue ;; esac
  grep -q "| \`$key\` |" "$source/docs/operations.md" || { echo "unknown key in node.env.example: $key" >&2; exit 1; }
done < "$source/deploy/cluster/node.env.example"
echo "cluster deployment: haproxy -c accepts haproxy.cfg and haproxy-postgresql.cfg; patroni validates patroni.yml; systemd-analyze verify is silent; node.env.example keys known"
