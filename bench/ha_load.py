"""Steady load on a running checkout sandbox through a database failover, and its verdict.

Workers send start-payments back to back; every other session is paid with the sandbox card
4242 4242 4242 4242 through its hosted card form. Every request is recorded (start, end,
status). The primary is killed at the moment written to --kill-file (by scripts/ha-failover.sh,
a float Unix time). After --seconds the load stops and every acknowledged session is read
back: prints acknowledged sessions lost, acknowledged payments whose state went backwards, the
failure window and the time to the first success after the kill, and exits 1 when any
acknowledged session was lost or any payment went backwards."""

import argparse
import http.client
import json
import re
import sys
import threading
import time
import urllib.parse
import uuid

CARD = "4242424242424242"


def request(port, method, path, body=None, headers=None, timeout=30):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.getheaders(), resp.read().decode("utf-8", "replace")
    finally:
        conn.close()


class Load:
    def __init__(self, port, token):
        self.port = port
        self.auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self.lock = threading.Lock()
        self.calls = []  # (started, ended, kind, status) ; status None: no answer
        self.sessions = {}  # id -> reference (acknowledged with 200)
        self.paid = set()  # ids whose payment was acknowledged Successful
        self.stop = False

    def call(self, kind, method, path, body=None, headers=None):
        started = time.time()
        try:
            status, hdrs, text = request(self.port, method, path, body, headers)
        except Exception:  # no answer at all: counted as a failure
            status, hdrs, text = None, [], ""
        with self.lock:
            self.calls.append((started, time.time(), kind, status))
        return status, hdrs, text

    def worker(self, n):
        i = 0
        while not self.stop:
            i += 1
            ref = f"HA-{n}-{i}-{uuid.uuid4().hex[:8]}"
            body = json.dumps({
                "callbackSuccessUrl": "https://merchant.example/ok",
                "callbackFailUrl": "https://merchant.example/fail",
                "totalTransactionAmount": 10.00,
                "currencyCode": "USD",
                "transactionReferenceNumber": ref,
            })
            status, _, text = self.call("start-payment", "POST", "/pay/api/start-payment", body, self.auth)
            if status != 200:
                time.sleep(0.05)
                continue
            sid = json.loads(text)["checkoutSessionId"]
            with self.lock:
                self.sessions[sid] = ref
            if i % 2:
                self.pay(sid)

    def pay(self, sid):
        status, hdrs, page = self.call("open-page", "GET", f"/pay/checkout-payment/{sid}")
        if status != 200:
            return
        cookie = "; ".join(v.split(";")[0] for k, v in hdrs if k.lower() == "set-cookie")
        m = re.search(r'name="csrfToken"\s+value="([^"]+)"', page) or re.search(
            r'value="([^"]+)"\s+name="csrfToken"', page)
        if not m:
            return
        form = urllib.parse.urlencode({
            "checkoutSessionId": sid, "csrfToken": m.group(1), "cardholderName": "Ada Lovelace",
            "cardNumber": CARD, "cardExpiry": "11/34", "cardCvv": "918",
        })
        status, hdrs, _ = self.call("pay", "POST", "/pay/process-payment", form, {
            "Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie})
        location = next((v for k, v in hdrs if k.lower() == "location"), "")
        if status == 303 and "state=Successful" in location:
            with self.lock:
                self.paid.add(sid)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--client-secret", required=True)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--seconds", type=float, default=40)
    p.add_argument("--kill-file", required=True)
    p.add_argument("--report", required=True)
    a = p.parse_args()

    status, _, text = request(a.port, "POST", "/api/public/security/auth", json.dumps(
        {"client_id": "sandbox-client", "client_secret": a.client_secret}),
        {"Content-Type": "application/json"})
    assert status == 200, text
    load = Load(a.port, json.loads(text)["token"])
    threads = [threading.Thread(target=load.worker, args=(n,)) for n in range(a.workers)]
    for t in threads:
        t.start()
    time.sleep(a.seconds)
    load.stop = True
    for t in threads:
        t.join()

    # Read back every acknowledged session, retrying while the service is still recovering.
    lost, backwards, states = [], [], {}
    for sid in list(load.sessions):
        for _ in range(100):
            status, _, text = request(a.port, "GET", f"/pay/api/payment/{sid}", headers=load.auth)
            if status in (200, 404):
                break
            time.sleep(0.2)
        if status != 200:
            lost.append(sid)
            continue
        state = json.loads(text)["state"]
        states[state] = states.get(state, 0) + 1
        if sid in load.paid and state != "Successful":
            backwards.append((sid, state))

    with open(a.kill_file) as f:
        killed = float(f.read().strip())
    failed = [c for c in load.calls if c[3] is None or c[3] >= 500]
    after = [c for c in failed if c[1] >= killed]
    first_success = min((c[1] for c in load.calls if c[0] >= killed and c[3] is not None and c[3] < 500), default=None)
    statuses = {}
    for c in after:
        statuses[str(c[3])] = statuses.get(str(c[3]), 0) + 1
    result = {
        "acknowledged_sessions": len(load.sessions),
        "acknowledged_payments": len(load.paid),
        "requests": len(load.calls),
        "acknowledged_sessions_lost": len(lost),
        "payments_gone_backwards": len(backwards),
        "failed_requests_after_kill": len(after),
        "failed_statuses": statuses,
        "longest_failed_request_s": round(max((c[1] - c[0] for c in after), default=0.0), 3),
        "failure_window_s": round(max(c[1] for c in after) - min(c[0] for c in after), 3) if after else 0.0,
        "first_success_after_kill_s": round(first_success - killed, 3) if first_success else None,
        "final_states": states,
    }
    with open(a.report, "w") as f:
        json.dump(result, f)
    print(json.dumps(result))
    sys.exit(1 if lost or backwards else 0)


if __name__ == "__main__":
    main()
