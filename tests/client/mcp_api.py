"""The MCP endpoint end to end (issue 30). The official TypeScript SDK (tests/client/mcp_client.cjs)
connects, lists the tools, searches and reads; content whose rights do not permit AI_RETRIEVAL by
MCP stays out (no contract, a prohibiting contract, a prohibition of the MCP method only), as do a
Resource without a grant and another tenant's; attribution arrives when the rights require it; a
client keeps working across a restart of the service (no session to lose). Then the protocol from
outside with raw HTTP: 401 with resource_metadata and the metadata document, the scope, Origin,
MCP-Protocol-Version, bad JSON, batches, notifications, unknown methods and tools, GET and DELETE.

The MCP Inspector's CLI mode lists the tools and calls one permitted and one refused read. The MCP
conformance suite (server mode) runs every active scenario: the ones this server can pass pass, and
every other fails only because it asks for the suite's own test tools or a capability this server
does not declare.

    mcp_api.py CONTENTLAKE_BINARY SOURCE_DIR SDK_NODE_MODULES INSPECTOR_NODE_MODULES CONFORMANCE_NODE_MODULES
"""
import glob
import http.client
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Service, fetch  # noqa: E402

SCOPES = "content-lake.read content-lake.write contracts.read contracts.write"
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def ok(status, body, want=200):
    assert status == want, "status %d (wanted %d): %s" % (status, want, body[:400])
    return json.loads(body) if body else None


class World:
    def __init__(self, svc):
        self.svc = svc
        self.alice = svc.token(sub="u_alice", tenant="t_mcp", scopes=SCOPES)
        self.bob = svc.token(sub="u_bob", tenant="t_mcp", scopes="content-lake.read")
        self.mallory = svc.token(sub="u_alice", tenant="t_other", scopes=SCOPES)

    def work(self, title):
        return ok(*self.svc.request("POST", "/v0/content-lake/works", self.alice, {"title": title})[::2], want=201)["id"]

    def resource(self, work, title, text):
        return ok(*self.svc.request("POST", "/v0/content-lake/resources", self.alice, {
            "title": title, "type": "CHAPTER", "language": "en", "work_id": work,
            "content": {"format": "cl.content/1", "blocks": [
                {"type": "paragraph", "key": "p1", "children": [{"type": "span", "text": text}]}]}})[::2], want=201)["id"]

    def contract(self, work, usage_terms):
        ok(*self.svc.request("POST", "/v0/contracts", self.alice, {
            "title": "Rights", "status": "ACTIVE", "valid_from": "2026-01-01T00:00:00Z", "work_ids": [work],
            "territorial_rights": [{"worldwide": True, "status": "PERMITTED"}],
            "usage_terms": usage_terms})[::2], want=201)


def run_sdk(svc, modules, source, sessions, on_waiting=None):
    """Runs the SDK client over `sessions`; its per-session results."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"url": "http://127.0.0.1:%d/v0/mcp" % svc.port, "sessions": sessions}, f)
        script = f.name
    proc = subprocess.Popen(["node", os.path.join(source, "tests/client/mcp_client.cjs"), script],
                            stdout=subprocess.PIPE, text=True, env=dict(os.environ, NODE_PATH=modules))
    out = []
    for line in proc.stdout:
        got = json.loads(line)
        if "waiting" in got:
            on_waiting(got["waiting"])
        else:
            out.append(got)
    assert proc.wait(timeout=60) == 0, "the SDK client failed"
    os.unlink(script)
    return out


def structured(result):
    assert "thrown" not in result, result
    return result["structuredContent"]


def sdk_checks(svc, modules, source):
    w = World(svc)
    licensed = w.work("Licensed")
    w.contract(licensed, [{"usage_type": "ACCESS", "status": "PERMITTED"},
                          {"usage_type": "AI_RETRIEVAL", "status": "PERMITTED"}])
    amber = w.resource(licensed, "Amber", "The tangerine tide turns at Brest.")
    unlicensed = w.work("Unlicensed")
    plain = w.resource(unlicensed, "Plain", "No contract covers this tangerine.")
    prohibited_work = w.work("Prohibited")
    w.contract(prohibited_work, [{"usage_type": "ACCESS", "status": "PERMITTED"},
                                 {"usage_type": "AI_RETRIEVAL", "status": "PROHIBITED"}])
    cobalt = w.resource(prohibited_work, "Cobalt", "A prohibited tangerine sentence.")
    not_by_mcp = w.work("Not by MCP")
    w.contract(not_by_mcp, [{"usage_type": "ACCESS", "status": "PERMITTED"},
                            {"usage_type": "AI_RETRIEVAL", "status": "PERMITTED"},
                            {"usage_type": "AI_RETRIEVAL", "method": "MCP", "status": "PROHIBITED"}])
    streamed = w.resource(not_by_mcp, "Streamed", "Retrieval allowed, but not by MCP: tangerine.")
    restart_marker = os.path.join(tempfile.mkdtemp(prefix="contentlake-mcp-"), "restarted")

    def restart(marker):
        svc.shutdown()
        svc.restart(same_port=True)
        open(marker, "w").close()

    alice, bob, mallory = run_sdk(svc, modules, source, [
        {"token": w.alice, "list": True, "calls": [
            {"tool": "read_resource", "args": {"id": amber, "format": "markdown"}},
            {"tool": "read_resource", "args": {"id": plain}},
            {"tool": "read_resource", "args": {"id": cobalt}},
            {"tool": "read_resource", "args": {"id": streamed}},
            {"tool": "search", "args": {"query": "tangerine"}},
            {"tool": "list_works", "args": {"page_size": 10}},
            {"tool": "no_such_tool", "args": {}},
            {"tool": "read_resource", "args": {"id": amber, "colour": "red"}},
            {"restart": restart_marker},
            {"tool": "read_resource", "args": {"id": amber}},
            {"tool": "read_resource", "args": {"id": amber, "fields": "id,title"}},
        ]},
        {"token": w.bob, "calls": [{"tool": "read_resource", "args": {"id": amber}}]},
        {"token": w.mallory, "calls": [{"tool": "read_resource", "args": {"id": amber}},
                                       {"tool": "search", "args": {"query": "tangerine"}}]},
    ], on_waiting=restart)

    assert alice["connected"] and alice["protocol"] == "2025-06-18", alice
    assert alice["session"] is None, "the endpoint is stateless: no Mcp-Session-Id"
    tools = {t["name"]: t for t in alice["tools"]}
    assert set(tools) == {"search", "read_resource", "list_works"}, tools.keys()
    assert all(t["inputSchema"]["type"] == "object" and t["outputSchema"]["type"] == "object" for t in tools.values())
    print("mcp: the SDK connects (2025-06-18, stateless) and lists search, read_resource, list_works with schemas")

    r = alice["results"]
    got = structured(r[0])
    assert r[0]["isError"] is False and got["resource"]["id"] == amber
    assert "tangerine tide" in got["markdown"] and "tangerine tide" in r[0]["content"][0]["text"]
    assert amber in got["attribution"] and "Attribution:" in r[0]["content"][0]["text"], got
    masked = structured(r[9])["resource"]
    assert set(masked) >= {"id", "title", "rights"} and "content" not in masked, masked  # a field mask, encoded and read
    print("mcp: read_resource answers Markdown with the attribution the rights require")

    def refused(result, reason):
        assert result["isError"] is True, result
        assert structured(result)["error"]["reason"] == reason, result
        assert "tangerine" not in json.dumps(result), "refused content leaked: %s" % result
    refused(r[1], "USAGE_PROHIBITED")  # no contract: no explicit permission
    refused(r[2], "USAGE_PROHIBITED")  # a contract prohibits AI_RETRIEVAL
    refused(r[3], "USAGE_PROHIBITED")  # AI_RETRIEVAL permitted, by MCP prohibited
    print("mcp: no contract, a prohibiting contract and an MCP-only prohibition each keep the content out")

    hits = structured(r[4])["hits"]
    assert [h["id"] for h in hits] == [amber], hits  # content words find only what may be used
    assert "tangerine" in hits[0]["snippet"].lower()
    assert {w_["title"] for w_ in structured(r[5])["works"]} >= {"Licensed", "Unlicensed", "Prohibited", "Not by MCP"}
    print("mcp: search finds by content only what AI_RETRIEVAL by MCP may use; list_works pages the Works")

    assert r[6]["thrown"]["code"] == -32602 and "no_such_tool" in r[6]["thrown"]["message"], r[6]
    assert r[7]["thrown"]["code"] == -32602 and "colour" in r[7]["thrown"]["message"], r[7]
    assert structured(r[8])["resource"]["id"] == amber, "the client was stranded by the restart"
    print("mcp: unknown tool and argument -32602; the same client goes on after a restart of the service")

    refused(bob["results"][0], "ACCESS_DENIED")
    refused(mallory["results"][0], "ACCESS_DENIED")
    assert structured(mallory["results"][1])["hits"] == []
    print("mcp: without a grant, and from another tenant, nothing is read or found")


def inspector_checks(svc, modules):
    """The MCP Inspector (CLI mode), another real client, against the same endpoint."""
    w = World(svc)
    work = w.work("Inspected")
    w.contract(work, [{"usage_type": "ACCESS", "status": "PERMITTED"}, {"usage_type": "AI_RETRIEVAL", "status": "PERMITTED"}])
    good = w.resource(work, "Inspected", "The inspector reads the ebb.")
    bad = w.resource(w.work("Uncovered"), "Uncovered", "The inspector may not read this.")
    cli = os.path.join(modules, "@modelcontextprotocol/inspector-cli/build/index.js")

    def inspect(*args):
        out = subprocess.run(["node", cli, "http://127.0.0.1:%d/v0/mcp" % svc.port, "--transport", "http",
                              "--header", "Authorization: Bearer " + w.alice] + list(args),
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr[-400:]
        return json.loads(out.stdout)
    assert [t["name"] for t in inspect("--method", "tools/list")["tools"]] == ["search", "read_resource", "list_works"]
    read = inspect("--method", "tools/call", "--tool-name", "read_resource", "--tool-arg", "id=" + good,
                   "--tool-arg", "format=markdown")
    assert read.get("isError") is False and "reads the ebb" in read["content"][0]["text"], read
    assert "Attribution:" in read["content"][0]["text"]
    refused = inspect("--method", "tools/call", "--tool-name", "read_resource", "--tool-arg", "id=" + bad)
    assert refused["isError"] is True and refused["structuredContent"]["error"]["reason"] == "USAGE_PROHIBITED"
    assert "may not read" not in json.dumps(refused)
    print("mcp: the MCP Inspector (CLI mode) lists the tools, reads a permitted Resource with its attribution "
          "and is refused an unlicensed one")


def protocol_checks(svc):
    token = svc.token(sub="u_alice", tenant="t_mcp", scopes=SCOPES)

    def post(body, headers=None, tok=token):
        h = dict(HEADERS)
        h.update(headers or {})
        if tok:
            h["Authorization"] = "Bearer " + tok
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        return fetch("http://127.0.0.1:%d/v0/mcp" % svc.port, "POST", data, h)

    ping = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
    status, headers, body = post(ping, tok=None)
    assert status == 401
    metadata_url = "http://127.0.0.1:%d/.well-known/oauth-protected-resource" % svc.port
    assert headers["WWW-Authenticate"] == 'Bearer resource_metadata="%s"' % metadata_url, headers
    status, meta_headers, body = fetch(metadata_url)
    doc = ok(status, body)
    assert doc["resource"] == "http://127.0.0.1:%d" % svc.port
    # Built from the Host header (no mcp.public_base_url): never kept by a shared cache, which
    # could hand one host's document to another.
    assert meta_headers["Cache-Control"] == "private, max-age=300" and meta_headers["Vary"] == "Host", meta_headers
    status, _, body = fetch(metadata_url, headers={"Host": "attacker.example"})
    assert ok(status, body)["resource"] == "http://attacker.example"
    assert doc["authorization_servers"] == ["https://dev-issuer.contentlake.invalid"]
    assert doc["bearer_methods_supported"] == ["header"]
    status, headers, _ = post(ping, tok="eyJ.not.a.token")
    challenge = headers["WWW-Authenticate"]
    assert status == 401 and 'error="invalid_token"' in challenge and ', resource_metadata="%s"' % metadata_url in challenge
    # A token in the query string is not a token.
    status, _, _ = fetch("http://127.0.0.1:%d/v0/mcp?access_token=%s" % (svc.port, token), "POST",
                         json.dumps(ping).encode(), HEADERS)
    assert status == 401
    no_scope = svc.token(sub="u_alice", tenant="t_mcp", scopes="webhooks.read")
    status, _, body = post(ping, tok=no_scope)
    assert status == 403 and json.loads(body)["error"]["reason"] == "SCOPE_MISSING"
    print("mcp: 401 names the resource metadata (RFC 9728), which names the issuer; the scope is content-lake.read")

    assert ok(*post(ping)[::2]) == {"jsonrpc": "2.0", "id": 7, "result": {}}
    for origin in ("http://evil.example", "http://localhost.evil.example", "http://127.0.0.1.evil.example"):
        status, _, body = post(ping, {"Origin": origin})
        assert status == 403 and json.loads(body)["error"]["reason"] == "ORIGIN_NOT_ALLOWED", origin
    for origin in ("http://localhost:6274", "http://127.0.0.1:%d" % svc.port, "http://[::1]"):
        assert post(ping, {"Origin": origin})[0] == 200, origin  # a page of this machine is no rebinding
    status, _, body = post(ping, {"MCP-Protocol-Version": "1999-01-01"})
    assert status == 400 and json.loads(body)["error"]["reason"] == "MCP_PROTOCOL_VERSION_UNSUPPORTED"
    assert ok(*post(ping, {"MCP-Protocol-Version": "2025-03-26"})[::2])["result"] == {}
    status, _, body = post(b"{not json")
    assert status == 400 and json.loads(body)["error"]["code"] == -32700 and json.loads(body)["id"] is None
    # A message sent as another media type is refused as on every route (docs/api.md, the OpenAPI 415).
    for media_type in ("text/plain", "application/x-www-form-urlencoded"):
        status, _, body = post(ping, {"Content-Type": media_type})
        assert status == 415 and json.loads(body)["error"]["reason"] == "UNSUPPORTED_MEDIA_TYPE", (media_type, status, body)
    assert ok(*post(ping, {"Content-Type": "Application/JSON; charset=utf-8"})[::2])["result"] == {}
    status, _, body = post([ping, ping])
    assert status == 400 and json.loads(body)["error"]["code"] == -32600
    status, _, body = post({"jsonrpc": "1.0", "id": 1, "method": "ping"})
    assert status == 400 and json.loads(body)["error"]["code"] == -32600
    status, _, body = post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert status == 202 and body == b""
    status, _, body = post({"jsonrpc": "2.0", "id": "x", "result": {}})
    assert status == 202 and body == b""
    got = ok(*post({"jsonrpc": "2.0", "id": 8, "method": "resources/list"})[::2])
    assert got["id"] == 8 and got["error"]["code"] == -32601
    got = ok(*post({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "read_resource"}})[::2])
    assert got["error"]["code"] == -32602  # read_resource needs id
    got = ok(*post({"jsonrpc": "2.0", "id": 10, "method": "initialize", "params": {"protocolVersion": "2024-01-01"}})[::2])
    assert got["result"]["protocolVersion"] == "2025-06-18"  # a revision it does not speak: its latest
    for method in ("GET", "DELETE"):
        status, headers, _ = fetch("http://127.0.0.1:%d/v0/mcp" % svc.port, method, None,
                                   {"Authorization": "Bearer " + token, "Accept": "text/event-stream"})
        assert status == 405 and headers["Allow"] == "POST", (method, status, headers)
    print("mcp: Origin 403, unknown MCP-Protocol-Version 400, text/plain 415, bad JSON -32700, batches and bad messages -32600, "
          "notifications and responses 202, unknown methods -32601, GET/DELETE 405")


def kept_result_checks(svc):
    """Tool results are kept beside the REST answer they were shaped from (actors/representation_cache):
    a write, and a change of rights, show in the very next call (on several nodes, the next call
    that names the write's position)."""
    w = World(svc)
    work = w.work("Kept")
    w.contract(work, [{"usage_type": "ACCESS", "status": "PERMITTED"},
                      {"usage_type": "AI_RETRIEVAL", "status": "PERMITTED"}])
    rid = w.resource(work, "Neap tides", "The range is smallest at neap tide.")

    def call(fmt, n):
        body = {"jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": "read_resource", "arguments": {"id": rid, "format": fmt}}}
        # Through the service's client: on several nodes it sends the position of the last write
        # (Content-Lake-Position), as a client that reads its own writes does.
        status, _, got = svc.request("POST", "/v0/mcp", w.alice, body, HEADERS)
        got = ok(status, got)
        assert got["id"] == n, got  # the JSON-RPC id is the request's, whatever was kept
        return got["result"]

    first, again = call("json", 1), call("json", "two")
    assert first == again and structured(first)["resource"]["title"] == "Neap tides", (first, again)
    assert json.loads(first["content"][0]["text"])["resource"]["title"] == "Neap tides"
    assert "smallest at neap" in structured(call("markdown", 3))["markdown"]

    current = ok(*svc.request("GET", "/v0/content-lake/resources/" + rid, w.alice)[::2])
    ok(*svc.request("PATCH", "/v0/content-lake/resources/" + rid, w.alice, {
        "update_token": current["update_token"], "title": "Neap tides, revised",
        "content": {"format": "cl.content/1", "blocks": [
            {"type": "paragraph", "key": "p1", "children": [{"type": "span", "text": "Revised: the range is least."}]}]}})[::2])
    after = call("json", 4)
    assert structured(after)["resource"]["title"] == "Neap tides, revised", after
    assert json.loads(after["content"][0]["text"])["resource"]["title"] == "Neap tides, revised"
    markdown = structured(call("markdown", 5))["markdown"]
    assert "range is least" in markdown and "smallest" not in markdown, markdown

    w.contract(work, [{"usage_type": "AI_RETRIEVAL", "status": "PROHIBITED"}])
    for fmt, n in (("json", 6), ("markdown", 7)):
        refused = call(fmt, n)
        assert refused["isError"] is True and structured(refused)["error"]["reason"] == "USAGE_PROHIBITED", refused
        assert "range is least" not in json.dumps(refused), "a kept result outlived the rights: %s" % refused
    print("mcp: a result shows the write before it and the id of its request; a prohibition shows at once")


# Every scenario the conformance suite (0.1.13, server mode) runs, and the one outcome each must have:
#   "pass": every check SUCCESS (at least one);
#   ("warning", id): that one check, WARNING: the multiple-streams scenario needs a GET stream this
#       stateless server does not offer (405; checked below and in protocol_checks);
#   ("undeclared", method): that one check fails with -32601 for `method`, whose capability
#       initialize does not declare (asserted against initialize's answer);
#   ("test-tool", tool): that one check fails with -32602 for the suite's own reference tool.
UNDECLARED = {"logging/setLevel": "logging", "completion/complete": "completions", "resources/list": "resources",
              "resources/read": "resources", "resources/subscribe": "resources", "prompts/list": "prompts",
              "prompts/get": "prompts"}
EXPECTED = {
    "server-initialize": "pass", "ping": "pass", "tools-list": "pass", "dns-rebinding-protection": "pass",
    "server-sse-multiple-streams": ("warning", "server-sse-multiple-streams-session"),
    "logging-set-level": ("undeclared", "logging/setLevel"),
    "tools-call-with-logging": ("undeclared", "logging/setLevel"),
    "completion-complete": ("undeclared", "completion/complete"),
    "resources-list": ("undeclared", "resources/list"),
    "resources-read-text": ("undeclared", "resources/read"),
    "resources-read-binary": ("undeclared", "resources/read"),
    "resources-templates-read": ("undeclared", "resources/read"),
    "resources-subscribe": ("undeclared", "resources/subscribe"),
    "resources-unsubscribe": ("undeclared", "resources/subscribe"),
    "prompts-list": ("undeclared", "prompts/list"),
    "prompts-get-simple": ("undeclared", "prompts/get"),
    "prompts-get-with-args": ("undeclared", "prompts/get"),
    "prompts-get-embedded-resource": ("undeclared", "prompts/get"),
    "prompts-get-with-image": ("undeclared", "prompts/get"),
    "tools-call-simple-text": ("test-tool", "test_simple_text"),
    "tools-call-image": ("test-tool", "test_image_content"),
    "tools-call-audio": ("test-tool", "test_audio_content"),
    "tools-call-embedded-resource": ("test-tool", "test_embedded_resource"),
    "tools-call-mixed-content": ("test-tool", "test_multiple_content_types"),
    "tools-call-error": ("test-tool", "test_error_handling"),
    "tools-call-with-progress": ("test-tool", "test_tool_with_progress"),
    "tools-call-sampling": ("test-tool", "test_sampling"),
    "tools-call-elicitation": ("test-tool", "test_elicitation"),
    "elicitation-sep1034-defaults": ("test-tool", "test_elicitation_sep1034_defaults"),
    "elicitation-sep1330-enums": ("test-tool", "test_elicitation_sep1330_enums"),
}


def outcome_problems(scenario, checks, declared):
    """What is wrong with `scenario`'s checks against EXPECTED (an empty list: as expected)."""
    want = EXPECTED[scenario]
    if want == "pass":
        if not checks or any(c.get("status") != "SUCCESS" for c in checks):
            return ["must pass: %s" % checks]
        return []
    if len(checks) != 1:
        return ["expected one check: %s" % checks]
    c = checks[0]
    kind, name = want
    if kind == "warning":
        return [] if (c.get("id"), c.get("status")) == (name, "WARNING") else ["expected the warning %s: %s" % (name, c)]
    if kind == "undeclared":
        if UNDECLARED[name] in declared:
            return ["%s fails although initialize declares %s" % (name, UNDECLARED[name])]
        message = "Failed: MCP error -32601: Method not found: " + name
        return [] if c.get("status") == "FAILURE" and c.get("errorMessage") == message else ["expected %r: %s" % (message, c)]
    message = "Failed: MCP error -32602: Unknown tool: " + name
    return [] if c.get("status") == "FAILURE" and c.get("errorMessage") == message else ["expected %r: %s" % (message, c)]


def conformance_checks(svc, modules):
    """The MCP conformance suite (npm @modelcontextprotocol/conformance, server mode). It cannot send a
    token, so a loopback proxy adds this one to every request and passes everything else through (the
    Host and Origin of the DNS rebinding scenario included)."""
    token = svc.token(sub="u_alice", tenant="t_mcp", scopes=SCOPES)
    port = svc.port

    class Proxy(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def forward(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() != "authorization"}
            headers["Authorization"] = "Bearer " + token
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request(self.command, self.path, body, headers)
            answer = conn.getresponse()
            data = answer.read()
            self.send_response(answer.status)
            for k, v in answer.getheaders():
                if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            conn.close()
        do_GET = do_POST = do_DELETE = forward

        def log_message(self, *args):
            pass

    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        with tempfile.TemporaryDirectory() as out:
            run = subprocess.run([os.path.join(modules, ".bin", "conformance"), "server", "--url",
                                  "http://127.0.0.1:%d/v0/mcp" % proxy.server_address[1], "-o", out],
                                 capture_output=True, text=True, timeout=600)
            results = {}
            for path in glob.glob(os.path.join(out, "*", "checks.json")):
                scenario = re.match(r"server-(.+)-\d{4}-\d\d-\d\dT", os.path.basename(os.path.dirname(path))).group(1)
                with open(path) as f:
                    results[scenario] = json.load(f)
    finally:
        proxy.shutdown()
    # The runner exits 1 when a check failed (the expected ones do); anything else is the runner's own failure.
    assert run.returncode == 1, "the conformance runner exited %d: %s" % (run.returncode, run.stderr[-2000:])
    missing, unexpected = sorted(set(EXPECTED) - set(results)), sorted(set(results) - set(EXPECTED))
    assert not missing and not unexpected, ("scenarios missing: %s; not expected: %s" % (missing, unexpected),
                                            run.stdout[-2000:])
    # What initialize declares: tools only (the "undeclared" outcomes rest on it).
    status, _, body = fetch("http://127.0.0.1:%d/v0/mcp" % port, "POST", json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                                                      "clientInfo": {"name": "t", "version": "1"}}}).encode(),
        dict(HEADERS, Authorization="Bearer " + token))
    declared = set(json.loads(body)["result"]["capabilities"])
    assert status == 200 and declared == {"tools"}, (status, body)
    problems = {scenario: outcome_problems(scenario, checks, declared) for scenario, checks in results.items()}
    problems = {k: v for k, v in problems.items() if v}
    assert not problems, problems
    kinds = {}
    for want in EXPECTED.values():
        key = want if want == "pass" else want[0]
        kinds[key] = kinds.get(key, 0) + 1
    print("mcp: conformance suite: all %d scenarios as expected: %d pass, %d warning (no GET stream: 405), %d fail "
          "on a method whose capability initialize does not declare (it declares tools only), %d on the suite's own "
          "test tools" % (len(EXPECTED), kinds["pass"], kinds["warning"], kinds["undeclared"], kinds["test-tool"]))


def limits_checks(binary, source):
    """The POST is rate limited as any REST request; an Idempotency-Key changes nothing (every tool reads)."""
    svc = Service(binary, source, {"CONTENTLAKE_RATE_LIMIT_REQUESTS_PER_SECOND": "1",
                                   "CONTENTLAKE_RATE_LIMIT_BURST": "5",
                                   "CONTENTLAKE_MCP_ALLOWED_ORIGINS": "https://app.example, http://localhost:3000",
                                   "CONTENTLAKE_MCP_PUBLIC_BASE_URL": "https://lake.example"})
    try:
        token = svc.token(sub="u_alice", tenant="t_mcp", scopes=SCOPES)
        # A configured Origin passes, another does not; the configured public URL is what 401s name.
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        assert svc.request("POST", "/v0/mcp", token, ping, {"Origin": "https://app.example"})[0] == 200
        assert svc.request("POST", "/v0/mcp", token, ping, {"Origin": "https://app.example:8443"})[0] == 403
        status, headers, _ = svc.request("POST", "/v0/mcp", None, ping)
        assert headers["WWW-Authenticate"] == 'Bearer resource_metadata="https://lake.example/.well-known/oauth-protected-resource"'
        # The configured URL is the same for every Host: a shared cache may keep it.
        status, headers, body = svc.request("GET", "/.well-known/oauth-protected-resource", None,
                                            headers={"Host": "attacker.example"})
        assert json.loads(body)["resource"] == "https://lake.example" and headers["Cache-Control"] == "public, max-age=300"
        assert "Vary" not in headers, headers
        answers = []
        for i in range(3):
            status, headers, body = svc.request("POST", "/v0/mcp", token, {"jsonrpc": "2.0", "id": i, "method": "ping"},
                                                {"Idempotency-Key": "same-key"})
            answers.append((status, json.loads(body).get("id"), headers.get("Idempotent-Replayed")))
        assert answers == [(200, 0, None), (200, 1, None), (200, 2, None)], answers
        # The bucket (burst 5, 1/s) is spent by now or within a few more requests, however slow this machine.
        for _ in range(20):
            status, headers, body = svc.request("POST", "/v0/mcp", token, {"jsonrpc": "2.0", "id": 9, "method": "ping"})
            if status != 200:
                break
        assert status == 429 and headers["Retry-After"] and json.loads(body)["error"]["reason"] == "RATE_LIMITED"
        print("mcp: the POST is rate limited as on REST (429 RATE_LIMITED, Retry-After); a repeated "
              "Idempotency-Key on tool reads is answered afresh")
    finally:
        svc.stop()


def main():
    binary, source, modules, inspector, conformance = sys.argv[1:6]
    svc = Service(binary, source)
    try:
        sdk_checks(svc, modules, source)
        inspector_checks(svc, inspector)
        protocol_checks(svc)
        kept_result_checks(svc)
        conformance_checks(svc, conformance)
        svc.shutdown()
        assert not any("eyJ" in line for line in svc.log), "a token was logged"
    finally:
        svc.stop()
    limits_checks(binary, source)


if __name__ == "__main__":
    main()
