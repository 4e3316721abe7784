//! The receipt's words: its subject, a plain-text part and an HTML part, in the receipt's
//! language. The card is its brand and last four digits; the merchant's texts are escaped in
//! the HTML part.

use checkout_domain::receipts::Receipt;
use checkout_domain::values::Culture;
use rust_decimal::Decimal;
use time::OffsetDateTime;

/// A receipt in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Composed {
    /// The subject line.
    pub subject: String,
    /// The plain-text part.
    pub text: String,
    /// The HTML part.
    pub html: String,
}

/// The words of one language.
struct Words {
    lang: &'static str,
    subject: &'static str,
    heading: &'static str,
    intro: &'static str,
    paid_at: &'static str,
    merchant: &'static str,
    description: &'static str,
    amount: &'static str,
    card: &'static str,
    ending: &'static str,
    transaction: &'static str,
    payment_id: &'static str,
    quote: &'static str,
    no_reply: &'static str,
    decimal: char,
    group: char,
}

const ES: Words = Words {
    lang: "es",
    subject: "Recibo de su pago a",
    heading: "Pago aprobado",
    intro: "Su pago fue aprobado. Guarde este recibo.",
    paid_at: "Fecha y hora",
    merchant: "Comercio",
    description: "Descripción",
    amount: "Monto",
    card: "Tarjeta",
    ending: "terminada en",
    transaction: "Número de transacción",
    payment_id: "Identificador del pago",
    quote: "Si tiene preguntas sobre este pago, contacte al comercio e indique el número de transacción y el identificador del pago.",
    no_reply: "Este mensaje se envió automáticamente; no lo responda.",
    decimal: ',',
    group: '.',
};

const EN: Words = Words {
    lang: "en",
    subject: "Receipt for your payment to",
    heading: "Payment approved",
    intro: "Your payment was approved. Keep this receipt.",
    paid_at: "Date and time",
    merchant: "Merchant",
    description: "Description",
    amount: "Amount",
    card: "Card",
    ending: "ending in",
    transaction: "Transaction number",
    payment_id: "Payment ID",
    quote: "If you have a question about this payment, contact the merchant and quote the transaction number and the payment ID.",
    no_reply: "This message was sent automatically; please do not reply to it.",
    decimal: '.',
    group: ',',
};

fn words(culture: Culture) -> &'static Words {
    match culture {
        Culture::Es => &ES,
        Culture::En => &EN,
    }
}

/// `value` at `minor_units` decimals with the language's separators, then the ISO code:
/// `15.000,00 CRC`, `15,000.00 CRC`. Spanish groups from five integer digits on (CLDR's
/// minimum grouping for `es`, as the pages do).
fn amount(value: Decimal, minor_units: u32, code: &str, w: &Words) -> String {
    let mut v = value;
    v.rescale(minor_units);
    let plain = v.abs().to_string();
    let (int, frac) = plain.split_once('.').unwrap_or((&plain, ""));
    let grouped = w.lang == "en" || int.len() >= 5;
    let mut out = String::new();
    if v.is_sign_negative() && !v.is_zero() {
        out.push('-');
    }
    for (i, digit) in int.chars().enumerate() {
        let left = int.len() - i;
        if grouped && i > 0 && left % 3 == 0 {
            out.push(w.group);
        }
        out.push(digit);
    }
    if !frac.is_empty() {
        out.push(w.decimal);
        out.push_str(frac);
    }
    format!("{out} {code}")
}

/// `2026-11-28 14:05 UTC`: the same in both languages, never misread.
fn utc(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{}-{:02}-{:02} {:02}:{:02} UTC",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute()
    )
}

/// `text` safe inside HTML text and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The receipt in its language.
pub fn compose(receipt: &Receipt) -> Composed {
    let w = words(receipt.culture);
    let card = format!(
        "{} {} {}",
        receipt.card_brand.display_name().unwrap_or(w.card),
        w.ending,
        receipt.card_last4
    );
    let mut rows: Vec<(&str, String)> = vec![
        (w.paid_at, utc(receipt.paid_at)),
        (w.merchant, receipt.merchant.clone()),
    ];
    if let Some(description) = &receipt.description {
        rows.push((w.description, description.clone()));
    }
    rows.extend([
        (
            w.amount,
            amount(
                receipt.amount,
                receipt.currency.minor_units(),
                receipt.currency.code(),
                w,
            ),
        ),
        (w.card, card),
        (w.transaction, receipt.internal_reference.clone()),
        (w.payment_id, receipt.session_id.to_string()),
    ]);

    let mut text = format!("{}\n\n{}\n\n", w.heading, w.intro);
    for (label, value) in &rows {
        text.push_str(&format!("{label}: {value}\n"));
    }
    text.push_str(&format!("\n{}\n\n{}\n", w.quote, w.no_reply));

    let mut html = format!(
        "<!doctype html>\n<html lang=\"{}\">\n<head><meta charset=\"utf-8\"><title>{}</title></head>\n\
         <body style=\"font-family:sans-serif;color:#000;background:#fff\">\n<h1>{}</h1>\n<p>{}</p>\n<table>\n",
        w.lang,
        escape(w.heading),
        escape(w.heading),
        escape(w.intro)
    );
    for (label, value) in &rows {
        html.push_str(&format!(
            "<tr><th scope=\"row\" style=\"text-align:left;padding-right:1em\">{}</th><td>{}</td></tr>\n",
            escape(label),
            escape(value)
        ));
    }
    html.push_str(&format!(
        "</table>\n<p>{}</p>\n<p>{}</p>\n</body>\n</html>\n",
        escape(w.quote),
        escape(w.no_reply)
    ));

    Composed {
        subject: format!("{} {}", w.subject, receipt.merchant),
        text,
        html,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::str::FromStr;

    use checkout_domain::card::CardBrand;
    use checkout_domain::values::{Currency, SessionId, TerminalNumber};
    use time::macros::datetime;

    use super::*;

    fn receipt(culture: Culture) -> Receipt {
        Receipt {
            session_id: SessionId::from_str("3f0c1f0e-8a5b-4b7e-9a3c-2d1e0f9b8c7a").unwrap(),
            terminal: TerminalNumber::parse("T-1").unwrap(),
            to: "ana@example.com".into(),
            culture,
            merchant: "Café <Sol> & Luna".into(),
            description: Some("Factura 42".into()),
            amount: Decimal::from_str("15000").unwrap(),
            currency: Currency::parse("CRC").unwrap(),
            card_brand: CardBrand::Visa,
            card_last4: "4242".into(),
            internal_reference: "INT-123".into(),
            paid_at: datetime!(2026-11-28 09:05 -06:00),
        }
    }

    #[test]
    fn a_spanish_receipt_says_everything_in_spanish_in_both_parts() {
        let mail = compose(&receipt(Culture::Es));
        assert_eq!(mail.subject, "Recibo de su pago a Café <Sol> & Luna");
        for part in [&mail.text, &mail.html] {
            for shown in [
                "Pago aprobado",
                "2026-11-28 15:05 UTC",
                "Factura 42",
                "15.000,00 CRC",
                "Visa terminada en 4242",
                "INT-123",
                "3f0c1f0e-8a5b-4b7e-9a3c-2d1e0f9b8c7a",
            ] {
                assert!(part.contains(shown), "{shown} in {part}");
            }
        }
        assert!(mail.text.contains("Comercio: Café <Sol> & Luna"));
        assert!(mail.html.contains("Café &lt;Sol&gt; &amp; Luna"));
        assert!(!mail.html.contains("<Sol>"));
        assert!(mail.html.contains("<html lang=\"es\">"));
    }

    #[test]
    fn an_english_receipt_groups_and_names_the_card_in_english() {
        let mut r = receipt(Culture::En);
        r.card_brand = CardBrand::Other;
        r.amount = Decimal::from_str("1234.5").unwrap();
        r.currency = Currency::parse("USD").unwrap();
        r.description = None;
        let mail = compose(&r);
        assert!(mail.subject.starts_with("Receipt for your payment to"));
        for part in [&mail.text, &mail.html] {
            assert!(part.contains("1,234.50 USD"), "{part}");
            assert!(part.contains("Card ending in 4242"), "{part}");
            assert!(!part.contains("Description"), "{part}");
        }
        assert_eq!(
            amount(Decimal::from_str("1234.5").unwrap(), 2, "USD", &ES),
            "1234,50 USD"
        );
        assert_eq!(
            amount(Decimal::from_str("1500").unwrap(), 0, "JPY", &EN),
            "1,500 JPY"
        );
    }
}
