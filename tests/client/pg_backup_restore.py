"""The restore drill on PostgreSQL (issue 41, item 7), following docs/operations.md "Backup and
restore on PostgreSQL" step by step: `pg_dump` while a burst of keyed writes runs, then the data
dir's `identity/` and embedded objects copied (after the records: every object a record names is
in the copy); restore with `pg_restore` into a new database, a new data dir from the copy, a new
log epoch, `contentlake reindex`; then a service on both: every write acknowledged before the dump
began is there, the rebuilt index answers them, blobs download with their checksums, old tokens
work, a feed cursor issued before answers 410 CURSOR_EXPIRED, writes work.

    pg_backup_restore.py CONTENTLAKE_BINARY SOURCE_DIR
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from backup_restore import Burst, resource, searched, upload  # noqa: E402
from harness import Postgres, Service, fetch, wait_until  # noqa: E402

SCOPES = "content-lake.read content-lake.write"


def main():
    binary, source = sys.argv[1], sys.argv[2]
    pg = Postgres(source)
    started = []  # every service this test starts: none outlives it, also when an assertion fails

    def serve(*args, **kwargs):
        started.append(Service(*args, **kwargs))
        return started[-1]

    copy = tempfile.TemporaryDirectory(prefix="contentlake-pgbackup-")
    restored = tempfile.TemporaryDirectory(prefix="contentlake-pgrestored-")
    try:
        url = pg.create_database("live")
        svc = serve(binary, source, {"CONTENTLAKE_STORAGE_BACKEND": "postgresql",
                                       "CONTENTLAKE_STORAGE_POSTGRESQL_URL": url})
        token = svc.token(sub="u_drill", tenant="t_drill", scopes=SCOPES)
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
        old_cursor = json.loads(body)["next_cursor"]

        burst = Burst(svc, token)
        wait_until("the burst is under way", lambda: len(burst.acked) >= 50 or burst.errors, timeout=60)
        began = time.monotonic()
        dump = os.path.join(copy.name, "records.dump")
        done = subprocess.run(["pg_dump", "--format=custom", "--file=" + dump, url], capture_output=True, text=True)
        ended = time.monotonic()
        assert done.returncode == 0, done.stderr
        # The node's files after the records.
        shutil.copytree(os.path.join(svc.dir.name, "identity"), os.path.join(copy.name, "identity"))
        shutil.copytree(os.path.join(svc.dir.name, "blobs"), os.path.join(copy.name, "blobs"),
                        ignore=shutil.ignore_patterns("uploads", "tmp"))
        more = len(burst.acked)
        wait_until("writes go on after the dump", lambda: len(burst.acked) >= more + 20 or burst.errors, timeout=60)
        burst.finish()
        assert not burst.errors, burst.errors[:5]
        acked_before = [i for i, at in burst.acked if at < began]
        print("pg_dump: %.2f s while %d keyed writes were acknowledged; %d bytes"
              % (ended - began, len([1 for _, at in burst.acked if began <= at <= ended]), os.path.getsize(dump)))
        svc.stop()

        new_url = pg.create_database("restored")
        done = subprocess.run(["pg_restore", "--no-owner", "--exit-on-error", "--dbname=" + new_url, dump],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        shutil.copytree(os.path.join(copy.name, "identity"), os.path.join(restored.name, "identity"))
        shutil.copytree(os.path.join(copy.name, "blobs"), os.path.join(restored.name, "blobs"))
        epoch = subprocess.run("openssl rand -hex 8 | tr -d '\\n' > %s/identity/log-epoch && chmod 600 %s/identity/log-epoch"
                               % (restored.name, restored.name), shell=True)
        assert epoch.returncode == 0
        env = dict(os.environ, CONTENTLAKE_STORAGE_BACKEND="postgresql", CONTENTLAKE_STORAGE_POSTGRESQL_URL=new_url)
        done = subprocess.run([binary, "reindex", "--data-dir", restored.name], cwd=source, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        print("reindex: " + done.stdout.strip())

        new = serve(binary, source, {"CONTENTLAKE_STORAGE_BACKEND": "postgresql",
                                       "CONTENTLAKE_STORAGE_POSTGRESQL_URL": new_url}, data_dir=restored)
        try:
            missing = [i for i in before + acked_before
                       if new.request("GET", "/v0/content-lake/resources/" + i, token)[0] != 200]
            assert not missing, ("acknowledged before the dump, missing after the restore", missing[:5])
            found = searched(new, token)
            unindexed = [i for i in before + acked_before if i not in found]
            assert not unindexed, ("not answered by the rebuilt index", unindexed[:5])
            for blob, digest in blobs.items():
                status, headers, _ = new.request("GET", "/v0/content-lake/blobs/" + blob, token)
                assert status == 302, status
                got = fetch(headers["Location"])
                assert got[0] == 200 and hashlib.sha256(got[2]).hexdigest() == digest, (blob, got[0])
            status, _, body = new.request("GET", "/v0/content-lake/changes?since=" + old_cursor, token)
            error = json.loads(body).get("error", {})
            assert status == 410 and error.get("reason") == "CURSOR_EXPIRED", body
            status, _, body = new.request("POST", "/v0/content-lake/resources", token, resource("after restore"))
            assert status == 201, body
            print("restored on PostgreSQL: %d Resources acknowledged before the dump, all there and found by search; "
                  "%d blobs with their SHA-256; an older feed cursor answers 410; writes work"
                  % (len(before + acked_before), len(blobs)))
        finally:
            new.stop()
    finally:
        copy.cleanup()
        for service in started:
            if service.proc.poll() is None:
                service.proc.kill()
                service.proc.wait()
        pg.stop()


if __name__ == "__main__":
    main()
