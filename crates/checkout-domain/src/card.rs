//! Card data entered on the hosted card form. Passed through to the processor, never stored:
//! no type here prints its secret parts, not in `Debug`, not in `Display`.

use std::collections::BTreeMap;
use std::fmt;

use time::OffsetDateTime;

/// A card brand, told from the number's leading digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CardBrand {
    /// Visa (4).
    Visa,
    /// Mastercard (51–55, 2221–2720).
    Mastercard,
    /// American Express (34, 37).
    Amex,
    /// Discover (6011, 65, 644–649).
    Discover,
    /// Anything else.
    Other,
}

impl CardBrand {
    /// Every brand.
    pub const ALL: [CardBrand; 5] = [
        CardBrand::Visa,
        CardBrand::Mastercard,
        CardBrand::Amex,
        CardBrand::Discover,
        CardBrand::Other,
    ];
    /// A lower-case name, for storage and display.
    pub fn as_str(&self) -> &'static str {
        match self {
            CardBrand::Visa => "visa",
            CardBrand::Mastercard => "mastercard",
            CardBrand::Amex => "amex",
            CardBrand::Discover => "discover",
            CardBrand::Other => "other",
        }
    }

    /// The brand's own name, as a receipt shows it; `None` for [`CardBrand::Other`] (the
    /// receipt then says "card" in its language).
    pub fn display_name(&self) -> Option<&'static str> {
        match self {
            CardBrand::Visa => Some("Visa"),
            CardBrand::Mastercard => Some("Mastercard"),
            CardBrand::Amex => Some("American Express"),
            CardBrand::Discover => Some("Discover"),
            CardBrand::Other => None,
        }
    }

    /// Parses a name written by [`CardBrand::as_str`]; unknown names are `Other`.
    pub fn parse(s: &str) -> CardBrand {
        match s {
            "visa" => CardBrand::Visa,
            "mastercard" => CardBrand::Mastercard,
            "amex" => CardBrand::Amex,
            "discover" => CardBrand::Discover,
            _ => CardBrand::Other,
        }
    }

    fn of(digits: &str) -> CardBrand {
        let prefix = |n: usize| digits.get(..n).and_then(|p| p.parse::<u32>().ok());
        match (prefix(1), prefix(2), prefix(3), prefix(4)) {
            (Some(4), ..) => CardBrand::Visa,
            (_, Some(34 | 37), ..) => CardBrand::Amex,
            (_, Some(51..=55), ..) | (.., Some(2221..=2720)) => CardBrand::Mastercard,
            (_, Some(65), ..) | (_, _, Some(644..=649), _) | (.., Some(6011)) => {
                CardBrand::Discover
            }
            _ => CardBrand::Other,
        }
    }
}

/// A primary account number: 12 to 19 digits that pass the Luhn check.
/// Spaces and dashes typed by the payer are dropped.
#[derive(Clone, PartialEq, Eq)]
pub struct CardNumber(String);

impl CardNumber {
    /// Checks the digits and the Luhn sum.
    pub fn parse(s: &str) -> Result<Self, CardFieldError> {
        let digits: String = s.chars().filter(|c| *c != ' ' && *c != '-').collect();
        if digits.is_empty() {
            return Err(CardFieldError::Required);
        }
        if !(12..=19).contains(&digits.len()) || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(CardFieldError::Invalid);
        }
        if !luhn_ok(&digits) {
            return Err(CardFieldError::Invalid);
        }
        Ok(CardNumber(digits))
    }

    /// The digits, for the one call that sends them to the processor.
    pub fn expose_digits(&self) -> &str {
        &self.0
    }

    /// The last four digits (safe to store and show).
    pub fn last4(&self) -> &str {
        &self.0[self.0.len() - 4..]
    }

    /// The brand.
    pub fn brand(&self) -> CardBrand {
        CardBrand::of(&self.0)
    }
}

fn luhn_ok(digits: &str) -> bool {
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, b)| {
            let d = u32::from(b - b'0');
            if i % 2 == 1 {
                let dd = d * 2;
                if dd > 9 {
                    dd - 9
                } else {
                    dd
                }
            } else {
                d
            }
        })
        .sum();
    sum % 10 == 0
}

impl fmt::Debug for CardNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CardNumber(**** {})", self.last4())
    }
}

impl fmt::Display for CardNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "**** {}", self.last4())
    }
}

/// A card verification value: 3 digits, or 4 for American Express.
#[derive(Clone, PartialEq, Eq)]
pub struct Cvv(String);

impl Cvv {
    /// Checks the value for a card of `brand`.
    pub fn parse(s: &str, brand: CardBrand) -> Result<Self, CardFieldError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(CardFieldError::Required);
        }
        let len_ok = match brand {
            CardBrand::Amex => s.len() == 4,
            _ => s.len() == 3,
        };
        if len_ok && s.bytes().all(|b| b.is_ascii_digit()) {
            Ok(Cvv(s.to_owned()))
        } else {
            Err(CardFieldError::Invalid)
        }
    }

    /// The digits, for the one call that sends them to the processor.
    pub fn expose_digits(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Cvv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Cvv(***)")
    }
}

/// A card's expiry month, not in the past.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CardExpiry {
    month: u8,
    year: u16,
}

impl CardExpiry {
    /// Parses the ways payers write an expiry: `MM/YY`, `MM/YYYY`, `MM-YY`, `MM YY`, `MMYY`
    /// and `MMYYYY` (spaces around the parts allowed), and checks it is this month or later.
    pub fn parse(s: &str, now: OffsetDateTime) -> Result<Self, CardFieldError> {
        let trimmed = s.trim();
        if trimmed.is_empty() {
            return Err(CardFieldError::Required);
        }
        let (m, y) = split_expiry(trimmed).ok_or(CardFieldError::Invalid)?;
        let month: u8 = m.parse().map_err(|_| CardFieldError::Invalid)?;
        let year: u16 = match y.len() {
            2 => 2000 + y.parse::<u16>().map_err(|_| CardFieldError::Invalid)?,
            4 => y.parse().map_err(|_| CardFieldError::Invalid)?,
            _ => return Err(CardFieldError::Invalid),
        };
        if !y.bytes().all(|b| b.is_ascii_digit()) {
            return Err(CardFieldError::Invalid);
        }
        if !(1..=12).contains(&month) || !m.bytes().all(|b| b.is_ascii_digit()) {
            return Err(CardFieldError::Invalid);
        }
        let now_year = u16::try_from(now.year()).unwrap_or(u16::MAX);
        let now_month = u8::from(now.month());
        if (year, month) < (now_year, now_month) {
            return Err(CardFieldError::Expired);
        }
        if year > now_year + 20 {
            return Err(CardFieldError::Invalid);
        }
        Ok(CardExpiry { month, year })
    }

    /// The month, 1 to 12.
    pub fn month(&self) -> u8 {
        self.month
    }

    /// The four-digit year.
    pub fn year(&self) -> u16 {
        self.year
    }
}

/// The month and year parts of an expiry: around one `/`, `-` or run of spaces, or, for bare
/// digits, the first two and the rest (`1230`, `122030`).
fn split_expiry(s: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = s
        .split(|c: char| c == '/' || c == '-' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .collect();
    match parts.as_slice() {
        [m, y] if s.chars().filter(|c| *c == '/' || *c == '-').count() <= 1 => {
            Some(((*m).to_owned(), (*y).to_owned()))
        }
        [digits] if matches!(digits.len(), 4 | 6) && digits.bytes().all(|b| b.is_ascii_digit()) => {
            Some((digits[..2].to_owned(), digits[2..].to_owned()))
        }
        _ => None,
    }
}

impl CardExpiry {
    /// `MM/YY`, the form's own spelling (safe to show again: without the number, an expiry
    /// identifies no card).
    pub fn form_value(&self) -> String {
        format!("{:02}/{:02}", self.month, self.year % 100)
    }
}

impl fmt::Debug for CardExpiry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CardExpiry(**/**)")
    }
}

/// The card holder's name as typed: 1 to 100 characters, no control characters.
#[derive(Clone, PartialEq, Eq)]
pub struct CardholderName(String);

impl CardholderName {
    /// Trims and checks the name.
    pub fn parse(s: &str) -> Result<Self, CardFieldError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(CardFieldError::Required);
        }
        if s.chars().count() > 100 || s.chars().any(char::is_control) {
            return Err(CardFieldError::Invalid);
        }
        Ok(CardholderName(s.to_owned()))
    }

    /// The name, for the processor call.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for CardholderName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CardholderName(***)")
    }
}

/// A field of the card form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CardField {
    /// Cardholder name.
    CardholderName,
    /// Card number.
    CardNumber,
    /// Expiry.
    Expiry,
    /// Verification value.
    Cvv,
}

/// What is wrong with one field of the card form (the page words it in its language).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CardFieldError {
    /// Left empty.
    #[error("required")]
    Required,
    /// Not well formed (for the number: fails the Luhn check or has the wrong length).
    #[error("invalid")]
    Invalid,
    /// The expiry is in the past.
    #[error("expired")]
    Expired,
}

/// The card form exactly as submitted; checked into [`CardDetails`] by [`CardInput::validate`].
#[derive(Clone, Default)]
pub struct CardInput {
    /// Cardholder name.
    pub cardholder_name: String,
    /// Card number as typed.
    pub card_number: String,
    /// Expiry as typed (`MM/YY`).
    pub expiry: String,
    /// Verification value as typed.
    pub cvv: String,
}

impl fmt::Debug for CardInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CardInput(redacted)")
    }
}

/// A card that passed the form checks, ready for the processor.
#[derive(Debug, Clone)]
pub struct CardDetails {
    /// The holder's name.
    pub holder: CardholderName,
    /// The number.
    pub number: CardNumber,
    /// The expiry.
    pub expiry: CardExpiry,
    /// The verification value.
    pub cvv: Cvv,
}

impl CardInput {
    /// Checks every field at `now`; all failures are reported together.
    pub fn validate(
        &self,
        now: OffsetDateTime,
    ) -> Result<CardDetails, BTreeMap<CardField, CardFieldError>> {
        let mut errors = BTreeMap::new();
        let holder = CardholderName::parse(&self.cardholder_name)
            .map_err(|e| errors.insert(CardField::CardholderName, e));
        let number = CardNumber::parse(&self.card_number)
            .map_err(|e| errors.insert(CardField::CardNumber, e));
        let expiry =
            CardExpiry::parse(&self.expiry, now).map_err(|e| errors.insert(CardField::Expiry, e));
        let brand = number.as_ref().map_or(CardBrand::Other, CardNumber::brand);
        let cvv = Cvv::parse(&self.cvv, brand).map_err(|e| errors.insert(CardField::Cvv, e));
        match (holder, number, expiry, cvv) {
            (Ok(holder), Ok(number), Ok(expiry), Ok(cvv)) => Ok(CardDetails {
                holder,
                number,
                expiry,
                cvv,
            }),
            _ => Err(errors),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2026-01-15 12:00 UTC);

    #[test]
    fn an_expiry_is_read_in_every_spelling_payers_use() {
        for typed in [
            "12/30",
            "1230",
            "12 30",
            "12-30",
            "12/2030",
            "12 / 30",
            "122030",
            " 12-2030 ",
        ] {
            let expiry = CardExpiry::parse(typed, NOW);
            assert_eq!(
                expiry.map(|e| (e.month(), e.year())),
                Ok((12, 2030)),
                "{typed}"
            );
        }
    }

    #[test]
    fn a_malformed_expiry_is_still_refused() {
        for typed in [
            "123", "12345", "12/3", "12--30", "12/30/1", "1a30", "12/3a", "00/30",
        ] {
            assert_eq!(
                CardExpiry::parse(typed, NOW).map(|e| e.month()),
                Err(CardFieldError::Invalid),
                "{typed}"
            );
        }
        assert_eq!(
            CardExpiry::parse("0125", NOW).map(|e| e.month()),
            Err(CardFieldError::Expired)
        );
    }

    #[test]
    fn the_form_shows_an_expiry_as_mm_yy() {
        let expiry = CardExpiry::parse("3-2031", NOW).map(|e| e.form_value());
        assert_eq!(expiry.as_deref(), Ok("03/31"));
    }
}
