"""The blob routes (spec 4.4, 3.2) end to end, as a client uses them: `contentlake serve` with its
embedded object store, the API over HTTP, and the bytes PUT to and GET from presigned URLs with a
plain HTTP client (urllib: no AWS library, no extra header). Ends by grepping everything the
service logged for presigned signatures and the store's secret.

Usage: blobs_api.py CONTENTLAKE_BINARY SOURCE_DIR [STORE]
STORE: `embedded` (default); `s3:S3_TEST_SERVER` runs the same tests with `blobs.backend = s3` against
a separate S3 service (our embedded store's listener alone, which verifies SigV4); `s3rver:DIR`
against s3rver from npm (installed into DIR), for what s3rver implements."""

import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ExternalStore, Service, fetch  # noqa: E402

MIB = 1 << 20
PART = MIB  # set by main(): an S3 service needs parts of 5 MiB
SETTINGS = {
    # Small parts so that a multipart upload is a few MiB (the embedded store's test settings).
    "CONTENTLAKE_BLOBS_MULTIPART_THRESHOLD_BYTES": str(2 * MIB),
    "CONTENTLAKE_BLOBS_PART_SIZE_BYTES": str(MIB),
    "CONTENTLAKE_BLOBS_MAX_BLOB_BYTES": str(64 * MIB),
    "CONTENTLAKE_LOG_ACCESS": "true",  # the access logs must not show URLs' signatures either
}
failures = []
STORE = "embedded"  # set by main(): embedded, s3 or s3rver


def check(cond, what, detail=""):
    if not cond:
        failures.append(what + (": " + str(detail)[:400] if detail else ""))
        print("FAIL", what, str(detail)[:400])


def sha(data):
    return hashlib.sha256(data).hexdigest()


def body_of(answer):
    return json.loads(answer[2]) if answer[2] else {}


def reason(answer):
    return body_of(answer).get("error", {}).get("reason")


class Client:
    def __init__(self, svc, sub="u_owner", tenant="t_blobs", scopes="content-lake.read content-lake.write contracts.read contracts.write"):
        self.svc = svc
        self.token = svc.token(sub=sub, tenant=tenant, scopes=scopes)

    def call(self, method, path, body=None, headers=None):
        return self.svc.request(method, "/v0/content-lake" + path, self.token, body, headers)

    def start(self, size, content_type="application/octet-stream", blob_id=None):
        req = {"size": size, "content_type": content_type}
        if blob_id:
            req["blob_id"] = blob_id
        return self.call("POST", "/blobs/uploads", req)

    def complete(self, upload_id, digest, headers=None):
        return self.call("POST", "/blobs/uploads/%s/complete" % upload_id, {"sha256": digest}, headers)

    def upload(self, data, content_type="application/octet-stream", blob_id=None):
        """A whole upload; answers the blob version."""
        started = self.start(len(data), content_type, blob_id)
        assert started[0] == 201, started
        up = body_of(started)
        if up["method"] == "SINGLE":
            put = fetch(up["url"], "PUT", data)
            assert put[0] == 200, put
        else:
            for p in up["parts"]:
                start = (p["part_number"] - 1) * up["part_size"]
                put = fetch(p["url"], "PUT", data[start:start + p["size"]])
                assert put[0] == 200, put
        done = self.complete(up["upload_id"], sha(data))
        assert done[0] == 201, done
        return body_of(done)


def single_upload_and_download(owner):
    data = os.urandom(70000)
    started = owner.start(len(data), "image/png")
    check(started[0] == 201, "POST uploads answers 201", started)
    up = body_of(started)
    check(up["method"] == "SINGLE" and up["state"] == "IN_PROGRESS", "below the threshold: one presigned PUT", up)
    check(up["upload_id"].startswith("upl_") and up["blob_id"].startswith("blb_"), "ids have their prefixes", up)
    check("X-Amz-SignedHeaders=host" in up["url"], "the upload URL signs only host", up["url"])
    before = body_of(owner.call("GET", "/blobs/uploads/%s/parts" % up["upload_id"]))
    check(before.get("stored_size", "absent") is None and "url" in before, "SINGLE: nothing stored yet, a fresh URL", before)
    early = owner.complete(up["upload_id"], sha(data))
    check(early[0] == 400 and reason(early) == "UPLOAD_INCOMPLETE", "completing before the PUT: 400 UPLOAD_INCOMPLETE", early)
    if STORE == "embedded":  # the embedded store enforces the declared size as the bytes arrive
        longer = fetch(up["url"], "PUT", data + b"x")
        check(longer[0] == 400, "a body longer than declared is refused by the store", longer)
    else:  # an S3 service takes it; the completion refuses it and the upload stays in progress
        check(fetch(up["url"], "PUT", data + b"x")[0] == 200, "the S3 service takes a longer body")
        longer = owner.complete(up["upload_id"], sha(data + b"x"))
        check(longer[0] == 400 and reason(longer) == "SIZE_MISMATCH", "a body longer than declared: SIZE_MISMATCH", longer)
    put = fetch(up["url"], "PUT", data)
    check(put[0] == 200, "a plain HTTP PUT to the URL stores the bytes", put)
    stored = body_of(owner.call("GET", "/blobs/uploads/%s/parts" % up["upload_id"]))
    check(stored.get("stored_size") == len(data), "SINGLE: the store holds the declared size", stored)
    wrong = owner.complete(up["upload_id"], sha(b"other bytes"))
    check(wrong[0] == 400 and reason(wrong) == "CHECKSUM_MISMATCH", "a wrong declared SHA-256: 400 CHECKSUM_MISMATCH", wrong)
    done = owner.complete(up["upload_id"], sha(data).upper())  # hex in either case
    check(done[0] == 201, "the corrected completion commits the version", done)
    v = body_of(done)
    check(v == {"id": up["blob_id"], "version": 1, "size": len(data), "content_type": "image/png",
                "checksum": "sha256:" + sha(data), "created": v.get("created")}, "the blob version", v)
    again = owner.complete(up["upload_id"], sha(data))
    check(again[0] == 201 and body_of(again) == v, "completing twice answers the same version", again)

    got = owner.call("GET", "/blobs/" + v["id"])
    check(got[0] == 302, "GET blobs/{id}: 302", got)
    location = got[1].get("Location", "")
    check("X-Amz-Expires=900" in location, "the download URL lives exactly 15 minutes", location)
    check(got[1].get("Cache-Control") == "private, no-store", "the redirect is not cached", got[1])
    down = fetch(location)
    check(down[0] == 200 and down[2] == data, "the presigned GET serves the bytes", down[0])
    check(down[1].get("Content-Type") == "image/png", "served as the declared type", down[1])
    ranged = fetch(location, headers={"Range": "bytes=100-199"})
    check(ranged[0] == 206 and ranged[2] == data[100:200], "a ranged GET of the URL", ranged[0])
    if STORE == "embedded":
        # The same object through boto3 with the store's own credentials: what the broker made is an
        # ordinary S3 object (key <tenant>/<blob>/<upload>).
        import boto3
        import botocore.config
        ident = os.path.join(owner.svc.dir.name, "identity")
        s3 = boto3.client("s3", region_name="us-east-1", endpoint_url="http://127.0.0.1:%d" % owner.svc.blobs_port,
                          aws_access_key_id=open(os.path.join(ident, "blobs-access-key-id")).read().strip(),
                          aws_secret_access_key=open(os.path.join(ident, "blobs-secret-access-key")).read().strip(),
                          config=botocore.config.Config(signature_version="s3v4", s3={"addressing_style": "path"}))
        key = "t_blobs/%s/%s" % (v["id"], up["upload_id"])
        check(s3.head_object(Bucket="contentlake", Key=key)["ContentLength"] == len(data), "boto3 sees the object")
        part = s3.get_object(Bucket="contentlake", Key=key, Range="bytes=0-9")["Body"].read()
        check(part == data[:10], "boto3 ranged GET of the blob's object")

    # The URL is good for GET only, and only as signed (s3rver 3.7.1 does not verify SigV4
    # signatures at all: "Signature version 4 calculation is unimplemented" in its source).
    if STORE != "s3rver":
        check(fetch(location, "PUT", b"x")[0] == 403, "the download URL refuses another method")
        sig = location.rindex("X-Amz-Signature=") + len("X-Amz-Signature=")
        tampered = location[:sig] + ("0" if location[sig] != "0" else "1") + location[sig + 1:]
        bad = fetch(tampered)
        check(bad[0] == 403 and b"SignatureDoesNotMatch" in bad[2], "a tampered signature is refused", bad)
    return v, data


def idempotent_completion(owner):
    data = os.urandom(1000)
    up = body_of(owner.start(len(data)))
    fetch(up["url"], "PUT", data)
    key = {"Idempotency-Key": "complete-" + up["upload_id"]}
    first = owner.complete(up["upload_id"], sha(data), key)
    second = owner.complete(up["upload_id"], sha(data), key)
    check(first[0] == 201 and second[0] == 201 and first[2] == second[2], "Idempotency-Key replays a completion", second)
    other = owner.complete(up["upload_id"], sha(b"different"), key)
    check(other[0] == 422, "the same key with another body: 422", other)


def multipart_with_resumed_part(owner):
    data = os.urandom(2 * PART + PART // 2)
    started = owner.start(len(data), "video/mp4")
    up = body_of(started)
    check(started[0] == 201 and up["method"] == "MULTIPART", "above the threshold: multipart", up)
    check(up["part_size"] == PART and up["part_count"] == 3 and [p["size"] for p in up["parts"]] == [PART, PART, PART // 2],
          "parts laid out by blobs.part_size_bytes", up)
    parts = {p["part_number"]: p for p in up["parts"]}
    if STORE == "s3rver":
        # s3rver has no ListParts (stored_parts is null) and its process exits on a completion that
        # names a missing part: only the whole-upload path runs against it.
        for n, p in parts.items():
            fetch(p["url"], "PUT", data[(n - 1) * PART:(n - 1) * PART + p["size"]])
        fresh = body_of(owner.call("GET", "/blobs/uploads/%s/parts" % up["upload_id"]))
        check(fresh.get("stored_parts", "absent") is None, "a store without ListParts: stored_parts null", fresh)
        done = owner.complete(up["upload_id"], sha(data))
        check(done[0] == 201 and body_of(done)["size"] == len(data), "the multipart upload completes", done)
        location = owner.call("GET", "/blobs/" + up["blob_id"])[1].get("Location", "")
        check(fetch(location)[2] == data, "the assembled object is the bytes")
        return
    for n in (1, 3):  # the client "crashes" before part 2
        put = fetch(parts[n]["url"], "PUT", data[(n - 1) * PART:(n - 1) * PART + parts[n]["size"]])
        check(put[0] == 200, "part %d stored" % n, put)
    incomplete = owner.complete(up["upload_id"], sha(data))
    check(incomplete[0] == 400 and reason(incomplete) == "UPLOAD_INCOMPLETE", "a missing part: 400 UPLOAD_INCOMPLETE",
          incomplete)
    check(any(d["field"] == "part 2" for d in body_of(incomplete)["error"]["details"]), "details name the missing part",
          incomplete)
    resumed = owner.call("GET", "/blobs/uploads/%s/parts?from=2" % up["upload_id"])
    r = body_of(resumed)
    check(resumed[0] == 200, "GET parts answers 200", resumed)
    check([p["part_number"] for p in r["parts"]] == [2, 3], "fresh URLs from part 2", r)
    check(r["stored_parts"] == [{"part_number": 1, "size": PART}, {"part_number": 3, "size": PART // 2}],
          "which parts the store holds", r)
    # A wrong part 2 first: the completion refuses and the upload stays; then the right one.
    fetch(r["parts"][0]["url"], "PUT", os.urandom(PART))
    mismatch = owner.complete(up["upload_id"], sha(data))
    check(mismatch[0] == 400 and reason(mismatch) == "CHECKSUM_MISMATCH", "wrong bytes in a part: CHECKSUM_MISMATCH",
          mismatch)
    # The client asks again what the store holds (an S3 service that assembled before the check
    # keeps the parts under a new upload: copied back where it can, or none where it cannot).
    again = body_of(owner.call("GET", "/blobs/uploads/%s/parts" % up["upload_id"]))
    held = {p["part_number"] for p in again["stored_parts"]}
    # The embedded store checks before assembling; against an S3 service the broker copied the
    # parts back (UploadPartCopy) under a new store upload.
    check(held == {1, 2, 3}, "the parts are still held after the refusal", again)
    for p in again["parts"]:
        if p["part_number"] == 2 or p["part_number"] not in held:
            start = (p["part_number"] - 1) * PART
            fetch(p["url"], "PUT", data[start:start + p["size"]])
    done = owner.complete(up["upload_id"], sha(data))
    check(done[0] == 201 and body_of(done)["size"] == len(data), "the resumed multipart upload completes", done)
    location = owner.call("GET", "/blobs/" + up["blob_id"])[1]["Location"]
    check(fetch(location)[2] == data, "the assembled object is the bytes")
    bad_from = owner.call("GET", "/blobs/uploads/%s/parts?from=0" % up["upload_id"])
    check(bad_from[0] == 400, "from=0: 400", bad_from)
    after = owner.call("GET", "/blobs/uploads/%s/parts" % up["upload_id"])
    check(after[0] == 409 and reason(after) == "UPLOAD_NOT_IN_PROGRESS", "parts of a completed upload: 409", after)


def abort(owner):
    data = b"to be abandoned"
    up = body_of(owner.start(len(data)))
    fetch(up["url"], "PUT", data)
    gone = owner.call("DELETE", "/blobs/uploads/" + up["upload_id"])
    check(gone[0] == 204 and gone[2] == b"", "DELETE an upload: 204", gone)
    check(owner.call("DELETE", "/blobs/uploads/" + up["upload_id"])[0] == 204, "DELETE again: 204")
    late = owner.complete(up["upload_id"], sha(data))
    check(late[0] == 409 and reason(late) == "UPLOAD_NOT_IN_PROGRESS", "complete after DELETE: 409", late)
    never = owner.call("GET", "/blobs/" + up["blob_id"])
    # No version: nothing tells its uploader (permission before existence, as for Resources).
    check(never[0] == 403 and reason(never) == "ACCESS_DENIED", "an aborted upload made no blob version", never)
    missing = owner.call("DELETE", "/blobs/uploads/upl_nosuchupload")
    check(missing[0] == 404 and reason(missing) == "UPLOAD_NOT_FOUND", "DELETE of an unknown upload: 404", missing)


def committed_version_is_immutable(owner):
    """A committed version's bytes never change: after the completion (and after an abort) the
    upload's URL, also when handed out again by an Idempotency-Key replay of the start, stores
    nothing the version serves. The embedded store refuses it (403 AccessDenied); an S3 service
    cannot refuse a presigned PUT that is still valid, so the version lives under a key no upload
    URL names and what the URL stores there is never served."""
    data, other = os.urandom(5000), os.urandom(5000)
    key = {"Idempotency-Key": "immutable-%d" % time.time_ns()}
    request = {"size": len(data), "content_type": "application/octet-stream"}
    started = owner.call("POST", "/blobs/uploads", request, key)
    up = body_of(started)
    check(fetch(up["url"], "PUT", data)[0] == 200, "the upload's PUT")
    done = owner.complete(up["upload_id"], sha(data))
    check(done[0] == 201, "the upload completes", done)
    replay = owner.call("POST", "/blobs/uploads", request, key)
    check(replay[0] == 201 and body_of(replay)["url"] == up["url"], "a replayed start hands out the same URL", replay)
    late = fetch(up["url"], "PUT", other)
    if STORE == "embedded":
        check(late[0] == 403 and b"<Code>AccessDenied</Code>" in late[2], "the URL is refused after completion", late)
    served = fetch(owner.call("GET", "/blobs/" + up["blob_id"])[1].get("Location", ""))
    check(served[0] == 200 and served[2] == data, "the version still serves the bytes it was committed with", served[0])
    found = body_of(owner.call("POST", "/blobs/locations", {"blobs": [{"id": up["blob_id"]}]}))["locations"]
    check(len(found) == 1 and found[0]["checksum"] == "sha256:" + sha(data), "locations: the committed checksum", found)
    check(len(found) == 1 and sha(fetch(found[0]["url"])[2]) == sha(data), "locations' URL serves bytes of that checksum")

    aborted = body_of(owner.start(len(data)))
    check(fetch(aborted["url"], "PUT", data)[0] == 200, "the second upload's PUT")
    check(owner.call("DELETE", "/blobs/uploads/" + aborted["upload_id"])[0] == 204, "the second upload is aborted")
    after = fetch(aborted["url"], "PUT", other)
    if STORE == "embedded":
        check(after[0] == 403 and b"<Code>AccessDenied</Code>" in after[2], "the URL is refused after the abort", after)
    never = owner.call("GET", "/blobs/" + aborted["blob_id"])
    check(never[0] == 403, "an aborted upload's URL made no blob version", never)
    if STORE == "embedded":  # nothing was stored under the upload's key either
        import boto3
        import botocore.config
        import botocore.exceptions
        ident = os.path.join(owner.svc.dir.name, "identity")
        s3 = boto3.client("s3", region_name="us-east-1", endpoint_url="http://127.0.0.1:%d" % owner.svc.blobs_port,
                          aws_access_key_id=open(os.path.join(ident, "blobs-access-key-id")).read().strip(),
                          aws_secret_access_key=open(os.path.join(ident, "blobs-secret-access-key")).read().strip(),
                          config=botocore.config.Config(signature_version="s3v4", s3={"addressing_style": "path"}))
        for u in (up, aborted):
            try:
                s3.head_object(Bucket="contentlake", Key="uploads/t_blobs/%s/%s" % (u["blob_id"], u["upload_id"]))
                check(False, "the refused PUT stored nothing under the upload's key", u["upload_id"])
            except botocore.exceptions.ClientError as e:
                check(e.response["Error"]["Code"] in ("404", "NoSuchKey"), "no object under a closed upload key", e)


def downloads_never_run(owner):
    """A blob is served from the store's origin: never sniffed (nosniff), and one of an active type
    (HTML, SVG, XML, JavaScript, PDF) as an attachment, so it never runs there."""
    for content_type, attached in (("text/html", True), ("image/svg+xml", True), ("image/png", False)):
        v = owner.upload(b"<html><script>alert(1)</script></html>", content_type)
        location = owner.call("GET", "/blobs/" + v["id"])[1].get("Location", "")
        got = fetch(location)
        headers = {k.lower(): val for k, val in got[1].items()}
        check(got[0] == 200 and headers.get("content-type", "").startswith(content_type), "served as " + content_type, got[1])
        disposition = headers.get("content-disposition", "")
        check(disposition.startswith("attachment") == attached,
              "%s: %s" % (content_type, "an attachment" if attached else "inline"), got[1])
        if STORE == "embedded":  # an S3 service has no response override for it
            check(headers.get("x-content-type-options") == "nosniff", "nosniff on every download", got[1])


def versions(owner, first):
    v1, data1 = first
    data2 = b"second version"
    v2 = owner.upload(data2, "text/plain", blob_id=v1["id"])
    check(v2["id"] == v1["id"] and v2["version"] == 2, "an upload with blob_id adds version 2", v2)
    latest = owner.call("GET", "/blobs/" + v1["id"])
    check(fetch(latest[1]["Location"])[2] == data2, "the latest version is the default")
    pinned = owner.call("GET", "/blobs/%s?version=1" % v1["id"])
    check(pinned[0] == 302 and fetch(pinned[1]["Location"])[2] == data1, "version=1 pins the first")
    check(reason(owner.call("GET", "/blobs/%s?version=3" % v1["id"])) == "BLOB_NOT_FOUND", "an unknown version: 404")
    check(owner.call("GET", "/blobs/%s?version=x" % v1["id"])[0] == 400, "a malformed version: 400")
    unknown = owner.start(5, "text/plain", blob_id="blb_nosuchblob")
    check(unknown[0] == 404 and reason(unknown) == "BLOB_NOT_FOUND", "a version of an unknown blob: 404", unknown)
    return v2


def who_may_read(svc, owner, blob):
    reader = Client(svc, sub="u_reader")
    stranger = Client(svc, sub="u_stranger")
    other_tenant = Client(svc, sub="u_owner", tenant="t_elsewhere")
    ref = [{"id": blob["id"]}]
    for c, who in ((reader, "a principal without a grant"), (other_tenant, "another tenant")):
        got = c.call("GET", "/blobs/" + blob["id"])
        check(got[0] == 403 and reason(got) == "ACCESS_DENIED", who + ": GET blobs/{id} 403", got)
        loc = c.call("POST", "/blobs/locations", {"blobs": ref})
        check(loc[0] == 200 and body_of(loc)["locations"] == [], who + ": absent from locations", loc)
    # Another principal's (or tenant's) real upload id reads as unknown, whatever they try.
    theirs = body_of(owner.start(10))
    for c, who in ((reader, "another principal"), (other_tenant, "another tenant")):
        for method, path, body in (("GET", "/blobs/uploads/%s/parts" % theirs["upload_id"], None),
                                   ("POST", "/blobs/uploads/%s/complete" % theirs["upload_id"], {"sha256": "0" * 64}),
                                   ("DELETE", "/blobs/uploads/" + theirs["upload_id"], None)):
            got = c.call(method, path, body)
            check(got[0] == 404 and reason(got) == "UPLOAD_NOT_FOUND", "%s: %s of another's upload: 404" % (who, method), got)
    check(owner.call("GET", "/blobs/uploads/%s/parts" % theirs["upload_id"])[0] == 200, "the upload is untouched")

    # A Resource whose content shows the blob, readable by u_reader: now they may read the blob.
    content = {"format": "cl.content/1", "blocks": [{"type": "image", "key": "i1", "blob": blob["id"], "alt": "A chart"}]}
    res = owner.call("POST", "/resources", {"title": "With a picture", "type": "ARTICLE", "language": "en",
                                            "content": content})
    check(res[0] == 201, "a Resource with an image block", res)
    rid = body_of(res)["id"]
    grant = owner.call("PUT", "/resources/%s/access/u_reader" % rid, {"role": "reader"})
    check(grant[0] in (200, 201), "grant reader", grant)
    got = reader.call("GET", "/blobs/" + blob["id"])
    check(got[0] == 302, "a reader of a referencing Resource gets the 302", got)
    # The redirect carries the rights of the Resource that allowed it (docs/api.md, Rights that travel).
    check(got[1].get("Content-Usage") == "train-ai=n, search=n" and got[1].get("tdm-reservation") == "1"
          and got[1].get("tdm-policy") == "/v0/content-lake/resources/%s/rights/odrl" % rid,
          "the 302 carries the referencing Resource's rights headers", got[1])
    loc = body_of(reader.call("POST", "/blobs/locations", {"blobs": [{"id": "blb_unknown"}, {"id": blob["id"], "version": 1}, {"id": blob["id"]}]}))
    check([(l["id"], l["version"]) for l in loc["locations"]] == [(blob["id"], 1), (blob["id"], 2)],
          "locations: unknown absent, order kept", loc)
    first = loc["locations"][0] if loc["locations"] else {}
    check(set(first) == {"id", "version", "url", "size", "content_type", "checksum", "expires_at"}, "a location's members", first)
    got_denied = stranger.call("GET", "/blobs/" + blob["id"])
    check(got_denied[0] == 403, "the grant is u_reader's only")
    check(other_tenant.call("GET", "/blobs/" + blob["id"])[0] == 403, "another tenant still 403")

    # A Resource of a Work whose contract prohibits reading content: its readers may not fetch the blob.
    secret = owner.upload(b"prohibited picture", "image/jpeg")
    work = body_of(owner.call("POST", "/works", {"title": "Closed"}))["id"]
    ctr = owner.svc.request("POST", "/v0/contracts", owner.token, {
        "title": "No access", "status": "ACTIVE", "valid_from": "2020-01-01T00:00:00Z", "work_ids": [work],
        "territorial_rights": [{"worldwide": True, "status": "PERMITTED"}],
        "usage_terms": [{"usage_type": "ACCESS", "status": "PROHIBITED"}, {"usage_type": "DISPLAY", "status": "PROHIBITED"}]})
    check(ctr[0] == 201, "a prohibiting contract", ctr)
    closed = owner.call("POST", "/resources", {"title": "Closed", "type": "ARTICLE", "language": "en", "work_id": work,
                                               "content": {"format": "cl.content/1", "blocks": [
                                                   {"type": "image", "key": "i1", "blob": secret["id"], "alt": "x"}]}})
    cid = body_of(closed)["id"]
    owner.call("PUT", "/resources/%s/access/u_reader" % cid, {"role": "reader"})
    refused = reader.call("GET", "/blobs/" + secret["id"])
    check(refused[0] == 403 and reason(refused) == "USAGE_PROHIBITED", "layer 3: the contract refuses the blob", refused)
    check(refused[1].get("tdm-policy") == "/v0/content-lake/resources/%s/rights/odrl" % cid,
          "the refusal names the policy that says why", refused[1])
    check("Content-Usage" not in got_denied[1], "no rights travel with ACCESS_DENIED", got_denied[1])
    loc = body_of(reader.call("POST", "/blobs/locations", {"blobs": [{"id": secret["id"]}]}))
    check(loc["locations"] == [], "layer 3: absent from locations", loc)
    check(owner.call("GET", "/blobs/" + secret["id"])[0] == 302, "its uploader still may")
    return rid, secret


def image_content(blob_id):
    return {"format": "cl.content/1", "blocks": [
        {"type": "paragraph", "key": "p1", "children": [{"type": "span", "text": "Borrowed"}]},
        {"type": "image", "key": "i1", "blob": blob_id, "alt": "x"}]}


def references_need_read(svc, owner, blob, rid, secret):
    """A write may reference only blobs its writer may read now: a reference would otherwise open the
    blob to the Resource's readers, the writer first (400 PCF011 naming the block, the same for a blob
    that does not exist)."""
    def create(c, blob_id):
        return c.call("POST", "/resources", {"title": "Borrowed", "type": "ARTICLE", "language": "en",
                                             "content": image_content(blob_id)})

    def refused(answer, what):
        e = body_of(answer).get("error", {})
        check(answer[0] == 400 and e.get("reason") == "PCF011" and e.get("domain") == "contentlake.service.com"
              and [d["field"] for d in e.get("details", [])] == ["/content/blocks/1/blob"], what, answer)
        return e.get("message")

    writer_only = Client(svc, sub="u_mallory", scopes="content-lake.write")
    m1 = refused(create(writer_only, blob["id"]), "a writer with no grant cannot reference another's blob")
    m2 = refused(create(writer_only, "blb_doesnotexist00000000"), "nor a blob that does not exist")
    check(m1 == m2, "the same answer whether or not the blob exists (no oracle)", (m1, m2))
    check(Client(svc, sub="u_mallory").call("GET", "/blobs/" + blob["id"])[0] == 403, "the blob stays out of reach")
    check(create(owner, blob["id"])[0] == 201, "its uploader may reference it")
    reader = Client(svc, sub="u_reader")
    check(create(reader, blob["id"])[0] == 201, "a reader of a referencing Resource may reference it")

    # A revoked reader: the reference no longer opens.
    revoked = Client(svc, sub="u_revoked")
    owner.call("PUT", "/resources/%s/access/u_revoked" % rid, {"role": "reader"})
    check(revoked.call("GET", "/blobs/" + blob["id"])[0] == 302, "u_revoked reads the blob while granted")
    check(owner.call("DELETE", "/resources/%s/access/u_revoked" % rid)[0] == 204, "the grant is revoked")
    refused(create(revoked, blob["id"]), "a revoked reader cannot reference the blob")
    check(revoked.call("GET", "/blobs/" + blob["id"])[0] == 403, "nor read it")

    # A reader whom a contract refuses the content: no reference by create, PUT or PATCH.
    refused(create(reader, secret["id"]), "a reader refused by the contract cannot reference the blob")
    mine = body_of(reader.call("POST", "/resources", {"title": "Mine", "type": "ARTICLE", "language": "en",
                                                      "content": image_content(blob["id"])}))
    current = body_of(reader.call("GET", "/resources/%s?fields=*" % mine["id"]))
    put = reader.call("PUT", "/resources/" + mine["id"], {"title": "Mine", "type": "ARTICLE", "language": "en",
                                                          "update_token": current["update_token"],
                                                          "content": image_content(secret["id"])})
    refused(put, "PUT cannot reference it")
    patch = reader.call("PATCH", "/resources/" + mine["id"], {"update_token": current["update_token"],
                                                              "content": image_content(secret["id"])})
    refused(patch, "PATCH cannot reference it")
    check(reader.call("GET", "/blobs/" + secret["id"])[0] == 403, "the contract still refuses the blob")
    title_only = reader.call("PATCH", "/resources/" + mine["id"], {"update_token": current["update_token"], "title": "Renamed"})
    check(title_only[0] == 200, "a PATCH that sets no content checks no blob", title_only)


def hostile_requests(svc, owner):
    too_big = owner.start(64 * MIB + 1)
    check(too_big[0] == 400 and reason(too_big) == "LIMIT_EXCEEDED", "over blobs.max_blob_bytes: LIMIT_EXCEEDED", too_big)
    check(owner.start(0)[0] == 400, "size 0: 400")
    check(owner.call("POST", "/blobs/uploads", {"size": 5, "content_type": "not a type"})[0] == 400, "bad content type: 400")
    check(owner.call("POST", "/blobs/uploads", {"size": 5, "content_type": "a/b", "x": 1})[0] == 400, "unknown member: 400")
    check(owner.complete("upl_x", "abc")[0] == 400, "a malformed sha256: 400")
    many = owner.call("POST", "/blobs/locations", {"blobs": [{"id": "blb_%d" % i} for i in range(101)]})
    check(many[0] == 400 and reason(many) == "LIMIT_EXCEEDED", "101 references: LIMIT_EXCEEDED", many)
    check(owner.call("POST", "/blobs/locations", {"blobs": [{"version": 1}]})[0] == 400, "a reference without id: 400")
    read_only = Client(svc, sub="u_ro", scopes="content-lake.read")
    denied = read_only.start(5)
    check(denied[0] == 403 and reason(denied) == "SCOPE_MISSING", "uploads need content-lake.write", denied)
    anon = svc.request("GET", "/v0/content-lake/blobs/blb_x")
    check(anon[0] == 401, "no token: 401", anon)


def expiry_and_sweep(binary, source, settings):
    """Upload URLs die after blobs.upload_url_ttl_seconds; the sweep then aborts the upload. Two
    seconds: the URL's end is in whole Unix seconds, so a one-second URL may live a few milliseconds
    (the first PUT then failed on a busy machine)."""
    with Service(binary, source, dict(settings, CONTENTLAKE_BLOBS_UPLOAD_URL_TTL_SECONDS="2")) as svc:
        owner = Client(svc)
        up = body_of(owner.start(10))
        deadline = time.time() + 30
        put = None
        stored = False  # the first PUT, at once, lands before the URL's end
        while time.time() < deadline:  # the URL's end: Unix seconds, so wait on the clock
            put = fetch(up["url"], "PUT", b"0123456789")
            stored = stored or put[0] == 200
            if put[0] == 403:
                break
            time.sleep(0.2)
        check(put and put[0] == 403 and b"Request has expired" in put[2], "an expired upload URL is refused", put)
        # Past its expiry an upload cannot complete, even with every byte stored before.
        late = owner.complete(up["upload_id"], sha(b"0123456789"))
        check(late[0] == 409 and reason(late) == "UPLOAD_NOT_IN_PROGRESS", "an expired upload does not complete", late)
        while time.time() < deadline and not any(up["upload_id"] + " expired" in line for line in svc.log):
            time.sleep(0.2)
        check(any(up["upload_id"] + " expired; aborted" in line for line in svc.log), "the sweep aborted the upload")
        check(stored, "a PUT before the URL's end stored the bytes")
        if STORE == "embedded":  # and the store released the bytes PUT before the expiry
            key = "t_blobs/%s/%s" % (up["blob_id"], up["upload_id"])
            gone = lambda: not any(os.path.exists(os.path.join(d, "data")) and key in open(os.path.join(d, "meta"), errors="replace").read()
                                   for d, _, _ in os.walk(os.path.join(svc.dir.name, "blobs", "objects")))
            while time.time() < deadline and not gone():
                time.sleep(0.1)
            check(gone(), "the swept upload's object is gone from the store")
        gone = owner.call("DELETE", "/blobs/uploads/" + up["upload_id"])
        check(gone[0] == 204, "DELETE of a swept upload: 204 (already aborted)", gone)


def files_under(path):
    return [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs]


def crash_during_multipart(binary, source):
    """SIGKILL while a part is half received; after a restart the upload resumes and completes,
    and nothing partial is ever stored or served."""
    part = 4 * MIB  # parts larger than the store's 1 MiB reads, so a half part reaches its disk
    svc = Service(binary, source, dict(SETTINGS, CONTENTLAKE_BLOBS_PART_SIZE_BYTES=str(part),
                                       CONTENTLAKE_BLOBS_MULTIPART_THRESHOLD_BYTES=str(2 * part)))
    try:
        owner = Client(svc)
        data = os.urandom(2 * part + MIB)
        up = body_of(owner.start(len(data), "application/zip"))
        check(fetch(up["parts"][0]["url"], "PUT", data[:part])[0] == 200, "part 1 stored before the crash")
        # Part 2 is on the wire when the service dies: half of its bytes sent.
        url = urllib.parse.urlsplit(up["parts"][1]["url"])
        sock = socket.create_connection((url.hostname, url.port))
        sock.sendall(("PUT %s?%s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n"
                      % (url.path, url.query, url.netloc, part)).encode() + data[part:part + part // 2])
        tmp = os.path.join(svc.dir.name, "blobs", "tmp")
        deadline = time.time() + 30
        while time.time() < deadline and not any(os.path.getsize(f) > 0 for f in files_under(tmp)):
            time.sleep(0.05)
        check(any(os.path.getsize(f) > 0 for f in files_under(tmp)), "the half part reached the store's temporary files")
        svc.kill()
        sock.close()
        svc.restart()
        check(files_under(tmp) == [], "the half-received part is gone after the restart", files_under(tmp))
        check(owner.call("GET", "/blobs/" + up["blob_id"])[0] != 302, "nothing is served before completion")
        resumed = owner.call("GET", "/blobs/uploads/%s/parts" % up["upload_id"])
        r = body_of(resumed)
        check(resumed[0] == 200 and r.get("stored_parts") == [{"part_number": 1, "size": part}],
              "after the restart the upload holds part 1 only", resumed)
        for p in r.get("parts", [])[1:]:
            start = (p["part_number"] - 1) * part
            fetch(p["url"], "PUT", data[start:start + p["size"]])
        done = owner.complete(up["upload_id"], sha(data))
        check(done[0] == 201 and body_of(done).get("checksum") == "sha256:" + sha(data),
              "the resumed upload completes with the right checksum", done)
        got = owner.call("GET", "/blobs/" + up["blob_id"])
        check(got[0] == 302 and fetch(got[1]["Location"])[2] == data, "and serves exactly the bytes")
    finally:
        svc.stop()


def main():
    global STORE, PART
    binary, source = sys.argv[1], sys.argv[2]
    store_arg = sys.argv[3] if len(sys.argv) > 3 else "embedded"
    STORE, _, where = store_arg.partition(":")
    external = ExternalStore(STORE, where) if STORE != "embedded" else None
    settings = dict(SETTINGS, **(external.settings if external else {}))
    if external:  # S3's floor for parts but the last
        PART = 5 * MIB
        settings["CONTENTLAKE_BLOBS_PART_SIZE_BYTES"] = str(PART)
        settings["CONTENTLAKE_BLOBS_MULTIPART_THRESHOLD_BYTES"] = str(2 * PART)
    try:
        run_all(binary, source, settings, external)
    finally:
        if external:
            external.stop()
    if failures:
        print("%d check(s) failed (store: %s)" % (len(failures), STORE))
        sys.exit(1)
    print("blobs API: all checks passed (store: %s)" % STORE)


def run_all(binary, source, settings, external):
    svc = Service(binary, source, settings)
    secret = external.secret if external else None
    try:
        check(STORE != "embedded" or svc.blobs_port is not None, "the embedded store's port is in the log")
        owner = Client(svc)
        first = single_upload_and_download(owner)
        idempotent_completion(owner)
        multipart_with_resumed_part(owner)
        abort(owner)
        committed_version_is_immutable(owner)
        downloads_never_run(owner)
        latest = versions(owner, first)
        rid, secret_blob = who_may_read(svc, owner, latest)
        references_need_read(svc, owner, latest, rid, secret_blob)
        hostile_requests(svc, owner)
        if not secret:
            with open(os.path.join(svc.dir.name, "identity", "blobs-secret-access-key")) as f:
                secret = f.read().strip()
    finally:
        svc.shutdown()
    log = "".join(svc.log)
    check("X-Amz-Signature" not in log and "X-Amz-Credential" not in log, "no presigned URL in the log")
    check(secret and secret not in log, "the store's secret is not in the log")
    if STORE == "embedded":
        check(" s3 PUT /contentlake/" in log, "the store's access log names the key path", log[-2000:])
    svc.stop()
    expiry_and_sweep(binary, source, settings)
    if STORE == "embedded":  # the store's own files are what the crash test inspects
        crash_during_multipart(binary, source)


if __name__ == "__main__":
    main()
