//! The one error type of the CLI's commands, into which the layers below report theirs: its
//! variant decides the process's exit code (2: the input was refused; 1: something around it
//! failed).

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
}

impl CommandError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::BadInput(_) => 2,
            Self::Environment(_) | Self::Different(_) => 1,
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
