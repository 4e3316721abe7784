//! The sandbox's test cards behave as the README's table says, through the card form of a
//! running sandbox server.

use crate::start_body;
use crate::support::payer::{attempts, CardForm};
use crate::support::TestServer;

/// What the payer and the merchant see after paying with one card.
struct Paid {
    status: u16,
    location: String,
    body: String,
    state: String,
    attempts: i64,
}

async fn pay_with(server: &TestServer, token: &str, reference: &str, card: &str) -> Paid {
    let created = server
        .post(
            "/pay/api/start-payment",
            Some(token),
            &start_body(reference),
        )
        .await;
    let id = created.str("checkoutSessionId").to_owned();
    let form = CardForm::open(&server.http, &server.base, &id).await;
    let (status, location, body) = form.submit_and_read(&server.http, card).await;
    let record = server
        .get(&format!("/pay/api/payment/{id}"), Some(token))
        .await;
    Paid {
        status,
        location,
        body,
        state: record.str("state").to_owned(),
        attempts: attempts(server, &id).await,
    }
}

#[tokio::test]
async fn every_sandbox_test_card_ends_as_the_readme_says() {
    let server = TestServer::sandbox("api-sandbox-cards").await;
    let token = server.token().await;
    let redirected = [
        ("4242424242424242", "/ok?", "Successful"),
        ("4000000000000077", "/ok?", "ApprovedTransaction"),
        ("4000000000000002", "/fail?", "Failed"),
        ("4000000000009995", "/fail?", "Failed"),
        // The answer is lost although the charge went through: the replay returns it.
        ("4000000000000184", "/ok?", "Successful"),
    ];
    for (n, (card, path, state)) in redirected.into_iter().enumerate() {
        let paid = pay_with(&server, &token, &format!("CARD-{n}"), card).await;
        assert_eq!(paid.status, 303, "{card}: {}", paid.body);
        assert!(paid.location.contains(path), "{card}: {}", paid.location);
        assert_eq!(paid.state, state, "{card}");
        assert_eq!(paid.attempts, 1, "{card}: one attempt");
    }
    for card in ["4000002760003184", "4000000000003220"] {
        let paid = pay_with(&server, &token, &format!("CARD-3DS-{card}"), card).await;
        assert_eq!(paid.status, 303);
        assert!(
            paid.location.contains("/pay/challenge/"),
            "{}",
            paid.location
        );
        assert_eq!(paid.state, "ChallengeRequired");
    }
    // Unreachable when the card is handed over: nothing asked for, the form again.
    let paid = pay_with(&server, &token, "CARD-0119", "4000000000000119").await;
    assert_eq!(paid.status, 303);
    assert!(paid.body.contains("data-code=\"SVC_003\""), "{}", paid.body);
    assert_eq!((paid.state.as_str(), paid.attempts), ("Pending", 0));
    // Refused by the processor: nothing charged, the form again.
    let paid = pay_with(&server, &token, "CARD-0127", "4000000000000127").await;
    assert_eq!(paid.status, 303);
    assert!(paid.body.contains("data-code=\"SVC_004\""), "{}", paid.body);
    assert_eq!((paid.state.as_str(), paid.attempts), ("Pending", 1));
}
