//! A webhook endpoint: where a terminal's events are posted, and which ones.

use std::fmt;

use time::OffsetDateTime;
use uuid::Uuid;

use super::circuit::EndpointHealth;
use crate::error::ValidationErrors;
use crate::events::EventType;
use crate::values::TerminalNumber;

/// Which event types an endpoint receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventFilter {
    /// Every type, including types added later (`["*"]` on the wire).
    All,
    /// These types only (at least one, no repeats, in [`EventType`] order).
    Only(Vec<EventType>),
}

impl EventFilter {
    /// The wire name of "every type".
    pub const WILDCARD: &'static str = "*";

    /// Parses the `events` member of a create request: absent, or a list holding `"*"`, is
    /// every type; otherwise known type names (a repeat counts once). Errors are added under
    /// the field `Events`.
    pub fn parse(names: Option<&[String]>, errors: &mut ValidationErrors) -> EventFilter {
        let Some(names) = names else {
            return EventFilter::All;
        };
        if names.iter().any(|name| name == Self::WILDCARD) {
            return EventFilter::All;
        }
        if names.is_empty() {
            errors.add(
                "Events",
                "Give at least one event type, or [\"*\"] (or leave it out) for every type.",
            );
            return EventFilter::All;
        }
        let mut kinds = Vec::with_capacity(names.len());
        for name in names {
            match EventType::parse(name) {
                Some(kind) if !kinds.contains(&kind) => kinds.push(kind),
                Some(_) => {}
                None => errors.add(
                    "Events",
                    format!(
                        "{name:?} is not an event type; the types are {}, or \"*\" for all.",
                        EventType::ALL.map(EventType::as_str).join(", ")
                    ),
                ),
            }
        }
        kinds.sort();
        EventFilter::Only(kinds)
    }

    /// The wire form: `["*"]` or the type names.
    pub fn names(&self) -> Vec<String> {
        match self {
            EventFilter::All => vec![Self::WILDCARD.to_owned()],
            EventFilter::Only(kinds) => kinds.iter().map(|k| k.as_str().to_owned()).collect(),
        }
    }

    /// True when the endpoint receives events of `kind`.
    pub fn admits(&self, kind: EventType) -> bool {
        match self {
            EventFilter::All => true,
            EventFilter::Only(kinds) => kinds.contains(&kind),
        }
    }
}

/// A registered endpoint (without its secret, which is only ever shown once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookEndpoint {
    /// Its id.
    pub id: Uuid,
    /// The terminal whose events it receives.
    pub terminal: TerminalNumber,
    /// Where deliveries are posted (checked by the URL policy when saved and when sending).
    pub url: String,
    /// Which events it receives.
    pub events: EventFilter,
    /// When it was registered.
    pub created_at: OffsetDateTime,
    /// How it has been answering: its circuit, and whether it is disabled.
    pub health: EndpointHealth,
}

/// A signing secret in clear (`whsec_` + base64), shown to the merchant once: at creation and
/// at rotation. Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct RevealedSecret(String);

impl RevealedSecret {
    /// Wraps the text of a secret.
    pub fn new(text: String) -> Self {
        RevealedSecret(text)
    }

    /// The secret's text, for the one answer that shows it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for RevealedSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RevealedSecret(***)")
    }
}

/// A signing secret sealed for storage: opaque bytes that only the secrets adapter opens.
#[derive(Clone, PartialEq, Eq)]
pub struct SealedSecret(pub Vec<u8>);

impl fmt::Debug for SealedSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SealedSecret({} bytes)", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(names: Option<&[&str]>) -> (EventFilter, ValidationErrors) {
        let owned: Option<Vec<String>> = names.map(|n| n.iter().map(|s| (*s).to_owned()).collect());
        let mut errors = ValidationErrors::new();
        let filter = EventFilter::parse(owned.as_deref(), &mut errors);
        (filter, errors)
    }

    #[test]
    fn absent_or_wildcard_is_every_type() {
        assert_eq!(parse(None).0, EventFilter::All);
        assert_eq!(parse(Some(&["*"])).0, EventFilter::All);
        assert_eq!(EventFilter::All.names(), vec!["*"]);
    }

    #[test]
    fn named_types_are_kept_in_order() {
        let (filter, errors) = parse(Some(&["payment.failed", "payment.succeeded"]));
        assert!(errors.is_empty());
        assert!(filter.admits(EventType::PaymentFailed));
        assert!(!filter.admits(EventType::PaymentExpired));
        assert_eq!(filter.names(), vec!["payment.succeeded", "payment.failed"]);
    }

    #[test]
    fn unknown_and_empty_types_name_events() {
        for names in [&["payment.refunded?"][..], &[]] {
            let (_, errors) = parse(Some(names));
            assert!(errors.messages("Events").is_some(), "{names:?}");
        }
    }

    #[test]
    fn a_repeated_type_counts_once() {
        let (filter, errors) = parse(Some(&["payment.failed", "payment.failed"]));
        assert!(errors.is_empty());
        assert_eq!(filter, EventFilter::Only(vec![EventType::PaymentFailed]));
    }

    #[test]
    fn a_wildcard_anywhere_is_every_type() {
        let (filter, errors) = parse(Some(&["payment.failed", "*"]));
        assert!(errors.is_empty());
        assert_eq!(filter, EventFilter::All);
    }

    #[test]
    fn secrets_do_not_show_in_debug() {
        let secret = RevealedSecret::new("whsec_c2VjcmV0".into());
        assert!(!format!("{secret:?}").contains("c2Vj"));
    }
}
