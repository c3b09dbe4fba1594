"""No secret in any log line (issue 31, item 7). ctest runs this after every other test: each client
test left its services' logs in CL_TEST_LOG_DIR beside what they must never show (the tokens minted
for them, their identity files: signing key, page-token, feed-cursor and webhook-sealing keys, the
embedded store's S3 secret, the edge purge secret), and the e2e binary its own log. Every line is
searched for bearer tokens, `eyJ` JWT fragments, `X-Amz-Signature`, private-key text, `whsec_`
webhook secrets and each known secret in the forms a log could carry it (raw, hex, base64,
base64url).

It also holds the suite to loopback: services run at debug, where every outbound client logs each
name it resolves and each address it connects to (`outbound webhook: 127.0.0.1 port 9099`); a name
but `localhost` or an address beyond loopback fails the run (a test must never reach outside the
machine, not even by a DNS lookup).

    log_secrets.py LOG_DIR
"""
import ipaddress
import base64
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

PATTERNS = [
    (re.compile(r"Bearer\s+[A-Za-z0-9._~+/=-]{8,}"), "a bearer token"),
    (re.compile(r"eyJ[A-Za-z0-9_-]{4,}"), "a JWT fragment"),
    (re.compile(r"X-Amz-Signature", re.I), "a presigned URL's signature"),
    (re.compile(r"PRIVATE KEY"), "private-key text"),
    (re.compile(r"whsec_[A-Za-z0-9+/=]{4,}"), "a webhook signing secret"),
]


OUTBOUND = re.compile(r"outbound (\w+): (?:resolving (\S+)|(\S+) port \d+)")


def beyond_loopback(line):
    """What an outbound line names beyond loopback, or None."""
    m = OUTBOUND.search(line)
    if not m:
        return None
    name, address = m.group(2), m.group(3)
    text = name or address
    if name == "localhost":
        return None
    try:
        a = ipaddress.ip_address(text)
    except ValueError:
        return "%s resolved a name" % m.group(1)  # a name: its lookup may leave the machine
    if getattr(a, "ipv4_mapped", None):
        a = a.ipv4_mapped
    return None if a.is_loopback else "%s connected beyond loopback" % m.group(1)


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


def lines_holding(known, logs):
    """(path, line number) of every line holding one of `known`: `grep -F`, one pass over all the
    logs for every secret at once (a test of each secret in each line took 30 s of the suite's
    serial tail). The secrets reach grep in a file only this user reads, removed at once; grep's
    output (which holds them) is parsed here, never printed."""
    if not known:
        return set()
    with tempfile.NamedTemporaryFile("w", prefix="log-secrets-", delete=True) as needles:
        needles.write("\n".join(sorted(known)) + "\n")
        needles.flush()
        out = subprocess.run(["grep", "-F", "-n", "-H", "-Z", "-a", "-f", needles.name, "--"] + logs,
                             capture_output=True, text=True, errors="replace")
    assert out.returncode in (0, 1), "grep failed: %s" % out.stderr[:200]
    holding = set()
    for line in out.stdout.splitlines():
        path, rest = line.split("\0", 1)  # -Z: the name ends with a NUL, whatever it holds
        holding.add((path, int(rest.split(":", 1)[0])))
    return holding


def main():
    where = sys.argv[1]
    logs = sorted(glob.glob(os.path.join(where, "*.log")))
    known = set()
    quiet = []  # services that did not run at debug: their outbound connections went unlogged
    for path in glob.glob(os.path.join(where, "*.secrets")):
        with open(path) as f:
            s = json.load(f)
        if s.get("log_level", "info") not in ("debug", "trace"):
            quiet.append(os.path.basename(path))
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
    lines = hits = outbound = 0
    found, outside = [], []
    holding = lines_holding(known, logs)
    for path in logs:
        with open(path, errors="replace", newline="\n") as f:  # lines as grep counts them
            for n, line in enumerate(f, 1):
                lines += 1
                why = [what for pattern, what in PATTERNS if pattern.search(line)]
                why += ["a known secret"] if (path, n) in holding else []
                if why:
                    hits += 1
                    found.append("%s:%d: %s" % (os.path.basename(path), n, ", ".join(why)))
                if "outbound " in line and OUTBOUND.search(line):
                    outbound += 1
                    beyond = beyond_loopback(line)
                    if beyond:
                        outside.append("%s:%d: %s: %s" % (os.path.basename(path), n, beyond, line.strip()[-200:]))
    print("log_secrets: %d log files, %d lines, %d known secrets (tokens, keys) in several encodings: %d hits"
          % (len(logs), lines, len(known), hits))
    for f in found[:20]:
        print("  " + f)  # where and what kind, never the line (it holds the secret)
    print("log_secrets: %d outbound connections and lookups logged, %d beyond loopback" % (outbound, len(outside)))
    for o in outside[:20]:
        print("  " + o)
    # A service that did not log at debug could have reached out unseen.
    assert not quiet, "services that did not run at debug: %s" % quiet[:5]
    assert hits == 0
    assert not outside, "a test reached beyond loopback"


if __name__ == "__main__":
    main()
