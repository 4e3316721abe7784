//! Shared support for the server's integration tests: the real `checkout` binary started as a
//! child process on a free port, over its own migrated Postgres database, a merchant-side
//! HTTP client, a stand-in merchant site, and a headless browser.

#![allow(dead_code, unused_imports)]

pub mod card_data;
pub mod cli;
pub mod merchant;
pub mod payer;
pub mod server;
pub mod smtp;
pub mod webdriver;

pub use server::{Mode, TestServer};
