#!/usr/bin/env python3
"""The payers of bench/run.sh's slow-processor run, in one light process.

Each of N threads pays one new session after another through the hosted page, as a browser
would: start-payment over the API, the checkout page for its CSRF token and cookie, then the
card form post with the sandbox's approving test card. With the sandbox processor made slow,
each form post waits on the processor, so every payer keeps about one payment in flight.
Python's standard library only, keep-alive connections: the payers cost little CPU next to
the load they put on the service (a shell and curl per request cost a third of a core).

Appends one line per payment to the output file: the form post's HTTP status and its time in
seconds (or `start-payment-failed` / `page-failed`). Runs until it is killed.

    bench/payer.py BASE_URL TOKEN REFERENCE_PREFIX OUTPUT_FILE PAYERS
"""

import http.client
import json
import re
import sys
import threading
import time
import urllib.parse

CSRF = re.compile(r'name="csrfToken" value="([^"]+)"')


def payer(base, token, prefix, out, lock):
    url = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    n = 0
    while True:
        n += 1
        try:
            body = json.dumps({
                "callbackSuccessUrl": "https://merchant.example/ok",
                "callbackFailUrl": "https://merchant.example/fail",
                "totalTransactionAmount": 25.50,
                "currencyCode": "USD",
                "transactionReferenceNumber": f"{prefix}-{n}",
            })
            conn.request("POST", "/pay/api/start-payment", body, {
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
            })
            answer = conn.getresponse()
            created = answer.read()
            if answer.status != 200:
                record(out, lock, "start-payment-failed")
                time.sleep(0.2)
                continue
            session = json.loads(created)["checkoutSessionId"]

            conn.request("GET", f"/pay/checkout-payment/{session}")
            page = conn.getresponse()
            html = page.read().decode()
            # The CSRF cookie is `Secure`; over plain http it goes back as a header.
            cookies = [c.split(";", 1)[0] for c in page.headers.get_all("Set-Cookie") or []]
            found = CSRF.search(html)
            if page.status != 200 or not cookies or not found:
                record(out, lock, "page-failed")
                time.sleep(0.2)
                continue

            form = urllib.parse.urlencode({
                "checkoutSessionId": session,
                "csrfToken": found.group(1).replace("&#x2F;", "/").replace("&amp;", "&"),
                "lg": "en",
                "cardholderName": "Bench Payer",
                "cardNumber": "4242424242424242",
                "cardExpiry": "12/34",
                "cardCvv": "123",
            })
            started = time.monotonic()
            conn.request("POST", "/pay/process-payment", form, {
                "Content-Type": "application/x-www-form-urlencoded",
                "Cookie": "; ".join(cookies),
            })
            posted = conn.getresponse()
            posted.read()
            record(out, lock, f"{posted.status} {time.monotonic() - started:.3f}")
        except (OSError, http.client.HTTPException, ValueError, KeyError):
            record(out, lock, "page-failed")
            conn.close()
            time.sleep(0.2)


def record(out, lock, line):
    with lock:
        with open(out, "a", encoding="ascii") as f:
            f.write(line + "\n")


def main():
    base, token, prefix, out, payers = sys.argv[1:6]
    lock = threading.Lock()
    for i in range(int(payers)):
        threading.Thread(
            target=payer, args=(base, token, f"{prefix}-pay{i}", out, lock), daemon=True
        ).start()
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
