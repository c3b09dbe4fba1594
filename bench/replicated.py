"""The replicated database against one PostgreSQL, in one run on this machine (issue 68). Everything
shares the machine's cores, so the figures are ratios within the run, with the CPU each process
spent per request beside them:

1. Writes: creates through node1 of a two-node cluster on one PostgreSQL against the same through
   node1 of a two-node cluster on the replicated database (three Patroni-managed members,
   synchronous and strict), alternating rounds (the median round is the figure): req/s, p99, and
   the CPU per write of the node and of each database member.
2. Reads that reach the database (list pages: no cache answers them) on the replicated database:
   through node1, which reads from the replicas, against node2, which reads from the primary only:
   req/s, p99, CPU per read of each node and each member.
3. Failover: the primary's PostgreSQL and Patroni SIGKILLed under keyed writes, ROUNDS times: the
   kill to the promotion (read-write) and to the first acknowledged write; a switchover
   (`patronictl switchover`) ROUNDS times: the command to the first write acknowledged after the
   pause, and how long writes were answered 503.

    bench/replicated [SECONDS] [ROUNDS] [PARTS]   (PARTS: which of 1, 2, 3 to run, default 123; the
    wrapper builds and installs what it needs)
"""
import http.client
import os
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster import HZ, SMALL, cpu_seconds, median, wrk  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "client"))
from harness import Cluster, wait_until  # noqa: E402

SETTINGS = {"CONTENTLAKE_RATE_LIMIT_REQUESTS_PER_SECOND": "1000000", "CONTENTLAKE_RATE_LIMIT_BURST": "1000000",
            "CONTENTLAKE_LOG_ACCESS": "false"}


def tree_cpu(root):
    """CPU seconds of `root` and every process whose parent it is (a postmaster and its backends)."""
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(entry) == root or int(fields[1]) == root:
            total += (int(fields[11]) + int(fields[12])) / HZ
    return total


def processes(c):
    """name -> a function answering that process's CPU seconds so far."""
    out = {"node1": lambda p=c.nodes[0].proc.pid: cpu_seconds(p), "node2": lambda p=c.nodes[1].proc.pid: cpu_seconds(p)}
    if c.replicated:
        roles = {n: x.get("role") for n, x in c.pg.cluster().items()}
        for m in c.pg.members:
            pid = c.pg.postmaster(m)
            out["%s (%s)" % (m, roles.get(m))] = lambda p=pid: tree_cpu(p)
    else:
        with open(os.path.join(c.pg.dir, "data")) as f:
            data = f.read().strip()
        with open(os.path.join(data, "db", "postmaster.pid")) as f:
            pid = int(f.readline())
        out["postgresql"] = lambda p=pid: tree_cpu(p)
    return out


def measured(c, args, script=None):
    procs = processes(c)
    before = {name: f() for name, f in procs.items()}
    r = wrk(args, script)
    r["cpu_ms"] = {name: (f() - before[name]) * 1000 / max(r["requests"], 1) for name, f in procs.items()}
    return r


def cpu_line(r):
    return ", ".join("%s %.3f" % (k, v) for k, v in r["cpu_ms"].items()) + " (sum %.3f)" % sum(r["cpu_ms"].values())


class KeyedWriter:
    """A client sending keyed creates to `port`, retrying each key until 201: (sent, answered) of each."""

    def __init__(self, port, token):
        self.port, self.token = port, token
        self.acks, self.refused = [], []
        self.running = threading.Event()
        self.running.set()
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        i, conn = 0, None
        while self.running.is_set():
            i += 1
            key = "bench-%d-%d" % (os.getpid(), i)
            while self.running.is_set():
                sent = time.monotonic()
                try:
                    conn = conn or http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                    conn.request("POST", "/v0/content-lake/resources", SMALL, {
                        "Authorization": "Bearer " + self.token, "Content-Type": "application/json",
                        "Idempotency-Key": key})
                    r = conn.getresponse()
                    r.read()
                    status = r.status
                except (OSError, http.client.HTTPException):
                    conn, status = None, 0
                if status == 201:
                    self.acks.append((sent, time.monotonic()))
                    break
                self.refused.append(time.monotonic())
                time.sleep(0.02)

    def resumed(self, after):
        """When the first write sent after `after` was acknowledged."""
        return min((a for s, a in list(self.acks) if s > after), default=None)

    def stop(self):
        self.running.clear()
        self.thread.join(timeout=120)


def main():
    binary, source = sys.argv[1], sys.argv[2]
    seconds, rounds = int(sys.argv[3]), int(sys.argv[4])
    parts = sys.argv[5] if len(sys.argv) > 5 else "123"
    work = tempfile.mkdtemp(prefix="contentlake-bench-replicated-")
    s3rver = os.environ["CL_BENCH_S3RVER"]
    single = Cluster(binary, source, s3rver, SETTINGS, replicated=False)
    replicated = None
    try:
        replicated = Cluster(binary, source, s3rver, SETTINGS, replicated=True, members=3, etcd_members=3)
        tokens, scripts = {}, {}
        for name, c in (("single", single), ("replicated", replicated)):
            tokens[name] = c.token(sub="a_bench", scopes="content-lake.read content-lake.write")
            scripts[name] = os.path.join(work, name + ".lua")
            with open(scripts[name], "w") as f:
                f.write('wrk.method = "POST"\nwrk.body = [[%s]]\nwrk.headers["Content-Type"] = "application/json"\n'
                        'wrk.headers["Authorization"] = "Bearer %s"\n' % (SMALL, tokens[name]))

        if "1" in parts:
            writes(single, replicated, scripts, seconds, rounds)
        if "2" in parts:
            reads(replicated, tokens, seconds, rounds)
        single.stop()
        single = None
        if "3" in parts:
            faults(replicated, tokens, rounds)
    finally:
        for c in (single, replicated):
            if c:
                c.stop()


def writes(single, replicated, scripts, seconds, rounds):
    print("1. creates through node1, c32: one PostgreSQL against the replicated database (%d rounds of %d s, "
          "alternating; the median round)" % (rounds, seconds), flush=True)
    runs = {"single": [], "replicated": []}
    for _ in range(rounds):
        for name, c in (("single", single), ("replicated", replicated)):
            url = "http://127.0.0.1:%d/v0/content-lake/resources" % c.nodes[0].port
            runs[name].append(measured(c, ["-t2", "-c32", "-d%ds" % seconds, url], scripts[name]))
    s = sorted(runs["single"], key=lambda r: r["rate"])[rounds // 2]
    r = sorted(runs["replicated"], key=lambda r: r["rate"])[rounds // 2]
    print("  one PostgreSQL  %7.0f creates/s p99 %6.2f ms | CPU ms/write %s" % (s["rate"], s["p99_ms"], cpu_line(s)))
    print("  replicated      %7.0f creates/s p99 %6.2f ms | CPU ms/write %s" % (r["rate"], r["p99_ms"], cpu_line(r)))
    print("  ratio replicated/one: rate %.2fx, p99 %.2fx (rounds %s)" % (
        r["rate"] / s["rate"], r["p99_ms"] / s["p99_ms"],
        " ".join("%.2f" % (x["rate"] / y["rate"]) for x, y in zip(runs["replicated"], runs["single"]))), flush=True)



def reads(replicated, tokens, seconds, rounds):
    print("2. list pages (20 Resources each, read from the database every time), c16, on the replicated database: "
          "node1 reads from the replicas, node2 from the primary only", flush=True)
    c = replicated
    header = ["-H", "Authorization: Bearer " + tokens["replicated"]]
    runs = {"replicas": [], "primary": []}
    for _ in range(rounds):
        for name, node in (("replicas", c.nodes[0]), ("primary", c.nodes[1])):
            url = "http://127.0.0.1:%d/v0/content-lake/resources?page_size=20" % node.port
            runs[name].append(measured(c, ["-t2", "-c16", "-d%ds" % seconds, url] + header))
    on_r = sorted(runs["replicas"], key=lambda r: r["rate"])[rounds // 2]
    on_p = sorted(runs["primary"], key=lambda r: r["rate"])[rounds // 2]
    print("  replicas (node1) %7.0f reads/s p99 %6.2f ms | CPU ms/read %s" % (on_r["rate"], on_r["p99_ms"],
                                                                           cpu_line(on_r)))
    print("  primary (node2)  %7.0f reads/s p99 %6.2f ms | CPU ms/read %s" % (on_p["rate"], on_p["p99_ms"],
                                                                           cpu_line(on_p)))
    print("  ratio replicas/primary: rate %.2fx (rounds %s)" % (on_r["rate"] / on_p["rate"], " ".join(
        "%.2f" % (x["rate"] / y["rate"]) for x, y in zip(runs["replicas"], runs["primary"]))), flush=True)
    if any(x["non_2xx"] for x in runs["replicas"] + runs["primary"]):
        print("  !! answers not 2xx")


def faults(c, tokens, rounds):
    print("3. failover and switchover under keyed writes through node1 (HAProxy to the primary), %d each"
          % rounds, flush=True)
    db = c.pg
    writer = KeyedWriter(c.nodes[0].port, tokens["replicated"])
    kills, switches = [], []
    try:
        for _ in range(rounds):
            wait_until("writes flow", lambda: writer.resumed(time.monotonic() - 1))
            old = db.primary()
            db.kill(old)
            killed = time.monotonic()
            new = wait_until("a promotion", lambda: (lambda p: p if p and p != old else None)(db.primary()), 60)
            wait_until("it accepts writes", lambda: db.writable(new), 60)
            promoted = time.monotonic()
            first = wait_until("writes resume", lambda: writer.resumed(killed), 60)
            kills.append((promoted - killed, first - killed))
            db.start(old)
            wait_until("the cluster settles", db.settled, 120)
        for _ in range(rounds):
            wait_until("writes flow", lambda: writer.resumed(time.monotonic() - 1))
            started = time.monotonic()
            leader, _ = db.switchover()
            wait_until("the switchover", lambda: (lambda p: p if p and p != leader else None)(db.primary()), 60)
            wait_until("writes resume", lambda: writer.resumed(time.monotonic() - 0.5), 60)
            wait_until("the cluster settles", db.settled, 120)
            refused = [t - started for t in list(writer.refused) if t >= started]
            window = (max(refused) - min(refused)) if refused else 0.0
            switches.append((window, len(refused)))
    finally:
        writer.stop()
    print("  kill -> promotion (read-write): %s s; median %.1f" % (
        " ".join("%.1f" % k[0] for k in kills), median([k[0] for k in kills])))
    print("  kill -> first acknowledged write: %s s; median %.1f, max %.1f (goal: at most 10)" % (
        " ".join("%.1f" % k[1] for k in kills), median([k[1] for k in kills]), max(k[1] for k in kills)))
    print("  promotion -> first acknowledged write: %s s (goal: at most 3)" % " ".join(
        "%.1f" % (k[1] - k[0]) for k in kills))
    print("  switchover: writes answered 503 for %s s (%s attempts each); median %.1f s" % (
        " ".join("%.1f" % w[0] for w in switches), " ".join(str(w[1]) for w in switches),
        median([w[0] for w in switches])), flush=True)


if __name__ == "__main__":
    main()
