"""The restore drill on PostgreSQL (issue 41, item 7), following docs/operations.md "Backup and
restore on PostgreSQL" step by step: `pg_dump` while a burst of keyed writes runs, then the data
dir's `identity/` and embedded objects copied (after the records: every object a record names is
in the copy); restore with `pg_restore` into a new database, a new data dir from the copy, a new
log epoch, `contentlake reindex`; then a service on both: every write acknowledged before the dump
began is there, the rebuilt index answers them, blobs download with their checksums, old tokens
work, a feed cursor issued before answers 410 CURSOR_EXPIRED, writes work.

    pg_backup_restore.py CONTENTLAKE_BINARY SOURCE_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from backup_restore import Burst, check_restored, write_before  # noqa: E402
from harness import Postgres, Started, wait_until  # noqa: E402

SCOPES = "content-lake.read content-lake.write"


def main():
    binary, source = sys.argv[1], sys.argv[2]
    pg = Postgres(source)
    started = Started()  # every service this test starts: none outlives it
    serve = started.start

    copy = tempfile.TemporaryDirectory(prefix="contentlake-pgbackup-")
    restored = tempfile.TemporaryDirectory(prefix="contentlake-pgrestored-")
    try:
        url = pg.create_database("live")
        svc = serve(binary, source, {"CONTENTLAKE_STORAGE_BACKEND": "postgresql",
                                       "CONTENTLAKE_STORAGE_POSTGRESQL_URL": url})
        token = svc.token(sub="u_drill", tenant="t_drill", scopes=SCOPES)
        before, blobs, old_cursor = write_before(svc, token)

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
            check_restored(new, token, before + acked_before, blobs, old_cursor)
            print("restored on PostgreSQL: %d Resources acknowledged before the dump, all there and found by search; "
                  "%d blobs with their SHA-256; an older feed cursor answers 410; writes work"
                  % (len(before + acked_before), len(blobs)))
        finally:
            new.stop()
    finally:
        copy.cleanup()
        started.kill_all()
        pg.stop()


if __name__ == "__main__":
    main()
