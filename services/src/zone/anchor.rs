//! A snapshot's anchor: what ties a zone snapshot to the world file it was taken over and to
//! the log it covers, so a replay or a recovery never lays it over another world or log.
//!
//! Owns [`SnapshotAnchor`] (the world file's fingerprint and a [`LogMark`] of the last log
//! entry the snapshot folds in: its log id, its message id and game time when it is a world
//! message, and a hash of its text) and the checks against what a replay or recovery holds,
//! each failure an [`AnchorMismatch`] that says what differs. A log position alone identifies
//! nothing (a JSONL log without `log_id`s is numbered 1, 2, 3…; two redb logs share their ids),
//! the entry's content does.
//!
//! The text hash is taken over the entry's canonical JSON (keys sorted, no spacing): the same
//! envelope hashes alike whether it is read from Redis, the embedded log or an export (which
//! adds and removes `log_id`). An entry that is not a JSON object is hashed as it is. Pure: it
//! reads nothing; the zone loop, recovery and `geppetto replay` hand it the entries.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The last log entry a snapshot covers, as the log holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogMark {
    /// Its position in the log (a stream id, an embedded log id or a JSONL line's `log_id`).
    pub log_id: String,
    /// Its message id, when it is an envelope with one.
    #[serde(default)]
    pub event_id: Option<String>,
    /// Its game time, ticks, when it is an envelope with one.
    #[serde(default)]
    pub game_time: Option<u64>,
    /// XXH3-128 of its canonical text, 32 hex digits.
    pub text_hash: String,
}

impl LogMark {
    /// The mark of the entry `body` held at `log_id`.
    pub fn of(log_id: &str, body: &str) -> Self {
        let (canonical, event_id, game_time) = match serde_json::from_str::<Value>(body) {
            Ok(value @ Value::Object(_)) => (
                value.to_string(),
                value.get("id").and_then(Value::as_str).map(str::to_owned),
                value.get("game_time").and_then(Value::as_u64),
            ),
            _ => (body.to_owned(), None, None),
        };
        Self {
            log_id: log_id.to_owned(),
            event_id,
            game_time,
            text_hash: format!("{:032x}", xxhash_rust::xxh3::xxh3_128(canonical.as_bytes())),
        }
    }
}

impl std::fmt::Display for LogMark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.event_id, self.game_time) {
            (Some(id), Some(time)) => write!(f, "event `{id}` at game time {time}"),
            (Some(id), None) => write!(f, "event `{id}`"),
            _ => write!(f, "an entry that is not a world event"),
        }
    }
}

/// What a snapshot was taken over: the world file and the last log entry it covers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotAnchor {
    /// The fingerprint of the world file the zone was built from.
    pub world: String,
    /// The last log entry folded into the snapshot.
    pub last: LogMark,
}

/// How a snapshot's anchor differs from what it is laid over.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AnchorMismatch {
    /// The world file is not the one the snapshot was taken over.
    #[error(
        "it was taken over another world file (fingerprint {snapshot}; the world given here \
         has {given})"
    )]
    World {
        /// The snapshot's.
        snapshot: String,
        /// The world file's.
        given: String,
    },
    /// The log holds another entry at the snapshot's position.
    #[error(
        "it covers log entry `{}`, {}, but this log holds {} there{}",
        .expected.log_id, .expected, .found, .detail
    )]
    Entry {
        /// What the snapshot covers.
        expected: Box<LogMark>,
        /// What the log holds.
        found: Box<LogMark>,
        /// What differs when id and game time agree.
        detail: &'static str,
    },
    /// The log does not hold the snapshot's position although it holds entries before it.
    #[error("it covers log entry `{}`, {}, which this log does not hold", .expected.log_id, .expected)]
    Missing {
        /// What the snapshot covers.
        expected: Box<LogMark>,
    },
}

impl SnapshotAnchor {
    /// Whether the world file fingerprinted `given` is the snapshot's.
    pub fn check_world(&self, given: &str) -> Result<(), AnchorMismatch> {
        if self.world == given {
            return Ok(());
        }
        Err(AnchorMismatch::World {
            snapshot: self.world.clone(),
            given: given.to_owned(),
        })
    }

    /// Whether `body`, the entry a log holds at the snapshot's position, is the one the
    /// snapshot covers.
    pub fn check_entry(&self, body: &str) -> Result<(), AnchorMismatch> {
        let found = LogMark::of(&self.last.log_id, body);
        if found == self.last {
            return Ok(());
        }
        let same_event =
            found.event_id == self.last.event_id && found.game_time == self.last.game_time;
        Err(AnchorMismatch::Entry {
            expected: Box::new(self.last.clone()),
            found: Box::new(found),
            detail: if same_event {
                " (same id and game time, different content)"
            } else {
                ""
            },
        })
    }

    /// The snapshot's position is missing from a log that holds entries before it.
    pub fn missing(&self) -> AnchorMismatch {
        AnchorMismatch::Missing {
            expected: Box::new(self.last.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: &str =
        r#"{"v":1,"type":"time_advanced","id":"c600","zone":"village","game_time":600}"#;

    fn anchor() -> SnapshotAnchor {
        SnapshotAnchor {
            world: "w1".into(),
            last: LogMark::of("7", TICK),
        }
    }

    #[test]
    fn an_entry_hashes_alike_however_its_keys_are_ordered_and_spaced() {
        let reordered = r#"{ "game_time": 600, "zone": "village", "id": "c600",
                             "type": "time_advanced", "v": 1 }"#;
        assert_eq!(LogMark::of("7", reordered), LogMark::of("7", TICK));
        let mark = LogMark::of("7", TICK);
        assert_eq!(mark.event_id.as_deref(), Some("c600"));
        assert_eq!(mark.game_time, Some(600));
        let broken = LogMark::of("8", "{\"v\": 1, \"type\": \"broken");
        assert_eq!((broken.event_id, broken.game_time), (None, None));
        assert_ne!(broken.text_hash, mark.text_hash);
    }

    #[test]
    fn the_same_entry_matches_and_every_difference_is_named() {
        let anchor = anchor();
        assert_eq!(anchor.check_entry(TICK), Ok(()));
        assert_eq!(anchor.check_world("w1"), Ok(()));
        let other = anchor
            .check_entry(
                r#"{"v":1,"type":"time_advanced","id":"e6","zone":"village","game_time":426}"#,
            )
            .expect_err("another event");
        let text = other.to_string();
        assert!(
            text.contains("log entry `7`, event `c600` at game time 600")
                && text.contains("holds event `e6` at game time 426 there"),
            "{text}"
        );
        let changed = anchor
            .check_entry(
                r#"{"v":1,"type":"weather_changed","id":"c600","zone":"village","game_time":600,"weather":"storm"}"#,
            )
            .expect_err("same id, other content");
        assert!(
            changed.to_string().contains("different content"),
            "{changed}"
        );
        let world = anchor.check_world("w2").expect_err("another world");
        assert!(world.to_string().contains("another world file"), "{world}");
        let missing = anchor.missing().to_string();
        assert!(missing.contains("does not hold"), "{missing}");
    }
}
