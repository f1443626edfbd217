#!/usr/bin/env python3
"""A stand-in Nominatim server for enlog's tests (standard library only).

Listens on 127.0.0.1 (port 0 by default: the kernel picks one) and prints PORT=<n> once ready.

  GET /reverse?format=jsonv2&lat=..&lon=..   the fixture (Tests/Fixtures/nominatim/*.json with
                                             "lat"/"lon") nearest to the point; farther than
                                             --radius degrees from all: {"error":"Unable to geocode"}
  GET /_test/requests                        JSON list of the /reverse requests so far:
                                             {"path", "query" (decoded, last value per name),
                                              "raw_query", "user_agent", "accept_language_header",
                                              "time"}

Switches (apply to /reverse only):
  --delay SECONDS   sleep before answering
  --status N        answer HTTP N (e.g. 500) with a small HTML body
  --garbage         answer 200 with a body that is not JSON
  --unable          answer 200 {"error":"Unable to geocode"} whatever the point
  --lifetime SECONDS  exit by itself after this long (default 120), in case nobody stops it
"""
import argparse
import glob
import json
import math
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit
from serverkit import QuietServer, exit_when_stdin_closes, send_reply, unblock_signals

UNABLE = {"error": "Unable to geocode"}


def load_fixtures(directory):
    fixtures = []
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        with open(path, "rb") as handle:
            raw = handle.read()
        try:
            reply = json.loads(raw)
        except ValueError:
            continue
        if isinstance(reply, dict) and "lat" in reply and "lon" in reply:
            fixtures.append((float(reply["lat"]), float(reply["lon"]), raw, os.path.basename(path)))
    return fixtures


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--fixtures", default=os.path.join(here, "..", "Fixtures", "nominatim"))
    parser.add_argument("--radius", type=float, default=0.5)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--status", type=int, default=0)
    parser.add_argument("--garbage", action="store_true")
    parser.add_argument("--unable", action="store_true")
    parser.add_argument("--lifetime", type=float, default=120.0)
    # The shared test harness (PythonServer.swift) passes these: the port is always printed,
    # and a closed stdin means the test process is gone.
    parser.add_argument("--print-port", action="store_true")
    parser.add_argument("--watch-stdin", action="store_true")
    options = parser.parse_args()

    fixtures = load_fixtures(options.fixtures)
    requests = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):  # keep the test output clean
            pass

        def send(self, status, body, content_type="application/json; charset=utf-8"):
            send_reply(self, status, body, content_type)

        def do_GET(self):
            parts = urlsplit(self.path)
            if parts.path == "/_test/requests":
                with lock:
                    body = json.dumps(requests).encode()
                self.send(200, body)
                return
            if parts.path != "/reverse":
                self.send(404, b'{"error":"not found"}')
                return
            query = {name: values[-1] for name, values in parse_qs(parts.query, keep_blank_values=True).items()}
            with lock:
                requests.append({
                    "path": parts.path,
                    "query": query,
                    "raw_query": parts.query,
                    "user_agent": self.headers.get("User-Agent", ""),
                    "accept_language_header": self.headers.get("Accept-Language", ""),
                    "time": time.time(),
                })
            if options.delay > 0:
                time.sleep(options.delay)
            if options.status:
                self.send(options.status, b"<html><body>Internal Server Error</body></html>", "text/html")
                return
            if options.garbage:
                self.send(200, b"<html>\x00\xff not json", "text/html")
                return
            if options.unable:
                self.send(200, json.dumps(UNABLE).encode())
                return
            try:
                lat, lon = float(query["lat"]), float(query["lon"])
            except (KeyError, ValueError):
                self.send(400, json.dumps({"error": {"code": 400, "message": "Parameter 'lat' missing."}}).encode())
                return
            best = None
            for f_lat, f_lon, raw, _name in fixtures:
                distance = math.hypot(f_lat - lat, f_lon - lon)
                if best is None or distance < best[0]:
                    best = (distance, raw)
            if best is None or best[0] > options.radius:
                self.send(200, json.dumps(UNABLE).encode())
            else:
                self.send(200, best[1])

    unblock_signals()
    server = QuietServer(("127.0.0.1", options.port), Handler)
    server.daemon_threads = True
    timer = threading.Timer(options.lifetime, lambda: os._exit(0))
    timer.daemon = True
    timer.start()
    if options.watch_stdin:
        exit_when_stdin_closes()
    print("PORT=%d" % server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
