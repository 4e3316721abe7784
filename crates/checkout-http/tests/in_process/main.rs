//! The HTTP crate tested in process: the real application (`checkout_http::build_app`) over
//! the domain's in-memory adapters, called through `actix_web::test`, with `insta` snapshots
//! of every ProblemDetails shape, the OpenAPI document and every page state in Spanish and
//! English. The snapshots live in `tests/snapshots/`; a change to an error body or a page is a
//! diff to review (`cargo insta review`, or `INSTA_UPDATE=always` then `git diff`). A missing
//! or changed snapshot fails the test; `./scripts/test.sh` sets `INSTA_UPDATE=no` so that a
//! run never writes one.

#![allow(clippy::expect_used, clippy::unwrap_used)] // Test code: a failure should panic.

mod contract;
mod openapi;
mod pages;
mod problems;
mod qr;
mod routes;
mod support;
