"""PUT a file to a URL with sendfile(2): the bytes go from the page cache to the socket without
passing through this process, so the client takes as little of the machine's CPU as a client can
(curl reads the file into its buffers and copies them into the socket). Exits 1 unless answered
2xx.

    put_sendfile.py URL FILE
"""
import os
import socket
import sys
from urllib.parse import urlsplit

url, path = sys.argv[1], sys.argv[2]
parts = urlsplit(url)
target = parts.path + ("?" + parts.query if parts.query else "")
with open(path, "rb") as f, socket.create_connection((parts.hostname, parts.port)) as s:
    size = os.fstat(f.fileno()).st_size
    s.sendall(("PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
               % (target, parts.netloc, size)).encode())
    s.sendfile(f)
    answer = b""
    while b"\r\n" not in answer:
        got = s.recv(4096)
        if not got:
            break
        answer += got
status = answer.split(b" ", 2)[1] if answer.count(b" ") >= 2 else b"0"
sys.exit(0 if status.startswith(b"2") else 1)
