#!/usr/bin/env python3
"""Local HTTP/1.1 server for enlog's HTTPClient tests (stdlib only, 127.0.0.1 only).

  http_test_server.py --port 0 --print-port [--watch-stdin]

Routes (GET or POST unless noted):
  /echo                  200, JSON {method, path, headers, body_hex, client_port}
  /slow?seconds=S        sleeps S seconds, then 200 "slow"
  /drop                  sends headers with Content-Length 1000 and 10 body bytes, then closes
  /nothing               closes the connection without any reply
  /large?bytes=N[&chunked=1]  200 with N bytes ('x'); chunked: no Content-Length
  /bigheader?bytes=N     200 "ok" with one header line of N bytes (X-Big: xxx…)
  /status/NNN            replies with status NNN and a small HTML page
  /garbled?kind=K        a reply that is no usable HTTP: K is double-gzip (Content-Encoding: gzip,
                         gzip on a body gzipped once), unknown-coding (Content-Encoding: zstd2),
                         bad-gzip (gzip claimed, bytes that are not), http09 (a body without a status
                         line), bad-chunks (chunk sizes that are not hex), bad-length
                         (Content-Length: abc)
  /conn                  200, JSON {client_port, connection_id, connections}
  /stats                 200, JSON {connections, connect_requests: ["host:port", ...], slow_started}
  CONNECT host:port      recorded in /stats, answered 403 (a proxy that refuses)
--watch-stdin: exit when stdin reaches EOF (the test process died or closed the pipe).
--tls-cert PEM --tls-key PEM: serve HTTPS instead (e.g. a self-signed certificate).
"""
import argparse
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse
from serverkit import QuietServer, exit_when_stdin_closes, send_reply, unblock_signals

STATE_LOCK = threading.Lock()
STATE = {"connections": 0, "connect_requests": [], "slow_started": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        with STATE_LOCK:
            STATE["connections"] += 1
            self.connection_id = STATE["connections"]

    def log_message(self, format, *args):
        pass

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _reply(self, status, body, content_type="application/octet-stream", extra=None):
        send_reply(self, status, body, content_type, extra or ())

    def _json(self, obj):
        self._reply(200, json.dumps(obj, sort_keys=True).encode(), "application/json")

    def _route(self):
        body = self._body()
        url = urlparse(self.path)
        query = parse_qs(url.query)
        path = url.path
        if path == "/echo":
            self._json({"method": self.command, "path": self.path,
                        "headers": [[k, v] for k, v in self.headers.items()],
                        "body_hex": body.hex(), "client_port": self.client_address[1]})
        elif path == "/slow":
            with STATE_LOCK:
                STATE["slow_started"] += 1
            time.sleep(float(query.get("seconds", ["5"])[0]))
            self._reply(200, b"slow", "text/plain")
        elif path == "/drop":
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"0123456789")
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
        elif path == "/nothing":
            self.close_connection = True
            self.connection.shutdown(2)
        elif path == "/bigheader":
            self.send_response(200)
            self.send_header("X-Big", "x" * int(query.get("bytes", ["200000"])[0]))
            self.send_header("Content-Length", "2")
            self.end_headers()
            try:
                self.wfile.write(b"ok")
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
        elif path == "/large":
            n = int(query.get("bytes", ["1048576"])[0])
            chunked = query.get("chunked", ["0"])[0] == "1"
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(n))
            self.end_headers()
            block = b"x" * 65536
            sent = 0
            try:
                while sent < n:
                    part = block[: min(len(block), n - sent)]
                    if chunked:
                        self.wfile.write(b"%x\r\n" % len(part) + part + b"\r\n")
                    else:
                        self.wfile.write(part)
                    sent += len(part)
                if chunked:
                    self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
        elif path.startswith("/garbled"):
            self._garbled(query.get("kind", [""])[0])
        elif path.startswith("/status/"):
            status = int(path[len("/status/"):])
            page = ("<html><head><title>%d Test Status</title></head><body><h1>Status %d</h1>"
                    "<p>S=s1:U=1234:E=abc:C=def:P=1cd:A=secret:V=2:H=0123456789abcdef</p></body></html>"
                    % (status, status)).encode()
            self._reply(status, page, "text/html; charset=utf-8")
        elif path == "/conn":
            with STATE_LOCK:
                total = STATE["connections"]
            self._json({"client_port": self.client_address[1], "connection_id": self.connection_id,
                        "connections": total})
        elif path == "/stats":
            with STATE_LOCK:
                self._json(dict(STATE))
        else:
            self._reply(404, b"not found", "text/plain")

    def _garbled(self, kind):
        import gzip
        body = b'{"ok": true}'
        replies = {
            "double-gzip": (b"Content-Encoding: gzip, gzip\r\nContent-Length: %d\r\n", gzip.compress(body)),
            "unknown-coding": (b"Content-Encoding: zstd2\r\nContent-Length: %d\r\n", body),
            "bad-gzip": (b"Content-Encoding: gzip\r\nContent-Length: %d\r\n", b"\x1f\x8b\x08\x00garbage, not deflate" * 4),
            "bad-chunks": (b"Transfer-Encoding: chunked\r\n", b"zz\r\nnot a chunk\r\n0\r\n\r\n"),
            "bad-length": (b"Content-Length: abc\r\n", body),
        }
        self.close_connection = True
        if kind == "http09":
            self.wfile.write(b"just some bytes, no status line\n")
        elif kind in replies:
            headers, payload = replies[kind]
            if b"%d" in headers:
                headers = headers % len(payload)
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n" + headers + b"\r\n" + payload)
        else:
            self.wfile.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        self.wfile.flush()

    do_GET = _route
    do_POST = _route
    do_PUT = _route
    do_HEAD = _route

    def do_CONNECT(self):
        with STATE_LOCK:
            STATE["connect_requests"].append(self.path)
        self.close_connection = True
        self._reply(403, b"proxy refuses", "text/plain")


def main():
    unblock_signals()
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--print-port", action="store_true")
    parser.add_argument("--watch-stdin", action="store_true")
    parser.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate (and --tls-key)")
    parser.add_argument("--tls-key")
    args = parser.parse_args()
    server = QuietServer(("127.0.0.1", args.port), Handler)
    if args.tls_cert:
        import ssl
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    if args.watch_stdin:
        exit_when_stdin_closes()
    if args.print_port:
        print("PORT=%d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
