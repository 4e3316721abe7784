//! The card-testing guard in the card post: only processor declines count, past the first
//! threshold a post needs a proof of work, past the second it is refused, and held posts
//! never reach the processor.

use std::net::IpAddr;

use checkout_domain::events::EventType;
use checkout_domain::guard::{GuardAction, GuardPolicy, GuardRule, ProofCheck};
use checkout_domain::ports::EventLog;
use checkout_domain::usecases::{CardPost, GuardedPost};

use crate::*;

fn declined() -> Result<ProcessorOutcome, checkout_domain::ports::ProcessorError> {
    Ok(ProcessorOutcome::Declined {
        processor_reference: None,
        reason: "card declined".into(),
    })
}

fn from(ip: &str) -> GuardedPost {
    GuardedPost {
        address: Some(ip.parse::<IpAddr>().unwrap()),
        proof: ProofCheck::Absent,
    }
}

async fn post(kit: &TestKit, id: SessionId, number: &str, guarded: &GuardedPost) -> CardPost {
    let mut input = card_input();
    input.card_number = number.into();
    kit.checkout
        .process_card(id, &input, guarded)
        .await
        .expect("card post")
}

/// A distinct valid (Luhn) Visa number per `i`.
fn nth_card(i: u32) -> String {
    let body = format!("4000{:011}", i);
    let sum: u32 = body
        .chars()
        .rev()
        .enumerate()
        .map(|(k, c)| {
            let d = c.to_digit(10).unwrap();
            if k % 2 == 0 {
                let d2 = d * 2;
                if d2 > 9 {
                    d2 - 9
                } else {
                    d2
                }
            } else {
                d
            }
        })
        .sum();
    format!("{body}{}", (10 - sum % 10) % 10)
}

#[tokio::test]
async fn one_address_is_challenged_then_refused_and_held_posts_never_reach_the_processor() {
    let kit = TestKit::new().guarded(GuardPolicy::default());
    let attacker = from("203.0.113.7");
    for i in 0..5 {
        let s = start(&kit, &format!("A-{i}")).await;
        kit.processor.push_authorize(declined());
        let p = post(&kit, s.id(), &nth_card(i), &attacker).await;
        assert_eq!(p.guard, Some(GuardAction::Allowed));
    }
    assert_eq!(kit.processor.authorize_calls(), 5);
    let s = start(&kit, "A-5").await;
    let p = post(&kit, s.id(), &nth_card(5), &attacker).await;
    assert_eq!(
        p.result,
        Ok(PaymentResult::Guarded(GuardAction::Challenged(
            GuardRule::Address
        )))
    );
    assert_eq!(p.page.session.state(), SessionState::Pending);
    assert_eq!(kit.processor.authorize_calls(), 5, "nothing sent");
    // Another address is untouched.
    kit.processor.push_authorize(declined());
    let other = post(&kit, s.id(), &nth_card(50), &from("198.51.100.1")).await;
    assert_eq!(other.guard, Some(GuardAction::Allowed));
    // A solved proof passes once; its replay is refused.
    let solved = GuardedPost {
        proof: ProofCheck::Solved {
            id: "sig-1".into(),
            expires_at: kit.clock.now_value() + Duration::minutes(10),
        },
        ..attacker.clone()
    };
    let s = start(&kit, "A-6").await;
    kit.processor.push_authorize(declined());
    let p = post(&kit, s.id(), &nth_card(6), &solved).await;
    assert_eq!(p.guard, Some(GuardAction::Passed(GuardRule::Address)));
    let s = start(&kit, "A-7").await;
    let p = post(&kit, s.id(), &nth_card(7), &solved).await;
    assert_eq!(p.guard, Some(GuardAction::Refused(GuardRule::Proof)));
    let forged = GuardedPost {
        proof: ProofCheck::Forged,
        ..attacker.clone()
    };
    let p = post(&kit, s.id(), &nth_card(7), &forged).await;
    assert_eq!(p.guard, Some(GuardAction::Refused(GuardRule::Proof)));
    assert_eq!(kit.processor.authorize_calls(), 7);
    // Past ten declines (proofs solved each time), refused.
    for i in 8..12 {
        let s = start(&kit, &format!("A-{i}")).await;
        let solved = GuardedPost {
            proof: ProofCheck::Solved {
                id: format!("sig-{i}"),
                expires_at: kit.clock.now_value() + Duration::minutes(10),
            },
            ..attacker.clone()
        };
        kit.processor.push_authorize(declined());
        post(&kit, s.id(), &nth_card(i), &solved).await;
    }
    let s = start(&kit, "A-12").await;
    let p = post(&kit, s.id(), &nth_card(12), &attacker).await;
    assert_eq!(p.guard, Some(GuardAction::Refused(GuardRule::Address)));
    // An hour later the address is forgotten.
    kit.clock.advance(Duration::minutes(61));
    let s = start(&kit, "A-13").await;
    kit.processor.push_authorize(declined());
    let p = post(&kit, s.id(), &nth_card(13), &attacker).await;
    assert_eq!(p.guard, Some(GuardAction::Allowed));
}

#[tokio::test]
async fn typing_errors_are_never_counted() {
    let kit = TestKit::new().guarded(GuardPolicy::default());
    let s = start(&kit, "T-ERR").await;
    for _ in 0..30 {
        let p = post(&kit, s.id(), "4242 4242 4242 4241", &from("203.0.113.8")).await;
        assert!(p.result.is_err(), "a Luhn failure is the payer's typing");
        assert_eq!(p.guard, None);
    }
    kit.processor
        .push_authorize(Ok(checkout_domain::testing::approved("ch_ok")));
    let p = post(&kit, s.id(), CARD_NUMBER, &from("203.0.113.8")).await;
    assert_eq!(p.guard, Some(GuardAction::Allowed));
}

#[tokio::test]
async fn one_card_declined_across_sessions_is_refused_everywhere() {
    let kit = TestKit::new().guarded(GuardPolicy::default());
    for i in 0..3 {
        let s = start(&kit, &format!("C-{i}")).await;
        kit.processor.push_authorize(declined());
        post(&kit, s.id(), CARD_NUMBER, &from(&format!("198.51.100.{i}"))).await;
    }
    let s = start(&kit, "C-3").await;
    let p = post(&kit, s.id(), CARD_NUMBER, &from("192.0.2.50")).await;
    assert_eq!(p.guard, Some(GuardAction::Refused(GuardRule::Card)));
    assert_eq!(kit.processor.authorize_calls(), 3);
    // Another card in the same session goes through.
    kit.processor
        .push_authorize(Ok(checkout_domain::testing::approved("ch_ok")));
    let p = post(&kit, s.id(), &nth_card(99), &from("192.0.2.50")).await;
    assert_eq!(p.guard, Some(GuardAction::Allowed));
}

/// A guard whose terminal spikes at 4 declines, after 4 declines from 4 addresses; the
/// session (named `{prefix}-4`) whose post from a fifth address was then challenged.
async fn spiking_terminal(prefix: &str) -> (TestKit, checkout_domain::session::PaymentSession) {
    let policy = GuardPolicy {
        terminal_min_declines: 4,
        ..GuardPolicy::default()
    };
    let kit = TestKit::new().guarded(policy);
    for i in 0..4 {
        let s = start(&kit, &format!("{prefix}-{i}")).await;
        kit.processor.push_authorize(declined());
        post(
            &kit,
            s.id(),
            &nth_card(i),
            &from(&format!("198.51.100.{i}")),
        )
        .await;
    }
    let s = start(&kit, &format!("{prefix}-4")).await;
    let p = post(&kit, s.id(), &nth_card(4), &from("192.0.2.9")).await;
    assert_eq!(p.guard, Some(GuardAction::Challenged(GuardRule::Terminal)));
    (kit, s)
}

#[tokio::test]
async fn a_spiking_terminal_challenges_everyone_and_announces_it_until_it_calms() {
    let (kit, s) = spiking_terminal("S").await;
    let state = kit
        .checkout
        .terminal_guard_state(&TerminalNumber::parse("T-1").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert!(state.alerted);
    assert_eq!(state.declines, 4);
    kit.clock.advance(Duration::minutes(16));
    kit.processor
        .push_authorize(Ok(checkout_domain::testing::approved("ch_ok")));
    let p = post(&kit, s.id(), &nth_card(4), &from("192.0.2.9")).await;
    assert_eq!(p.guard, Some(GuardAction::Allowed));
    let terminal = TerminalNumber::parse("T-1").unwrap();
    let kinds: Vec<EventType> = kit
        .sessions
        .events_after(&terminal, None, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .filter(|k| k.as_str().starts_with("terminal."))
        .collect();
    assert_eq!(
        kinds,
        vec![
            EventType::TerminalCardTestingSuspected,
            EventType::TerminalCardTestingEnded
        ]
    );
}

/// Slow and steady: one address posting a dead card every `pace` minutes for a day, solving
/// every challenge. Reports the cards that reached the processor per hour: the address rule
/// bounds them at 10 an hour, whatever the pace.
#[tokio::test]
async fn slow_and_steady_from_one_address_is_bounded_per_hour() {
    for pace in [6i64, 4, 1] {
        let kit = TestKit::new().guarded(GuardPolicy::default());
        let attacker = from("203.0.113.77");
        let posts = 24 * 60 / pace;
        let (mut sent, mut refused) = (0u32, 0u32);
        for i in 0..posts {
            let s = start(&kit, &format!("SLOW-{i}")).await;
            let solved = GuardedPost {
                proof: ProofCheck::Solved {
                    id: format!("slow-{i}"),
                    expires_at: kit.clock.now_value() + Duration::minutes(10),
                },
                ..attacker.clone()
            };
            let before = kit.processor.authorize_calls();
            kit.processor.push_authorize(declined());
            let p = post(&kit, s.id(), &nth_card(1000 + i as u32), &solved).await;
            if kit.processor.authorize_calls() > before {
                sent += 1;
            } else {
                assert_eq!(p.guard, Some(GuardAction::Refused(GuardRule::Address)));
                // Its scripted decline waits for the next post sent (all are declines).
                refused += 1;
            }
            kit.clock.advance(Duration::minutes(pace));
        }
        eprintln!(
            "card-testing [slow and steady, every {pace} min, model]: {posts} posts over 24 h: \
             {sent} reached the processor ({:.1} an hour), {refused} refused",
            f64::from(sent) / 24.0
        );
        assert!(f64::from(sent) / 24.0 <= 10.0, "at most 10 an hour");
    }
}

/// The guard's store, unreachable.
struct DownGuard;

#[async_trait::async_trait]
impl checkout_domain::ports::CardGuard for DownGuard {
    async fn record_outcome(
        &self,
        _: &checkout_domain::guard::GuardSubject,
        _: bool,
        _: time::OffsetDateTime,
    ) -> anyhow::Result<()> {
        anyhow::bail!("down")
    }
    async fn counts(
        &self,
        _: &checkout_domain::guard::GuardSubject,
        _: &checkout_domain::guard::GuardWindows,
        _: &checkout_domain::guard::TerminalCaps,
        _: time::OffsetDateTime,
    ) -> anyhow::Result<checkout_domain::guard::GuardCounts> {
        anyhow::bail!("down")
    }
    async fn spend_proof(
        &self,
        _: &str,
        _: time::OffsetDateTime,
        _: time::OffsetDateTime,
    ) -> anyhow::Result<bool> {
        anyhow::bail!("down")
    }
    async fn set_alert(
        &self,
        _: &TerminalNumber,
        _: bool,
        _: SessionId,
        _: time::OffsetDateTime,
    ) -> anyhow::Result<bool> {
        anyhow::bail!("down")
    }
    async fn terminal_state(
        &self,
        _: &TerminalNumber,
        _: &checkout_domain::guard::GuardWindows,
        _: time::OffsetDateTime,
    ) -> anyhow::Result<checkout_domain::guard::TerminalGuardState> {
        anyhow::bail!("down")
    }
    async fn record_late_decline(
        &self,
        _: SessionId,
        _: time::OffsetDateTime,
    ) -> anyhow::Result<bool> {
        anyhow::bail!("down")
    }
    async fn alerted_terminals(&self) -> anyhow::Result<Vec<(TerminalNumber, SessionId)>> {
        anyhow::bail!("down")
    }
    async fn forget_answers_before(&self, _: time::OffsetDateTime) -> anyhow::Result<u64> {
        anyhow::bail!("down")
    }
    async fn clear_terminal(&self, _: &TerminalNumber) -> anyhow::Result<u64> {
        anyhow::bail!("down")
    }
}

#[tokio::test]
async fn a_guard_that_cannot_be_read_fails_closed() {
    let mut kit = TestKit::new();
    kit.checkout =
        kit.checkout
            .clone()
            .with_card_guard(checkout_domain::usecases::CardGuardSetup {
                store: std::sync::Arc::new(DownGuard),
                keys: std::sync::Arc::new(checkout_domain::testing::PlainGuardKeys),
                policy: GuardPolicy::default(),
            });
    let s = start(&kit, "DOWN").await;
    let result = kit
        .checkout
        .process_card(s.id(), &card_input(), &from("203.0.113.9"))
        .await;
    assert!(
        matches!(result, Err(CheckoutError::Unavailable(_))),
        "{result:?}"
    );
    assert_eq!(kit.processor.authorize_calls(), 0, "nothing sent");
}

/// A post from `ip` on a new session `name` that the processor answers with a 3DS challenge,
/// which the payer then fails: a decline after the challenge.
async fn challenged_then_failed(kit: &TestKit, name: &str, card: &str, ip: &str) {
    let s = start(kit, name).await;
    kit.processor
        .push_authorize(Ok(ProcessorOutcome::ChallengeRequired {
            processor_reference: format!("pi_{name}"),
            challenge_url: None,
        }));
    let p = post(kit, s.id(), card, &from(ip)).await;
    assert_eq!(p.page.session.state(), SessionState::ChallengeRequired);
    let (_, outcome) = kit.checkout.answer_challenge(s.id(), false).await.unwrap();
    assert!(matches!(outcome.result, PaymentResult::Declined { .. }));
}

#[tokio::test]
async fn declines_after_a_3ds_challenge_count_like_any_other() {
    let kit = TestKit::new().guarded(GuardPolicy::default());
    // Five cards that each took a challenge and failed it, from one address.
    for i in 0..5 {
        challenged_then_failed(&kit, &format!("C-{i}"), &nth_card(i), "203.0.113.20").await;
    }
    assert_eq!(kit.processor.authorize_calls(), 5);
    let s = start(&kit, "C-5").await;
    let p = post(&kit, s.id(), &nth_card(5), &from("203.0.113.20")).await;
    assert_eq!(
        p.guard,
        Some(GuardAction::Challenged(GuardRule::Address)),
        "five declines after a challenge are five declines"
    );
    assert_eq!(kit.processor.authorize_calls(), 5, "nothing sent");
    // A challenge the payer passes is no decline.
    let s = start(&kit, "C-OK").await;
    kit.processor
        .push_authorize(Ok(ProcessorOutcome::ChallengeRequired {
            processor_reference: "pi_ok".into(),
            challenge_url: None,
        }));
    post(&kit, s.id(), &nth_card(40), &from("198.51.100.40")).await;
    let (_, outcome) = kit.checkout.answer_challenge(s.id(), true).await.unwrap();
    assert_eq!(outcome.session.state(), SessionState::Successful);
    let state = kit
        .checkout
        .terminal_guard_state(&TerminalNumber::parse("T-1").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((state.posts, state.declines), (6, 5));
}

#[tokio::test]
async fn one_card_failing_its_challenge_across_sessions_is_refused_everywhere() {
    let kit = TestKit::new().guarded(GuardPolicy::default());
    let card = nth_card(77);
    for i in 0..3 {
        challenged_then_failed(&kit, &format!("K-{i}"), &card, &format!("192.0.2.{i}")).await;
    }
    let s = start(&kit, "K-3").await;
    let p = post(&kit, s.id(), &card, &from("192.0.2.99")).await;
    assert_eq!(p.guard, Some(GuardAction::Refused(GuardRule::Card)));
    assert_eq!(
        kit.processor.authorize_calls(),
        3,
        "the refused post was not sent"
    );
}

#[tokio::test]
async fn the_sweep_ends_a_calm_terminals_alert_without_a_payer_and_forgets_old_answers() {
    let (kit, _) = spiking_terminal("W").await;
    let terminal = TerminalNumber::parse("T-1").unwrap();
    let card_testing_events = || async {
        kit.sessions
            .events_after(&terminal, None, 100)
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.kind)
            .filter(|k| k.as_str().starts_with("terminal."))
            .collect::<Vec<EventType>>()
    };
    // Still spiking: the sweep changes nothing.
    let sweep = kit.checkout.sweep_card_guard().await.unwrap();
    assert_eq!(sweep.alerts_ended, 0);
    assert_eq!(
        card_testing_events().await,
        vec![EventType::TerminalCardTestingSuspected]
    );
    // The window passes with no payer at all: the sweep lowers the alert, once.
    kit.clock.advance(Duration::minutes(16));
    assert_eq!(
        kit.checkout.sweep_card_guard().await.unwrap().alerts_ended,
        1
    );
    assert_eq!(
        kit.checkout.sweep_card_guard().await.unwrap().alerts_ended,
        0
    );
    assert_eq!(
        card_testing_events().await,
        vec![
            EventType::TerminalCardTestingSuspected,
            EventType::TerminalCardTestingEnded
        ]
    );
    let state = kit
        .checkout
        .terminal_guard_state(&terminal)
        .await
        .unwrap()
        .unwrap();
    assert!(!state.alerted);
    // A week later the answers are forgotten.
    assert_eq!(
        kit.checkout
            .sweep_card_guard()
            .await
            .unwrap()
            .answers_forgotten,
        0
    );
    kit.clock.advance(Duration::days(7));
    assert_eq!(
        kit.checkout
            .sweep_card_guard()
            .await
            .unwrap()
            .answers_forgotten,
        4
    );
}
