//! Log setup for the commands that run zones: `tracing` to stderr, as text or JSON
//! (`--log-format json`), filtered by `RUST_LOG` (default `warn`).

use tracing_subscriber::EnvFilter;

use crate::cli::error::CommandError;

/// Default filter when `RUST_LOG` is unset.
pub const DEFAULT_LOG_FILTER: &str = "warn";

/// Installs the global subscriber; `format` is `text` or `json`.
pub fn init(format: &str) -> Result<(), CommandError> {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_LOG_FILTER));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let result = match format {
        "text" => builder.try_init(),
        "json" => builder.json().try_init(),
        other => {
            return Err(CommandError::BadInput(format!(
                "--log-format: expected `text` or `json`, got `{other}`"
            )));
        }
    };
    // Already installed (a second command in one process): keep the first.
    let _ = result;
    Ok(())
}
