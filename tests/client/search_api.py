"""Search (spec 4.5.3, issue 14) end to end, as a client uses it: `contentlake serve`, Resources
written through the API, and POST /v0/content-lake/search over HTTP. Covers relevance, stemming,
filters, paging without repeats with writes between pages, layer 2 inside the query (grants, a
group grant), rights resolved per hit (a contract change needs no reindex; layer 3 withholds
snippets and content-only matches), session ownership, expiry, eviction, restart, bad queries,
and a SIGKILL during a write burst (every acknowledged write searchable exactly once).

Waiting is on conditions (the index lag), never on fixed sleeps.

Usage: search_api.py CONTENTLAKE_BINARY SOURCE_DIR"""

import json
import os
import random
import re
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Service, fetch  # noqa: E402

failures = []
TENANT = "t_search"
SETTINGS = {"CONTENTLAKE_SEARCH_BATCH_INTERVAL_MS": "20"}
# Run through HAProxy against two nodes (tests/client/through_cluster.sh): what is one node's alone
# (sessions in its memory, its index's files) is checked as the cluster has it, or in the one-node run.
CLUSTER = bool(os.environ.get("CL_TEST_CLUSTER"))


def check(cond, what, detail=""):
    if not cond:
        failures.append(what + (": " + str(detail)[:600] if detail else ""))
        print("FAIL", what, str(detail)[:600])


def body_of(answer):
    return json.loads(answer[2]) if answer[2] else {}


def reason(answer):
    return body_of(answer).get("error", {}).get("reason")


def eventually(probe, what, timeout=15.0):
    """Polls `probe` until it answers truthy (the index lag); answers its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value or time.monotonic() > deadline:
            check(value, "within %.0f s: %s" % (timeout, what))
            return value
        time.sleep(0.02)  # poll interval of the condition, not a wait for a guessed duration


def doc(*paragraphs):
    return {"format": "cl.content/1", "blocks": [
        {"type": "paragraph", "key": "p%d" % i, "children": [{"type": "span", "text": t}]} for i, t in enumerate(paragraphs)]}


class Client:
    def __init__(self, svc, sub="u_owner", tenant=TENANT, scopes="content-lake.read content-lake.write contracts.read contracts.write",
                 client_id=None):
        self.svc = svc
        self.token = svc.token(sub=sub, tenant=tenant, scopes=scopes, client_id=client_id)

    def call(self, method, path, body=None, headers=None):
        return self.svc.request(method, "/v0/content-lake" + path, self.token, body, headers)

    def create(self, title, *paragraphs, language="en", type_="ARTICLE", work=None):
        body = {"title": title, "type": type_, "language": language, "content": doc(*paragraphs)}
        if work:
            body["work_id"] = work
        r = self.call("POST", "/resources", body)
        assert r[0] == 201, r
        return body_of(r)["id"]

    def search(self, query=None, filter=None, page_size=None, search_id=None, headers=None, raw=None):
        body = raw if raw is not None else {}
        if raw is None:
            if query is not None:
                body["query"] = query
            if filter is not None:
                body["filter"] = filter
            if page_size is not None:
                body["page_size"] = page_size
            if search_id is not None:
                body["search_id"] = search_id
        return self.call("POST", "/search", body, headers)

    def hits(self, query, **kw):
        r = self.search(query, **kw)
        assert r[0] == 200, r
        return [h["id"] for h in body_of(r)["hits"]]

    def grant(self, rid, principal, role="reader"):
        r = self.call("PUT", "/resources/%s/access/%s" % (rid, principal), {"role": role})
        assert r[0] in (200, 201), r


def relevance_stemming_filters(owner):
    together = owner.create("Coast notes", "The spring tide came in over the rocks at dawn.")
    # BM25 alone ranks this one first (tide twice); the proximity bonus puts the words together first.
    apart = owner.create("Coast diary", "Spring was late this year; the tide was low, the tide was slow.")
    plural = owner.create("Almanac", "Tides of the northern harbour, tabled by month.")
    french = owner.create("Marées", "La marée de printemps monte vite.", language="fr")
    report = owner.create("Harbour report", "Dredging of the northern harbour.", type_="DATASET")
    eventually(lambda: owner.hits("dredging") == [report], "the last write is searchable")

    phrase = owner.hits('"spring tide"')
    check(phrase == [together], "a phrase finds only the document with the words together", phrase)
    words = owner.hits("spring tide")
    check(words[:1] == [together] and apart in words, "the words together rank above the words apart", words)
    stemmed = owner.hits("tide")
    check(plural in stemmed, "English stemming: tide finds tides", stemmed)
    check(together in owner.hits("tides"), "and tides finds tide")
    check(owner.hits("marée", filter={"language": ["fr"]}) == [french], "French stemming with a French filter")
    check(owner.hits("harbour", filter={"type": ["DATASET"]}) == [report], "filter.type")
    check(owner.hits("harbour", filter={"language": ["fr"]}) == [], "filter.language leaves the English ones out")
    check(sorted(owner.hits("coast OR harbour")) == sorted([together, apart, plural, report]), "OR")
    check(owner.hits("harbour -dredging") == [plural], "-term excludes")
    check(owner.hits("harbour NOT dredging") == [plural], "NOT excludes")
    check(owner.hits("title:harbour") == [report], "title: searches titles only")
    # Unbalanced brackets and quotes are read leniently, as documented: an unclosed quote runs to the
    # end of the query, an unclosed bracket closes there, a stray closing one is ignored.
    phrase = owner.hits('"spring tide"')
    check(phrase and owner.hits('"spring tide') == phrase, "an unclosed quote runs to the end", phrase)
    check(owner.hits("(harbour -dredging") == [plural], "an unclosed bracket closes at the end")
    check(sorted(owner.hits("harbour)")) == sorted(owner.hits("harbour")), "a stray closing bracket is ignored")

    r = owner.search("spring tide")
    page = body_of(r)
    check(r[1].get("Cache-Control") == "no-store", "search answers are not cached", r[1])
    check(page["search_id"].startswith("srch_") and page["exhausted"] is True, "a srch_ session; all answered", page)
    check(page["total_estimate"] == len(page["hits"]), "total_estimate is exact once exhausted", page)
    hit = page["hits"][0]
    check(set(hit) == {"id", "title", "type", "language", "work_id", "score", "snippet", "rights"}, "a hit's members", hit)
    scores = re.findall(rb'"score":([^,}]*)', r[2])
    check(scores and all(re.fullmatch(rb"-?[0-9]+(\.[0-9]+)?", s) for s in scores),
          "scores are plain decimals, never with an exponent", scores)
    check("\u00abspring\u00bb" in hit["snippet"] and "\u00abtide\u00bb" in hit["snippet"], "matched terms between « and »", hit)
    check(hit["work_id"] is None and hit["rights"]["usable"] is False, "a staged Resource: work_id null, rights not usable", hit)

    markup = owner.create("Markup", "Compare <b>salinity</b> & density; 5 < 7.")
    found = eventually(lambda: body_of(owner.search("salinity"))["hits"], "a write with markup characters")
    if found:
        check(found[0]["id"] == markup and "<b>" in found[0]["snippet"] and "&lt;" not in found[0]["snippet"]
              and "&amp;" not in found[0]["snippet"], "snippets are the text itself, not HTML-escaped", found[0])

    work = body_of(owner.call("POST", "/works", {"title": "Sea atlas"}))["id"]
    in_work = owner.create("Atlas plate", "Currents of the northern harbour.", work=work)
    eventually(lambda: owner.hits("currents") == [in_work], "a Resource of a Work is searchable")
    check(owner.hits("harbour", filter={"work_id": work}) == [in_work], "filter.work_id")
    return work


def paging_without_repeats(owner):
    base = [owner.create("Lighthouse %d" % i, "The lighthouse keeper logged the beacon, entry %d." % i) for i in range(30)]
    eventually(lambda: body_of(owner.search("beacon", page_size=100))["total_estimate"] == 30, "30 documents indexed")
    first = body_of(owner.search("beacon", page_size=5))
    sid = first["search_id"]
    seen = [h["id"] for h in first["hits"]]
    added = []
    for page in range(4):
        # Between pages: a new document that outranks everything (beacon in its title and text), and
        # an answered one changed so that it would rank first again.
        added.append(owner.create("Beacon beacon %d" % page, "beacon beacon beacon, a beacon at night %d" % page))
        changed = seen[0]
        current = body_of(owner.call("GET", "/resources/" + changed))
        patch = owner.call("PATCH", "/resources/" + changed, {"title": "Beacon beacon beacon",
                                                              "update_token": current["update_token"]},
                           {"Content-Type": "application/merge-patch+json"})
        check(patch[0] == 200, "a patch between pages", patch)
        eventually(lambda: added[-1] in owner.hits("beacon beacon beacon"), "the new document is indexed")
        nxt = body_of(owner.search(search_id=sid, page_size=5))
        ids = [h["id"] for h in nxt["hits"]]
        check(len(ids) == 5, "a full page %d" % (page + 2), nxt)
        check(not set(ids) & set(seen), "page %d repeats no hit" % (page + 2), (ids, seen))
        check(added[-1] in ids, "a new document that outranks the rest comes on the next page", (ids, added[-1]))
        seen += ids
    rest = body_of(owner.search(search_id=sid, page_size=100))
    seen += [h["id"] for h in rest["hits"]]
    check(rest["exhausted"] and len(seen) == len(set(seen)), "the session ends, nothing repeated", rest)
    check(set(seen) == set(base) | set(added), "every matching document came exactly once", (len(seen), len(base) + len(added)))
    check(body_of(owner.search(search_id=sid))["hits"] == [], "an exhausted session answers no more hits")


def layer2(svc, owner, directory_path):
    stranger = Client(svc, "u_stranger")
    member = Client(svc, "u_member")
    other_tenant = Client(svc, "u_owner", tenant="t_other")
    rid = owner.create("Estuary survey", "Mudflats and the estuary channel.")
    eventually(lambda: owner.hits("mudflats") == [rid], "the owner finds their document")
    check(stranger.hits("mudflats") == [], "no grant: no hit")
    page = body_of(stranger.search("mudflats OR estuary OR channel"))
    check(page["total_estimate"] == 0 and page["exhausted"], "no grant: not even a count", page)
    check(other_tenant.hits("mudflats") == [], "another tenant: no hit")
    check(member.hits("mudflats") == [], "not yet granted to the group")
    owner.grant(rid, "g_survey")
    eventually(lambda: member.hits("mudflats") == [rid], "a group grant makes the document appear for its member")
    check(stranger.hits("mudflats") == [], "the group grant is the group's only")
    owner.grant(rid, "u_stranger")
    eventually(lambda: stranger.hits("mudflats") == [rid], "a direct grant makes it appear")
    r = owner.call("DELETE", "/resources/%s/access/u_stranger" % rid)
    check(r[0] == 204, "revoke", r)
    check(stranger.hits("mudflats") == [], "a revoked grant: gone from the next answer, whatever the index lag")


def layer3(svc, owner):
    reader = Client(svc, "u_rights")
    work = body_of(owner.call("POST", "/works", {"title": "Tidal atlas"}))["id"]
    # The title says "atlas"; only the content says "bathymetry".
    rid = owner.create("Tidal atlas", "Bathymetry of the sound, with soundings.", work=work)
    owner.grant(rid, "u_rights")
    eventually(lambda: reader.hits("bathymetry") == [rid], "searchable by its reader")
    hit = body_of(reader.search("bathymetry"))["hits"][0]
    check("snippet" in hit and hit["rights"]["usable"] is False, "no contract: readable, a snippet, not usable", hit)
    check(reader.hits("bathymetry", filter={"usable": True}) == [], "usable: true leaves out what has no contract")

    def contract(usage_terms):
        return owner.svc.request("POST", "/v0/contracts", owner.token, {
            "title": "Atlas licence", "status": "ACTIVE", "valid_from": "2020-01-01T00:00:00Z", "work_ids": [work],
            "territorial_rights": [{"worldwide": True, "status": "PERMITTED"}], "usage_terms": usage_terms})

    created = contract([{"usage_type": "ACCESS", "status": "PERMITTED"}, {"usage_type": "DISPLAY", "status": "PERMITTED"},
                        {"usage_type": "AI_RETRIEVAL", "status": "PERMITTED"}])
    check(created[0] == 201, "a permitting contract", created)
    # No reindex: the next answer resolves the new rights.
    hit = body_of(reader.search("bathymetry"))["hits"][0]
    check(hit["rights"]["usable"] is True and "snippet" in hit, "a contract shows on the next answer, no reindex", hit)
    check(reader.hits("bathymetry", filter={"usable": True}) == [rid], "usable: true keeps it now")
    retrieval = {"X-Usage-Purpose": "AI_RETRIEVAL"}
    training = {"X-Usage-Purpose": "AI_TRAINING"}
    check(reader.hits("bathymetry", filter={"usable": True}, headers=retrieval) == [rid], "usable for the declared purpose")
    check(reader.hits("bathymetry", filter={"usable": True}, headers=training) == [], "not usable for another purpose")
    # A declared purpose the rights do not permit: the content-only match is left out, a title match
    # is answered without its snippet.
    check(reader.hits("bathymetry", headers=training) == [], "a content-only match is not answered to a refused use")
    titled = body_of(reader.search("atlas", headers=training))["hits"]
    check([h["id"] for h in titled] == [rid] and "snippet" not in titled[0], "a title match comes without snippet", titled)

    # A new version that prohibits reading: the same for plain reads, at once.
    current = body_of(owner.svc.request("GET", "/v0/contracts/" + body_of(created)["id"], owner.token))
    prohibit = owner.svc.request("POST", "/v0/contracts/%s/versions" % current["id"], owner.token, {
        "title": "Atlas licence", "status": "ACTIVE", "valid_from": "2020-01-01T00:00:00Z", "work_ids": [work],
        "territorial_rights": [{"worldwide": True, "status": "PERMITTED"}],
        "usage_terms": [{"usage_type": "ACCESS", "status": "PROHIBITED"}, {"usage_type": "DISPLAY", "status": "PROHIBITED"}],
        "update_token": current["update_token"]})
    check(prohibit[0] == 201, "a prohibiting version", prohibit)
    check(reader.hits("bathymetry") == [], "prohibited: a content-only match is not answered")
    titled = body_of(reader.search("tidal atlas"))["hits"]
    check([h["id"] for h in titled] == [rid] and "snippet" not in titled[0], "prohibited: the title match, no snippet", titled)
    if titled:
        usage = {t["usage_type"]: t["status"] for t in titled[0]["rights"]["usage_terms"]}
        check(usage.get("ACCESS") == "PROHIBITED", "the hit's rights say why", titled[0]["rights"])
    check(reader.hits("tidal atlas", filter={"usable": True}) == [], "usable: true leaves it out")
    got = reader.call("GET", "/resources/" + rid)
    check(got[0] == 403 and reason(got) == "USAGE_PROHIBITED", "and GET resource agrees", got)


def lists_follow_the_tenants_contracts(svc):
    """Search asks its title-only list only where some contract of the tenant can refuse the use,
    and its full list only where some can allow it: each answer sees a contract written just
    before it, in a tenant that had none."""
    owner = Client(svc, "u_owner", tenant="t_lists")
    work = body_of(owner.call("POST", "/works", {"title": "Harbour"}))["id"]
    rid = owner.create("Harbour ledger", "Osmium figures for the quarter.", work=work)
    training = {"X-Usage-Purpose": "AI_TRAINING"}
    eventually(lambda: owner.hits("osmium") == [rid], "indexed")
    hit = body_of(owner.search("harbour"))["hits"]
    check([h["id"] for h in hit] == [rid] and "snippet" in hit[0], "no contract: read in full", hit)
    check(owner.hits("osmium", headers=training) == [], "no permission: a content-only match is not answered")
    hit = body_of(owner.search("harbour", headers=training))["hits"]
    check([h["id"] for h in hit] == [rid] and "snippet" not in hit[0], "no permission: found by its title", hit)

    def contract(usage_terms):
        made = svc.request("POST", "/v0/contracts", owner.token, {
            "title": "Harbour", "status": "ACTIVE", "valid_from": "2020-01-01T00:00:00Z", "work_ids": [work],
            "territorial_rights": [{"worldwide": True, "status": "PERMITTED"}], "usage_terms": usage_terms})
        check(made[0] == 201, "contract written", made)

    contract([{"usage_type": "AI_TRAINING", "status": "PERMITTED"}])
    hit = body_of(owner.search("osmium", headers=training))["hits"]
    check([h["id"] for h in hit] == [rid] and "snippet" in hit[0], "the first permission: found by its content at once", hit)
    contract([{"usage_type": "DISPLAY", "status": "PROHIBITED"}])
    check(owner.hits("osmium") == [], "the first prohibition: a content-only match is not answered at once")
    hit = body_of(owner.search("harbour ledger"))["hits"]
    check([h["id"] for h in hit] == [rid] and "snippet" not in hit[0], "the first prohibition: found by its title at once", hit)


def refused_content_is_never_queried(svc):
    """For a Resource whose content layer 3 refuses the caller, the whole query (words, phrases,
    `-word`, `NOT`, `title:`) is evaluated against its title alone and ranked by that: two tenants
    that differ only in such a Resource's content get the same answers (hits, order, scores,
    total_estimate) for every query form."""
    def tenant(name, secret_text):
        owner = Client(svc, "u_owner", tenant=name)
        reader = Client(svc, "u_refused", tenant=name)
        work = body_of(owner.call("POST", "/works", {"title": "Closed"}))["id"]
        made = owner.svc.request("POST", "/v0/contracts", owner.token, {
            "title": "Closed", "status": "ACTIVE", "valid_from": "2020-01-01T00:00:00Z", "work_ids": [work],
            "territorial_rights": [{"worldwide": True, "status": "PERMITTED"}],
            "usage_terms": [{"usage_type": "ACCESS", "status": "PROHIBITED"}, {"usage_type": "DISPLAY", "status": "PROHIBITED"}]})
        assert made[0] == 201, made
        refused = owner.create("Cobalt quarterly report", secret_text, work=work)
        other = owner.create("Cobalt quarterly report", "Minutes of the meeting, nothing else.", work=work)
        readable = owner.create("Cobalt open notes", "A tangerine grove, cobalt paint and a quarterly password.")
        for rid in (refused, other, readable):
            owner.grant(rid, "u_refused")
        eventually(lambda: len(reader.hits("cobalt", page_size=10)) == 3, "tenant %s indexed with its grants" % name)
        return reader, {refused: "R", other: "S", readable: "O"}

    reader_a, label_a = tenant("t_layer3a", "The password is tangerine; the vault code is seven.")
    reader_b, label_b = tenant("t_layer3b", "Nothing of note in here at all.")
    # Scores hang on the statistics of the whole index that answers. On several nodes each has its
    # own, and a tenant's position says nothing of the other tenant's writes: wait until every
    # node's index applied everything (nothing is written from here on).
    nodes = [n.admin_port for n in svc.cluster.nodes] if hasattr(svc, "cluster") else [svc.admin_port]
    eventually(lambda: all(b"\ncontentlake_search_index_lag_changes 0\n" in fetch("http://127.0.0.1:%d/metrics" % p)[2]
                           for p in nodes), "every node's index applied both tenants' writes")
    queries = ["cobalt", "cobalt -tangerine", "cobalt NOT tangerine", 'cobalt -"password is tangerine"',
               "title:cobalt -tangerine", "title:cobalt -vault", "tangerine", '"password is tangerine"', "vault",
               "cobalt AND tangerine", "cobalt OR tangerine", "cobalt tangerine", "quarterly -password",
               "cobalt AND NOT (vault OR note)", "report", "(cobalt OR vault) -minutes"]

    # R and S are refused alike and titled alike: they tie, in an order of their ids, so both read
    # "T" here; each answer must hold both or neither.
    def seen(reader, labels, query, **kw):
        r = reader.search(query, **kw)
        check(r[0] == 200, "refused caller: %r answers 200" % query, r)
        b = body_of(r)
        hits = [(labels.get(h["id"], "?"), h["score"], "snippet" in h) for h in b.get("hits", [])]
        return [("T" if l in "RS" else l, sc, sn) for l, sc, sn in hits], b.get("total_estimate"), b.get("exhausted"), \
            b.get("search_id"), sorted(l for l, _, _ in hits if l in "RS")

    for q in queries:
        a, b = seen(reader_a, label_a, q, page_size=50), seen(reader_b, label_b, q, page_size=50)
        check(a[:3] == b[:3], "refused content does not change the answer to %r" % q, (a[:3], b[:3]))
        check(a[4] in ([], ["R", "S"]) and b[4] in ([], ["R", "S"]), "both refused Resources or neither (%r)" % q, (a[4], b[4]))
        check(not any(snip for label, _, snip in a[0] if label == "T"), "refused hits carry no snippet (%r)" % q, a[0])
    # Where the content may be used, it counts: the readable Resource's words exclude it.
    check([label_a[i] for i in reader_a.hits("cobalt -tangerine")] == ["R", "S"] or
          [label_a[i] for i in reader_a.hits("cobalt -tangerine")] == ["S", "R"], "readable content still excludes")
    # Paging with one hit a page walks the same sequence in both tenants. (Where a tie of titles
    # leaves a readable Resource among the refused ones in the title list, the last page may be an
    # empty one: when comes down to the ids, not the content.)
    for q in ("cobalt", "cobalt -tangerine", "quarterly OR vault"):
        walks = []
        for reader, labels in ((reader_a, label_a), (reader_b, label_b)):
            walked, total, ids, sid = [], None, [], None
            for _ in range(6):
                hits, total, done, sid, _ = seen(reader, labels, q, page_size=1) if sid is None else \
                    seen(reader, labels, None, page_size=1, search_id=sid)
                walked += hits
                if done:
                    break
            walks.append((walked, total, done))
        check(walks[0] == walks[1], "page by page the same for %r" % q, walks)
        check(walks[0][1] == len(walks[0][0]) and walks[0][2], "the walk ends exhausted with an exact count (%r)" % q, walks[0])


def sessions(svc, owner):
    for i in range(3):
        owner.create("Buoy %d" % i, "A mooring buoy, number %d." % i)
    eventually(lambda: len(owner.hits("mooring")) == 3, "three buoys indexed")
    sid = body_of(owner.search("mooring", page_size=1))["search_id"]
    other = Client(svc, "u_other")
    r = other.search(search_id=sid)
    check(r[0] == 404 and reason(r) == "SEARCH_SESSION_NOT_FOUND", "another principal's search_id: 404", r)
    same_sub_other_client = Client(svc, "u_owner", client_id="a_other_app")
    r = same_sub_other_client.search(search_id=sid)
    check(r[0] == 404 and reason(r) == "SEARCH_SESSION_NOT_FOUND", "the same person through another client: 404", r)
    other_tenant = Client(svc, "u_owner", tenant="t_other")
    r = other_tenant.search(search_id=sid)
    check(r[0] == 404 and reason(r) == "SEARCH_SESSION_NOT_FOUND", "the same sub in another tenant: 404", r)
    r = owner.search(search_id="srch_nonexistent")
    check(r[0] == 404 and reason(r) == "SEARCH_SESSION_NOT_FOUND" and "srch_nonexistent" not in r[2].decode(),
          "an unknown search_id: 404, not echoed", r)
    check(owner.search(search_id=sid)[0] == 200, "the owner continues it")
    return sid


def bad_requests(svc, owner):
    def refused(answer, status, why, what):
        check(answer[0] == status and reason(answer) == why, what, answer)
    refused(owner.search(""), 400, "INVALID_ARGUMENT", "an empty query")
    refused(owner.search("   \t"), 400, "INVALID_ARGUMENT", "a query of spaces")
    refused(owner.search("é" * 1001), 400, "LIMIT_EXCEEDED", "1001 characters")
    check(owner.search("é" * 1000)[0] == 200, "1000 characters (2000 bytes) are fine")
    refused(owner.search("tide AND ("), 400, "QUERY_SYNTAX", "an operator with nothing after it")
    refused(owner.search("tide OR"), 400, "QUERY_SYNTAX", "a dangling OR")
    refused(owner.search("NOT tide"), 400, "QUERY_SYNTAX", "NOT alone")
    check(owner.search('"')[0] == 200 and body_of(owner.search('"'))["hits"] == [], "a query without words finds nothing")
    refused(owner.search(raw={}), 400, "INVALID_ARGUMENT", "no query")
    refused(owner.search(raw={"query": 5}), 400, "INVALID_ARGUMENT", "a query that is not a string")
    refused(owner.search("tide", page_size=0), 400, "INVALID_ARGUMENT", "page_size 0")
    refused(owner.search("tide", page_size=101), 400, "INVALID_ARGUMENT", "page_size 101")
    refused(owner.search("tide", page_size="5"), 400, "INVALID_ARGUMENT", "page_size as a string")
    refused(owner.search(raw={"query": "tide", "sort": "date"}), 400, "INVALID_ARGUMENT", "an unknown member")
    refused(owner.search("tide", filter={"colour": ["red"]}), 400, "INVALID_ARGUMENT", "an unknown filter")
    refused(owner.search("tide", filter={"type": "ARTICLE"}), 400, "INVALID_ARGUMENT", "filter.type not an array")
    refused(owner.search("tide", filter={"usable": "yes"}), 400, "INVALID_ARGUMENT", "filter.usable not a boolean")
    refused(owner.search(raw={"search_id": "srch_x", "query": "tide"}), 400, "INVALID_ARGUMENT", "search_id with a query")
    refused(owner.search("tide", headers={"X-Usage-Purpose": "; nonsense"}), 400, "INVALID_ARGUMENT", "a malformed purpose")
    r = svc.request("POST", "/v0/content-lake/search", None, {"query": "tide"})
    check(r[0] == 401 and reason(r) == "TOKEN_MISSING", "no token: 401", r)
    writer_only = Client(svc, "u_owner", scopes="content-lake.write")
    refused(writer_only.search("tide"), 403, "SCOPE_MISSING", "without content-lake.read")
    r = svc.request("POST", "/v0/content-lake/search", owner.token, b"query=tide", {"Content-Type": "text/plain"})
    check(r[0] == 415, "not JSON: 415", r)
    r = owner.search("tide", headers={"Idempotency-Key": "search-1"})
    check(r[0] == 200, "an Idempotency-Key is accepted", r)
    log = "".join(svc.log)
    check(owner.token not in log, "the token is not logged")


def expiry_and_eviction(binary, source):
    settings = dict(SETTINGS, CONTENTLAKE_SEARCH_SESSION_TTL_SECONDS="1", CONTENTLAKE_SEARCH_MAX_SESSIONS_PER_PRINCIPAL="2",
                    CONTENTLAKE_SEARCH_MAX_SESSIONS="3", CONTENTLAKE_SEARCH_BATCH_INTERVAL_MS="1000")
    with Service(binary, source, settings) as svc:
        owner = Client(svc)
        owner.create("Pier", "The pier and its pilings.")
        eventually(lambda: owner.hits("pilings"), "indexed")
        sid = body_of(owner.search("pilings"))["search_id"]
        # Every probe of a session touches it (its idle time restarts), so probes are spaced by more
        # than the TTL; the condition is the session's expiry, checked up to three times.
        for _ in range(3):
            time.sleep(1.5)
            r = owner.search(search_id=sid)
            if r[0] != 200:
                break
        check(r[0] == 404 and reason(r) == "SEARCH_SESSION_EXPIRED", "an idle session expires: 404 SEARCH_SESSION_EXPIRED", r)
        r = Client(svc, "u_other").search(search_id=sid)
        check(reason(r) == "SEARCH_SESSION_NOT_FOUND", "someone else learns nothing of its expiry", r)
        # An index that lags (search.batch_interval_ms = 1000 here) never shows a Resource whose grant
        # was revoked: grants are read again for every candidate.
        reader = Client(svc, "u_reader")
        rid = owner.create("Jetty", "The jetty's barnacles.")
        owner.grant(rid, "u_reader")
        eventually(lambda: reader.hits("barnacles") == [rid], "the reader finds it once indexed")
        check(owner.call("DELETE", "/resources/%s/access/u_reader" % rid)[0] == 204, "revoke")
        page = body_of(reader.search("barnacles"))
        check(page["hits"] == [] and page["exhausted"], "revoked: no hit while the index still lists the grant", page)
        # Per principal: a third session evicts the least recently used of the two.
        a = body_of(owner.search("pilings"))["search_id"]
        b = body_of(owner.search("pier"))["search_id"]
        check(owner.search(search_id=a)[0] == 200, "a used again: b is now the least recently used")
        c = body_of(owner.search("pilings pier"))["search_id"]
        if CLUSTER:
            # On PostgreSQL the bounds (per principal and in all) are applied by each node's
            # sweeper every few seconds (storage tests [sessions] check them on both backends, the
            # actors_pg test the sweeper's), not at the next request; probing b here would touch it
            # and make another session the one to go.
            check(owner.search(search_id=a)[0] == 200 and owner.search(search_id=c)[0] == 200, "the newest stay")
            _, _, text = fetch("http://127.0.0.1:%d/metrics" % svc.admin_port)
            sweeps = re.search(r"^contentlake_search_session_sweeps_total ([0-9.e+]+)$", text.decode(), re.M)
            check(sweeps and float(sweeps.group(1)) >= 1, "the node's sweeper runs (its counter)", sweeps)
            print("several nodes: the bounds on sessions are the sweeper's (tested in storage_pg, actors_pg)")
            return
        r = owner.search(search_id=b)
        check(r[0] == 404 and reason(r) == "SEARCH_SESSION_NOT_FOUND", "the least recently used session was evicted", r)
        check(owner.search(search_id=a)[0] == 200 and owner.search(search_id=c)[0] == 200, "the others stay")
        # In all: two more principals' sessions pass search.max_sessions = 3.
        d = body_of(Client(svc, "u_d").search("pier"))["search_id"]
        check(len(d) > 5, "a session of u_d")
        Client(svc, "u_e").search("pier")
        r = owner.search(search_id=a)  # a and c were the oldest two; a goes first
        check(reason(r) == "SEARCH_SESSION_NOT_FOUND", "past search.max_sessions the least recently used goes", r)


def restart_forgets_sessions(svc, owner, sid):
    svc.shutdown()
    svc.restart()
    r = owner.search(search_id=sid)
    if CLUSTER:  # sessions live in PostgreSQL: a restart of every node keeps them
        check(r[0] == 200, "several nodes: a search_id outlives a restart of every node", r)
    else:
        check(r[0] == 404 and reason(r) == "SEARCH_SESSION_NOT_FOUND", "after a restart a search_id is 404", r)
    check(owner.hits("mooring"), "the index is still there after a restart")


def crash_during_write_burst(binary, source):
    svc = Service(binary, source, dict(SETTINGS, CONTENTLAKE_SEARCH_BATCH_INTERVAL_MS="200"))
    try:
        owner = Client(svc)
        acknowledged = []
        lock = threading.Lock()
        stop = threading.Event()

        def writer(n):
            i = 0
            while not stop.is_set():
                try:
                    r = owner.call("POST", "/resources", {"title": "Burst %d-%d" % (n, i), "type": "ARTICLE",
                                                          "language": "en", "content": doc("zephyrburst entry %d %d" % (n, i))})
                except Exception:
                    return  # the service is gone
                if r[0] == 201:
                    with lock:
                        acknowledged.append(body_of(r)["id"])
                i += 1
        threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        eventually(lambda: len(acknowledged) >= 150, "the burst is under way")
        svc.kill()
        stop.set()
        for t in threads:
            t.join()
        svc.restart()
        owner = Client(svc)
        listed = []
        token = None
        while True:
            r = owner.call("GET", "/resources?page_size=100" + ("&page_token=" + token if token else ""))
            page = body_of(r)
            listed += [x["id"] for x in page["resources"] if x["title"].startswith("Burst ")]
            token = page.get("next_page_token")
            if not token:
                break
        check(set(acknowledged) <= set(listed), "every acknowledged write survived", (len(acknowledged), len(listed)))

        def all_found():
            ids, sid = [], None
            while True:
                page = body_of(owner.search(search_id=sid, page_size=100) if sid else owner.search("zephyrburst", page_size=100))
                sid = page["search_id"]
                ids += [h["id"] for h in page["hits"]]
                if page["exhausted"]:
                    return ids
        found = eventually(lambda: len(all_found()) >= len(listed), "the index catches up after the crash", timeout=30)
        ids = all_found()
        check(len(ids) == len(set(ids)), "every write is indexed once (hit ids unique)", len(ids) - len(set(ids)))
        check(sorted(ids) == sorted(listed), "the hits are exactly the stored Resources", (len(ids), len(listed)))
        check(set(acknowledged) <= set(ids), "every acknowledged write is searchable", len(set(acknowledged) - set(ids)))
        print("crash test: %d acknowledged, %d stored, %d found" % (len(acknowledged), len(listed), len(ids)))
        del found

        # A damaged index (a shard's version file overwritten), then a missing one: each is rebuilt
        # from the record store in the background, with a log line; meanwhile the rest of the API is
        # served and search answers 503 SEARCH_INDEX_REBUILDING (with Retry-After) and /readyz says
        # search has not caught up; then search answers every stored Resource again. One Resource
        # per rebuild page (one commit each) keeps the rebuild going for a while after start.
        svc.env["CONTENTLAKE_SEARCH_BATCH_MAX_CHANGES"] = "1"
        for damage, line in (("damaged", "rebuilding it from the record store in the background"),
                             ("missing", "is missing; rebuilding it")):
            svc.shutdown()
            index_dir = os.path.join(svc.dir.name, "search")
            if damage == "damaged":
                with open(os.path.join(index_dir, "shard-1", "iamglass"), "wb") as f:
                    f.write(b"not a xapian database")
            else:
                shutil.rmtree(index_dir)
            logged = len(svc.log)
            svc.restart()
            owner = Client(svc)
            check(any(line in entry for entry in svc.log[logged:]), "a %s index is rebuilt at start, and says so" % damage)
            refused = []

            def rebuilt():
                r = owner.search("zephyrburst", page_size=100)
                if r[0] == 503:
                    ready = json.loads(fetch("http://127.0.0.1:%d/readyz" % svc.admin_port)[2])
                    refused.append((reason(r), r[1].get("retry-after") or r[1].get("Retry-After"),
                                    ready["search_index_caught_up"]))
                    return None
                check(r[0] == 200, "search during a rebuild answers 200 or 503", r[:2])
                return True
            listing = owner.call("GET", "/resources?page_size=10")
            check(listing[0] == 200, "the rest of the API is served during the rebuild (%s)" % damage, listing[:2])
            eventually(rebuilt, "the %s index is rebuilt" % damage, timeout=60)
            # ~170 one-Resource commits: the first search, sent as the service starts listening,
            # lands long before the rebuild's end.
            check(refused, "a search early in the rebuild is refused, not answered from a partial index (%s)" % damage)
            check(all(x[:2] == ("SEARCH_INDEX_REBUILDING", "5") for x in refused),
                  "searches during the rebuild are 503 SEARCH_INDEX_REBUILDING with Retry-After: 5", refused[:3])
            # /readyz is read just after each refusal: only the last may see the rebuild done since.
            check(not any(x[2] for x in refused[:-1]), "/readyz says search has not caught up during the rebuild", refused)
            print("rebuild (%s): %d searches answered 503 SEARCH_INDEX_REBUILDING before it completed" % (damage, len(refused)))
            ids = all_found()
            check(sorted(ids) == sorted(listed), "the rebuilt (%s) index holds exactly the stored Resources" % damage,
                  (len(ids), len(listed)))
    finally:
        svc.stop()


def common_word_phrases(binary, source):
    """Past 1,000 Resources the index chooses its common words and answers their two-word phrases
    from word pairs: the same Resources as positions would give (the words together, never across
    the title and the text), ranked by how often the phrase stands in each, for their owner only."""
    svc = Service(binary, source, SETTINGS)
    try:
        owner = Client(svc)
        rng = random.Random(14)
        common = ["sea", "wave", "rock", "sand"]

        def text():
            return " ".join(common[rng.randrange(4)] if rng.random() < 0.8 else "rare%d" % rng.randrange(50)
                            for _ in range(12))
        # A title ending in "sea" over a text starting with "wave": not the phrase "sea wave".
        bodies = [("Note sea", "wave " + text()) for _ in range(1100)]
        bodies.append(("Thrice", "sea wave sea wave sea wave rare1 rare2 rare3 rare4 rare5 rare6 rare7"))
        bodies.append(("Once", "sea wave rare1 rare2 rare3 rare4 rare5 rare6 rare7 rare8 rare9 rare10 rare11"))
        ids = [None] * len(bodies)

        def writer(n):
            for i in range(n, len(bodies), 8):
                ids[i] = owner.create(bodies[i][0], bodies[i][1])
        threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

        def holding(words):
            out = set()
            for rid, (title, body) in zip(ids, bodies):
                for field in (title.lower().split(), body.split()):
                    if any(field[i:i + len(words)] == words for i in range(len(field))):
                        out.add(rid)
            return out

        def all_hits(client, query):
            found, sid = [], None
            while True:
                r = client.search(search_id=sid, page_size=100) if sid else client.search(query, page_size=100)
                check(r[0] == 200, "a phrase search answers 200", r[:2])
                page = body_of(r)
                sid = page["search_id"]
                found += [h["id"] for h in page["hits"]]
                if page["exhausted"]:
                    return found
        eventually(lambda: len(all_hits(owner, "sea")) == len(ids), "every Resource is indexed",
                   timeout=60)
        for phrase in (["sea", "wave"], ["wave", "sea"], ["rock", "rock"], ["sand", "rock", "sea"], ["sea", "rare7"]):
            found = all_hits(owner, '"%s"' % " ".join(phrase))
            check(len(found) == len(set(found)), "no hit twice for %s" % phrase)
            check(set(found) == holding(phrase), "the phrase %s finds exactly the Resources holding it" % phrase,
                  (len(found), len(holding(phrase))))
        ranked = all_hits(owner, '"sea wave"')
        check(ranked.index(ids[-2]) < ranked.index(ids[-1]), "a phrase three times ranks above it once, at equal length")
        stranger = Client(svc, sub="u_stranger")
        check(all_hits(stranger, '"sea wave"') == [], "a principal without a grant finds none of them")
        print("common-word phrases: %d Resources, \"sea wave\" in %d" % (len(ids), len(holding(["sea", "wave"]))))
    finally:
        svc.stop()


def main():
    binary, source = sys.argv[1], sys.argv[2]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"version": "1", "groups": [{"id": "g_survey", "tenant_id": TENANT, "members": ["u_member"]}]}, f)
        directory = f.name
    settings = dict(SETTINGS, CONTENTLAKE_ACCESS_DIRECTORY_FILE=directory)
    svc = Service(binary, source, settings)
    try:
        owner = Client(svc)
        relevance_stemming_filters(owner)
        paging_without_repeats(owner)
        layer2(svc, owner, directory)
        layer3(svc, owner)
        refused_content_is_never_queried(svc)
        lists_follow_the_tenants_contracts(svc)
        sid = sessions(svc, owner)
        bad_requests(svc, owner)
        restart_forgets_sessions(svc, owner, sid)
    finally:
        svc.stop()
        os.unlink(directory)
    expiry_and_eviction(binary, source)
    common_word_phrases(binary, source)
    if CLUSTER:
        print("several nodes: a node's damaged or missing index files are checked in the one-node run")
    else:
        crash_during_write_burst(binary, source)
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("search API: all checks passed")


if __name__ == "__main__":
    main()
