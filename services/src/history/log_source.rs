//! Where `geppetto replay`, `geppetto whatif` and `geppetto log export` read a zone's log:
//! a JSONL file, a Redis world stream, the embedded redb log, or a running service's own log.
//!
//! Owns [`LogSource`], the entries read from it ([`LogEntry`]) a page at a time ([`LogPages`]:
//! a log of any length is read in the memory of a few pages, and [`LogPages::pipelined`] reads
//! and prepares the next page on a thread of its own while the caller works through this one),
//! the JSONL format ([`JsonlReader`]: export writes each line as the envelope with its log
//! position as `log_id`; reading it back, a line without `log_id` is numbered by its line, so a
//! log can leave the machine) and [`entry_at`], what a log holds where a snapshot ends, which
//! the snapshot's anchor is checked against.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use geppetto_storage::{EventId, EventLog, RedbEventLog, RedbFile, SnapshotStore, StorageConfig};
use serde_json::Value;

use super::error::HistoryError;
use crate::bus::StreamKind;
use crate::bus::redis::{RedisBus, RedisBusConfig};
use crate::runtime::world_log::{EntryAt, WorldLog};

/// Log entries read at once: a page of a Redis stream or of the redb log, or as many lines of
/// a JSONL file. A pipelined read holds at most three pages (one read, one waiting, one worked
/// through).
pub const LOG_PAGE: usize = 4_096;

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

pub(super) fn bad(error: impl std::fmt::Display) -> HistoryError {
    HistoryError::Refused(error.to_string())
}

pub(super) fn environment(error: impl std::fmt::Display) -> HistoryError {
    HistoryError::Unavailable(error.to_string())
}

/// Where the futures of an async log run: the service's runtime when called from one of its
/// blocking threads (an admin what-if), else a runtime of its own (the CLI). A reader keeps
/// its executor as long as the connection made on it.
enum Executor {
    /// The running service's runtime.
    Handle(tokio::runtime::Handle),
    /// A runtime of its own.
    Own(tokio::runtime::Runtime),
}

impl Executor {
    fn new() -> Result<Self, HistoryError> {
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => Ok(Self::Handle(handle)),
            Err(_) => Ok(Self::Own(
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(environment)?,
            )),
        }
    }

    fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        match self {
            Self::Handle(handle) => handle.block_on(future),
            Self::Own(runtime) => runtime.block_on(future),
        }
    }
}

/// Runs `future` to completion: on the running service's runtime when called from one of its
/// blocking threads (an admin what-if), else on a runtime of its own (the CLI).
pub(super) fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, HistoryError> {
    Ok(Executor::new()?.block_on(future))
}

/// A JSONL log read a line at a time: `log_id` (else the line number) and the envelope (or
/// `unparsed` text) of each line that is not blank.
pub struct JsonlReader {
    path: PathBuf,
    lines: BufReader<File>,
    /// Lines read so far.
    number: usize,
    /// The line being read.
    buffer: String,
    /// A read failed: nothing follows.
    failed: bool,
}

impl JsonlReader {
    /// Opens `path`.
    pub fn open(path: &Path) -> Result<Self, HistoryError> {
        let file = File::open(path).map_err(|e| in_file(path, e))?;
        Ok(Self {
            path: path.to_owned(),
            lines: BufReader::new(file),
            number: 0,
            buffer: String::new(),
            failed: false,
        })
    }

    /// Reads the next line that is not blank; `false` at the end of the file.
    fn advance(&mut self) -> Result<bool, HistoryError> {
        while !self.failed {
            self.buffer.clear();
            match self.lines.read_line(&mut self.buffer) {
                Ok(0) => return Ok(false),
                Ok(_) => self.number += 1,
                Err(error) => {
                    self.failed = true;
                    return Err(in_file(&self.path, error));
                }
            }
            // A line ends at `\n` or `\r\n`; the last one may end at neither.
            if self.buffer.ends_with('\n') {
                self.buffer.pop();
                if self.buffer.ends_with('\r') {
                    self.buffer.pop();
                }
            }
            if !self.buffer.trim().is_empty() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The line read last, as written.
    fn line(&self) -> &str {
        &self.buffer
    }

    /// The entry the line read last holds.
    fn entry(&self) -> LogEntry {
        let line = self.line();
        let number = self.number;
        let (id, body) = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(mut fields)) => {
                let id = match fields.remove("log_id") {
                    Some(Value::String(id)) => id,
                    _ => number.to_string(),
                };
                match fields.remove("unparsed") {
                    Some(Value::String(raw)) => (id, raw),
                    _ => (id, Value::Object(fields).to_string()),
                }
            }
            _ => (number.to_string(), line.to_owned()),
        };
        LogEntry {
            id,
            body,
            line: Some(number),
        }
    }
}

fn in_file(path: &Path, error: std::io::Error) -> HistoryError {
    HistoryError::Refused(format!("{}: {error}", path.display()))
}

impl Iterator for JsonlReader {
    type Item = Result<LogEntry, HistoryError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.advance() {
            Ok(true) => Some(Ok(self.entry())),
            Ok(false) => None,
            Err(error) => Some(Err(error)),
        }
    }
}

/// A log read from its source, in log order.
enum Reader {
    /// A JSONL file, a line at a time.
    File(JsonlReader),
    /// A Redis stream, a page after the last id read.
    Redis {
        bus: Box<RedisBus>,
        executor: Executor,
        zone: String,
        stream: StreamKind,
        cursor: Option<String>,
    },
    /// A running service's world log, a page after the last id read.
    Service {
        log: WorldLog,
        executor: Executor,
        zone: String,
        cursor: Option<String>,
    },
    /// The embedded redb log, a page after the last id read.
    Redb {
        log: RedbEventLog,
        zone: geppetto_storage::ZoneName,
        cursor: Option<EventId>,
    },
}

/// A zone's log read a page of at most [`LOG_PAGE`] entries at a time, in log order: whatever
/// its length, a reader holds one page.
pub struct LogPages {
    reader: Reader,
    /// A file is read from its start: the entries up to this id are passed over.
    skip_through: Option<String>,
}

impl LogPages {
    /// The entries of `zone`'s `stream` after `after` (from the start when `None`) in `source`.
    pub fn open(
        source: &LogSource,
        zone: &str,
        stream: StreamKind,
        after: Option<&str>,
    ) -> Result<Self, HistoryError> {
        let cursor = after.map(str::to_owned);
        let reader = match source {
            LogSource::File(path) => {
                return Ok(Self {
                    reader: Reader::File(JsonlReader::open(path)?),
                    skip_through: cursor,
                });
            }
            LogSource::Service { log, .. } => Reader::Service {
                log: log.clone(),
                executor: Executor::new()?,
                zone: zone.to_owned(),
                cursor,
            },
            LogSource::Redis(url) => {
                let executor = Executor::new()?;
                let bus = executor
                    .block_on(RedisBus::connect(RedisBusConfig {
                        url: url.clone(),
                        ..RedisBusConfig::default()
                    }))
                    .map_err(environment)?;
                Reader::Redis {
                    bus: Box::new(bus),
                    executor,
                    zone: zone.to_owned(),
                    stream,
                    cursor,
                }
            }
            LogSource::Redb(path) => {
                if stream != StreamKind::World {
                    return Err(bad("the embedded redb log holds only the world stream"));
                }
                let log = RedbFile::open(path, &StorageConfig::default())
                    .map_err(environment)?
                    .event_log();
                let zone = geppetto_storage::ZoneName::new(zone).map_err(bad)?;
                let cursor = match after {
                    Some(id) => Some(id.parse::<EventId>().map_err(bad)?),
                    None => None,
                };
                Reader::Redb { log, zone, cursor }
            }
        };
        Ok(Self {
            reader,
            skip_through: None,
        })
    }

    /// The next page, in log order; empty once the log is read.
    pub fn next_page(&mut self) -> Result<Vec<LogEntry>, HistoryError> {
        Ok(self.next_page_where(&|_| true)?.0)
    }

    /// The entries of the next page whose text `wanted` accepts, in log order, and how many
    /// entries the page covered (0 once the log is read). A JSONL line is asked as written and
    /// read into an entry only if accepted (its entry's body is the line written again: a test
    /// for a word written without escapes qualifies, as long as it accepts every line that
    /// holds a `\`).
    pub fn next_page_where(
        &mut self,
        wanted: &dyn Fn(&str) -> bool,
    ) -> Result<(Vec<LogEntry>, usize), HistoryError> {
        let mut page = match &mut self.reader {
            Reader::File(lines) => {
                let mut page = Vec::new();
                let mut covered = 0;
                while covered < LOG_PAGE && lines.advance()? {
                    match &self.skip_through {
                        Some(after) => {
                            if lines.entry().id == *after {
                                self.skip_through = None;
                            }
                        }
                        None => {
                            covered += 1;
                            if wanted(lines.line()) {
                                page.push(lines.entry());
                            }
                        }
                    }
                }
                return match &self.skip_through {
                    Some(after) => Err(bad(format!(
                        "the snapshot covers log entry `{after}`, which this log does not hold"
                    ))),
                    None => Ok((page, covered)),
                };
            }
            Reader::Redis {
                bus,
                executor,
                zone,
                stream,
                cursor,
            } => {
                let page = executor
                    .block_on(bus.read_range(zone, *stream, cursor.as_deref(), LOG_PAGE))
                    .map_err(environment)?;
                if let Some(last) = page.last() {
                    *cursor = Some(last.id.clone());
                }
                page.into_iter()
                    .map(|d| LogEntry::new(d.id, d.body))
                    .collect::<Vec<_>>()
            }
            Reader::Service {
                log,
                executor,
                zone,
                cursor,
            } => {
                let page = executor
                    .block_on(log.read_after(zone, cursor.as_deref(), LOG_PAGE))
                    .map_err(environment)?;
                if let Some(last) = page.last() {
                    *cursor = Some(last.id.clone());
                }
                page.into_iter()
                    .map(|d| LogEntry::new(d.id, d.body))
                    .collect()
            }
            Reader::Redb { log, zone, cursor } => {
                let page = log
                    .read_after(zone, *cursor, LOG_PAGE)
                    .map_err(environment)?;
                if let Some((last, _)) = page.last() {
                    *cursor = Some(*last);
                }
                page.into_iter()
                    .map(|(id, body)| {
                        LogEntry::new(id.to_string(), String::from_utf8_lossy(&body).into_owned())
                    })
                    .collect()
            }
        };
        let covered = page.len();
        page.retain(|entry| wanted(&entry.body));
        Ok((page, covered))
    }

    /// Reads the log a page at a time, each page handed to `prepare`, and passes what it made
    /// to `take`, in log order, until the log ends or `take` breaks. With `reader_thread` the
    /// pages are read and prepared on a thread of its own, overlapping `take`'s work on the
    /// page before (at most one prepared page waits); without it, on this thread in turn.
    pub fn pipelined<T: Send>(
        mut self,
        reader_thread: bool,
        prepare: impl Fn(Vec<LogEntry>) -> T + Send,
        mut take: impl FnMut(T) -> Result<ControlFlow<()>, HistoryError>,
    ) -> Result<(), HistoryError> {
        if !reader_thread {
            loop {
                let page = self.next_page()?;
                if page.is_empty() || take(prepare(page))?.is_break() {
                    return Ok(());
                }
            }
        }
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        std::thread::scope(|scope| {
            scope.spawn(move || {
                loop {
                    let page = match self.next_page() {
                        Ok(page) if page.is_empty() => break,
                        Ok(page) => Ok(prepare(page)),
                        Err(error) => Err(error),
                    };
                    let failed = page.is_err();
                    // A closed channel: the taker stopped.
                    if sender.send(page).is_err() || failed {
                        break;
                    }
                }
            });
            // Returning drops the receiver, which ends the reader at its next page.
            for page in receiver {
                if take(page?)?.is_break() {
                    break;
                }
            }
            Ok(())
        })
    }
}

/// `geppetto log export`: one JSONL line per entry, the envelope with its `log_id` (an entry
/// that is not a JSON object is kept as `unparsed` text), written as the log is read.
pub fn export(
    source: &LogSource,
    zone: &str,
    stream: StreamKind,
    mut write: impl FnMut(&str),
) -> Result<usize, HistoryError> {
    let progress = super::progress::counter("exporting", "entries");
    let mut written = 0;
    LogPages::open(source, zone, stream, None)?.pipelined(
        true,
        |page| {
            page.into_iter()
                .map(
                    |LogEntry { id, body, .. }| match serde_json::from_str::<Value>(&body) {
                        Ok(Value::Object(mut fields)) => {
                            fields.insert("log_id".into(), Value::String(id));
                            Value::Object(fields).to_string()
                        }
                        _ => serde_json::json!({"log_id": id, "unparsed": body}).to_string(),
                    },
                )
                .collect::<Vec<String>>()
        },
        |lines| {
            for line in &lines {
                write(line);
            }
            written += lines.len();
            progress.inc(lines.len() as u64);
            Ok(ControlFlow::Continue(()))
        },
    )?;
    progress.finish_and_clear();
    Ok(written)
}

/// What `source` holds at `id` of `zone`'s world log (a snapshot's `last_event_id`).
pub fn entry_at(source: &LogSource, zone: &str, id: &str) -> Result<EntryAt, HistoryError> {
    let log = match source {
        LogSource::File(path) => {
            let mut failed = None;
            let entries = JsonlReader::open(path)?
                .map_while(|entry| entry.map_err(|error| failed = Some(error)).ok());
            let at = EntryAt::within(entries.map(|entry| (entry.id, entry.body)), id);
            return match failed {
                Some(error) => Err(error),
                None => Ok(at),
            };
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
    block_on(log.entry_at(zone, id))?.map_err(environment)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str, text: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("geppetto-{name}-{}", std::process::id()));
        std::fs::write(&path, text).expect("write");
        path
    }

    fn read_jsonl(path: &Path) -> Vec<LogEntry> {
        JsonlReader::open(path)
            .expect("opens")
            .collect::<Result<_, _>>()
            .expect("reads")
    }

    /// Every entry of `source` after `after`, a page at a time.
    fn read_log(source: &LogSource, after: Option<&str>) -> Result<Vec<LogEntry>, HistoryError> {
        let mut pages = LogPages::open(source, "village", StreamKind::World, after)?;
        let mut all = Vec::new();
        loop {
            let page = pages.next_page()?;
            if page.is_empty() {
                return Ok(all);
            }
            assert!(page.len() <= LOG_PAGE);
            all.extend(page);
        }
    }

    #[test]
    fn a_jsonl_log_keeps_its_ids_and_unparsed_entries_and_numbers_the_rest() {
        let path = temp(
            "jsonl",
            "{\"log_id\":\"7-0\",\"v\":1,\"type\":\"time_advanced\"}\r\n\n\
             {\"log_id\":\"7-1\",\"unparsed\":\"not json\"}\n{\"v\":1}\nbroken\r",
        );
        let entries = read_jsonl(&path);
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
        assert_eq!(
            entries[3].body, "broken\r",
            "a last line without `\\n` is kept whole"
        );
        assert_eq!(entries[3].place(), "line 5 (log id 5)");
        let source = LogSource::File(path.clone());
        let after = read_log(&source, Some("7-1")).expect("after");
        assert_eq!(after, entries[2..]);
        let missing = read_log(&source, Some("9-9"));
        assert!(matches!(missing, Err(HistoryError::Refused(m)) if m.contains("`9-9`")));
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn a_long_log_is_read_a_page_at_a_time_and_pipelined_in_order() {
        let count = LOG_PAGE * 2 + 7;
        let text: String = (0..count)
            .map(|i| format!("{{\"log_id\":\"{i}-0\",\"n\":{i}}}\n"))
            .collect();
        let path = temp("pages", &text);
        let source = LogSource::File(path.clone());
        let all = read_log(&source, None).expect("reads");
        assert_eq!(all.len(), count);
        let after = read_log(&source, Some(&format!("{}-0", LOG_PAGE + 3))).expect("after");
        assert_eq!(after.len(), count - LOG_PAGE - 4);
        assert_eq!(after[0].id, format!("{}-0", LOG_PAGE + 4));
        // Prepared on the reader's thread (or this one), taken here in log order; a break
        // stops the reader.
        for reader_thread in [true, false] {
            let mut taken = Vec::new();
            LogPages::open(&source, "village", StreamKind::World, None)
                .expect("opens")
                .pipelined(
                    reader_thread,
                    |page| page.into_iter().map(|e| e.id).collect::<Vec<_>>(),
                    |ids| {
                        taken.extend(ids);
                        Ok(ControlFlow::Continue(()))
                    },
                )
                .expect("pipelined");
            let ids: Vec<String> = all.iter().map(|e| e.id.clone()).collect();
            assert_eq!(taken, ids);
            let mut pages = 0;
            LogPages::open(&source, "village", StreamKind::World, None)
                .expect("opens")
                .pipelined(
                    reader_thread,
                    |page| page.len(),
                    |_| {
                        pages += 1;
                        Ok(ControlFlow::Break(()))
                    },
                )
                .expect("stops");
            assert_eq!(pages, 1);
        }
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn a_missing_or_unreadable_jsonl_log_is_named() {
        let missing = JsonlReader::open(Path::new("/nonexistent/world.jsonl"));
        assert!(
            matches!(missing, Err(HistoryError::Refused(m)) if m.starts_with("/nonexistent/world.jsonl: "))
        );
        let path = std::env::temp_dir().join(format!("geppetto-latin1-{}", std::process::id()));
        std::fs::write(&path, b"{\"v\":1}\n\xff\xfe\n").expect("write");
        let read: Result<Vec<LogEntry>, HistoryError> =
            JsonlReader::open(&path).expect("opens").collect();
        assert!(
            matches!(read, Err(HistoryError::Refused(m)) if m.contains("valid UTF-8")),
            "a line that is not UTF-8 fails the read"
        );
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
        assert_eq!(read_jsonl(&out), read_jsonl(&path));
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(out);
    }

    #[test]
    fn a_position_in_a_jsonl_log_is_held_or_missing() {
        let path = temp(
            "position",
            "{\"log_id\":\"1-0\",\"v\":1}\n{\"log_id\":\"2-0\",\"v\":2}\n",
        );
        let source = LogSource::File(path.clone());
        let held = entry_at(&source, "village", "2-0").expect("reads");
        assert!(
            matches!(&held, EntryAt::Holds(d) if d.body == "{\"v\":2}"),
            "{held:?}"
        );
        assert_eq!(
            entry_at(&source, "village", "3-0").expect("reads"),
            EntryAt::Missing
        );
        assert_eq!(
            entry_at(&source, "village", "0-5").expect("reads"),
            EntryAt::Gone
        );
        let _ = std::fs::remove_file(path);
    }
}
