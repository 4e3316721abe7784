//! A model-based test of the money invariants: random interleavings of what payers, the
//! processor and the service's own sweeps do to one session, run in process (the real use
//! cases over the real PostgreSQL adapter and the real Stripe adapter, against a Stripe-like
//! stand-in on loopback per run), with a manual clock. After each run the faults are lifted,
//! in-flight work is let finish, reconciliation is given its chance, and the invariants are
//! checked against what the processor holds:
//!
//! 1. at most one intent of the session holds money;
//! 2. a session the merchant reads as paid has exactly one charge, made by its current attempt;
//! 3. a session read as Pending, Failed, Cancelled or Expired has no charge;
//! 4. a session still Processing has an unresolved current attempt (only when the processor
//!    saved a 5xx under the key, so that no replay can tell);
//! 5. a session waiting for a challenge has its current intent waiting at the processor;
//! 6. the event log holds exactly one event for a session in a reported state (of that
//!    state's type) and none for any other.
//!
//! `MODEL_RUNS` sets the number of runs (1,000 by default), `MODEL_SEED` the first seed; a
//! failure prints the seed and the operations of its run.

use checkout_domain::ports::AttemptLedger;
use std::sync::Arc;
use std::time::Duration as StdDuration;

use checkout_domain::card::CardInput;
use checkout_domain::ports::{CardProcessor, SessionRepository};
use checkout_domain::session::{AttemptState, PaymentSession, SessionRequest, SessionState};
use checkout_domain::terminal::Terminal;
use checkout_domain::testing::{FakeIdentity, InMemoryClients, ManualClock};
use checkout_domain::usecases::ReconcilePolicy;
use checkout_domain::values::{SessionId, TerminalNumber};
use checkout_domain::{Checkout, CheckoutPolicy, Ports};
use checkout_postgres::PgStore;
use checkout_processor::testing::fake_stripe::{Call, FakeStripe, FakeStripeConfig, Fault, When};
use checkout_processor::{StripeConfig, StripeEvents, StripeProcessor};
use checkout_server::system::RandomIds;
use checkout_test_db::TestDatabase;
use time::{Duration, OffsetDateTime};
use tokio::sync::Semaphore;

/// The processor timeout in the model: short, so that a delayed request outlives it.
pub(crate) const TIMEOUT: StdDuration = StdDuration::from_millis(150);
/// How long a delayed request is held: longer than the timeout.
pub(crate) const DELAY: StdDuration = StdDuration::from_millis(300);
pub(crate) const TERMINAL: &str = "MODEL-1";

/// A small deterministic generator (SplitMix64), so that a failing run can be replayed.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What the processor does to the next request of a call (an authorisation here, a refund,
/// capture or cancel in `reversal_model.rs`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Trouble {
    None,
    /// Held as executing past the client's timeout (its replay meanwhile: 409).
    SlowBefore,
    /// Done at once, answered after the client gave up.
    SlowAfter,
    /// Reset before any work.
    ResetBefore,
    /// Done, then the connection reset (drawn by the reversal model only).
    ResetAfter,
    /// Done, then a 500 that Stripe saves under the key (no replay can tell).
    SavedServerError,
}

/// One step of a run.
#[derive(Debug, Clone, Copy)]
enum Op {
    Submit { challenge: bool, trouble: Trouble },
    SecondTab { challenge: bool },
    CrashDuringSubmit { after_ms: u64 },
    PassAtProcessor(bool),
    Return,
    Cancel,
    Expire,
    Sweep,
    Restart,
}

fn random_op(rng: &mut Rng) -> Op {
    match rng.below(12) {
        0..=2 => Op::Submit {
            challenge: rng.below(3) == 0,
            trouble: match rng.below(6) {
                0 => Trouble::SlowBefore,
                1 => Trouble::SlowAfter,
                2 => Trouble::ResetBefore,
                3 => Trouble::SavedServerError,
                _ => Trouble::None,
            },
        },
        3 => Op::SecondTab {
            challenge: rng.below(2) == 0,
        },
        4 => Op::CrashDuringSubmit {
            after_ms: rng.below(250),
        },
        5 => Op::PassAtProcessor(rng.below(3) != 0),
        6 => Op::Return,
        7 => Op::Cancel,
        8 => Op::Expire,
        9 | 10 => Op::Sweep,
        _ => Op::Restart,
    }
}

/// The service as one process would have it: adapters and use cases over shared state.
pub(crate) struct Stack {
    pub(crate) checkout: Checkout,
    pub(crate) store: PgStore,
}

/// What survives a restart: the database, the processor, the clock.
pub(crate) struct World {
    pub(crate) db_url: String,
    pub(crate) stripe: FakeStripe,
    pub(crate) clock: Arc<ManualClock>,
}

impl World {
    /// A world over `db`, with a processor of its own and a clock at now.
    pub(crate) async fn start(db: &TestDatabase) -> World {
        World {
            db_url: db.url().to_owned(),
            // Refunds of the 5126 card read succeeded, then fail this long after.
            stripe: FakeStripe::start(FakeStripeConfig {
                refund_failure_delay: REFUND_FAILURE_DELAY,
                ..FakeStripeConfig::default()
            })
            .await,
            clock: Arc::new(ManualClock::new(OffsetDateTime::now_utc())),
        }
    }

    /// The service's use cases over the world, as one process would have them.
    pub(crate) async fn stack(&self) -> Stack {
        let store = PgStore::connect(&self.db_url, 2).await.expect("a pool");
        let processor: Arc<dyn CardProcessor> = Arc::new(
            StripeProcessor::new(StripeConfig {
                base_url: self.stripe.base_url.clone(),
                api_key: "sk_test_model".into(),
                timeout: TIMEOUT,
            })
            .expect("the adapter"),
        );
        let base = url::Url::parse("https://pay.model.test/pay/link").expect("url");
        let policy = CheckoutPolicy::new(Duration::hours(24), Duration::hours(1), base)
            .expect("policy")
            .with_reconcile(ReconcilePolicy {
                first_check_after: Duration::seconds(30),
                max_backoff: Duration::minutes(2),
                batch: 10,
                lease: Duration::seconds(20),
                give_up_after: Duration::hours(23),
                hold_check_after: Duration::days(7),
            });
        let store_port = Arc::new(store.clone());
        let checkout = Checkout::new(
            Ports {
                sessions: store_port.clone(),
                attempts: store_port.clone(),
                sweeps: store_port.clone(),
                reversals: store_port.clone(),
                events: store_port.clone(),
                terminals: store_port.clone(),
                idempotency: store_port.clone(),
                processor,
                identity: Arc::new(FakeIdentity::new(Arc::new(InMemoryClients::default()))),
                clock: self.clock.clone(),
                ids: Arc::new(RandomIds),
                processor_events: Arc::new(
                    StripeEvents::new(&[EVENT_SECRET], Duration::minutes(5)).expect("events"),
                ),
                notices: store_port.clone(),
                disputes: store_port,
            },
            policy,
        );
        Stack { checkout, store }
    }
}

pub(crate) fn card(challenge: bool) -> CardInput {
    CardInput {
        cardholder_name: "Ada Lovelace".into(),
        card_number: if challenge {
            crate::CHALLENGE_CARD
        } else {
            crate::APPROVED_CARD
        }
        .into(),
        expiry: "11/34".into(),
        cvv: "918".into(),
    }
}

/// A card that pays with `number`.
pub(crate) fn card_numbered(number: &str) -> CardInput {
    CardInput {
        card_number: number.into(),
        ..card(false)
    }
}

/// The signing secret of the processor's events in the models.
pub(crate) const EVENT_SECRET: &str = "whsec_model";

/// How long after it reads succeeded a refund of the 5126 card fails at the stand-in.
pub(crate) const REFUND_FAILURE_DELAY: StdDuration = StdDuration::from_millis(150);

/// The stand-in's fault for `trouble`, and when it strikes.
pub(crate) fn trouble_fault(trouble: Trouble) -> Option<(When, Fault)> {
    match trouble {
        Trouble::None => None,
        Trouble::SlowBefore => Some((When::Before, Fault::Delay(DELAY))),
        Trouble::SlowAfter => Some((When::After, Fault::Delay(DELAY))),
        Trouble::ResetBefore => Some((When::Before, Fault::Reset)),
        Trouble::ResetAfter => Some((When::After, Fault::Reset)),
        Trouble::SavedServerError => Some((When::After, Fault::Status(500))),
    }
}

/// Runs `op` against the session `id`. Errors of the use cases are outcomes here (an expired
/// session refuses a card, say); only the invariants decide.
async fn apply(op: Op, world: &World, stack: &mut Stack, id: SessionId) {
    let checkout = &stack.checkout;
    match op {
        Op::Submit { challenge, trouble } => {
            if let Some((when, fault)) = trouble_fault(trouble) {
                world.stripe.inject(Call::CreateIntent, when, fault);
            }
            let _ = checkout.process_payment(id, &card(challenge)).await;
            world.stripe.clear_faults();
        }
        Op::SecondTab { challenge } => {
            let (a, b) = (card(challenge), card(!challenge));
            let _ = tokio::join!(
                checkout.process_payment(id, &a),
                checkout.process_payment(id, &b)
            );
        }
        Op::CrashDuringSubmit { after_ms } => {
            let running = checkout.clone();
            world
                .stripe
                .inject(Call::CreateIntent, When::Before, Fault::Delay(DELAY));
            let task = tokio::spawn(async move { running.process_payment(id, &card(false)).await });
            tokio::time::sleep(StdDuration::from_millis(after_ms)).await;
            task.abort();
            let _ = task.await;
            world.stripe.clear_faults();
            *stack = world.stack().await;
        }
        Op::PassAtProcessor(pass) => {
            let waiting: Vec<String> = world
                .stripe
                .intents()
                .into_iter()
                .filter(|i| i.status == "requires_action")
                .map(|i| i.id)
                .collect();
            for intent in waiting {
                world.stripe.complete_3ds(&intent, pass);
            }
        }
        Op::Return => {
            let _ = checkout.challenge_returned(id).await;
        }
        Op::Cancel => {
            let _ = checkout.cancel_payment(id).await;
        }
        Op::Expire => {
            world.clock.advance(Duration::minutes(61));
            let _ = checkout.expire_due_sessions().await;
        }
        Op::Sweep => {
            world.clock.advance(Duration::minutes(3));
            let _ = checkout.reconcile_due().await;
        }
        Op::Restart => {
            *stack = world.stack().await;
        }
    }
}

/// Lifts the faults, lets delayed work finish, and gives reconciliation and expiry their
/// chance, as time passing would.
async fn settle(world: &World, stack: &Stack) {
    world.stripe.clear_faults();
    tokio::time::sleep(DELAY + StdDuration::from_millis(100)).await;
    for _ in 0..4 {
        world.clock.advance(Duration::minutes(3));
        stack.checkout.reconcile_due().await.expect("a sweep");
    }
    stack.checkout.expire_due_sessions().await.expect("a sweep");
}

/// The types of the events written for session `id`, read from the table itself (the feed
/// may hold events back while other transactions of the cluster run).
pub(crate) async fn event_types(db_url: &str, id: SessionId) -> Result<Vec<String>, String> {
    use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
    #[derive(diesel::QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::Text)]
        kind: String,
    }
    let mut conn = AsyncPgConnection::establish(db_url)
        .await
        .map_err(|e| e.to_string())?;
    let rows: Vec<Row> =
        diesel::sql_query("SELECT type AS kind FROM events WHERE session_id = $1 ORDER BY seq")
            .bind::<diesel::sql_types::Uuid, _>(id.as_uuid())
            .load(&mut conn)
            .await
            .map_err(|e| e.to_string())?;
    Ok(rows.into_iter().map(|r| r.kind).collect())
}

/// Checks the invariants; returns a description of the first one broken.
async fn check(world: &World, stack: &Stack, id: SessionId) -> Result<SessionState, String> {
    let session: PaymentSession = stack
        .store
        .get(id)
        .await
        .map_err(|e| e.to_string())?
        .ok_or("the session is gone")?;
    let key = id.to_string();
    let intents: Vec<_> = world
        .stripe
        .intents()
        .into_iter()
        .filter(|i| i.metadata.get("session") == Some(&key))
        .collect();
    let charged: Vec<_> = intents
        .iter()
        .filter(|i| matches!(i.status.as_str(), "succeeded" | "requires_capture"))
        .collect();
    if charged.len() > 1 {
        return Err(format!("charged {} times: {intents:?}", charged.len()));
    }
    let current = match session.current_attempt() {
        Some(a) => stack.store.attempt(a).await.map_err(|e| e.to_string())?,
        None => None,
    };
    let current_intent = current.as_ref().and_then(|a| {
        intents
            .iter()
            .find(|i| i.metadata.get("attempt") == Some(&a.id.to_string()))
    });
    match session.state() {
        SessionState::Successful | SessionState::ApprovedTransaction => {
            let made_by_current =
                charged.len() == 1 && current_intent.is_some_and(|i| i.id == charged[0].id);
            if !made_by_current {
                return Err(format!(
                    "reads {} but the processor holds {intents:?} (current {current:?})",
                    session.state()
                ));
            }
        }
        SessionState::Pending
        | SessionState::Failed
        | SessionState::Cancelled
        | SessionState::Voided
        | SessionState::Expired => {
            if !charged.is_empty() {
                return Err(format!(
                    "reads {} but the processor holds a charge: {intents:?} (current {current:?})",
                    session.state()
                ));
            }
        }
        SessionState::Processing => {
            let unresolved = current
                .as_ref()
                .is_some_and(|a| AttemptState::UNRESOLVED.contains(&a.state));
            if !unresolved {
                return Err(format!("Processing with a settled attempt {current:?}"));
            }
        }
        SessionState::ChallengeRequired => {
            if current_intent.is_none_or(|i| i.status != "requires_action") {
                return Err(format!(
                    "waits for a challenge the processor does not: {intents:?}"
                ));
            }
        }
    }
    let events = event_types(&world.db_url, id).await?;
    let (declines, changes): (Vec<String>, Vec<String>) = events
        .into_iter()
        .partition(|e| e == "payment.attempt_failed");
    let expected: Vec<String> = checkout_domain::events::EventType::of_state(session.state())
        .map(|t| t.as_str().to_owned())
        .into_iter()
        .collect();
    if changes != expected {
        return Err(format!(
            "reads {} with the events {changes:?}, expected {expected:?}",
            session.state()
        ));
    }
    let attempts = stack.store.attempts(id).await.map_err(|e| e.to_string())?;
    let declined = attempts
        .iter()
        .filter(|a| a.state == AttemptState::Declined)
        .count();
    if declines.len() != declined {
        return Err(format!(
            "{} payment.attempt_failed events for {declined} declined attempts",
            declines.len()
        ));
    }
    Ok(session.state())
}

/// A database of its own for one run (the sweeps look at every session of a database, and
/// each run has its own processor), with the model's terminal.
pub(crate) async fn database() -> TestDatabase {
    let db = TestDatabase::create().await.expect("a database");
    db.store()
        .create_terminal(&Terminal {
            number: TerminalNumber::parse(TERMINAL).expect("terminal"),
            display_name: "Model merchant".into(),
            active: true,
            callback_hosts: None,
            max_card_attempts: checkout_domain::values::MaxCardAttempts::SPEC,
            capture_method: checkout_domain::terminal::CaptureMethod::Automatic,
        })
        .await
        .expect("terminal");
    db
}

/// Runs `run` once per seed, eight at a time: `runs_var` runs (1,000 by default) from the seed
/// `seed_var` (1 by default), both read from the environment. Returns every run's result, the
/// number of runs and the seconds they took.
pub(crate) async fn run_seeds<T, F, Fut>(
    runs_var: &str,
    seed_var: &str,
    run: F,
) -> (Vec<Result<T, String>>, u64, f64)
where
    T: Send + 'static,
    F: Fn(u64) -> Fut,
    Fut: std::future::Future<Output = Result<T, String>> + Send + 'static,
{
    let number = |var: &str, default: u64| {
        std::env::var(var)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (runs, first_seed) = (number(runs_var, 1000), number(seed_var, 1));
    let started = std::time::Instant::now();
    let permits = Arc::new(Semaphore::new(8));
    let mut tasks = tokio::task::JoinSet::new();
    for seed in first_seed..first_seed + runs {
        let permit = permits.clone().acquire_owned().await.expect("a permit");
        let one = run(seed);
        tasks.spawn(async move {
            let result = one.await;
            drop(permit);
            result
        });
    }
    let mut results = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        results.push(joined.expect("a run"));
    }
    (results, runs, started.elapsed().as_secs_f64())
}

/// The merchant of the model's terminal.
pub(crate) fn caller() -> checkout_domain::auth::Claims {
    checkout_domain::auth::Claims {
        client_id: "model".into(),
        terminal: TerminalNumber::parse(TERMINAL).expect("terminal"),
        roles: vec![checkout_domain::auth::Role::SvcTerminal],
        expires_at: OffsetDateTime::now_utc() + Duration::days(1),
    }
}

/// A new integrated checkout of 12.34 USD for run `seed`.
pub(crate) async fn new_session(stack: &Stack, seed: u64) -> Result<SessionId, String> {
    let request = SessionRequest {
        callback_success_url: Some("https://merchant.example/ok".into()),
        callback_fail_url: Some("https://merchant.example/fail".into()),
        callback_back_url: None,
        total_transaction_amount: Some("12.34".parse().expect("decimal")),
        currency_code: Some("USD".into()),
        terminal_number: None,
        transaction_reference_number: Some(format!("MODEL-{seed:016x}")),
        general_purchase_description: None,
        user_email: None,
        culture: None,
        additional_charges: Vec::new(),
        items: Vec::new(),
        expiration_date_time: None,
        metadata: Vec::new(),
        capture_method: None,
    };
    let session = stack.checkout.start_payment(&caller(), &request).await;
    Ok(session.map_err(|e| e.to_string())?.id())
}

/// One run: a session, a random list of operations, the settling, the invariants.
async fn run(seed: u64) -> Result<(SessionState, usize), String> {
    let mut rng = Rng(seed);
    let db = database().await;
    let world = World::start(&db).await;
    let mut stack = world.stack().await;
    let id = new_session(&stack, seed).await?;
    let ops: Vec<Op> = (0..3 + rng.below(6)).map(|_| random_op(&mut rng)).collect();
    for op in &ops {
        apply(*op, &world, &mut stack, id).await;
    }
    settle(&world, &stack).await;
    let state = check(&world, &stack, id)
        .await
        .map_err(|broken| format!("seed {seed}: {broken}\n  operations: {ops:?}"))?;
    Ok((state, ops.len()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn random_interleavings_never_charge_twice_or_report_what_the_processor_does_not_hold() {
    let (results, runs, seconds) = run_seeds("MODEL_RUNS", "MODEL_SEED", run).await;
    let mut states = std::collections::BTreeMap::new();
    let mut operations = 0;
    let mut broken = Vec::new();
    for result in results {
        match result {
            Ok((state, ops)) => {
                *states.entry(state.name()).or_insert(0) += 1;
                operations += ops;
            }
            Err(e) => broken.push(e),
        }
    }
    eprintln!(
        "model: {runs} runs, {operations} operations in {seconds:.1} s; final states {states:?}"
    );
    assert!(
        broken.is_empty(),
        "{} runs broke an invariant:\n{}",
        broken.len(),
        broken.join("\n")
    );
}
