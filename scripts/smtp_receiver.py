#!/usr/bin/env python3
"""An SMTP server for tests: `aiosmtpd` (installed by scripts/smtp-receiver.sh) on loopback,
answering as told, logging every message it accepts or refuses.

Usage:
    python smtp_receiver.py --log FILE [--host 127.0.0.1] [--port 0] [--mode-file FILE]

The mode is read again from --mode-file (when it names one) at every message, so that a test
can switch the server from refusing to accepting:
    ok       accepts every message (250)
    refuse   answers the message's data with 451 (a transient refusal: the sender retries)
    reject   answers the message's data with 554 (a permanent refusal)

Each message is appended to --log as one JSON line:
    {"mode", "accepted": bool, "mail_from", "rcpt_tos": [...], "raw": the message as sent
     (text, UTF-8 with replacement), "subject": decoded, "message_id",
     "parts": [{"content_type", "charset", "text": decoded}] for every non-multipart part}
The message is parsed by Python's `email` package (policy.default), not by our code.

Once listening, prints `listening on HOST:PORT` on stdout (with the port actually bound) and
then nothing else.
"""

import argparse
import asyncio
import email
import json
import os
import sys
from email import policy

from aiosmtpd.smtp import SMTP

MODES = ("ok", "refuse", "reject")


class Handler:
    def __init__(self, log_path, mode_file):
        self.log_path = log_path
        self.mode_file = mode_file

    def mode(self):
        if self.mode_file and os.path.exists(self.mode_file):
            with open(self.mode_file, encoding="utf-8") as f:
                text = f.read().strip()
            if text in MODES:
                return text
        return "ok"

    async def handle_DATA(self, server, session, envelope):
        mode = self.mode()
        raw = envelope.original_content or envelope.content
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
        message = email.message_from_bytes(raw, policy=policy.default)
        parts = []
        for part in message.walk():
            if part.is_multipart():
                continue
            parts.append(
                {
                    "content_type": part.get_content_type(),
                    "charset": part.get_content_charset(),
                    "text": part.get_content(),
                }
            )
        entry = {
            "mode": mode,
            "accepted": mode == "ok",
            "mail_from": envelope.mail_from,
            "rcpt_tos": list(envelope.rcpt_tos),
            "raw": raw.decode("utf-8", errors="replace"),
            "subject": str(message.get("subject", "")),
            "message_id": str(message.get("message-id", "")),
            "parts": parts,
        }
        with open(self.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
        if mode == "refuse":
            return "451 4.3.0 Try again later"
        if mode == "reject":
            return "554 5.7.1 Message refused"
        return "250 2.0.0 Message accepted"


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", required=True)
    parser.add_argument("--mode-file")
    args = parser.parse_args()
    handler = Handler(args.log, args.mode_file)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: SMTP(handler, hostname="receiver.test", decode_data=False),
        host=args.host,
        port=args.port,
    )
    host, port = server.sockets[0].getsockname()[:2]
    print(f"listening on {host}:{port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
