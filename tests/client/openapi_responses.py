#!/usr/bin/python3
"""Real answers of a running service validated against the OpenAPI document (JSON Schema 2020-12,
Debian's python3-jsonschema): each answer's status must be documented for its operation, its body
must validate against that response's schema, every header it carries (beyond the transport's:
Content-Length, Content-Type, Connection, Transfer-Encoding, Date) must be declared on that
response, and every GET is replayed as HEAD against the document's `head` operation. Whole and
masked Resource and contract reads, lists, write answers whose content is withheld, and errors.
With PRISM (npm @stoplight/prism-cli), the same replay goes through Prism's validating proxy in
front of the service, and every response violation Prism reports (its `sl-violations` header) is a
failure too: an independent validator beside ours.
Usage: openapi_responses.py BINARY SOURCE_DIR [PRISM]"""

import hashlib
import http.server
import json
import pathlib
import re
import socket
import subprocess
import sys
import threading
import time

import jsonschema

from harness import Service, fetch

RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s\x00-\x1f]*$")


def main():
    binary, source = sys.argv[1], sys.argv[2]
    doc = json.loads((pathlib.Path(source) / "docs/openapi.json").read_text())
    resolver = jsonschema.RefResolver.from_schema(doc)
    failures = []

    transport = {"content-length", "content-type", "connection", "transfer-encoding", "date",
                 "sl-violations"}  # Prism's report, read below

    checker = jsonschema.FormatChecker()

    @checker.checks("date-time")
    def date_time(value):  # RFC 3339 (jsonschema checks it only with a package Debian 12 lacks)
        return not isinstance(value, str) or RFC3339.match(value) is not None

    @checker.checks("uri")
    def uri(value):  # an absolute URI: a scheme, then no spaces or controls
        return not isinstance(value, str) or URI.match(value) is not None

    def check(method, template, path, status, body, headers=None):
        """Everything about one answer against the document: its status documented for the
        operation (no fallback to `default`), its headers declared, its Content-Type one the
        response documents, a body exactly where one is documented, and the body valid against the
        schema of that media type, formats included."""
        op = doc["paths"][template].get(method.lower())
        if op is None and status == 405:  # a method the path does not take: the document's general 405
            op = {"responses": {"405": {"$ref": "#/components/responses/MethodNotAllowed"}}}
        if op is None:
            failures.append("%s %s: the document has no %s operation" % (method, template, method))
            return
        response = op["responses"].get(str(status))
        if response is None:
            failures.append("%s %s: status %d is not documented" % (method, path, status))
            return
        if "$ref" in response:
            response = resolver.resolve(response["$ref"])[1]
        got = {k.lower(): v for k, v in (headers or {}).items()}
        for v in json.loads(got.get("sl-violations", "[]")):
            if v.get("location", [""])[0] == "response":
                failures.append("%s %s (%d): Prism: %s at %s" % (method, path, status, v.get("message", "")[:200],
                                                                v.get("location")))
        declared = {k.lower(): v for k, v in response.get("headers", {}).items()}
        for name in got:
            if name not in transport and name not in declared:
                failures.append("%s %s (%d): header %s is not declared" % (method, path, status, name))
        for name, h in declared.items():
            if "$ref" in h:
                h = resolver.resolve(h["$ref"])[1]
            if h.get("required") and name not in got:
                failures.append("%s %s (%d): required header %s is missing" % (method, path, status, name))
        content = response.get("content", {})
        media = got.get("content-type", "").split(";")[0].strip().lower()
        if method == "HEAD" or status in (204, 304):
            if body:
                failures.append("%s %s (%d): a body where none may be" % (method, path, status))
            return
        if not content:
            if body:
                failures.append("%s %s (%d): a body where the document shows none" % (method, path, status))
            return
        if not body:
            failures.append("%s %s (%d): an empty body where the document shows %s" % (method, path, status,
                                                                                    ", ".join(content)))
            return
        if media not in content:
            failures.append("%s %s (%d): Content-Type %r is not documented (%s)" % (method, path, status, media,
                                                                                 ", ".join(content)))
            return
        schema = content[media].get("schema")
        if schema is None or not (media == "application/json" or media.endswith("+json")):
            return
        validator = jsonschema.Draft202012Validator(schema, resolver=resolver, format_checker=checker)
        errors = sorted(validator.iter_errors(json.loads(body)), key=lambda e: list(e.path))
        for e in errors[:3]:
            failures.append("%s %s (%d): %s at %s" % (method, path, status, e.message[:200], list(e.path)))

    prism = sys.argv[3] if len(sys.argv) > 3 else None
    try:
        replay(binary, source, doc, check, failures, prism)
    finally:
        for f in failures:
            print(f)
    print("%d problems" % len(failures))
    return 1 if failures else 0


class _Receiver(http.server.BaseHTTPRequestHandler):
    """A webhook receiver on loopback: acknowledges every delivery."""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def replay(binary, source, doc, check, failures, prism):
    receiver = http.server.HTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    try:
        replay_with(binary, source, doc, check, failures, receiver, prism)
    finally:
        receiver.shutdown()


class _Prism:
    """Prism's validating proxy (`prism proxy`) in front of the service on 127.0.0.1."""

    def __init__(self, prism, document, upstream_port):
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self.proc = subprocess.Popen([prism, "proxy", document, "http://127.0.0.1:%d" % upstream_port, "--host",
                                      "127.0.0.1", "--port", str(self.port), "--errors", "false", "--cors", "false"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.output = []
        for line in self.proc.stdout:
            self.output.append(line)
            if "Prism is listening" in line:
                break
        else:
            raise RuntimeError("Prism did not start:\n" + "".join(self.output[-20:]))
        threading.Thread(target=lambda: [self.output.append(x) for x in self.proc.stdout], daemon=True).start()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def replay_with(binary, source, doc, check, failures, receiver, prism):
    with Service(binary, source, {"CONTENTLAKE_WEBHOOKS_HTTPS_ONLY": "false",
                                  "CONTENTLAKE_WEBHOOKS_ALLOWED_NETWORKS": "127.0.0.0/8"}) as svc:
        proxy = None
        if prism:
            # Every request of the replay goes through Prism (the harness addresses svc.port).
            proxy = _Prism(prism, str(pathlib.Path(source) / "docs/openapi.json"), svc.port)
            svc.direct_port, svc.port = svc.port, proxy.port
        try:
            replay_calls(svc, doc, check, failures, receiver)
        finally:
            if proxy:
                proxy.stop()


def replay_calls(svc, doc, check, failures, receiver):
    token = svc.token()

    exercised = set()

    def call(method, template, path, body=None, expect=None, headers=None, as_token=None):
        exercised.add((template, method.lower()))
        through = svc.port
        if expect == 302 and hasattr(svc, "direct_port"):
            # A documented Prism limitation: its proxy follows a redirect (here to the presigned
            # URL, which then refuses it), so a 302 is checked against the service itself.
            svc.port = svc.direct_port
        try:
            return checked_call(method, template, path, body, expect, headers, as_token)
        finally:
            svc.port = through

    def checked_call(method, template, path, body, expect, headers, as_token):
        status, got, answer = svc.request(method, path, as_token or token, body, headers)
        if expect is not None and status != expect:
            failures.append("%s %s: %d, expected %d: %s" % (method, path, status, expect, answer[:200]))
        check(method, template, path, status, answer, headers=got)
        if method == "GET":  # the same read as HEAD: the document must say so too
            # A documented Prism limitation: its proxy parses a HEAD answer's (absent) JSON body and
            # fails (500), so HEAD is checked against the service itself, by our own checks.
            through = svc.port
            svc.port = getattr(svc, "direct_port", svc.port)
            try:
                head_status, head_headers, _ = svc.request("HEAD", path, as_token or token, None, headers)
            finally:
                svc.port = through
            check("HEAD", template, path, head_status, b"", headers=head_headers)
        if not answer or status == 304:
            return None
        try:
            return json.loads(answer)
        except ValueError:
            return answer  # the reference's page and script

    changes = "/v0/content-lake/changes"
    feed_start = call("GET", changes, changes, expect=200)["next_cursor"]
    work = call("POST", "/v0/content-lake/works", "/v0/content-lake/works", {"title": "Tides"}, 201)["id"]
    content = {"format": "cl.content/1", "blocks": [
        {"type": "paragraph", "key": "p1", "children": [{"type": "span", "text": "Seven metres."}]}]}
    res = call("POST", "/v0/content-lake/resources", "/v0/content-lake/resources",
               {"title": "Spring tides", "type": "CHAPTER", "language": "en", "work_id": work,
                "content": content}, 201)
    one = "/v0/content-lake/resources/{id}"
    path = "/v0/content-lake/resources/" + res["id"]
    for query in ["", "?fields=title", "?fields=id,rights.usage_terms", "?fields=rights.basis.contract_id",
                  "?fields=source,lineage", "?fields=*", "?fields=hash,entities", "?fields=content.blocks.key",
                  "?fields=source.name", "?fields=work.title", "?fields=provenance.activities.type",
                  "?fields=rights.contracts.id", "?fields=lineage.versions.version,entities.entities"]:
        call("GET", one, path + query, expect=200)
    status, got, answer = svc.request("GET", path, token)
    check("GET", one, path, status, answer, headers=got)
    etag = {k.lower(): v for k, v in got.items()}.get("etag")  # Prism passes header names lower-cased
    call("GET", one, path, expect=304, headers={"If-None-Match": etag})
    # Masked rights with a contract in force (a Work of its own): every mask path docs/api.md
    # shows, each validated as the document's masked schemas say, at every depth.
    licensed = call("POST", "/v0/content-lake/works", "/v0/content-lake/works", {"title": "Licensed"}, 201)["id"]
    accountant = svc.token(scopes="content-lake.read contracts.read contracts.write contracts.commercial.read")
    call("POST", "/v0/contracts", "/v0/contracts",
         {"title": "Open", "status": "ACTIVE", "valid_from": "2020-01-01T00:00:00Z", "work_ids": [licensed],
          "territorial_rights": [{"worldwide": True, "status": "PERMITTED"}],
          "usage_terms": [{"usage_type": "ACCESS", "status": "PERMITTED"},
                          {"usage_type": "DISPLAY", "status": "PERMITTED"}],
          "commercial_terms": {"royalties": [{"basis": "NET_RECEIPTS", "rate_percent": 10}]}}, 201,
         as_token=accountant)
    open_res = call("POST", "/v0/content-lake/resources", "/v0/content-lake/resources",
                    {"title": "Open tides", "type": "CHAPTER", "language": "en", "work_id": licensed,
                     "content": content}, 201)
    open_path = "/v0/content-lake/resources/" + open_res["id"]
    for mask in ("rights", "rights.basis", "rights.basis.contract_id", "rights.contracts.id",
                 "rights.usage_terms.usage_type", "rights.usage_terms.status", "rights.handling_terms.status",
                 "rights.territorial_rights.worldwide", "rights.manifestation_rights.status",
                 "rights.resolved_at", "title,rights.usage_terms", "rights.commercial_terms.contract_id",
                 "rights.commercial_terms"):
        masked = call("GET", one, open_path + "?fields=" + mask, expect=200, as_token=accountant)
        if masked and not masked["rights"].get("basis", [None]) and "basis" in mask:
            failures.append("%s: no contract in force, the mask was not exercised" % mask)
    call("GET", one, path, expect=406, headers={"Accept": "image/png"})
    call("GET", "/v0/content-lake/works", "/v0/content-lake/works", expect=406, headers={"Accept": "image/png"})
    call("GET", "/v0/content-lake/works", "/v0/content-lake/works?fields=id", expect=400)
    call("GET", one, path, expect=401, as_token="not-a-token")
    call("DELETE", "/v0/content-lake/blobs/uploads/{uploadId}", "/v0/content-lake/blobs/uploads/upl_x?a=1&a=2",
         expect=400)
    call("POST", "/v0/content-lake/resources/{id}", path, expect=405)
    call("POST", "/v0/content-lake/resources/{id}/versions", path + "/versions", expect=200)
    call("GET", "/v0/content-lake/resources/{id}/versions", path + "/versions", expect=200)
    call("GET", "/v0/content-lake/resources/{id}/versions", path + "/versions?fields=version,rights.odrl", expect=200)
    call("GET", "/v0/content-lake/resources/{id}/versions", path + "/versions?fields=entities", expect=400)
    call("GET", "/v0/content-lake/resources", "/v0/content-lake/resources", expect=200)
    search = "/v0/content-lake/search"
    deadline = time.monotonic() + 15  # the index lag: poll until the Resource is searchable
    def searched():
        status, got, answer = svc.request("POST", search, token, {"query": "metres"})
        check("POST", search, search, status, answer, headers=got)
        return json.loads(answer)["hits"]
    while not searched():
        if time.monotonic() > deadline:
            failures.append("the Resource never became searchable")
            break
        time.sleep(0.02)
    page = call("POST", search, search, {"query": "metres", "page_size": 1}, 200)
    call("POST", search, search, {"search_id": page["search_id"]}, 200)
    call("POST", search, search, {"query": "metres", "fields": "title,rights.odrl"}, 200)
    call("POST", search, search, {"query": "metres", "fields": "rights.odrl.uid"}, 400)
    call("GET", "/v0/content-lake/resources", "/v0/content-lake/resources?fields=id,rights.odrl", expect=200)
    call("GET", "/v0/content-lake/resources", "/v0/content-lake/resources?fields=lineage", expect=400)
    call("POST", search, search, {"search_id": "srch_unknown"}, 404)
    call("POST", search, search, {"query": "tides AND ("}, 400)
    call("POST", search, search, {"query": "x" * 1001}, 400)
    # A contract that prohibits reading: answers without content must still validate.
    call("POST", "/v0/contracts", "/v0/contracts",
         {"title": "Closed", "status": "ACTIVE", "valid_from": "2020-01-01T00:00:00Z", "work_ids": [work],
          "territorial_rights": [{"worldwide": True, "status": "PERMITTED"}],
          "usage_terms": [{"usage_type": "ACCESS", "status": "PROHIBITED"}]}, 201)
    call("GET", "/v0/content-lake/resources", "/v0/content-lake/resources", expect=200)
    call("GET", one, path + "?fields=title,rights", expect=200)
    call("GET", one, path, expect=403)
    call("POST", search, search, {"query": "spring"}, 200)  # a title match without its snippet
    current = call("GET", one, path + "?fields=update_token", expect=200)
    call("PATCH", one, path, {"title": "Neap tides", "update_token": current["update_token"]}, 200)
    call("GET", one, path + "?fields=nonsense", expect=400)
    call("GET", one, path + "?fields=a&fields=b", expect=400)

    call("GET", changes, changes + "?since=" + feed_start, expect=200)  # the writes above, as events
    call("GET", changes, changes + "?types=resource.updated&since=" + feed_start, expect=400)  # CURSOR_MISMATCH
    call("GET", changes, changes + "?since=garbage", expect=400)
    call("GET", changes, changes + "?types=nonsense", expect=400)
    # Webhooks, delivered to a receiver on loopback (the service allows 127.0.0.0/8 here).
    hooker = svc.token(scopes="webhooks.read webhooks.write")
    hooks = "/v0/content-lake/webhooks"
    receiver_url = "http://127.0.0.1:%d/in" % receiver.server_port
    hook = call("POST", hooks, hooks, {"url": receiver_url, "event_types": ["work.created"]}, 201, as_token=hooker)
    call("POST", hooks, hooks, {"url": "ftp://127.0.0.1/in"}, 400, as_token=hooker)
    call("POST", hooks, hooks, {"url": receiver_url}, 403)  # no webhooks.write
    call("GET", hooks, hooks, expect=200, as_token=hooker)
    hook_one = hooks + "/{id}"
    hook_path = hooks + "/" + hook["id"]
    call("GET", hook_one, hook_path, expect=200, as_token=hooker)
    call("GET", hook_one, hooks + "/whk_missing", expect=404, as_token=hooker)
    call("PATCH", hook_one, hook_path, {"enabled": False}, 200, as_token=hooker)
    call("PATCH", hook_one, hook_path, {"enabled": "no"}, 400, as_token=hooker)
    call("POST", hook_one + "/rotate-secret", hook_path + "/rotate-secret", None, 200, as_token=hooker)
    call("POST", hook_one + "/rotate-secret", hook_path + "/rotate-secret", {"secret": "mine"}, 400, as_token=hooker)
    call("POST", hook_one + "/test", hook_path + "/test", None, 202, as_token=hooker)
    call("POST", hook_one + "/test", hook_path + "/test", {"type": "x"}, 400, as_token=hooker)
    # Another media type than JSON: 415 before anything else is looked at.
    plain = {"Content-Type": "text/plain"}
    call("POST", hooks, hooks, b"url=x", 415, headers=plain, as_token=hooker)
    call("PATCH", hook_one, hook_path, b"enabled=false", 415, headers=plain, as_token=hooker)
    call("POST", hook_one + "/replay", hook_path + "/replay", b"since=x", 415, headers=plain, as_token=hooker)
    call("POST", hook_one + "/test", hooks + "/whk_missing/test", None, 404, as_token=hooker)
    call("GET", hook_one + "/deliveries", hook_path + "/deliveries", expect=200, as_token=hooker)
    call("GET", hook_one + "/deliveries", hook_path + "/deliveries?page_size=0", expect=400, as_token=hooker)
    call("POST", hook_one + "/replay", hook_path + "/replay", {"since": "2026-01-01T00:00:00Z"}, 202, as_token=hooker)
    call("POST", hook_one + "/replay", hook_path + "/replay", {"message_id": "evt_x"}, 400, as_token=hooker)
    call("DELETE", hook_one, hook_path, expect=204, as_token=hooker)
    call("DELETE", hook_one, hook_path, expect=404, as_token=hooker)
    # The MCP endpoint: an answer, a notification, a bad message, another Origin; the metadata.
    mcp = "/v0/mcp"
    call("POST", mcp, mcp, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, 200)
    call("POST", mcp, mcp, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                            "params": {"name": "read_resource", "arguments": {"id": res["id"]}}}, 200)
    call("POST", mcp, mcp, {"jsonrpc": "2.0", "method": "notifications/initialized"}, 202)
    call("POST", mcp, mcp, [{"jsonrpc": "2.0", "id": 3, "method": "ping"}], 400)
    call("POST", mcp, mcp, {"jsonrpc": "2.0", "id": 4, "method": "ping"}, 403, headers={"Origin": "http://evil.example"})
    call("GET", "/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource", expect=200)
    call("GET", mcp, mcp, expect=405)  # no server-initiated stream: documented as refused
    call("DELETE", mcp, mcp, expect=405)  # no session to end
    # Every other operation: its success path and a documented error.
    call("GET", "/v0/openapi.json", "/v0/openapi.json", expect=200)
    # The reference: the page, its script, each tagged (304 to the tag), 406 to an Accept without them.
    for template in ("/v0/openapi.json", "/v0/docs", "/v0/docs/reference.js"):
        call("GET", template, template, expect=200)
        status, got, _ = svc.request("GET", template, token)
        call("GET", template, template, expect=304, headers={"If-None-Match": {k.lower(): v for k, v in got.items()}["etag"]})
    call("GET", "/v0/docs", "/v0/docs", expect=406, headers={"Accept": "application/json"})
    call("GET", "/v0/docs/reference.js", "/v0/docs/reference.js", expect=406, headers={"Accept": "text/html"})
    call("GET", "/v0/content-lake/works/{id}", "/v0/content-lake/works/" + work, expect=200)
    call("GET", "/v0/content-lake/works/{id}", "/v0/content-lake/works/wk_missing", expect=404)
    call("GET", one, path + "?fields=update_token,content", expect=403)  # the contract refuses reading
    token_now = call("GET", one, path + "?fields=update_token", expect=200)["update_token"]
    call("PUT", one, path, {"title": "Replaced", "type": "CHAPTER", "language": "en",
                            "content": content, "update_token": token_now}, 200)
    call("PUT", one, path, {"title": "Stale", "type": "CHAPTER", "language": "en",
                            "content": content, "update_token": token_now}, 409)
    call("GET", "/v0/content-lake/resources/{id}/entities", path + "/entities", expect=403)
    # Rights that travel: the policy (refused the content or not), its 304, a Resource not granted,
    # the embedded policy under the mask, and the service-wide TDMRep documents.
    odrl = "/v0/content-lake/resources/{id}/rights/odrl"
    call("GET", odrl, path + "/rights/odrl", expect=200)
    status, got, answer = svc.request("GET", path + "/rights/odrl", token)
    call("GET", odrl, path + "/rights/odrl", expect=304,
         headers={"If-None-Match": {k.lower(): v for k, v in got.items()}.get("etag")})
    call("GET", odrl, "/v0/content-lake/resources/res_missing/rights/odrl", expect=403)
    call("GET", one, path + "?fields=rights.odrl,title", expect=200)
    call("GET", one, path + "?fields=rights.odrl.permission", expect=400)
    call("GET", "/.well-known/tdmrep.json", "/.well-known/tdmrep.json", expect=200)
    call("GET", "/v0/rights/tdm-policy", "/v0/rights/tdm-policy", expect=200)
    staged = call("POST", "/v0/content-lake/resources", "/v0/content-lake/resources",
                  {"title": "Staged", "type": "CHAPTER", "language": "en", "content": content,
                   "source": {"name": "Wire", "origin_type": "FEED", "system": "wire-feed"}}, 201)
    staged_path = "/v0/content-lake/resources/" + staged["id"]
    call("GET", "/v0/content-lake/resources/{id}/entities", staged_path + "/entities", expect=200)
    call("GET", "/v0/content-lake/sources/{id}", "/v0/content-lake/sources/" + staged["source_id"], expect=200)
    call("GET", "/v0/content-lake/sources/{id}", "/v0/content-lake/sources/src_missing", expect=404)
    units = call("GET", "/v0/content-lake/content-units", "/v0/content-lake/content-units?resource_id=" + staged["id"],
                 expect=200)
    call("GET", "/v0/content-lake/content-units", "/v0/content-lake/content-units", expect=400)
    call("GET", "/v0/content-lake/content-units/{id}",
         "/v0/content-lake/content-units/" + units["content_units"][0]["id"], expect=200)
    activities = call("GET", "/v0/content-lake/activities", "/v0/content-lake/activities", expect=200)
    call("GET", "/v0/content-lake/activities/{id}",
         "/v0/content-lake/activities/" + activities["activities"][0]["id"], expect=200)
    call("GET", "/v0/content-lake/activities/{id}", "/v0/content-lake/activities/act_missing", expect=404)
    grant = "/v0/content-lake/resources/{id}/access/{principal}"
    call("PUT", grant, staged_path + "/access/u_bob", {"role": "reader"}, 201)
    call("PUT", grant, staged_path + "/access/u_bob", {"role": "emperor"}, 400)
    call("GET", "/v0/content-lake/resources/{id}/access", staged_path + "/access", expect=200)
    call("GET", grant, staged_path + "/access/u_bob", expect=200)
    call("DELETE", grant, staged_path + "/access/u_bob", expect=204)
    call("GET", grant, staged_path + "/access/u_bob", expect=404)
    call("POST", "/v0/content-lake/works/{id}/resources", "/v0/content-lake/works/%s/resources" % work,
         {"resource_id": staged["id"]}, 200)
    call("POST", "/v0/content-lake/works/{id}/resources", "/v0/content-lake/works/%s/resources" % work,
         {"resource_id": staged["id"]}, 400)
    contracts = call("GET", "/v0/contracts", "/v0/contracts", expect=200)
    contract = contracts["contracts"][0]
    cpath = "/v0/contracts/" + contract["id"]
    call("GET", "/v0/contracts/{id}", cpath, expect=200)
    call("GET", "/v0/contracts/{id}", cpath + "?fields=title,work_ids", expect=200)
    call("GET", "/v0/contracts/{id}", "/v0/contracts/ctr_missing", expect=404)
    terms = {k: v for k, v in call("GET", "/v0/contracts/{id}", cpath, expect=200).items()
             if k in ("title", "status", "valid_from", "work_ids", "territorial_rights", "usage_terms",
                      "update_token")}
    call("POST", "/v0/contracts/{id}/versions", cpath + "/versions", terms, 201)
    call("POST", "/v0/contracts/{id}/versions", cpath + "/versions", terms, 409)  # the token moved on
    call("GET", "/v0/contracts/{id}/versions", cpath + "/versions", expect=200)

    data = b"picture bytes"
    up = call("POST", "/v0/content-lake/blobs/uploads", "/v0/content-lake/blobs/uploads",
              {"size": len(data), "content_type": "image/png"}, 201)
    call("POST", "/v0/content-lake/blobs/uploads", "/v0/content-lake/blobs/uploads", {"size": -1}, 400)
    parts = "/v0/content-lake/blobs/uploads/{uploadId}/parts"
    call("GET", parts, "/v0/content-lake/blobs/uploads/%s/parts" % up["upload_id"], expect=200)
    call("GET", parts, "/v0/content-lake/blobs/uploads/upl_missing/parts", expect=404)
    complete = "/v0/content-lake/blobs/uploads/{uploadId}/complete"
    call("POST", complete, "/v0/content-lake/blobs/uploads/%s/complete" % up["upload_id"],
         {"sha256": hashlib.sha256(data).hexdigest()}, 400)  # nothing stored yet
    fetch(up["url"], "PUT", data)
    call("POST", complete, "/v0/content-lake/blobs/uploads/%s/complete" % up["upload_id"],
         {"sha256": hashlib.sha256(data).hexdigest()}, 201)
    call("GET", "/v0/content-lake/blobs/{id}", "/v0/content-lake/blobs/" + up["blob_id"], expect=302)
    call("GET", "/v0/content-lake/blobs/{id}", "/v0/content-lake/blobs/blb_missing", expect=403)
    call("POST", "/v0/content-lake/blobs/locations", "/v0/content-lake/blobs/locations",
         {"blobs": [{"id": up["blob_id"]}]}, 200)
    call("POST", "/v0/content-lake/blobs/locations", "/v0/content-lake/blobs/locations", {"blobs": 5}, 400)
    other = call("POST", "/v0/content-lake/blobs/uploads", "/v0/content-lake/blobs/uploads",
                 {"size": 10, "content_type": "image/png"}, 201)
    upload = "/v0/content-lake/blobs/uploads/{uploadId}"
    call("DELETE", upload, "/v0/content-lake/blobs/uploads/" + other["upload_id"], expect=204)
    call("DELETE", upload, "/v0/content-lake/blobs/uploads/upl_missing", expect=404)

    # Without a token every operation but the document's is 401 with its challenge.
    for template, item in doc["paths"].items():
        for method in ("get", "post", "put", "patch", "delete"):
            if method not in item or item[method].get("security") == []:  # served without a token
                continue
            concrete = template.replace("{id}", "x_1").replace("{principal}", "u_x").replace("{uploadId}", "upl_x")
            status, got, answer = svc.request(method.upper(), concrete, None, {} if method != "get" else None)
            if status != 401 or "www-authenticate" not in {k.lower() for k in got}:
                failures.append("%s %s without a token: %d" % (method.upper(), concrete, status))
            check(method.upper(), template, concrete, status, answer, headers=got)

    for template, item in doc["paths"].items():
        for method in ("get", "post", "put", "patch", "delete"):
            if method in item and (template, method) not in exercised:
                failures.append("%s %s: no answer of it was replayed" % (method.upper(), template))


if __name__ == "__main__":
    sys.exit(main())
