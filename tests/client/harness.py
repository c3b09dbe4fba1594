"""Runs `contentlake serve` as a user would (a real process on ephemeral ports, a temporary data
dir, development identity) and talks to it over HTTP, for tests written against real client
libraries (markdown-it, jsonschema). Standard library only."""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request


def skip(reason):
    """Ends the test as skipped (exit 77, ctest's SKIP_RETURN_CODE), or as failed under CI=true:
    there the test command installs and permits everything a test needs, so a skip hides a gap."""
    print("SKIPPED: " + reason)
    if os.environ.get("CI") == "true":
        print("FAILED: a skip is a failure under CI=true")
        sys.exit(1)
    sys.exit(77)


def wait_until(what, predicate, timeout=20.0):
    """Polls `predicate` until it holds (its value is returned) or fails the test after `timeout`."""
    import time
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting until " + what)
        time.sleep(0.01)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Answers are shown as they come: a 302 is a 302 (the blob routes' Location is what is tested)."""

    def redirect_request(self, *args, **kwargs):
        return None


_opener = urllib.request.build_opener(_NoRedirect)


class Headers(dict):
    """Response headers, looked up whatever the case of their names (HTTP says names are
    case-insensitive; HAProxy sends them in lower case)."""

    def __init__(self, items):
        super().__init__(items)
        self._names = {k.lower(): k for k in self}

    def _name(self, key):
        return self._names.get(key.lower(), key) if isinstance(key, str) else key

    def __getitem__(self, key):
        return super().__getitem__(self._name(key))

    def __contains__(self, key):
        return isinstance(key, str) and key.lower() in self._names

    def get(self, key, default=None):
        return super().get(self._name(key), default)


def fetch(url, method="GET", data=None, headers=None):
    """(status, headers, body bytes) of one request to any URL (e.g. a presigned one), no redirects."""
    req = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    try:
        with _opener.open(req, timeout=60) as r:
            return r.status, Headers(r.headers.items()), r.read()
    except urllib.error.HTTPError as e:
        return e.code, Headers(e.headers.items()), e.read()


class Service:
    """`contentlake serve` in a temporary data dir; stop() (or the with-block) ends it. With
    CL_TEST_CLUSTER set, a `ClusterService` instead (below)."""

    def __new__(cls, *args, **kwargs):
        if cls is Service and os.environ.get("CL_TEST_CLUSTER"):
            cls = ClusterService
        return object.__new__(cls)

    def __init__(self, binary, source_dir, settings=None, data_dir=None):
        """`settings`: extra environment (CONTENTLAKE_... overrides). `data_dir`: a
        tempfile.TemporaryDirectory to serve (a restored one); default a new one."""
        self.binary = binary
        self.source_dir = source_dir
        self.dir = data_dir or tempfile.TemporaryDirectory(prefix="contentlake-client-")
        self.env = dict(os.environ)
        # Tests send hundreds of requests at once; the quota is not what they test.
        self.env["CONTENTLAKE_RATE_LIMIT_REQUESTS_PER_SECOND"] = "1000000"
        self.env["CONTENTLAKE_RATE_LIMIT_BURST"] = "1000000"
        if os.environ.get("CL_TEST_LOG_DIR"):
            # Under ctest: at debug every outbound connection is logged, and the suite fails a run
            # that tried one beyond loopback (log_secrets.py); the access log is on, as a user runs
            # it, and is searched for secrets with the rest.
            self.env["CONTENTLAKE_LOG_LEVEL"] = "debug"
        else:
            self.env["CONTENTLAKE_LOG_ACCESS"] = "false"  # benchmarks: not what they measure
        self.env.update(settings or {})
        self.log = []  # every line the service logged, across restarts (tests grep it for secrets)
        self.access_log = []  # every line of its standard output: the access log
        self.tokens = []  # every token minted for it (the suite-wide log check looks for them)
        self._start()

    def _start(self, port=0):
        self.proc = subprocess.Popen(
            [self.binary, "serve", "--listen", "127.0.0.1:%d" % port, "--admin-listen",
             "127.0.0.1:%d" % getattr(self, "admin_port_wanted", 0), "--blobs-listen",
             "127.0.0.1:0", "--data-dir", self.dir.name],
            cwd=self.source_dir, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Standard output (the access log) is drained from the start: a full pipe would block it.
        self.access_done = threading.Event()
        out, access_done = self.proc.stdout, self.access_done

        def drain_access():
            for line in out:
                self.access_log.append(line)
            access_done.set()
        threading.Thread(target=drain_access, daemon=True).start()
        self.port = None
        self.blobs_port = None
        for line in self.proc.stderr:
            self.log.append(line)
            m = re.search(r"embedded object store on 127\.0\.0\.1:(\d+)", line)
            if m:
                self.blobs_port = int(m.group(1))
            m = re.search(r"listening public=127\.0\.0\.1:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                admin = re.search(r"admin=127\.0\.0\.1:(\d+)", line)
                self.admin_port = int(admin.group(1)) if admin else None
                break
        if self.port is None:
            raise RuntimeError("the service did not start (exit %s)" % self.proc.wait())
        # Keep draining the log so the process never blocks on a full pipe.
        self.log_done = threading.Event()
        proc, done = self.proc, self.log_done

        def drain():
            for line in proc.stderr:
                self.log.append(line)
            done.set()
        threading.Thread(target=drain, daemon=True).start()

    def kill(self):
        """SIGKILL: no drain, no clean shutdown."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.log_done.wait(timeout=30)

    def restart(self, same_port=False):
        """Starts the service again on the same data dir (new ports, or the same public and admin
        ports: a load balancer's configuration names both)."""
        self.admin_port_wanted = self.admin_port if same_port else 0
        self._start(self.port if same_port else 0)

    def token(self, sub="u_client", tenant="t_client",
              scopes="content-lake.read content-lake.write contracts.read contracts.write", ttl=None, client_id=None):
        args = [self.binary, "token", "--data-dir", self.dir.name, "--tenant", tenant, "--sub", sub, "--scopes", scopes]
        if client_id:
            args += ["--client-id", client_id]
        if ttl:
            args += ["--ttl", str(ttl)]
        out = subprocess.run(args, check=True, capture_output=True, text=True)
        self.tokens.append(out.stdout.strip())
        return out.stdout.strip()

    def request(self, method, path, token=None, body=None, headers=None):
        """(status, headers, body bytes) of one request."""
        h = dict(headers or {})
        if token:
            h["Authorization"] = "Bearer " + token
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            h.setdefault("Content-Type", "application/json")
        return fetch("http://127.0.0.1:%d%s" % (self.port, path), method, data, h)

    def create_resources(self, token, count, clients=8, path="/v0/content-lake/resources", body=None):
        """`count` small Resources (or `body`s to `path`) created by `clients` keep-alive clients at
        once; the seconds it took (benchmarks load the service with it)."""
        import http.client
        import time
        left = [count]
        lock = threading.Lock()
        payload = json.dumps(body or {"title": "Tide", "type": "ARTICLE", "language": "en", "content": {
            "format": "cl.content/1", "blocks": [{"type": "paragraph", "key": "p1",
                                                  "children": [{"type": "span", "text": "The tide turns."}]}]}})

        def client():
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
            while True:
                with lock:
                    if left[0] == 0:
                        return
                    left[0] -= 1
                conn.request("POST", path, payload, headers)
                r = conn.getresponse()
                r.read()
                assert r.status == 201, r.status
        started = time.monotonic()
        threads = [threading.Thread(target=client) for _ in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return time.monotonic() - started

    def stop(self):
        """Stops the service (its whole log is then in `log`) and removes its data dir; its log is
        kept also when it did not stop."""
        try:
            self.shutdown()
        finally:
            self.keep_log()
            self.dir.cleanup()

    def keep_log(self):
        """With CL_TEST_LOG_DIR set (ctest sets it), leaves the service's log there beside the
        secrets it may never show: its identity files and the tokens minted for it. ctest's
        `log_secrets`, run after every other test, looks for each of them in every line."""
        where = os.environ.get("CL_TEST_LOG_DIR")
        if not where:
            return
        os.makedirs(where, exist_ok=True)
        name = os.path.join(where, "%s-%d-%d" % (os.path.basename(sys.argv[0]).split(".")[0], os.getpid(), id(self)))
        self.access_done.wait(timeout=30)
        with open(name + ".log", "w") as out:
            out.writelines(self.log)
        with open(name + "-access.log", "w") as out:
            out.writelines(self.access_log)
        secrets = list(self.tokens)
        identity = os.path.join(self.dir.name, "identity")
        if os.path.isdir(identity):
            for f in sorted(os.listdir(identity)):
                if f == "blobs-access-key-id":  # an identifier, logged at start on purpose (its secret is not)
                    continue
                with open(os.path.join(identity, f), "rb") as data:
                    secrets.append(data.read().hex())  # hex: the suite check decodes and tries each form
        if self.env.get("CONTENTLAKE_SECRETS_FILE"):  # the nodes' shared secrets (`secrets init`)
            import base64
            with open(self.env["CONTENTLAKE_SECRETS_FILE"]) as f:
                for line in f:
                    value = line.split()[-1] if line.strip() and not line.startswith("#") else ""
                    if value:
                        secrets.append(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).hex())
        with open(name + ".secrets", "w") as out:
            json.dump({"tokens": self.tokens, "identity_hex": secrets[len(self.tokens):],
                       "log_level": self.env.get("CONTENTLAKE_LOG_LEVEL", "info")}, out)

    def shutdown(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                # A service that does not stop is a failure, but it must not outlive the test (an
                # orphan spinning on a CPU slows every later test). What each thread waits on first.
                if shutil.which("gdb"):
                    try:
                        stacks = subprocess.run(["gdb", "-batch", "-p", str(self.proc.pid), "-ex", "thread apply all bt 12"],
                                                capture_output=True, text=True, timeout=120).stdout
                    except subprocess.SubprocessError as e:
                        stacks = "gdb: %s" % e
                    print("the service's threads when it did not stop:\n" + "\n".join(
                        line for line in stacks.splitlines() if line.startswith(("Thread", "#"))))
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("the service did not stop within 30 s of SIGTERM")
            self.log_done.wait(timeout=30)
            # A clean stop exits 0; under scripts/check-sanitizers a leak found at exit is 86.
            assert self.proc.returncode == 0, "the service exited %s after SIGTERM: %s" % (
                self.proc.returncode, "".join(self.log[-5:]))
        self.log_done.wait(timeout=30)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Started:
    """The services a test starts (`start` takes Service's arguments): `kill_all` at the end, in a
    `finally`, so none outlives the test, also when an assertion failed before its stop."""

    def __init__(self):
        self.services = []

    def start(self, *args, **kwargs):
        self.services.append(Service(*args, **kwargs))
        return self.services[-1]

    def kill_all(self):
        for service in self.services:
            if service.proc.poll() is None:
                service.proc.kill()
                service.proc.wait()


class Postgres:
    """A PostgreSQL 15 of the test's own (tests/support/postgres): `url(dbname)` connection strings,
    `psql`, `halt`/`resume` for outages, `stop` at the end."""

    def __init__(self, source):
        self.script = os.path.join(source, "tests", "support", "postgres")
        self.dir = tempfile.mkdtemp(prefix="contentlake-pgtest-")
        subprocess.run([self.script, "start", self.dir], check=True, capture_output=True)
        with open(os.path.join(self.dir, "url")) as f:
            self.base = f.read().strip()

    def url(self, dbname="postgres"):
        return self.base.replace("dbname=postgres", "dbname=" + dbname)

    def create_database(self, name):
        self.psql("CREATE DATABASE " + name)
        return self.url(name)

    def psql(self, sql, dbname="postgres"):
        return subprocess.run(["psql", self.url(dbname), "-v", "ON_ERROR_STOP=1", "-qAtc", sql], check=True,
                              capture_output=True, text=True).stdout

    def halt(self, mode):
        subprocess.run([self.script, "halt", self.dir, mode], check=True, capture_output=True)

    def server_pids(self):
        """The postmaster and every process it started (backends, the WAL writer, ...)."""
        with open(os.path.join(self.dir, "data")) as f:
            data = f.read().strip()
        with open(os.path.join(data, "db", "postmaster.pid")) as f:
            postmaster = int(f.readline())
        return [postmaster] + children_of(postmaster)

    def freeze(self):
        """Stops every server process (SIGSTOP): a database that keeps its connections open and
        answers nothing, as a hung server or an unreachable host does. `thaw` resumes them."""
        self.frozen = self.server_pids()
        for pid in self.frozen:
            os.kill(pid, signal.SIGSTOP)

    def thaw(self):
        for pid in getattr(self, "frozen", []):
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        self.frozen = []

    def resume(self):
        subprocess.run([self.script, "resume", self.dir], check=True, capture_output=True)

    def stop(self):
        self.thaw()  # a test that failed while the server was frozen
        subprocess.run([self.script, "stop", self.dir], capture_output=True)
        if os.environ.get("CL_KEEP_TEST_DIRS"):  # the server's log stays in self.dir for a post-mortem
            print("PostgreSQL's log: " + os.path.join(self.dir, "server.log"), file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


class ExternalStore:
    """An S3 service outside the contentlake process, for `blobs.backend = s3`."""

    def __init__(self, kind, where):
        self.dir = tempfile.TemporaryDirectory(prefix="contentlake-s3-")
        if kind == "s3":  # our embedded listener alone, with its own credentials
            self.key, self.secret, self.bucket = "CLEXTERNAL0000000001", "external-store-secret", "contentlake"
            self.proc = subprocess.Popen([where, self.dir.name, self.key, self.secret, "1024"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.port = int(self.proc.stdout.readline())
        else:  # s3rver: fixed credentials S3RVER/S3RVER
            self.key, self.secret, self.bucket = "S3RVER", "S3RVER", "contentlake"
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
            sock.close()
            self.proc = subprocess.Popen([os.path.join(where, "node_modules", ".bin", "s3rver"), "-d", self.dir.name,
                                          "-a", "127.0.0.1", "-p", str(self.port), "--configure-bucket", self.bucket],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            deadline = time.time() + 30
            while time.time() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.1)
        secret_file = os.path.join(self.dir.name, "secret")
        with open(secret_file, "w") as f:
            f.write(self.secret + "\n")
        self.settings = {"CONTENTLAKE_BLOBS_BACKEND": "s3",
                         "CONTENTLAKE_BLOBS_S3_ENDPOINT": "http://127.0.0.1:%d" % self.port,
                         "CONTENTLAKE_BLOBS_S3_BUCKET": self.bucket,
                         "CONTENTLAKE_BLOBS_S3_ACCESS_KEY_ID": self.key,
                         "CONTENTLAKE_BLOBS_S3_SECRET_ACCESS_KEY_FILE": secret_file}

    def stop(self):
        self.proc.stdin.close()
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.dir.cleanup()


# --- Several nodes behind HAProxy (issue 42) -------------------------------------------------------

LEASE_TTL_MS = 2000  # the clusters' lease time to live: a dead holder is taken over within 2.7 s


def haproxy_states(stats_socket, proxy, server=lambda name: True):
    """{server: state} (UP, DOWN, MAINT, ...) of `proxy`'s servers whose name `server` accepts, from
    HAProxy's stats socket; {} when it cannot be asked."""
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(stats_socket)
        s.sendall(b"show stat\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
    except OSError:
        return {}
    lines = data.decode().splitlines()
    if not lines:
        return {}
    head = lines[0].lstrip("# ").split(",")
    states = {}
    for line in lines[1:]:
        row = dict(zip(head, line.split(",")))
        if row.get("pxname") == proxy and server(row.get("svname", "")):
            states[row["svname"]] = row["status"].split()[0]
    return states


def children_of(parent):
    """The pids of the processes whose parent is `parent` (a postmaster's backends), from /proc."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    stat = f.read()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2:].split()[1]) == parent:
                pids.append(int(entry))
    return pids


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class StallingProxy:
    """A TCP listener on 127.0.0.1 that forwards every connection to PostgreSQL's socket; `stall`
    keeps the connections open and forwards nothing (a network that drops packets), `flow` again."""

    def __init__(self, unix_socket):
        self.target = unix_socket
        self.flowing = threading.Event()
        self.flowing.set()
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.closing = False
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while not self.closing:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.socket(socket.AF_UNIX)
            try:
                server.connect(self.target)
            except OSError:
                client.close()
                continue
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self.pump, args=(a, b), daemon=True).start()

    def pump(self, source, sink):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                self.flowing.wait()
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def stall(self):
        self.flowing.clear()

    def flow(self):
        self.flowing.set()

    def stop(self):
        self.closing = True
        self.flowing.set()
        self.listener.close()


class Node(Service):
    """A node of a `Cluster`: a plain `Service`, also when suites run through a cluster."""


class Cluster:
    """PostgreSQL, s3rver, two nodes and HAProxy; `stop` ends them all (call it in a `finally`).
    node2 reaches PostgreSQL through a `StallingProxy`, node1 directly."""

    def __init__(self, binary, source, s3rver_dir, settings=None, replicated=None, members=2, etcd_members=1):
        """`settings`: more environment for every node (a suite's own). `replicated` (by default
        CL_TEST_DATABASE=replicated): the database is three Patroni-managed PostgreSQL members
        (tests/client/replicated_db.py); node1 reaches the primary through HAProxy, node2 through a
        libpq multi-host URL with target_session_attrs=read-write. `members` and `etcd_members`: its size
        (the client suites: two members on one etcd; tests/client/failover.py: three and three)."""
        self.binary, self.source, self.s3rver_dir = binary, source, s3rver_dir
        if replicated is None:
            replicated = os.environ.get("CL_TEST_DATABASE") == "replicated"
        self.replicated = replicated
        self.members, self.etcd_members = members, etcd_members
        self.extra = dict(settings or {})
        self.dir = tempfile.mkdtemp(prefix="contentlake-cluster-")
        self.pg = self.store = self.haproxy = self.proxy = None
        self.nodes = []
        try:
            self.start()
        except BaseException:
            self.stop()
            raise

    def start(self):
        binary, source, s3rver_dir = self.binary, self.source, self.s3rver_dir
        database = {}
        if self.replicated:
            from replicated_db import ReplicatedPostgres
            self.pg = ReplicatedPostgres(source, self.members, self.etcd_members)
            url = self.pg.create_database("contentlake")
            node2_url = self.pg.multi_host_url("contentlake")
            database["CONTENTLAKE_STORAGE_POSTGRESQL_PASSWORD_FILE"] = self.pg.password_file
        else:
            self.pg = Postgres(source)
            url = self.pg.create_database("contentlake")
            socket_dir = re.search(r"host=(\S+)", url).group(1)
            pg_port = re.search(r"port=(\d+)", url).group(1)
            self.proxy = StallingProxy(os.path.join(socket_dir, ".s.PGSQL." + pg_port))
            node2_url = re.sub(r"host=\S+", "host=127.0.0.1", re.sub(r"port=\d+", "port=%d" % self.proxy.port, url))
        self.store = ExternalStore("s3rver", s3rver_dir)
        self.secrets = os.path.join(self.dir, "cluster.secrets")
        subprocess.run([binary, "secrets", "init", "--to", self.secrets], check=True, capture_output=True)
        settings = dict(self.store.settings, **database, **{
            "CONTENTLAKE_STORAGE_BACKEND": "postgresql",
            "CONTENTLAKE_STORAGE_POSTGRESQL_URL": url,
            "CONTENTLAKE_SECRETS_FILE": self.secrets,
            "CONTENTLAKE_CLUSTER_LEASE_TTL_MS": str(LEASE_TTL_MS),
            "CONTENTLAKE_CLUSTER_DRAIN_DELAY_MS": "3000",
        })
        # A suite's settings win, but for where the records and the blobs are and what is shared.
        shared = {k: v for k, v in settings.items() if k.startswith(("CONTENTLAKE_STORAGE_", "CONTENTLAKE_BLOBS_"))}
        settings = {**settings, **self.extra, **shared, "CONTENTLAKE_SECRETS_FILE": self.secrets}
        # On the replicated database node1 also reads from the replicas (HAProxy's replica port);
        # node2 has the plain multi-host URL alone.
        node1 = {"CONTENTLAKE_STORAGE_POSTGRESQL_REPLICA_URL": self.pg.replica_url("contentlake")} if self.replicated else {}
        self.nodes.append(Node(binary, source, dict(settings, CONTENTLAKE_NODE_NAME="node1", **node1)))
        self.nodes.append(Node(binary, source, dict(settings, CONTENTLAKE_NODE_NAME="node2",
                                                       CONTENTLAKE_STORAGE_POSTGRESQL_URL=node2_url)))
        self.start_haproxy()

    def start_haproxy(self):
        """The shipped configuration with loopback addresses, and a stats socket to watch it."""
        with open(os.path.join(self.source, "deploy", "cluster", "haproxy.cfg")) as f:
            cfg = f.read()
        self.port = free_port()
        self.stats = os.path.join(self.dir, "haproxy.sock")
        cfg = cfg.replace("bind :8080", "bind 127.0.0.1:%d" % self.port)
        cfg = cfg.replace("check port 9464 ", "check ")
        servers = "".join("    server %s 127.0.0.1:%d port %d\n" % ("node%d" % (i + 1), n.port, n.admin_port)
                          for i, n in enumerate(self.nodes))
        cfg, replaced = re.subn(r"(    server node\d+ [^\n]*\n)+", servers, cfg)
        assert replaced == 1, "deploy/cluster/haproxy.cfg: its server lines were not found"
        # The spare slots stay (in maintenance: `server_states` leaves them out) and the runtime API
        # moves to a socket of the test's own.
        cfg, replaced = re.subn(r"    stats socket [^\n]*\n", "", cfg)
        assert replaced == 1, "deploy/cluster/haproxy.cfg: its stats socket line was not found"
        cfg = cfg.replace("global\n", "global\n    stats socket %s level admin\n" % self.stats, 1)
        path = os.path.join(self.dir, "haproxy.cfg")
        with open(path, "w") as f:
            f.write(cfg)
        self.haproxy_log = open(os.path.join(self.dir, "haproxy.log"), "w")
        self.haproxy = subprocess.Popen(["haproxy", "-db", "-f", path], stdout=self.haproxy_log,
                                        stderr=subprocess.STDOUT)
        try:
            wait_until("HAProxy sees both nodes up", lambda: self.server_states() == {"node1": "UP", "node2": "UP"})
        except AssertionError:
            self.haproxy_log.flush()
            with open(self.haproxy_log.name) as f:
                print("haproxy said:\n" + f.read()[-3000:] + "\nstates: %r" % self.server_states())
            raise

    def server_states(self):
        """Each node's state as HAProxy sees it (UP, DOWN, ...), from its stats socket."""
        return haproxy_states(self.stats, "contentlake_nodes", lambda name: name.startswith("node"))

    def token(self, sub="u_alice", scopes="content-lake.read content-lake.write webhooks.read webhooks.write",
              tenant="t_cluster", ttl=None, client_id=None):
        """A token from the cluster's secrets file; each node's log is checked for it (keep_log)."""
        args = [self.binary, "token", "--secrets-file", self.secrets, "--tenant", tenant, "--sub", sub,
                "--scopes", scopes]
        if client_id:
            args += ["--client-id", client_id]
        if ttl:
            args += ["--ttl", str(ttl)]
        token = subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip()
        for n in self.nodes:
            n.tokens.append(token)
        return token

    def request(self, method, path, token, body=None, headers=None, port=None):
        """(status, headers, body) through HAProxy, or straight to a node's `port`."""
        h = dict(headers or {})
        h["Authorization"] = "Bearer " + token
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        return fetch("http://127.0.0.1:%d%s" % (port or self.port, path), method, data, h)

    def lease_holder(self, lease):
        """The node holding `lease` (by its /metrics), or None."""
        for node in self.nodes:
            if node.proc.poll() is not None:
                continue
            try:
                body = fetch("http://127.0.0.1:%d/metrics" % node.admin_port)[2].decode()
            except OSError:
                continue
            if 'contentlake_lease_held{lease="%s"} 1' % lease in body:
                return node
        return None

    def stop(self):
        for node in self.nodes:
            try:
                node.stop()
            except Exception as e:  # noqa: BLE001 - stop the rest whatever happened
                print("stopping a node: %s" % e)
                if node.proc.poll() is None:
                    node.proc.kill()
        if self.haproxy and self.haproxy.poll() is None:
            self.haproxy.terminate()
            self.haproxy.wait(timeout=30)
        if self.store:
            self.store.stop()
        if self.proxy:
            self.proxy.stop()
        if self.pg:
            self.pg.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def tenant_of(token):
    """The `tenant_id` claim of a JWT (read, not verified: the client's own bookkeeping)."""
    import base64
    try:
        payload = token.split(".")[1]
        return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))).get("tenant_id")
    except (IndexError, ValueError):
        return None


class ClusterService(Service):
    """What a client suite's `Service` is when CL_TEST_CLUSTER names s3rver's folder (the ctest
    `*_cluster` variants): the same suite, through HAProxy against two nodes on one PostgreSQL and
    s3rver. The client keeps the last Content-Lake-Position it was answered and sends it with every
    request (what a client that reads its own writes on several nodes does, docs/api.md); `kill` and
    `restart` act on both nodes; the embedded object store does not run (blobs are on s3rver)."""

    def __init__(self, binary, source_dir, settings=None, data_dir=None):  # noqa: super().__init__ not called
        self.binary, self.source_dir = binary, source_dir
        self.cluster = Cluster(binary, source_dir, os.environ["CL_TEST_CLUSTER"], settings)
        node = self.cluster.nodes[0]
        self.port, self.admin_port, self.blobs_port = self.cluster.port, node.admin_port, None
        self.dir, self.env = node.dir, node.env
        self.tokens = []
        self.positions = {}  # by tenant: a position is sealed for its tenant

    @property
    def log(self):
        return [line for n in self.cluster.nodes for line in n.log]

    @property
    def access_log(self):
        return [line for n in self.cluster.nodes for line in n.access_log]

    def token(self, sub="u_client", tenant="t_client",
              scopes="content-lake.read content-lake.write contracts.read contracts.write", ttl=None, client_id=None):
        self.tokens.append(self.cluster.token(sub, scopes, tenant, ttl, client_id))
        return self.tokens[-1]

    def request(self, method, path, token=None, body=None, headers=None):
        h = dict(headers or {})
        tenant = tenant_of(token) if token else None
        if tenant in self.positions and not any(k.lower() == "content-lake-position" for k in h):
            h["Content-Lake-Position"] = self.positions[tenant]
        status, got, data = super().request(method, path, token, body, h)
        position = got.get("Content-Lake-Position")
        if position and tenant:
            self.positions[tenant] = position
        return status, got, data

    def kill(self):
        for n in self.cluster.nodes:
            n.kill()

    def restart(self, same_port=False):
        for n in self.cluster.nodes:
            n.restart(same_port=True)  # the balancer names their ports
        wait_until("HAProxy sees both nodes up", lambda: set(self.cluster.server_states().values()) == {"UP"},
                   timeout=60)

    def shutdown(self):
        for n in self.cluster.nodes:
            n.shutdown()

    def stop(self):
        self.cluster.stop()

    def keep_log(self):
        for n in self.cluster.nodes:
            n.keep_log()

