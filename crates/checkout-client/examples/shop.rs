//! A small shop on the SDK: it sells one invoice by payment link, polls the link's status for
//! a while, withdraws it when nobody paid, and reads the terminal's events feed up to the
//! event of that withdrawal (or of the payment).
//!
//! ```sh
//! CHECKOUT_BASE_URL=http://127.0.0.1:8080 CHECKOUT_CLIENT_ID=sandbox-client \
//! CHECKOUT_CLIENT_SECRET=... RUST_LOG=checkout_client=info \
//!   cargo run -p checkout-client --example shop
//! ```
//!
//! `CHECKOUT_POLL_SECONDS` (default 3) is how long it waits for a payment; open the printed
//! link and pay with a sandbox card to see the payment's event instead. It exits non-zero
//! when a call fails or the event never shows up.

// The shop talks to its operator on standard output.
#![allow(clippy::print_stdout)]

use std::error::Error;
use std::time::{Duration, Instant};

use checkout_client::{
    Client, Culture, Currency, Decimal, EventType, Item, Money, PaymentLinkRequest, PaymentState,
};

fn setting(name: &str) -> Result<String, Box<dyn Error>> {
    std::env::var(name).map_err(|_| format!("set {name}").into())
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match shop().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("shop: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn shop() -> Result<(), Box<dyn Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let client = Client::new(
        &setting("CHECKOUT_BASE_URL")?,
        setting("CHECKOUT_CLIENT_ID")?,
        setting("CHECKOUT_CLIENT_SECRET")?,
    )?;
    let poll_for = Duration::from_secs(
        std::env::var("CHECKOUT_POLL_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3),
    );

    // Where the feed stood before this sale: the events after it are this run's and newer.
    let mut feed = client.events(None).page_size(100);
    while feed.next_event().await?.is_some() {}
    let start = feed.cursor().map(str::to_owned);

    // 1. A payment link for an invoice of 2 × 7,500.00 CRC.
    let invoice = format!("INV-{}", std::process::id());
    let total = Money::new(Decimal::from(15_000), Currency::CRC)?;
    let link = client
        .generate_payment_link(
            &PaymentLinkRequest::new(
                &invoice,
                total,
                format!("Invoice {invoice}"),
                "payer@example.com",
                Culture::Es,
            )
            .item(Item::new(
                "CONSULTING-H",
                2,
                "Consulting hour",
                Decimal::from(7_500),
            )),
        )
        .await?;
    println!("token fetched: {}", client.tokens_fetched() == 1);
    println!("invoice {invoice}: {total}, pay at {}", link.payment_link);
    println!("the link expires at {}", link.expiration_date_time);

    // 2. Poll its status until it is paid or the wait is over.
    let id = link.checkout_session_id;
    let started = Instant::now();
    let mut status = client.payment_status(&id).await?;
    while !status.state.is_terminal() && started.elapsed() < poll_for {
        tokio::time::sleep(Duration::from_secs(1)).await;
        status = client.payment_status(&id).await?;
        println!("status: {} ({})", status.state, status.state_code);
    }

    // 3. Nobody paid: withdraw the link so that it cannot be paid later.
    let expected = if status.state.is_terminal() {
        println!("paid: {} ({})", status.state, status.state_code);
        match status.state {
            PaymentState::Successful => EventType::PaymentSucceeded,
            PaymentState::ApprovedTransaction => EventType::PaymentAuthorized,
            _ => EventType::PaymentFailed,
        }
    } else {
        let cancelled = client.cancel_payment(&id).await?;
        println!("withdrawn: {} ({})", cancelled.state, cancelled.state_code);
        EventType::PaymentCancelled
    };

    // 4. Read the feed on from where it stood, until this session's event arrives.
    let mut feed = client.events(start);
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        match feed.next_event().await? {
            Some(event) => {
                println!(
                    "event {} {} for {} ({})",
                    event.id, event.kind, event.data.transaction_reference_number, event.timestamp
                );
                if event.kind == expected && event.data.checkout_session_id == id {
                    break;
                }
            }
            None if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            None => return Err(format!("no {expected} event for {id} in the feed").into()),
        }
    }
    println!(
        "resume the feed from cursor {}",
        feed.cursor().unwrap_or("(start)")
    );
    Ok(())
}
