//! POST /pay/api/processor-events: the card processor's own events (Stripe's webhooks). The
//! signature is verified over the exact bytes received; the event is a hint, read by the
//! domain from the processor's API, so a duplicate, a late or a reordered delivery is
//! harmless. Public (the processor holds no bearer token): the signature is the credential.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use checkout_domain::ports::NoticeRejected;
use checkout_domain::ValidationErrors;

use crate::dto::ProcessorEventReceipt;
use crate::metrics::PROCESSOR_EVENTS_TOTAL;
use crate::problem::{ApiError, ProblemDetails};
use crate::AppState;

/// Receive a card-processor event.
///
/// The card processor's webhook (with Stripe: an endpoint for `payment_intent.*`,
/// `refund.*`, `charge.refund.updated` and `charge.dispute.*` events, whose signing secret is
/// `CHECKOUT__PROCESSOR__STRIPE_WEBHOOK_SECRETS`). Verified by its signature header
/// (`Stripe-Signature`: a timestamp within five minutes, an HMAC-SHA256 with one of the
/// configured secrets); each event id is absorbed once. Not for merchants.
#[utoipa::path(
    post,
    path = "/pay/api/processor-events",
    tag = "Processor",
    params(("Stripe-Signature" = String, Header, description = "The processor's signature of the body: `t=<unix seconds>,v1=<hex HMAC-SHA256>`", example = "t=1795000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd")),
    request_body(content = Object, content_type = "application/json", description = "The processor's event, exactly as it sent it",
        example = json!({"id": "evt_1Q2w3E4r5T6y7U8i", "object": "event", "type": "charge.dispute.created", "data": {"object": {"id": "dp_1Q2w3E4r5T6y7U8i", "object": "dispute"}}})),
    responses(
        (status = 200, description = "Absorbed, a duplicate, or about an object this service does not know: either way the processor need not send it again", body = ProcessorEventReceipt),
        (status = 400, description = "The signature is missing, wrong or stale, or the body is not an event: nothing was read or changed (the errors name the signature header)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "This service takes no processor events (no signing secret is configured); a request without a signature is still a 400", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 413, description = "The body is larger than the service accepts", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 500, description = "The event could not be absorbed now (the processor or the database did not answer); nothing is lost: the processor sends it again", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "Temporarily unavailable; the processor sends it again", body = ProblemDetails, content_type = "application/problem+json"),
    )
)]
pub async fn receive_processor_event(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let header = state.checkout.processor_signature_header();
    let signature = req.headers().get(header).and_then(|v| v.to_str().ok());
    let notice = match state.checkout.read_processor_event(&body, signature) {
        Ok(notice) => notice,
        Err(rejected) => {
            count(rejected_label(&rejected));
            tracing::warn!(reason = %rejected, "processor event refused");
            return Err(refusal(header, rejected));
        }
    };
    let outcome = state.checkout.absorb_processor_event(&notice).await;
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(error) => {
            count("failed");
            return Err(error.into());
        }
    };
    count(outcome.as_str());
    tracing::info!(
        event = %notice.id,
        kind = %notice.kind,
        outcome = outcome.as_str(),
        "processor event"
    );
    Ok(HttpResponse::Ok().json(ProcessorEventReceipt {
        received: true,
        outcome: outcome.as_str(),
    }))
}

fn count(outcome: &'static str) {
    metrics::counter!(PROCESSOR_EVENTS_TOTAL, "outcome" => outcome).increment(1);
}

/// The metric label of a refusal.
fn rejected_label(rejected: &NoticeRejected) -> &'static str {
    match rejected {
        NoticeRejected::NotConfigured => "not_configured",
        NoticeRejected::Unsigned | NoticeRejected::BadSignature => "bad_signature",
        NoticeRejected::Stale => "stale",
        NoticeRejected::Malformed(_) => "malformed",
    }
}

/// The ProblemDetails of a refusal: 404 when events are not configured, else a 400 naming
/// the signature header (never the signature or the body).
fn refusal(header: &str, rejected: NoticeRejected) -> ApiError {
    if rejected == NoticeRejected::NotConfigured {
        return ApiError::http(
            StatusCode::NOT_FOUND,
            "This service takes no processor events: no signing secret is configured.",
        );
    }
    let mut errors = ValidationErrors::new();
    errors.add(header, rejected.to_string());
    ApiError::from(errors)
}
