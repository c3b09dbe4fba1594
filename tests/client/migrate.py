"""`contentlake migrate` (issue 41, item 6): a data dir written through the API on LMDB is moved
into PostgreSQL, and back into a new data dir; after each move the service answers the same reads
byte for byte, ETags included (Resources with their rights, versions, lists, Works, contracts,
Activities, grants, the change feed from a cursor issued before the move, an idempotent write's
replay). A target that holds records is refused unless --resume; an interrupted migration
resumes from its progress file and ends verified.

    migrate.py CONTENTLAKE_BINARY SOURCE_DIR
"""
import hashlib
import json
import re
import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Postgres, Started  # noqa: E402

PG_ENV = "CONTENTLAKE_STORAGE_BACKEND"


def content(text):
    return {"format": "cl.content/1", "blocks": [{"type": "paragraph", "key": "p1",
                                                   "children": [{"type": "span", "text": text}]}]}


def write_data(svc):
    """Writes a little of every kind through the API; answers the requests whose answers must not change."""
    owner = svc.token(sub="u_owner", scopes="content-lake.read content-lake.write contracts.read contracts.write")
    status, _, body = svc.request("POST", "/v0/content-lake/works", owner, {"title": "Tides"})
    assert status == 201, body
    work = json.loads(body)["id"]
    status, _, body = svc.request("POST", "/v0/contracts", owner, {
        "title": "Rights", "status": "ACTIVE", "valid_from": "2020-01-01T00:00:00Z", "work_ids": [work],
        "territorial_rights": [{"worldwide": True, "status": "PERMITTED"}],
        "usage_terms": [{"usage_type": "ACCESS", "status": "PERMITTED"}, {"usage_type": "DISPLAY", "status": "PERMITTED"}]})
    assert status == 201, body
    contract = json.loads(body)["id"]
    status, _, body = svc.request("GET", "/v0/content-lake/resources?page_size=1", owner)
    cursor = json.loads(body)["changes_cursor"]
    resources = []
    for i in range(1000):  # several pages of Works: a migration killed after the first has more to do
        status, _, body = svc.request("POST", "/v0/content-lake/works", owner, {"title": "Work %d" % i})
        assert status == 201, body
    for i in range(12):
        r = {"title": "Chapter %d" % i, "type": "CHAPTER", "language": "en", "content": content("High water %d." % i)}
        if i % 3:
            r["work_id"] = work
        status, _, body = svc.request("POST", "/v0/content-lake/resources", owner, r,
                                      headers={"Idempotency-Key": "create-%d" % i})
        assert status == 201, body
        resources.append(json.loads(body)["id"])
    token = json.loads(svc.request("GET", "/v0/content-lake/resources/" + resources[1], owner)[2])["update_token"]
    status, _, body = svc.request("PATCH", "/v0/content-lake/resources/" + resources[1], owner,
                                  {"title": "Chapter 1, revised", "update_token": token},
                                  headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200, body
    status, _, body = svc.request("POST", "/v0/content-lake/resources/%s/versions" % resources[1], owner, {})
    assert status in (200, 201), body
    status, _, body = svc.request("PUT", "/v0/content-lake/resources/%s/access/u_reader" % resources[2], owner,
                                  {"role": "reader"})
    assert status in (200, 201), body
    reader = svc.token(sub="u_reader", scopes="content-lake.read")
    reads = [(owner, "/v0/content-lake/resources/" + rid) for rid in resources]
    reads += [(owner, "/v0/content-lake/resources/%s/versions" % resources[1]),
              (owner, "/v0/content-lake/resources?page_size=5"),
              (owner, "/v0/content-lake/resources?work_id=%s&page_size=50" % work),
              (owner, "/v0/content-lake/works/" + work),
              (owner, "/v0/contracts/" + contract),
              (owner, "/v0/content-lake/activities?page_size=50"),
              (owner, "/v0/content-lake/resources/%s/access" % resources[2]),
              (owner, "/v0/content-lake/changes?page_size=100&since=" + cursor),
              (reader, "/v0/content-lake/resources/" + resources[2]),
              (reader, "/v0/content-lake/resources?page_size=50")]
    replay = (owner, resources[0])
    return reads, replay


def answers(svc, reads):
    """Each read's status, ETag and bytes, but for what is made anew for each answer: `resolved_at`
    (the second the rights were resolved) and the sealed tokens (`changes_cursor`, `next_cursor`,
    `next_page_token`: a new nonce each time; the cursor issued before the move is followed in the
    reads themselves)."""
    out = []
    for token, path in reads:
        status, headers, body = svc.request("GET", path, token)
        body = re.sub(rb'"(resolved_at|changes_cursor|next_cursor|next_page_token)":"[^"]*"', rb'"\1":""', body)
        out.append((path, status, headers.get("ETag"), body))
    return out


def same(before, after, label):
    for (path, s1, e1, b1), (_, s2, e2, b2) in zip(before, after):
        assert (s1, e1) == (s2, e2), "%s: %s answered %s %s, then %s %s" % (label, path, s1, e1, s2, e2)
        at = next((i for i in range(min(len(b1), len(b2))) if b1[i] != b2[i]), min(len(b1), len(b2)))
        assert b1 == b2, "%s: %s answered other bytes from %d:\n%s\n%s" % (label, path, at, b1[at - 80:at + 200],
                                                                          b2[at - 80:at + 200])


def fingerprint(tree):
    """Every file under `tree` (names, sizes, SHA-256 of the bytes): what a migration's source must keep."""
    out = {}
    for top, dirs, files in os.walk(tree):
        for name in files:
            path = os.path.join(top, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, tree)] = hashlib.sha256(f.read()).hexdigest()
    return out


def migrate(binary, source, args, expect=0):
    run = subprocess.run([binary, "migrate"] + args, cwd=source, capture_output=True, text=True, timeout=300)
    assert run.returncode == expect, "migrate %s: exit %d\n%s\n%s" % (args[:1], run.returncode, run.stdout, run.stderr)
    return run


def main():
    binary, source = sys.argv[1], sys.argv[2]
    pg = Postgres(source)
    started = Started()  # every service this test starts: none outlives it
    serve = started.start

    try:
        svc = serve(binary, source)
        data_dir = svc.dir
        reads, (owner, first) = write_data(svc)
        before = answers(svc, reads)
        svc.shutdown()

        # The source is only read: every file under its data dir, lmdb/lock.mdb included, stays byte
        # for byte as it was, and none is added, whether a run succeeds or is refused.
        untouched = fingerprint(data_dir.name)
        assert "lmdb/lock.mdb" in untouched and "lock" in untouched, sorted(untouched)

        def source_unchanged(after):
            now = fingerprint(data_dir.name)
            assert now == untouched, "after %s the source changed: %s" % (after, sorted(
                set(now.items()) ^ set(untouched.items())))

        scratch = tempfile.TemporaryDirectory(prefix="contentlake-targets-")
        a_file = os.path.join(scratch.name, "a-file")
        open(a_file, "w").write("not a data dir\n")
        not_a_data_dir = os.path.join(scratch.name, "etc")
        os.mkdir(not_a_data_dir)
        open(os.path.join(not_a_data_dir, "passwd"), "w").write("root:x:0:0\n")
        for target, expect, why in ((a_file, 2, "is not a directory"), (not_a_data_dir, 2, "neither empty nor a data dir"),
                                    ("postgresql://127.0.0.1:1/nowhere?connect_timeout=2", 1, "cannot connect")):
            refused = migrate(binary, source, ["--from", data_dir.name, "--to", target], expect=expect)
            assert why in refused.stderr, refused.stderr
            source_unchanged("a refused run into %s" % target)
        assert os.listdir(not_a_data_dir) == ["passwd"], os.listdir(not_a_data_dir)

        url = pg.create_database("moved")
        run = migrate(binary, source, ["--from", data_dir.name, "--to", url])
        assert "every record copied and verified" in run.stdout, run.stdout
        assert url not in run.stdout + run.stderr, "the connection string was printed"
        source_unchanged("a migration")
        print("migrate: LMDB -> PostgreSQL\n" + run.stdout)
        # Into a target that holds records: refused, unless resuming.
        refused = migrate(binary, source, ["--from", data_dir.name, "--to", url], expect=2)
        assert "already holds records" in refused.stderr, refused.stderr
        source_unchanged("a run refused by its target's records")
        print("migrate: the source's files unchanged and none added, after a migration and four refused runs")

        on_pg = serve(binary, source, {PG_ENV: "postgresql", "CONTENTLAKE_STORAGE_POSTGRESQL_URL": url},
                        data_dir=data_dir)
        same(before, answers(on_pg, reads), "on PostgreSQL")
        # The ledger came along: the same key replays the same answer.
        status, _, body = on_pg.request("POST", "/v0/content-lake/resources", owner, {
            "title": "Chapter 0", "type": "CHAPTER", "language": "en", "content": content("High water 0.")},
            headers={"Idempotency-Key": "create-0"})
        assert status == 201 and json.loads(body)["id"] == first, (status, body)
        on_pg.shutdown()

        # Back into a new data dir (its identity copied: the same keys seal the same tokens and cursors).
        back = tempfile.TemporaryDirectory(prefix="contentlake-back-")
        shutil.copytree(os.path.join(data_dir.name, "identity"), os.path.join(back.name, "identity"))
        run = migrate(binary, source, ["--from", url, "--to", back.name])
        assert "every record copied and verified" in run.stdout, run.stdout
        on_lmdb = serve(binary, source, data_dir=back)
        same(before, answers(on_lmdb, reads), "back on LMDB")
        on_lmdb.shutdown()

        # Interrupted and resumed: killed while copying, then --resume ends verified; the progress
        # is kept with the target (--state names a file instead).
        untouched = fingerprint(data_dir.name)  # a service ran on it since (its search index moved)
        url3 = pg.create_database("resumed_in_database")
        proc = subprocess.Popen([binary, "migrate", "--from", data_dir.name, "--to", url3], cwd=source,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for line in iter(proc.stderr.readline, ""):
            if "works:" in line:
                break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        saved = pg.psql("SELECT value FROM cluster_facts WHERE name = 'migrate:works'", dbname="resumed_in_database")
        assert saved.strip() not in ("", "646f6e65"), "killed too late to test resuming: %r" % saved
        run = migrate(binary, source, ["--from", data_dir.name, "--to", url3, "--resume"])
        assert "every record copied and verified" in run.stdout, run.stdout
        source_unchanged("an interrupted and resumed migration")
        assert not os.path.exists(os.path.join(data_dir.name, "migrate.state"))
        url2 = pg.create_database("resumed")
        state = os.path.join(tempfile.mkdtemp(), "migrate.state")
        proc = subprocess.Popen([binary, "migrate", "--from", data_dir.name, "--to", url2, "--state", state], cwd=source,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for line in iter(proc.stderr.readline, ""):
            if "works:" in line:  # the first page is committed and its progress saved
                break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with open(state) as f:
            saved = dict(line.split(" ", 1) for line in f.read().splitlines())
        assert saved.get("works", "").strip() not in ("", "646f6e65"), "killed too late to test resuming: %s" % saved
        migrate(binary, source, ["--from", data_dir.name, "--to", url2, "--state", state], expect=2)
        run = migrate(binary, source, ["--from", data_dir.name, "--to", url2, "--state", state, "--resume"])
        assert "every record copied and verified" in run.stdout, run.stdout
        print("migrate: interrupted, resumed, verified")
        on_lmdb.keep_log()
        data_dir.cleanup()
        back.cleanup()
    finally:
        started.kill_all()
        pg.stop()


if __name__ == "__main__":
    main()
