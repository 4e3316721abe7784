//! The card-testing guard through the real binary (issue 31): attack shapes with the cards
//! that reach the processor before (guard off) and after (guard on, the default settings),
//! an honest population that is never challenged, the counts shared by two instances, proofs
//! of work forged, replayed or bound to another session refused, the terminal's alert as an
//! event, the decisions as metrics, and the operator's view and clear.
//!
//! Figures are printed (on standard error); the asserts are on the guard's bounds. The sandbox's
//! dead cards (`4000 0100 …`) are distinct declining numbers, as stolen cards are.

use std::time::Instant;

use diesel::sql_types::BigInt;
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::Value;

use crate::operator::{checkout, stdout};
use crate::support::payer::{hidden_value, location, CardForm};
use crate::support::{Mode, TestServer};

const APPROVED: &str = "4242424242424242";
const DECLINED: &str = "4000000000000002";
/// A proof-of-work range small enough for a debug-built test to solve quickly.
const TEST_POW: (&str, &str) = ("CHECKOUT__GUARD__PROOF_MAX_NUMBER", "5000");

/// The `i`-th sandbox dead card: `40000100` and 8 digits, the last one making the Luhn sum.
fn dead(i: u32) -> String {
    let body = format!("40000100{:07}", i);
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

/// How the service answered one card post.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Answer {
    /// Sent to the processor (an approval, a decline, anything but the guard's answers).
    Sent(u16),
    /// A 303 to the form shown again (Post/Redirect/Get) without a challenge: a mistype, or a
    /// decline while the terminal allows another card.
    FormAgain,
    /// A 303 to the form shown again with a proof-of-work challenge; nothing sent.
    Challenged(Proof),
    /// The guard's refusal page (429); nothing sent.
    Refused,
}

/// A challenge as the page carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Proof {
    salt: String,
    challenge: String,
    signature: String,
    max: u64,
}

impl Proof {
    fn of(page: &str) -> Proof {
        let max_at = page.find("data-max=\"").expect("data-max") + "data-max=\"".len();
        let max_end = max_at + page[max_at..].find('"').unwrap();
        Proof {
            salt: hidden_value(page, "powSalt"),
            challenge: hidden_value(page, "powChallenge"),
            signature: hidden_value(page, "powSignature"),
            max: page[max_at..max_end].parse().unwrap(),
        }
    }

    /// The number the page's script would find.
    fn solve(&self) -> u64 {
        checkout_http::card_guard::ProofOfWork::solve(&checkout_http::card_guard::Challenge {
            salt: self.salt.clone(),
            challenge: self.challenge.clone(),
            signature: self.signature.clone(),
            max_number: self.max,
        })
        .expect("a solvable challenge")
    }
}

/// A solved challenge, as posted back.
type Solved = (Proof, u64);

/// Posts `card` on `form`, from `xff` (an `X-Forwarded-For` value) when given, with a solved
/// proof when given.
async fn post(
    server: &TestServer,
    form: &CardForm,
    card: &str,
    xff: Option<&str>,
    proof: Option<&Solved>,
) -> Answer {
    let number = proof.map(|(_, n)| n.to_string()).unwrap_or_default();
    let mut fields = vec![
        ("checkoutSessionId", form.session_id.clone()),
        ("csrfToken", form.csrf_token.clone()),
        ("cardholderName", "Ada Lovelace".to_owned()),
        ("cardNumber", card.to_owned()),
        ("cardExpiry", "11/34".to_owned()),
        ("cardCvv", "918".to_owned()),
    ];
    if let Some((p, _)) = proof {
        fields.push(("powSalt", p.salt.clone()));
        fields.push(("powChallenge", p.challenge.clone()));
        fields.push(("powSignature", p.signature.clone()));
        fields.push(("powNumber", number));
    }
    let mut request = server
        .http
        .post(&form.action)
        .header("Cookie", &form.cookie)
        .form(&fields);
    if let Some(xff) = xff {
        request = request.header("X-Forwarded-For", xff);
    }
    let response = request.send().await.expect("an answer to the card form");
    let status = response.status().as_u16();
    if status == 429 {
        let retry_after = response.headers().get("retry-after").cloned();
        let page = response.text().await.unwrap_or_default();
        assert!(page.contains("data-code=\"GUARD_REFUSED\""), "{page}");
        assert!(retry_after.is_some(), "a refusal says when to come back");
        return Answer::Refused;
    }
    // The form shown again is a 303 to its GET page (`form=` names the flash cookie), read
    // as a browser would.
    if status == 303 && location(&response).contains("form=") {
        let page = form
            .page_after(&server.http, &response)
            .await
            .expect("the form's own page");
        if page.contains("data-code=\"GUARD_CHECK\"") {
            return Answer::Challenged(Proof::of(&page));
        }
        assert!(
            page.contains("name=\"cardNumber\""),
            "the form again: {page}"
        );
        return Answer::FormAgain;
    }
    Answer::Sent(status)
}

/// One attack post on a fresh link: challenged posts are answered with a solved proof when
/// `solves` (a determined attacker), else given up.
async fn attack(server: &TestServer, card: &str, xff: Option<&str>, solves: bool) -> Answer {
    attack_on(server, server, card, xff, solves).await
}

/// [`attack`] on a link that `creator` made (through the API) and `server` serves.
async fn attack_on(
    creator: &TestServer,
    server: &TestServer,
    card: &str,
    xff: Option<&str>,
    solves: bool,
) -> Answer {
    let id = creator.new_checkout("ATTACK").await;
    let form = CardForm::open(&server.http, &server.base, &id).await;
    match post(server, &form, card, xff, None).await {
        Answer::Challenged(proof) if solves => {
            let n = proof.solve();
            post(server, &form, card, xff, Some(&(proof, n))).await
        }
        other => other,
    }
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// Card posts that reached the processor: the attempts recorded.
async fn reached(server: &TestServer) -> i64 {
    let mut conn = AsyncPgConnection::establish(server.database_url())
        .await
        .expect("connect");
    let count: Count = diesel::sql_query("SELECT count(*) AS n FROM payment_attempts")
        .get_result(&mut conn)
        .await
        .expect("count attempts");
    count.n
}

/// Runs `posts` attack posts (`card(i)`, `xff(i)`) and returns (cards that reached the
/// processor, answers refused, answers challenged and given up), printing the figures.
async fn run_attack(
    server: &TestServer,
    shape: &str,
    posts: u32,
    card: impl Fn(u32) -> String,
    xff: impl Fn(u32) -> Option<String>,
    solves: bool,
) -> (i64, u32, u32) {
    let started = Instant::now();
    let (mut refused, mut challenged) = (0, 0);
    for i in 0..posts {
        match attack(server, &card(i), xff(i).as_deref(), solves).await {
            Answer::Refused => refused += 1,
            Answer::Challenged(_) => challenged += 1,
            Answer::Sent(_) | Answer::FormAgain => {}
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let reached = reached(server).await;
    eprintln!(
        "card-testing [{shape}]: {posts} posts in {elapsed:.1} s: {reached} reached the \
         processor ({:.0} an hour at this pace), {refused} refused, {challenged} challenged \
         and given up",
        reached as f64 / elapsed * 3600.0
    );
    (reached, refused, challenged)
}

async fn guarded(label: &str, extra: &[(&str, &str)]) -> TestServer {
    let mut env = vec![TEST_POW];
    env.extend_from_slice(extra);
    TestServer::start(label, Mode::Sandbox, &env).await
}

async fn unguarded(label: &str, extra: &[(&str, &str)]) -> TestServer {
    let mut env = vec![("CHECKOUT__GUARD__ENABLED", "false")];
    env.extend_from_slice(extra);
    TestServer::start(label, Mode::Sandbox, &env).await
}

const PROXY: (&str, &str) = ("CHECKOUT__SECURITY__TRUSTED_PROXIES", "127.0.0.1");

#[tokio::test]
async fn one_address_is_challenged_past_five_declines_and_refused_past_ten() {
    const POSTS: u32 = 24;
    // The attacker also writes X-Forwarded-For: the server trusts no proxy, so it is ignored.
    let spoof = |i: u32| Some(format!("198.51.100.{i}"));
    let off = unguarded("guard-one-address-off", &[]).await;
    let (before, ..) = run_attack(&off, "one address, guard off", POSTS, dead, spoof, true).await;
    assert_eq!(before, i64::from(POSTS));
    drop(off);
    let on = guarded("guard-one-address-on", &[]).await;
    let (after, refused, _) =
        run_attack(&on, "one address, guard on", POSTS, dead, spoof, true).await;
    assert_eq!(
        after, 10,
        "five sent freely, five more with a proof each, then none"
    );
    assert_eq!(refused, POSTS - 10);
}

#[tokio::test]
async fn many_addresses_through_a_trusted_proxy_set_off_the_terminal_alert() {
    const POSTS: u32 = 36;
    let rotate = |i: u32| Some(format!("203.0.113.7, 198.51.{}.{}", i / 200, i % 200 + 1));
    let off = unguarded("guard-many-off", &[PROXY]).await;
    let (before, ..) = run_attack(
        &off,
        "many addresses, guard off",
        POSTS,
        dead,
        rotate,
        false,
    )
    .await;
    assert_eq!(before, i64::from(POSTS));
    drop(off);
    let on = guarded(
        "guard-many-on",
        &[PROXY, ("CHECKOUT__METRICS__ADDRESS", "127.0.0.1:0")],
    )
    .await;
    let (after, _, challenged) =
        run_attack(&on, "many addresses, guard on", POSTS, dead, rotate, false).await;
    assert_eq!(
        after, 20,
        "the terminal's 20th decline in 15 minutes sets off the alert"
    );
    assert_eq!(challenged, POSTS - 20);
    // The merchant is told; the operator sees it, and clears it.
    let token = on.token().await;
    let suspected = events_of(&on, &token, "terminal.card_testing_suspected").await;
    assert_eq!(suspected, 1);
    let shown = stdout(&checkout(&on, &["guard", "show", &on.terminal]));
    assert!(shown.contains("card_testing_suspected: yes"), "{shown}");
    assert!(shown.contains("declines_last_15_min: 20"), "{shown}");
    let metrics = scrape(&on).await;
    assert!(
        metrics.contains(
            "checkout_card_guard_decisions_total{rule=\"terminal\",outcome=\"challenged\"} 16"
        ),
        "{metrics}"
    );
    assert!(!metrics.contains(&dead(0)), "no card data in the metrics");
    let cleared = stdout(&checkout(&on, &["guard", "clear", &on.terminal]));
    assert!(cleared.contains("20 answers forgotten"), "{cleared}");
    let shown = stdout(&checkout(&on, &["guard", "show", &on.terminal]));
    assert!(shown.contains("card_testing_suspected: no"), "{shown}");
    assert_eq!(
        attack(&on, APPROVED, Some("192.0.2.1"), false).await,
        Answer::Sent(303),
        "a payer after the clear is not challenged"
    );
}

#[tokio::test]
async fn one_card_across_many_links_is_refused_everywhere_after_three() {
    const POSTS: u32 = 12;
    let card = |_| dead(4242);
    let rotate = |i: u32| Some(format!("198.51.100.{}", i + 1));
    let off = unguarded("guard-one-card-off", &[PROXY]).await;
    let (before, ..) = run_attack(&off, "one card, guard off", POSTS, card, rotate, true).await;
    assert_eq!(before, i64::from(POSTS));
    drop(off);
    let on = guarded("guard-one-card-on", &[PROXY]).await;
    let (after, refused, _) =
        run_attack(&on, "one card, guard on", POSTS, card, rotate, true).await;
    assert_eq!(after, 3);
    assert_eq!(refused, POSTS - 3);
}

/// A household (one address) pays several links with a mistype and a decline or two; other
/// payers decline once then pay: none is challenged or refused.
#[tokio::test]
async fn honest_payers_are_never_challenged() {
    let server = guarded("guard-honest", &[PROXY]).await;
    server.set_max_card_attempts(&server.terminal, 3).await;
    let (mut paid, mut held) = (0, 0);
    // Each decline with a card of its own: honest payers do not share cards.
    let mut own_card = 1000..;
    let mut declining = || dead(own_card.next().unwrap());
    let mut pay = |answer: Answer| match answer {
        Answer::Refused | Answer::Challenged(_) => held += 1,
        Answer::Sent(303) => paid += 1,
        Answer::Sent(_) | Answer::FormAgain => {}
    };
    for household in 0..3 {
        let address = format!("192.0.2.{}", household + 10);
        for link in 0..4 {
            let id = server.new_checkout("HONEST").await;
            let form = CardForm::open(&server.http, &server.base, &id).await;
            // A mistype (the Luhn check fails): the payer's typing, never counted.
            pay(post(&server, &form, "4242424242424241", Some(&address), None).await);
            if link < 2 {
                // Declined once (one link declined twice): another card then.
                pay(post(&server, &form, &declining(), Some(&address), None).await);
                if link == 0 && household == 0 {
                    pay(post(&server, &form, DECLINED, Some(&address), None).await);
                }
            }
            pay(post(&server, &form, APPROVED, Some(&address), None).await);
        }
    }
    for payer in 0..10 {
        let address = format!("198.51.100.{}", payer + 100);
        let id = server.new_checkout("HONEST-1").await;
        let form = CardForm::open(&server.http, &server.base, &id).await;
        pay(post(&server, &form, &declining(), Some(&address), None).await);
        pay(post(&server, &form, APPROVED, Some(&address), None).await);
    }
    eprintln!("card-testing [honest]: 22 payers, {paid} paid, {held} challenged or refused");
    assert_eq!(held, 0);
    assert_eq!(paid, 22);
}

#[tokio::test]
async fn two_instances_share_the_counts() {
    let a = guarded("guard-instance-a", &[]).await;
    // The same signing key (so the same guard secret) and sandbox credentials, as two
    // instances of one deployment have.
    let key = a.dir.join("data/keys/sandbox.pk8");
    let b = TestServer::start_on(
        a.database(),
        "guard-instance-b",
        Mode::Sandbox,
        &[
            TEST_POW,
            ("CHECKOUT__IDENTITY__KEY_FILE", key.to_str().unwrap()),
            ("CHECKOUT__SANDBOX__CLIENT_SECRET", a.client_secret.as_str()),
        ],
    )
    .await;
    for i in 0..5 {
        let server = if i % 2 == 0 { &a } else { &b };
        assert_eq!(
            attack_on(&a, server, &dead(i), None, false).await,
            Answer::Sent(303)
        );
    }
    // The sixth decline from the address, on either instance, is challenged.
    assert!(matches!(
        attack_on(&a, &b, &dead(5), None, false).await,
        Answer::Challenged(_)
    ));
    assert!(matches!(
        attack(&a, &dead(6), None, false).await,
        Answer::Challenged(_)
    ));
}

#[tokio::test]
async fn forged_replayed_and_misbound_proofs_are_refused_and_counted() {
    let server = guarded(
        "guard-proofs",
        &[("CHECKOUT__METRICS__ADDRESS", "127.0.0.1:0")],
    )
    .await;
    server.set_max_card_attempts(&server.terminal, 10).await;
    for i in 0..5 {
        attack(&server, &dead(i), None, false).await;
    }
    let id = server.new_checkout("PROOF").await;
    let form = CardForm::open(&server.http, &server.base, &id).await;
    let Answer::Challenged(proof) = post(&server, &form, &dead(10), None, None).await else {
        panic!("challenged past five declines");
    };
    let n = proof.solve();
    // Forged: the attacker's own signature over a challenge it made up.
    let mut forged = proof.clone();
    forged.signature = "ab".repeat(32);
    assert_eq!(
        post(&server, &form, &dead(10), None, Some(&(forged, n))).await,
        Answer::Refused
    );
    // A challenge answered for another session.
    let other = server.new_checkout("PROOF-OTHER").await;
    let other_form = CardForm::open(&server.http, &server.base, &other).await;
    let solved = (proof.clone(), n);
    assert_eq!(
        post(&server, &other_form, &dead(11), None, Some(&solved)).await,
        Answer::Refused
    );
    let before = reached(&server).await;
    // Solved and bound: sent once; its replay is refused.
    assert_eq!(
        post(&server, &form, &dead(10), None, Some(&solved)).await,
        Answer::FormAgain,
        "declined, the form again (the terminal allows another card)"
    );
    assert_eq!(reached(&server).await, before + 1);
    assert_eq!(
        post(&server, &form, &dead(12), None, Some(&solved)).await,
        Answer::Refused
    );
    assert_eq!(
        reached(&server).await,
        before + 1,
        "refused posts are never sent"
    );
    let metrics = scrape(&server).await;
    assert!(
        metrics
            .contains("checkout_card_guard_decisions_total{rule=\"proof\",outcome=\"refused\"} 3"),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_challenge_survives_the_loss_of_the_forms_cookie() {
    let server = guarded("guard-lost-cookie", &[TEST_POW]).await;
    for i in 0..5 {
        attack(&server, &dead(i), None, false).await;
    }
    let id = server.new_checkout("LOST-COOKIE").await;
    let form = CardForm::open(&server.http, &server.base, &id).await;
    let response = server
        .http
        .post(&form.action)
        .header("Cookie", &form.cookie)
        .form(&[
            ("checkoutSessionId", form.session_id.as_str()),
            ("csrfToken", form.csrf_token.as_str()),
            ("cardholderName", "Ada Lovelace"),
            ("cardNumber", dead(20).as_str()),
            ("cardExpiry", "11/34"),
            ("cardCvv", "918"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 303);
    let to = location(&response);
    assert!(to.contains("verify=1"), "{to}");
    // The form's page opened without the flash cookie (another tab took it, or it expired):
    // still a challenge, never a form whose next post is challenged again.
    let page = server
        .http
        .get(format!("{}{to}", server.base))
        .header("Cookie", &form.cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("data-code=\"GUARD_CHECK\""), "{page}");
    let proof = Proof::of(&page);
    let n = proof.solve();
    let before = reached(&server).await;
    assert_eq!(
        post(&server, &form, &dead(20), None, Some(&(proof, n))).await,
        Answer::Sent(303),
        "the proof from that page passes"
    );
    assert_eq!(reached(&server).await, before + 1);
}

/// The events of type `kind` in the terminal's feed, once there is one (or after 20 s).
async fn events_of(server: &TestServer, token: &str, kind: &str) -> usize {
    let started = Instant::now();
    loop {
        let page = server.get("/pay/api/events?limit=100", Some(token)).await;
        let events: Value = page.body["events"].clone();
        let n = events
            .as_array()
            .map_or(0, |e| e.iter().filter(|e| e["type"] == kind).count());
        if n > 0 || started.elapsed().as_secs() > 20 {
            return n;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

async fn scrape(server: &TestServer) -> String {
    let port = server.metrics_port.expect("a metrics listener");
    server
        .http
        .get(format!("http://127.0.0.1:{port}/metrics"))
        .send()
        .await
        .expect("the metrics listener answers")
        .text()
        .await
        .unwrap()
}
