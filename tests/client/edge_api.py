"""The edge cache end to end (issue 29, part 3): real Varnish (deploy/edge/contentlake.vcl, vmod_xkey)
and the nginx TLS front (deploy/edge/run) in front of `contentlake serve`, whose purger follows the
change log. A second read is a hit; a PATCH, a contract version and a revoked grant reach readers
through the edge within a second; two tokens never share an entry; internal headers never reach
clients; purges need the secret and never pass the TLS front; the feed's long poll and event stream
pass unbuffered; the purger's lag is published.

    edge_api.py CONTENTLAKE_BINARY SOURCE_DIR
"""
import http.client
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Service, fetch, wait_until  # noqa: E402

SCOPES = "content-lake.read content-lake.write contracts.read contracts.write"
WITHIN = 1.0  # seconds: how soon a change must show through the edge


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ok(status, body, want=200):
    assert status == want, "status %d (wanted %d): %s" % (status, want, body[:400])
    return json.loads(body) if body else None


class Edge:
    """deploy/edge/run: Varnish on `http_port`, nginx TLS on `tls_port`, until stop()."""

    def __init__(self, source, backend_port, http_port, tls_port, secret_file, admin_port):
        self.workdir = tempfile.TemporaryDirectory(prefix="contentlake-edge-")
        self.http_port, self.tls_port = http_port, tls_port
        self.proc = subprocess.Popen(
            [os.path.join(source, "deploy/edge/run"), "--backend", "127.0.0.1:%d" % backend_port, "--http-port",
             str(http_port), "--tls-port", str(tls_port), "--secret-file", secret_file, "--workdir", self.workdir.name,
             "--admin", "127.0.0.1:%d" % admin_port],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.output = []
        for line in self.proc.stdout:
            self.output.append(line)
            if line.startswith("edge ready"):
                break
        else:
            raise RuntimeError("the edge did not start:\n" + "".join(self.output))
        threading.Thread(target=lambda: [self.output.append(x) for x in self.proc.stdout], daemon=True).start()
        self.tls = ssl.create_default_context(cafile=os.path.join(self.workdir.name, "tls.crt"))

    def get(self, path, token=None, headers=None):
        h = dict(headers or {})
        if token:
            h["Authorization"] = "Bearer " + token
        return fetch("http://127.0.0.1:%d%s" % (self.http_port, path), "GET", None, h)

    def request(self, method, path, headers=None):
        return fetch("http://127.0.0.1:%d%s" % (self.http_port, path), method, None, headers or {})

    def tls_connection(self, timeout=30):
        return http.client.HTTPSConnection("localhost", self.tls_port, context=self.tls, timeout=timeout)

    def stop(self):
        os.killpg(self.proc.pid, 15)
        self.proc.wait(timeout=30)
        self.workdir.cleanup()


def metric(svc, name):
    _, _, body = fetch("http://127.0.0.1:%d/metrics" % svc.admin_port)
    m = re.search(r"^%s(?:\{[^}]*\})? ([0-9.e+-]+)$" % re.escape(name), body.decode(), re.M)
    return float(m.group(1)) if m else None


def cached(edge, path, token):
    """Reads until the edge answers from its cache: a purge an earlier scenario's change sent again a
    second later (the purger repeats every purge) may take an entry once more."""
    wait_until("a cache hit on " + path, lambda: edge.get(path, token)[1]["X-Cache"] == "HIT")


def resource(svc, token, title, work=None):
    body = {"title": title, "type": "CHAPTER", "language": "en",
            "content": {"format": "cl.content/1", "blocks": [
                {"type": "paragraph", "key": "p1", "children": [{"type": "span", "text": title}]}]}}
    if work:
        body["work_id"] = work
    return ok(*svc.request("POST", "/v0/content-lake/resources", token, body)[::2], want=201)


def hits_and_headers(svc, edge, alice, res):
    path = "/v0/content-lake/resources/" + res["id"]
    first = edge.get(path, alice)
    second = edge.get(path, alice)
    assert first[0] == second[0] == 200, (first[0], second[0])
    assert first[1]["X-Cache"] == "MISS" and second[1]["X-Cache"] == "HIT", (first[1], second[1])
    assert first[2] == second[2] and first[1]["ETag"] == second[1]["ETag"]
    assert second[1].get("X-Request-Id") != first[1].get("X-Request-Id"), "a hit repeated the filling request's id"
    for h in (first[1], second[1]):
        lowered = {k.lower() for k in h}
        assert not lowered & {"xkey", "surrogate-key", "surrogate-control"}, h
    # The service itself names the keys (the edge strips them).
    _, direct, _ = svc.request("GET", path, alice)
    assert res["id"] in direct["xkey"].split() and "t_edge" in direct["xkey"].split()
    assert re.fullmatch(r"max-age=\d+", direct["Surrogate-Control"]), direct["Surrogate-Control"]
    # A Work and a Resource's entities are kept too; the feed and lists are not.
    work_path = "/v0/content-lake/works/" + res["work_id"]
    assert [edge.get(work_path, alice)[1]["X-Cache"] for _ in range(2)] == ["MISS", "HIT"]
    entities = path + "/entities"
    assert [edge.get(entities, alice)[1]["X-Cache"] for _ in range(2)] == ["MISS", "HIT"]
    listing = "/v0/content-lake/resources?work_id=" + res["work_id"]
    assert [edge.get(listing, alice)[1]["X-Cache"] for _ in range(2)] == ["MISS", "MISS"]
    # Over TLS through nginx, the same.
    conn = edge.tls_connection()
    got = []
    for _ in range(2):
        conn.request("GET", path, headers={"Authorization": "Bearer " + alice})
        r = conn.getresponse()
        r.read()
        got.append((r.status, r.getheader("X-Cache"), r.getheader("xkey")))
    conn.close()
    assert got == [(200, "MISS", None), (200, "HIT", None)], got
    print("edge: a second read is a hit (Resource, entities, Work; http and TLS); lists pass; internal headers stripped")


def tokens_never_share(svc, edge, alice, res):
    path = "/v0/content-lake/resources/" + res["id"]
    assert edge.get(path, alice)[1]["X-Cache"] == "HIT"
    # Another principal without a grant is refused, whatever alice's entry holds.
    bob = svc.token(sub="u_bob", tenant="t_edge", scopes=SCOPES)
    for _ in range(2):
        status, headers, body = edge.get(path, bob)
        assert status == 403 and json.loads(body)["error"]["reason"] == "ACCESS_DENIED", (status, body[:200])
        assert headers["X-Cache"] == "MISS"
    # Another token of the same principal gets its own entry; so does another tenant.
    alice2 = svc.token(sub="u_alice", tenant="t_edge", scopes=SCOPES, ttl=1800)
    assert alice2 != alice
    assert [edge.get(path, alice2)[1]["X-Cache"] for _ in range(2)] == ["MISS", "HIT"]
    mallory = svc.token(sub="u_alice", tenant="t_other", scopes=SCOPES)
    status, headers, _ = edge.get(path, mallory)
    assert status == 403 and headers["X-Cache"] == "MISS", status
    # No token at all.
    status, headers, _ = edge.get(path)
    assert status == 401 and headers["X-Cache"] == "MISS", status
    print("edge: two tokens never share an entry (another principal, another token, another tenant, none)")


def fresh_after_patch(svc, edge, alice, res):
    path = "/v0/content-lake/resources/" + res["id"]
    assert edge.get(path, alice)[1]["X-Cache"] == "MISS"
    cached = edge.get(path, alice)
    assert cached[1]["X-Cache"] == "HIT"
    current = json.loads(cached[2])
    patched = ok(*svc.request("PATCH", path, alice, {"title": "Patched", "update_token": current["update_token"]},
                              {"Content-Type": "application/merge-patch+json"})[::2])
    written = time.monotonic()
    wait_until("the new hash through the edge", lambda: json.loads(edge.get(path, alice)[2])["hash"] == patched["hash"])
    took = time.monotonic() - written
    assert took < WITHIN, "the patched Resource showed through the edge after %.3f s" % took
    assert [edge.get(path, alice)[1]["X-Cache"] for _ in range(2)][-1] == "HIT", "the fresh answer is cached again"
    print("edge: after a PATCH the next reads show the new hash within %.3f s (soft purge)" % took)
    return took


def fresh_after_contract(svc, edge, alice, res):
    path = "/v0/content-lake/resources/" + res["id"]
    contract = ok(*svc.request("POST", "/v0/contracts", alice, {
        "title": "Rights", "status": "ACTIVE", "valid_from": "2026-01-01T00:00:00Z", "work_ids": [res["work_id"]],
        "territorial_rights": [{"worldwide": True, "status": "PERMITTED"}],
        "usage_terms": [{"usage_type": "ACCESS", "status": "PERMITTED"}]})[::2], want=201)

    def versions():
        return [c["version"] for c in json.loads(edge.get(path, alice)[2])["rights"]["contracts"]]
    wait_until("the contract in the edge's answer", lambda: versions() == [1])
    cached(edge, path, alice)
    assert versions() == [1]
    terms = {k: v for k, v in contract.items() if k in (
        "title", "status", "valid_from", "work_ids", "territorial_rights", "usage_terms")}
    terms["usage_terms"] = terms["usage_terms"] + [{"usage_type": "AI_RETRIEVAL", "status": "PROHIBITED"}]
    terms["update_token"] = contract["update_token"]
    ok(*svc.request("POST", "/v0/contracts/%s/versions" % contract["id"], alice, terms)[::2], want=201)
    written = time.monotonic()
    wait_until("version 2 through the edge", lambda: versions() == [2])
    took = time.monotonic() - written
    assert took < WITHIN, "the new contract version showed through the edge after %.3f s" % took
    print("edge: after a contract version the Resource's rights are fresh within %.3f s (hard purge)" % took)
    return took


def rights_headers_per_caller(svc, edge, alice, res):
    """The rights headers and the ODRL policy through the edge: each caller's own, fresh after a
    contract version, never another caller's (the policy names its caller)."""
    path = "/v0/content-lake/resources/" + res["id"]
    terms = {"title": "AI", "status": "ACTIVE", "valid_from": "2026-01-01T00:00:00Z", "work_ids": [res["work_id"]],
             "territorial_rights": [{"worldwide": True, "status": "PERMITTED"}],
             "usage_terms": [{"usage_type": "AI_RETRIEVAL", "status": "PERMITTED"},
                             {"usage_type": "AI_TRAINING", "status": "PERMITTED"}]}
    contract = ok(*svc.request("POST", "/v0/contracts", alice, terms)[::2], want=201)
    bob = svc.token(sub="u_bob", tenant="t_edge", scopes=SCOPES)
    ok(*svc.request("PUT", path + "/access/u_bob", alice, {"role": "reader"})[::2], want=201)

    def usage(token):
        return edge.get(path, token)[1].get("Content-Usage")
    wait_until("the contract's headers through the edge", lambda: usage(alice) == "train-ai=y, search=y")
    cached(edge, path, alice)
    first = edge.get(path, bob)
    assert first[1]["X-Cache"] == "MISS" and first[1]["Content-Usage"] == "train-ai=y, search=y", first[1]
    assert first[1]["tdm-reservation"] == "0" and first[1]["tdm-policy"] == path + "/rights/odrl", first[1]
    # The policy names its caller: alice's cached one is never bob's.
    policy = path + "/rights/odrl"
    cached(edge, policy, alice)
    mine, his = json.loads(edge.get(policy, alice)[2]), json.loads(edge.get(policy, bob)[2])
    assert mine["assignee"] == "cl://t_edge/principal/u_alice" and his["assignee"] == "cl://t_edge/principal/u_bob", (mine, his)
    # A new version prohibiting training: every caller's next reads say so.
    terms["usage_terms"][1]["status"] = "PROHIBITED"
    terms["update_token"] = contract["update_token"]
    ok(*svc.request("POST", "/v0/contracts/%s/versions" % contract["id"], alice, terms)[::2], want=201)
    written = time.monotonic()
    wait_until("bob's headers after the version", lambda: usage(bob) == "train-ai=n, search=y")
    wait_until("alice's headers after the version", lambda: usage(alice) == "train-ai=n, search=y")
    took = time.monotonic() - written
    assert took < WITHIN, "the new rights headers showed through the edge after %.3f s" % took
    assert edge.get(path, bob)[1]["tdm-reservation"] == "1"
    # A caller with no grant: refused, no rights travel, whatever the entries hold.
    carol = svc.token(sub="u_carol", tenant="t_edge", scopes=SCOPES)
    status, headers, _ = edge.get(path, carol)
    assert status == 403 and "Content-Usage" not in headers and "tdm-policy" not in headers, (status, headers)
    print("edge: rights headers and ODRL policies are each caller's own and fresh within %.3f s of a contract version" % took)


def revoked_after_grant(svc, edge, alice, res):
    path = "/v0/content-lake/resources/" + res["id"]
    carol = svc.token(sub="u_carol", tenant="t_edge", scopes=SCOPES)
    ok(*svc.request("PUT", path + "/access/u_carol", alice, {"role": "reader"})[::2], want=201)
    wait_until("carol's grant", lambda: edge.get(path, carol)[0] == 200)
    cached(edge, path, carol)
    status, _, _ = svc.request("DELETE", path + "/access/u_carol", alice)
    assert status == 204, status
    revoked = time.monotonic()
    wait_until("carol refused through the edge", lambda: edge.get(path, carol)[0] == 403)
    took = time.monotonic() - revoked
    assert took < WITHIN, "the revoked reader still read through the edge for %.3f s" % took
    print("edge: after a grant is revoked the reader gets 403 through the edge within %.3f s" % took)
    return took


def fresh_after_policy(svc, edge, alice, res, policy_file):
    """The platform policy is outside the change log: its change purges everything."""
    path = "/v0/content-lake/resources/" + res["id"]
    cached(edge, path, alice)
    before = json.loads(edge.get(path, alice)[2])["rights"]["policy_version"]
    cursor = ok(*svc.request("GET", "/v0/content-lake/changes?types=resource.rights_changed", alice)[::2])["next_cursor"]
    with open(policy_file) as f:
        policy = json.load(f)
    policy["version"] = "edge-test-2"
    with open(policy_file + ".tmp", "w") as f:
        json.dump(policy, f)
    os.replace(policy_file + ".tmp", policy_file)
    changed = time.monotonic()
    wait_until("the new policy through the edge",
               lambda: json.loads(edge.get(path, alice)[2])["rights"]["policy_version"] == "edge-test-2")
    took = time.monotonic() - changed
    # The service looks at the file once a second; the purge follows at once.
    assert before != "edge-test-2" and took < 1 + WITHIN, took
    # The change feed says so too: resource.rights_changed for each Resource the reader reads.
    events = wait_until("the policy's rights changes in the feed", lambda: ok(*svc.request(
        "GET", "/v0/content-lake/changes?types=resource.rights_changed&since=" + cursor, alice)[::2])["events"])
    mine = [e for e in events if e["resource_id"] == res["id"]]
    assert len(mine) == 1 and mine[0]["policy_version"] == "edge-test-2" and "contract_id" not in mine[0], events
    assert len(events) == len({e["resource_id"] for e in events}) >= 5, events  # every Resource alice reads, once
    print("edge: a platform policy change purges everything: fresh rights %.3f s after the file changed" % took)


def purges_guarded(svc, edge, alice, res):
    path = "/v0/content-lake/resources/" + res["id"]
    cached(edge, path, alice)
    for secret in (None, "wrong"):
        headers = {"xkey-purge": res["id"]}
        if secret:
            headers["X-Purge-Secret"] = secret
        status, _, _ = edge.request("PURGE", "/", headers)
        assert status == 403, status
    assert edge.get(path, alice)[1]["X-Cache"] == "HIT", "a refused purge removed an entry"
    conn = edge.tls_connection()
    with open(os.path.join(svc.dir.name, "identity/edge-purge-secret")) as f:
        secret = f.read().strip()
    conn.request("PURGE", "/", headers={"xkey-purge": res["id"], "X-Purge-Secret": secret})
    r = conn.getresponse()
    r.read()
    conn.close()
    assert r.status == 405, r.status
    assert edge.get(path, alice)[1]["X-Cache"] == "HIT", "a purge passed the TLS front"
    print("edge: purges without the secret are refused (403); the TLS front refuses PURGE (405)")


def reference_through_edge(svc, edge):
    """The API reference through the edge as served (issue 70): the page with its own policy, whose
    nonce is the one on its script tag; the script byte for byte; the tag's 304."""
    for _ in range(2):  # a second read too: if the edge keeps the page, header and body stay together
        status, got, page = edge.get("/v0/docs", headers={"Accept": "text/html"})
        assert status == 200, status
        assert got["Content-Type"] == "text/html; charset=utf-8", got
        nonce = re.search(r"'nonce-([A-Za-z0-9_-]+)'", got["Content-Security-Policy"]).group(1)
        assert ('<script src="/v0/docs/reference.js" nonce="%s">' % nonce).encode() in page, page[:300]
    status, got, script = edge.get("/v0/docs/reference.js")
    _, _, direct = svc.request("GET", "/v0/docs/reference.js")
    assert status == 200 and script == direct, (status, len(script), len(direct))
    assert edge.get("/v0/docs/reference.js", headers={"If-None-Match": got["ETag"]})[0] == 304
    print("edge: the API reference and its script pass unchanged")


def feed_unbuffered(svc, edge, alice):
    start = ok(*svc.request("GET", "/v0/content-lake/changes?types=work.created", alice)[::2])["next_cursor"]
    # A long poll through Varnish answers as soon as the change is written.
    answer = {}

    def poll():
        status, _, body = edge.get("/v0/content-lake/changes?wait=20&types=work.created&since=" + start, alice)
        answer["at"] = time.monotonic()
        answer["status"], answer["body"] = status, body
    t = threading.Thread(target=poll)
    t.start()
    wait_until("the poll waits at the service", lambda: metric(svc, "contentlake_changes_waiting_polls") == 1)
    work = ok(*svc.request("POST", "/v0/content-lake/works", alice, {"title": "polled"})[::2], want=201)["id"]
    written = time.monotonic()
    t.join(30)
    assert answer["status"] == 200 and [e["work_id"] for e in json.loads(answer["body"])["events"]] == [work]
    poll_took = answer["at"] - written
    assert poll_took < WITHIN, poll_took
    # The event stream through nginx (TLS) and Varnish: each event as it happens.
    conn = edge.tls_connection(timeout=20)
    conn.request("GET", "/v0/content-lake/changes?types=work.created&since=" + start,
                 headers={"Authorization": "Bearer " + alice, "Accept": "text/event-stream"})
    r = conn.getresponse()
    assert r.status == 200 and r.getheader("Content-Type").startswith("text/event-stream")
    seen = []

    def next_event():
        data = None
        while True:
            line = r.fp.readline().decode()
            if line.startswith("data:"):
                data = json.loads(line[5:])
            elif line in ("\n", "\r\n") and data is not None:
                return data
    assert next_event()["work_id"] == work  # the one already written
    second = ok(*svc.request("POST", "/v0/content-lake/works", alice, {"title": "streamed"})[::2], want=201)["id"]
    written = time.monotonic()
    seen.append(next_event())
    stream_took = time.monotonic() - written
    conn.close()
    assert seen[0]["work_id"] == second and stream_took < WITHIN, (seen, stream_took)
    print("edge: the feed passes unbuffered: a long poll answered %.3f s after the write, an SSE event over TLS "
          "%.3f s after it" % (poll_took, stream_took))


def main():
    binary, source = sys.argv[1], sys.argv[2]
    varnish_port, tls_port = free_port(), free_port()
    scratch = tempfile.TemporaryDirectory(prefix="contentlake-edge-policy-")
    policy_file = os.path.join(scratch.name, "policy.json")
    with open(os.path.join(source, "config/policy.json")) as f, open(policy_file, "w") as out:
        out.write(f.read())
    svc = Service(binary, source, {"CONTENTLAKE_EDGE_PURGE_URLS": "http://127.0.0.1:%d/" % varnish_port,
                                   "CONTENTLAKE_RIGHTS_POLICY_FILE": policy_file})
    edge = None
    try:
        edge = Edge(source, svc.port, varnish_port, tls_port, os.path.join(svc.dir.name, "identity/edge-purge-secret"),
                    svc.admin_port)
        # "edge ready" means the service's purger reaches this edge (the README's walk-through pastes
        # its next block right after it): its start purge, failed while the edge was down, went through.
        assert metric(svc, "contentlake_edge_purge_failing_edges") == 0, edge.output
        # The purger reaches the edge before reads are timed: its purge of everything at start and that
        # purge's repeat a second later (which would otherwise empty the cache under the first scenarios).
        wait_until("the purger's start purge and its repeat", lambda: (metric(svc, "contentlake_edge_purges_total") or 0)
                   - (metric(svc, "contentlake_edge_purge_failures_total") or 0) >= 2, timeout=30)
        alice = svc.token(sub="u_alice", tenant="t_edge", scopes=SCOPES)
        work = ok(*svc.request("POST", "/v0/content-lake/works", alice, {"title": "Tides"})[::2], want=201)["id"]
        # One Resource per scenario: a purge (and its repeat a second later) touches only its own.
        res = resource(svc, alice, "Tide", work)
        hits_and_headers(svc, edge, alice, res)
        tokens_never_share(svc, edge, alice, res)
        fresh_after_patch(svc, edge, alice, resource(svc, alice, "Patched", work))
        other_work = ok(*svc.request("POST", "/v0/content-lake/works", alice, {"title": "Licensed"})[::2], want=201)["id"]
        fresh_after_contract(svc, edge, alice, resource(svc, alice, "Licensed", other_work))
        revoked_after_grant(svc, edge, alice, resource(svc, alice, "Shared", work))
        ai_work = ok(*svc.request("POST", "/v0/content-lake/works", alice, {"title": "AI"})[::2], want=201)["id"]
        rights_headers_per_caller(svc, edge, alice, resource(svc, alice, "Trained", ai_work))
        purges_guarded(svc, edge, alice, resource(svc, alice, "Guarded", work))
        fresh_after_policy(svc, edge, alice, resource(svc, alice, "Policed", other_work), policy_file)
        feed_unbuffered(svc, edge, alice)
        reference_through_edge(svc, edge)
        wait_until("no purge lag", lambda: metric(svc, "contentlake_edge_purge_lag_seconds") == 0)
        secret = open(os.path.join(svc.dir.name, "identity/edge-purge-secret")).read().strip()
        svc.shutdown()
        assert not any(secret in line for line in svc.log), "the purge secret was logged"
        assert not any("eyJ" in line for line in svc.log), "a token was logged"
        print("edge: the purge secret and tokens never appear in the service's log")
    finally:
        if edge:
            edge.stop()
        svc.stop()
        scratch.cleanup()


if __name__ == "__main__":
    main()
