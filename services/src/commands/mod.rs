//! The CLI's subcommands, one module each, as functions from parsed arguments and input text to
//! output text, so tests can call them without a process.

pub mod affect;
pub mod decide;
pub mod replay;
pub mod sets;
pub mod simulate;
pub mod validate;
pub mod whatif;
pub mod world;

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
