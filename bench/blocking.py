"""Warm reads on PostgreSQL while cold reads and writes run (issue 67, item 3): the case where a
round trip to the database held on a scheduler thread hurts every other request. For each binary
given (the current one and one built before the change, alternating over ROUNDS rounds), a service
on a fresh database with a small hot-record cache (1 MiB: most of N Resources are cold), then, at
once for SECONDS: wrk at 8 connections reading one Resource again and again (warm: from the cache),
wrk at 16 connections reading random ones of the N (cold: a round trip each), and wrk at 8
connections creating Resources. Prints each round's warm p99 and the cold and write rates, and the
median round of each binary. With DELAY_MS, the services reach the database through a proxy that
holds every packet that long each way (a database across a network: the case where a round trip
held on a scheduler thread hurts most; the proxy's own CPU is the same for both binaries).

    bench/blocking [SECONDS] [ROUNDS] [N] [BEFORE_BINARY] [DELAY_MS]   (the wrapper starts a PostgreSQL)
"""
import asyncio
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "client"))
from harness import Service  # noqa: E402

BODY = {"title": "Tide table", "type": "ARTICLE", "language": "en", "content": {
    "format": "cl.content/1", "blocks": [{"type": "paragraph", "key": "p1", "children": [
        {"type": "span", "text": "High water at Brest, the range seven metres. " * 20}]}]}}


def delaying_proxy(target_host, target_port, delay_ms):
    """A TCP proxy on a free loopback port to (target_host, target_port) that forwards every chunk
    `delay_ms` after it arrived, in order, each way. Answers the port; runs on a daemon thread."""
    ready = threading.Event()
    port = [0]
    delay = delay_ms / 1000.0

    async def pipe(reader, writer):
        loop = asyncio.get_running_loop()
        queue = asyncio.Queue()

        async def forward():
            while True:
                due, data = await queue.get()
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not data:
                    writer.close()
                    return
                writer.write(data)
                await writer.drain()
        task = asyncio.ensure_future(forward())
        while True:
            data = await reader.read(65536)
            await queue.put((loop.time() + delay, data))
            if not data:
                break
        await task

    async def handle(client_reader, client_writer):
        server_reader, server_writer = await asyncio.open_connection(target_host, target_port)
        await asyncio.gather(pipe(client_reader, server_writer), pipe(server_reader, client_writer),
                             return_exceptions=True)

    def run():
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        server = loop.run_until_complete(asyncio.start_server(handle, "127.0.0.1", 0))
        port[0] = server.sockets[0].getsockname()[1]
        ready.set()
        loop.run_forever()
    threading.Thread(target=run, daemon=True).start()
    ready.wait()
    return port[0]


def wrk_run(args, script=None):
    cmd = ["wrk", "--latency"] + (["-s", script] if script else []) + args
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def parsed(proc):
    out, _ = proc.communicate()
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"p99_ms": float(p99.group(1)) * scale[p99.group(2)], "rate": float(rate.group(1)),
            "non_2xx": int(bad.group(1)) if bad else 0}


def create(port, token, n, clients=8):
    ids, lock, left = [], threading.Lock(), [n]
    payload = json.dumps(BODY)

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while True:
            with lock:
                if left[0] == 0:
                    return
                left[0] -= 1
            conn.request("POST", "/v0/content-lake/resources", payload,
                         {"Authorization": "Bearer " + token, "Content-Type": "application/json"})
            r = conn.getresponse()
            body = r.read()
            assert r.status == 201, (r.status, body[:200])
            with lock:
                ids.append(json.loads(body)["id"])
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return ids


def one_round(binary, source, base_url, seconds, n, work, proxy_port):
    db = "blocking_" + uuid.uuid4().hex[:8]
    subprocess.run(["psql", base_url, "-qAtc", "CREATE DATABASE " + db], check=True)
    url = base_url.replace("dbname=postgres", "dbname=" + db)
    if proxy_port:
        url = re.sub(r"host=\S+", "host=127.0.0.1", url)
        url = re.sub(r"port=\d+", "port=%d" % proxy_port, url)
    svc = Service(binary, source, {"CONTENTLAKE_STORAGE_BACKEND": "postgresql", "CONTENTLAKE_STORAGE_POSTGRESQL_URL": url,
                                   "CONTENTLAKE_STORAGE_POSTGRESQL_CACHE_MIB": "1", "CONTENTLAKE_LOG_ACCESS": "false",
                                   "CONTENTLAKE_ACTORS_ASK_TIMEOUT_MS": "30000"})
    try:
        token = svc.token(tenant="t_bench", sub="a_bench", scopes="content-lake.read content-lake.write")
        ids = create(svc.port, token, n)
        base = "http://127.0.0.1:%d" % svc.port
        cold = os.path.join(work, "cold.lua")
        with open(cold, "w") as f:
            f.write("local ids = {%s}\n" % ",".join('"%s"' % i for i in ids))
            f.write('wrk.headers["Authorization"] = "Bearer %s"\n' % token)
            f.write('request = function() return wrk.format("GET", "/v0/content-lake/resources/" .. ids[math.random(#ids)]) end\n')
        writes = os.path.join(work, "writes.lua")
        with open(writes, "w") as f:
            f.write('wrk.method = "POST"\nwrk.body = [[%s]]\n' % json.dumps(BODY))
            f.write('wrk.headers["Content-Type"] = "application/json"\n')
            f.write('wrk.headers["Authorization"] = "Bearer %s"\n' % token)
        warm = ["-H", "Authorization: Bearer " + token, base + "/v0/content-lake/resources/" + ids[0]]
        subprocess.run(["wrk", "-t1", "-c8", "-d2s"] + warm, capture_output=True, check=True)  # into the cache
        d = "-d%ds" % seconds
        running = [wrk_run(["-t1", "-c8", d] + warm), wrk_run(["-t1", "-c16", d, base], cold),
                   wrk_run(["-t1", "-c8", d, base + "/v0/content-lake/resources"], writes)]
        w, c, x = (parsed(p) for p in running)
        return {"warm_p99_ms": w["p99_ms"], "warm_rate": w["rate"], "cold_rate": c["rate"], "cold_p99_ms": c["p99_ms"],
                "write_rate": x["rate"], "non_2xx": w["non_2xx"] + c["non_2xx"] + x["non_2xx"]}
    finally:
        svc.stop()
        subprocess.run(["psql", base_url, "-qAtc", "DROP DATABASE " + db], check=False)


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def main():
    binary, source, base_url = sys.argv[1], sys.argv[2], sys.argv[3]
    seconds, rounds, n = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
    binaries = [("now", binary)] + ([("before", sys.argv[7])] if len(sys.argv) > 7 and sys.argv[7] else [])
    delay_ms = float(sys.argv[8]) if len(sys.argv) > 8 and sys.argv[8] else 0
    proxy_port = None
    if delay_ms > 0:
        pg_port = int(re.search(r"port=(\d+)", base_url).group(1))
        proxy_port = delaying_proxy("127.0.0.1", pg_port, delay_ms)
        print("the services reach the database through a proxy holding each packet %.1f ms each way" % delay_ms)
    results = {label: [] for label, _ in binaries}
    with tempfile.TemporaryDirectory() as work:
        for r in range(rounds):
            for label, b in (binaries if r % 2 == 0 else list(reversed(binaries))):
                got = one_round(b, source, base_url, seconds, n, work, proxy_port)
                results[label].append(got)
                print("round %d %-6s warm p99 %7.2f ms (%6.0f req/s)  cold %6.0f req/s (p99 %6.2f ms)  writes %5.0f/s  "
                      "non-2xx %d" % (r + 1, label, got["warm_p99_ms"], got["warm_rate"], got["cold_rate"],
                                      got["cold_p99_ms"], got["write_rate"], got["non_2xx"]), flush=True)
    for label, rs in results.items():
        print("median %-6s warm p99 %.2f ms, cold %.0f req/s, writes %.0f/s" % (
            label, median([x["warm_p99_ms"] for x in rs]), median([x["cold_rate"] for x in rs]),
            median([x["write_rate"] for x in rs])))
    if "before" in results:
        print("warm p99 now / before: %.2f (median of rounds); per round: %s" % (
            median([x["warm_p99_ms"] for x in results["now"]]) / median([x["warm_p99_ms"] for x in results["before"]]),
            ", ".join("%.2f" % (a["warm_p99_ms"] / b["warm_p99_ms"]) for a, b in zip(results["now"], results["before"]))))


if __name__ == "__main__":
    main()
