//! The demo's feed: what the NPCs do, read back from the bus as any subscriber would (NPC
//! events, intents, narratives, story signals) and written as one readable line each, in an
//! order that does not depend on how the reads happened to interleave.

use std::collections::BTreeMap;
use std::time::Duration;

use geppetto_llm::{SpendCounts, WorkerCounts};
use serde_json::Value;

use crate::bus::{Consumer, Delivery, EventBus, StreamKind};
use crate::content::world_file::WorldFile;
use crate::drive::error::DriveError;

/// The feed's consumer group on each stream it reads.
const FEED_GROUP: &str = "demo-feed";

/// The streams the feed reads, in the order a line of the same game minute is printed: the
/// first two are dense (every tick writes to them), the others come when they come.
const FEED_STREAMS: [StreamKind; 4] = [
    StreamKind::NpcEvents,
    StreamKind::Intents,
    StreamKind::Narrative,
    StreamKind::Story,
];

/// Messages the feed reads from a stream at once.
const FEED_BATCH: usize = 512;

/// How long the feed waits for NPC events while the village still runs.
const FEED_WAIT: Duration = Duration::from_millis(50);

/// Names for the feed.
pub(crate) struct Names {
    npcs: BTreeMap<String, String>,
    providers: BTreeMap<String, String>,
}

impl Names {
    /// The names `world` gives its NPCs, residents and providers.
    pub(crate) fn new(world: &WorldFile) -> Self {
        let named = |id: &String, name: &Option<String>| {
            (id.clone(), name.clone().unwrap_or_else(|| id.clone()))
        };
        Self {
            npcs: (world.npcs.iter().map(|n| named(&n.agent.id, &n.name)))
                .chain(world.residents.iter().map(|r| named(&r.id, &r.name)))
                .collect(),
            providers: (world.providers.iter())
                .map(|p| named(&p.spec.id, &p.name))
                .collect(),
        }
    }

    fn npc<'a>(&'a self, id: &'a str) -> &'a str {
        self.npcs.get(id).map_or(id, String::as_str)
    }

    fn provider<'a>(&'a self, id: &'a str) -> &'a str {
        self.providers.get(id).map_or(id, String::as_str)
    }
}

/// The feed's reader: one consumer a stream, and the lines read but not yet printed.
pub(crate) struct Feed {
    names: Names,
    consumers: Vec<Box<dyn Consumer>>,
    /// (game minute, stream, place in that stream, line) read and not yet printed.
    pending: Vec<(u64, usize, u64, String)>,
    /// Messages read from each stream so far.
    read_in: [u64; FEED_STREAMS.len()],
    /// The latest game minute each dense stream has shown.
    latest: [u64; 2],
    /// Whether everything the village will write is on the bus.
    finished: bool,
}

impl Feed {
    /// Opens the feed's consumers on `zone`'s streams.
    pub(crate) async fn open(
        bus: &dyn EventBus,
        zone: &str,
        names: Names,
    ) -> Result<Self, DriveError> {
        let mut consumers = Vec::with_capacity(FEED_STREAMS.len());
        for stream in FEED_STREAMS {
            consumers.push(bus.consumer(zone, stream, FEED_GROUP, "feed").await?);
        }
        Ok(Self {
            names,
            consumers,
            pending: Vec::new(),
            read_in: [0; FEED_STREAMS.len()],
            latest: [0; 2],
            finished: false,
        })
    }

    /// Says that everything the village will write is on the bus: the feed now drains it.
    pub(crate) fn finish(&mut self) {
        self.finished = true;
    }

    /// Reads what is there and hands `sink` the lines that can be printed; returns how many,
    /// and whether the feed is drained (finished and nothing left).
    ///
    /// A line is ordered by its game minute, then its stream, then its place in that stream:
    /// never by when a read happened to reach it, so the feed is the same on every run. Each
    /// stream is in game-time order, but they are read one after another, so one can run ahead
    /// of another: a line waits until both dense streams have shown something later.
    pub(crate) async fn read(
        &mut self,
        sink: &mut impl FnMut(String),
    ) -> Result<(usize, bool), DriveError> {
        let wait = if self.finished {
            Duration::ZERO
        } else {
            FEED_WAIT
        };
        let mut batch: Vec<(usize, Delivery)> = Vec::new();
        for (which, consumer) in self.consumers.iter_mut().enumerate() {
            let wait = if which == 0 { wait } else { Duration::ZERO };
            let read = consumer.next_batch(FEED_BATCH, wait).await?;
            // The feed's own group acknowledges what it read: nothing stays pending for it on
            // a Redis the demo shares.
            let ids: Vec<String> = read.iter().map(|d| d.id.clone()).collect();
            if !ids.is_empty() {
                consumer.ack(&ids).await?;
            }
            batch.extend(read.into_iter().map(|d| (which, d)));
        }
        for (which, message) in batch
            .iter()
            .filter_map(|(w, d)| Some((*w, serde_json::from_str::<Value>(&d.body).ok()?)))
        {
            let t = message
                .get("game_time")
                .and_then(Value::as_u64)
                .unwrap_or_default();
            if let Some(seen) = self.latest.get_mut(which) {
                *seen = (*seen).max(t);
            }
            if let Some(line) = feed_line(&self.names, &message) {
                self.pending.push((t, which, self.read_in[which], line));
            }
            self.read_in[which] += 1;
        }
        let drained = self.finished && batch.is_empty();
        self.pending.sort();
        let ready = if drained {
            self.pending.len()
        } else {
            let frontier = self.latest[0].min(self.latest[1]);
            self.pending.partition_point(|(t, _, _, _)| *t < frontier)
        };
        for (_, _, _, line) in self.pending.drain(..ready) {
            sink(line);
        }
        Ok((ready, drained))
    }
}

/// The closing line about the model: its calls, latency, deliveries and fallbacks by reason.
pub fn llm_summary(model: &str, counts: &WorkerCounts) -> String {
    let ms = |value: Option<u64>| value.map_or_else(|| "-".to_owned(), |v| format!("{v} ms"));
    let fallbacks: Vec<String> = counts
        .fallbacks_by_reason
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(reason, n)| format!("{} {n}", reason.as_str()))
        .collect();
    format!(
        "-- llm {model}: {} calls ({} answered, {} failed), latency p50 {} p99 {}; {} narratives delivered, {} discarded (no player left), {} kept the template; {} perceptions; fallbacks: {}",
        counts.calls_succeeded + counts.calls_failed,
        counts.calls_succeeded,
        counts.calls_failed,
        ms(counts.latency_p50_ms),
        ms(counts.latency_p99_ms),
        counts.narratives_delivered,
        counts.narratives_discarded,
        counts.narrations_skipped,
        counts.perceptions,
        if fallbacks.is_empty() {
            "none".to_owned()
        } else {
            fallbacks.join(", ")
        }
    )
}

/// The closing line about what the model cost (see [`crate::drive::spend::spend_line`]).
pub fn spend_summary(spend: &SpendCounts, npcs: usize, game_hours: f64) -> String {
    format!(
        "-- {}",
        crate::drive::spend::spend_line(spend, npcs, game_hours)
    )
}

fn clock_text(game_time: u64) -> String {
    format!("{:02}:{:02}", (game_time / 60) % 24, game_time % 60)
}

/// The NPCs a message lists under `key`, by name, joined with commas.
fn npc_list(names: &Names, message: &Value, key: &str) -> String {
    message
        .get(key)
        .and_then(Value::as_array)
        .map(|ids| {
            ids.iter()
                .filter_map(Value::as_str)
                .map(|id| names.npc(id))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// `line`, followed by the message's narration when a player witnessed it.
fn with_narration(message: &Value, line: String) -> String {
    match message.get("narration").and_then(Value::as_str) {
        Some(narration) => format!("{line} — {narration}"),
        None => line,
    }
}

/// The verb an interaction of `kind` reads as.
fn interaction_verb(kind: &str) -> &str {
    match kind {
        "conversation" => "talks with",
        "gossip" => "gossips with",
        "trade" => "trades with",
        "argument" => "argues with",
        "favor" => "asks a favour of",
        "intimidation" => "intimidates",
        "scheming" => "schemes with",
        "mentoring" => "teaches",
        "courtship" => "courts",
        other => other,
    }
}

/// One feed line for a bus message, or `None` for messages the feed leaves out.
fn feed_line(names: &Names, message: &Value) -> Option<String> {
    let text = |key: &str| message.get(key).and_then(Value::as_str).unwrap_or_default();
    let npc = names.npc(text("npc"));
    let what = match text("type") {
        "action_started" => format!(
            "{npc} starts {} at {}",
            text("action"),
            names.provider(text("provider"))
        ),
        "action_preempted" => format!("{npc} drops {} for {}", text("action"), text("by_action")),
        "action_interrupted" => format!(
            "{npc} breaks off {} to {}",
            text("action"),
            text("by_action")
        ),
        "bark" => format!("{npc}: \"{}\"", text("text")),
        "goal_created" => format!("{npc} resolves to {}", text("description")),
        "goal_completed" => format!("{npc} has managed to {}", text("description")),
        "goal_failed" => format!("{npc} gives up trying to {}", text("description")),
        "goal_blocked" => format!(
            "{npc} sees no way to {} ({})",
            text("description"),
            text("reason").replace('_', " ")
        ),
        "social" => with_narration(
            message,
            format!(
                "{npc} joins {} ({})",
                npc_list(names, message, "with"),
                text("action")
            ),
        ),
        "narrative_ready" => format!("  ~ {}", text("text")),
        "interaction" => with_narration(
            message,
            format!(
                "{npc} {} {}",
                interaction_verb(text("kind")),
                names.npc(text("with"))
            ),
        ),
        "rumour_heard" if message["believed"] == true => format!(
            "{npc} believes what {} says about {}",
            names.npc(text("teller")),
            names.npc(text("subject"))
        ),
        "story_signal" => format!(
            "[story] {} ({}) at {}, importance {:.2}",
            text("signal_type").replace('_', " "),
            npc_list(names, message, "npcs"),
            text("location"),
            message["importance"].as_f64().unwrap_or_default()
        ),
        "social_interaction" => format!(
            "{npc} suffers a {} by {}",
            text("kind"),
            names.npc(text("source"))
        ),
        "npc_demoted" => format!("{npc} is demoted for review ({})", text("reason")),
        "archetype_circuit_breaker" => format!("archetype {} is held back", text("archetype")),
        "tick_budget_exceeded" => "the tick ran over its budget".to_owned(),
        _ => return None,
    };
    let game_time = message
        .get("game_time")
        .and_then(Value::as_u64)
        .unwrap_or_default();
    Some(format!("{}  {what}", clock_text(game_time)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::world_file::embedded_village;

    #[test]
    fn feed_lines_read_like_a_story() {
        let names = Names::new(&embedded_village().expect("village"));
        let message: Value = serde_json::from_str(
            r#"{"v":1,"type":"action_started","id":"x","zone":"village","game_time":432,"npc":"bram","provider":"forge","action":"hammer_horseshoes","utility":1.0,"room":"forge"}"#,
        )
        .expect("json");
        assert_eq!(
            feed_line(&names, &message).as_deref(),
            Some("07:12  Bram the smith starts hammer_horseshoes at the forge")
        );
        let skipped: Value =
            serde_json::from_str(r#"{"type":"level_changed","game_time":1}"#).expect("json");
        assert_eq!(feed_line(&names, &skipped), None);
    }
}
