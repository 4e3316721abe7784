//! The parameters of one request (its form, or its query for a GET) and Stripe's checks of
//! their shape. Nested keys are Stripe's: `metadata[attempt]`, `card[number]`,
//! `payment_method_types[0]`.

use std::collections::BTreeMap;

use super::api::Reply;

pub(super) struct Params(Vec<(String, String)>);

impl Params {
    pub fn new(fields: Vec<(String, String)>) -> Params {
        Params(fields)
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The value of `name`, or Stripe's "missing required param".
    pub fn require(&self, name: &str) -> Result<&str, Reply> {
        self.get(name).ok_or_else(|| Reply::missing(name))
    }

    /// The fields `object[key]=value` as a map (an empty value unsets the key, as in Stripe).
    pub fn nested(&self, object: &str) -> BTreeMap<String, String> {
        self.0
            .iter()
            .filter_map(|(name, value)| {
                let key = name
                    .strip_prefix(object)?
                    .strip_prefix('[')?
                    .strip_suffix(']')?;
                (!value.is_empty()).then(|| (key.to_owned(), value.clone()))
            })
            .collect()
    }

    /// The values of the array `name` (`name[0]`, `name[1]`, `name[]`).
    pub fn list(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(n, _)| {
                n.strip_prefix(name)
                    .and_then(|rest| rest.strip_prefix('['))
                    .and_then(|rest| rest.strip_suffix(']'))
                    .is_some_and(|index| index.chars().all(|c| c.is_ascii_digit()))
            })
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// Refuses any parameter whose top-level name is not in `allowed`, as Stripe does.
    pub fn only(&self, allowed: &[&str]) -> Result<(), Reply> {
        match self
            .0
            .iter()
            .map(|(name, _)| name.split('[').next().unwrap_or_default())
            .find(|top| !allowed.contains(top))
        {
            Some(unknown) => Err(Reply::invalid(
                &format!("Received unknown parameter: {unknown}"),
                Some(unknown),
                Some("parameter_unknown"),
            )),
            None => Ok(()),
        }
    }

    /// The integer `name`, when given.
    pub fn integer(&self, name: &str) -> Result<Option<i64>, Reply> {
        self.get(name)
            .map(|text| {
                text.parse().map_err(|_| {
                    Reply::invalid(
                        &format!("Invalid integer: {text}"),
                        Some(name),
                        Some("parameter_invalid_integer"),
                    )
                })
            })
            .transpose()
    }

    /// The positive integer `name` (an amount), when given.
    pub fn positive(&self, name: &str) -> Result<Option<i64>, Reply> {
        match self.integer(name)? {
            Some(n) if n < 1 => Err(Reply::invalid(
                "This value must be greater than or equal to 1.",
                Some(name),
                Some("parameter_invalid_integer"),
            )),
            other => Ok(other),
        }
    }

    /// The boolean `name` (`true` or `false`), when given.
    pub fn boolean(&self, name: &str) -> Result<Option<bool>, Reply> {
        match self.get(name) {
            None => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(text) => Err(Reply::invalid(
                &format!("Invalid boolean: {text}"),
                Some(name),
                Some("parameter_invalid_boolean"),
            )),
        }
    }

    /// The value of `name`, when given, which must be one of `choices`.
    pub fn one_of(&self, name: &str, choices: &[&str]) -> Result<Option<&str>, Reply> {
        match self.get(name) {
            Some(value) if !choices.contains(&value) => Err(Reply::invalid(
                &format!("Invalid {name}: must be one of {}", choices.join(", ")),
                Some(name),
                None,
            )),
            other => Ok(other),
        }
    }
}
