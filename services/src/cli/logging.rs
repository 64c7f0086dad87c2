//! Log setup for the commands that run zones: `tracing` to stderr, as text or JSON
//! (`--log-format json`), filtered by `RUST_LOG` (default `warn`).
//!
//! Logged values come from untrusted input (event types, ids, names), so a text record is
//! written with its control characters escaped ([`escape_controls`]): a newline in a value
//! cannot forge a second record, and no escape sequence reaches the terminal but the colours
//! the formatter itself writes — and those only when stderr is a terminal. JSON records are
//! escaped by the JSON writer.
//!
//! Owns the commands' `--log-format` ([`LogArgs`]).

use std::borrow::Cow;
use std::io::{IsTerminal, Write};

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

use crate::cli::error::CommandError;

/// Options of the commands that run zones.
#[derive(clap::Args)]
pub struct LogArgs {
    /// Log format on stderr: `text` or `json`.
    #[arg(long, default_value = "text")]
    log_format: String,
}

impl LogArgs {
    /// Installs the global subscriber in the format asked for (see [`init`]).
    pub fn init(&self) -> Result<(), CommandError> {
        init(&self.log_format)
    }
}

/// Default filter when `RUST_LOG` is unset.
pub const DEFAULT_LOG_FILTER: &str = "warn";

/// Installs the global subscriber; `format` is `text` or `json`.
pub fn init(format: &str) -> Result<(), CommandError> {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_LOG_FILTER));
    let colour = std::io::stderr().is_terminal();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(colour)
        .with_writer(EscapedStderr { colour });
    let result = match format {
        "text" => builder.try_init(),
        "json" => builder.json().try_init(),
        other => {
            return Err(CommandError::BadInput(format!(
                "--log-format: expected `text` or `json`, got `{}`",
                escape_controls(other, false)
            )));
        }
    };
    // Already installed (a second command in one process): keep the first.
    let _ = result;
    Ok(())
}

/// `text` with every control character written as an escape (`\n`, `\t`, `\x1b`, `\u{85}`…),
/// but for a record's final newline and — when `colour` — the colour sequences
/// (`ESC [ digits ; … m`) a formatter writes.
pub fn escape_controls(text: &str, colour: bool) -> Cow<'_, str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    if !body.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = body.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if !c.is_control() {
            out.push(c);
            continue;
        }
        if c == '\u{1b}' && colour {
            let rest = &body[at + 1..];
            let sequence = rest.strip_prefix('[').and_then(|tail| {
                let end = tail.find(|ch: char| !(ch.is_ascii_digit() || ch == ';'))?;
                (tail[end..].starts_with('m')).then_some(end + 2)
            });
            if let Some(length) = sequence {
                out.push(c);
                out.push_str(&rest[..length]);
                for _ in 0..length {
                    chars.next();
                }
                continue;
            }
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    if body.len() < text.len() {
        out.push('\n');
    }
    Cow::Owned(out)
}

/// Stderr for log records, their control characters escaped (each record reaches the writer
/// whole, in one `write_all`).
#[derive(Clone, Copy)]
struct EscapedStderr {
    /// Whether the formatter writes colours (left as they are).
    colour: bool,
}

impl<'a> MakeWriter<'a> for EscapedStderr {
    type Writer = Self;

    fn make_writer(&'a self) -> Self::Writer {
        *self
    }
}

impl Write for EscapedStderr {
    fn write(&mut self, record: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(record);
        std::io::stderr().write_all(escape_controls(&text, self.colour).as_bytes())?;
        Ok(record.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_but_a_formatters_colours_and_final_newline_stay() {
        let forged = "WARN type=\"x\n2026-12-01 INFO FORGED admin token accepted\" \u{7}\u{1b}]0;owned\u{7}\n";
        let escaped = escape_controls(forged, false);
        assert_eq!(escaped.matches('\n').count(), 1, "one record: {escaped}");
        assert!(escaped.ends_with('\n'));
        assert!(escaped.contains("x\\n2026"), "{escaped}");
        assert!(escaped.contains("\\x07\\x1b]0;owned\\x07"), "{escaped}");
        let coloured = "\u{1b}[2m2026\u{1b}[0m \u{1b}[33m WARN\u{1b}[0m bad \u{1b}[2J\n";
        let kept = escape_controls(coloured, true);
        assert!(kept.contains("\u{1b}[33m WARN\u{1b}[0m"), "{kept:?}");
        assert!(kept.contains("bad \\x1b[2J"), "only colours pass: {kept:?}");
        assert_eq!(
            escape_controls(coloured, false).matches('\u{1b}').count(),
            0,
            "no colours when stderr is not a terminal"
        );
        assert!(matches!(
            escape_controls("plain\n", false),
            Cow::Borrowed(_)
        ));
        assert_eq!(escape_controls("next\u{85}line", false), "next\\x85line");
    }
}
