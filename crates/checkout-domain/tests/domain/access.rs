//! Tokens, and the terminals they are provisioned for.

mod authentication;
mod terminal_provisioned;
