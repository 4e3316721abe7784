//! Stripe's test card numbers, what each one does, and the checks Stripe makes on a card.

use std::time::{SystemTime, UNIX_EPOCH};

/// What a card does when a PaymentIntent is confirmed with it. The fake keeps this, never the
/// number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Behaviour {
    /// Charged (or authorised with manual capture).
    Approve,
    /// Authorised, never captured at confirmation (`4000000000000077` here).
    AuthoriseOnly,
    /// Declined with HTTP 402.
    Decline {
        code: &'static str,
        decline_code: &'static str,
        message: &'static str,
    },
    /// Needs 3D Secure on the processor's page.
    Challenge,
    /// A processor failure before any work: HTTP 500, nothing created.
    ProcessorError,
    /// Charged; its refunds fail.
    RefundFails,
}

const DECLINED: &str = "Your card was declined.";

/// The behaviour of `number` (digits only).
pub(super) fn behaviour(number: &str) -> Behaviour {
    let decline = |code, decline_code, message| Behaviour::Decline {
        code,
        decline_code,
        message,
    };
    match number {
        "4000000000000077" => Behaviour::AuthoriseOnly,
        "4000000000000002" | "4000000000000341" => {
            decline("card_declined", "generic_decline", DECLINED)
        }
        "4000000000009995" => decline(
            "card_declined",
            "insufficient_funds",
            "Your card has insufficient funds.",
        ),
        "4000000000009987" => decline("card_declined", "lost_card", DECLINED),
        "4000000000009979" => decline("card_declined", "stolen_card", DECLINED),
        "4000000000000069" => decline("expired_card", "expired_card", "Your card has expired."),
        "4000000000000127" => decline(
            "incorrect_cvc",
            "incorrect_cvc",
            "Your card's security code is incorrect.",
        ),
        "4000002760003184" | "4000000000003220" => Behaviour::Challenge,
        "4000000000000119" => Behaviour::ProcessorError,
        "4000000000005126" => Behaviour::RefundFails,
        _ => Behaviour::Approve,
    }
}

/// Whether `number` is 12 to 19 digits with a valid Luhn check digit.
pub(super) fn valid_number(number: &str) -> bool {
    let digits: Option<Vec<u32>> = number.chars().map(|c| c.to_digit(10)).collect();
    let Some(digits) = digits else {
        return false;
    };
    if !(12..=19).contains(&digits.len()) {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| match (i % 2 == 1, d * 2) {
            (true, doubled) if doubled > 9 => doubled - 9,
            (true, doubled) => doubled,
            (false, _) => d,
        })
        .sum();
    sum % 10 == 0
}

/// The card brand Stripe reports for `number`.
pub(super) fn brand(number: &str) -> &'static str {
    let prefix = |n: usize| number.get(..n).and_then(|p| p.parse::<u32>().ok());
    match (prefix(1), prefix(2), prefix(4)) {
        (Some(4), _, _) => "visa",
        (_, Some(51..=55), _) | (_, _, Some(2221..=2720)) => "mastercard",
        (_, Some(34 | 37), _) => "amex",
        (_, Some(65), _) | (_, _, Some(6011)) => "discover",
        (_, _, Some(3528..=3589)) => "jcb",
        (_, Some(36 | 38), _) => "diners",
        (_, Some(62), _) => "unionpay",
        _ => "unknown",
    }
}

/// Whether `cvc` is three or four digits.
pub(super) fn valid_cvc(cvc: &str) -> bool {
    (3..=4).contains(&cvc.len()) && cvc.chars().all(|c| c.is_ascii_digit())
}

/// The current (year, month), UTC.
pub(super) fn current_year_month() -> (i64, u32) {
    let days = unix_now().div_euclid(86_400);
    civil_from_days(days)
}

/// Seconds since the Unix epoch.
pub(super) fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The (year, month) of a day counted from 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, u32::try_from(month).unwrap_or(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_map_to_their_month() {
        assert_eq!(civil_from_days(0), (1970, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2)); // 2024-02-29
        assert_eq!(civil_from_days(19_783), (2024, 3));
    }

    #[test]
    fn luhn_and_brands() {
        assert!(valid_number("4242424242424242"));
        assert!(!valid_number("4242424242424241"));
        assert!(!valid_number("4242 4242"));
        assert_eq!(brand("5555555555554444"), "mastercard");
        assert_eq!(brand("378282246310005"), "amex");
    }
}
