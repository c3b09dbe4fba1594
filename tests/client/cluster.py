"""Several nodes behind HAProxy, proven on one machine with real parts (issue 42, item 7): a
PostgreSQL 15 of the test's own, s3rver (npm) as the shared object store, HAProxy 2.6 with the
shipped configuration (deploy/cluster/haproxy.cfg, only its addresses changed) and two
`contentlake serve` processes on loopback ports. Everything is stopped at the end, also when a
check fails.

What it proves, each printed with what it measured:
- a write on node A is read on node B at once with its Content-Lake-Position, and found by a search
  on B with it;
- a blob uploaded through node A and completed through node B is one object in the shared bucket
  (boto3 reads it there) and node B's download URL serves its bytes;
- the same Idempotency-Key sent at the same moment to both nodes: one effect, the other answer a
  replay of it (or 409 IDEMPOTENCY_KEY_IN_USE, whose retry is the replay);
- 20 concurrent PATCHes with one update_token spread over both nodes: exactly one wins;
- an event stream (npm eventsource) through HAProxy whose node is SIGKILLed reconnects to the other
  with Last-Event-ID: every change once, in order;
- a webhook delivery in flight when its node is SIGKILLed is delivered by the other node, with the
  same webhook-id;
- a node SIGKILLed under a load of keyed writes and reads through HAProxy: the keyed retries of the
  requests in flight succeed exactly once, HAProxy routes around the dead node (measured: failed
  requests, seconds until it is marked down), and the restarted node rejoins;
- PostgreSQL stopped and started again under load (fast, then immediate): every answer 201 or 503
  with Retry-After (from the nodes, then from HAProxy once no node is ready), both nodes recover by
  themselves;
- the network between node2 and PostgreSQL stalls (a proxy in the test forwards nothing): HAProxy
  takes node2 out, node1 serves everything and takes every lease; node2 recovers by itself;
- each node in turn stopped with SIGTERM and started again under load (a rolling upgrade): no
  request fails, keyed or not;
- a history check at the end: every acknowledged write is in PostgreSQL, no Idempotency-Key has two
  effects, and the change feed read through HAProxy is the commit-ordered change log.

    cluster.py CONTENTLAKE_BINARY SOURCE_DIR S3RVER_DIR EVENTSOURCE_NODE_MODULES
"""
import http.client
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import LEASE_TTL_MS, Cluster, fetch, skip, wait_until  # noqa: E402

TENANT = "t_cluster"
SCOPES = "content-lake.read content-lake.write webhooks.read webhooks.write"
failures = []


def check(ok, what, detail=None):
    print(("ok    " if ok else "FAIL  ") + what + ("" if ok or detail is None else ": %r" % (detail,)))
    if not ok:
        failures.append(what)


def header(headers, name):
    """A response header by name, whatever its case."""
    return next((v for k, v in headers.items() if k.lower() == name.lower()), None)


def position_of(headers):
    """The request header that carries a write's `Content-Lake-Position` (from its answer's headers)."""
    return {"Content-Lake-Position": header(headers, "Content-Lake-Position") or ""}


def resource(title):
    return {"title": title, "type": "ARTICLE", "language": "en", "content": {
        "format": "cl.content/1", "blocks": [{"type": "paragraph", "key": "p1",
                                              "children": [{"type": "span", "text": title}]}]}}


class Receiver:
    """A webhook receiver on 127.0.0.1: records every delivery (its webhook-id and body); while
    `holding` it answers nothing (a delivery in flight that its node will not see finish)."""

    def __init__(self):
        self.deliveries = []
        self.lock = threading.Lock()
        self.holding = threading.Event()
        self.released = threading.Event()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    receiver.deliveries.append((self.headers.get("webhook-id"), json.loads(body), time.monotonic()))
                if receiver.holding.is_set():
                    receiver.released.wait(timeout=60)
                    return  # never answered: the connection closes with the handler
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d/hook" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def of(self, resource_id):
        with self.lock:
            return [(i, at) for i, body, at in self.deliveries if body.get("resource_id") == resource_id]

    def stop(self):
        self.released.set()
        self.server.shutdown()


class History:
    """What clients were told: every acknowledged write, by Idempotency-Key where it had one."""

    def __init__(self):
        self.acknowledged = {}  # resource id -> title
        self.keys = {}  # Idempotency-Key -> resource ids it was answered with
        self.lock = threading.Lock()

    def created(self, status, body, key=None):
        if status != 201:
            return None
        got = json.loads(body)
        with self.lock:
            self.acknowledged[got["id"]] = got.get("title")
            if key:
                self.keys.setdefault(key, set()).add(got["id"])
        return got


def test_read_your_writes(c, history, token):
    a, b = c.nodes
    status, headers, body = c.request("POST", "/v0/content-lake/resources", token, resource("Kelp lantern"), port=a.port)
    got = history.created(status, body)
    check(status == 201 and header(headers, "Content-Lake-Position"), "a write on node A answers its position", status)
    position = position_of(headers)
    status, _, body = c.request("GET", "/v0/content-lake/resources/" + got["id"], token, headers=position, port=b.port)
    check(status == 200 and json.loads(body)["title"] == "Kelp lantern", "node B reads it at once with the position",
          status)
    status, _, body = c.request("POST", "/v0/content-lake/search", token, {"query": "lantern"}, headers=position,
                                port=b.port)
    hits = [h["id"] for h in json.loads(body).get("hits", [])] if status == 200 else []
    check(got["id"] in hits, "node B's search finds it on the first request with the position", (status, hits))


def test_session_across_nodes(c, history, token):
    """A search session's first page on one node and its next at once on the other, thirty times,
    both ways: the next page finds the session (its open is written after the first page's answer,
    in a batch: the other node waits for it while its id is young) and never repeats a hit."""
    a, b = c.nodes
    position = None
    for n in range(3):
        status, headers, body = c.request("POST", "/v0/content-lake/resources", token,
                                          resource("Driftwood ledger %d" % n), port=a.port)
        history.created(status, body)
        position = position_of(headers)
    outcomes = []
    for n in range(30):
        first, then = (a, b) if n % 2 == 0 else (b, a)
        status, _, body = c.request("POST", "/v0/content-lake/search", token, {"query": "driftwood", "page_size": 1},
                                    headers=position, port=first.port)
        page1 = json.loads(body) if status == 200 else {}
        status2, _, body2 = c.request("POST", "/v0/content-lake/search", token,
                                      {"search_id": page1.get("search_id", ""), "page_size": 1}, port=then.port)
        page2 = json.loads(body2) if status2 == 200 else {}
        hits = [h["id"] for h in page1.get("hits", []) + page2.get("hits", [])]
        outcomes.append((status, status2, len(hits), len(set(hits))))
    check(all(o == (200, 200, 2, 2) for o in outcomes),
          "a session's next page asked at once on the other node finds it, with a hit not answered before",
          [o for o in outcomes if o != (200, 200, 2, 2)])


def test_held_limit_through_balancer(c):
    """One principal's held long polls through HAProxy (spread over both nodes) and directly at both
    nodes at once: the per-principal limit (10) holds over the nodes together."""
    token = c.token(sub="u_holder", scopes="content-lake.read")
    answers = []
    lock = threading.Lock()
    barrier = threading.Barrier(14)

    def hold(port):
        barrier.wait()
        got = c.request("GET", "/v0/content-lake/changes?wait=6", token, port=port)
        with lock:
            answers.append(got[0])
    ports = [c.port] * 8 + [n.port for n in c.nodes] * 3
    threads = [threading.Thread(target=hold, args=(p,)) for p in ports]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(sorted(answers) == [200] * 10 + [429] * 4,
          "14 long polls of one principal at once, through HAProxy and at both nodes: 10 held, 4 refused",
          sorted(answers))


def test_text_through_balancer(c, token):
    """U+0000 and bytes that are not UTF-8 in a path, a query and a body reach the nodes through
    HAProxy and are refused there naming the field, never cut into another id."""
    seen = []
    for path, body, field in (("/v0/content-lake/works/wk_x%00y", None, "{id}"),
                              ("/v0/content-lake/works/wk_x%FF", None, "{id}"),
                              ("/v0/content-lake/activities?type=ADAPTATION%00", None, "type"),
                              ("/v0/content-lake/works", {"title": "a\u0000b"}, "/title")):
        status, _, answer = c.request("POST" if body else "GET", path, token, body)
        err = json.loads(answer).get("error", {}) if answer else {}
        seen.append((status, err.get("reason"), (err.get("details") or [{}])[0].get("field")))
        check(status == 400 and err.get("reason") == "INVALID_ARGUMENT"
              and (err.get("details") or [{}])[0].get("field") == field,
              "through HAProxy, %s is 400 INVALID_ARGUMENT naming %s" % (path, field), seen[-1])


def test_same_key_on_both_nodes(c, history, token):
    a, b = c.nodes
    key = "same-moment-key"
    answers = [None, None]
    barrier = threading.Barrier(2)

    def send(i, node):
        barrier.wait()
        answers[i] = c.request("POST", "/v0/content-lake/resources", token, resource(key),
                               headers={"Idempotency-Key": key}, port=node.port)
    threads = [threading.Thread(target=send, args=(i, n)) for i, n in enumerate((a, b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = sorted(s for s, _, _ in answers)
    for s, _, body in answers:
        history.created(s, body, key)
    replayed = [header(h, "Idempotent-Replayed") == "true" for s, h, _ in answers if s == 201]
    if 409 in statuses:  # the other was still executing: its retry is the replay
        reason = [json.loads(body).get("error", {}).get("reason") for s, _, body in answers if s == 409]
        check(reason == ["IDEMPOTENCY_KEY_IN_USE"], "the concurrent one is told the key is in use", reason)
        s, h, body = c.request("POST", "/v0/content-lake/resources", token, resource(key),
                               headers={"Idempotency-Key": key}, port=b.port)
        history.created(s, body, key)
        check(s == 201 and header(h, "Idempotent-Replayed") == "true", "its retry is the replay", s)
    else:
        check(statuses == [201, 201] and sorted(replayed) == [False, True],
              "the same key on both nodes at once: one effect, one replay", (statuses, replayed))
    check(len(history.keys.get(key, ())) == 1, "every answer names the same Resource", history.keys.get(key))
    count = c.pg.psql("SELECT count(*) FROM resources WHERE tenant = '%s' AND record::json->>'title' = '%s'"
                      % (TENANT, key), "contentlake").strip()
    check(count == "1", "PostgreSQL holds one Resource for the key", count)
    print("      same key at once on both nodes: answers %s" % statuses)


def test_concurrent_patches(c, history, token):
    status, _, body = c.request("POST", "/v0/content-lake/resources", token, resource("Patched"))
    got = history.created(status, body)
    results = [None] * 20
    barrier = threading.Barrier(20)

    def patch(i):
        node = c.nodes[i % 2]
        barrier.wait()
        results[i] = c.request("PATCH", "/v0/content-lake/resources/" + got["id"], token,
                               {"update_token": got["update_token"], "title": "winner %d" % i}, port=node.port)
    threads = [threading.Thread(target=patch, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    won = [i for i, (s, _, _) in enumerate(results) if s == 200]
    lost = [json.loads(b).get("error", {}).get("reason") for s, _, b in results if s != 200]
    check(len(won) == 1, "20 PATCHes with one update_token over both nodes: exactly one wins",
          [s for s, _, _ in results])
    check(set(lost) == {"TOKEN_MISMATCH"}, "the 19 others are 409 TOKEN_MISMATCH", set(lost))
    status, _, body = c.request("GET", "/v0/content-lake/resources/" + got["id"], token)
    check(won and json.loads(body)["title"] == "winner %d" % won[0], "the Resource is the winner's", body[:200])


def test_webhook_in_flight(c, history, token, rx):
    holder = c.lease_holder("webhooks")
    check(holder is not None, "one node holds the webhooks lease")
    other = c.nodes[1] if holder is c.nodes[0] else c.nodes[0]
    status, _, body = c.request("POST", "/v0/content-lake/webhooks", token,
                                {"url": rx.url, "event_types": ["resource.created"]})
    check(status == 201, "a webhook is created through HAProxy", body[:300])
    rx.holding.set()
    status, _, body = c.request("POST", "/v0/content-lake/resources", token, resource("In flight"), port=other.port)
    got = history.created(status, body)
    first = wait_until("the delivery reaches the receiver", lambda: rx.of(got["id"]))
    killed = time.monotonic()
    holder.kill()
    rx.holding.clear()
    again = wait_until("the other node delivers it again", lambda: len(rx.of(got["id"])) >= 2 and rx.of(got["id"]),
                       timeout=30)
    ids = {i for i, _ in again}
    check(len(ids) == 1, "delivered again with the same webhook-id", ids)
    check(c.lease_holder("webhooks") is other, "the surviving node holds the lease")
    took = again[1][1] - killed
    check(took < (LEASE_TTL_MS * 4 / 3) / 1000 + 2, "within the lease's time to live plus a third (and a round)", took)
    print("      webhook in flight: the first attempt held unanswered, its node SIGKILLed %.2f s after it arrived; "
          "delivered again by the other node %.2f s after the kill (lease ttl %.1f s)"
          % (killed - first[0][1], took, LEASE_TTL_MS / 1000))
    holder.restart(same_port=True)
    wait_until("HAProxy sees the restarted node up", lambda: c.server_states() == {"node1": "UP", "node2": "UP"},
               timeout=30)


def test_kill_under_load(c, history, token):
    """Writers with an Idempotency-Key each, retrying a failed attempt with the same key; readers;
    one node SIGKILLed in the middle."""
    running = threading.Event()
    running.set()
    stats = {"failed_attempts": 0, "retried_keys": 0, "reads": 0, "failed_reads": 0, "writes": 0}
    lock = threading.Lock()
    unfinished = []
    unkeyed_failed_at = []

    def writer(n):
        conn = None
        i = 0
        while running.is_set():
            i += 1
            key = "load-%d-%d" % (n, i)
            for attempt in range(50):
                try:
                    conn = conn or http.client.HTTPConnection("127.0.0.1", c.port, timeout=30)
                    conn.request("POST", "/v0/content-lake/resources", json.dumps(resource(key)),
                                 {"Authorization": "Bearer " + token, "Content-Type": "application/json",
                                  "Idempotency-Key": key})
                    r = conn.getresponse()
                    body = r.read()
                    status = r.status
                except (OSError, http.client.HTTPException):
                    conn, status, body = None, 0, b""
                if status == 201:
                    history.created(status, body, key)
                    with lock:
                        stats["writes"] += 1
                        if attempt:
                            stats["retried_keys"] += 1
                    break
                with lock:
                    stats["failed_attempts"] += 1
                time.sleep(0.05)  # a client's back-off before it retries the same key
            else:
                unfinished.append(key)

    def reader():
        while running.is_set():
            try:
                status = c.request("GET", "/v0/content-lake/resources?limit=5", token)[0]
            except OSError:
                status = 0
            with lock:
                stats["reads"] += 1
                if status != 200:
                    stats["failed_reads"] += 1

    def unkeyed():
        """Writes without a key, never retried by anyone: HAProxy must not send one twice, so one in
        flight on the killed node fails (502/503/504 or a broken connection) and its client decides."""
        while running.is_set():
            try:
                s, _, body = c.request("POST", "/v0/content-lake/resources", token, resource("unkeyed"))
            except OSError:
                s, body = 0, b""
            history.created(s, body)
            with lock:
                stats["unkeyed"] = stats.get("unkeyed", 0) + 1
                if s != 201:
                    stats["unkeyed_failed"] = stats.get("unkeyed_failed", 0) + 1
                    unkeyed_failed_at.append(time.monotonic())

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)] + [threading.Thread(target=reader)
                                                                             for _ in range(2)]
    threads.append(threading.Thread(target=unkeyed))
    for t in threads:
        t.start()
    wait_until("some writes are acknowledged", lambda: stats["writes"] >= 40)
    victim = c.nodes[0]
    with lock:
        before = dict(stats)
    killed = time.monotonic()
    victim.kill()
    wait_until("HAProxy marks the killed node down", lambda: c.server_states().get("node1") == "DOWN", timeout=30)
    down_at = time.monotonic()
    down_after = down_at - killed
    with lock:
        at_down = dict(stats)
    wait_until("writes go on on the survivor", lambda: stats["writes"] >= at_down["writes"] + 40)
    running.clear()
    for t in threads:
        t.join()
    check(not unfinished, "every keyed write succeeded, retries included", unfinished)
    failed_during = at_down["failed_attempts"] - before["failed_attempts"]
    failed_after = stats["failed_attempts"] - at_down["failed_attempts"]
    check(failed_after == 0, "once HAProxy routed around the dead node, no write attempt failed", failed_after)
    reads_failed_after = stats["failed_reads"] - at_down["failed_reads"]
    check(reads_failed_after == 0, "nor any read", reads_failed_after)
    unkeyed_failed = stats.get("unkeyed_failed", 0)
    late = [t - down_at for t in unkeyed_failed_at if t > down_at]
    check(not late, "no unkeyed write failed once HAProxy had taken the dead node out", late)
    print("      SIGKILL under load: HAProxy marked the node down %.2f s after the kill; meanwhile %d keyed write "
          "attempts and %d reads failed as the client saw them (HAProxy re-sent keyed writes and reads itself; %d keys "
          "needed a client retry), %d of %d unkeyed writes failed; %d keyed writes and %d reads in all"
          % (down_after, failed_during, at_down["failed_reads"] - before["failed_reads"], stats["retried_keys"],
             unkeyed_failed, stats.get("unkeyed", 0), stats["writes"], stats["reads"]))
    victim.restart(same_port=True)
    wait_until("HAProxy sees the restarted node up", lambda: c.server_states() == {"node1": "UP", "node2": "UP"},
               timeout=30)


def node_holding_stream(c):
    """The node holding an event stream open (its `contentlake_changes_held_requests` is 1), or None."""
    for node in c.nodes:
        try:
            body = fetch("http://127.0.0.1:%d/metrics" % node.admin_port)[2].decode()
        except OSError:
            continue
        if "\ncontentlake_changes_held_requests 1" in body:
            return node
    return None


def test_event_stream_failover(c, history, token, modules):
    """npm eventsource follows the feed through HAProxy; the node serving the stream is SIGKILLed;
    the client reconnects (Last-Event-ID) to the other node: every change once, in order."""
    since = json.loads(c.request("GET", "/v0/content-lake/changes", token)[2])["next_cursor"]
    url = "http://127.0.0.1:%d/v0/content-lake/changes?since=%s" % (c.port, since)
    client = subprocess.Popen(["node", os.path.join(c.source, "tests/client/changes_eventsource.js"), url, token, "30",
                               "120"], env=dict(os.environ, NODE_PATH=modules), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    events = []
    reader = threading.Thread(target=lambda: events.extend(json.loads(line)["event"] for line in client.stdout))
    reader.start()
    try:
        serving = wait_until("the stream is held by a node", lambda: node_holding_stream(c))
        created = []

        def write(n):
            for _ in range(n):
                key = "sse-%d" % len(created)
                status, _, body = c.request("POST", "/v0/content-lake/resources", token, resource(key),
                                            headers={"Idempotency-Key": key})
                created.append(history.created(status, body, key)["id"])
        write(10)
        wait_until("the first ten events arrive", lambda: len(events) >= 10)
        killed = time.monotonic()
        serving.kill()
        write(10)
        wait_until("the stream resumes on the other node", lambda: len(events) >= 11, timeout=30)
        resumed = time.monotonic() - killed
        write(10)
        client.wait(timeout=60)
        reader.join(timeout=10)
        ids = [e.get("resource_id") for e in events]
        check(ids == created, "the stream, across its node's SIGKILL: every change once, in order (%d)" % len(ids),
              (len(ids), len(set(ids))))
        check(client.returncode == 0, "the client got all 30 events", client.stderr.read()[-300:])
        print("      event stream: the node serving it SIGKILLed; the client's next event came through the other "
              "node %.2f s later (its retry is 1 s)" % resumed)
    finally:
        if client.poll() is None:
            client.kill()
        serving_restart = [n for n in c.nodes if n.proc.poll() is not None]
        for n in serving_restart:
            n.restart(same_port=True)
        wait_until("HAProxy sees both nodes up", lambda: c.server_states() == {"node1": "UP", "node2": "UP"},
                   timeout=30)


def test_database_restart(c, history, token, mode):
    """PostgreSQL stopped (`mode`: fast, as pg_ctl restart does, or immediate: a crash) and started
    again under keyed writes through HAProxy: every answer meanwhile is 201 or 503 with Retry-After
    (from a node, or from HAProxy once no node is ready), both nodes recover by themselves, and every
    acknowledged write survives (the history check at the end)."""
    running = threading.Event()
    running.set()
    seen = {}
    bad = []
    lock = threading.Lock()
    acked = [0]

    def writer(n):
        i = 0
        while running.is_set():
            i += 1
            key = "pg-%s-%d-%d" % (mode, n, i)
            while running.is_set():
                try:
                    status, headers, body = c.request("POST", "/v0/content-lake/resources", token, resource(key),
                                                      headers={"Idempotency-Key": key})
                except OSError as e:
                    status, headers, body = 0, {}, str(e).encode()
                with lock:
                    seen[status] = seen.get(status, 0) + 1
                    if status == 503 and not header(headers, "Retry-After"):
                        bad.append("503 without Retry-After: %s %s" % (dict(headers), body[:200]))
                    elif status not in (201, 503):
                        bad.append("%s %s" % (status, body[:160]))
                if status == 201:
                    history.created(status, body, key)
                    with lock:
                        acked[0] += 1
                    break
                time.sleep(0.05)  # the client's back-off before it retries the same key

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    try:
        wait_until("writes are acknowledged", lambda: acked[0] >= 20)
        stopped = time.monotonic()
        c.pg.halt(mode)
        # During the outage each node answers 503 with Retry-After itself, and so does HAProxy.
        for node in c.nodes:
            status, headers, body = c.request("GET", "/v0/content-lake/resources?limit=1", token, port=node.port)
            reason = json.loads(body).get("error", {}).get("reason") if status == 503 else None
            check(status == 503 and header(headers, "Retry-After") and reason == "BACKEND_UNAVAILABLE",
                  "database %s-stopped: a node answers 503 BACKEND_UNAVAILABLE with Retry-After" % mode, (status, body[:200]))
        wait_until("HAProxy takes both nodes out", lambda: set(c.server_states().values()) == {"DOWN"}, timeout=30)
        status, headers, body = c.request("GET", "/v0/content-lake/resources?limit=1", token)
        reason = json.loads(body).get("error", {}).get("reason") if status == 503 else None
        check(status == 503 and header(headers, "Retry-After") == "1" and reason == "BACKEND_UNAVAILABLE",
              "with no node ready, HAProxy answers 503 BACKEND_UNAVAILABLE with Retry-After", (status, body[:200]))
        at_outage = acked[0]
        c.pg.resume()
        resumed = time.monotonic()
        wait_until("HAProxy has both nodes back", lambda: c.server_states() == {"node1": "UP", "node2": "UP"},
                   timeout=60)
        back = time.monotonic() - resumed
        wait_until("writes are acknowledged again", lambda: acked[0] >= at_outage + 20, timeout=60)
    finally:
        running.clear()
        for t in threads:
            t.join()
    check(not bad, "database %s-stopped: every answer was 201 or 503 with Retry-After" % mode, bad[:5])
    print("      database stopped (%s) for %.1f s: answers %s; both nodes back in HAProxy %.1f s after it started"
          % (mode, resumed - stopped, dict(sorted(seen.items())), back))


def test_network_stall(c, history, token):
    """node2's connections to PostgreSQL stall (its proxy forwards nothing): node1 serves everything
    meanwhile and takes every lease; when the network flows again node2 recovers by itself."""
    node1, node2 = c.nodes
    before = {l: ("node1" if c.lease_holder(l) is node1 else "node2")
              for l in ("webhooks", "edge-purge", "pruning", "upload-expiry")}
    stalled = time.monotonic()
    c.proxy.stall()
    try:
        wait_until("HAProxy takes node2 out", lambda: c.server_states().get("node2") == "DOWN", timeout=60)
        out_after = time.monotonic() - stalled
        wait_until("node1 holds every lease", lambda: all(c.lease_holder(l) is node1 for l in
                                                          ("webhooks", "edge-purge", "pruning", "upload-expiry")),
                   timeout=30)
        leases_after = time.monotonic() - stalled
        answers = {}
        for i in range(40):
            key = "stall-%d" % i
            status, _, body = c.request("POST", "/v0/content-lake/resources", token, resource(key),
                                        headers={"Idempotency-Key": key})
            history.created(status, body, key)
            answers[status] = answers.get(status, 0) + 1
            answers_read = c.request("GET", "/v0/content-lake/resources?limit=1", token)[0]
            answers["read %d" % answers_read] = answers.get("read %d" % answers_read, 0) + 1
        check(answers == {201: 40, "read 200": 40}, "while node2 is cut off, node1 serves everything", answers)
    finally:
        c.proxy.flow()
    flowed = time.monotonic()
    wait_until("node2 is back in HAProxy", lambda: c.server_states() == {"node1": "UP", "node2": "UP"}, timeout=60)
    back = time.monotonic() - flowed
    status = c.request("GET", "/v0/content-lake/resources?limit=1", token, port=node2.port)[0]
    check(status == 200, "node2 answers again by itself", status)
    print("      network stall between node2 and PostgreSQL: HAProxy took node2 out %.1f s after the stall, node1 "
          "held every lease %.1f s after it (before: %s); node2 back %.1f s after the network flowed again"
          % (out_after, leases_after, before, back))


def test_rolling_restart(c, history, token):
    """Each node in turn stopped with SIGTERM and started again (a new version rolled through) under
    keyed writes, unkeyed writes and reads through HAProxy: not one request fails (the node fails
    /readyz first and serves `cluster.drain_delay_ms` more, so HAProxy moves away before it closes)."""
    running = threading.Event()
    running.set()
    counts = {"keyed": 0, "unkeyed": 0, "reads": 0}
    failed = []
    lock = threading.Lock()

    def load(kind, n):
        i = 0
        while running.is_set():
            i += 1
            key = "roll-%s-%d-%d" % (kind, n, i)
            try:
                if kind == "reads":
                    status, _, body = c.request("GET", "/v0/content-lake/resources?limit=1", token)
                else:
                    status, _, body = c.request("POST", "/v0/content-lake/resources", token, resource(key),
                                                headers={"Idempotency-Key": key} if kind == "keyed" else None)
                    history.created(status, body, key if kind == "keyed" else None)
            except OSError as e:
                status, body = 0, str(e).encode()
            with lock:
                counts[kind] += 1
                if status not in (200, 201):
                    failed.append("%s %s %s" % (kind, status, body[:120]))

    threads = [threading.Thread(target=load, args=(k, n)) for k in ("keyed", "unkeyed", "reads") for n in range(2)]
    for t in threads:
        t.start()
    started = time.monotonic()
    try:
        for node in c.nodes:
            node.shutdown()
            node.restart(same_port=True)
            wait_until("HAProxy has both nodes up again", lambda: c.server_states() == {"node1": "UP", "node2": "UP"},
                       timeout=60)
    finally:
        running.clear()
        for t in threads:
            t.join()
    check(not failed, "a rolling restart of both nodes under load: no request failed", failed[:5])
    print("      rolling restart (SIGTERM, drain delay 3 s, start, wait until up; each node in turn, %.0f s): %d keyed "
          "writes, %d unkeyed writes, %d reads, %d failed" % (time.monotonic() - started, counts["keyed"],
                                                              counts["unkeyed"], counts["reads"], len(failed)))


def test_blobs_shared(c, token):
    """A blob uploaded through node A (its presigned URL) is one object in the shared bucket, which
    boto3 reads there, and node B hands out a download URL that serves the same bytes."""
    import hashlib
    import boto3
    from botocore.config import Config
    a, b = c.nodes
    data = os.urandom(300000)
    status, _, body = c.request("POST", "/v0/content-lake/blobs/uploads", token,
                                {"size": len(data), "content_type": "application/octet-stream"}, port=a.port)
    up = json.loads(body)
    check(status == 201 and up.get("method") == "SINGLE", "node A starts an upload", (status, body[:200]))
    check(fetch(up["url"], "PUT", data)[0] == 200, "the presigned PUT stores it in the shared bucket")
    digest = hashlib.sha256(data).hexdigest()
    status, _, body = c.request("POST", "/v0/content-lake/blobs/uploads/%s/complete" % up["upload_id"], token,
                                {"sha256": digest}, port=b.port)
    check(status == 201, "node B completes the upload node A started", (status, body[:200]))
    s3 = boto3.client("s3", endpoint_url=c.store.settings["CONTENTLAKE_BLOBS_S3_ENDPOINT"], region_name="us-east-1",
                      aws_access_key_id=c.store.key, aws_secret_access_key=c.store.secret,
                      config=Config(s3={"addressing_style": "path"}))
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=c.store.bucket, Prefix="t_cluster/" + up["blob_id"] + "/")
            .get("Contents", [])]
    check(len(keys) == 1, "boto3 finds the version's one object in the shared bucket", keys)
    stored = s3.get_object(Bucket=c.store.bucket, Key=keys[0])["Body"].read() if keys else b""
    check(hashlib.sha256(stored).hexdigest() == digest, "boto3 reads exactly the bytes uploaded")
    status, headers, _ = c.request("GET", "/v0/content-lake/blobs/" + up["blob_id"], token, port=b.port)
    check(status == 302 and fetch(headers.get("Location"))[2] == data, "node B's download URL serves them", status)


def check_history(c, history, token, since):
    """Compares what clients were told with what PostgreSQL holds."""
    stored = set(c.pg.psql("SELECT id FROM resources WHERE tenant = '%s'" % TENANT, "contentlake").split())
    missing = set(history.acknowledged) - stored
    check(not missing, "every acknowledged write is in PostgreSQL (%d)" % len(history.acknowledged), sorted(missing)[:5])
    doubled = {k: v for k, v in history.keys.items() if len(v) != 1}
    check(not doubled, "no Idempotency-Key was answered with two Resources (%d keys)" % len(history.keys), doubled)
    rows = c.pg.psql("SELECT record::json->>'title', count(*) FROM resources WHERE tenant = '%s' "
                     "GROUP BY 1 HAVING count(*) > 1" % TENANT, "contentlake").split("\n")
    dup = [r for r in rows if r.startswith("load-") or r.startswith("same-moment")]
    check(not dup, "no key had two effects in PostgreSQL", dup[:5])
    # The feed through HAProxy, page by page from before the first write, against the log.
    events, cursor = [], since
    while True:
        status, _, body = c.request("GET", "/v0/content-lake/changes?page_size=1000&since=" + cursor, token)
        if status != 200:
            check(False, "the feed answers through HAProxy", (status, body[:200]))
            return
        page = json.loads(body)
        events += [(e.get("resource_id") or e.get("work_id"), e["type"]) for e in page["events"]]
        cursor = page["next_cursor"]
        if not page["events"]:
            break
    log = [tuple(line.split("|")) for line in c.pg.psql(
        "SELECT id, op FROM change_log WHERE tenant = '%s' AND kind = 1 ORDER BY seq" % TENANT,
        "contentlake").split()]
    names = {"1": "resource.created", "2": "resource.updated", "3": "resource.updated"}
    expected = [(i, names.get(op, op)) for i, op in log]
    ours = [e for e in events if e[1] in ("resource.created", "resource.updated")]
    check(ours == expected, "the change feed through HAProxy is the commit-ordered change log (%d events)" % len(ours),
          (len(ours), len(expected)))


def main():
    binary, source, s3rver_dir, eventsource = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    if not shutil.which("haproxy"):
        skip("haproxy is not installed (scripts/install-deps --with-test-tools installs it)")
    rx = Receiver()
    c = None
    try:
        c = Cluster(binary, source, s3rver_dir, {
            "CONTENTLAKE_WEBHOOKS_HTTPS_ONLY": "false",
            "CONTENTLAKE_WEBHOOKS_ALLOWED_NETWORKS": "127.0.0.0/8",
            # A delivery waits up to 30 s for its answer: the one the receiver holds is still in flight
            # when its node is killed.
            "CONTENTLAKE_WEBHOOKS_TIMEOUT_SECONDS": "30"})
        token = c.token()
        since = json.loads(c.request("GET", "/v0/content-lake/changes", token)[2])["next_cursor"]
        history = History()
        test_read_your_writes(c, history, token)
        test_session_across_nodes(c, history, token)
        test_held_limit_through_balancer(c)
        test_text_through_balancer(c, token)
        test_blobs_shared(c, token)
        test_same_key_on_both_nodes(c, history, token)
        test_concurrent_patches(c, history, token)
        test_webhook_in_flight(c, history, token, rx)
        test_event_stream_failover(c, history, token, eventsource)
        test_kill_under_load(c, history, token)
        if c.replicated:
            # The replicated database's own faults (a primary killed, frozen, switched over) are
            # tests/client/failover.py's; a stall between one node and its database is a single
            # server's proxy here.
            print("      (replicated database: the restart and stall steps are failover.py's)")
        else:
            test_database_restart(c, history, token, "fast")
            test_database_restart(c, history, token, "immediate")
            test_network_stall(c, history, token)
        test_rolling_restart(c, history, token)
        check_history(c, history, token, since)
    finally:
        rx.stop()
        if c:
            c.stop()
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("cluster: every check passed")


if __name__ == "__main__":
    main()
