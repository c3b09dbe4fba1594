"""No secret in any log line (issue 31, item 7). ctest runs this after every other test: each client
test left its services' logs in CL_TEST_LOG_DIR beside what they must never show (the tokens minted
for them, their identity files: signing key, page-token, feed-cursor and webhook-sealing keys, the
embedded store's S3 secret, the edge purge secret), and the e2e binary its own log. Every line is
searched for bearer tokens, `eyJ` JWT fragments, `X-Amz-Signature`, private-key text, `whsec_`
webhook secrets and each known secret in the forms a log could carry it (raw, hex, base64,
base64url).

    log_secrets.py LOG_DIR
"""
import base64
import glob
import json
import os
import re
import sys

PATTERNS = [
    (re.compile(r"Bearer\s+[A-Za-z0-9._~+/=-]{8,}"), "a bearer token"),
    (re.compile(r"eyJ[A-Za-z0-9_-]{4,}"), "a JWT fragment"),
    (re.compile(r"X-Amz-Signature", re.I), "a presigned URL's signature"),
    (re.compile(r"PRIVATE KEY"), "private-key text"),
    (re.compile(r"whsec_[A-Za-z0-9+/=]{4,}"), "a webhook signing secret"),
]


def forms(secret):
    """The ways a secret of these bytes could appear in text (at least 12 characters each)."""
    out = set()
    try:
        text = secret.decode()
        if text.isprintable():
            out.add(text.strip())
    except UnicodeDecodeError:
        pass
    out.add(secret.hex())
    out.add(base64.b64encode(secret).decode().rstrip("="))
    out.add(base64.urlsafe_b64encode(secret).decode().rstrip("="))
    return {f for f in out if len(f) >= 12}


def main():
    where = sys.argv[1]
    logs = sorted(glob.glob(os.path.join(where, "*.log")))
    known = set()
    for path in glob.glob(os.path.join(where, "*.secrets")):
        with open(path) as f:
            s = json.load(f)
        for token in s["tokens"]:
            known.add(token)
            known.add(token.split(".")[-1])  # a signature alone
        for hex_value in s["identity_hex"]:
            data = bytes.fromhex(hex_value)
            if data.startswith(b"-----BEGIN"):  # a PEM key: its base64 lines, each long enough
                known.update(line.strip() for line in data.decode().splitlines() if len(line.strip()) >= 40)
            else:
                known.update(forms(data))
    # A check that reads nothing proves nothing.
    assert logs, "no service log in %s: the client tests did not leave theirs" % where
    lines = hits = 0
    found = []
    for path in logs:
        with open(path, errors="replace") as f:
            for n, line in enumerate(f, 1):
                lines += 1
                why = [what for pattern, what in PATTERNS if pattern.search(line)]
                why += ["a known secret"] if any(k in line for k in known) else []
                if why:
                    hits += 1
                    found.append("%s:%d: %s" % (os.path.basename(path), n, ", ".join(why)))
    print("log_secrets: %d log files, %d lines, %d known secrets (tokens, keys) in several encodings: %d hits"
          % (len(logs), lines, len(known), hits))
    for f in found[:20]:
        print("  " + f)  # where and what kind, never the line (it holds the secret)
    assert hits == 0


if __name__ == "__main__":
    main()
