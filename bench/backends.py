"""PostgreSQL against LMDB, in one run on this machine, the same requests and the same data
(issue 41, item 8). For each backend in turn (one service at a time, nothing else running): an
authenticated GET of a Resource with rights (req/s and p99 at 8 and 64 connections), creates at 64
connections (group commit) without and with an Idempotency-Key, a readable list page at 1,000
Resources and at N (the same principal reads them all; another tenant holds nothing), and a
change-feed poll of 1,000 changes. Prints each figure and the ratio PostgreSQL / LMDB.

    bench/backends [N] [SECONDS]   (the wrapper builds and starts a PostgreSQL of its own)
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "client"))
from harness import Service  # noqa: E402

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


def lua(path, token, idempotent):
    with open(path, "w") as f:
        f.write('wrk.method = "POST"\nwrk.body = [[%s]]\n' % SMALL)
        f.write('wrk.headers["Content-Type"] = "application/json"\n')
        f.write('wrk.headers["Authorization"] = "Bearer %s"\n' % token)
        # The first answers that are not 201, shown (a benchmark of failures measures nothing).
        f.write('local shown = 0\nresponse = function(status, headers, body) if status ~= 201 and shown < 2 then '
                'shown = shown + 1; print("answer " .. status .. " " .. body) end end\n')
        if idempotent:
            # `me` is each thread's global (thread:set): a local here would hide it, and the threads'
            # keys (and random sequences) would collide.
            f.write('local n = 0\nlocal made = 0\n'
                    'setup = function(thread) made = made + 1; thread:set("me", made) end\n'
                    'request = function() n = n + 1; wrk.headers["Idempotency-Key"] = "k-" .. me .. "-" .. n .. "-" '
                    '.. math.random(1000000000); return wrk.format() end\n')


def measure(backend, binary, source, env, n, seconds, work):
    svc = Service(binary, source, dict(env, CONTENTLAKE_ACTORS_ASK_TIMEOUT_MS="30000",
                                       CONTENTLAKE_STORAGE_MAP_SIZE_MIB="32768", CONTENTLAKE_LOG_ACCESS="false"))
    try:
        url = "http://127.0.0.1:%d" % svc.port
        writer = svc.token(tenant="t_bench", sub="a_bench", scopes="content-lake.read content-lake.write contracts.write")
        reader = svc.token(tenant="t_bench", sub="a_bench", scopes="content-lake.read")
        status, _, body = svc.request("POST", "/v0/content-lake/works", writer, {"title": "Tides"})
        work_id = json.loads(body)["id"]
        svc.request("POST", "/v0/contracts", writer, {
            "title": "Bench rights", "status": "ACTIVE", "valid_from": "2020-01-01T00:00:00Z", "work_ids": [work_id],
            "territorial_rights": [{"worldwide": True, "status": "PERMITTED"}],
            "usage_terms": [{"usage_type": "ACCESS", "status": "PERMITTED"},
                            {"usage_type": "DISPLAY", "status": "PERMITTED"}]})
        status, _, body = svc.request("POST", "/v0/content-lake/resources", writer, dict(RESOURCE, work_id=work_id))
        rid = json.loads(body)["id"]
        auth = ["-H", "Authorization: Bearer " + reader]
        out = {}
        for c in (8, 64):
            wrk(["-t2", "-c%d" % c, "-d2s"] + auth + [url + "/v0/content-lake/resources/" + rid])  # warm
            out["read c%d" % c] = wrk(["-t2", "-c%d" % c, "-d%ds" % seconds] + auth + [url + "/v0/content-lake/resources/" + rid])
        # The list tenant: one reader, N readable Resources (its own creations), a cursor from before.
        lister = svc.token(tenant="t_list", sub="u_reader", client_id="a_bench",
                           scopes="content-lake.read content-lake.write")
        status, _, body = svc.request("GET", "/v0/content-lake/resources?page_size=1", lister)
        cursor = json.loads(body)["changes_cursor"]
        svc.create_resources(lister, 1000, clients=16, body=json.loads(SMALL))
        page = ["-t1", "-c1", "-d%ds" % seconds, "-H", "Authorization: Bearer " + lister]
        out["list page at 1,000"] = wrk(page + [url + "/v0/content-lake/resources?page_size=50"])
        out["feed poll of 1,000"] = wrk(page + [url + "/v0/content-lake/changes?page_size=1000&since=" + cursor])
        script = os.path.join(work, "create.lua")
        lua(script, writer, False)
        out["creates c64"] = wrk(["-t2", "-c64", "-d%ds" % seconds, url + "/v0/content-lake/resources"], script)
        lua(script, writer, True)
        out["creates c64 keyed"] = wrk(["-t2", "-c64", "-d%ds" % seconds, url + "/v0/content-lake/resources"], script)
        started = time.monotonic()
        svc.create_resources(lister, n - 1000, clients=64, body=json.loads(SMALL))
        print("  %s: grew the list tenant to %d in %.0f s" % (backend, n, time.monotonic() - started), flush=True)
        out["list page at %d" % n] = wrk(page + [url + "/v0/content-lake/resources?page_size=50"])
        return out
    finally:
        svc.shutdown()
        svc.dir.cleanup()


def main():
    binary, source, pg_url = sys.argv[1], sys.argv[2], sys.argv[3]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 1000000
    seconds = int(sys.argv[5]) if len(sys.argv) > 5 else 10
    work = tempfile.mkdtemp()
    results = {}
    results["lmdb"] = measure("lmdb", binary, source, {}, n, seconds, work)
    results["postgresql"] = measure("postgresql", binary, source, {
        "CONTENTLAKE_STORAGE_BACKEND": "postgresql", "CONTENTLAKE_STORAGE_POSTGRESQL_URL": pg_url,
        "CONTENTLAKE_STORAGE_POSTGRESQL_POOL_SIZE": "16"}, n, seconds, work)
    print("%-22s %14s %14s %8s" % ("", "LMDB", "PostgreSQL", "PG/LMDB"))
    for key in results["lmdb"]:
        a, b = results["lmdb"][key], results["postgresql"][key]
        if key.startswith(("list", "feed")):
            print("%-22s %11.2f ms %11.2f ms %8.2f" % (key + " mean", a["mean_ms"], b["mean_ms"], b["mean_ms"] / a["mean_ms"]))
        else:
            print("%-22s %10.0f r/s %10.0f r/s %8.2f" % (key, a["rate"], b["rate"], b["rate"] / a["rate"]))
            print("%-22s %11.2f ms %11.2f ms %8.2f" % (key + " p99", a["p99_ms"], b["p99_ms"], b["p99_ms"] / a["p99_ms"]))
        if a["non_2xx"] or b["non_2xx"]:
            print("  (non-2xx answers: LMDB %d, PostgreSQL %d)" % (a["non_2xx"], b["non_2xx"]))
    for backend in ("lmdb", "postgresql"):
        big = [k for k in results[backend] if k.startswith("list page at") and k != "list page at 1,000"][0]
        print("%s: a page at %s is %.2fx a page at 1,000" % (
            backend, big[len("list page at "):], results[backend][big]["mean_ms"] / results[backend]["list page at 1,000"]["mean_ms"]))


if __name__ == "__main__":
    main()
