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
//! `REVERSAL_MODEL_RUNS` sets the number of runs (1,000 by default), `REVERSAL_MODEL_SEED`
//! the first seed; a failure prints the seed and the operations of its run.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration as StdDuration;

use checkout_domain::ports::{ReversalLedger, SavedResponse, SessionRepository};
use checkout_domain::session::{HoldActionKind, LedgerState, SessionState};
use checkout_domain::terminal::CaptureMethod;
use checkout_domain::usecases::IdempotentRequest;
use checkout_domain::values::{IdempotencyKey, RequestFingerprint, SessionId};
use checkout_domain::Checkout;
use checkout_processor::testing::fake_stripe::{Call, Fault, When};
use rust_decimal::Decimal;
use time::Duration;

use crate::model::{
    caller, card, database, event_types, new_session, run_seeds, trouble_fault, Rng, Stack,
    Trouble, World, DELAY,
};

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
        Op::Sweep => {
            world.clock.advance(Duration::minutes(3));
            let _ = stack.checkout.reconcile_due().await;
        }
        Op::Restart => *stack = world.stack().await,
    }
    world.stripe.clear_faults();
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
    // 2. The API's amount is its Succeeded rows', and the processor's for them.
    let mut per_row: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for r in &at_processor {
        let row = r.metadata.get("refund").cloned().unwrap_or_default();
        per_row.entry(row).or_default().push(r.amount);
    }
    let known: BTreeSet<String> = rows.iter().map(|r| r.id.to_string()).collect();
    for (row, amounts) in &per_row {
        if !known.contains(row) {
            return Err(format!(
                "the processor holds a refund of no row: {row} {amounts:?}"
            ));
        }
        if amounts.len() > 1 {
            return Err(format!("row {row} refunded {} times", amounts.len()));
        }
    }
    let succeeded: Decimal = rows
        .iter()
        .filter(|r| r.state == LedgerState::Succeeded)
        .map(|r| r.amount)
        .sum();
    if session.money.refunded != succeeded {
        return Err(format!(
            "the API reports {} refunded, its Succeeded rows {succeeded}",
            session.money.refunded
        ));
    }
    for r in &rows {
        let held = per_row.get(&r.id.to_string()).map(Vec::len).unwrap_or(0);
        match r.state {
            LedgerState::Succeeded if held != 1 => {
                return Err(format!("{r:?} succeeded, the processor holds {held}"));
            }
            LedgerState::Failed if held != 0 => {
                return Err(format!("{r:?} failed, the processor holds {held}"));
            }
            _ => {}
        }
    }
    let processor_total: i64 = at_processor.iter().map(|r| r.amount).sum();
    let unknown: Decimal = open.iter().map(|r| r.amount).sum();
    if processor_total > cents(succeeded + unknown) || processor_total < cents(succeeded) {
        return Err(format!(
            "the processor holds {processor_total} cents refunded, the API {succeeded} \
             (+{unknown} unknown)"
        ));
    }
    // 3. Never more than captured.
    if processor_total > intent.amount_received || succeeded > session.captured_amount() {
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
    // 5. One event per confirmed refund.
    let events = event_types(&world.db_url, id).await?;
    let refunded = events.iter().filter(|e| *e == "payment.refunded").count();
    let confirmed = rows
        .iter()
        .filter(|r| r.state == LedgerState::Succeeded)
        .count();
    if refunded != confirmed {
        return Err(format!(
            "events {events:?} for {confirmed} confirmed refunds"
        ));
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
    match session.state {
        SessionState::Successful => {
            let captured = cents(session.captured_amount());
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
    let expected_first = if actions.is_empty() && session.state == SessionState::Successful {
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
async fn run(seed: u64) -> Result<(usize, usize, &'static str), String> {
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
    let paid = stack.checkout.process_payment(id, &card(false)).await;
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
    let state = session.map_or("gone", |s| s.state.name());
    Ok((ops.len(), rows.len(), state))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn random_refunds_retries_and_crashes_never_refund_twice_or_more_than_captured() {
    let (results, runs, seconds) =
        run_seeds("REVERSAL_MODEL_RUNS", "REVERSAL_MODEL_SEED", run).await;
    let (mut operations, mut refunds) = (0, 0);
    let mut states = BTreeMap::new();
    let mut broken = Vec::new();
    for result in results {
        match result {
            Ok((ops, rows, state)) => {
                operations += ops;
                refunds += rows;
                *states.entry(state).or_insert(0) += 1;
            }
            Err(e) => broken.push(e),
        }
    }
    eprintln!(
        "reversal model: {runs} runs, {operations} operations, {refunds} refunds in \
         {seconds:.1} s; final states {states:?}"
    );
    assert!(
        broken.is_empty(),
        "{} runs broke an invariant:\n{}",
        broken.len(),
        broken.join("\n")
    );
}
