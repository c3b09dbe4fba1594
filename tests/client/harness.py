"""Runs `contentlake serve` as a user would (a real process on ephemeral ports, a temporary data
dir, development identity) and talks to it over HTTP, for tests written against real client
libraries (markdown-it, jsonschema). Standard library only."""

import json
import os
import re
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


def fetch(url, method="GET", data=None, headers=None):
    """(status, headers, body bytes) of one request to any URL (e.g. a presigned one), no redirects."""
    req = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    try:
        with _opener.open(req, timeout=60) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


class Service:
    """`contentlake serve` in a temporary data dir; stop() (or the with-block) ends it."""

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
        """Stops the service (its whole log is then in `log`) and removes its data dir."""
        self.shutdown()
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
                # orphan spinning on a CPU slows every later test).
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
        pids = [postmaster]
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open("/proc/%s/stat" % entry) as f:
                        stat = f.read()
                except OSError:
                    continue
                if int(stat[stat.rindex(")") + 2:].split()[1]) == postmaster:
                    pids.append(int(entry))
        return pids

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
