//! What the service knows about its past, below the admin API and the command line that both
//! use it: where a zone's log is read from ([`log_source`]: a JSONL file, the redb store, the
//! Redis stream), replaying it from a snapshot and comparing the result with what was recorded
//! ([`replay`]), a what-if that replays a window with a change ([`whatif`]), and the scorecard
//! of a simulated world's run ([`scorecard`]), with the progress of the long ones on a
//! terminal ([`progress`]). Errors are [`error::HistoryError`].

pub mod error;
pub mod log_source;
pub mod progress;
pub mod replay;
pub mod scorecard;
pub mod whatif;
