//! Where `geppetto replay`, `geppetto whatif` and `geppetto log export` read a zone's log:
//! a JSONL file, a Redis world stream, the embedded redb log, or a running service's own log.
//!
//! Owns [`LogSource`], the entries read from it ([`LogEntry`]), the JSONL format (export writes
//! each line as the envelope with its log position as `log_id`; reading it back, a line without
//! `log_id` is numbered by its line, so a log can leave the machine) and [`position`], what a
//! log holds where a snapshot ends, which the snapshot's anchor is checked against.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use geppetto_storage::{EventId, EventLog, RedbFile, SnapshotStore, StorageConfig};
use serde_json::Value;

use super::error::CommandError;
use crate::bus::StreamKind;
use crate::bus::redis::{RedisBus, RedisBusConfig};
use crate::runtime::world_log::{Position, WorldLog};

/// Where a log is read from.
#[derive(Clone)]
pub enum LogSource {
    /// A JSONL file (as `log export` writes, or plain envelopes one per line).
    File(PathBuf),
    /// A zone's stream on Redis at this URL.
    Redis(String),
    /// The embedded redb log in this file.
    Redb(PathBuf),
    /// A running service's own log and snapshot store (the admin API's what-if).
    Service {
        /// The zone's world log.
        log: crate::runtime::world_log::WorldLog,
        /// Its snapshots.
        store: Arc<dyn SnapshotStore>,
    },
}

impl std::fmt::Debug for LogSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::File(path) => write!(f, "File({})", path.display()),
            Self::Redis(url) => write!(f, "Redis({url})"),
            Self::Redb(path) => write!(f, "Redb({})", path.display()),
            Self::Service { .. } => write!(f, "Service"),
        }
    }
}

/// One log entry: its position in the log, the message as recorded and, read from a file, its
/// line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogEntry {
    /// Its log id (a file's `log_id`, else its line number).
    pub id: String,
    /// The message as recorded.
    pub body: String,
    /// Its line in a JSONL file.
    pub line: Option<usize>,
}

impl LogEntry {
    fn new(id: String, body: String) -> Self {
        Self {
            id,
            body,
            line: None,
        }
    }

    /// Where it is, for a report: `line 7 (log id 7-0)` or `log id 7-0`.
    pub fn place(&self) -> String {
        match self.line {
            Some(line) => format!("line {line} (log id {})", self.id),
            None => format!("log id {}", self.id),
        }
    }
}

pub(super) fn bad(error: impl std::fmt::Display) -> CommandError {
    CommandError::BadInput(error.to_string())
}

pub(super) fn environment(error: impl std::fmt::Display) -> CommandError {
    CommandError::Environment(error.to_string())
}

/// Runs `future` to completion: on the running service's runtime when called from one of its
/// blocking threads (an admin what-if), else on a runtime of its own (the CLI).
pub(super) fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, CommandError> {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => Ok(handle.block_on(future)),
        Err(_) => Ok(tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(environment)?
            .block_on(future)),
    }
}

/// Reads a JSONL log: `log_id` (else the line number) and the envelope (or `unparsed` text).
pub fn read_jsonl(path: &Path) -> Result<Vec<LogEntry>, CommandError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CommandError::BadInput(format!("{}: {e}", path.display())))?;
    let mut entries = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let number = (index + 1).to_string();
        let (id, body) = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(mut fields)) => {
                let id = match fields.remove("log_id") {
                    Some(Value::String(id)) => id,
                    _ => number,
                };
                match fields.remove("unparsed") {
                    Some(Value::String(raw)) => (id, raw),
                    _ => (id, Value::Object(fields).to_string()),
                }
            }
            _ => (number, line.to_owned()),
        };
        entries.push(LogEntry {
            id,
            body,
            line: Some(index + 1),
        });
    }
    Ok(entries)
}

/// Every entry after `after`, read a page at a time with `page` (given the last id read) until
/// a page comes back empty.
async fn all_pages<F, Fut>(after: Option<&str>, mut page: F) -> Result<Vec<LogEntry>, CommandError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<crate::bus::Delivery>, CommandError>>,
{
    let mut all = Vec::new();
    let mut cursor = after.map(str::to_owned);
    loop {
        let entries = page(cursor.clone()).await?;
        let Some(last) = entries.last() else { break };
        cursor = Some(last.id.clone());
        all.extend(entries.into_iter().map(|d| LogEntry::new(d.id, d.body)));
    }
    Ok(all)
}

/// Every entry of `zone`'s `stream` after `after` from `source`, in log order.
pub fn read_log(
    source: &LogSource,
    zone: &str,
    stream: StreamKind,
    after: Option<&str>,
) -> Result<Vec<LogEntry>, CommandError> {
    const PAGE: usize = 10_000;
    let mut entries = match source {
        LogSource::File(path) => read_jsonl(path)?,
        LogSource::Service { log, .. } => block_on(all_pages(after, |cursor| async move {
            log.read_after(zone, cursor.as_deref(), PAGE)
                .await
                .map_err(environment)
        }))??,
        LogSource::Redis(url) => block_on(async {
            let bus = RedisBus::connect(RedisBusConfig {
                url: url.clone(),
                ..RedisBusConfig::default()
            })
            .await
            .map_err(environment)?;
            all_pages(after, |cursor| {
                let bus = &bus;
                async move {
                    bus.read_range(zone, stream, cursor.as_deref(), PAGE)
                        .await
                        .map_err(environment)
                }
            })
            .await
        })??,
        LogSource::Redb(path) => {
            if stream != StreamKind::World {
                return Err(bad("the embedded redb log holds only the world stream"));
            }
            let log = RedbFile::open(path, &StorageConfig::default())
                .map_err(environment)?
                .event_log();
            let key = geppetto_storage::ZoneName::new(zone).map_err(bad)?;
            let mut all = Vec::new();
            let mut cursor = match after {
                Some(id) => Some(id.parse::<EventId>().map_err(bad)?),
                None => None,
            };
            loop {
                let page = log.read_after(&key, cursor, PAGE).map_err(environment)?;
                let Some((last, _)) = page.last() else { break };
                cursor = Some(*last);
                all.extend(page.into_iter().map(|(id, body)| {
                    LogEntry::new(id.to_string(), String::from_utf8_lossy(&body).into_owned())
                }));
            }
            all
        }
    };
    // A file is read whole: keep what follows `after`.
    if let (LogSource::File(_), Some(after)) = (source, after) {
        match entries.iter().position(|entry| entry.id == after) {
            Some(index) => {
                entries.drain(..=index);
            }
            None => {
                return Err(bad(format!(
                    "the snapshot covers log entry `{after}`, which this log does not hold"
                )));
            }
        }
    }
    Ok(entries)
}

/// `geppetto log export`: one JSONL line per entry, the envelope with its `log_id` (an entry
/// that is not a JSON object is kept as `unparsed` text).
pub fn export(
    source: &LogSource,
    zone: &str,
    stream: StreamKind,
    mut write: impl FnMut(&str),
) -> Result<usize, CommandError> {
    let entries = read_log(source, zone, stream, None)?;
    let progress = super::progress::bar(entries.len() as u64, "exporting", "entries");
    for LogEntry { id, body, .. } in &entries {
        progress.inc(1);
        let line = match serde_json::from_str::<Value>(body) {
            Ok(Value::Object(mut fields)) => {
                fields.insert("log_id".into(), Value::String(id.clone()));
                Value::Object(fields).to_string()
            }
            _ => serde_json::json!({"log_id": id, "unparsed": body}).to_string(),
        };
        write(&line);
    }
    progress.finish_and_clear();
    Ok(entries.len())
}

/// What `source` holds at `id` of `zone`'s world log (a snapshot's `last_event_id`).
pub fn position(source: &LogSource, zone: &str, id: &str) -> Result<Position, CommandError> {
    let log = match source {
        LogSource::File(path) => {
            let entries = read_jsonl(path)?;
            return Ok(Position::within(
                entries
                    .iter()
                    .map(|entry| (entry.id.as_str(), entry.body.as_str())),
                id,
            ));
        }
        LogSource::Service { log, .. } => log.clone(),
        LogSource::Redis(url) => WorldLog::Stream(Arc::new(
            block_on(RedisBus::connect(RedisBusConfig {
                url: url.clone(),
                ..RedisBusConfig::default()
            }))?
            .map_err(environment)?,
        )),
        LogSource::Redb(path) => WorldLog::Embedded(Arc::new(
            RedbFile::open(path, &StorageConfig::default())
                .map_err(environment)?
                .event_log(),
        )),
    };
    block_on(log.position(zone, id))?.map_err(environment)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str, text: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("geppetto-{name}-{}", std::process::id()));
        std::fs::write(&path, text).expect("write");
        path
    }

    #[test]
    fn a_jsonl_log_keeps_its_ids_and_unparsed_entries_and_numbers_the_rest() {
        let path = temp(
            "jsonl",
            "{\"log_id\":\"7-0\",\"v\":1,\"type\":\"time_advanced\"}\n\n\
             {\"log_id\":\"7-1\",\"unparsed\":\"not json\"}\n{\"v\":1}\nbroken\n",
        );
        let entries = read_jsonl(&path).expect("reads");
        let ids: Vec<&str> = entries.iter().map(|entry| entry.id.as_str()).collect();
        assert_eq!(ids, ["7-0", "7-1", "4", "5"]);
        let lines: Vec<Option<usize>> = entries.iter().map(|entry| entry.line).collect();
        assert_eq!(
            lines,
            [Some(1), Some(3), Some(4), Some(5)],
            "blank lines count"
        );
        assert!(!entries[0].body.contains("log_id"), "{}", entries[0].body);
        assert_eq!(entries[1].body, "not json");
        assert_eq!(entries[3].body, "broken");
        assert_eq!(entries[3].place(), "line 5 (log id 5)");
        let after = read_log(
            &LogSource::File(path.clone()),
            "village",
            StreamKind::World,
            Some("7-1"),
        )
        .expect("after");
        assert_eq!(after.len(), 2);
        let missing = read_log(
            &LogSource::File(path.clone()),
            "village",
            StreamKind::World,
            Some("9-9"),
        );
        assert!(matches!(missing, Err(CommandError::BadInput(m)) if m.contains("`9-9`")));
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn an_export_reads_back_as_the_same_log() {
        let path = temp(
            "export-in",
            "{\"v\":1,\"type\":\"say\",\"text\":\"hi\"}\nnot json\n",
        );
        let mut lines = Vec::new();
        let count = export(
            &LogSource::File(path.clone()),
            "village",
            StreamKind::World,
            |l| lines.push(l.to_owned()),
        )
        .expect("exports");
        assert_eq!(count, 2);
        let out = temp("export-out", &lines.join("\n"));
        let back = read_jsonl(&out).expect("reads");
        assert_eq!(back, read_jsonl(&path).expect("reads"));
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(out);
    }
}
