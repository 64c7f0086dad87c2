//! What can go wrong reading the service's past: a log, a snapshot, a world file or a request
//! refused, the store or Redis behind them unavailable, or a replay that differs from what was
//! recorded. The command line turns each into its exit code; the admin API into its status.

/// Why reading the past failed.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The input was refused: a malformed log line, a missing snapshot, a bad change (what,
    /// where, why).
    #[error("{0}")]
    Refused(String),
    /// Something around the input failed: a file, a store, Redis.
    #[error("{0}")]
    Unavailable(String),
    /// A replay compared against a recorded stream found a difference (the first one).
    #[error("{0}")]
    Different(String),
}
