#!/usr/bin/env python3
"""Test-only Docker/OCI token server (distribution's `auth: token` flow), stdlib + openssl CLI.

Usage: token_server.py PORT SIGNING_KEY ISSUER USER:PASSWORD
  GET /token?service=S&scope=repository:NAME:ACTIONS[&scope=...]
  - Basic USER:PASSWORD gets every action asked for; anonymous callers get `pull` only;
    wrong credentials get 401.
  - The token is an RS256 JWT whose header `kid` is the libtrust fingerprint of the key, which
    is how distribution 2.8 finds the key in its rootcertbundle.
  - Every request is logged to stdout as `token-request scope=... user=...` (tests count them).
Env TOKEN_TTL: seconds the token lives (default 300).
"""
import base64
import hashlib
import json
import os
import subprocess
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, KEY, ISSUER, CREDS = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
TTL = int(os.environ.get("TOKEN_TTL", "300"))


def b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def key_id(path):
    der = subprocess.run(["openssl", "pkey", "-in", path, "-pubout", "-outform", "DER"],
                         check=True, capture_output=True).stdout
    b32 = base64.b32encode(hashlib.sha256(der).digest()[:30]).decode().rstrip("=")
    return ":".join(b32[i:i + 4] for i in range(0, len(b32), 4))


KID = key_id(KEY)


def jwt(subject, audience, access):
    now = int(time.time())
    header = {"typ": "JWT", "alg": "RS256", "kid": KID}
    claims = {"iss": ISSUER, "sub": subject, "aud": audience, "iat": now, "nbf": now - 5,
              "exp": now + TTL, "jti": b64url(os.urandom(12)), "access": access}
    head = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())
    sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", KEY], input=head.encode(),
                         check=True, capture_output=True).stdout
    return head + "." + b64url(sig)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        if url.path != "/token":
            return self.send_json(404, {"error": "not found"})
        query = urllib.parse.parse_qs(url.query)
        user = ""
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            if base64.b64decode(auth[6:]).decode() != CREDS:
                print("token-request rejected", flush=True)
                return self.send_json(401, {"error": "bad credentials"},
                                      {"WWW-Authenticate": 'Basic realm="token"'})
            user = CREDS.split(":", 1)[0]
        access = []
        for scope in query.get("scope", []):
            for one in scope.split(" "):
                parts = one.split(":")
                if len(parts) < 3:
                    continue
                actions = parts[-1].split(",")
                granted = actions if user else [a for a in actions if a == "pull"]
                access.append({"type": parts[0], "name": ":".join(parts[1:-1]),
                               "actions": granted})
        print("token-request scope=%s user=%s" % (",".join(query.get("scope", [])), user or "-"),
              flush=True)
        token = jwt(user, query.get("service", [""])[0], access)
        self.send_json(200, {"token": token, "access_token": token, "expires_in": TTL})

    def send_json(self, code, obj, headers=None):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)


print("token server on 127.0.0.1:%d kid=%s" % (PORT, KID), flush=True)
ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
