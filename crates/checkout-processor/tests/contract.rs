//! The `CardProcessor` contract (the port's MUST lines, `checkout_domain::testing::contract`)
//! against the three processors: the sandbox, the Stripe adapter over the Stripe-like
//! stand-in, and the Stripe adapter in localstripe's dialect (`testing::localstripe`) over
//! localstripe (needs `scripts/localstripe.sh` to have run once, or `LOCALSTRIPE_BIN`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // helpers outside #[test] fns

mod support;

use std::sync::Arc;
use std::time::Duration;

use checkout_domain::testing::contract::processor::{Cards, Processor};
use checkout_processor::{StripeConfig, StripeProcessor};

/// The settings of a Stripe-compatible server at `base_url`.
fn config(base_url: url::Url) -> StripeConfig {
    StripeConfig {
        base_url,
        api_key: "sk_test_hosted_checkout".into(),
        timeout: Duration::from_secs(10),
    }
}

mod sandbox {
    use super::*;
    use checkout_processor::SandboxProcessor;

    fn fresh() -> ((), Processor, Cards) {
        ((), Arc::new(SandboxProcessor::new()), Cards::STRIPE)
    }

    checkout_domain::card_processor_contract!(fresh());
}

mod stand_in {
    use super::*;
    use checkout_processor::testing::fake_stripe::{FakeStripe, FakeStripeConfig};

    async fn fresh() -> (FakeStripe, Processor, Cards) {
        let fake = FakeStripe::start(FakeStripeConfig::default()).await;
        let processor = Arc::new(StripeProcessor::new(config(fake.base_url.clone())).unwrap());
        (fake, processor, Cards::STRIPE)
    }

    checkout_domain::card_processor_contract!(fresh().await);
}

mod localstripe {
    use super::*;
    use crate::support::localstripe::Localstripe;
    use checkout_processor::testing::localstripe::LocalstripeProcessor;

    /// localstripe declines `4000000000000002` only for a card attached to a customer;
    /// `4000000000000341` is declined at charge time, as Stripe does.
    const CARDS: Cards = Cards {
        declined: "4000000000000341",
        ..Cards::STRIPE
    };

    fn fresh() -> (Localstripe, Processor, Cards) {
        let localstripe = Localstripe::start();
        let processor =
            Arc::new(LocalstripeProcessor::new(config(localstripe.base_url.clone())).unwrap());
        (localstripe, processor, CARDS)
    }

    // Not run here, for reasons of localstripe's own (1.15), each covered by the stand-in:
    // it ignores `Idempotency-Key`, so a replayed authorisation or refund is a second one;
    // it has no card that authorises without capture and reports no `amount_received`.
    checkout_domain::card_processor_contract!(fresh();
        tokenize_gives_a_reference_without_card_data,
        an_approved_card_is_approved_and_a_read_reports_it,
        a_declined_card_is_declined,
        a_cancelled_challenge_is_confirmed_cancelled_every_time,
        cancelling_a_captured_payment_answers_what_it_holds,
    );
}
