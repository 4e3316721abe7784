//! Refunds left for review, through the binary: a refund whose processor answer stays lost
//! past the processor's key lifetime is given up by reconciliation (never replayed: a replay
//! then could refund anew), `checkout reversals review` lists it for the operator, and
//! `checkout reversals recheck` puts it back with the processor's id of the refund, so that
//! the sweep reads it there and records what the processor says. Money is asserted at the
//! processor and in the API at each step.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use checkout_processor::testing::fake_stripe::{Call, Fault, When};
use diesel_async::{AsyncConnection, RunQueryDsl};

use crate::reversals::{events_about, refund, refund_list, refunds_at_processor, LEASE};
use crate::support::TestServer;
use crate::{intents_of, pay, service, APPROVED_CARD};

/// Runs `checkout reversals <words>` against the server's database.
fn reversals(server: &TestServer, words: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_checkout"))
        .arg("reversals")
        .args(words)
        .env_remove("CHECKOUT_CONFIG")
        .env("DATABASE_URL", server.database_url())
        .env("CHECKOUT__DATA_DIR", server.dir.join("operator"))
        .env("RUST_LOG", "warn")
        .output()
        .expect("run the checkout binary")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Moves the refunds of session `id` a day into the past (as if the processor's 24 h key
/// lifetime had passed since they were asked).
async fn age_refunds(server: &TestServer, id: &str) {
    let mut conn = diesel_async::AsyncPgConnection::establish(server.database_url())
        .await
        .expect("connect");
    diesel::sql_query(
        "UPDATE payment_refunds SET created_at = created_at - interval '24 hours' \
         WHERE session_id = $1",
    )
    .bind::<diesel::sql_types::Uuid, _>(uuid::Uuid::parse_str(id).expect("uuid"))
    .execute(&mut conn)
    .await
    .expect("age the refunds");
}

/// The review listing's line about session `id`, once it shows one (at most 20 s).
fn listed(server: &TestServer, id: &str) -> Option<String> {
    let started = Instant::now();
    loop {
        let out = reversals(server, &["review"]);
        assert!(out.status.success(), "{}", text(&out));
        let line = String::from_utf8_lossy(&out.stdout)
            .lines()
            .find(|l| l.contains(id))
            .map(str::to_owned);
        if line.is_some() || started.elapsed() > Duration::from_secs(20) {
            return line;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refund_given_up_for_review_is_listed_and_settled_by_reading_the_processor() {
    let stripe = crate::fake_stripe().await;
    let server = service("money-review", &stripe, &[LEASE]).await;
    let id = server.new_checkout("REVIEW-1").await;
    pay(&server, &id, APPROVED_CARD).await;

    // Refunded at the processor at once, every answer about it lost.
    stripe.inject_always(
        Call::CreateRefund,
        When::After,
        Fault::Delay(Duration::from_millis(2000)),
    );
    let lost = refund(&server, &id, Some("review-key-1"), r#"{"amount": 3.00}"#).await;
    assert_eq!(lost.body["type"], "SVC_009", "{}", lost.body);
    let refund_id = refund_list(&server, &id).await["refunds"][0]["refundId"]
        .as_str()
        .unwrap()
        .to_owned();
    age_refunds(&server, &id).await;

    let line = tokio::task::block_in_place(|| listed(&server, &id)).expect("listed for review");
    stripe.clear_faults();
    let fields: Vec<&str> = line.split('\t').collect();
    assert_eq!(fields[0], refund_id, "{line}");
    assert_eq!(
        &fields[1..7],
        [
            id.as_str(),
            server.terminal.as_str(),
            "refund",
            "3.00 USD",
            "-",
            "Unknown"
        ],
        "{line}"
    );
    assert!(fields[7].starts_with("1d 0h"), "{line}");
    assert_eq!(fields[8], "SVC_009", "{line}");
    let all = text(&reversals(&server, &["review"]));
    for secret in ["sk_test_money", "4242424242424242", "review-key-1"] {
        assert!(!all.contains(secret), "{secret} in {all}");
    }
    let other = text(&reversals(&server, &["review", "--terminal", "T-OTHER"]));
    assert!(!other.contains(&id), "{other}");
    assert!(other.contains("0 refund(s) left for review"), "{other}");

    // Given up: never replayed, its amount still reserved, nothing reported refunded.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let at_processor = refunds_at_processor(&stripe, &id);
    assert_eq!(at_processor, [(300, "succeeded".to_owned())]);
    assert_eq!(stripe.executions(Call::CreateRefund), 1);
    let list = refund_list(&server, &id).await;
    assert_eq!(list["refunds"][0]["state"], "Unknown", "{list}");
    assert_eq!(list["refundedAmount"], 0.0, "{list}");

    // Bad input changes nothing.
    let bare = reversals(&server, &["recheck", &refund_id]);
    assert!(!bare.status.success());
    assert!(text(&bare).contains("--processor-id"), "{}", text(&bare));
    let unknown = reversals(
        &server,
        &[
            "recheck",
            "6f1c2b1e-8f0a-4c39-9d43-1f1f2b3c4d5e",
            "--processor-id",
            "re_x",
        ],
    );
    assert!(!unknown.status.success(), "{}", text(&unknown));

    // The operator finds the refund at the processor by its metadata and rechecks it.
    let intent = intents_of(&stripe, &id)[0].id.clone();
    let found = stripe
        .refunds()
        .into_iter()
        .find(|r| r.payment_intent == intent && r.metadata.get("refund") == Some(&refund_id))
        .expect("the refund at the processor");
    let recheck = reversals(
        &server,
        &["recheck", &refund_id, "--processor-id", &found.id],
    );
    assert!(recheck.status.success(), "{}", text(&recheck));

    let started = Instant::now();
    let list = loop {
        let list = refund_list(&server, &id).await;
        if list["refunds"][0]["state"] == "Succeeded" || started.elapsed() > Duration::from_secs(20)
        {
            break list;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(list["refunds"][0]["state"], "Succeeded", "{list}");
    assert_eq!(list["refundedAmount"], 3.0, "{list}");
    assert_eq!(server.status_record(&id).await["refundedAmount"], 3.0);
    assert_eq!(
        refunds_at_processor(&stripe, &id),
        [(300, "succeeded".to_owned())]
    );
    assert_eq!(
        stripe.executions(Call::CreateRefund),
        1,
        "read, never replayed"
    );
    assert_eq!(events_about(&server, &id, "payment.refunded").await, 1);
    let listing = text(&reversals(&server, &["review"]));
    assert!(!listing.contains(&id), "{listing}");
    let again = reversals(
        &server,
        &["recheck", &refund_id, "--processor-id", &found.id],
    );
    assert!(!again.status.success(), "settled: {}", text(&again));
}
