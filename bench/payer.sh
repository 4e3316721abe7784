#!/usr/bin/env bash
# One payer of bench/run.sh's slow-processor run: pays one new session after another through
# the hosted page, as a browser would (start-payment over the API, the checkout page for its
# CSRF token and cookie, the card form post with the sandbox's approving test card), until it
# is stopped. With the sandbox processor made slow, each form post waits on the processor, so
# every payer keeps about one payment in flight all the time.
#
# Appends one line per payment to the output file: the form post's HTTP status and its time
# in seconds (or `start-payment-failed` / `page-failed`).
#
#   bench/payer.sh BASE_URL TOKEN REFERENCE_PREFIX OUTPUT_FILE
set -u
base="$1" token="$2" prefix="$3" out="$4"
n=0
while :; do
    n=$((n + 1))
    id="$(curl -s -X POST "$base/pay/api/start-payment" \
        -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
        -d "{\"callbackSuccessUrl\":\"https://merchant.example/ok\",
             \"callbackFailUrl\":\"https://merchant.example/fail\",
             \"totalTransactionAmount\":25.50,\"currencyCode\":\"USD\",
             \"transactionReferenceNumber\":\"$prefix-$n\"}" |
        sed -nE 's/.*"checkoutSessionId":"([^"]+)".*/\1/p')"
    if [[ -z "$id" ]]; then
        echo start-payment-failed >>"$out"
        sleep 0.2
        continue
    fi
    page="$(curl -s -D - "$base/pay/checkout-payment/$id")"
    # The CSRF cookie is `Secure`: curl would not send it back over plain http from a
    # cookie jar, so it goes back as a header.
    cookie="$(sed -nE 's/^[Ss]et-[Cc]ookie: (hc_csrf=[^;]*).*/\1/p' <<<"$page" | tr -d '\r')"
    csrf="$(sed -nE 's/.*name="csrfToken" value="([^"]+)".*/\1/p' <<<"$page" | head -1)"
    if [[ -z "$cookie" || -z "$csrf" ]]; then
        echo page-failed >>"$out"
        sleep 0.2
        continue
    fi
    curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -X POST "$base/pay/process-payment" \
        -H "Cookie: $cookie" \
        --data-urlencode "checkoutSessionId=$id" --data-urlencode "csrfToken=$csrf" \
        --data-urlencode "lg=en" --data-urlencode "cardholderName=Bench Payer" \
        --data-urlencode "cardNumber=4242424242424242" --data-urlencode "cardExpiry=12/34" \
        --data-urlencode "cardCvv=123" >>"$out"
done
