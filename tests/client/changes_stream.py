"""The change feed's event stream followed by a real client, npm `eventsource`, across stream ends
and a restart of the service: every change arrives once, in order (issue 29).

    changes_stream.py CONTENTLAKE_BINARY SOURCE_DIR NODE_MODULES_DIR
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Service  # noqa: E402


def create(svc, token, i):
    status, _, body = svc.request("POST", "/v0/content-lake/resources", token, {
        "title": "Tide %d" % i, "type": "CHAPTER", "language": "en",
        "content": {"format": "cl.content/1", "blocks": [
            {"type": "paragraph", "key": "p1", "children": [{"type": "span", "text": "log %d" % i}]}]}})
    assert status == 201, body
    return json.loads(body)["id"]


def main():
    binary, source, modules = sys.argv[1], sys.argv[2], sys.argv[3]
    # Streams of two seconds: the client reconnects (with Last-Event-ID) several times on its own.
    svc = Service(binary, source, {"CONTENTLAKE_CHANGES_STREAM_SECONDS": "2"})
    try:
        token = svc.token(sub="u_alice", tenant="t_feed", scopes="content-lake.read content-lake.write")
        status, _, body = svc.request("GET", "/v0/content-lake/changes", token)
        assert status == 200, body
        cursor = json.loads(body)["next_cursor"]
        url = "http://127.0.0.1:%d/v0/content-lake/changes?since=%s" % (svc.port, cursor)
        env = dict(os.environ, NODE_PATH=modules)
        client = subprocess.Popen(["node", os.path.join(source, "tests/client/changes_eventsource.js"), url, token, "20", "90"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        created = [create(svc, token, i) for i in range(10)]
        # The client has the first ten (read as they come: no sleep), over one stream or several.
        events = [json.loads(client.stdout.readline()) for _ in range(10)]
        # A restart on the same port while the client follows: it reconnects with the last id it saw.
        svc.shutdown()
        svc.restart(same_port=True)
        created += [create(svc, token, i) for i in range(10, 20)]
        out, err = client.communicate(timeout=120)
        assert client.returncode == 0, "the client failed: " + err
        events += [json.loads(line) for line in out.splitlines()]
        got = [e["event"]["resource_id"] for e in events]
        assert got == created, "events %s, created %s" % (got, created)
        assert all(e["event"]["type"] == "resource.created" for e in events)
        ids = [e["event"]["id"] for e in events]
        assert len(set(ids)) == len(ids), "an event came twice"
        reconnections = int(err.strip().split()[-1])
        assert reconnections >= 1, "the client never reconnected: " + err
        print("20 events once and in order across a restart; %s" % err.strip())
    finally:
        svc.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
