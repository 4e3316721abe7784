//! Shared support for the server's integration tests: the real `checkout` binary started as a
//! child process on a free port, over its own migrated Postgres database, and a merchant-side
//! HTTP client.

#![allow(dead_code)]

pub mod server;

pub use server::{Mode, TestServer};
