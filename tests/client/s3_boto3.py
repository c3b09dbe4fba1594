#!/usr/bin/python3
"""The embedded S3 listener against an unmodified S3 client (boto3): put, get (whole, ranged,
conditional), head, delete, multipart with a replaced part and a resumed listing, abort, presigned
URLs used by plain HTTP (urllib), and what must be refused: an expired URL, a tampered signature,
a URL used with another method, a wrong key, another bucket, a wrong payload checksum, path
traversal. Usage: s3_boto3.py S3_TEST_SERVER_BINARY"""

import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import boto3
import botocore
from botocore.config import Config

KEY, SECRET = "CLTESTKEY0000000001", "c2VjcmV0LXRlc3Qta2V5LW5vdC1yZWFs"
MIN_PART = 5 * 1024 * 1024
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def error_code(call):
    try:
        call()
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"]
    return None


def http(method, url, data=None, headers=None):
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def main():
    with tempfile.TemporaryDirectory() as data, tempfile.TemporaryFile(mode="w+") as errors:
        server = subprocess.Popen([sys.argv[1], data, KEY, SECRET], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=errors, text=True)
        port = int(server.stdout.readline())
        endpoint = f"http://127.0.0.1:{port}"
        cfg = Config(signature_version="s3v4", s3={"addressing_style": "path"}, retries={"max_attempts": 1})
        s3 = boto3.client("s3", region_name="us-east-1", endpoint_url=endpoint, aws_access_key_id=KEY,
                          aws_secret_access_key=SECRET, config=cfg)
        try:
            run(s3, endpoint, cfg)
        finally:
            server.stdin.close()
            server.wait(timeout=10)
            errors.seek(0)
            log = errors.read()
        check("s3 GET /contentlake/t_demo/blb_4/upl_4 200" in log, "the listener logs method, key path and status")
        check("X-Amz-Signature" not in log and "X-Amz-Credential" not in log and SECRET not in log,
              "the listener's log carries no signature, credential or secret")
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
    print("all S3 client checks passed")


def run(s3, endpoint, cfg):
    body = os.urandom(300_000)
    put = s3.put_object(Bucket="contentlake", Key="t_demo/blb_1/upl_1", Body=body, ContentType="image/png")
    check(put["ETag"] == '"' + hashlib.sha256(body).hexdigest()[:32] + '"',
          "PutObject answers the documented ETag: the first 32 hex digits of the SHA-256")
    got = s3.get_object(Bucket="contentlake", Key="t_demo/blb_1/upl_1")
    check(got["Body"].read() == body, "GetObject returns the bytes put")
    check(got["ContentType"] == "image/png", "GetObject returns the content type")
    head = s3.head_object(Bucket="contentlake", Key="t_demo/blb_1/upl_1")
    check(head["ContentLength"] == len(body), "HeadObject has the size")
    ranged = s3.get_object(Bucket="contentlake", Key="t_demo/blb_1/upl_1", Range="bytes=1000-1999")
    check(ranged["Body"].read() == body[1000:2000], "a ranged GET returns that range")
    check(ranged["ContentRange"] == f"bytes 1000-1999/{len(body)}", "a ranged GET says which range")
    check(error_code(lambda: s3.get_object(Bucket="contentlake", Key="t_demo/blb_1/upl_1", IfNoneMatch=put["ETag"]))
          == "304", "If-None-Match with the ETag answers 304")
    check(error_code(lambda: s3.get_object(Bucket="contentlake", Key="t_demo/none")) == "NoSuchKey",
          "a missing key is NoSuchKey")
    check(error_code(lambda: s3.get_object(Bucket="other", Key="t_demo/blb_1/upl_1")) == "NoSuchBucket",
          "another bucket is NoSuchBucket")

    # Multipart: three parts, part 2 uploaded twice, the listing tells a resuming client what is there.
    mpu = s3.create_multipart_upload(Bucket="contentlake", Key="t_demo/blb_2/upl_2", ContentType="video/mp4")
    uid = mpu["UploadId"]
    parts = [os.urandom(MIN_PART), os.urandom(MIN_PART), os.urandom(1234)]
    etags = {}
    for n, p in enumerate(parts, start=1):
        etags[n] = s3.upload_part(Bucket="contentlake", Key="t_demo/blb_2/upl_2", UploadId=uid, PartNumber=n,
                                  Body=p)["ETag"]
    etags[2] = s3.upload_part(Bucket="contentlake", Key="t_demo/blb_2/upl_2", UploadId=uid, PartNumber=2,
                              Body=parts[1])["ETag"]
    listed = s3.list_parts(Bucket="contentlake", Key="t_demo/blb_2/upl_2", UploadId=uid)["Parts"]
    check([(p["PartNumber"], p["Size"]) for p in listed] == [(1, MIN_PART), (2, MIN_PART), (3, 1234)],
          "ListParts shows each stored part once with its size")
    check(error_code(lambda: s3.complete_multipart_upload(
        Bucket="contentlake", Key="t_demo/blb_2/upl_2", UploadId=uid,
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": '"00"'}]})) == "InvalidPart", "a wrong part ETag is InvalidPart")
    done = s3.complete_multipart_upload(
        Bucket="contentlake", Key="t_demo/blb_2/upl_2", UploadId=uid,
        MultipartUpload={"Parts": [{"PartNumber": n, "ETag": etags[n]} for n in (1, 2, 3)]})
    check(done["ETag"].endswith('-3"'), "the multipart ETag ends in -3")
    whole = s3.get_object(Bucket="contentlake", Key="t_demo/blb_2/upl_2")["Body"].read()
    check(hashlib.sha256(whole).digest() == hashlib.sha256(b"".join(parts)).digest(), "the assembled object is the parts in order")
    # Bodies go out in 1 MiB reads: a range that starts and ends inside them, and a client that hangs
    # up in the middle of a body (the listener serves the next request as before).
    ranged = s3.get_object(Bucket="contentlake", Key="t_demo/blb_2/upl_2", Range="bytes=1048000-3146000")["Body"].read()
    check(ranged == b"".join(parts)[1048000:3146001], "a ranged GET across the listener's reads returns that range")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": "contentlake", "Key": "t_demo/blb_2/upl_2"},
                                    ExpiresIn=60)
    for _ in range(3):
        with urllib.request.urlopen(url) as r:
            check(r.read(100_000) == parts[0][:100_000], "a presigned GET's first bytes")
    again = s3.get_object(Bucket="contentlake", Key="t_demo/blb_2/upl_2")["Body"].read()
    check(again == whole, "after clients hung up mid-body, a whole GET still returns every byte")
    small = s3.create_multipart_upload(Bucket="contentlake", Key="t_demo/blb_3/upl_3")["UploadId"]
    e1 = s3.upload_part(Bucket="contentlake", Key="t_demo/blb_3/upl_3", UploadId=small, PartNumber=1, Body=b"tiny")["ETag"]
    e2 = s3.upload_part(Bucket="contentlake", Key="t_demo/blb_3/upl_3", UploadId=small, PartNumber=2, Body=b"tiny")["ETag"]
    check(error_code(lambda: s3.complete_multipart_upload(
        Bucket="contentlake", Key="t_demo/blb_3/upl_3", UploadId=small,
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})) == "EntityTooSmall",
          "a part under 5 MiB but the last is EntityTooSmall")
    s3.abort_multipart_upload(Bucket="contentlake", Key="t_demo/blb_3/upl_3", UploadId=small)
    check(error_code(lambda: s3.list_parts(Bucket="contentlake", Key="t_demo/blb_3/upl_3", UploadId=small))
          == "NoSuchUpload", "an aborted upload is gone")

    # Presigned URLs, used by a plain HTTP client with no extra header.
    url = s3.generate_presigned_url("put_object", Params={"Bucket": "contentlake", "Key": "t_demo/blb_4/upl_4"},
                                    ExpiresIn=60)
    status, _ = http("PUT", url, data=b"presigned bytes")
    check(status == 200, "a presigned PUT works with plain HTTP")
    get_url = s3.generate_presigned_url("get_object", Params={"Bucket": "contentlake", "Key": "t_demo/blb_4/upl_4"},
                                        ExpiresIn=60)
    status, got = http("GET", get_url)
    check(status == 200 and got == b"presigned bytes", "a presigned GET returns the bytes")
    status, got = http("DELETE", get_url)
    check(status == 403 and b"SignatureDoesNotMatch" in got, "a URL used with another method is refused")
    tampered = get_url[:-1] + ("0" if get_url[-1] != "0" else "1")
    status, got = http("GET", tampered)
    check(status == 403 and b"SignatureDoesNotMatch" in got, "a tampered signature is refused")
    short = s3.generate_presigned_url("get_object", Params={"Bucket": "contentlake", "Key": "t_demo/blb_4/upl_4"},
                                      ExpiresIn=1)
    time.sleep(2)  # the URL's own lifetime must pass: there is no condition to wait on
    status, got = http("GET", short)
    check(status == 403 and b"Request has expired" in got, "an expired URL is refused with 'Request has expired'")
    status, got = http("GET", f"{endpoint}/contentlake/t_demo/blb_4/upl_4")
    check(status == 403 and b"AccessDenied" in got, "an unsigned request is refused")

    wrong = boto3.client("s3", region_name="us-east-1", endpoint_url=endpoint, aws_access_key_id=KEY,
                         aws_secret_access_key="not-the-secret", config=cfg)
    check(error_code(lambda: wrong.get_object(Bucket="contentlake", Key="t_demo/blb_4/upl_4")) == "SignatureDoesNotMatch",
          "a wrong secret is SignatureDoesNotMatch")
    check(error_code(lambda: s3.put_object(Bucket="contentlake", Key="t_demo/blb_5/x", Body=b"abc",
                                           ChecksumSHA256="AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="))
          == "BadDigest", "a wrong x-amz-checksum-sha256 is BadDigest and nothing is stored")
    check(error_code(lambda: s3.head_object(Bucket="contentlake", Key="t_demo/blb_5/x")) == "404",
          "nothing was stored after BadDigest")
    # A declared Content-MD5 is checked (the MD5 is computed only then); this body is whole chunks
    # and a tail, so both the direct writes and the page-cache tail are checked.
    large = os.urandom(5 * 1024 * 1024 + 77)
    md5 = base64.b64encode(hashlib.md5(large).digest()).decode()
    s3.put_object(Bucket="contentlake", Key="t_demo/blb_5/md5", Body=large, ContentMD5=md5)
    check(s3.get_object(Bucket="contentlake", Key="t_demo/blb_5/md5")["Body"].read() == large,
          "a PUT with its Content-MD5 is stored whole")
    wrong_md5 = base64.b64encode(hashlib.md5(b"other").digest()).decode()
    check(error_code(lambda: s3.put_object(Bucket="contentlake", Key="t_demo/blb_5/y", Body=large, ContentMD5=wrong_md5))
          == "BadDigest", "a wrong Content-MD5 is BadDigest")
    check(error_code(lambda: s3.head_object(Bucket="contentlake", Key="t_demo/blb_5/y")) == "404",
          "nothing was stored after a wrong Content-MD5")
    # UploadPartCopy: ranges of a stored object become parts (what the broker's S3 client does to
    # restore parts after a refused completion); CopyObject copies a whole object (what it does to
    # commit a single upload under a key of the version's own).
    source = os.urandom(MIN_PART + 6144)
    s3.put_object(Bucket="contentlake", Key="t_demo/blb_7/src", Body=source)
    mpu = s3.create_multipart_upload(Bucket="contentlake", Key="t_demo/blb_7/copy")["UploadId"]
    etags = []
    for n, rng in ((1, "bytes=0-%d" % (MIN_PART - 1)), (2, "bytes=%d-%d" % (MIN_PART, MIN_PART + 6143))):
        r = s3.upload_part_copy(Bucket="contentlake", Key="t_demo/blb_7/copy", UploadId=mpu, PartNumber=n,
                                CopySource={"Bucket": "contentlake", "Key": "t_demo/blb_7/src"}, CopySourceRange=rng)
        etags.append(r["CopyPartResult"]["ETag"])
    parts = s3.list_parts(Bucket="contentlake", Key="t_demo/blb_7/copy", UploadId=mpu)["Parts"]
    check([(p["PartNumber"], p["Size"]) for p in parts] == [(1, MIN_PART), (2, 6144)], "UploadPartCopy stores the ranges")
    s3.complete_multipart_upload(Bucket="contentlake", Key="t_demo/blb_7/copy", UploadId=mpu, MultipartUpload={
        "Parts": [{"PartNumber": n + 1, "ETag": e} for n, e in enumerate(etags)]})
    check(s3.get_object(Bucket="contentlake", Key="t_demo/blb_7/copy")["Body"].read() == source,
          "the parts copied from ranges make the source again")
    check(error_code(lambda: s3.upload_part_copy(Bucket="contentlake", Key="t_demo/blb_7/c2", UploadId=mpu, PartNumber=1,
                                                 CopySource={"Bucket": "otherbucket", "Key": "x"})) == "AccessDenied",
          "a copy from another bucket is refused")
    copied = s3.copy_object(Bucket="contentlake", Key="t_demo/blb_7/c3",
                            CopySource={"Bucket": "contentlake", "Key": "t_demo/blb_7/src"})
    check("ETag" in copied["CopyObjectResult"], "CopyObject answers CopyObjectResult")
    check(s3.get_object(Bucket="contentlake", Key="t_demo/blb_7/c3")["Body"].read() == source, "CopyObject copies the bytes")
    check(error_code(lambda: s3.copy_object(Bucket="contentlake", Key="t_demo/blb_7/c4",
                                            CopySource={"Bucket": "contentlake", "Key": "t_demo/blb_7/none"}))
          == "NoSuchKey", "CopyObject of a missing source: NoSuchKey")

    # aws-chunked framing is not decoded: refused (501), never stored as the object's bytes.
    chunked_url = s3.generate_presigned_url("put_object", Params={"Bucket": "contentlake", "Key": "t_demo/blb_6/x"},
                                            ExpiresIn=60)
    status, got = http("PUT", chunked_url, data=b"5\r\nhello\r\n0\r\n\r\n",
                       headers={"Content-Encoding": "aws-chunked", "x-amz-decoded-content-length": "5"})
    check(status == 501 and b"NotImplemented" in got, "an aws-chunked body is refused with NotImplemented")
    check(error_code(lambda: s3.head_object(Bucket="contentlake", Key="t_demo/blb_6/x")) == "404",
          "nothing was stored from the aws-chunked body")
    status, got = http("GET", f"{endpoint}/contentlake/t_demo/../../etc/passwd")
    check(status == 400, "path traversal in a key is refused")
    s3.delete_object(Bucket="contentlake", Key="t_demo/blb_1/upl_1")
    check(error_code(lambda: s3.head_object(Bucket="contentlake", Key="t_demo/blb_1/upl_1")) == "404",
          "a deleted object is gone")


if __name__ == "__main__":
    main()
