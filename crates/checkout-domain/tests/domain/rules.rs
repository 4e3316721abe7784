//! The model without ports: values, session rules, the state machine, the SVC table.

mod properties;
mod session_rules;
mod state_machine;
mod svc_table;
mod values;
