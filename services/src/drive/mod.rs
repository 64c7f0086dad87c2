//! Drives: the service run whole in one process for a purpose of its own — the demo's live
//! feed of the embedded village ([`demo`]) and the load generator's measurements ([`load`]) —
//! over the in-process bus or Redis ([`bus`]), with their own typed errors ([`error`]) and the
//! model's price and spend line they share ([`spend`]). The command line parses their options
//! and prints what they return.

pub mod bus;
pub mod demo;
pub mod error;
pub mod load;
pub mod spend;
