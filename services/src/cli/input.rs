//! What several commands read besides their arguments: a text file, the profile library (the
//! embedded profiles and a directory's), the embedded reactive sets, a service config — each
//! failure as the [`CommandError`] that decides the exit code.

use std::path::Path;

use super::error::CommandError;
use crate::config::{ServiceConfig, load_config};
use crate::content::profiles::ProfileLibrary;
use crate::content::sets::SetLibrary;

/// The text of the file at `path`.
pub fn read_file(path: &Path) -> Result<String, CommandError> {
    std::fs::read_to_string(path)
        .map_err(|e| CommandError::Environment(format!("{}: cannot read: {e}", path.display())))
}

/// The embedded profiles, and `dir`'s when given (same name overrides the embedded one).
pub fn profiles(dir: Option<&Path>) -> Result<ProfileLibrary, CommandError> {
    let library = match dir {
        Some(dir) => ProfileLibrary::embedded_and_dir(dir),
        None => ProfileLibrary::embedded(),
    };
    Ok(library?)
}

/// The embedded reactive sets.
pub fn sets() -> Result<SetLibrary, CommandError> {
    Ok(SetLibrary::embedded()?)
}

/// The service config at `path`.
pub fn config(path: &Path) -> Result<ServiceConfig, CommandError> {
    Ok(load_config(path)?)
}
