//! The JSON API's route table: each route is declared once, by its handler's
//! `#[utoipa::path]` (method and path), and listed once in `api_routes!`. Both the mounting
//! ([`mount`]) and the OpenAPI document ([`document`]) derive from that list, so a route can
//! be neither mounted undocumented nor documented unmounted.
//!
//! This module is the root of the API's modules: it names the handlers (`crate::api`), which
//! name the shared documentation pieces (`crate::openapi`), which name no handler.

use std::collections::BTreeMap;

use actix_web::http::Method;
use actix_web::{web, Route};
use utoipa::openapi::path::{Operation, PathItem};
use utoipa::OpenApi;

/// Lists the handlers of the JSON API once: derives [`RouteDoc`] (their operations) and
/// [`handlers`] (each operation id with its handler), from which [`mount`] and [`document`]
/// are made.
macro_rules! api_routes {
    ($($module:ident :: $handler:ident),* $(,)?) => {
        /// The operations of the route table, as utoipa collects them (with the schemas
        /// their bodies name).
        #[derive(OpenApi)]
        #[openapi(paths($(crate::api::$module::$handler),*))]
        pub struct RouteDoc;

        /// Each handler of the route table, by its operation id (its function's name, which
        /// is what `#[utoipa::path]` names the operation).
        fn handlers() -> Vec<(&'static str, Route)> {
            vec![$((stringify!($handler), web::route().to(crate::api::$module::$handler))),*]
        }
    };
}

api_routes![
    token::issue_token,
    start_payment::start_payment,
    payment_link::generate_payment_link,
    by_reference::payments_by_reference,
    status::payment_status,
    qr::payment_link_qr,
    cancel::cancel_payment,
    capture::capture_payment,
    capture::void_payment,
    refunds::create_refund,
    refunds::list_refunds,
    events::list_events,
    events::redeliver_event,
    webhook_endpoints::create_endpoint,
    webhook_endpoints::list_endpoints,
    webhook_endpoints::delete_endpoint,
    webhook_endpoints::rotate_secret,
    webhook_endpoints::enable_endpoint,
    webhook_endpoints::list_deliveries,
    processor_events::receive_processor_event,
    jwks::jwks,
    sandbox::sandbox_pay,
    sandbox::sandbox_challenge,
    sandbox::sandbox_expire,
    sandbox::sandbox_settle,
];

/// The tag of the sandbox's developer routes: documented always, mounted only in a sandbox
/// ([`mount_for`]).
pub const SANDBOX_TAG: &str = "Sandbox";

/// Whether a documented operation is one of the sandbox's developer routes.
fn is_sandbox_only(operation: &Operation) -> bool {
    operation
        .tags
        .as_ref()
        .is_some_and(|tags| tags.iter().any(|t| t == SANDBOX_TAG))
}

/// The operations of a path item with their methods, in the order an `Allow` header lists
/// them.
pub fn operations(item: &PathItem) -> Vec<(Method, &Operation)> {
    [
        (Method::GET, &item.get),
        (Method::POST, &item.post),
        (Method::PUT, &item.put),
        (Method::PATCH, &item.patch),
        (Method::DELETE, &item.delete),
        (Method::HEAD, &item.head),
        (Method::OPTIONS, &item.options),
        (Method::TRACE, &item.trace),
    ]
    .into_iter()
    .filter_map(|(method, operation)| operation.as_ref().map(|o| (method, o)))
    .collect()
}

/// Each documented path with its methods, in the document's order.
pub fn documented_routes() -> Vec<(String, Vec<Method>)> {
    RouteDoc::openapi()
        .paths
        .paths
        .iter()
        .map(|(path, item)| {
            let methods = operations(item).into_iter().map(|(m, _)| m).collect();
            (path.clone(), methods)
        })
        .collect()
}

/// Mounts every route of the table, the sandbox's developer routes included (see
/// [`mount_for`]).
pub fn mount(cfg: &mut web::ServiceConfig) {
    mount_for(true)(cfg);
}

/// Mounts every route of the table, at the path and method its `#[utoipa::path]` documents;
/// any other method on the path is a 405 whose `Allow` names the documented ones. The
/// operations tagged [`SANDBOX_TAG`] are mounted only with `sandbox` (in production their
/// paths are unknown addresses: 404).
///
/// # Panics
///
/// When a documented operation has no handler in the table, or a handler no operation (both
/// come from one list, so this is a programming error seen at start-up and by the tests).
pub fn mount_for(sandbox: bool) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| mount_routes(cfg, sandbox)
}

fn mount_routes(cfg: &mut web::ServiceConfig, sandbox: bool) {
    let mut handlers: BTreeMap<&'static str, Route> = handlers().into_iter().collect();
    for (path, item) in RouteDoc::openapi().paths.paths {
        let ops = operations(&item);
        if !sandbox && ops.iter().all(|(_, o)| is_sandbox_only(o)) {
            for (_, operation) in ops {
                handlers.remove(operation.operation_id.as_deref().unwrap_or_default());
            }
            continue;
        }
        let mut resource = web::resource(path.as_str());
        let mut allow = Vec::new();
        for (method, operation) in ops {
            let id = operation.operation_id.as_deref().unwrap_or_default();
            let Some(route) = handlers.remove(id) else {
                panic!("{method} {path}: operation `{id}` has no handler in the route table");
            };
            resource = resource.route(route.method(method.clone()));
            allow.push(method.to_string());
        }
        let allow = allow.join(", ");
        resource =
            resource.default_service(web::to(move || crate::method_not_allowed(allow.clone())));
        cfg.service(resource);
    }
    if let Some(id) = handlers.keys().next() {
        panic!("handler `{id}` of the route table documents no operation");
    }
}

/// The OpenAPI document served at `/openapi.json`: the route table's operations in the
/// document [`crate::openapi::document`] completes (servers from `public_base_url`).
pub fn document(public_base_url: Option<&str>) -> serde_json::Value {
    crate::openapi::document(RouteDoc::openapi(), public_base_url)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every handler of the table is one documented operation and every documented
    /// operation one handler (mounting panics otherwise).
    #[test]
    fn each_handler_is_one_documented_operation() {
        let ids: Vec<&str> = handlers().into_iter().map(|(id, _)| id).collect();
        let doc = RouteDoc::openapi();
        let mut documented: Vec<String> = doc
            .paths
            .paths
            .values()
            .flat_map(|item| {
                operations(item)
                    .into_iter()
                    .map(|(_, o)| o.operation_id.clone().unwrap_or_default())
                    .collect::<Vec<_>>()
            })
            .collect();
        documented.sort();
        let mut listed: Vec<String> = ids.iter().map(|id| (*id).to_owned()).collect();
        listed.sort();
        assert_eq!(documented, listed);
        let mut unique = listed.clone();
        unique.dedup();
        assert_eq!(unique, listed, "two handlers share an operation id");
    }
}
