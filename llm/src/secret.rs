//! Secrets (the LLM API key, and for the service the admin token and the Redis password) come
//! from a file or an environment variable named in config — never from the command line, never
//! from the config file itself — and never reach a log line, an error message or a `Debug`
//! dump. This is the workspace's one reader of secrets.

use std::fmt;
use std::path::{Path, PathBuf};

/// A secret value. `Debug` and `Display` never show it; [`Secret::expose`] is the one way out.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    #[must_use]
    pub fn new(value: String) -> Self {
        Self(value)
    }

    /// The value, for the one call that must send it.
    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether it is empty (no secret configured).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_empty() {
            "Secret(<none>)"
        } else {
            "Secret(<redacted>)"
        })
    }
}

/// A secret file that cannot be read. Names the file, never its content.
#[derive(Debug, thiserror::Error)]
#[error("secret file {}: cannot read: {source}", file.display())]
pub struct SecretError {
    /// The file.
    pub file: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

/// Reads a secret: the file's content (trailing newline trimmed) when `file` is set, else the
/// environment variable `env` (unset, empty or not Unicode ⇒ none). `None` when neither holds
/// one.
///
/// # Errors
/// A configured file that cannot be read.
pub fn read_secret(env: &str, file: Option<&Path>) -> Result<Option<Secret>, SecretError> {
    let value = match file {
        Some(file) => std::fs::read_to_string(file)
            .map_err(|source| SecretError {
                file: file.to_owned(),
                source,
            })?
            .trim_end_matches(['\n', '\r'])
            .to_owned(),
        None => std::env::var(env).unwrap_or_default(),
    };
    Ok((!value.is_empty()).then_some(Secret(value)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_never_prints() {
        let secret = Secret::new("hunter2".into());
        assert_eq!(format!("{secret:?}"), "Secret(<redacted>)");
        assert_eq!(format!("{:?}", Secret::default()), "Secret(<none>)");
        assert_eq!(secret.expose(), "hunter2");
    }

    #[test]
    fn a_file_wins_and_is_trimmed_an_unreadable_one_is_named() {
        let dir = std::env::temp_dir().join(format!("geppetto-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join("key");
        std::fs::write(&file, "from-file\n").expect("write");
        let read = read_secret("GEPPETTO_TEST_VARIABLE_THAT_IS_NEVER_SET", Some(&file))
            .expect("readable")
            .expect("present");
        assert_eq!(read.expose(), "from-file");
        let missing = dir.join("absent");
        let error = read_secret("X", Some(&missing)).expect_err("unreadable");
        assert!(error.to_string().contains("absent"), "{error}");
        assert!(
            read_secret("GEPPETTO_TEST_VARIABLE_THAT_IS_NEVER_SET", None)
                .expect("env")
                .is_none()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
