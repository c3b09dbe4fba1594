"""A replicated PostgreSQL for the test suites, from the files shipped in deploy/cluster/ with their
addresses changed: three etcd 3.4 members (etcd.conf.yml), three PostgreSQL 15 members managed by
Patroni 3.0.2 (patroni.yml: synchronous, strict) and HAProxy in front of them
(haproxy-postgresql.cfg: the primary on one port, the replicas on another). Everything listens on
loopback; `stop` ends every process and removes every folder, also after a failed check.

Under root, Patroni and PostgreSQL run as the `postgres` user the Debian package creates (the
server refuses root), through `setpriv`, so each process's pid is the server's own (a fault test
kills and freezes exactly it). etcd keeps its data in /dev/shm where there is one: on 2 shared cores
beside three PostgreSQL members writing WAL, an fsync of etcd's could stall past Patroni's
retry_timeout and fail the primary over with no fault injected.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import urllib.error
import urllib.request

import yaml

from harness import children_of, haproxy_states, wait_until

MEMBERS = ("db1", "db2", "db3")  # as deploy/cluster/ names them; a lighter database uses the first ones
SUPERUSER_PASSWORD = "test-superuser"
APP_USER, APP_PASSWORD = "contentlake", "test-contentlake"


def listen_port():
    """A free loopback port below the kernel's ephemeral range: a port handed out by binding port 0
    comes from that range, where any outgoing connection (a PostgreSQL member's, an etcd peer's) can
    take it before the server it was picked for binds it (Patroni then stops: address in use)."""
    import random
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low = int(f.read().split()[0])
    while True:
        port = random.randrange(max(1024, low - 12000), low)
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue
        finally:
            s.close()


def as_postgres():
    """The prefix that runs a command as the database's owner: `postgres` under root."""
    if os.getuid() != 0:
        return []
    return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"]


class ReplicatedPostgres:
    """`url(dbname)` reaches the primary through HAProxy, `replica_url(dbname)` the replicas,
    `multi_host_url(dbname)` every member with libpq's `target_session_attrs=read-write`;
    `password_file` holds the application user's password. Faults: `kill`, `start`, `freeze`,
    `thaw`, `switchover`, `kill_etcd`, `start_etcd`."""

    def __init__(self, source, members=3, etcd_members=3):
        """`members` PostgreSQL members (at least 2: a primary and its synchronous standby) on
        `etcd_members` etcd members. The failover test runs three and three, as shipped; the client
        suites run on two and one (the same behaviour for them, at a third of the machine)."""
        self.source = source
        self.members = MEMBERS[:members]
        self.etcd_names = ("etcd1", "etcd2", "etcd3")[:etcd_members]
        self.dir = tempfile.mkdtemp(prefix="contentlake-patroni-")
        shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        self.etcd_dir = tempfile.mkdtemp(prefix="contentlake-etcd-", dir=shm)
        self.etcd, self.patroni, self.logs = {}, {}, []
        self.haproxy = None
        self.frozen = []
        try:
            self.start_all()
        except BaseException:
            self.print_logs()
            self.stop()
            raise

    # --- starting -------------------------------------------------------------------------------

    def start_all(self):
        if os.getuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        self.etcd_ports = {n: (listen_port(), listen_port()) for n in self.etcd_names}
        for name in self.etcd_ports:
            self.start_etcd(name, initial=True)
        wait_until("etcd has a leader", self.etcd_healthy, timeout=30)
        self.ports = {m: {"pg": listen_port(), "rest": listen_port()} for m in self.members}
        for m in self.members:
            self.write_patroni_config(m)
        # The first member bootstraps the cluster (initdb); the others clone it with pg_basebackup.
        self.start(MEMBERS[0])
        wait_until("db1 is the primary", lambda: self.primary() == MEMBERS[0], timeout=90)
        for m in self.members[1:]:
            self.start(m)
        wait_until("both replicas stream and one is the synchronous standby", self.settled, timeout=120)
        self.psql("CREATE ROLE %s LOGIN PASSWORD '%s'" % (APP_USER, APP_PASSWORD))
        self.password_file = os.path.join(self.dir, "app.password")
        with open(self.password_file, "w") as f:
            f.write(APP_PASSWORD + "\n")
        os.chmod(self.password_file, 0o644)  # read by the nodes, which run as this test's user
        self.start_haproxy()

    def start_etcd(self, name, initial=False):
        with open(os.path.join(self.source, "deploy", "cluster", "etcd.conf.yml")) as f:
            cfg = yaml.safe_load(f)
        client, peer = self.etcd_ports[name]
        cfg.update({
            "name": name,
            "data-dir": os.path.join(self.etcd_dir, name),
            "listen-client-urls": "http://127.0.0.1:%d" % client,
            "advertise-client-urls": "http://127.0.0.1:%d" % client,
            "listen-peer-urls": "http://127.0.0.1:%d" % peer,
            "initial-advertise-peer-urls": "http://127.0.0.1:%d" % peer,
            "initial-cluster": ",".join("%s=http://127.0.0.1:%d" % (n, p[1]) for n, p in self.etcd_ports.items()),
            "initial-cluster-state": "new",
        })
        path = os.path.join(self.dir, name + ".yml")
        with open(path, "w") as f:
            yaml.safe_dump(cfg, f)
        log = open(os.path.join(self.dir, name + ".log"), "a")
        self.logs.append(log.name)
        self.etcd[name] = subprocess.Popen(["etcd", "--config-file", path], stdout=log, stderr=subprocess.STDOUT)

    def etcd_healthy(self):
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/health" % self.etcd_ports["etcd1"][0], timeout=2) as r:
                return json.loads(r.read()).get("health") == "true"
        except (OSError, ValueError):
            return False

    def write_patroni_config(self, m):
        with open(os.path.join(self.source, "deploy", "cluster", "patroni.yml")) as f:
            cfg = yaml.safe_load(f)
        pg, rest = self.ports[m]["pg"], self.ports[m]["rest"]
        member_dir = os.path.join(self.dir, m)
        os.makedirs(member_dir, exist_ok=True)
        if os.getuid() == 0:
            shutil.chown(member_dir, "postgres", "postgres")
        cfg["name"] = m
        cfg["restapi"].update({"listen": "127.0.0.1:%d" % rest, "connect_address": "127.0.0.1:%d" % rest})
        cfg["etcd"]["hosts"] = ",".join("127.0.0.1:%d" % p[0] for p in self.etcd_ports.values())
        hba = [re.sub(r"10\.0\.0\.0/24", "127.0.0.1/32", line) for line in cfg["bootstrap"]["pg_hba"]]
        cfg["bootstrap"]["pg_hba"] = hba
        auth = cfg["postgresql"]["authentication"]
        auth["superuser"]["password"] = SUPERUSER_PASSWORD
        auth["replication"]["password"] = "test-replication"
        auth["rewind"]["password"] = "test-rewind"
        cfg["postgresql"].update({
            "listen": "127.0.0.1:%d" % pg,
            "connect_address": "127.0.0.1:%d" % pg,
            "data_dir": os.path.join(member_dir, "data"),
            "pgpass": os.path.join(member_dir, "pgpass"),
        })
        cfg["postgresql"]["parameters"]["unix_socket_directories"] = member_dir
        # Sized for a test on 2 cores: three members on one machine.
        cfg["bootstrap"]["dcs"]["postgresql"]["parameters"].update({"wal_keep_size": "64MB", "max_connections": 200})
        cfg["bootstrap"]["dcs"]["postgresql"]["parameters"]["shared_buffers"] = "64MB"
        path = os.path.join(self.dir, m + ".yml")
        with open(path, "w") as f:
            yaml.safe_dump(cfg, f)
        os.chmod(path, 0o644)
        self.ports[m]["config"] = path

    def start(self, m):
        """Starts member `m`'s Patroni (which starts its PostgreSQL, or rejoins it as a replica)."""
        log = open(os.path.join(self.dir, m + ".log"), "a")
        if log.name not in self.logs:
            self.logs.append(log.name)
        self.patroni[m] = subprocess.Popen(as_postgres() + ["patroni", self.ports[m]["config"]], stdout=log,
                                           stderr=subprocess.STDOUT, cwd=self.dir)

    def start_haproxy(self):
        with open(os.path.join(self.source, "deploy", "cluster", "haproxy-postgresql.cfg")) as f:
            cfg = f.read()
        self.primary_port, self.replica_port = listen_port(), listen_port()
        cfg = cfg.replace("bind 127.0.0.1:5000", "bind 127.0.0.1:%d" % self.primary_port)
        cfg = cfg.replace("bind 127.0.0.1:5001", "bind 127.0.0.1:%d" % self.replica_port)
        for i, m in enumerate(MEMBERS):
            line = "    server %s 10.0.0.2%d:5432 check port 8008\n" % (m, i + 1)
            assert line in cfg, "deploy/cluster/haproxy-postgresql.cfg: %r not found" % line
            cfg = cfg.replace(line, "    server %s 127.0.0.1:%d check port %d\n" % (
                m, self.ports[m]["pg"], self.ports[m]["rest"]) if m in self.members else "")
        self.haproxy_stats = os.path.join(self.dir, "haproxy.sock")
        cfg = cfg.replace("global\n", "global\n    stats socket %s level admin\n" % self.haproxy_stats, 1)
        path = os.path.join(self.dir, "haproxy-postgresql.cfg")
        with open(path, "w") as f:
            f.write(cfg)
        log = open(os.path.join(self.dir, "haproxy.log"), "w")
        self.logs.append(log.name)
        self.haproxy = subprocess.Popen(["haproxy", "-db", "-f", path], stdout=log, stderr=subprocess.STDOUT)
        wait_until("HAProxy sends writes to the primary", lambda: self.haproxy_states("postgresql_primary").get(
            self.primary()) == "UP", timeout=30)

    # --- what the members are -------------------------------------------------------------------

    def rest(self, m, path, method="GET", body=None, timeout=2):
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (self.ports[m]["rest"], path), method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()
        except OSError:
            return 0, b""

    def cluster(self):
        """Patroni's view of the members ({name: {role, state, lag, ...}}) from any member that answers."""
        for m in self.members:
            if m in self.frozen:
                continue
            status, body = self.rest(m, "/cluster")
            if status == 200:
                return {x["name"]: x for x in json.loads(body).get("members", [])}
        return {}

    def primary(self):
        return next((n for n, x in self.cluster().items() if x.get("role") == "leader" and x.get("state") == "running"),
                    None)

    def writable(self, m):
        """Whether member `m`'s PostgreSQL accepts writes now (promoted, not in recovery)."""
        try:
            return self.psql("SELECT NOT pg_is_in_recovery()", member=m).strip() == "t"
        except subprocess.CalledProcessError:
            return False

    def sync_standby(self):
        return next((n for n, x in self.cluster().items() if x.get("role") == "sync_standby"), None)

    def settled(self):
        """One primary, a synchronous standby and every other member a replica, all running."""
        members = self.cluster()
        roles = sorted(x.get("role") for x in members.values() if x.get("state") in ("running", "streaming"))
        want = sorted(["leader", "sync_standby"] + ["replica"] * (len(self.members) - 2))
        return len(members) == len(self.members) and roles == want

    def haproxy_states(self, proxy):
        return haproxy_states(self.haproxy_stats, proxy, lambda name: name in self.members)

    # --- connecting -----------------------------------------------------------------------------

    def url(self, dbname="postgres"):
        return "host=127.0.0.1 port=%d user=%s dbname=%s" % (self.primary_port, APP_USER, dbname)

    def replica_url(self, dbname="postgres"):
        return "host=127.0.0.1 port=%d user=%s dbname=%s" % (self.replica_port, APP_USER, dbname)

    def multi_host_url(self, dbname="postgres"):
        hosts = ",".join("127.0.0.1:%d" % self.ports[m]["pg"] for m in self.members)
        return "postgresql://%s@%s/%s?target_session_attrs=read-write" % (APP_USER, hosts, dbname)

    def create_database(self, name):
        self.psql("CREATE DATABASE %s OWNER %s" % (name, APP_USER))
        return self.url(name)

    def psql(self, sql, dbname="postgres", member=None):
        """Runs `sql` as the superuser on `member` (the primary by default), straight to its port."""
        m = member or wait_until("a primary is elected", self.primary, timeout=60)
        env = dict(os.environ, PGPASSWORD=SUPERUSER_PASSWORD, PGCONNECT_TIMEOUT="5")
        return subprocess.run(["psql", "host=127.0.0.1 port=%d user=postgres dbname=%s" % (self.ports[m]["pg"], dbname),
                               "-v", "ON_ERROR_STOP=1", "-qAtc", sql], check=True, capture_output=True, text=True,
                              env=env).stdout

    # --- faults ---------------------------------------------------------------------------------

    def postmaster(self, m):
        try:
            with open(os.path.join(self.dir, m, "data", "postmaster.pid")) as f:
                return int(f.readline())
        except (OSError, ValueError):
            return None

    def server_pids(self, m):
        """Member `m`'s Patroni, its postmaster and every process the postmaster started."""
        pids = [self.patroni[m].pid] if m in self.patroni and self.patroni[m].poll() is None else []
        postmaster = self.postmaster(m)
        if postmaster:
            pids += [postmaster] + children_of(postmaster)
        return pids

    def kill(self, m):
        """SIGKILL to member `m`'s Patroni and PostgreSQL (its host died)."""
        for pid in self.server_pids(m):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if m in self.patroni:
            self.patroni[m].wait(timeout=10)
        wait_until("%s's PostgreSQL is gone" % m, lambda: not self.alive(self.postmaster(m)), timeout=10)

    @staticmethod
    def alive(pid):
        if not pid:
            return False
        try:
            with open("/proc/%d/stat" % pid) as f:
                return f.read().split(") ")[1][0] != "Z"
        except OSError:
            return False

    def freeze(self, m):
        """SIGSTOP to member `m`'s Patroni and PostgreSQL: a host that hangs, its connections open."""
        self.frozen.append(m)
        self.frozen_pids = getattr(self, "frozen_pids", [])
        for pid in self.server_pids(m):
            try:
                os.kill(pid, signal.SIGSTOP)
                self.frozen_pids.append(pid)  # recorded at once: a failure after it still thaws it
            except ProcessLookupError:
                pass  # a backend that ended meanwhile

    def thaw(self):
        for pid in getattr(self, "frozen_pids", []):
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        self.frozen, self.frozen_pids = [], []

    def switchover(self, candidate=None):
        """`patronictl switchover` from the primary to `candidate` (the synchronous standby by default)."""
        leader = self.primary()
        candidate = candidate or self.sync_standby()
        out = subprocess.run(["patronictl", "-c", self.ports[leader]["config"], "switchover", "--leader", leader,
                              "--candidate", candidate, "--force"], capture_output=True, text=True)
        assert out.returncode == 0, "patronictl switchover failed: %s %s" % (out.stdout[-500:], out.stderr[-500:])
        return leader, candidate

    def kill_etcd(self, name):
        self.etcd[name].kill()
        self.etcd[name].wait(timeout=10)

    def restart_etcd(self, name):
        """Starts an etcd member again on its data (it rejoins the cluster it was part of)."""
        with open(os.path.join(self.dir, name + ".yml")) as f:
            cfg = yaml.safe_load(f)
        cfg["initial-cluster-state"] = "existing"
        with open(os.path.join(self.dir, name + ".yml"), "w") as f:
            yaml.safe_dump(cfg, f)
        log = open(os.path.join(self.dir, name + ".log"), "a")
        self.etcd[name] = subprocess.Popen(["etcd", "--config-file", os.path.join(self.dir, name + ".yml")],
                                           stdout=log, stderr=subprocess.STDOUT)

    # --- ending ---------------------------------------------------------------------------------

    def print_logs(self, tail=2500):
        for path in self.logs:
            try:
                with open(path, errors="replace") as f:
                    print("--- %s:\n%s" % (os.path.basename(path), f.read()[-tail:]))
            except OSError:
                pass

    def stop(self):
        self.thaw()
        for m in self.members:  # whatever a failed check left stopped answers signals again
            for pid in self.server_pids(m):
                try:
                    os.kill(pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass
        for m, p in self.patroni.items():
            if p.poll() is None:
                p.terminate()
        for m, p in self.patroni.items():
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        for m in self.members:  # a PostgreSQL whose Patroni was killed keeps running: stop it too
            pid = self.postmaster(m)
            if self.alive(pid):
                try:
                    os.kill(pid, signal.SIGQUIT)
                except ProcessLookupError:
                    pass
        if self.haproxy and self.haproxy.poll() is None:
            self.haproxy.terminate()
            self.haproxy.wait(timeout=10)
        for p in self.etcd.values():
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
        for m in self.members:
            pid = self.postmaster(m)
            if self.alive(pid):
                wait_until("%s's PostgreSQL stopped" % m, lambda: not self.alive(pid), timeout=20)
        if os.environ.get("CL_KEEP_TEST_DIRS"):
            print("the replicated database's files: %s and %s" % (self.dir, self.etcd_dir))
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
            shutil.rmtree(self.etcd_dir, ignore_errors=True)
