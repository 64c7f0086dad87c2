//! `replay --compare`: the replayed intents held against a recorded intent stream as they
//! come, keeping only the ids seen, and the first difference told with where the streams part.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Applied, EventSource};
use crate::bus::StreamKind;
use crate::history::error::HistoryError;
use crate::history::log_source::JsonlReader;

/// Where the compared streams stand.
enum Compared {
    /// Identical so far.
    Same,
    /// The recording ended before distinct replayed intent `at`; where the streams part.
    RecordingEnded {
        /// The recording's distinct intents.
        at: usize,
        /// Where the streams part.
        parting: String,
    },
    /// The first difference, told whole.
    Differs(String),
}

/// A replay compared with a recorded intent stream (JSONL) as its intents come, each side's
/// duplicates by id dropped (a recovery publishes again, under the same ids, what a crash may
/// have lost): the recording is read as far as the replay has come, and only the ids seen are
/// kept. Intents compare as JSON values (a recording's key order and its `log_id`s do not
/// matter).
pub(super) struct Comparison {
    /// The recording.
    path: PathBuf,
    /// The recording, opened when it is first read: after the log.
    recorded: Option<JsonlReader>,
    /// The ids of the recording's intents read so far.
    recorded_ids: HashSet<String>,
    /// The ids of the replayed intents so far.
    replayed_ids: HashSet<String>,
    /// Distinct intents replayed so far.
    replayed: usize,
    /// The last world event applied while the streams were the same.
    last: Option<EventSource>,
    state: Compared,
    /// What the stream's messages are called in a difference (`intents`).
    noun: String,
}

impl Comparison {
    pub(super) fn new(path: &Path, stream: StreamKind) -> Self {
        Self {
            noun: match stream {
                StreamKind::Intents => "intents".to_owned(),
                other => format!("`{}` messages", other.as_str()),
            },
            path: path.to_owned(),
            recorded: None,
            recorded_ids: HashSet::new(),
            replayed_ids: HashSet::new(),
            replayed: 0,
            last: None,
            state: Compared::Same,
        }
    }

    /// The recording's next distinct intent, if any.
    fn next_recorded(&mut self) -> Result<Option<String>, HistoryError> {
        let recorded = match &mut self.recorded {
            Some(recorded) => recorded,
            None => self.recorded.insert(JsonlReader::open(&self.path)?),
        };
        for entry in recorded {
            let body = entry?.body;
            if intent_id(&body).is_none_or(|id| self.recorded_ids.insert(id)) {
                return Ok(Some(body));
            }
        }
        Ok(None)
    }

    /// Compares the intents of the world event `applied`.
    pub(super) fn replayed(&mut self, applied: &Applied<'_>) -> Result<(), HistoryError> {
        if matches!(self.state, Compared::Differs(_)) {
            return Ok(());
        }
        for got in &applied.intents {
            if !intent_id(got).is_none_or(|id| self.replayed_ids.insert(id)) {
                continue;
            }
            let index = self.replayed;
            self.replayed += 1;
            if !matches!(self.state, Compared::Same) {
                continue;
            }
            match self.next_recorded()? {
                Some(want) if intent_value(got) == intent_value(&want) => {}
                Some(want) => {
                    let parting = parting(self.last.as_ref(), Some(&applied.source()));
                    self.state = Compared::Differs(format!(
                        "intent {index} differs:\n  recorded: {want}\n  replayed: {got}{parting}"
                    ));
                    // Nothing more is compared or counted.
                    self.recorded_ids = HashSet::new();
                    self.replayed_ids = HashSet::new();
                    return Ok(());
                }
                None => {
                    let parting = parting(self.last.as_ref(), Some(&applied.source()));
                    self.state = Compared::RecordingEnded { at: index, parting };
                }
            }
        }
        if matches!(self.state, Compared::Same) {
            self.last = Some(applied.source());
        }
        Ok(())
    }

    /// `None` when the streams are identical, else the first difference and the world event
    /// where the streams part.
    pub(super) fn finish(mut self) -> Result<Option<String>, HistoryError> {
        let replayed = self.replayed;
        let noun = std::mem::take(&mut self.noun);
        let emitted = |holds: usize| {
            format!("the replay emitted {replayed} {noun}, the recording holds {holds}")
        };
        Ok(match std::mem::replace(&mut self.state, Compared::Same) {
            Compared::Differs(difference) => Some(difference),
            Compared::RecordingEnded { at, parting } => Some(emitted(at) + &parting),
            Compared::Same => {
                let mut holds = replayed;
                while self.next_recorded()?.is_some() {
                    holds += 1;
                }
                (holds != replayed).then(|| emitted(holds) + &parting(self.last.as_ref(), None))
            }
        })
    }
}

/// An intent as a JSON value without its `log_id` (the text, when it is no JSON).
fn intent_value(line: &str) -> Value {
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(mut fields)) => {
            fields.remove("log_id");
            Value::Object(fields)
        }
        Ok(other) => other,
        Err(_) => Value::String(line.to_owned()),
    }
}

/// Where the replayed and recorded streams part: after the world event `before` (the one
/// before the event whose intents first differ), named by id, place and game time, and at
/// `at`, that event (`None`: the replay ended first).
fn parting(before: Option<&EventSource>, at: Option<&EventSource>) -> String {
    let after = match before {
        Some(event) => format!("after world event {event}"),
        None => "before the first world event".to_owned(),
    };
    match at {
        Some(event) => format!(
            "\n  the streams part {after}; the differing intent comes from world event {event}"
        ),
        None => format!("\n  the streams part {after} (the last one replayed)"),
    }
}

fn intent_id(line: &str) -> Option<String> {
    serde_json::from_str::<Value>(line)
        .ok()
        .and_then(|v| v.get("id").and_then(Value::as_str).map(str::to_owned))
}
