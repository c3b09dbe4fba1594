#!/usr/bin/python3
"""What travels equals what is enforced (issue 66, docs/rights.md "Rights that travel").

For at least 1,000 generated contracts (random statuses, windows, territories, manifestations,
usages with and without methods, prohibitions, handling; several per Work; the shipped platform
policy on top), every Work's Resource is read as a client would: its ODRL policy, its headers, and
the service's own verdict for a plain read and for each declared AI purpose with and without a
method. Independent tools check the shapes (tests/client/odrl_check.mjs: jsonld + SHACL,
structured-headers, ajv), and an ODRL evaluator of this file's own, over the policy as JSON-LD
expanded it (IRIs, not our spelling), must agree with the service's verdict every time; its
territory and window constraints must say what `rights` and the contracts say. Broken documents must
fail each validator. Usage: rights_travel.py BINARY SOURCE_DIR NODE_MODULES [CONTRACTS]"""

import calendar
import datetime
import json
import os
import random
import subprocess
import sys
import tempfile
import time

from harness import Service

ODRL = "http://www.w3.org/ns/odrl/2/"
CLX = "https://w3id.org/contentlake/odrl#"
RDF_VALUE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#value"
ISO = "https://www.iso.org/obp/ui/#iso:code:3166:"
# ODRL 2.2 vocabulary's own odrl:includedIn pairs among the actions we use (the profile adds ours).
CORE_INCLUDED_IN = [(ODRL + "read", ODRL + "use"), (ODRL + "display", ODRL + "play"), (ODRL + "play", ODRL + "use"),
                    (ODRL + "derive", ODRL + "use")]
ACTION = {"AI_RETRIEVAL": CLX + "aiRetrieval", "AI_TRAINING": CLX + "aiTraining"}
CHANNEL = {"STREAM": CLX + "stream", "MCP": CLX + "mcp"}
CODES = ["FR", "DE", "US", "GB", "JP", "RU", "KP", "BR"]
USAGES = ["ACCESS", "DISPLAY", "DERIVE", "AI_RETRIEVAL", "AI_TRAINING"]
DAY = 86400


def utc(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_utc(s):
    return calendar.timegm(datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").timetuple())


def random_contract(rng, work, now):
    """A contract body for `work`, its window whole days away from `now` (no edge during the run)."""
    start = now + rng.choice([-400, -30, -2, -1, 1, 3]) * DAY + rng.randrange(0, 3600)
    body = {"title": "generated", "status": rng.choices(["ACTIVE", "DRAFT", "SUSPENDED", "TERMINATED"], [7, 1, 1, 1])[0],
            "valid_from": utc(start), "work_ids": [work]}
    if rng.random() < 0.6:
        body["valid_until"] = utc(start + rng.choice([1, 5, 60, 900]) * DAY)
    territories = []
    if rng.random() < 0.5:
        territories.append({"worldwide": True, "status": rng.choices(["PERMITTED", "PROHIBITED"], [4, 1])[0]})
    for status in ("PERMITTED", "PROHIBITED"):
        if rng.random() < 0.5:
            territories.append({"territory_codes": rng.sample(CODES, rng.randint(1, 3)), "status": status})
    body["territorial_rights"] = territories
    body["manifestation_rights"] = [{"manifestation_type": m, "status": rng.choice(["PERMITTED", "PROHIBITED"])}
                                    for m in rng.sample(["EBOOK", "AUDIOBOOK", "PRINT", "WEB"], rng.randint(0, 2))]
    terms = []
    for _ in range(rng.randint(0, 6)):
        t = {"usage_type": rng.choice(USAGES), "status": rng.choices(["PERMITTED", "PROHIBITED"], [3, 1])[0]}
        if rng.random() < 0.35:
            t["method"] = rng.choice(["STREAM", "MCP"])
        if rng.random() < 0.2:
            t["exception"] = rng.choice(["only excerpts", "news use", "\u00e9dition fran\u00e7aise"])
        terms.append(t)
    body["usage_terms"] = terms
    body["handling_terms"] = [{"handling_type": h, "status": rng.choice(["PERMITTED", "PROHIBITED", "REQUIRED"])}
                              for h in rng.sample(["ATTRIBUTION", "COPYRIGHT_NOTICE", "LINK_BACK"], rng.randint(0, 2))]
    return body


# --- an ODRL evaluator of our own, over expanded JSON-LD ------------------------------------------

def ancestors(action, included_in):
    out, todo = set(), [action]
    while todo:
        a = todo.pop()
        for child, parent in included_in:
            if child == a and parent not in out:
                out.add(parent)
                todo.append(parent)
    return out


def rule_action(rule):
    """(action IRI, [refinement constraints]) of a rule with exactly one action."""
    (action,) = rule[ODRL + "action"]
    if "@id" in action:
        return action["@id"], []
    (value,) = action[RDF_VALUE]
    return value["@id"], action.get(ODRL + "refinement", [])


def operand(c, name):
    (v,) = c[ODRL + name]
    return v["@id"]


def right_values(c):
    return [v.get("@id", v.get("@value")) for v in c[ODRL + "rightOperand"]]


def holds(c, request, prohibition):
    """Whether constraint `c` holds for `request` (action, channel, time); `spatial` and `media` are
    the caller's to evaluate (docs/rights.md): a caller in a permitted territory and medium."""
    left, op = operand(c, "leftOperand"), operand(c, "operator")
    if left == ODRL + "dateTime":
        (v,) = right_values(c)
        t = parse_utc(v)
        return {ODRL + "gteq": request["at"] >= t, ODRL + "lt": request["at"] < t}[op]
    if left == ODRL + "deliveryChannel":
        assert op == ODRL + "eq", op
        return request["channel"] in right_values(c)
    if left in (ODRL + "spatial", ODRL + "media"):
        return not prohibition
    raise AssertionError("a constraint the evaluator does not know: " + left)


def applies(rule, request, included_in, prohibition):
    action, refinements = rule_action(rule)
    if action != request["action"] and action not in ancestors(request["action"], included_in):
        return False
    return all(holds(c, request, prohibition) for c in refinements) and \
        all(holds(c, request, prohibition) for c in rule.get(ODRL + "constraint", []))


def permits(policy, request, included_in):
    (p,) = policy
    assert [c["@id"] for c in p[ODRL + "conflict"]] == [ODRL + "prohibit"]
    if any(applies(r, request, included_in, True) for r in p.get(ODRL + "prohibition", [])):
        return False
    return any(applies(r, request, included_in, False) for r in p.get(ODRL + "permission", []))


def limits(policy):
    """What the policy's constraints say about territories and the window."""
    (p,) = policy
    permitted, prohibited, elsewhere, windows = set(), set(), None, set()
    usage_actions = {ODRL + "read", ODRL + "display", ODRL + "derive", CLX + "aiRetrieval", CLX + "aiTraining"}
    for kind in ("permission", "prohibition"):
        for rule in p.get(ODRL + kind, []):
            action, _ = rule_action(rule)
            window = []
            for c in rule.get(ODRL + "constraint", []):
                left, op = operand(c, "leftOperand"), operand(c, "operator")
                if left == ODRL + "dateTime":
                    window.append((op, right_values(c)[0]))
                elif left == ODRL + "spatial" and kind == "permission":
                    permitted.add(frozenset(right_values(c)))
                elif left == ODRL + "spatial":
                    assert action == ODRL + "use"
                    if op == ODRL + "isAnyOf":
                        prohibited |= set(right_values(c))
                    else:
                        elsewhere = (op, frozenset(right_values(c)))
            windows.add(tuple(sorted(window)))
            if kind == "permission" and action in usage_actions and not any(
                    operand(c, "leftOperand") == ODRL + "spatial" for c in rule.get(ODRL + "constraint", [])):
                permitted.add(None)
    return permitted, prohibited, elsewhere, windows


def expected_limits(rights, contracts, now):
    """The same, from `rights` and the generated contracts of the Work."""
    worldwide, permitted, prohibited = "", set(), set()
    for t in rights["territorial_rights"]:
        if t.get("worldwide"):
            worldwide = t["status"]
        for code in t.get("territory_codes", []):
            (permitted if t["status"] == "PERMITTED" else prohibited).add(ISO + code)
    perm = {None} if worldwide == "PERMITTED" or not permitted else {frozenset(permitted)}
    elsewhere = None
    if worldwide == "PROHIBITED":
        elsewhere = (ODRL + "isNoneOf", frozenset(permitted)) if permitted else (ODRL + "eq", frozenset([CLX + "worldwide"]))
    edges = [parse_utc(c["valid_from"]) for c in contracts] + [parse_utc(c["valid_until"]) for c in contracts if "valid_until" in c]
    window = []
    before = [e for e in edges if e <= now]
    after = [e for e in edges if e > now]
    if before:
        window.append((ODRL + "gteq", utc(max(before))))
    if after:
        window.append((ODRL + "lt", utc(min(after))))
    return perm, prohibited, elsewhere, {tuple(sorted(window))}


# --- the run ---------------------------------------------------------------------------------------

def check_tools(modules, source, policies, headers, tdmrep):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"policies": policies, "headers": headers, "tdmrep": tdmrep,
                   "shapes": os.path.join(source, "tests/client/odrl-shapes.ttl"),
                   "profile": os.path.join(source, "docs/odrl-profile.ttl"),
                   "tdmrep_schema": os.path.join(source, "tests/client/tdmrep.schema.json")}, f)
    try:
        out = subprocess.run(["node", os.path.join(source, "tests/client/odrl_check.mjs"), modules, f.name],
                             check=True, capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    return json.loads(out.stdout)


def broken_documents(policy):
    """Policies broken on purpose: each must fail SHACL."""
    no_assigner = {k: v for k, v in policy.items() if k != "assigner"}
    two_actions = json.loads(json.dumps(policy))
    two_actions["permission"][0]["action"] = ["read", "display"]
    bad_operator = json.loads(json.dumps(policy))
    bad_operator["permission"][0]["constraint"] = [{"leftOperand": "dateTime", "operator": "roughly",
                                                    "rightOperand": {"@value": "2026-01-01T00:00:00Z", "@type": "xsd:dateTime"}}]
    untyped_time = json.loads(json.dumps(policy))
    untyped_time["permission"][0]["constraint"] = [{"leftOperand": "dateTime", "operator": "lt", "rightOperand": "soon"}]
    no_rules = {k: v for k, v in policy.items() if k not in ("permission", "prohibition")}
    return {"no assigner": no_assigner, "two actions in one rule": two_actions, "unknown operator": bad_operator,
            "dateTime without xsd:dateTime": untyped_time, "no rule": no_rules}


def main():
    binary, source, modules = sys.argv[1:4]
    wanted = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
    rng = random.Random(int(os.environ.get("CL_TEST_SEED", "66")))
    with Service(binary, source) as svc:
        alice = svc.token(sub="u_alice", tenant="t_travel")

        def call(method, path, body=None, headers=None):
            return svc.request(method, path, alice, body, headers)

        now = int(datetime.datetime.now(datetime.timezone.utc).timestamp())
        works, made = [], 0
        while made < wanted:
            status, _, body = call("POST", "/v0/content-lake/works", {"title": "w%d" % len(works)})
            assert status == 201, body
            work = json.loads(body)["id"]
            status, _, body = call("POST", "/v0/content-lake/resources", {
                "title": "r", "type": "ARTICLE", "language": "en", "work_id": work,
                "content": {"format": "cl.content/1", "blocks": [{"type": "paragraph", "key": "p1",
                                                                  "children": [{"type": "span", "text": "Tide."}]}]}})
            assert status == 201, body
            resource = json.loads(body)["id"]
            contracts = [random_contract(rng, work, now) for _ in range(rng.randint(1, 6))]
            for c in contracts:
                status, _, body = call("POST", "/v0/contracts", c)
                assert status == 201, (status, body, c)
            made += len(contracts)
            works.append((work, resource, contracts))
        print("%d contracts over %d Works" % (made, len(works)))

        cases, policies, headers = [], [], []
        for work, resource, contracts in works:
            base = "/v0/content-lake/resources/" + resource
            status, h, body = call("GET", base)
            assert status in (200, 403), (status, body)
            plain = status == 200
            status_r, h_r, body_r = call("GET", base + "?fields=rights")
            assert status_r == 200, body_r
            rights = json.loads(body_r)["rights"]
            verdicts = {}
            for usage in ("AI_RETRIEVAL", "AI_TRAINING"):
                for method in (None, "STREAM", "MCP"):
                    purpose = usage + ("; method=" + method if method else "")
                    s, _, b = call("GET", base, headers={"X-Usage-Purpose": purpose})
                    assert s in (200, 403), (s, b)
                    if s == 403:
                        assert json.loads(b)["error"]["reason"] == "USAGE_PROHIBITED", b
                    verdicts[(usage, method)] = s == 200
            status, ph, pbody = call("GET", base + "/rights/odrl")
            assert status == 200, pbody
            assert ph["Content-Type"] == "application/ld+json", ph
            policy = json.loads(pbody)
            # The embedded policy is the document (but for when it was resolved).
            s, _, eb = call("GET", base + "?fields=rights.odrl")
            embedded = json.loads(eb)["rights"]["odrl"]
            assert {k: v for k, v in embedded.items() if k != "dct:issued"} == \
                {k: v for k, v in policy.items() if k != "dct:issued"}, (embedded, policy)
            for name in ("Content-Usage", "tdm-reservation", "tdm-policy"):
                assert name in h, (name, h)
            assert h["tdm-policy"] == base + "/rights/odrl", h
            # MCP: read_resource declares AI_RETRIEVAL by MCP; its HTTP answer carries the same headers.
            s, mh, mb = call("POST", "/v0/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                                "params": {"name": "read_resource", "arguments": {"id": resource}}},
                             {"Accept": "application/json, text/event-stream"})
            assert s == 200, mb
            result = json.loads(mb)["result"]
            if result["isError"]:
                assert result["structuredContent"]["error"]["reason"] == "USAGE_PROHIBITED", result
            else:
                assert result["structuredContent"]["odrl_policy"] == base + "/rights/odrl", result
            assert mh.get("Content-Usage") == h["Content-Usage"] and mh.get("tdm-policy") == h["tdm-policy"], mh
            verdicts[("MCP read_resource", None)] = not result["isError"]
            policies.append({"id": resource, "doc": policy})
            headers.append({"id": resource, "value": h["Content-Usage"]})
            cases.append({"resource": resource, "plain": plain, "verdicts": verdicts, "rights": rights,
                          "contracts": contracts, "headers": h, "policy": policy})

        # The search filter: the word is in the content alone, so a Resource is a hit exactly when
        # the declared use of its content is allowed (a refused one is searched by its title).
        def hits(purpose):
            extra = {"X-Usage-Purpose": purpose} if purpose else {}
            found, body = set(), {"query": "Tide", "page_size": 100}
            while True:
                status, _, answer = call("POST", "/v0/content-lake/search", body, extra)
                assert status == 200, answer
                page = json.loads(answer)
                found |= {hit["id"] for hit in page["hits"]}
                if page["exhausted"] or not page["hits"]:
                    return found
                body = {"search_id": page["search_id"], "page_size": 100}
        readable = {c["resource"] for c in cases if c["plain"]}
        deadline = time.monotonic() + 30
        while hits(None) != readable and time.monotonic() < deadline:
            time.sleep(0.05)  # the index follows the writes
        for c in cases:
            c["searched"] = {}
        for purpose in (None, "AI_RETRIEVAL", "AI_TRAINING", "AI_RETRIEVAL; method=MCP"):
            found = hits(purpose)
            for c in cases:
                c["searched"][purpose] = c["resource"] in found

        sample = policies[0]["doc"]
        broken = broken_documents(sample)
        for name, doc in broken.items():
            policies.append({"id": "broken: " + name, "doc": doc})
        headers.append({"id": "broken", "value": "train-ai=y,, search=n"})
        status, _, tdm = svc.request("GET", "/.well-known/tdmrep.json")
        assert status == 200, tdm
        tdmrep = [json.loads(tdm), [{"location": "/v0/content-lake/*", "tdm-reservation": 2}]]
        status, oh, offer = svc.request("GET", "/v0/rights/tdm-policy")
        assert status == 200 and oh["Content-Type"] == "application/ld+json", offer
        assert json.loads(tdm)[0]["tdm-policy"] == "/v0/rights/tdm-policy"

        checked = check_tools(modules, source, policies, headers, tdmrep)
        included_in = CORE_INCLUDED_IN + [tuple(p) for p in checked["includedIn"]]
        assert (CLX + "aiTraining", ODRL + "use") in included_in and (CLX + "aiRetrieval", ODRL + "use") in included_in

        failures = []
        for name in broken:
            if checked["policies"]["broken: " + name]["conforms"]:
                failures.append("SHACL accepted a policy broken on purpose: " + name)
        if checked["headers"]["broken"]["ok"]:
            failures.append("structured-headers accepted a broken Content-Usage")
        if not checked["tdmrep"][0]["ok"]:
            failures.append("tdmrep.json fails its schema: %s" % checked["tdmrep"][0]["errors"])
        if checked["tdmrep"][1]["ok"]:
            failures.append("ajv accepted a tdmrep.json broken on purpose")

        agreed = 0
        for case in cases:
            rid = case["resource"]
            result = checked["policies"][rid]
            if not result["conforms"]:
                failures.append("%s: SHACL: %s" % (rid, result["messages"][:3]))
                continue
            expanded = result["expanded"]
            at = now
            odrl_plain = permits(expanded, {"action": ODRL + "read", "channel": None, "at": at}, included_in) and \
                permits(expanded, {"action": ODRL + "display", "channel": None, "at": at}, included_in)
            checks = [("plain read", odrl_plain, case["plain"])]
            for (usage, method), served in case["verdicts"].items():
                if usage == "MCP read_resource":
                    request = {"action": ACTION["AI_RETRIEVAL"], "channel": CHANNEL["MCP"], "at": at}
                else:
                    request = {"action": ACTION[usage], "channel": CHANNEL.get(method), "at": at}
                checks.append(("%s/%s" % (usage, method), permits(expanded, request, included_in), served))
            for purpose, found in case["searched"].items():
                if purpose is None:
                    checks.append(("search", odrl_plain, found))
                    continue
                usage, _, method = purpose.partition("; method=")
                request = {"action": ACTION[usage], "channel": CHANNEL.get(method or None), "at": at}
                checks.append(("search as " + purpose, permits(expanded, request, included_in), found))
            for what, odrl_says, service_did in checks:
                if odrl_says != service_did:
                    failures.append("%s %s: the policy says %s, the service %s; rights %s" % (
                        rid, what, odrl_says, service_did, json.dumps(case["rights"]["usage_terms"])))
                else:
                    agreed += 1
            got, want = limits(expanded), expected_limits(case["rights"], case["contracts"], now)
            if got != want:
                failures.append("%s: territory/window constraints %s, rights and contracts say %s" % (rid, got, want))
            dict_ = checked["headers"][rid]
            if not dict_["ok"] or set(dict_["dict"]) != {"train-ai", "search"}:
                failures.append("%s: Content-Usage %r" % (rid, case["headers"]["Content-Usage"]))
                continue
            train, search = case["verdicts"][("AI_TRAINING", None)], case["verdicts"][("AI_RETRIEVAL", None)]
            if dict_["dict"] != {"train-ai": "y" if train else "n", "search": "y" if search else "n"}:
                failures.append("%s: Content-Usage %s, the service served training %s, retrieval %s" % (
                    rid, dict_["dict"], train, search))
            if case["headers"]["tdm-reservation"] != ("0" if train and search else "1"):
                failures.append("%s: tdm-reservation %s" % (rid, case["headers"]["tdm-reservation"]))
        kinds = {(c["plain"], c["verdicts"][("AI_TRAINING", None)], c["verdicts"][("AI_RETRIEVAL", None)],
                  c["verdicts"][("AI_RETRIEVAL", "MCP")]) for c in cases}
        print("%d verdicts agreed over %d Resources; %d kinds of outcome" % (agreed, len(cases), len(kinds)))
        # The generated mix must reach every outcome the property is about, or it proves little.
        for what, seen in (("a refused plain read", any(not c["plain"] for c in cases)),
                           ("an allowed training", any(c["verdicts"][("AI_TRAINING", None)] for c in cases)),
                           ("a channel-only retrieval", any(c["verdicts"][("AI_RETRIEVAL", "MCP")] and not
                                                           c["verdicts"][("AI_RETRIEVAL", None)] for c in cases)),
                           ("tdm-reservation 0", any(c["headers"]["tdm-reservation"] == "0" for c in cases))):
            if not seen:
                failures.append("the generated contracts never gave " + what)
        for f in failures[:40]:
            print("FAILED:", f)
        if failures:
            print("%d failures" % len(failures))
            sys.exit(1)
        print("ok")


if __name__ == "__main__":
    main()
