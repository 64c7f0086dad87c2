//! Why a data file of the LLM layer cannot be used: the LLM config, the prompt templates and
//! the perception rules all report their parse, validation and read failures as an
//! [`AssetError`]. It sits apart from [`crate::assets`] and [`crate::config`] so that neither
//! has to import the other for it.

use std::path::PathBuf;

/// A data file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum AssetError {
    /// The text is not valid YAML for this file's shape.
    #[error("{what}: {message}")]
    Parse {
        /// Which file kind.
        what: &'static str,
        /// The parser's message, with the location.
        message: String,
    },
    /// The file parsed but a value cannot work.
    #[error("{what}: `{path}`: {reason}")]
    Invalid {
        /// Which file kind.
        what: &'static str,
        /// Where in the file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The file could not be read (only from `load_assets_from_dir`).
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}
