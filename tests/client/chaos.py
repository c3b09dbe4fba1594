"""Fault injection from outside (issue 31, item 1): with `admin.fault_injection` on, a mixed load
(Resource reads, keyed Work creates, searches, change-feed polls, MCP reads) runs while each
supervised actor is killed in turn through `POST /faults/kill?actor=NAME` on the admin listener,
then delayed in turn through `POST /faults/delay?actor=NAME&ms=N`.
Per actor it reports requests answered, answers other than the normal one or "retry shortly"
(must be 0; normal for MCP is a result without a JSON-RPC or tool error, and "retry shortly" is 503
with Retry-After or, for MCP, the BACKEND_UNAVAILABLE tool error), requests that got no answer
(must be 0), the time from the kill to the next normal answer of each kind of request sent after
it (every kind must have one within 10 s), and whether any acknowledged write is missing
afterwards (must be 0). Also: fault injection is refused, saying how to enable it, when off.

    chaos.py CONTENTLAKE_BINARY SOURCE_DIR [ROUNDS] [SECONDS_PER_ROUND] [--postgresql]
(ctest `chaos`: 1 round of 0.6 s per actor on LMDB; `chaos_pg` the same on a PostgreSQL of its own;
bench/chaos: 20 rounds.)
"""
import http.client
import itertools
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Postgres, Service, fetch, wait_until  # noqa: E402

SCOPES = "content-lake.read content-lake.write contracts.read contracts.write"
DELAY_MS = 300  # each actor's delay: longer than a normal answer, shorter than the request deadline
KEYS = itertools.count(1)  # Idempotency-Keys across every Load of the run
NORMAL = {"read": 200, "create": 201, "search": 200, "feed": 200, "mcp": 200}
RECOVERY_BOUND = 10.0  # seconds from a kill to the next normal answer of every kind (a loaded CI machine)


def normal(kind, status, answer):
    """Whether an answer is the normal one of its kind: its status, and for MCP no JSON-RPC error
    and no tool error (the contract permits the read, so an error result is a failure too)."""
    if status != NORMAL[kind]:
        return False
    if kind != "mcp":
        return True
    try:
        message = json.loads(answer)
    except ValueError:
        return False
    return "error" not in message and not message.get("result", {}).get("isError", False)


def unavailable(kind, status, retry_after, answer):
    """The answer that says "retry shortly": 503 with Retry-After, or for MCP the tool error that
    carries it (BACKEND_UNAVAILABLE, in-band as MCP wants tool errors). A JSON-RPC error never is."""
    if status == 503 and retry_after:
        return True
    if kind != "mcp" or status != 200:
        return False
    try:
        result = json.loads(answer).get("result", {})
    except ValueError:
        return False
    error = result.get("structuredContent", {}).get("error", {}) if result.get("isError") else {}
    return error.get("reason") == "BACKEND_UNAVAILABLE"


class Load:
    """Client threads sending a mix of requests until stopped; every outcome with its times."""

    def __init__(self, svc, token, resource, clients=4):
        self.svc, self.token, self.resource = svc, token, resource
        self.outcomes = []  # (kind, sent, answered, status, unavailable (retry later), body, normal)
        self.created = []   # Work ids acknowledged (201)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.client, args=(i,)) for i in range(clients)]
        for t in self.threads:
            t.start()

    def request(self, i, n):
        kinds = ["read", "create", "search", "feed", "mcp"]
        kind = kinds[(i + n) % len(kinds)]
        h = {"Authorization": "Bearer " + self.token, "Content-Type": "application/json"}
        if kind == "read":
            return kind, "GET", "/v0/content-lake/resources/" + self.resource, None, h
        if kind == "create":
            key = "chaos-%d-%d" % (os.getpid(), next(KEYS))  # never reused: a reused key is a replay
            h["Idempotency-Key"] = key
            return kind, "POST", "/v0/content-lake/works", json.dumps({"title": key}), h
        if kind == "search":
            return kind, "POST", "/v0/content-lake/search", json.dumps({"query": "tide", "page_size": 5}), h
        if kind == "feed":
            return kind, "GET", "/v0/content-lake/changes?page_size=5", None, h
        return kind, "POST", "/v0/mcp", json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
            "name": "read_resource", "arguments": {"id": self.resource}}}), h

    def client(self, i):
        conn = None
        n = 0
        while not self.stop.is_set():
            n += 1
            kind, method, path, body, headers = self.request(i, n)
            sent = time.monotonic()
            status, retry_after, answer = None, None, b""
            for attempt in range(2):  # a connection the service closed is reopened once, not counted
                try:
                    if conn is None:
                        conn = http.client.HTTPConnection("127.0.0.1", self.svc.port, timeout=15)
                    conn.request(method, path, body, headers)
                    r = conn.getresponse()
                    answer = r.read()
                    status, retry_after = r.status, r.getheader("Retry-After")
                    if r.getheader("Connection", "").lower() == "close":
                        conn.close()
                        conn = None
                    break
                except (ConnectionError, http.client.RemoteDisconnected, BrokenPipeError) as e:
                    conn = None
                    if attempt == 1:
                        status = "no answer: %s" % type(e).__name__
                except Exception as e:  # a timeout: the request never got an answer
                    conn = None
                    status = "no answer: %s" % type(e).__name__
                    break
            answered = time.monotonic()
            ok = not isinstance(status, str) and normal(kind, status, answer)
            retry = not isinstance(status, str) and unavailable(kind, status, retry_after, answer)
            with self.lock:
                self.outcomes.append((kind, sent, answered, status, retry, answer[:200], ok))
                if kind == "create" and status == 201:
                    self.created.append(json.loads(answer)["id"])

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(60)


def per_actor(admin, metric, actor):
    """`metric{actor="..."}` on the operations listener (0 before the first)."""
    _, _, body = fetch(admin + "/metrics")
    for line in body.decode().splitlines():
        if line.startswith('%s{actor="%s"}' % (metric, actor)):
            return float(line.split()[-1])
    return 0.0


def restarts(admin, actor):
    return per_actor(admin, "contentlake_actor_restarts_total", actor)


def fault_delays(admin, actor):
    """How many injected delays `actor` began holding its messages for (every instance counts)."""
    return per_actor(admin, "contentlake_fault_delays_total", actor)


def refused_when_off(binary, source):
    svc = Service(binary, source)
    try:
        status, _, body = fetch("http://127.0.0.1:%d/faults/kill?actor=writer" % svc.admin_port, "POST", b"")
        error = json.loads(body)["error"]
        assert status == 403 and error["reason"] == "FAULT_INJECTION_DISABLED", (status, body)
        assert "admin.fault_injection=true" in error["message"]
        print("chaos: with fault injection off, /faults is 403 FAULT_INJECTION_DISABLED saying how to turn it on")
    finally:
        svc.stop()


def main():
    args = [a for a in sys.argv[1:] if a != "--postgresql"]
    binary, source = args[0], args[1]
    rounds = int(args[2]) if len(args) > 2 else 1
    seconds = float(args[3]) if len(args) > 3 else 0.6
    settings = {"CONTENTLAKE_ADMIN_FAULT_INJECTION": "true", "CONTENTLAKE_SUPERVISOR_MAX_RESTARTS": "1000"}
    pg = None
    if "--postgresql" in sys.argv:
        # On a PostgreSQL of its own: the backend's upkeep (log follower, store probe, rate sharing,
        # held slots) and the fronts over detached workers are among the actors killed and delayed.
        pg = Postgres(source)
        settings.update({"CONTENTLAKE_STORAGE_BACKEND": "postgresql",
                         "CONTENTLAKE_STORAGE_POSTGRESQL_URL": pg.create_database("contentlake")})
    try:
        refused_when_off(binary, source)
        run(binary, source, settings, rounds, seconds)
    finally:
        if pg:
            pg.stop()


def run(binary, source, settings, rounds, seconds):
    svc = Service(binary, source, settings)
    admin = "http://127.0.0.1:%d" % svc.admin_port
    try:
        token = svc.token(sub="u_chaos", tenant="t_chaos", scopes=SCOPES)
        status, _, body = svc.request("POST", "/v0/content-lake/works", token, {"title": "Tides"})
        work = json.loads(body)["id"]
        status, _, body = svc.request("POST", "/v0/content-lake/resources", token, {
            "title": "Tide", "type": "CHAPTER", "language": "en", "work_id": work, "content": {
                "format": "cl.content/1", "blocks": [{"type": "paragraph", "key": "p1", "children": [
                    {"type": "span", "text": "The tide turns at Brest."}]}]}})
        resource = json.loads(body)["id"]
        svc.request("POST", "/v0/contracts", token, {
            "title": "Rights", "status": "ACTIVE", "valid_from": "2026-01-01T00:00:00Z", "work_ids": [work],
            "territorial_rights": [{"worldwide": True, "status": "PERMITTED"}],
            "usage_terms": [{"usage_type": "ACCESS", "status": "PERMITTED"},
                            {"usage_type": "AI_RETRIEVAL", "status": "PERMITTED"}]})
        status, _, body = fetch(admin + "/faults")
        actors = list(dict.fromkeys(json.loads(body)["actors"]))  # instances share a name (readers): one kill takes all
        assert status == 200 and "writer" in actors and "mcp" in actors, body
        status, _, body = fetch(admin + "/faults/kill?actor=nobody", "POST", b"")
        assert status == 400, status
        failures, report = [], []
        all_created = []
        for actor in actors:
            answered = abnormal = unanswered = unavailable_answers = 0
            recoveries = []
            for _ in range(rounds):
                before = restarts(admin, actor)
                load = Load(svc, token, resource)
                time.sleep(seconds / 3)  # load before the kill (what it measures is time, not a condition)
                killed = time.monotonic()
                status, _, _ = fetch(admin + "/faults/kill?actor=" + actor, "POST", b"")
                assert status == 202, status
                time.sleep(seconds * 2 / 3)

                def recovered():  # a normal answer of every kind sent after the kill
                    with load.lock:
                        return all(any(k == kind and sent >= killed and ok for k, sent, _, _, _, _, ok in load.outcomes)
                                   for kind in NORMAL)
                while not recovered() and time.monotonic() - killed < RECOVERY_BOUND:
                    time.sleep(0.01)
                load.finish()
                if restarts(admin, actor) <= before:
                    failures.append("%s: the kill did not restart it" % actor)
                all_created += load.created
                for kind, sent, done, st, retry, body, ok in load.outcomes:
                    if isinstance(st, str):
                        unanswered += 1
                        failures.append("%s: %s %s" % (actor, kind, st))
                        continue
                    answered += 1
                    unavailable_answers += bool(retry)
                    if not ok and not retry:
                        abnormal += 1
                        failures.append("%s: %s answered %s: %s" % (actor, kind, st, body))
                # Recovery, per kind: a normal answer must follow the kill, within the bound (an
                # actor left answering 503 fails here, not with "0 ms").
                worst = (0.0, "")
                for kind in NORMAL:
                    after = [done for k, sent, done, st, _, _, ok in load.outcomes if k == kind and sent >= killed and ok]
                    if not after:
                        failures.append("%s: no normal %s answer within %.0f s of the kill" % (actor, kind,
                                                                                          RECOVERY_BOUND))
                        continue
                    if min(after) - killed > RECOVERY_BOUND:
                        failures.append("%s: the next normal %s answer came %.1f s after the kill" % (
                            actor, kind, min(after) - killed))
                    worst = max(worst, (min(after) - killed, kind))
                recoveries.append(worst)
            report.append((actor, answered, unavailable_answers, abnormal, unanswered, max(recoveries)))
        # Delays: each actor holds its next messages for DELAY_MS under the same load. Every actor
        # says it began holding (contentlake_fault_delays_total); answers stay normal or "retry
        # shortly", every request is answered, and a write sent during the writer's delay is answered
        # no sooner than most of the delay (the hold is felt where it should be).
        delays = []
        for actor in actors:
            load = Load(svc, token, resource)
            time.sleep(seconds / 3)
            before = fault_delays(admin, actor)
            status, _, body = fetch(admin + "/faults/delay?actor=%s&ms=%d" % (actor, DELAY_MS), "POST", b"")
            assert status == 202 and json.loads(body) == {"delayed": actor, "ms": DELAY_MS}, (status, body)
            accepted = time.monotonic()
            # The actor answers its supervisor when its hold begins: every delayed actor must have held.
            try:
                wait_until("%s holds its messages" % actor, lambda: fault_delays(admin, actor) > before, timeout=10)
            except AssertionError as e:
                failures.append("delay %s: %s" % (actor, e))
            if actor == "writer":
                # A write of the test's own, sent as soon as the hold began (the load's threads may
                # send none for a while on a busy machine): it is answered when the hold ends.
                key = "chaos-%d-%d" % (os.getpid(), next(KEYS))
                st, _, body = svc.request("POST", "/v0/content-lake/works", token, {"title": key},
                                          {"Idempotency-Key": key})
                held_for = time.monotonic() - accepted
                assert st == 201, (st, body)
                all_created.append(json.loads(body)["id"])
            time.sleep(max(seconds * 2 / 3, DELAY_MS / 1000 + 0.2))
            load.finish()
            all_created += load.created
            abnormal = unanswered = 0
            for kind, sent, done, st, retry, body, ok in load.outcomes:
                if isinstance(st, str):
                    unanswered += 1
                    failures.append("delay %s: %s %s" % (actor, kind, st))
                elif not ok and not retry:
                    abnormal += 1
                    failures.append("delay %s: %s answered %s: %s" % (actor, kind, st, body))
            slowest = max(done - sent for _, sent, done, _, _, _, _ in load.outcomes)
            delays.append((actor, len(load.outcomes), abnormal, unanswered, slowest))
            if actor == "writer":
                # The hold began shortly after the 202 (the order goes through the supervisor): the
                # test's write is answered no sooner than most of the delay after the 202.
                assert held_for >= DELAY_MS / 1000 * 0.5, ("a write during the delay was not held", held_for)
        status, _, body = fetch(admin + "/faults/delay?actor=writer&ms=0", "POST", b"")
        assert status == 400 and json.loads(body)["error"]["reason"] == "INVALID_ARGUMENT", (status, body)
        # Every acknowledged write is there after all the kills and delays.
        missing = [w for w in all_created if svc.request("GET", "/v0/content-lake/works/" + w, token)[0] != 200]
        print("chaos: %d round(s) per actor; actor, answered, of them 503 + Retry-After, abnormal, unanswered, "
              "next normal answer (ms, of the slowest kind of request):" % rounds)
        for actor, answered, unavailable, abnormal, unanswered, (worst, kind) in report:
            print("  %-20s %7d %5d %3d %3d %8.1f %s" % (actor, answered, unavailable, abnormal, unanswered,
                                                        worst * 1000, kind))
        print("chaos: each actor delayed %d ms once; actor, answered, abnormal, unanswered, slowest answer (ms):"
              % DELAY_MS)
        for actor, answered, abnormal, unanswered, slowest in delays:
            print("  %-20s %7d %3d %3d %8.1f" % (actor, answered, abnormal, unanswered, slowest * 1000))
        print("chaos: %d acknowledged creates, %d missing afterwards" % (len(all_created), len(missing)))
        assert not failures, failures[:10]
        assert not missing, missing[:10]
        assert all(r[1] > 0 for r in report)
    finally:
        svc.stop()


if __name__ == "__main__":
    main()
