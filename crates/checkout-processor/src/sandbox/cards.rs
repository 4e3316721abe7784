//! The sandbox's test cards (Stripe's test-card convention) and what each one does.
//!
//! Every number passes the Luhn check, so the card form accepts it.

/// Approved and captured (Successful).
pub const APPROVED: &str = "4242424242424242";
/// Approved without capture (ApprovedTransaction).
pub const APPROVED_NOT_CAPTURED: &str = "4000000000000077";
/// Declined with reason `card_declined`.
pub const DECLINED: &str = "4000000000000002";
/// Declined with reason `insufficient_funds`.
pub const INSUFFICIENT_FUNDS: &str = "4000000000009995";
/// Needs a 3DS challenge, shown on the service's own page.
pub const CHALLENGE: &str = "4000002760003184";
/// Needs a 3DS challenge too (a second number, as in Stripe's list).
pub const CHALLENGE_OTHER: &str = "4000000000003220";
/// The processor cannot be reached when the card is handed to it; no authorisation is asked
/// for, so nothing is charged.
pub const COMMUNICATION_ERROR: &str = "4000000000000119";
/// The answer is lost (a communication error) although the charge went through.
pub const LOST_ANSWER: &str = "4000000000000184";
/// The processor refuses the request itself (a controlled error); nothing is charged.
pub const CONTROLLED_ERROR: &str = "4000000000000127";

/// Approved and captured; the processor refuses every refund of it (SVC_009).
pub const REFUND_REFUSED: &str = "4000000000005126";

/// The start of the sandbox's dead cards: every 16-digit number that begins with it (and
/// passes the Luhn check) is declined with reason `card_declined`, as a stolen or cancelled
/// card is, so that load and card-testing tests can use many distinct declining cards.
pub const DEAD_CARD_PREFIX: &str = "40000100";

/// Decline reason of a failed challenge.
pub const REASON_AUTHENTICATION_FAILED: &str = "authentication_failed";

/// What the sandbox does with a card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Behaviour {
    /// Approve; capture or not.
    Approve { captured: bool },
    /// Approve and capture; refuse every refund.
    ApproveRefundRefused,
    /// Decline with this reason.
    Decline(&'static str),
    /// Ask for a challenge.
    Challenge,
    /// Fail to take the card (tokenize); no authorisation, no charge.
    Unreachable,
    /// Charge, then fail to answer.
    LoseAnswer,
    /// Refuse the request.
    Refuse,
}

/// The behaviour of the card whose digits are `digits`.
pub(crate) fn behaviour_of(digits: &str) -> Behaviour {
    match digits {
        APPROVED_NOT_CAPTURED => Behaviour::Approve { captured: false },
        DECLINED => Behaviour::Decline("card_declined"),
        INSUFFICIENT_FUNDS => Behaviour::Decline("insufficient_funds"),
        CHALLENGE | CHALLENGE_OTHER => Behaviour::Challenge,
        COMMUNICATION_ERROR => Behaviour::Unreachable,
        LOST_ANSWER => Behaviour::LoseAnswer,
        CONTROLLED_ERROR => Behaviour::Refuse,
        REFUND_REFUSED => Behaviour::ApproveRefundRefused,
        d if d.len() == 16 && d.starts_with(DEAD_CARD_PREFIX) => {
            Behaviour::Decline("card_declined")
        }
        _ => Behaviour::Approve { captured: true },
    }
}

impl Behaviour {
    /// The tag this behaviour travels under in a sandbox payment-method reference.
    pub(crate) fn tag(self) -> &'static str {
        match self {
            Behaviour::Approve { captured: true } => "capture",
            Behaviour::Approve { captured: false } => "authorize",
            Behaviour::ApproveRefundRefused => "norefund",
            Behaviour::Decline("insufficient_funds") => "funds",
            Behaviour::Decline(_) => "decline",
            Behaviour::Challenge => "challenge",
            Behaviour::Unreachable => "unreachable",
            Behaviour::LoseAnswer => "lose",
            Behaviour::Refuse => "refuse",
        }
    }

    /// The behaviour of a tag written by [`Behaviour::tag`].
    pub(crate) fn of_tag(tag: &str) -> Option<Behaviour> {
        Some(match tag {
            "capture" => Behaviour::Approve { captured: true },
            "authorize" => Behaviour::Approve { captured: false },
            "norefund" => Behaviour::ApproveRefundRefused,
            "funds" => Behaviour::Decline("insufficient_funds"),
            "decline" => Behaviour::Decline("card_declined"),
            "challenge" => Behaviour::Challenge,
            "unreachable" => Behaviour::Unreachable,
            "lose" => Behaviour::LoseAnswer,
            "refuse" => Behaviour::Refuse,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use checkout_domain::card::CardNumber;

    use super::*;

    #[test]
    fn every_test_card_passes_the_card_form() {
        for number in [
            APPROVED,
            APPROVED_NOT_CAPTURED,
            DECLINED,
            INSUFFICIENT_FUNDS,
            CHALLENGE,
            CHALLENGE_OTHER,
            COMMUNICATION_ERROR,
            LOST_ANSWER,
            CONTROLLED_ERROR,
            REFUND_REFUSED,
        ] {
            assert!(CardNumber::parse(number).is_ok(), "{number} fails Luhn");
        }
    }

    #[test]
    fn unknown_cards_are_approved_and_captured() {
        assert_eq!(
            behaviour_of("5555555555554444"),
            Behaviour::Approve { captured: true }
        );
    }
}
