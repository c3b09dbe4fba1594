"""Backup and restore drill (issue 31, item 8): `contentlake backup --to DIR` while a burst of keyed
writes runs, `contentlake restore --from DIR --data-dir NEW`, then a service on NEW: every write
acknowledged before the backup began is there, the rebuilt index answers them, blobs download with
their checksums, the old tokens still work (the identity came along), and a change-feed cursor
issued before the restore answers 410 CURSOR_EXPIRED (a new log epoch: sequence numbers given out
after the backup point are given out again). Also: backup into a non-empty directory and restore
into a data dir that holds a store are refused.

    backup_restore.py CONTENTLAKE_BINARY SOURCE_DIR
"""
import hashlib
import http.client
import itertools
import json
import os
import stat
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Service, fetch, wait_until  # noqa: E402

SCOPES = "content-lake.read content-lake.write"
WORD = "zephyrdrill"


def resource(title):
    return {"title": title, "type": "ARTICLE", "language": "en", "content": {"format": "cl.content/1", "blocks": [
        {"type": "paragraph", "key": "p1", "children": [{"type": "span", "text": "The %s wind, %s." % (WORD, title)}]}]}}


class Burst:
    """Keyed Resource creates from 2 clients until stopped: (id, acknowledged at) of each 201."""

    def __init__(self, svc, token):
        self.svc, self.token = svc, token
        self.acked, self.errors = [], []
        self.lock, self.stop = threading.Lock(), threading.Event()
        self.keys = itertools.count(1)
        self.threads = [threading.Thread(target=self.run) for _ in range(2)]
        for t in self.threads:
            t.start()

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.svc.port, timeout=30)
        while not self.stop.is_set():
            n = next(self.keys)
            conn.request("POST", "/v0/content-lake/resources", json.dumps(resource("burst %d" % n)),
                         {"Authorization": "Bearer " + self.token, "Content-Type": "application/json",
                          "Idempotency-Key": "burst-%d" % n})
            r = conn.getresponse()
            body = r.read()
            with self.lock:
                if r.status == 201:
                    self.acked.append((json.loads(body)["id"], time.monotonic()))
                else:
                    self.errors.append((r.status, body[:200]))

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(60)


def upload(svc, token, data):
    call = lambda m, p, b: svc.request(m, "/v0/content-lake" + p, token, b)  # noqa: E731
    status, _, body = call("POST", "/blobs/uploads", {"size": len(data), "content_type": "application/octet-stream"})
    assert status == 201, body
    up = json.loads(body)
    assert up["method"] == "SINGLE", up
    assert fetch(up["url"], "PUT", data)[0] == 200
    status, _, body = call("POST", "/blobs/uploads/%s/complete" % up["upload_id"],
                           {"sha256": hashlib.sha256(data).hexdigest()})
    assert status == 201, body
    return json.loads(body)["id"]


def searched(svc, token):
    """Every Resource id the search for WORD answers, page by page."""
    ids, sid = set(), None
    for _ in range(10000):  # far more pages than the drill writes: a search that never ends fails
        body = {"search_id": sid, "page_size": 100} if sid else {"query": WORD, "page_size": 100}
        status, _, answer = svc.request("POST", "/v0/content-lake/search", token, body)
        assert status == 200, answer
        page = json.loads(answer)
        ids.update(h["id"] for h in page["hits"])
        sid = page["search_id"]
        if page["exhausted"] or not page["hits"]:
            return ids
    raise AssertionError("the search never said it was exhausted")


def write_before(svc, token):
    """What the drill writes before the copy: 20 Resources, 3 blobs (their SHA-256), a feed cursor."""
    before = []
    for i in range(20):
        status, _, body = svc.request("POST", "/v0/content-lake/resources", token, resource("before %d" % i))
        assert status == 201, body
        before.append(json.loads(body)["id"])
    blobs = {}
    for size in (1, 70000, 300000):
        data = os.urandom(size)
        blobs[upload(svc, token, data)] = hashlib.sha256(data).hexdigest()
    status, _, body = svc.request("GET", "/v0/content-lake/changes?page_size=1", token)
    return before, blobs, json.loads(body)["next_cursor"]


def check_restored(new, token, acked, blobs, old_cursor):
    """On the restored service: every Resource acknowledged before the copy began is there and
    found by search, the blobs download with their SHA-256, the older cursor answers 410, writes
    work."""
    missing = [i for i in acked if new.request("GET", "/v0/content-lake/resources/" + i, token)[0] != 200]
    assert not missing, ("acknowledged before the copy, missing after the restore", missing[:5])
    found = searched(new, token)
    unindexed = [i for i in acked if i not in found]
    assert not unindexed, ("not answered by the rebuilt index", unindexed[:5])
    for blob, digest in blobs.items():
        status, headers, _ = new.request("GET", "/v0/content-lake/blobs/" + blob, token)
        assert status == 302, status
        got = fetch(headers["Location"])
        assert got[0] == 200 and hashlib.sha256(got[2]).hexdigest() == digest, (blob, got[0])
    status, _, body = new.request("GET", "/v0/content-lake/changes?since=" + old_cursor, token)
    error = json.loads(body).get("error", {})
    assert status == 410 and error.get("reason") == "CURSOR_EXPIRED" and "restored" in error["message"], body
    status, _, body = new.request("POST", "/v0/content-lake/resources", token, resource("after restore"))
    assert status == 201, body


def cli(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=600)


def main():
    binary, source = sys.argv[1], sys.argv[2]
    svc = Service(binary, source)
    backup_dir = tempfile.TemporaryDirectory(prefix="contentlake-backup-")
    restored = tempfile.TemporaryDirectory(prefix="contentlake-restored-")
    try:
        token = svc.token(sub="u_drill", tenant="t_drill", scopes=SCOPES)
        before, blobs, old_cursor = write_before(svc, token)

        burst = Burst(svc, token)
        wait_until("the burst is under way", lambda: len(burst.acked) >= 50 or burst.errors, timeout=60)
        assert not burst.errors, burst.errors[:5]
        began = time.monotonic()
        done = cli(binary, "backup", "--to", os.path.join(backup_dir.name, "b1"), "--data-dir", svc.dir.name)
        ended = time.monotonic()
        more = len(burst.acked)
        wait_until("writes go on after the backup", lambda: len(burst.acked) >= more + 20 or burst.errors, timeout=60)
        burst.finish()
        assert done.returncode == 0, done.stderr
        assert not burst.errors, burst.errors[:5]
        during = [i for i, at in burst.acked if began <= at <= ended]
        print("backup: %s (%.2f s while %d keyed writes were acknowledged)" % (done.stdout.strip(), ended - began,
                                                                             len(during)))
        b1 = os.path.join(backup_dir.name, "b1")
        manifest = json.load(open(os.path.join(b1, "backup.json")))
        assert manifest["objects"] >= 3 and manifest["last_change"] > 0, manifest
        assert "dev-signing-key.pem" in manifest["identity"], manifest
        assert stat.S_IMODE(os.stat(b1).st_mode) == 0o700, oct(os.stat(b1).st_mode)
        assert not os.path.exists(os.path.join(b1, "search")), "the index is rebuilt, not copied"
        assert any(c["path"].endswith("policy.json") for c in manifest["configuration"]), manifest
        again = cli(binary, "backup", "--to", b1, "--data-dir", svc.dir.name)
        assert again.returncode == 1 and "not empty" in again.stderr, again.stderr
        acked_before = [i for i, at in burst.acked if at < began]
        svc.stop()

        done = cli(binary, "restore", "--from", b1, "--data-dir", restored.name)
        assert done.returncode == 0, done.stderr
        print("restore: " + done.stdout.strip().replace("\n", " | "))
        again = cli(binary, "restore", "--from", b1, "--data-dir", restored.name)
        assert again.returncode == 1 and "already holds a record store" in again.stderr, again.stderr

        new = Service(binary, source, data_dir=restored)
        try:
            check_restored(new, token, before + acked_before, blobs, old_cursor)
            # Capacity gauges (operations.md, "Capacity"): the rebuilt index has a size, the disk its room,
            # the heap (jemalloc's statistics in the service binary) what the service holds.
            _, _, text = fetch("http://127.0.0.1:%d/metrics" % new.admin_port)
            gauges = {line.split()[0]: float(line.split()[1]) for line in text.decode().splitlines()
                      if line.startswith(("contentlake_disk_", "contentlake_search_", "contentlake_heap_"))}
            assert gauges.get("contentlake_search_index_bytes", 0) > 0, gauges
            assert 0 < gauges.get("contentlake_disk_free_bytes", 0) <= gauges.get("contentlake_disk_size_bytes", 0), gauges
            with open("/proc/%d/maps" % new.proc.pid) as maps:
                jemalloc = "libjemalloc" in maps.read()  # not under the sanitizers (CL_JEMALLOC=OFF)
            assert gauges.get("contentlake_heap_in_use_bytes", 0) > (1 << 20 if jemalloc else -1), gauges
            assert gauges.get("contentlake_heap_free_bytes", -1) >= 0, gauges
            # The searches above keep their filters' sets (a tenant term every document holds).
            assert 0 < gauges.get("contentlake_search_filter_cache_bytes", 0) < 64 << 20, gauges
            print("restored service: %d Resources acknowledged before the backup, all there and found by search; "
                  "%d blobs with their SHA-256; an older feed cursor answers 410; writes work"
                  % (len(before + acked_before), len(blobs)))
        finally:
            new.stop()
    finally:
        backup_dir.cleanup()


if __name__ == "__main__":
    main()
