//! The world report of `geppetto simulate --world … --report FILE.html`: one self-contained
//! page (no external assets) with the run's scorecard — every mark, met or missed, and each
//! week's figures with the drift from the first to the last — then, per NPC, its sleep and
//! gold, a timeline of what it did hour by hour coloured by activity with its scheduled block
//! beside it, its needs over the days with critical stretches marked, and the story signals on
//! the same time axis. [`Timeline`] records a run once an hour; [`Timeline::html`] writes the
//! page with the card (the inspector's charting, shared).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::history::scorecard::Scorecard;
use crate::zone::Zone;

/// The activity an action's tags put it in, in order of precedence (the page's colours).
const ACTIVITIES: [&str; 8] = [
    "sleep", "rest", "food", "work", "social", "leisure", "chore", "craft",
];

/// One NPC's hour.
#[derive(Clone, Debug, Serialize)]
struct Hour {
    /// What it was doing at the hour (`provider/action`), if anything.
    action: Option<String>,
    /// The activity its action's tags make it (`other` when none fits).
    activity: Option<&'static str>,
    /// The schedule's block in force, if it has one.
    block: Option<String>,
    /// Each need's level, 0–1.
    needs: BTreeMap<String, f64>,
    /// Whether a need was critical.
    critical: bool,
}

/// A story signal on the time axis.
#[derive(Clone, Debug, Serialize)]
struct Signal {
    /// Game hours from the start of the run.
    hour: f64,
    /// Its type.
    signal_type: String,
    /// The NPCs it names.
    npcs: Vec<String>,
}

/// A run recorded for the report.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Timeline {
    /// The zone.
    zone: String,
    /// The game hour the run started at.
    start_hour: f64,
    /// Each NPC's hours, in order.
    npcs: BTreeMap<String, Vec<Hour>>,
    /// The story signals raised.
    signals: Vec<Signal>,
}

impl Timeline {
    /// An empty timeline of `zone`, starting now.
    pub fn new(zone: &Zone) -> Self {
        Self {
            zone: zone.name.clone(),
            start_hour: zone.game_time as f64 * zone.full_tick_hours(),
            ..Self::default()
        }
    }

    /// Notes the story signals of one tick's messages.
    pub fn signals(&mut self, zone: &Zone, messages: &[Value]) {
        let now = zone.game_time as f64 * zone.full_tick_hours() - self.start_hour;
        for message in messages.iter().filter(|m| m["type"] == "story_signal") {
            self.signals.push(Signal {
                hour: (now * 100.0).round() / 100.0,
                signal_type: message["signal_type"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                npcs: message["npcs"]
                    .as_array()
                    .map(|npcs| {
                        npcs.iter()
                            .filter_map(|n| n.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default(),
            });
        }
    }

    /// Records every NPC's hour as it stands now.
    pub fn hour(&mut self, zone: &Zone) {
        for agent in &zone.agents {
            let running = agent.running.as_ref();
            let activity = running.map(|r| {
                ACTIVITIES
                    .into_iter()
                    .find(|activity| {
                        r.action
                            .tags
                            .iter()
                            .any(|tag| zone.vocabulary.name(*tag) == *activity)
                    })
                    .unwrap_or("other")
            });
            let needs = agent
                .agent
                .considerations
                .iter()
                .filter(|c| c.max() > c.min())
                .map(|c| {
                    let level = (c.value - c.min()) / (c.max() - c.min());
                    (
                        zone.vocabulary.name(c.name).to_owned(),
                        (level * 1000.0).round() / 1000.0,
                    )
                })
                .collect();
            self.npcs
                .entry(agent.agent.id.clone())
                .or_default()
                .push(Hour {
                    action: running.map(|r| format!("{}/{}", r.provider, r.action.id)),
                    activity,
                    block: agent
                        .layers
                        .schedule
                        .as_ref()
                        .and_then(|s| s.current)
                        .map(|block| zone.vocabulary.name(block).to_owned()),
                    needs,
                    critical: agent.agent.considerations.iter().any(|c| c.is_critical()),
                });
        }
    }

    /// The page: this timeline and `card` as data in the report template, with the shared
    /// charting.
    pub fn html(&self, card: &Scorecard) -> String {
        let page = serde_json::json!({ "timeline": self, "card": card });
        let data = serde_json::to_string(&page)
            .unwrap_or_default()
            // Inside a script element a `</` would end it.
            .replace("</", "<\\/");
        crate::http::pages::with_charts(include_str!("../../assets/report.html")).replacen(
            "/*DATA*/null",
            &data,
            1,
        )
    }
}
