#!/usr/bin/env python3
"""A merchant's webhook endpoint for tests: verifies every delivery with the third-party
`standardwebhooks` library (installed by scripts/webhook-receiver.sh) and answers as told.

Usage:
    WEBHOOK_RECEIVER_SECRETS='whsec_... whsec_...' \
        python webhook_receiver.py --log FILE [--host 127.0.0.1] [--port 0] [--mode ok]
    python webhook_receiver.py --log FILE --secrets-file FILE [--mode-file FILE] ...

The secrets (space-separated) come from the environment or from a file read again on every
request (so that a test can give the receiver the secret of an endpoint it registers after the
receiver started, and add a rotated one), never from the command line, so that they do not
show in a process list. Each request is verified once per secret, separately, with
`standardwebhooks.Webhook(secret).verify(body, headers)`.

With --mode-file, the file's content (when it names a mode) replaces --mode, read again on
every request, so that a test can switch the receiver from failing to answering.

The answer is chosen by the first path segment when it names a mode (`/ok`, `/slow`, `/fail`,
`/hang`, `/close`, `/redirect`), else by --mode:
    ok        200 when one of the secrets verifies the request, else 400 (as a merchant would)
    slow      as ok, after 300 ms (so that attempts are in flight long enough to overlap)
    fail      500 with a short text body
    hang      reads the request and never answers (until the client goes away, or 300 s)
    close     reads the request and closes the connection without answering
    redirect  302 to /ok on the same server

Before answering, each request is appended to the --log file as one JSON line:
    {"method", "path", "mode", "headers": {name: value}, "body": text,
     "verified": [bool per secret], "errors": [message or null per secret],
     "received_at": unix seconds (float), "secrets": how many secrets were tried}
and, once the answer is sent (or the connection given up), one line
    {"answered": the request's webhook-id, "received_at": ..., "answered_at": unix seconds}
so that overlapping attempts of one message can be seen. "answered_at" is taken just before
the answer's first byte is written (the client cannot have it earlier), so that a thread
descheduled after writing never makes the client's next request look concurrent with it.

Once listening, prints `listening on HOST:PORT` on stdout (with the port actually bound, which
matters with --port 0) and then nothing else.
"""

import argparse
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook

MODES = ("ok", "slow", "fail", "hang", "close", "redirect")


def verify_all(secrets, body, headers):
    verified, errors = [], []
    for secret in secrets:
        try:
            Webhook(secret).verify(body, headers, json_parse=False)
        except Exception as error:  # the library's verdict, whatever its exception
            verified.append(False)
            errors.append(f"{type(error).__name__}: {error}")
        else:
            verified.append(True)
            errors.append(None)
    return verified, errors


class Handler(BaseHTTPRequestHandler):
    server_version = "webhook-receiver"
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass  # stdout carries only the banner; the JSON lines are the log

    def do_POST(self):
        self.handle_any()

    def do_GET(self):
        self.handle_any()

    def handle_any(self):
        received_at = time.time()
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        headers = {name.lower(): value for name, value in self.headers.items()}
        secrets = self.server.current_secrets()
        verified, errors = verify_all(secrets, body, headers)
        first = self.path.lstrip("/").split("/", 1)[0].split("?", 1)[0]
        mode = first if first in MODES else self.server.current_mode()
        record = {
            "method": self.command,
            "path": self.path,
            "mode": mode,
            "headers": headers,
            "body": body.decode("utf-8", errors="replace"),
            "verified": verified,
            "errors": errors,
            "received_at": received_at,
            "secrets": len(secrets),
        }
        self.server.append(record)
        self.verified_any = any(verified)
        self.answering_at = None
        try:
            getattr(self, "answer_" + mode)()
        finally:
            self.server.append({
                "answered": headers.get("webhook-id"),
                "received_at": received_at,
                "answered_at": self.answering_at or time.time(),
            })

    def answer_text(self, status, text, extra_headers=()):
        payload = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in extra_headers:
            self.send_header(name, value)
        self.answering_at = time.time()
        self.end_headers()
        self.wfile.write(payload)

    def answer_ok(self):
        if self.verified_any:
            self.answer_text(200, "received")
        else:
            self.answer_text(400, "signature not verified")

    def answer_slow(self):
        time.sleep(0.3)
        self.answer_ok()

    def answer_fail(self):
        self.answer_text(500, "receiver failed on purpose")

    def answer_redirect(self):
        self.answer_text(302, "moved", [("Location", "/ok")])

    def answer_hang(self):
        # Waits until the client closes its end (recv returns b"") or 300 s pass.
        self.connection.settimeout(1.0)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                if self.connection.recv(1) == b"":
                    break
            except socket.timeout:
                continue
            except OSError:
                break
        self.close_connection = True

    def answer_close(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class Receiver(ThreadingHTTPServer):
    daemon_threads = True

    def current_secrets(self):
        if self.secrets_file:
            try:
                with open(self.secrets_file, encoding="utf-8") as f:
                    return f.read().split()
            except FileNotFoundError:
                return []
        return self.secrets

    def current_mode(self):
        if self.mode_file:
            try:
                with open(self.mode_file, encoding="utf-8") as f:
                    mode = f.read().strip()
                if mode in MODES:
                    return mode
            except FileNotFoundError:
                pass
        return self.mode

    def append(self, record):
        with self.log_lock, open(self.log_path, "a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\n")
            log.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--mode", choices=MODES, default="ok")
    parser.add_argument("--log", required=True, help="JSON-lines file of the requests received")
    parser.add_argument("--secrets-file", help="file of space-separated secrets, read per request")
    parser.add_argument("--mode-file", help="file naming the mode, read per request")
    args = parser.parse_args()

    secrets = os.environ.get("WEBHOOK_RECEIVER_SECRETS", "").split()
    if not secrets and not args.secrets_file:
        sys.exit("WEBHOOK_RECEIVER_SECRETS or --secrets-file must give the whsec_ secrets")

    server = Receiver((args.host, args.port), Handler)
    server.secrets = secrets
    server.secrets_file = args.secrets_file
    server.mode_file = args.mode_file
    server.mode = args.mode
    server.log_path = args.log
    server.log_lock = threading.Lock()
    host, port = server.server_address[:2]
    print(f"listening on {host}:{port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
