// The merchant flow through openapi-fetch typed by openapi-typescript: no hand-written HTTP.
// Usage: tsx flow.ts BASE_URL CLIENT_SECRET (schema.d.ts generated beside it).
import createClient from "openapi-fetch";
import type { paths } from "./schema";

function check(ok: boolean, what: string, value?: unknown): asserts ok {
  if (!ok) throw new Error(`${what}: ${JSON.stringify(value)}`);
}

async function main(baseUrl: string, secret: string): Promise<void> {
  const reference = `TS-${crypto.randomUUID().slice(0, 12)}`;
  const api = createClient<paths>({ baseUrl });

  const token = await api.POST("/api/public/security/auth", {
    body: { client_id: "sandbox-client", client_secret: secret },
  });
  check(token.data !== undefined, "token", token.error);
  api.use({
    onRequest({ request }) {
      request.headers.set("Authorization", `Bearer ${token.data.token}`);
      return request;
    },
  });

  const started = await api.POST("/pay/api/start-payment", {
    params: { header: { "X-idoperacion": crypto.randomUUID() } },
    body: {
      callbackSuccessUrl: "https://merchant.example/ok",
      callbackFailUrl: "https://merchant.example/fail",
      totalTransactionAmount: 25.5,
      currencyCode: "USD",
      transactionReferenceNumber: reference,
    },
  });
  check(started.data !== undefined, "start-payment", started.error);
  const id = started.data.checkoutSessionId;

  const link = await api.POST("/pay/api/generate-payment-link", {
    body: {
      totalTransactionAmount: 15000,
      currencyCode: "CRC",
      transactionReferenceNumber: `${reference}-LINK`,
      generalPurchaseDescription: "Invoice",
      userEmail: "payer@example.com",
      culture: "es",
    },
  });
  check(link.data?.paymentLink.endsWith(link.data.checkoutSessionId) === true, "link", link.error);
  const qr = await api.GET("/pay/api/payment/{checkoutSessionId}/qr", {
    params: { path: { checkoutSessionId: link.data?.checkoutSessionId ?? "" }, query: { format: "png" } },
    parseAs: "arrayBuffer",
  });
  check(qr.response.status === 200 && new Uint8Array(qr.data ?? new ArrayBuffer(0))[1] === 0x50, "qr", qr.error);

  const record = await api.GET("/pay/api/payment/{checkoutSessionId}", {
    params: { path: { checkoutSessionId: id } },
  });
  const state: "Pending" | "Successful" | string | undefined = record.data?.state;
  check(state === "Pending" && record.data?.sessionType === "IntegratedCheckout", "status", record);

  const found = await api.GET("/pay/api/payment", {
    params: { query: { transactionReferenceNumber: reference } },
  });
  check(found.data?.length === 1 && found.data[0].checkoutSessionId === id, "lookup", found.data);

  const cancelled = await api.POST("/pay/api/payment/{checkoutSessionId}/cancel", {
    params: { path: { checkoutSessionId: id } },
  });
  check(cancelled.data?.state === "Cancelled", "cancel", cancelled.error);

  const page = await api.GET("/pay/api/events", { params: { query: { limit: 100 } } });
  const mine = (page.data?.events ?? []).filter((e) => e.data.checkoutSessionId === id);
  check(mine.length === 1 && mine[0].type === "payment.cancelled", "events", page.data);
  console.log(`typescript client: token, start-payment, payment link, QR code, status, lookup, cancel, events: ok (${reference})`);
}

main(process.argv[2], process.argv[3]).catch((e) => {
  console.error(e);
  process.exit(1);
});
