"""The service on a replicated database through its faults (issue 68): three etcd members, three
PostgreSQL 15 members managed by Patroni (synchronous, strict), HAProxy in front of them, all
started from deploy/cluster/ with loopback addresses (tests/client/replicated_db.py); s3rver; two
contentlake nodes, node1 reaching the primary through HAProxy and node2 through a libpq multi-host
URL with target_session_attrs=read-write; the public HAProxy in front of the nodes.

A load runs through the whole test: keyed writers (each retries its key until it is answered 201),
an unkeyed writer (never retried: 201, or 503 with Retry-After), a reader of its own writes (a
write through one node, read with its Content-Lake-Position through the other, by id and in a list
page), an SSE client (npm eventsource) following the feed through the public HAProxy, and a webhook
subscribed to every create. Faults, one after another:
- the primary's PostgreSQL and Patroni SIGKILLed: a replica is promoted; measured: the kill to the
  promotion and to the first acknowledged write, on each path to the database;
- a planned switchover (`patronictl switchover`) under the load;
- the synchronous standby killed, then started again;
- one etcd member (the Raft leader) killed, then started again: nothing visible;
- the primary frozen (SIGSTOP to its PostgreSQL and Patroni) until another is promoted, then
  thawed: it rejoins as a replica;
- an asynchronous replica frozen while node1 (which reads from the replicas) serves positioned
  reads: none stale, the reads move to another target.
At the end a history check: every acknowledged write is in the database exactly once, no key had
two effects, every read of one's own write found it, the feed through HAProxy is the commit-ordered
change log, the SSE client got every change once, in order, the webhook got every create (at
least once), a write made after the faults is found by both nodes' searches, and each lease of work
done once is held by exactly one node.

    failover.py CONTENTLAKE_BINARY SOURCE_DIR S3RVER_DIR EVENTSOURCE_NODE_MODULES
"""
import http.client
import json
import os
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Cluster, skip, wait_until  # noqa: E402
from cluster import History, Receiver, check, check_history, failures, header, position_of, resource  # noqa: E402

TENANT = "t_cluster"
T0 = time.monotonic()
TIMELINE = []  # (seconds since T0, UTC clock, what happened): printed when a check failed


def mark(what):
    TIMELINE.append((round(time.monotonic() - T0, 2), time.strftime("%H:%M:%S", time.gmtime()), what))


class Load:
    """The clients that run through every fault, and what each was answered, with when."""

    def __init__(self, c, token, history):
        self.c, self.token, self.history = c, token, history
        self.running = threading.Event()
        self.running.set()
        self.lock = threading.Lock()
        self.acks = []  # (when sent, when answered, path) of each acknowledged keyed write
        self.acked_at = {}  # resource id -> (when sent, when answered, path): where a lost write came from
        self.failed = []  # (monotonic time, path, status) of each keyed attempt not answered 201
        self.last_ack = {}  # keyed writer -> when its last acknowledged write was sent
        self.unkeyed = []  # (monotonic time, status)
        self.bad = []  # answers no client may get
        self.ryw = {"checked": 0, "pages": 0, "stale": [], "unavailable": 0}
        self.unfinished = []
        # Writers through the public HAProxy, and straight to each node: node1 reaches the primary
        # through HAProxy, node2 through libpq's multi-host URL.
        paths = [("balancer", c.port), ("balancer", c.port), ("node1", c.nodes[0].port),
                 ("node2", c.nodes[1].port)]
        self.writers = len(paths)
        self.threads = [threading.Thread(target=self.keyed, args=(n, name, port)) for n, (name, port) in
                        enumerate(paths)]
        self.threads += [threading.Thread(target=self.unkeyed_writer), threading.Thread(target=self.reader)]
        for t in self.threads:
            t.start()

    def post(self, port, key, title, conn, work=None):
        headers = {"Authorization": "Bearer " + self.token, "Content-Type": "application/json"}
        if key:
            headers["Idempotency-Key"] = key
        body = dict(resource(title), **({"work_id": work} if work else {}))
        try:
            conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            conn.request("POST", "/v0/content-lake/resources", json.dumps(body), headers)
            r = conn.getresponse()
            return r.status, dict(r.getheaders()), r.read(), conn
        except (OSError, http.client.HTTPException) as e:
            return 0, {}, str(e).encode(), None

    def judge(self, status, headers, body, keyed):
        """An answer a client may get: 201; 503 with Retry-After (the database is away; from a node
        or from the balancer); for a keyed write also a lost connection or a 502/504 (it retries)."""
        if status == 201:
            return
        if status == 503 and header(headers, "Retry-After"):
            return
        if keyed and status in (0, 502, 504):
            return
        if keyed and status == 409 and b"IDEMPOTENCY_KEY_IN_USE" in body:
            return  # its first attempt is still running (on a database that went away): retry shortly
        with self.lock:
            self.bad.append((status, body[:200]))

    def keyed(self, n, path, port):
        conn, i = None, 0
        while self.running.is_set():
            i += 1
            key = "fo-%d-%d" % (n, i)
            deadline = None
            while True:
                sent = time.monotonic()
                status, headers, body, conn = self.post(port, key, key, conn)
                self.judge(status, headers, body, True)
                now = time.monotonic()
                if status == 201:
                    got = self.history.created(status, body, key)
                    with self.lock:
                        self.acks.append((sent, now, path))
                        self.last_ack[n] = sent
                        self.acked_at[got["id"]] = (sent, now, path)
                    break
                with self.lock:
                    self.failed.append((now, path, status))
                if not self.running.is_set():  # finishing: a key already sent is resolved, within 60 s
                    deadline = deadline or now + 60
                    if now > deadline:
                        self.unfinished.append(key)
                        break
                time.sleep(0.05)  # the client's back-off before it sends the same key again

    def unkeyed_writer(self):
        conn = None
        while self.running.is_set():
            sent = time.monotonic()
            status, headers, body, conn = self.post(self.c.port, None, "unkeyed", conn)
            self.judge(status, headers, body, False)
            got = self.history.created(status, body)
            if got:
                with self.lock:
                    self.acked_at[got["id"]] = (sent, time.monotonic(), "unkeyed")
            with self.lock:
                self.unkeyed.append((time.monotonic(), status))
            if status != 201:
                conn = None
                time.sleep(0.05)

    def reader(self):
        """Writes through one node and reads the write through the other with its position."""
        c, i = self.c, 0
        work = None
        while self.running.is_set() and not work:  # the reader's Resources are one Work's: one list
            s, _, body = c.request("POST", "/v0/content-lake/works", self.token, {"title": "read back"},
                                   headers={"Idempotency-Key": "ryw-work"})
            work = json.loads(body)["id"] if s == 201 else None
        while self.running.is_set():
            i += 1
            a, b = (c.nodes[0], c.nodes[1]) if i % 2 else (c.nodes[1], c.nodes[0])
            key = "ryw-%d" % i
            status, headers, body, _ = self.post(a.port, key, key, None, work)
            if status != 201:
                time.sleep(0.05)
                continue
            got = self.history.created(status, body, key)
            position = position_of(headers)
            while self.running.is_set():
                s, found, rb = read_back(c, self.token, got["id"], key, position, b.port)
                if found:
                    with self.lock:
                        self.ryw["checked"] += 1
                    # A list page through the same node with the same position: the write is on it
                    # (it sorts by id, and the reader's keys are this test's newest of its kind).
                    ids, token = [], ""
                    while True:
                        try:
                            s, _, rb = c.request("GET", "/v0/content-lake/resources?page_size=1000&work_id=%s%s"
                                                 % (work, token), self.token, headers=position, port=b.port)
                        except OSError:
                            s = 0
                        if s != 200:
                            break
                        page = json.loads(rb)
                        ids += [r["id"] for r in page.get("resources", [])]
                        if not page.get("next_page_token"):
                            with self.lock:
                                self.ryw["pages"] += 1
                                if got["id"] not in ids:
                                    self.ryw["stale"].append(("page", got["id"], "through port %d" % b.port,
                                                              "%.2f s" % (time.monotonic() - T0)))
                            break
                        token = "&page_token=" + page["next_page_token"]
                    break
                if s in (0, 503):
                    with self.lock:
                        self.ryw["unavailable"] += 1
                    time.sleep(0.05)
                    continue
                with self.lock:
                    self.ryw["stale"].append((s, rb[:120], "through port %d" % b.port,
                                              "%.2f s" % (time.monotonic() - T0)))
                break

    def steady(self, what, timeout=60):
        """Waits until every keyed writer has had a write sent from now on acknowledged: none is still
        retrying a key from an earlier fault (its retries answer 409 while a first attempt runs)."""
        t = time.monotonic()
        wait_until(what, lambda: all(self.last_ack.get(n, 0) > t for n in range(self.writers)), timeout=timeout)

    def first_ack_after(self, t, path=None):
        """When the first write sent after `t` (through `path`) was acknowledged: writes resumed."""
        with self.lock:
            return min((a for s, a, p in self.acks if s > t and (path is None or p == path)), default=None)

    def acks_since(self, t):
        with self.lock:
            return sum(1 for s, _, _ in self.acks if s > t)

    def failed_between(self, t0, t1):
        with self.lock:
            return [(round(a - t0, 2), p, s) for a, p, s in self.failed if t0 <= a <= t1]

    def stop(self):
        self.running.clear()
        for t in self.threads:
            t.join(timeout=120)


def resumed(load, since, what, timeout=60):
    """Waits until every path has an acknowledged write after `since`; the seconds to the first on
    each path."""
    wait_until(what, lambda: all(load.first_ack_after(since, p) for p in ("balancer", "node1", "node2")),
               timeout=timeout)
    return {p: round(load.first_ack_after(since, p) - since, 2) for p in ("balancer", "node1", "node2")}


def watch_promotion(db, old, timeout=60):
    """Waits until a member other than `old` holds the leader key and its PostgreSQL accepts writes;
    (its name, when it did). A write is acknowledged only later, once a replica streams from it
    synchronously (strict synchronous mode)."""
    new = wait_until("a replica is promoted", lambda: (lambda p: p if p and p != old else None)(db.primary()),
                     timeout=timeout)
    wait_until("%s accepts writes" % new, lambda: db.writable(new), timeout=timeout)
    return new, time.monotonic()


def rejoin(c, member):
    """`member` started again (or thawed): it rejoins as a replica and the cluster has its synchronous standby."""
    db = c.pg
    if member not in db.patroni or db.patroni[member].poll() is not None:
        db.start(member)
    wait_until("%s rejoins as a replica and the cluster settles" % member, db.settled, timeout=120)
    mark("settled: %s" % {n: x.get("role") for n, x in db.cluster().items()})
    wait_until("both nodes are in the balancer", lambda: c.server_states() == {"node1": "UP", "node2": "UP"},
               timeout=60)


def test_primary_killed(c, load, report):
    db = c.pg
    old = wait_until("a primary", db.primary, timeout=60)
    wait_until("writes flow", lambda: load.acks_since(time.monotonic() - 1) >= 5)
    mark("kill primary " + old)
    db.kill(old)
    killed = time.monotonic()  # from when it is gone: a write sent before could still be answered
    new, promoted = watch_promotion(db, old)
    mark("promoted " + new)
    first = resumed(load, killed, "writes resume after the primary's kill")
    after_promotion = {p: round(t - (promoted - killed), 2) for p, t in first.items()}
    check(new != old, "the primary's kill: %s is promoted in place of %s" % (new, old))
    report.append("primary SIGKILLed: a replica promoted (read-write) %.1f s after the kill; first write acknowledged "
                  "%s s after the kill (%s s after the promotion)" % (promoted - killed, first, after_promotion))
    rejoin(c, old)


def test_switchover(c, load, report):
    db = c.pg
    wait_until("the cluster settles", db.settled, timeout=120)
    started = time.monotonic()
    mark("switchover")
    leader, candidate = db.switchover()
    new, switched = watch_promotion(db, leader)
    mark("switched to " + new)
    first = resumed(load, started, "writes resume after the switchover")
    check(new == candidate, "the switchover made %s the primary" % candidate, new)
    wait_until("%s rejoins as a replica" % leader, db.settled, timeout=120)
    ended = time.monotonic()
    failed = load.failed_between(started, ended)
    window = (failed[0][0], failed[-1][0]) if failed else None
    report.append("switchover %s -> %s: the new primary seen %.1f s after the command; first write acknowledged "
                  "%s s after it; %d keyed attempts answered otherwise (%s), from %s s to %s s after the command"
                  % (leader, candidate, switched - started, first, len(failed),
                     sorted({x[2] for x in failed}), *(window or (None, None))))
    return failed


def test_sync_standby_killed(c, load, report):
    db = c.pg
    wait_until("the cluster settles", db.settled, timeout=120)
    primary, standby = db.primary(), db.sync_standby()
    mark("kill sync standby " + standby)
    db.kill(standby)
    killed = time.monotonic()
    replacement = wait_until("another replica becomes the synchronous standby",
                             lambda: (lambda s: s if s and s != standby else None)(db.sync_standby()), timeout=60)
    chosen = time.monotonic()
    first = resumed(load, chosen, "writes go on with the new synchronous standby")
    check(db.primary() == primary, "the synchronous standby's kill leaves the primary in place", db.primary())
    report.append("synchronous standby %s SIGKILLed: %s took its place %.1f s later; keyed attempts not answered 201 "
                  "meanwhile: %d; first writes after %s s" % (standby, replacement, chosen - killed,
                                                              len(load.failed_between(killed, chosen)), first))
    rejoin(c, standby)


def etcd_leader(db):
    for name, (client, _) in db.etcd_ports.items():
        if db.etcd[name].poll() is not None:
            continue
        try:
            out = subprocess.run(["etcdctl", "--endpoints", "127.0.0.1:%d" % client, "endpoint", "status", "-w",
                                  "json"], capture_output=True, text=True, timeout=5,
                                 env=dict(os.environ, ETCDCTL_API="3")).stdout
            status = json.loads(out)[0]["Status"]
            if status["leader"] == status["header"]["member_id"]:
                return name
        except (subprocess.SubprocessError, ValueError, KeyError, IndexError):
            continue
    return None


def test_etcd_member_killed(c, load, report):
    db = c.pg
    wait_until("the cluster settles", db.settled, timeout=120)
    load.steady("every writer is past the earlier faults")
    primary = db.primary()
    victim = wait_until("etcd has a leader", lambda: etcd_leader(db))
    killed = time.monotonic()
    db.kill_etcd(victim)
    new_leader = wait_until("etcd elects another leader", lambda: etcd_leader(db), timeout=30)
    wait_until("writes go on for 5 s", lambda: time.monotonic() > killed + 5, timeout=10)
    quiet = time.monotonic()
    failed = load.failed_between(killed, quiet)
    check(not failed, "etcd's leader killed: no write failed", failed[:5])
    check(db.primary() == primary, "etcd's leader killed: no failover", db.primary())
    db.restart_etcd(victim)
    wait_until("the killed etcd member is healthy again", lambda: etcd_leader(db) and db.etcd_healthy(), timeout=30)
    report.append("etcd leader %s SIGKILLed: %s leads now; %d keyed writes acknowledged in the 5 s after, none failed"
                  % (victim, new_leader, load.acks_since(killed)))


def test_primary_frozen(c, load, report):
    db = c.pg
    old = wait_until("a primary", db.primary, timeout=60)
    mark("freeze primary " + old)
    db.freeze(old)
    frozen = time.monotonic()
    new, promoted = watch_promotion(db, old)
    mark("promoted " + new)
    first = resumed(load, frozen, "writes resume while the old primary is frozen")
    thawed = time.monotonic()
    mark("thaw " + old)
    db.thaw()
    wait_until("%s rejoins as a replica" % old, db.settled, timeout=120)
    role = db.cluster().get(old, {}).get("role")
    check(role in ("replica", "sync_standby"), "the thawed old primary rejoined as a replica", role)
    report.append("primary %s frozen: %s promoted %.1f s later; first writes %s s after the freeze; the old primary, "
                  "thawed %.1f s after the freeze, rejoined as %s" % (old, new, promoted - frozen, first,
                                                                   thawed - frozen, role))


def reads_by_target(node):
    """node's committed reads so far by where they ran ({"replica": n, "primary": m})."""
    from harness import fetch
    body = fetch("http://127.0.0.1:%d/metrics" % node.admin_port)[2].decode()
    out = {}
    for line in body.splitlines():
        if line.startswith('contentlake_postgresql_reads_total{target="'):
            out[line.split('"')[1]] = float(line.split()[-1])
    return out


def refused_reads(node):
    """node's reads refused so far because the server they reached was on another history or behind
    (`contentlake_postgresql_replica_elsewhere_total`, `..._primary_behind_total`)."""
    from harness import fetch
    body = fetch("http://127.0.0.1:%d/metrics" % node.admin_port)[2].decode()
    out = {}
    for line in body.splitlines():
        for name in ("replica_elsewhere", "primary_behind"):
            if line.startswith("contentlake_postgresql_%s_total " % name):
                out[name] = int(float(line.split()[-1]))
    return out


def test_replica_frozen(c, load, report):
    """An asynchronous replica frozen while node1 reads from the replicas with positions: no read is
    stale (the reader's checks), none fails, and node1's reads go on elsewhere."""
    db = c.pg
    node1 = c.nodes[0]
    victim = next(n for n, x in db.cluster().items() if x.get("role") == "replica")
    before = reads_by_target(node1)
    wait_until("node1 reads on a replica", lambda: reads_by_target(node1).get("replica", 0) > before.get("replica", 0),
               timeout=30)
    mark("freeze replica " + victim)
    db.freeze(victim)
    frozen = time.monotonic()
    at_freeze = dict(load.ryw, stale=len(load.ryw["stale"]))
    at = reads_by_target(node1)
    # node1's own writes read back through node1 for 5 s. (The load's reader writes through one node
    # and reads through the other: node2 reaches the primary by a multi-host URL, whose new
    # connections wait out connect_timeout on a frozen member listed before the primary, so its
    # count here also measures node2.)
    own_read, stale = own_writes_through(c, load, node1, frozen + 5)
    during = reads_by_target(node1)
    moved = {k: during.get(k, 0) - at.get(k, 0) for k in ("replica", "primary")}
    checked = load.ryw["checked"] - at_freeze["checked"]
    check(own_read > 0 and not stale and sum(moved.values()) > 0, "a replica frozen: node1's reads go on (%d of its "
          "own writes read back through it, reads by target meanwhile %s)" % (own_read, moved), (own_read, stale, moved))
    mark("thaw replica " + victim)
    db.thaw()
    rejoin(c, victim)
    report.append("replica %s frozen for 5 s: node1's reads meanwhile %s; node1's own writes read back through it %d, "
                  "the load's across nodes %d; node1's reads in all so far %s" % (victim, moved, own_read, checked,
                                                                                  reads_by_target(node1)))


def own_writes_through(c, load, node, until):
    """Writes through `node` and reads each write back through it with its position, until `until`
    (monotonic): how many were read back, and the reads that did not find their write."""
    read, stale, conn, i = 0, [], None, 0
    while time.monotonic() < until:
        i += 1
        key = "ryw-own-%d" % i
        status, headers, body, conn = load.post(node.port, key, key, conn)
        if status != 201:
            conn = None
            time.sleep(0.05)
            continue
        got = load.history.created(status, body, key)
        position = position_of(headers)
        s, found, rb = read_back(c, load.token, got["id"], key, position, node.port)
        if found:
            read += 1
        elif s not in (0, 503):
            stale.append((s, rb[:120]))
    return read, stale


def read_back(c, token, rid, key, position, port):
    """Resource `rid`, written with title `key`, read through `port` with its position: (status,
    whether the answer is that write, body); status 0 for a lost connection."""
    try:
        s, _, rb = c.request("GET", "/v0/content-lake/resources/" + rid, token, headers=position, port=port)
    except OSError:
        return 0, False, b""
    return s, s == 200 and json.loads(rb).get("title") == key, rb


def test_after_the_faults(c, token, report):
    """After every fault: each node's search index follows the log again (a write made now is found
    by a search on each node, with its position), and each lease of work done once is held by
    exactly one node (leases moved with the database, none held twice, none lost)."""
    from harness import fetch
    word = "zqafter%d" % os.getpid()
    # As a client does: a 503 with Retry-After (a node whose database connections are still coming
    # back) is sent again after the time it names, the same key; how many it took is reported.
    unavailable = []
    mark("a write after the faults")
    while True:
        status, headers, body = c.request("POST", "/v0/content-lake/resources", token, resource("Tide " + word),
                                          headers={"Idempotency-Key": "after-" + word})
        if status != 503 or not header(headers, "Retry-After") or len(unavailable) >= 10:
            break
        unavailable.append(json.loads(body)["error"]["message"])
        time.sleep(float(header(headers, "Retry-After")))
    mark("written after %d answer(s) 503" % len(unavailable))
    check(status == 201, "a write after the faults (after %d answer(s) 503 with Retry-After)" % len(unavailable),
          (status, body[:200], unavailable))
    report.append("the write after the faults: %d answer(s) 503 with Retry-After first %s" % (len(unavailable), unavailable))
    position = position_of(headers)
    for node in c.nodes:
        def found():
            s, _, b = c.request("POST", "/v0/content-lake/search", token, {"query": word}, headers=position,
                                port=node.port)
            return s == 200 and [h["id"] for h in json.loads(b).get("hits", [])]
        hits = wait_until("a search on the node finds the write", found, timeout=30)
        check(hits == [json.loads(body)["id"]], "after the faults, node %s's search index follows the log" % node.port,
              hits)

    def holders():
        held = {}
        for node in c.nodes:
            for line in fetch("http://127.0.0.1:%d/metrics" % node.admin_port)[2].decode().splitlines():
                if line.startswith('contentlake_lease_held{lease="'):
                    lease = line.split('"')[1]
                    held[lease] = held.get(lease, 0) + int(float(line.split()[-1]))
        return held
    held = wait_until("each lease is held by one node", lambda: (lambda h: h if h and set(h.values()) == {1} else None)(
        holders()), timeout=30)
    check(set(held.values()) == {1}, "after the faults, each lease is held by exactly one node (%s)" % sorted(held), held)
    report.append("after the faults: a new write found by both nodes' searches; leases %s each held once" % sorted(held))
    report.append("reads refused as their server was behind or on another history: %s"
                  % {n.port: refused_reads(n) for n in c.nodes})


def main():
    binary, source, s3rver_dir, eventsource = sys.argv[1:5]
    for tool in ("haproxy", "patroni", "etcd", "etcdctl", "patronictl"):
        if not shutil.which(tool):
            skip("%s is not installed (scripts/install-deps --with-test-tools installs it)" % tool)
    c = load = client = None
    report = []
    rx = Receiver()
    try:
        c = Cluster(binary, source, s3rver_dir, {"CONTENTLAKE_WEBHOOKS_HTTPS_ONLY": "false",
                                                 "CONTENTLAKE_WEBHOOKS_ALLOWED_NETWORKS": "127.0.0.0/8"},
                    replicated=True, members=3, etcd_members=3)
        token = c.token()
        # Webhook dispatch goes on through every fault: each change is delivered (at least once).
        status, _, body = c.request("POST", "/v0/content-lake/webhooks", token,
                                    {"url": rx.url, "event_types": ["resource.created"]})
        check(status == 201, "a webhook subscribed to every create", body[:200])
        since = json.loads(c.request("GET", "/v0/content-lake/changes", token)[2])["next_cursor"]
        url = "http://127.0.0.1:%d/v0/content-lake/changes?since=%s" % (c.port, since)
        client = subprocess.Popen(["node", os.path.join(source, "tests/client/changes_eventsource.js"), url, token,
                                   "1000000", "900"], env=dict(os.environ, NODE_PATH=eventsource),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        events = []
        reader = threading.Thread(target=lambda: events.extend(json.loads(line)["event"] for line in client.stdout))
        reader.start()
        history = History()
        load = Load(c, token, history)
        test_primary_killed(c, load, report)
        switchover_failed = test_switchover(c, load, report)
        test_sync_standby_killed(c, load, report)
        test_etcd_member_killed(c, load, report)
        test_primary_frozen(c, load, report)
        test_replica_frozen(c, load, report)
        test_after_the_faults(c, token, report)
        load.stop()
        check(not load.unfinished, "every keyed write was acknowledged in the end, retries included",
              load.unfinished[:5])
        check(not load.bad, "every answer was 201, or 503 with Retry-After (a keyed write: or a lost connection)",
              load.bad[:5])
        check(not load.ryw["stale"], "every read of one's own write with its position found it (%d reads)"
              % load.ryw["checked"], load.ryw["stale"][:5])
        # A switchover leaves the cluster without a primary for about 2 s (the old one stops, the
        # candidate promotes and takes a synchronous standby): a keyed request meanwhile is answered
        # 503 with Retry-After (never anything else) and its retry succeeds (the check above).
        other = [f for f in switchover_failed if f[2] not in (503, 409)]
        check(not other, "a planned switchover failed no keyed request: 503 with Retry-After meanwhile, then its retry "
              "succeeded (%d such answers)" % len(switchover_failed), other[:5])
        stored = set(c.pg.psql("SELECT id FROM resources WHERE tenant = '%s'" % TENANT, "contentlake").split())
        lost = sorted((load.acked_at[i][0] - T0, load.acked_at[i][1] - T0, load.acked_at[i][2]) for i in
                      set(history.acknowledged) - stored if i in load.acked_at)
        if lost:
            print("acknowledged writes missing (sent, answered, path), seconds since the start:")
            for x in lost[:40]:
                print("   %.2f %.2f %s" % x)
        check_history(c, history, token, since)
        doubled = c.pg.psql("SELECT record::json->>'title' FROM resources WHERE tenant = '%s' AND "
                            "(record::json->>'title' LIKE 'fo-%%' OR record::json->>'title' LIKE 'ryw-%%') "
                            "GROUP BY 1 HAVING count(*) > 1" % TENANT, "contentlake").split()
        check(not doubled, "no key of the load had two effects in the database", doubled[:5])
        # The SSE client: every change of the tenant's log, once, in order, up to where it is.
        log = [line.split("|")[0] for line in c.pg.psql(
            "SELECT id, op FROM change_log WHERE tenant = '%s' AND kind = 1 ORDER BY seq" % TENANT,
            "contentlake").split()]
        created = lambda: [e.get("resource_id") for e in list(events) if e.get("type") == "resource.created"]
        wait_until("the event stream has caught up", lambda: len(created()) >= len(log), timeout=60)
        client.kill()
        reader.join(timeout=10)
        got = created()
        check(got == log[:len(got)] and len(got) == len(log),
              "the SSE client got every change once, in order, across every fault (%d)" % len(got),
              (len(got), len(log)))
        def delivered():
            with rx.lock:
                return {body.get("resource_id") for _, body, _ in rx.deliveries}
        try:
            wait_until("every create is delivered to the webhook", lambda: not (set(log) - delivered()), timeout=120)
        except AssertionError:
            pass  # the check below names what is missing
        missing = set(log) - delivered()
        check(not missing, "webhook dispatch resumed after every fault: each of the %d creates delivered" % len(log),
              sorted(missing)[:5])
        with rx.lock:
            deliveries = len(rx.deliveries)
        report.append("webhooks: %d deliveries for %d creates (at least once: a delivery whose outcome a fault "
                      "lost is sent again)" % (deliveries, len(log)))
        unkeyed = {}
        for _, s in load.unkeyed:
            unkeyed[s] = unkeyed.get(s, 0) + 1
        report.append("load: %d keyed writes acknowledged, %d keyed attempts answered otherwise; unkeyed answers %s; "
                      "%d reads of one's own write and %d list pages with its position (%d answered 503 first)"
                      % (len(load.acks), len(load.failed), unkeyed, load.ryw["checked"], load.ryw["pages"],
                         load.ryw["unavailable"]))
    finally:
        rx.stop()
        if load:
            load.stop()
        if client and client.poll() is None:
            client.kill()
        if c:
            failed = failures or sys.exc_info()[0] is not None  # a check, or a wait that timed out
            if failed and c.replicated:
                c.pg.print_logs(1500)
            if failed:  # when each fault began and ended, to read beside the nodes' logs (UTC)
                print("timeline (s since the start, UTC, what): %s; nodes: %s" % (TIMELINE, [n.port for n in c.nodes]))
            c.stop()
    for line in report:
        print("      " + line)
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("failover: every check passed")


if __name__ == "__main__":
    main()
