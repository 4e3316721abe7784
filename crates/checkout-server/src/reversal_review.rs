//! Operator commands for refunds left for review (`checkout reversals ...`).
//!
//! Reconciliation gives a refund up when its processor answer was lost and the processor's
//! idempotency key lifetime passed before the service learnt the refund's processor id: a
//! replay then could refund anew. The refund stays Unknown, its amount reserved, and waits for
//! an operator:
//!
//! - `checkout reversals review [--terminal T]` lists them (refund id, session, terminal,
//!   kind, amount, processor id, state, age, last error; never a secret or a card number);
//! - `checkout reversals recheck <refund-id> --processor-id <re_...>` puts one back into
//!   reconciliation with the processor's id of the refund (found at the processor: its
//!   metadata `refund` is the refund id listed here). The next sweep reads that refund at the
//!   processor and records what the processor says; this command never marks money as moved.

use std::io::Write;

use anyhow::bail;
use checkout_domain::values::{Currency, RefundId, TerminalNumber};
use checkout_postgres::{PgStore, Recheck};
use time::OffsetDateTime;
use uuid::Uuid;

/// How many refunds `review` lists at most.
const REVIEW_LIMIT: i64 = 500;

/// The longest processor id accepted.
const MAX_PROCESSOR_ID: usize = 255;

/// A `checkout reversals ...` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReversalCommand {
    /// List the refunds left for review, of one terminal when given.
    Review {
        /// The terminal, when given.
        terminal: Option<TerminalNumber>,
    },
    /// Put a refund left for review back into reconciliation, with its processor id.
    Recheck {
        /// The refund.
        id: RefundId,
        /// The processor's id of the refund.
        processor_id: String,
    },
}

/// Parses the words after `reversals`.
pub fn parse(words: &[&str]) -> Result<ReversalCommand, String> {
    Ok(match words {
        ["review"] => ReversalCommand::Review { terminal: None },
        ["review", "--terminal", terminal] => ReversalCommand::Review {
            terminal: Some(
                TerminalNumber::parse(terminal).map_err(|e| format!("terminal number {e}"))?,
            ),
        },
        ["recheck", id, "--processor-id", processor_id] => ReversalCommand::Recheck {
            id: Uuid::parse_str(id)
                .map(RefundId::from_uuid)
                .map_err(|_| format!("{id:?} is not a refund id"))?,
            processor_id: processor_id_of(processor_id)?,
        },
        ["recheck", _] => {
            return Err(
                "recheck needs --processor-id: the processor's id of the refund (its \
                 metadata `refund` is the refund id); without it the only way to ask the \
                 processor is a replay, which after its key lifetime could refund anew"
                    .to_owned(),
            )
        }
        _ => {
            return Err(format!(
                "unknown command: reversals {} (reversals review [--terminal T] | reversals \
                 recheck <refund-id> --processor-id <id>)",
                words.join(" ")
            ))
        }
    })
}

/// `s` when it looks like a processor id: 1 to 255 ASCII letters, digits and underscores.
fn processor_id_of(s: &str) -> Result<String, String> {
    let fits = !s.is_empty()
        && s.len() <= MAX_PROCESSOR_ID
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if fits {
        Ok(s.to_owned())
    } else {
        Err("--processor-id must be 1 to 255 letters, digits or underscores".to_owned())
    }
}

/// `d` as days, hours and minutes (`2d 3h 4m`).
fn age(d: time::Duration) -> String {
    let minutes = d.whole_minutes().max(0);
    let (days, hours, minutes) = (minutes / 1440, minutes / 60 % 24, minutes % 60);
    if days > 0 {
        format!("{days}d {hours}h {minutes}m")
    } else {
        format!("{hours}h {minutes}m")
    }
}

/// Runs `command` against `store`, writing to `out`.
pub async fn run(
    store: &PgStore,
    command: ReversalCommand,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let now = OffsetDateTime::now_utc();
    match command {
        ReversalCommand::Review { terminal } => {
            let listed = store
                .refunds_for_review(terminal.as_ref(), REVIEW_LIMIT)
                .await?;
            writeln!(
                out,
                "refund\tsession\tterminal\tkind\tamount\tprocessor_id\tstate\tage\tlast_error"
            )?;
            for r in &listed {
                let refund = &r.refund;
                // At the currency's scale (the column keeps four places).
                let mut amount = refund.amount;
                if let Ok(currency) = Currency::parse(&r.currency) {
                    amount.rescale(currency.minor_units());
                }
                writeln!(
                    out,
                    "{}\t{}\t{}\trefund\t{} {}\t{}\t{}\t{}\t{}",
                    refund.id,
                    refund.session_id,
                    r.terminal,
                    amount,
                    r.currency,
                    refund.processor_reference.as_deref().unwrap_or("-"),
                    refund.state.name(),
                    age(now - refund.created_at),
                    refund.svc_code.map_or("-", |c| c.code()),
                )?;
            }
            writeln!(out, "{} refund(s) left for review", listed.len())?;
        }
        ReversalCommand::Recheck { id, processor_id } => {
            match store.recheck_refund(id, &processor_id, now).await? {
                Recheck::Queued => writeln!(
                    out,
                    "refund {id} queued: the next reconciliation sweep reads {processor_id} at \
                     the processor and records what it says"
                )?,
                Recheck::NotForReview => bail!(
                    "no refund {id} is left for review (unknown, settled, still being checked, \
                     or it has a processor id already)"
                ),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_commands_and_refuses_bad_input() {
        assert_eq!(
            parse(&["review"]),
            Ok(ReversalCommand::Review { terminal: None })
        );
        assert_eq!(
            parse(&["review", "--terminal", "T-9"]),
            Ok(ReversalCommand::Review {
                terminal: Some(TerminalNumber::parse("T-9").unwrap())
            })
        );
        let id = "6f1c2b1e-8f0a-4c39-9d43-1f1f2b3c4d5e";
        assert_eq!(
            parse(&["recheck", id, "--processor-id", "re_123"]),
            Ok(ReversalCommand::Recheck {
                id: RefundId::from_uuid(Uuid::parse_str(id).unwrap()),
                processor_id: "re_123".to_owned(),
            })
        );
        assert!(parse(&["recheck", id])
            .unwrap_err()
            .contains("--processor-id"));
        assert!(parse(&["recheck", "nope", "--processor-id", "re_1"]).is_err());
        for bad in ["", "re 1", "re_1;drop", "ré_1"] {
            assert!(
                parse(&["recheck", id, "--processor-id", bad]).is_err(),
                "{bad:?}"
            );
        }
        assert!(parse(&["recheck", id, "--processor-id", &"a".repeat(256)]).is_err());
        assert!(parse(&["review", "--terminal", "bad number!"]).is_err());
        assert!(parse(&["purge"]).is_err());
    }

    #[test]
    fn ages_read_in_days_hours_and_minutes() {
        assert_eq!(age(time::Duration::minutes(59)), "0h 59m");
        assert_eq!(
            age(time::Duration::hours(26) + time::Duration::minutes(3)),
            "1d 2h 3m"
        );
        assert_eq!(age(time::Duration::seconds(-5)), "0h 0m");
    }
}
