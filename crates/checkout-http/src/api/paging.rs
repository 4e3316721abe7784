//! The query of a paged list (`?after=<cursor>&limit=<n>`), read by hand so that every bad
//! query (a repeated parameter too) is a ProblemDetails naming the field: the events feed and
//! an endpoint's deliveries log read it the same way.

use std::str::FromStr;

use actix_web::HttpRequest;
use checkout_domain::ValidationErrors;

use crate::problem::ApiError;

/// Items per page when `limit` is not given.
pub(crate) const DEFAULT_LIMIT: u32 = 50;

/// A page's position and size, as asked.
pub(crate) struct PageQuery<C> {
    /// The cursor after which to read (`None`: from the start, or the newest).
    pub after: Option<C>,
    /// How many items, 1 to the list's maximum.
    pub limit: u32,
}

/// Reads `after` (a cursor of type `C`, empty as absent) and `limit` (1 to `max`, else
/// [`DEFAULT_LIMIT`]) from `req`'s query; a 400 naming `After`, `Limit` or `Query` otherwise.
pub(crate) fn page_query<C: FromStr>(
    req: &HttpRequest,
    max: u32,
) -> Result<PageQuery<C>, ApiError> {
    let mut errors = ValidationErrors::new();
    let pairs: Vec<(String, String)> = match serde_urlencoded::from_str(req.query_string()) {
        Ok(pairs) => pairs,
        Err(_) => {
            errors.add("Query", "The query string could not be read.");
            Vec::new()
        }
    };
    let after = match single(&pairs, "after", "After", &mut errors) {
        None | Some("") => None,
        Some(raw) => match raw.parse::<C>() {
            Ok(cursor) => Some(cursor),
            Err(_) => {
                errors.add("After", "Not a cursor this service handed out.");
                None
            }
        },
    };
    let limit = match single(&pairs, "limit", "Limit", &mut errors) {
        None => DEFAULT_LIMIT,
        Some(raw) => match raw.parse::<u32>() {
            Ok(n) if (1..=max).contains(&n) => n,
            _ => {
                errors.add("Limit", format!("Must be a whole number from 1 to {max}."));
                DEFAULT_LIMIT
            }
        },
    };
    errors
        .into_result(())
        .map_err(checkout_domain::CheckoutError::from)?;
    Ok(PageQuery { after, limit })
}

/// The value of the query parameter `name`: `None` when absent, or when it is given more than
/// once (then an error naming `field` is added).
fn single<'a>(
    pairs: &'a [(String, String)],
    name: &str,
    field: &str,
    errors: &mut ValidationErrors,
) -> Option<&'a str> {
    let mut values = pairs
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, v)| v.as_str());
    let first = values.next();
    if values.next().is_some() {
        errors.add(field, "Give it at most once.");
        return None;
    }
    first
}
