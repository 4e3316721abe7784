"""schemathesis hooks: the rules the OpenAPI document states in prose, which JSON Schema cannot
carry, applied to generated requests so that the positive-acceptance check ("schema-valid
request rejected") tests everything else:

- an amount carries at most its currency's minor units (the table is docs/currencies.md);
- items and additional charges are in the request's currencyCode;
- expirationDateTime lies within the configured bounds ahead of now (5 minutes to 24 hours
  for an integrated checkout);
- a webhook endpoint's host resolves (the sandbox accepts loopback);
- the lookup of a payment (GET /pay/api/payment) names exactly one of transactionReferenceNumber
  and internalTransactionReferenceNumber;
- the events feed's `after` is a cursor the service handed out (a generated one never is, so
  it is left out of a positive case).

Every case is mapped, in every phase (`map_case` runs in the coverage phase too), except a
negative case whose violation is (or may be) in its body: that keeps its violation.
"""

import datetime
import pathlib
import re
from decimal import ROUND_DOWN, Decimal

import schemathesis

_TABLE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "currencies.md"
MINOR_UNITS = {
    code: int(units)
    for code, units in re.findall(r"^\| ([A-Z]{3}) \| (\d) \|", _TABLE.read_text(), re.M)
}


def _exact(value, currency, positive):
    """`value` cut to `currency`'s places; the smallest positive amount when that leaves 0."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return value
    step = Decimal(1).scaleb(-MINOR_UNITS.get(currency, 2))
    cut = Decimal(repr(value)).quantize(step, rounding=ROUND_DOWN) if abs(value) < 1e13 else Decimal(value)
    if positive and value > 0 and cut <= 0:
        cut = step
    return float(cut) if MINOR_UNITS.get(currency, 2) else int(cut)


@schemathesis.hook
def map_case(ctx, case):
    if _body_is_the_violation(case.meta):
        return case
    if isinstance(case.body, dict):
        case.body = _prose_rules(case.body)
    if _is_positive(case.meta) and isinstance(case.query, dict):
        _query_rules(getattr(case, "path", ""), case.query)
    return case


def _is_positive(meta):
    return meta is None or meta.generation.mode == "positive"


def _query_rules(path, query):
    """The prose rules of query parameters, on a positive case's `query` (changed in place)."""
    if path == "/pay/api/payment":
        external = "transactionReferenceNumber"
        internal = "internalTransactionReferenceNumber"
        if external in query and internal in query:
            del query[internal]
        elif external not in query and internal not in query:
            query[external] = "ORDER-1001"
    elif path == "/pay/api/events":
        query.pop("after", None)


@schemathesis.hook
def before_add_examples(ctx, examples):
    for case in examples:
        map_case(ctx, case)


def _body_is_the_violation(meta):
    """Whether the case is negative because of its body (or may be): such bodies are left as
    generated. A negative case whose violation is elsewhere (a header, a path parameter) gets
    the rules applied, since schemathesis relabels it positive once its auth is set."""
    if meta is None or meta.generation.mode == "positive":
        return False
    location = getattr(meta.phase.data, "parameter_location", None)
    return location is None or getattr(location, "value", location) == "body"


def _resolvable(url):
    """`url` with its host replaced by `localhost`, when it has the schema's shape."""
    match = re.match(r"^(https?://)[^/@:?#\s]+((:[0-9]{1,5})?([/?#]\S*)?)$", url)
    return f"{match.group(1)}localhost{match.group(2)}" if match else url


def _prose_rules(body):
    if isinstance(body.get("url"), str):
        body["url"] = _resolvable(body["url"])
    currency = body.get("currencyCode")
    if not isinstance(currency, str) or currency not in MINOR_UNITS:
        if "amount" in body:
            body["amount"] = _exact(body["amount"], "USD", True)
        return body
    if "totalTransactionAmount" in body:
        body["totalTransactionAmount"] = _exact(body["totalTransactionAmount"], currency, True)
    for item in body.get("items") or []:
        if isinstance(item, dict):
            item["currencyCode"] = currency
            item["amount"] = _exact(item.get("amount"), currency, False)
    for charge in body.get("additionalCharges") or []:
        if isinstance(charge, dict):
            charge["chargeCurrencyCode"] = currency
            charge["chargeAmount"] = _exact(charge.get("chargeAmount"), currency, False)
    if isinstance(body.get("expirationDateTime"), str) and re.match(
        r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$", body["expirationDateTime"]
    ):
        soon = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
        body["expirationDateTime"] = soon.strftime("%Y-%m-%dT%H:%M:%SZ")
    return body
