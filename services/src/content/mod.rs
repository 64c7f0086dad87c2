//! Content loading: the data files designers author under `config/` (world files, profiles,
//! reactive sets, archetypes, personas, the LLM seams' prompts and templates). The repository's files are embedded in the binary so a
//! fresh clone runs anywhere; a directory given at run time adds to or overrides them. Every
//! load error names the file, and where the format allows, the line and field.

pub mod affect;
pub mod archetypes;
pub mod llm_assets;
pub mod locate;
pub mod profiles;
pub mod sets;
pub mod world_file;

/// A content file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ContentError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid for its kind.
    #[error("{file}: {reason}")]
    Invalid {
        /// The file.
        file: String,
        /// What is wrong, with line and field where known.
        reason: String,
    },
}
