//! The embedded store: snapshots and the world-event log in one redb file.
//!
//! [`file`] opens the file and hands out the [`snapshots`] store and the [`event_log`] that
//! share it; [`tables`] is the layout and transaction helper the three of them share.

pub mod event_log;
pub mod file;
pub mod snapshots;
mod tables;
