#!/usr/bin/env python3
"""Loopback OAuth test server for enlog's auth tests.

Two modes, one stdlib http.server on 127.0.0.1 port 0; prints ``PORT=<n>`` on stdout once listening.

--mode oauth1  Evernote-style OAuth 1.0a: ``/oauth`` (temporary credentials and token exchange, every
               signature verified by oauthlib's SignatureOnlyEndpoint, HMAC-SHA1 and PLAINTEXT) and
               ``/OAuth.action`` (simulated approval: 302 to the registered callback).
--mode oauth2  Evernote-2026-style OAuth 2.0: RFC 8414 metadata, RFC 7591 registration, ``/auth/authorize``
               (simulated approval) and ``/auth/token`` (authorization_code with PKCE and refresh_token,
               run by oauthlib's WebApplicationServer) issuing HS256 JWTs whose ``mono_authn_token``
               claim is a classic ``S=s1:U=…:E=<hex ms>:…`` token. ``--refuse-discovery STATUS`` and
               ``--refuse-registration STATUS`` refuse those steps, as for a plan without API access.

``GET /_stats`` answers JSON counters so tests can see what the server verified.
The process exits by itself after --max-seconds (default 300).
"""
import argparse
import urllib.error
import urllib.request
import base64
import hashlib
import hmac
import json
import os
import secrets
import signal
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

os.environ.setdefault("OAUTHLIB_INSECURE_TRANSPORT", "1")  # loopback http only

from oauthlib.oauth1 import RequestValidator as OAuth1RequestValidator  # noqa: E402
from oauthlib.oauth1 import SignatureOnlyEndpoint  # noqa: E402
from oauthlib.oauth2 import RequestValidator as OAuth2RequestValidator  # noqa: E402
from oauthlib.oauth2 import WebApplicationServer  # noqa: E402
from oauthlib.oauth2.rfc6749 import errors as oauth2_errors  # noqa: E402
from serverkit import QuietServer, exit_when_stdin_closes, unblock_signals

LOCK = threading.Lock()
STATS = {"verified": 0, "rejected": 0, "methods": [], "pkce_verified": 0, "refreshed": 0, "registered": 0}


def stat(name, value=1):
    with LOCK:
        if isinstance(STATS[name], list):
            STATS[name].append(value)
        else:
            STATS[name] += value


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# --------------------------------------------------------------------------------------------- OAuth 1.0a
class OAuth1Validator(OAuth1RequestValidator):
    def __init__(self, consumer_key, consumer_secret):
        super().__init__()
        self.consumer_key = consumer_key
        self.consumer_secret = consumer_secret
        self.nonces = set()
        self.temp = {}  # temp token -> {"secret", "callback", "verifier"}

    enforce_ssl = False

    @property
    def allowed_signature_methods(self):
        return ("HMAC-SHA1", "PLAINTEXT")

    @property
    def dummy_client(self):
        return "dummy-client"

    @property
    def dummy_access_token(self):
        return "dummy-token"

    def check_client_key(self, client_key):
        return bool(client_key) and len(client_key) <= 128

    def check_nonce(self, nonce):
        return bool(nonce) and len(nonce) <= 128

    def validate_timestamp_and_nonce(self, client_key, timestamp, nonce, request, request_token=None, access_token=None):
        key = (client_key, timestamp, nonce)
        with LOCK:
            if key in self.nonces:
                return False
            self.nonces.add(key)
        return True

    def validate_client_key(self, client_key, request):
        return hmac.compare_digest(client_key, self.consumer_key)

    def get_client_secret(self, client_key, request):
        return self.consumer_secret if client_key == self.consumer_key else "dummy-secret"

    def get_access_token_secret(self, client_key, token, request):
        entry = self.temp.get(token)
        return entry["secret"] if entry else "dummy-secret"

    get_request_token_secret = get_access_token_secret


class OAuth1State:
    def __init__(self, args):
        self.args = args
        self.validator = OAuth1Validator(args.consumer_key, args.consumer_secret)
        self.endpoint = SignatureOnlyEndpoint(self.validator)


def handle_oauth1(handler, state, method, url, body):
    parsed = urllib.parse.urlsplit(url)
    query = dict(urllib.parse.parse_qsl(parsed.query, keep_blank_values=True))
    if parsed.path == "/oauth":
        headers = {k: v for k, v in handler.headers.items()}
        valid, request = state.endpoint.validate_request(url, method, body or None, headers)
        if not valid:
            stat("rejected")
            return handler.reply(401, "text/plain", b"oauth_problem=signature_invalid")
        stat("verified")
        stat("methods", request.signature_method)
        params = dict(request.params)
        token = params.get("oauth_token")
        if not token:
            callback = params.get("oauth_callback")
            if not callback:
                return handler.reply(400, "text/plain", b"oauth_problem=parameter_absent")
            temp = "temp-" + secrets.token_hex(8)
            state.validator.temp[temp] = {"secret": "", "callback": callback, "verifier": None, "used": False}
            body = urllib.parse.urlencode({"oauth_token": temp, "oauth_token_secret": "", "oauth_callback_confirmed": "true"})
            return handler.reply(200, "text/plain", body.encode())
        entry = state.validator.temp.get(token)
        verifier = params.get("oauth_verifier")
        if not entry or entry["used"] or not entry["verifier"] or not verifier or not hmac.compare_digest(verifier, entry["verifier"]):
            return handler.reply(401, "text/plain", b"oauth_problem=token_rejected")
        entry["used"] = True
        port = handler.server.server_address[1]
        expires_ms = int((time.time() + 365 * 86400) * 1000)
        body = urllib.parse.urlencode({
            "oauth_token": state.args.issue_token,
            "oauth_token_secret": "",
            "edam_shard": "s1",
            "edam_userId": "123456",
            "edam_expires": str(expires_ms),
            "edam_noteStoreUrl": state.args.note_store_url or f"http://127.0.0.1:{port}/shard/s1/notestore",
            "edam_webApiUrlPrefix": f"http://127.0.0.1:{port}/shard/s1/",
        })
        return handler.reply(200, "text/plain", body.encode())
    if parsed.path == "/OAuth.action":
        entry = state.validator.temp.get(query.get("oauth_token", ""))
        if not entry:
            return handler.reply(400, "text/plain", b"unknown oauth_token")
        params = {"oauth_token": query["oauth_token"]}
        if not state.args.deny:
            entry["verifier"] = secrets.token_hex(16)
            params["oauth_verifier"] = entry["verifier"]
        params["sandbox_lnb"] = "false"
        sep = "&" if "?" in entry["callback"] else "?"
        return handler.redirect(entry["callback"] + sep + urllib.parse.urlencode(params))
    return handler.reply(404, "text/plain", b"not found")


# ---------------------------------------------------------------------------------------------- OAuth 2.0
SCOPES = ["openid", "profile", "mono_authn_token", "email", "offline_access"]


class Client:
    def __init__(self, client_id):
        self.client_id = client_id


class OAuth2Validator(OAuth2RequestValidator):
    def __init__(self):
        super().__init__()
        self.clients = {}   # client_id -> [redirect_uri]
        self.codes = {}     # code -> dict
        self.refresh = {}   # refresh token -> dict

    def validate_client_id(self, client_id, request, *args, **kwargs):
        return client_id in self.clients

    def validate_redirect_uri(self, client_id, redirect_uri, request, *args, **kwargs):
        return redirect_uri in self.clients.get(client_id, [])

    def get_default_redirect_uri(self, client_id, request, *args, **kwargs):
        return (self.clients.get(client_id) or [None])[0]

    def validate_response_type(self, client_id, response_type, client, request, *args, **kwargs):
        return response_type == "code"

    def validate_scopes(self, client_id, scopes, client, request, *args, **kwargs):
        return all(s in SCOPES for s in scopes)

    def get_default_scopes(self, client_id, request, *args, **kwargs):
        return SCOPES

    def is_pkce_required(self, client_id, request):
        return True

    def save_authorization_code(self, client_id, code, request, *args, **kwargs):
        self.codes[code["code"]] = {
            "client_id": client_id, "redirect_uri": request.redirect_uri, "scopes": request.scopes,
            "challenge": request.code_challenge, "method": request.code_challenge_method,
        }

    def client_authentication_required(self, request, *args, **kwargs):
        return False

    def authenticate_client(self, request, *args, **kwargs):
        return False

    def authenticate_client_id(self, client_id, request, *args, **kwargs):
        if client_id in self.clients:
            request.client = Client(client_id)
            return True
        return False

    def validate_code(self, client_id, code, client, request, *args, **kwargs):
        entry = self.codes.get(code)
        if not entry or entry["client_id"] != client_id:
            return False
        request.scopes = entry["scopes"]
        request.user = "user-123456"
        return True

    def get_code_challenge(self, code, request):
        entry = self.codes.get(code)
        return entry["challenge"] if entry else None

    def get_code_challenge_method(self, code, request):
        entry = self.codes.get(code)
        return entry["method"] if entry else None

    def confirm_redirect_uri(self, client_id, code, redirect_uri, client, request, *args, **kwargs):
        entry = self.codes.get(code)
        return bool(entry) and entry["redirect_uri"] == redirect_uri

    def validate_grant_type(self, client_id, grant_type, client, request, *args, **kwargs):
        return grant_type in ("authorization_code", "refresh_token")

    def save_bearer_token(self, token, request, *args, **kwargs):
        if request.grant_type == "authorization_code":
            stat("pkce_verified")
        if "refresh_token" in token:
            self.refresh[token["refresh_token"]] = {"client_id": request.client_id, "scopes": request.scopes}

    def invalidate_authorization_code(self, client_id, code, request, *args, **kwargs):
        self.codes.pop(code, None)

    def validate_refresh_token(self, refresh_token, client, request, *args, **kwargs):
        entry = self.refresh.get(refresh_token)
        if not entry or entry["client_id"] != client.client_id:
            return False
        request.user = "user-123456"
        return True

    def get_original_scopes(self, refresh_token, request, *args, **kwargs):
        return self.refresh[refresh_token]["scopes"]

    def rotate_refresh_token(self, request):
        old = request.refresh_token
        if request.grant_type == "refresh_token" and old in self.refresh:
            del self.refresh[old]
            stat("refreshed")
        return True


class OAuth2State:
    def __init__(self, args):
        self.args = args
        self.key = secrets.token_bytes(32)
        self.counter = 0
        self.validator = OAuth2Validator()
        self.server = WebApplicationServer(
            self.validator, token_generator=self.access_token, token_expires_in=args.access_lifetime,
            refresh_token_generator=self.refresh_token)

    def jwt(self, claims):
        header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        payload = b64url(json.dumps(claims, separators=(",", ":")).encode())
        sig = hmac.new(self.key, f"{header}.{payload}".encode(), hashlib.sha256).digest()
        return f"{header}.{payload}.{b64url(sig)}"

    def classic_token(self, now):
        with LOCK:
            self.counter += 1
            n = self.counter
        token = self.args.issue_token
        if token.startswith("S="):
            return token if n == 1 else f"{token}:R={n}"
        exp_ms = int((now + self.args.classic_lifetime) * 1000)
        return f"S=s1:U={123456:x}:E={exp_ms:x}:C={int(now * 1000):x}:P=1cd:A=enlog-test:V=2:H={token}-{n}"

    def access_token(self, request):
        now = time.time()
        return self.jwt({
            "iss": "enlog-test", "sub": "123456", "clientId": request.client_id, "iat": int(now),
            "exp": int(now + self.args.access_lifetime), "mono_authn_token": self.classic_token(now),
        })

    def refresh_token(self, request):
        now = time.time()
        return self.jwt({"clientId": request.client_id, "iat": int(now), "exp": int(now + self.args.refresh_lifetime),
                         "jti": secrets.token_hex(8)})


def handle_oauth2(handler, state, method, url, body):
    parsed = urllib.parse.urlsplit(url)
    base = f"http://127.0.0.1:{handler.server.server_address[1]}"
    if parsed.path == "/.well-known/oauth-authorization-server" and method == "GET":
        if state.args.refuse_discovery:
            return handler.reply_json(state.args.refuse_discovery, {"error": "access_denied"})
        return handler.reply_json(200, {
            "issuer": base, "authorization_endpoint": base + "/auth/authorize", "token_endpoint": base + "/auth/token",
            "registration_endpoint": base + "/auth/register", "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"], "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"], "scopes_supported": SCOPES,
        })
    if parsed.path == "/auth/register" and method == "POST":
        if state.args.refuse_registration:
            # As a service that admits apps only for some plans: an RFC 7591 error answer.
            return handler.reply_json(state.args.refuse_registration, {
                "error": "unapproved_software_statement",
                "error_description": "API access is not available for this account's plan"})
        try:
            meta = json.loads(body or "{}")
        except ValueError:
            return handler.reply_json(400, {"error": "invalid_client_metadata"})
        uris = meta.get("redirect_uris") or []
        ok = (meta.get("token_endpoint_auth_method") == "none" and uris and
              all(urllib.parse.urlsplit(u).hostname in ("127.0.0.1", "localhost") for u in uris))
        if not ok:
            return handler.reply_json(400, {"error": "invalid_redirect_uri"})
        client_id = "client-" + secrets.token_hex(8)
        state.validator.clients[client_id] = uris
        stat("registered")
        return handler.reply_json(201, dict(meta, client_id=client_id, client_id_issued_at=int(time.time())))
    if parsed.path == "/auth/authorize" and method == "GET":
        try:
            scopes, credentials = state.server.validate_authorization_request(url, "GET")
        except oauth2_errors.FatalClientError as err:
            return handler.reply_json(400, {"error": err.error})
        except oauth2_errors.OAuth2Error as err:
            return handler.redirect(err.in_uri(err.redirect_uri))
        if state.args.deny:
            params = {"error": "access_denied", "state": credentials.get("state") or ""}
            return handler.redirect(credentials["redirect_uri"] + "?" + urllib.parse.urlencode(params))
        headers, _, status = state.server.create_authorization_response(url, "GET", scopes=scopes, credentials=credentials)
        return handler.redirect(headers["Location"])
    if parsed.path == "/auth/token" and method == "POST":
        headers = {k: v for k, v in handler.headers.items()}
        out_headers, out_body, status = state.server.create_token_response(url, "POST", body, headers)
        return handler.reply(status, "application/json", (out_body or "").encode())
    return handler.reply(404, "text/plain", b"not found")


# ------------------------------------------------------------------------------------------------ serving
class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet: URLs carry codes and verifiers
        pass

    def reply(self, status, content_type, body):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def reply_json(self, status, obj):
        self.reply(status, "application/json", json.dumps(obj).encode())

    def redirect(self, location):
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def forward_edam(self, _unused):
        """Like a real Evernote host, serve the Thrift API beside OAuth: /edam/user and
        /edam/note/<shard> are passed to the SDK-based server (evernote_server.py) unchanged."""
        path = self.path
        if path.startswith("/edam/note/"):
            path = "/shard/%s/notestore" % path[len("/edam/note/"):]
        request = urllib.request.Request(self.server.edam_url + path, data=self.raw_body, method="POST",
                                         headers={"Content-Type": "application/x-thrift"})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                self.reply(answer.status, "application/x-thrift", answer.read())
        except urllib.error.HTTPError as err:
            self.reply(err.code, "text/plain", err.read())

    def dispatch(self, method):
        length = int(self.headers.get("Content-Length") or 0)
        self.raw_body = self.rfile.read(length) if length else b""
        body = self.raw_body.decode("utf-8", "replace")
        url = f"http://{self.headers.get('Host', '127.0.0.1')}{self.path}"
        if self.path == "/_stats":
            with LOCK:
                return self.reply_json(200, STATS)
        if self.path.startswith("/edam/") and self.server.edam_url:
            return self.forward_edam(None)
        try:
            if self.server.mode == "oauth1":
                handle_oauth1(self, self.server.state, method, url, body)
            else:
                handle_oauth2(self, self.server.state, method, url, body)
        except Exception as err:  # keep the server alive; tests see the 500
            print(f"error: {type(err).__name__}: {err}", file=sys.stderr, flush=True)
            self.reply(500, "text/plain", b"internal error")

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["oauth1", "oauth2"], required=True)
    p.add_argument("--consumer-key")
    p.add_argument("--consumer-secret")
    p.add_argument("--issue-token", required=True)
    p.add_argument("--note-store-url")
    p.add_argument("--deny", action="store_true")
    p.add_argument("--refuse-discovery", type=int, metavar="STATUS", help="answer metadata discovery with this status")
    p.add_argument("--refuse-registration", type=int, metavar="STATUS", help="answer client registration with this status")
    p.add_argument("--access-lifetime", type=int, default=3600)
    p.add_argument("--classic-lifetime", type=int, default=365 * 86400)
    p.add_argument("--refresh-lifetime", type=int, default=30 * 86400)
    p.add_argument("--max-seconds", type=float, default=300)
    p.add_argument("--edam-url", help="base URL of evernote_server.py, served under /edam/ here")
    p.add_argument("--print-port", action="store_true", help="accepted for the shared harness; the port is always printed")
    p.add_argument("--watch-stdin", action="store_true", help="exit when stdin closes (the test process is gone)")
    p.add_argument("--port", type=int, default=0)
    args = p.parse_args()
    # A parent may have spawned us with SIGTERM blocked (the mask is inherited): unblock it and exit on it.
    unblock_signals()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    if args.mode == "oauth1" and not (args.consumer_key and args.consumer_secret is not None):
        p.error("--mode oauth1 needs --consumer-key and --consumer-secret")
    server = QuietServer(("127.0.0.1", args.port), Handler)
    server.edam_url = args.edam_url
    server.daemon_threads = True
    server.mode = args.mode
    server.state = OAuth1State(args) if args.mode == "oauth1" else OAuth2State(args)
    timer = threading.Timer(args.max_seconds, lambda: os._exit(0))
    timer.daemon = True
    timer.start()
    if args.watch_stdin:
        exit_when_stdin_closes()
    print(f"PORT={server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
