"""PostgreSQL against LMDB, in one run on this machine, the same requests and the same data
(issue 41, item 8). Both services run, one measured at a time: an authenticated GET of a Resource
with rights (req/s and p99 at 8 and 64 connections) and creates at 64 connections (group commit)
without and with an Idempotency-Key, each in ROUNDS rounds that alternate the backends (the figure
is the median round; the ratio of each round is printed too: on a 2-core machine one run of one
case swings by more than the differences measured). Each case starts once both services' search
indexes have caught up (a case of creates leaves a backlog that would weigh on the next). Then a readable list page at 1,000 Resources
and at N (the same principal reads them all; another tenant holds nothing), and a change-feed
poll of 1,000 changes. Prints each figure and the ratio PostgreSQL / LMDB.

    bench/backends [N] [SECONDS] [ROUNDS]   (the wrapper builds and starts a PostgreSQL of its own)
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "client"))
from harness import Service, fetch, wait_until  # noqa: E402

RESOURCE = {"title": "Spring tides", "type": "CHAPTER", "language": "en", "content": {
    "format": "cl.content/1", "blocks": [
        {"type": "heading", "key": "h1", "level": 1, "children": [{"type": "span", "text": "Spring tides"}]},
        {"type": "paragraph", "key": "p1", "children": [
            {"type": "span", "text": "The range at Brest reaches seven metres. " * 20}]}]}}
SMALL = json.dumps({"title": "Tide table", "type": "CHAPTER", "language": "en", "content": {
    "format": "cl.content/1", "blocks": [{"type": "paragraph", "key": "p1", "children": [
        {"type": "span", "text": "High water at Brest."}]}]}})


def wrk(args, script=None):
    cmd = ["wrk", "--latency"] + args
    if script:
        cmd[1:1] = ["-s", script]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("answer "):
            print("  " + line[:300], flush=True)
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
    mean = re.search(r"Latency\s+([\d.]+)(us|ms|s)", out)
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rate": rate, "p99_ms": float(p99.group(1)) * scale,
            "mean_ms": float(mean.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[mean.group(2)],
            "non_2xx": int(bad.group(1)) if bad else 0}


def lua(path, token, idempotent, run=""):
    with open(path, "w") as f:
        f.write('wrk.method = "POST"\nwrk.body = [[%s]]\n' % SMALL)
        f.write('wrk.headers["Content-Type"] = "application/json"\n')
        f.write('wrk.headers["Authorization"] = "Bearer %s"\n' % token)
        # The first answers that are not 201, shown (a benchmark of failures measures nothing).
        f.write('local shown = 0\nresponse = function(status, headers, body) if status ~= 201 and shown < 2 then '
                'shown = shown + 1; print("answer " .. status .. " " .. body) end end\n')
        if idempotent:
            # `me` is each thread's global (thread:set): a local here would hide it, and the threads'
            # keys would collide. `run` makes each run's keys its own: wrk does not seed its random
            # numbers, so without it a second run sends the first run's keys again, and is answered
            # replays, not creates.
            f.write('local n = 0\nlocal made = 0\n'
                    'setup = function(thread) made = made + 1; thread:set("me", made) end\n'
                    'request = function() n = n + 1; wrk.headers["Idempotency-Key"] = "k-%s-" .. me .. "-" .. n; '
                    'return wrk.format() end\n' % run)


class Bench:
    """One backend's service, its tokens and the Resource it reads."""

    def __init__(self, backend, binary, source, env, work):
        self.backend = backend
        self.svc = Service(binary, source, dict(env, CONTENTLAKE_ACTORS_ASK_TIMEOUT_MS="30000",
                                                CONTENTLAKE_STORAGE_MAP_SIZE_MIB="32768", CONTENTLAKE_LOG_ACCESS="false"))
        svc = self.svc
        self.url = "http://127.0.0.1:%d" % svc.port
        self.writer = svc.token(tenant="t_bench", sub="a_bench", scopes="content-lake.read content-lake.write contracts.write")
        reader = svc.token(tenant="t_bench", sub="a_bench", scopes="content-lake.read")
        status, _, body = svc.request("POST", "/v0/content-lake/works", self.writer, {"title": "Tides"})
        work_id = json.loads(body)["id"]
        svc.request("POST", "/v0/contracts", self.writer, {
            "title": "Bench rights", "status": "ACTIVE", "valid_from": "2020-01-01T00:00:00Z", "work_ids": [work_id],
            "territorial_rights": [{"worldwide": True, "status": "PERMITTED"}],
            "usage_terms": [{"usage_type": "ACCESS", "status": "PERMITTED"},
                            {"usage_type": "DISPLAY", "status": "PERMITTED"}]})
        status, _, body = svc.request("POST", "/v0/content-lake/resources", self.writer, dict(RESOURCE, work_id=work_id))
        self.read = ["-H", "Authorization: Bearer " + reader, self.url + "/v0/content-lake/resources/" + json.loads(body)["id"]]
        self.scripts = {}
        for keyed in (False, True):
            self.scripts[keyed] = os.path.join(work, "%s-create%s.lua" % (backend, "-keyed" if keyed else ""))
            lua(self.scripts[keyed], self.writer, keyed)
        # The list tenant: one reader, its own creations readable.
        self.lister = svc.token(tenant="t_list", sub="u_reader", client_id="a_bench",
                                scopes="content-lake.read content-lake.write")
        self.cursor = None

    def quiet(self):
        """Waits until this service's search index has applied every change: the backlog a case of
        creates leaves would otherwise take CPU from the case measured next, of either backend."""
        def lag():
            _, _, body = fetch("http://127.0.0.1:%d/metrics" % self.svc.admin_port)
            m = re.search(rb"^contentlake_search_index_lag_changes (\S+)$", body, re.M)
            return m is not None and float(m.group(1)) == 0
        wait_until("the %s service's search index caught up" % self.backend, lag, timeout=300)

    def case(self, name, seconds):
        if name.startswith("read"):
            c = name[len("read c"):]
            wrk(["-t2", "-c" + c, "-d2s"] + self.read)  # warm
            return wrk(["-t2", "-c" + c, "-d%ds" % seconds] + self.read)
        keyed = name.endswith("keyed")
        if keyed:  # keys no earlier run sent
            lua(self.scripts[keyed], self.writer, True, uuid.uuid4().hex)
        return wrk(["-t2", "-c64", "-d%ds" % seconds, self.url + "/v0/content-lake/resources"], self.scripts[keyed])

    def pages(self, seconds, label):
        page = ["-t1", "-c1", "-d%ds" % seconds, "-H", "Authorization: Bearer " + self.lister]
        out = {"list page at " + label: wrk(page + [self.url + "/v0/content-lake/resources?page_size=50"])}
        if label == "1,000":
            out["feed poll of 1,000"] = wrk(page + [self.url + "/v0/content-lake/changes?page_size=1000&since=" + self.cursor])
        return out

    def close(self):
        self.svc.shutdown()
        self.svc.dir.cleanup()


CASES = ("read c8", "read c64", "creates c64", "creates c64 keyed")


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def main():
    binary, source, pg_url = sys.argv[1], sys.argv[2], sys.argv[3]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 1000000
    seconds = int(sys.argv[5]) if len(sys.argv) > 5 else 10
    rounds = int(sys.argv[6]) if len(sys.argv) > 6 else 3
    work = tempfile.mkdtemp()
    # Both services up, one measured at a time: each case in rounds that alternate the backends, so
    # what else the machine does in a minute weighs on both alike. The figure is the median round.
    benches = {"lmdb": Bench("lmdb", binary, source, {}, work)}
    try:
        benches["postgresql"] = Bench("postgresql", binary, source, {
            "CONTENTLAKE_STORAGE_BACKEND": "postgresql", "CONTENTLAKE_STORAGE_POSTGRESQL_URL": pg_url,
            "CONTENTLAKE_STORAGE_POSTGRESQL_POOL_SIZE": "16"}, work)
        runs = {b: {c: [] for c in CASES} for b in benches}
        for r in range(rounds):
            for case in CASES:
                for b in (("lmdb", "postgresql") if r % 2 == 0 else ("postgresql", "lmdb")):
                    for bench in benches.values():
                        bench.quiet()
                    runs[b][case].append(benches[b].case(case, seconds))
            print("  round %d of %d: %s" % (r + 1, rounds, ", ".join(
                "%s %.2f" % (c, runs["postgresql"][c][-1]["rate"] / runs["lmdb"][c][-1]["rate"]) for c in CASES)), flush=True)
        pages = {}
        for b, bench in benches.items():
            # The feed's cursor from just before the list tenant's first 1,000 Resources.
            status, _, body = bench.svc.request("GET", "/v0/content-lake/resources?page_size=1", bench.lister)
            bench.cursor = json.loads(body)["changes_cursor"]
            bench.svc.create_resources(bench.lister, 1000, clients=16, body=json.loads(SMALL))
            pages[b] = bench.pages(seconds, "1,000")
        for b, bench in benches.items():
            started = time.monotonic()
            bench.svc.create_resources(bench.lister, n - 1000, clients=64, body=json.loads(SMALL))
            print("  %s: grew the list tenant to %d in %.0f s" % (b, n, time.monotonic() - started), flush=True)
            pages[b].update(bench.pages(seconds, "%d" % n))
    finally:
        for bench in benches.values():
            bench.close()
    print("%-22s %14s %14s %8s   %s" % ("", "LMDB", "PostgreSQL", "PG/LMDB", "ratio per round"))
    for case in CASES:
        a = [x["rate"] for x in runs["lmdb"][case]]
        b = [x["rate"] for x in runs["postgresql"][case]]
        per = ", ".join("%.2f" % (y / x) for x, y in zip(a, b))
        print("%-22s %10.0f r/s %10.0f r/s %8.2f   %s" % (case, median(a), median(b), median(b) / median(a), per))
        a = [x["p99_ms"] for x in runs["lmdb"][case]]
        b = [x["p99_ms"] for x in runs["postgresql"][case]]
        print("%-22s %11.2f ms %11.2f ms %8.2f" % (case + " p99", median(a), median(b), median(b) / median(a)))
        bad = sum(x["non_2xx"] for x in runs["lmdb"][case]), sum(x["non_2xx"] for x in runs["postgresql"][case])
        if any(bad):
            print("  (non-2xx answers: LMDB %d, PostgreSQL %d)" % bad)
    for key in pages["lmdb"]:
        a, b = pages["lmdb"][key], pages["postgresql"][key]
        print("%-22s %11.2f ms %11.2f ms %8.2f" % (key + " mean", a["mean_ms"], b["mean_ms"], b["mean_ms"] / a["mean_ms"]))
    for backend in ("lmdb", "postgresql"):
        big = "list page at %d" % n
        print("%s: a page at %d is %.2fx a page at 1,000" % (
            backend, n, pages[backend][big]["mean_ms"] / pages[backend]["list page at 1,000"]["mean_ms"]))


if __name__ == "__main__":
    main()
