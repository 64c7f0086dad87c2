//! The one error type of the CLI's commands, into which the layers below report theirs: its
//! variant decides the process's exit code (2: the input was refused; 1: something around it
//! failed). A layer's typed error is carried as it is to the binary's edge (`#[from]`, so a
//! command says `?`), which prints it as the layer wrote it.

use geppetto_core::wire::WireError;

use crate::bus::BusError;
use crate::config::ConfigError;
use crate::content::ContentError;
use crate::drive::error::DriveError;
use crate::runtime::RuntimeError;
use crate::runtime::cluster::{ClusterError, StatusError};
use crate::zone::ZoneError;

/// Why a command failed; decides the exit code.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The input was refused (exit code 2).
    #[error("{0}")]
    BadInput(String),
    /// Something around the input failed: a file, a directory (exit code 1).
    #[error("{0}")]
    Environment(String),
    /// A comparison found a difference (exit code 1).
    #[error("{0}")]
    Different(String),
    /// The service config was refused (exit code 2).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Content — profiles, sets, archetypes, personas, a world file — was refused (exit code 2).
    #[error(transparent)]
    Content(#[from] ContentError),
    /// A zone could not be built over its content (exit code 2).
    #[error(transparent)]
    Zone(#[from] ZoneError),
    /// A request broke the wire contract (exit code 2).
    #[error(transparent)]
    Wire(#[from] WireError),
    /// The bus failed (exit code 1).
    #[error(transparent)]
    Bus(#[from] BusError),
    /// The async runtime could not start (exit code 1).
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The demo or the load generator failed (exit code 2 when it refused its input).
    #[error(transparent)]
    Drive(#[from] DriveError),
    /// The cluster settings were refused (exit code 2).
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    /// The cluster's status could not be read (exit code 1).
    #[error(transparent)]
    ClusterStatus(#[from] StatusError),
    /// A result could not be written as JSON (exit code 1).
    #[error("cannot write JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The operating system refused something the command needs (exit code 1).
    #[error("{what}: {source}")]
    Io {
        /// What the command was doing.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
}

impl CommandError {
    /// An IO failure while doing `what`, for `map_err`.
    pub fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| Self::Io { what, source }
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::BadInput(_)
            | Self::Config(_)
            | Self::Content(_)
            | Self::Zone(_)
            | Self::Wire(_)
            | Self::Cluster(_) => 2,
            Self::Drive(error) if error.is_refusal() => 2,
            Self::Environment(_)
            | Self::Different(_)
            | Self::Bus(_)
            | Self::Runtime(_)
            | Self::Drive(_)
            | Self::ClusterStatus(_)
            | Self::Json(_)
            | Self::Io { .. } => 1,
        }
    }
}

impl From<crate::runtime::starter::StartError> for CommandError {
    fn from(error: crate::runtime::starter::StartError) -> Self {
        use crate::runtime::starter::StartError;
        match error {
            StartError::Refused(reason) => Self::BadInput(reason),
            StartError::Unavailable(reason) => Self::Environment(reason),
        }
    }
}

impl From<crate::history::error::HistoryError> for CommandError {
    fn from(error: crate::history::error::HistoryError) -> Self {
        use crate::history::error::HistoryError;
        match error {
            HistoryError::Refused(reason) => Self::BadInput(reason),
            HistoryError::Unavailable(reason) => Self::Environment(reason),
            HistoryError::Different(reason) => Self::Different(reason),
        }
    }
}
