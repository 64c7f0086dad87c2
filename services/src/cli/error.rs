//! The one error type of the CLI's commands and of the runtime they start: its variant decides
//! the process's exit code (2: the input was refused; 1: something around it failed).

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
