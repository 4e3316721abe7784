//! A model-based test of the reversal ledger: random interleavings of what a merchant, the
//! processor and the service's own sweeps do to the refunds of one paid session, run in
//! process (the real use cases over the real PostgreSQL adapter and the real Stripe adapter,
//! against the Stripe-like stand-in on loopback per run), with a manual clock. Refunds come
//! with and without `Idempotency-Key`, retried, two at once, with answers that are slow,
//! late, reset or a 5xx that Stripe saves under the key, and with the process "killed" (its
//! request dropped mid-flight and the use cases built anew). After each run the faults are
//! lifted, in-flight work finishes, reconciliation runs, and the invariants are checked
//! against what the processor holds:
//!
//! 1. every refund row is settled, except one whose key holds a 5xx the processor saved (no
//!    replay can tell; it stays Unknown and reserved);
//! 2. the API's refunded amount is the sum of its Succeeded rows, and equals what the
//!    processor holds refunded for them; the processor holds no refund the ledger does not
//!    know (by the row id in its metadata), and at most one per row;
//! 3. never more refunded than captured, at the processor or in the API;
//! 4. a merchant key names at most one row, and reached the processor at most once;
//! 5. one `payment.refunded` event per Succeeded refund, after the one `payment.succeeded`.
//!
//! In half of the runs the terminal captures manually: the payment is held, and captures
//! (whole, partial, keyed, two different ones at once) and voids, with the same troubles,
//! come before the refunds. Then also: the state the merchant reads agrees with the intent
//! (Successful with the captured amount received, Voided with the intent cancelled,
//! ApprovedTransaction with it still held), at most one capture or void succeeded, every
//! action settled once the processor answers, and one `payment.captured` or
//! `payment.voided` for the one that did.
//!
//! The processor's own news comes in too: in a third of the runs the payer's card is one
//! whose refunds the processor confirms and fails 150 ms later; a dispute may be opened and
//! moved at the processor; and the processor's events (duplicated, reordered, late: drawn at
//! random, with replacement, from every event so far) are fed to the service, signed, as
//! Stripe delivers them, and once more all of them shuffled when the run settles. Then also:
//! a refund reads Succeeded only while the processor holds it succeeded (a late failure is
//! given back), one `payment.refund_failed` per Failed refund, and the disputes the service
//! records are the processor's, each announced opened once and closed once.
//!
//! `REVERSAL_MODEL_RUNS` sets the number of runs (1,000 by default), `REVERSAL_MODEL_SEED`
//! the first seed; a failure prints the seed and the operations of its run.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration as StdDuration;

use checkout_domain::ports::{DisputeLedger, ReversalLedger, SavedResponse, SessionRepository};
use checkout_domain::session::{DisputeStatus, HoldActionKind, LedgerState, SessionState};
use checkout_domain::terminal::CaptureMethod;
use checkout_domain::usecases::IdempotentRequest;
use checkout_domain::values::{IdempotencyKey, RequestFingerprint, SessionId};
use checkout_domain::Checkout;
use checkout_processor::testing::fake_stripe::{Call, EventSnapshot, Fault, When};
use ring::hmac;
use rust_decimal::Decimal;
use time::Duration;

use crate::model::{
    caller, card, card_numbered, database, event_types, new_session, run_seeds, trouble_fault, Rng,
    Stack, Trouble, World, DELAY, EVENT_SECRET, REFUND_FAILURE_DELAY,
};

/// A card whose refunds the processor confirms, then fails ([`REFUND_FAILURE_DELAY`] later).
const REFUND_FAILS_CARD: &str = "4000000000005126";

/// The statuses a dispute is moved through at the processor, drawn at random.
const DISPUTE_STATUSES: [&str; 6] = [
    "under_review",
    "needs_response",
    "won",
    "lost",
    "warning_under_review",
    "warning_closed",
];

/// The merchant keys a run draws from; each always asks the same amount.
const KEYS: [(&str, u32); 3] = [("refund-a", 3), ("refund-b", 5), ("refund-c", 7)];

/// One step of a run.
#[derive(Debug, Clone, Copy)]
enum Op {
    /// A refund of `units` whole dollars, without a key.
    Refund { units: u32, trouble: Trouble },
    /// The request of key `KEYS[key]`, sent (again).
    Keyed { key: usize, trouble: Trouble },
    /// Two requests at once: the same key twice, or a keyed one and a keyless one.
    Concurrent { key: usize, same_key: bool },
    /// Key `KEYS[key]` with another amount: refused, nothing moves.
    KeyMisuse { key: usize },
    /// The process dies `after_ms` into the request of key `KEYS[key]` (the refund held at
    /// the processor meanwhile), and the use cases are built anew.
    Crash { key: usize, after_ms: u64 },
    /// A capture of the held authorisation: `units` dollars (the whole amount when `None`),
    /// under key `capture-<key>` when given.
    Capture {
        units: Option<u32>,
        key: Option<usize>,
        trouble: Trouble,
    },
    /// Two different captures at once (7.00 and 3.00).
    RacingCaptures,
    /// A void of the held authorisation, under key `void-<key>` when given.
    Void {
        key: Option<usize>,
        trouble: Trouble,
    },
    /// `count` of the processor's events so far, drawn at random with replacement (so
    /// duplicated, reordered and late), delivered to the service.
    Events { count: u32, seed: u64 },
    /// The payer's bank opens a dispute on the captured payment, or moves the open one to
    /// `DISPUTE_STATUSES[status]`.
    Dispute { status: usize },
    /// The reconciliation sweep, three minutes later.
    Sweep,
    /// The use cases built anew over the same database.
    Restart,
}

fn trouble(rng: &mut Rng) -> Trouble {
    match rng.below(8) {
        0 => Trouble::SlowBefore,
        1 => Trouble::SlowAfter,
        2 => Trouble::ResetBefore,
        3 => Trouble::ResetAfter,
        4 => Trouble::SavedServerError,
        _ => Trouble::None,
    }
}

fn random_op(rng: &mut Rng, held: bool) -> Op {
    let key = rng.below(KEYS.len() as u64) as usize;
    if held && rng.below(3) == 0 {
        let key = (rng.below(3) != 0).then(|| rng.below(2) as usize);
        return match rng.below(6) {
            0..=2 => Op::Capture {
                units: (rng.below(2) == 0).then(|| 1 + rng.below(12) as u32),
                key,
                trouble: trouble(rng),
            },
            3 => Op::RacingCaptures,
            _ => Op::Void {
                key,
                trouble: trouble(rng),
            },
        };
    }
    match rng.below(15) {
        12 | 13 => {
            return Op::Events {
                count: 1 + rng.below(4) as u32,
                seed: rng.next(),
            }
        }
        14 => {
            return Op::Dispute {
                status: rng.below(DISPUTE_STATUSES.len() as u64) as usize,
            }
        }
        _ => {}
    }
    match rng.below(12) {
        0..=1 => Op::Refund {
            units: 1 + rng.below(6) as u32,
            trouble: trouble(rng),
        },
        2..=4 => Op::Keyed {
            key,
            trouble: trouble(rng),
        },
        5 => Op::Concurrent {
            key,
            same_key: rng.below(2) == 0,
        },
        6 => Op::KeyMisuse { key },
        7 => Op::Crash {
            key,
            after_ms: rng.below(250),
        },
        8..=10 => Op::Sweep,
        _ => Op::Restart,
    }
}

fn dollars(units: u32) -> Decimal {
    Decimal::from(units)
}

/// The idempotent request of key `KEYS[key]` (its fingerprint stands for its body, the
/// key's amount).
fn keyed(key: usize, units: u32) -> IdempotentRequest {
    IdempotentRequest {
        key: IdempotencyKey::parse(KEYS[key].0).expect("key"),
        fingerprint: RequestFingerprint::from_bytes([u8::try_from(units).unwrap_or(0); 32]),
    }
}

/// What the run asked: whether any request met a 5xx that Stripe saved under the refund's
/// key, the keys sent, and how many requests went without a key.
#[derive(Default)]
struct Notes {
    saved_error: bool,
    keys: BTreeSet<usize>,
    keyless: usize,
}

/// A renderer that keeps nothing of the answer (the model reads the ledger instead).
fn ignore<T>(_: &Result<T, checkout_domain::CheckoutError>) -> SavedResponse {
    SavedResponse {
        status: 200,
        content_type: "application/json".into(),
        body: Vec::new(),
    }
}

/// The idempotent request of a capture or void under key `<kind>-<k>`.
fn action_key(kind: &str, k: usize) -> IdempotentRequest {
    IdempotentRequest {
        key: IdempotencyKey::parse(&format!("{kind}-{k}")).expect("key"),
        fingerprint: RequestFingerprint::from_bytes([u8::try_from(k).unwrap_or(0); 32]),
    }
}

async fn send_keyed(checkout: &Checkout, id: SessionId, key: usize, units: u32) {
    let once = keyed(key, units);
    let _ = checkout
        .refund_payment_once(&caller(), id, Some(dollars(units)), &once, ignore)
        .await;
}

/// Runs `op` against the session `id`. Errors of the use cases are outcomes here (an amount
/// above what remains, say); only the invariants decide.
async fn apply(op: Op, world: &World, stack: &mut Stack, id: SessionId, notes: &mut Notes) {
    let inject = |t: Trouble, notes: &mut Notes| {
        if let Some((when, fault)) = trouble_fault(t) {
            notes.saved_error |= matches!(t, Trouble::SavedServerError);
            world.stripe.inject(Call::CreateRefund, when, fault);
        }
    };
    match op {
        Op::Refund { units, trouble } => {
            inject(trouble, notes);
            notes.keyless += 1;
            let _ = stack
                .checkout
                .refund_payment(&caller(), id, Some(dollars(units)))
                .await;
        }
        Op::Keyed { key, trouble } => {
            inject(trouble, notes);
            notes.keys.insert(key);
            send_keyed(&stack.checkout, id, key, KEYS[key].1).await;
        }
        Op::Concurrent { key, same_key } => {
            let units = KEYS[key].1;
            notes.keys.insert(key);
            notes.keyless += usize::from(!same_key);
            if same_key {
                tokio::join!(
                    send_keyed(&stack.checkout, id, key, units),
                    send_keyed(&stack.checkout, id, key, units)
                );
            } else {
                let merchant = caller();
                let keyless = stack
                    .checkout
                    .refund_payment(&merchant, id, Some(dollars(2)));
                let _ = tokio::join!(send_keyed(&stack.checkout, id, key, units), keyless);
            }
        }
        Op::KeyMisuse { key } => {
            // Refused when the key was used; the key's first request when it was not.
            notes.keys.insert(key);
            send_keyed(&stack.checkout, id, key, KEYS[key].1 + 1).await;
        }
        Op::Crash { key, after_ms } => {
            world
                .stripe
                .inject(Call::CreateRefund, When::Before, Fault::Delay(DELAY));
            let running = stack.checkout.clone();
            let units = KEYS[key].1;
            notes.keys.insert(key);
            let task = tokio::spawn(async move { send_keyed(&running, id, key, units).await });
            tokio::time::sleep(StdDuration::from_millis(after_ms)).await;
            task.abort();
            let _ = task.await;
            *stack = world.stack().await;
        }
        Op::Capture {
            units,
            key,
            trouble,
        } => {
            if let Some((when, fault)) = trouble_fault(trouble) {
                notes.saved_error |= matches!(trouble, Trouble::SavedServerError);
                world.stripe.inject(Call::CaptureIntent, when, fault);
            }
            // A key always asks the same amount (the whole one for key 0, 5.00 for key 1).
            let amount = match key {
                Some(0) => None,
                Some(_) => Some(dollars(5)),
                None => units.map(dollars),
            };
            let merchant = caller();
            let _ = match key {
                Some(k) => {
                    let once = action_key("capture", k);
                    let capture = stack
                        .checkout
                        .capture_payment_once(&merchant, id, amount, &once, ignore);
                    capture.await.map(|_| ())
                }
                None => stack
                    .checkout
                    .capture_payment(&merchant, id, amount)
                    .await
                    .map(|_| ()),
            };
        }
        Op::RacingCaptures => {
            let merchant = caller();
            let _ = tokio::join!(
                stack
                    .checkout
                    .capture_payment(&merchant, id, Some(dollars(7))),
                stack
                    .checkout
                    .capture_payment(&merchant, id, Some(dollars(3))),
            );
        }
        Op::Void { key, trouble } => {
            if let Some((when, fault)) = trouble_fault(trouble) {
                notes.saved_error |= matches!(trouble, Trouble::SavedServerError);
                world.stripe.inject(Call::CancelIntent, when, fault);
            }
            let merchant = caller();
            let _ = match key {
                Some(k) => {
                    let once = action_key("void", k);
                    let void = stack
                        .checkout
                        .void_payment_once(&merchant, id, &once, ignore);
                    void.await.map(|_| ())
                }
                None => stack.checkout.void_payment(&merchant, id).await.map(|_| ()),
            };
        }
        Op::Events { count, seed } => {
            let events = world.stripe.events();
            let mut rng = Rng(seed);
            for _ in 0..count {
                if events.is_empty() {
                    break;
                }
                let pick = &events[rng.below(events.len() as u64) as usize];
                deliver(world, stack, pick).await;
            }
        }
        Op::Dispute { status } => {
            let Some(intent) = intent_of(world, id) else {
                return;
            };
            let open = world
                .stripe
                .disputes()
                .into_iter()
                .find(|d| d.payment_intent == intent.id);
            match open {
                None if intent.status == "succeeded" && intent.amount_received > 0 => {
                    world.stripe.open_dispute(&intent.id, "fraudulent");
                }
                Some(d) if dispute_status(&d.status).is_some_and(|s| !s.is_closed()) => {
                    world
                        .stripe
                        .set_dispute_status(&d.id, DISPUTE_STATUSES[status]);
                }
                _ => {}
            }
        }
        Op::Sweep => {
            world.clock.advance(Duration::minutes(3));
            let _ = stack.checkout.reconcile_due().await;
        }
        Op::Restart => *stack = world.stack().await,
    }
    world.stripe.clear_faults();
}

/// The intent of session `id`, as the processor holds it now.
fn intent_of(
    world: &World,
    id: SessionId,
) -> Option<checkout_processor::testing::fake_stripe::IntentSnapshot> {
    world
        .stripe
        .intents()
        .into_iter()
        .find(|i| i.metadata.get("session") == Some(&id.to_string()))
}

/// Delivers the processor's `event` to the service as Stripe does: its JSON, signed with the
/// endpoint's secret at the (model's) present; the service reads and absorbs it. A refusal
/// of a signed event is a broken run.
async fn deliver(world: &World, stack: &Stack, event: &EventSnapshot) {
    let body = serde_json::json!({
        "id": event.id,
        "object": "event",
        "type": event.kind,
        "data": {"object": event.object},
    })
    .to_string();
    let t = world.clock.now_value().unix_timestamp();
    let key = hmac::Key::new(hmac::HMAC_SHA256, EVENT_SECRET.as_bytes());
    let tag = hmac::sign(&key, format!("{t}.{body}").as_bytes());
    let hex: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    let signature = format!("t={t},v1={hex}");
    let notice = stack
        .checkout
        .read_processor_event(body.as_bytes(), Some(&signature))
        .expect("a signed event is read");
    // An absorption that fails (a fault meanwhile) is delivered again, as Stripe would.
    let _ = stack.checkout.absorb_processor_event(&notice).await;
}

/// The domain's status of a Stripe dispute status.
fn dispute_status(stripe: &str) -> Option<DisputeStatus> {
    Some(match stripe {
        "needs_response" | "warning_needs_response" => DisputeStatus::NeedsResponse,
        "under_review" | "warning_under_review" => DisputeStatus::UnderReview,
        "won" => DisputeStatus::Won,
        "lost" => DisputeStatus::Lost,
        "warning_closed" => DisputeStatus::InquiryClosed,
        _ => return None,
    })
}

/// Lifts the faults, lets delayed work finish, and gives reconciliation its chance, as time
/// passing would.
async fn settle(world: &World, stack: &Stack) {
    world.stripe.clear_faults();
    tokio::time::sleep(DELAY + StdDuration::from_millis(100)).await;
    for _ in 0..4 {
        world.clock.advance(Duration::minutes(3));
        stack.checkout.reconcile_due().await.expect("a sweep");
    }
    // The late failures happen; every event arrives once more, in another order.
    tokio::time::sleep(REFUND_FAILURE_DELAY + StdDuration::from_millis(100)).await;
    let mut events = world.stripe.events();
    events.reverse();
    for event in events.iter().chain(events.iter().rev()) {
        deliver(world, stack, event).await;
    }
}

/// Cents of a decimal amount of dollars.
fn cents(amount: Decimal) -> i64 {
    let scaled = amount * Decimal::from(100);
    scaled.trunc().to_string().parse().unwrap_or(i64::MAX)
}

/// Checks the invariants; returns a description of the first one broken.
#[allow(clippy::too_many_lines)] // one invariant after another, in the module's order
async fn check(world: &World, stack: &Stack, id: SessionId, notes: &Notes) -> Result<(), String> {
    let session = stack
        .store
        .get(id)
        .await
        .map_err(|e| e.to_string())?
        .ok_or("the session is gone")?;
    let rows = stack.store.refunds(id).await.map_err(|e| e.to_string())?;
    let intent = world
        .stripe
        .intents()
        .into_iter()
        .find(|i| i.metadata.get("session") == Some(&id.to_string()))
        .ok_or("no intent")?;
    check_hold(world, stack, id, &session, &intent, notes).await?;
    let at_processor: Vec<_> = world
        .stripe
        .refunds()
        .into_iter()
        .filter(|r| r.payment_intent == intent.id)
        .collect();

    // 1. Settled, unless a saved 5xx hides the outcome.
    let open: Vec<_> = rows.iter().filter(|r| !r.state.is_settled()).collect();
    if !open.is_empty() && !notes.saved_error {
        return Err(format!(
            "unsettled refunds with the processor answering: {open:?}"
        ));
    }
    // 2. The API's amount is its Succeeded rows', and the processor's for them: a refund the
    // processor failed after confirming it (and said so in its events) is Failed here too.
    let mut per_row: BTreeMap<String, Vec<(i64, String)>> = BTreeMap::new();
    for r in &at_processor {
        let row = r.metadata.get("refund").cloned().unwrap_or_default();
        per_row
            .entry(row)
            .or_default()
            .push((r.amount, r.status.clone()));
    }
    let known: BTreeSet<String> = rows.iter().map(|r| r.id.to_string()).collect();
    for (row, refunds) in &per_row {
        if !known.contains(row) {
            return Err(format!(
                "the processor holds a refund of no row: {row} {refunds:?}"
            ));
        }
        if refunds.len() > 1 {
            return Err(format!("row {row} refunded {} times", refunds.len()));
        }
    }
    let succeeded: Decimal = rows
        .iter()
        .filter(|r| r.state == LedgerState::Succeeded)
        .map(|r| r.amount)
        .sum();
    if session.money().refunded().value() != succeeded {
        return Err(format!(
            "the API reports {} refunded, its Succeeded rows {succeeded}",
            session.money().refunded().value()
        ));
    }
    let holds = |row: &str, status: &str| {
        per_row
            .get(row)
            .map_or(0, |v| v.iter().filter(|(_, s)| s == status).count())
    };
    for r in &rows {
        let row = r.id.to_string();
        let refunded = holds(&row, "succeeded");
        match r.state {
            LedgerState::Succeeded if refunded != 1 => {
                return Err(format!(
                    "{r:?} succeeded, the processor holds {:?}",
                    per_row.get(&row)
                ));
            }
            LedgerState::Failed if refunded != 0 => {
                return Err(format!("{r:?} failed, the processor holds {refunded}"));
            }
            _ => {}
        }
    }
    let processor_total: i64 = at_processor
        .iter()
        .filter(|r| r.status == "succeeded")
        .map(|r| r.amount)
        .sum();
    let unknown: Decimal = open.iter().map(|r| r.amount).sum();
    if processor_total > cents(succeeded + unknown) || processor_total < cents(succeeded) {
        return Err(format!(
            "the processor holds {processor_total} cents refunded, the API {succeeded} \
             (+{unknown} unknown)"
        ));
    }
    // 3. Never more than captured.
    if processor_total > intent.amount_received || succeeded > session.captured_amount().value() {
        return Err(format!(
            "refunded more than captured: {processor_total} of {}",
            intent.amount_received
        ));
    }
    // 4. A key names at most one row.
    for (key, _) in KEYS {
        let with_key = rows
            .iter()
            .filter(|r| r.key.as_ref().map(IdempotencyKey::as_str) == Some(key))
            .count();
        if with_key > 1 {
            return Err(format!("key {key} names {with_key} refunds"));
        }
    }
    // Each merchant request reached the processor at most once: a key once in all.
    let asked = notes.keys.len() + notes.keyless;
    if at_processor.len() > asked {
        return Err(format!(
            "{} refunds at the processor for {asked} merchant requests",
            at_processor.len()
        ));
    }
    // 5. One event per confirmed refund, one per failed one.
    let events = event_types(&world.db_url, id).await?;
    let count = |t: &str| events.iter().filter(|e| *e == t).count();
    let confirmed = rows
        .iter()
        .filter(|r| r.state == LedgerState::Succeeded)
        .count();
    let failed = rows
        .iter()
        .filter(|r| r.state == LedgerState::Failed)
        .count();
    // A refund the processor failed later was announced refunded first, if the service saw it
    // succeed before it failed.
    let failed_later = rows
        .iter()
        .filter(|r| r.state == LedgerState::Failed && holds(&r.id.to_string(), "failed") == 1)
        .count();
    let refunded = count("payment.refunded");
    if refunded < confirmed
        || refunded > confirmed + failed_later
        || count("payment.refund_failed") != failed
    {
        return Err(format!(
            "events {events:?} for {confirmed} confirmed and {failed} failed refunds"
        ));
    }
    check_disputes(world, stack, id, &intent.id, &events).await
}

/// The disputes the service records are the processor's, with their statuses, each
/// announced opened once and closed once.
async fn check_disputes(
    world: &World,
    stack: &Stack,
    id: SessionId,
    intent: &str,
    events: &[String],
) -> Result<(), String> {
    let theirs: Vec<_> = world
        .stripe
        .disputes()
        .into_iter()
        .filter(|d| d.payment_intent == intent)
        .collect();
    let ours = stack.store.disputes(id).await.map_err(|e| e.to_string())?;
    let summary = |ours: &[checkout_domain::session::Dispute]| {
        ours.iter()
            .map(|d| (d.reference.clone(), d.status))
            .collect::<Vec<_>>()
    };
    let expected: Vec<_> = theirs
        .iter()
        .map(|d| {
            (
                d.id.clone(),
                dispute_status(&d.status).unwrap_or(DisputeStatus::Lost),
            )
        })
        .collect();
    if summary(&ours) != expected {
        return Err(format!(
            "disputes recorded {:?}, at the processor {expected:?}",
            summary(&ours)
        ));
    }
    let count = |t: &str| events.iter().filter(|e| *e == t).count();
    let closed = ours.iter().filter(|d| d.status.is_closed()).count();
    if count("payment.dispute_opened") != ours.len() || count("payment.dispute_closed") != closed {
        return Err(format!("events {events:?} for the disputes {ours:?}"));
    }
    Ok(())
}

/// The invariants of the authorisation: the state the merchant reads agrees with the intent
/// at the processor, one action at most succeeded, and each change has its one event.
async fn check_hold(
    world: &World,
    stack: &Stack,
    id: SessionId,
    session: &checkout_domain::session::PaymentSession,
    intent: &checkout_processor::testing::fake_stripe::IntentSnapshot,
    notes: &Notes,
) -> Result<(), String> {
    let actions = stack.store.actions(id).await.map_err(|e| e.to_string())?;
    let succeeded: Vec<_> = actions
        .iter()
        .filter(|a| a.state == LedgerState::Succeeded)
        .collect();
    if succeeded.len() > 1 {
        return Err(format!(
            "{} actions succeeded: {actions:?}",
            succeeded.len()
        ));
    }
    let open = actions.iter().any(|a| !a.state.is_settled());
    if open && !notes.saved_error {
        return Err(format!(
            "unsettled actions with the processor answering: {actions:?}"
        ));
    }
    let status = intent.status.as_str();
    match session.state() {
        SessionState::Successful => {
            let captured = cents(session.captured_amount().value());
            if status != "succeeded" || intent.amount_received != captured {
                return Err(format!(
                    "reads Successful with {captured} cents, the processor {intent:?}"
                ));
            }
        }
        SessionState::ApprovedTransaction if status == "requires_capture" => {}
        // Captured or cancelled at the processor while the ledger waits on a saved 5xx.
        SessionState::ApprovedTransaction if open && notes.saved_error => {}
        SessionState::Voided if status == "canceled" && intent.amount_received == 0 => {}
        state => {
            return Err(format!(
                "reads {state}, the processor holds {intent:?} ({actions:?})"
            ))
        }
    }
    let events = event_types(&world.db_url, id).await?;
    let expected_first = if actions.is_empty() && session.state() == SessionState::Successful {
        "payment.succeeded"
    } else {
        "payment.authorized"
    };
    let count = |t: &str| events.iter().filter(|e| *e == t).count();
    let captured = usize::from(succeeded.iter().any(|a| a.kind == HoldActionKind::Capture));
    let voided = usize::from(succeeded.iter().any(|a| a.kind == HoldActionKind::Void));
    if events.first().map(String::as_str) != Some(expected_first)
        || count("payment.captured") != captured
        || count("payment.voided") != voided
    {
        return Err(format!("events {events:?} for the actions {actions:?}"));
    }
    Ok(())
}

/// One run: a paid session, a random list of operations, the settling, the invariants.
async fn run(seed: u64) -> Result<Outcome, String> {
    let mut rng = Rng(seed ^ 0x5eed_0f2e_f05d);
    let db = database().await;
    let world = World::start(&db).await;
    let mut stack = world.stack().await;
    let held = rng.below(2) == 0;
    if held {
        let terminal = checkout_domain::values::TerminalNumber::parse(crate::model::TERMINAL);
        let terminal = terminal.map_err(|e| format!("{e:?}"))?;
        let set = stack
            .store
            .set_capture_method(&terminal, CaptureMethod::Manual)
            .await;
        set.map_err(|e| e.to_string())?;
    }
    let id = new_session(&stack, seed).await?;
    let payer = if rng.below(3) == 0 {
        card_numbered(REFUND_FAILS_CARD)
    } else {
        card(false)
    };
    let paid = stack.checkout.process_payment(id, &payer).await;
    paid.map_err(|e| format!("seed {seed}: the payment failed: {e}"))?;
    let ops: Vec<Op> = (0..3 + rng.below(8))
        .map(|_| random_op(&mut rng, held))
        .collect();
    let mut notes = Notes::default();
    for op in &ops {
        apply(*op, &world, &mut stack, id, &mut notes).await;
    }
    settle(&world, &stack).await;
    check(&world, &stack, id, &notes)
        .await
        .map_err(|broken| format!("seed {seed}: {broken}\n  operations: {ops:?}"))?;
    let rows = stack.store.refunds(id).await.map_err(|e| e.to_string())?;
    let session = stack.store.get(id).await.map_err(|e| e.to_string())?;
    let state = session.map_or("gone", |s| s.state().name());
    let failed_later = rows
        .iter()
        .filter(|r| r.state == LedgerState::Failed && r.processor_reference.is_some())
        .count();
    let disputes = stack.store.disputes(id).await.map_err(|e| e.to_string())?;
    Ok(Outcome {
        operations: ops.len(),
        refunds: rows.len(),
        failed_later,
        disputes: disputes.len(),
        state,
    })
}

/// What one run did, for the summary line.
struct Outcome {
    operations: usize,
    refunds: usize,
    /// Refunds the processor made and failed (late, or at once).
    failed_later: usize,
    disputes: usize,
    state: &'static str,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn random_refunds_retries_and_crashes_never_refund_twice_or_more_than_captured() {
    let (results, runs, seconds) =
        run_seeds("REVERSAL_MODEL_RUNS", "REVERSAL_MODEL_SEED", run).await;
    let (mut operations, mut refunds, mut failed_later, mut disputes) = (0, 0, 0, 0);
    let mut states = BTreeMap::new();
    let mut broken = Vec::new();
    for result in results {
        match result {
            Ok(outcome) => {
                operations += outcome.operations;
                refunds += outcome.refunds;
                failed_later += outcome.failed_later;
                disputes += outcome.disputes;
                *states.entry(outcome.state).or_insert(0) += 1;
            }
            Err(e) => broken.push(e),
        }
    }
    eprintln!(
        "reversal model: {runs} runs, {operations} operations, {refunds} refunds \
         ({failed_later} failed by the processor after it made them), {disputes} disputes in \
         {seconds:.1} s; final states {states:?}"
    );
    assert!(
        broken.is_empty(),
        "{} runs broke an invariant:\n{}",
        broken.len(),
        broken.join("\n")
    );
}
