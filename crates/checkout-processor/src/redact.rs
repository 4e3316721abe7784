//! Scrubs text that came from a processor (or from a transport error) before it goes into an
//! error message: card numbers and the CVV must never be written anywhere.

/// The longest message kept, in characters.
const MAX_CHARS: usize = 300;

/// Replaces every digit group that could be a card number (12 or more digits, possibly split by
/// spaces or dashes) with `[redacted]`, every other digit run equal to one of `secrets` (the CVV)
/// with `***`, and cuts the text to a sensible length.
pub(crate) fn redact(text: &str, secrets: &[&str]) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        // A group: digits, with single spaces or dashes between them.
        let start = i;
        let mut end = i + 1;
        while end < chars.len() {
            if chars[end].is_ascii_digit() {
                end += 1;
            } else if matches!(chars[end], ' ' | '-')
                && chars.get(end + 1).is_some_and(char::is_ascii_digit)
            {
                end += 2;
            } else {
                break;
            }
        }
        let group: String = chars[start..end].iter().collect();
        let digits: String = group.chars().filter(char::is_ascii_digit).collect();
        if digits.len() >= 12 {
            out.push_str("[redacted]");
        } else {
            out.push_str(&redact_runs(&group, secrets));
        }
        i = end;
    }
    truncate(out)
}

/// Within a short group, replaces the pure digit runs equal to a secret.
fn redact_runs(group: &str, secrets: &[&str]) -> String {
    let is_secret = |run: &str| secrets.iter().any(|s| !s.is_empty() && run == *s);
    let mut out = String::with_capacity(group.len());
    let mut run = String::new();
    for c in group.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() {
            run.push(c);
            continue;
        }
        if is_secret(&run) {
            out.push_str("***");
        } else {
            out.push_str(&run);
        }
        run.clear();
        out.push(c);
    }
    out.pop(); // the sentinel
    out
}

fn truncate(text: String) -> String {
    if text.chars().count() <= MAX_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(MAX_CHARS).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn card_numbers_in_any_format_are_removed() {
        for text in [
            "bad card 4242424242424242 here",
            "bad card 4242 4242 4242 4242 here",
            "bad card 4242-4242-4242-4242 here",
            "bad card 378282246310005 here",
        ] {
            let clean = redact(text, &[]);
            assert_eq!(
                clean.chars().filter(char::is_ascii_digit).count(),
                0,
                "{clean}"
            );
            assert!(clean.starts_with("bad card [redacted]"), "{clean}");
        }
    }

    #[test]
    fn the_cvv_is_removed_but_other_numbers_stay() {
        let clean = redact(
            "cvc 737 refused, HTTP 400 after 500 ms, code 7370",
            &["737"],
        );
        assert_eq!(clean, "cvc *** refused, HTTP 400 after 500 ms, code 7370");
    }

    #[test]
    fn a_cvv_inside_a_short_group_is_removed() {
        assert_eq!(redact("values 12-737 x", &["737"]), "values 12-*** x");
    }

    #[test]
    fn long_text_is_cut() {
        let long = "x".repeat(1000);
        assert_eq!(redact(&long, &[]).chars().count(), 301);
    }
}
