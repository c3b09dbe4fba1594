"""A full record store (issue 31, item 5): with `storage.map_size_mib` small, writes that do not fit
get 507 STORAGE_FULL in the spec's error shape and store nothing (a keyed one stores no answer
either), reads go on, every acknowledged write is there; after raising the setting and restarting,
the same writes succeed and nothing acknowledged before is lost.

    full_store.py CONTENTLAKE_BINARY SOURCE_DIR
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Service, fetch, wait_until  # noqa: E402

BIG = "The tide turns at Brest. " * 800  # about 20 KB of text per Resource


def body(i):
    return {"title": "Tide %d" % i, "type": "ARTICLE", "language": "en", "content": {"format": "cl.content/1", "blocks": [
        {"type": "paragraph", "key": "p1", "children": [{"type": "span", "text": BIG}]}]}}


def main():
    binary, source = sys.argv[1], sys.argv[2]
    svc = Service(binary, source, {"CONTENTLAKE_STORAGE_MAP_SIZE_MIB": "2",
                                   "CONTENTLAKE_IDEMPOTENCY_PRUNE_INTERVAL_SECONDS": "1"})

    def gauge(name):
        _, _, text = fetch("http://127.0.0.1:%d/metrics" % svc.admin_port)
        for line in text.decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        return None
    try:
        token = svc.token(sub="u_alice", tenant="t_full", scopes="content-lake.read content-lake.write")
        acknowledged, refused = [], None
        for i in range(1000):
            status, headers, answer = svc.request("POST", "/v0/content-lake/resources", token, body(i),
                                                  {"Idempotency-Key": "full-%d" % i})
            if status == 201:
                acknowledged.append(json.loads(answer)["id"])
                continue
            refused = (i, status, json.loads(answer))
            break
        assert refused, "a 2 MiB store took 1000 Resources of 20 KB"
        i, status, error = refused
        assert status == 507, refused
        assert error["error"]["reason"] == "STORAGE_FULL" and error["error"]["code"] == "RESOURCE_EXHAUSTED", error
        assert error["error"]["domain"] == "contentlake.service.com" and error["error"]["message"]
        assert len(acknowledged) > 10, len(acknowledged)
        # The same write again: still full, and the key stored nothing (no replay of the 507).
        status, headers, again = svc.request("POST", "/v0/content-lake/resources", token, body(i),
                                             {"Idempotency-Key": "full-%d" % i})
        assert status == 507 and "Idempotent-Replayed" not in headers, (status, headers)
        # Reads go on: every acknowledged Resource, and a list.
        for rid in acknowledged:
            assert svc.request("GET", "/v0/content-lake/resources/%s?fields=id" % rid, token)[0] == 200, rid
        status, _, listed = svc.request("GET", "/v0/content-lake/resources?page_size=100", token)
        assert status == 200 and {r["id"] for r in json.loads(listed)["resources"]} >= set(acknowledged[:50])
        print("full store: write %d refused 507 STORAGE_FULL after %d acknowledged; reads go on" % (i, len(acknowledged)))
        assert any("raise storage.map_size_mib" in line for line in svc.log), "the operator is not told what to do"
        # The capacity metrics show it: used close to the limit (refreshed every prune tick, 1 s here).
        assert gauge("contentlake_storage_limit_bytes") == 2 * 1024 * 1024
        used = wait_until("the store's use reported", lambda: (gauge("contentlake_storage_used_bytes") or 0) > 1.5 * 1024 * 1024
                          and gauge("contentlake_storage_used_bytes"))
        print("full store: contentlake_storage_used_bytes %d of contentlake_storage_limit_bytes %d" % (used, 2 * 1024 * 1024))

        # Raise the setting, restart: the refused write succeeds under its key, nothing is lost.
        svc.shutdown()
        svc.env["CONTENTLAKE_STORAGE_MAP_SIZE_MIB"] = "64"
        svc.restart()
        status, _, created = svc.request("POST", "/v0/content-lake/resources", token, body(i),
                                         {"Idempotency-Key": "full-%d" % i})
        assert status == 201, (status, created[:200])
        for j in range(i + 1, i + 20):
            assert svc.request("POST", "/v0/content-lake/resources", token, body(j))[0] == 201
        for rid in acknowledged:
            assert svc.request("GET", "/v0/content-lake/resources/%s?fields=id" % rid, token)[0] == 200, rid
        print("full store: after raising storage.map_size_mib and a restart the refused write and 19 more succeed; "
              "all %d acknowledged before are there" % len(acknowledged))
    finally:
        svc.stop()


if __name__ == "__main__":
    main()
