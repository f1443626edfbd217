"""Plumbing shared by the test servers in this folder (run by PythonServer.swift)."""
import os
import signal
import sys
import threading
from http.server import ThreadingHTTPServer


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that hangs up early (timeouts, cancellation, size limits) is expected here.
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            ThreadingHTTPServer.handle_error(self, request, client_address)


def send_reply(handler, status, body=b"", content_type=None, headers=()):
    """One whole HTTP reply on a BaseHTTPRequestHandler: status, Content-Type (none when
    `content_type` is None, as for a 304), Content-Length, extra headers, and the body (not for
    HEAD). A client that has hung up already is not an error here."""
    handler.send_response(status)
    if content_type is not None:
        handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in headers:
        handler.send_header(name, value)
    handler.end_headers()
    if handler.command == "HEAD":
        return
    try:
        handler.wfile.write(body)
    except (BrokenPipeError, ConnectionResetError):
        pass


def unblock_signals():
    """A parent that spawns us from a thread with signals blocked (Foundation.Process called on a
    Swift concurrency worker thread) passes its mask on: unblock so SIGTERM/SIGINT still work."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])


def exit_when_stdin_closes():
    """The test process holds our stdin: when it goes, so do we, and no server is left behind."""
    def watch():
        try:
            while sys.stdin.buffer.read(4096):
                pass
        finally:
            os._exit(0)
    threading.Thread(target=watch, daemon=True).start()


def thrift_to_json(value, render_bytes=bytes.hex):
    """Any value of the SDK's generated classes as plain JSON data, field by field (unset fields
    left out), for tests to compare against what enlog sent."""
    if isinstance(value, bytes):
        return render_bytes(value)
    if isinstance(value, (list, tuple)):
        return [thrift_to_json(v, render_bytes) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(thrift_to_json(v, render_bytes) for v in value)
    if isinstance(value, dict):
        return {str(k): thrift_to_json(v, render_bytes) for k, v in value.items()}
    if hasattr(value, "thrift_spec"):
        out = {}
        for spec in value.thrift_spec:
            if spec is None:
                continue
            field = getattr(value, spec[2])
            if field is not None:
                out[spec[2]] = thrift_to_json(field, render_bytes)
        return out
    return value
