//! `geppetto whatif`: a recorded window replayed twice — as it was, and with parameters
//! changed — and one NPC's two timelines side by side, the first divergence marked.
//!
//! A change is `PATH=VALUE`: `tuning.FIELD` (the world's profile's tuning, e.g.
//! `tuning.temperature=0.2`), `profile.PATH` (any field of that profile, e.g.
//! `profile.consideration_weights.HUNGER=2`), `archetype.NAME.PATH` (a field of an archetype as
//! resolved, e.g. `archetype.blacksmith.traits.trade=3`), `set.NAME.PATH` (a field of a reactive
//! utility set, e.g. `set.villager.commitment_bonus=0`) or `need.NAME` (the NPC's consideration
//! value at the window's start, e.g. `need.HUNGER=5`). Both runs are offline replays of the same log from
//! the same start (the world file or a stored snapshot): the live world is never touched.

use serde::Serialize;
use serde_json::Value;

use super::error::HistoryError;
use super::replay::{ReplayContent, ReplayOptions, Window, replay_window};
use crate::content::profiles::DEFAULT_PROFILE;
use crate::zone::Zone;

/// One parameter change.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// A field of the world's profile, by dotted path below the profile.
    Profile {
        /// `tuning.temperature`, `consideration_weights.HUNGER`…
        path: Vec<String>,
        /// The new value.
        value: Value,
    },
    /// A field of an archetype as resolved (its parents folded in).
    Archetype {
        /// Archetype name.
        name: String,
        /// Dotted path below it.
        path: Vec<String>,
        /// The new value.
        value: Value,
    },
    /// A field of a reactive utility set file.
    Set {
        /// Set name.
        name: String,
        /// Dotted path below it.
        path: Vec<String>,
        /// The new value.
        value: Value,
    },
    /// The NPC's consideration value at the start of the window.
    Need {
        /// Consideration name.
        name: String,
        /// Its value.
        value: f64,
    },
}

impl std::str::FromStr for Change {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (key, raw) = text
            .split_once('=')
            .ok_or_else(|| format!("`{text}`: expected PATH=VALUE"))?;
        let value = serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()));
        let mut parts = key.split('.').map(str::to_owned);
        match parts.next().as_deref() {
            Some("tuning") => {
                let rest: Vec<String> = parts.collect();
                if rest.len() != 1 {
                    return Err(format!("`{key}`: expected tuning.FIELD"));
                }
                Ok(Self::Profile {
                    path: vec!["tuning".into(), rest[0].clone()],
                    value,
                })
            }
            Some("profile") => {
                let path: Vec<String> = parts.collect();
                if path.is_empty() || path.iter().any(String::is_empty) {
                    return Err(format!("`{key}`: expected profile.FIELD[.KEY]"));
                }
                Ok(Self::Profile { path, value })
            }
            Some(kind @ ("archetype" | "set")) => {
                let rest: Vec<String> = parts.collect();
                if rest.len() < 2 || rest.iter().any(String::is_empty) {
                    return Err(format!("`{key}`: expected {kind}.NAME.FIELD[.KEY]"));
                }
                let (name, path) = (rest[0].clone(), rest[1..].to_vec());
                Ok(if kind == "set" {
                    Self::Set { name, path, value }
                } else {
                    Self::Archetype { name, path, value }
                })
            }
            Some("need") => {
                let name: Vec<String> = parts.collect();
                let value = value
                    .as_f64()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| format!("`{text}`: a need's value must be a finite number"))?;
                match name.as_slice() {
                    [name] if !name.is_empty() => Ok(Self::Need {
                        name: name.clone(),
                        value,
                    }),
                    _ => Err(format!("`{key}`: expected need.NAME")),
                }
            }
            _ => Err(format!(
                "`{key}`: a change starts with `tuning.`, `profile.`, `archetype.`, `set.` or `need.`"
            )),
        }
    }
}

/// One step of an NPC's timeline: an intent it was given.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Step {
    /// Game time, ticks.
    pub game_time: u64,
    /// Intent type (`use`, `navigate`, `social`, `bark`, `cancel`…).
    pub intent: String,
    /// What: provider/action, partner, line or cancelled id.
    pub what: String,
}

/// Both timelines and where they part.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WhatIfReport {
    /// The NPC.
    pub npc: String,
    /// The recorded window both runs replayed.
    pub window: Window,
    /// The NPC emitted no intent in the window as recorded, so there was nothing to part
    /// from (a window that starts at a snapshot taken just before it ends, or an NPC that did
    /// nothing in it): no divergence means nothing then.
    pub empty: bool,
    /// As recorded.
    pub baseline: Vec<Step>,
    /// With the changes.
    pub changed: Vec<Step>,
    /// Index of the first step that differs (`None`: the change made no difference here).
    pub first_divergence: Option<usize>,
}

/// Sets `value` at the dotted `path` inside `document`, creating tables on the way.
fn set_path(document: &mut Value, path: &[String], value: &Value) -> Result<(), String> {
    let mut at = document;
    for segment in path {
        if at.is_null() {
            *at = Value::Object(serde_json::Map::new());
        }
        let Value::Object(fields) = at else {
            return Err(format!(
                "{}: `{segment}` is inside a value, not a table",
                path.join(".")
            ));
        };
        at = fields.entry(segment.clone()).or_insert(Value::Null);
    }
    *at = value.clone();
    Ok(())
}

/// The shipped content with `changes` applied to the world's profile, archetypes and sets.
fn changed_content(
    options: &ReplayOptions,
    changes: &[Change],
) -> Result<ReplayContent, HistoryError> {
    let bad = HistoryError::Refused;
    let mut content = ReplayContent::embedded()?;
    let world = crate::content::world_file::load_world(&options.world)
        .map_err(|e| HistoryError::Refused(e.to_string()))?;
    let profile_name = world
        .profile
        .as_deref()
        .unwrap_or(DEFAULT_PROFILE)
        .to_owned();
    for change in changes {
        match change {
            Change::Profile { path, value } => {
                let profile = content.profiles.get(&profile_name).ok_or_else(|| {
                    bad(format!("the world's profile `{profile_name}` is unknown"))
                })?;
                let mut document = serde_json::to_value(profile).map_err(|e| bad(e.to_string()))?;
                set_path(&mut document, path, value).map_err(|e| bad(format!("profile.{e}")))?;
                let patched = serde_json::from_value(document)
                    .map_err(|e| bad(format!("the changed profile `{profile_name}`: {e}")))?;
                content
                    .profiles
                    .replace(patched)
                    .map_err(|e| bad(e.to_string()))?;
            }
            Change::Archetype { name, path, value } => {
                let spec = content
                    .archetypes
                    .get(name)
                    .ok_or_else(|| bad(format!("archetype.{name}: no such archetype")))?;
                let mut document = serde_json::to_value(spec).map_err(|e| bad(e.to_string()))?;
                set_path(&mut document, path, value)
                    .map_err(|e| bad(format!("archetype.{name}.{e}")))?;
                let patched = serde_json::from_value(document)
                    .map_err(|e| bad(format!("the changed archetype `{name}`: {e}")))?;
                content.archetypes.replace(name, patched);
            }
            Change::Set { name, path, value } => {
                let set = content
                    .sets
                    .get(name)
                    .ok_or_else(|| bad(format!("set.{name}: no such set")))?;
                let mut document =
                    serde_json::to_value(&set.spec).map_err(|e| bad(e.to_string()))?;
                set_path(&mut document, path, value).map_err(|e| bad(format!("set.{name}.{e}")))?;
                content
                    .sets
                    .replace_from_text(&format!("set.{name} (changed)"), &document.to_string())
                    .map_err(|e| bad(e.to_string()))?;
            }
            Change::Need { .. } => {}
        }
    }
    Ok(content)
}

fn set_needs(zone: &mut Zone, npc: &str, changes: &[Change]) -> Result<(), HistoryError> {
    let index = zone
        .npc_index(npc)
        .ok_or_else(|| HistoryError::Refused(format!("--npc `{npc}`: no such NPC in the zone")))?;
    for change in changes {
        let Change::Need { name, value } = change else {
            continue;
        };
        let symbol = zone.vocabulary.lookup(name);
        let consideration = zone.agents[index]
            .agent
            .considerations
            .iter_mut()
            .find(|c| Some(c.name) == symbol)
            .ok_or_else(|| {
                HistoryError::Refused(format!("need.{name}: `{npc}` has no such need"))
            })?;
        consideration.value = value.clamp(consideration.min(), consideration.max());
    }
    Ok(())
}

/// The step of `npc`'s timeline an intent is, if it is `npc`'s.
fn step(line: &str, npc: &str) -> Option<Step> {
    let m = serde_json::from_str::<Value>(line).ok()?;
    if m.get("npc").and_then(Value::as_str) != Some(npc) {
        return None;
    }
    let text = |key: &str| {
        m.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let intent = text("type");
    let what = match intent.as_str() {
        "use" => format!("{}/{}", text("provider"), text("action")),
        "navigate" => text("provider"),
        "social" => {
            let with: Vec<&str> = m
                .get("with")
                .and_then(Value::as_array)
                .map(|w| w.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            format!("{} with {}", text("action"), with.join(", "))
        }
        "bark" => text("text"),
        "reactive" => text("action"),
        "cancel" => format!("{} ({})", text("cancelled"), text("reason")),
        _ => String::new(),
    };
    Some(Step {
        game_time: m
            .get("game_time")
            .and_then(Value::as_u64)
            .unwrap_or_default(),
        intent,
        what,
    })
}

/// Replays the window with `content` after `adjust`: its bounds and `npc`'s timeline in it
/// (the other intents are dropped as they come).
fn timeline(
    options: &ReplayOptions,
    content: &ReplayContent,
    adjust: impl FnOnce(&mut Zone) -> Result<(), HistoryError>,
    npc: &str,
    ticks: Option<u64>,
) -> Result<(Window, Vec<Step>), HistoryError> {
    let mut steps = Vec::new();
    let run = replay_window(options, content, adjust, ticks, false, |applied| {
        steps.extend(applied.intents.iter().filter_map(|line| step(line, npc)));
        Ok(())
    })?;
    Ok((run.window, steps))
}

/// Replays the window as recorded and with `changes`; `ticks` bounds it (all of the log when
/// `None`).
pub fn what_if(
    options: &ReplayOptions,
    npc: &str,
    changes: &[Change],
    ticks: Option<u64>,
) -> Result<WhatIfReport, HistoryError> {
    if changes.is_empty() {
        return Err(HistoryError::Refused(
            "give at least one --set PATH=VALUE".into(),
        ));
    }
    let check_npc = |zone: &mut Zone| set_needs(zone, npc, &[]);
    let (window, baseline) = timeline(options, &ReplayContent::embedded()?, check_npc, npc, ticks)?;
    let content = changed_content(options, changes)?;
    let (_, changed) = timeline(
        options,
        &content,
        |zone| set_needs(zone, npc, changes),
        npc,
        ticks,
    )?;
    let first_divergence = baseline
        .iter()
        .zip(&changed)
        .position(|(a, b)| a != b)
        .or_else(|| (baseline.len() != changed.len()).then(|| baseline.len().min(changed.len())));
    Ok(WhatIfReport {
        npc: npc.to_owned(),
        window,
        empty: baseline.is_empty(),
        baseline,
        changed,
        first_divergence,
    })
}

/// The report as two columns, the first divergence marked `>>`.
pub fn report_text(report: &WhatIfReport) -> String {
    let clock = |t: u64| format!("{:02}:{:02}", (t / 60) % 24, t % 60);
    let cell = |step: Option<&Step>| {
        step.map_or(String::new(), |s| {
            format!("{} {} {}", clock(s.game_time), s.intent, s.what)
        })
    };
    let mut lines = vec![window_text(&report.window, clock)];
    lines.push(format!(
        "{:<3}{:<48} | with the change",
        "",
        format!("{} as recorded", report.npc)
    ));
    let rows = report.baseline.len().max(report.changed.len());
    for row in 0..rows {
        let mark = if report.first_divergence == Some(row) {
            ">> "
        } else {
            "   "
        };
        lines.push(format!(
            "{mark}{:<48} | {}",
            cell(report.baseline.get(row)),
            cell(report.changed.get(row))
        ));
    }
    lines.push(match report.first_divergence {
        Some(row) => format!("first divergence at step {row}"),
        None if report.empty => format!(
            "nothing to compare: {} emitted no intent in this window; replay a longer one \
             (from the world file, or an older snapshot)",
            report.npc
        ),
        None => "no divergence: the change made no difference in this window".into(),
    });
    lines.join("\n")
}

/// One line naming the window: where it starts, its game times and how many events.
fn window_text(window: &Window, clock: impl Fn(u64) -> String) -> String {
    let start = match window.snapshot {
        Some(sequence) => format!("snapshot {sequence}"),
        None => "the world file".to_owned(),
    };
    format!(
        "window: from {start}, game time {} to {} (ticks {}..{}), {} world events",
        clock(window.from_game_time),
        clock(window.to_game_time),
        window.from_game_time,
        window.to_game_time,
        window.events
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_parse_by_prefix_and_refuse_the_rest() {
        assert_eq!(
            "tuning.temperature=0.2".parse(),
            Ok(Change::Profile {
                path: vec!["tuning".into(), "temperature".into()],
                value: serde_json::json!(0.2)
            })
        );
        assert_eq!(
            "need.HUNGER=5".parse(),
            Ok(Change::Need {
                name: "HUNGER".into(),
                value: 5.0
            })
        );
        assert!(
            "profile.consideration_weights.HUNGER=2"
                .parse::<Change>()
                .is_ok()
        );
        assert_eq!(
            "set.villager.commitment_bonus=0".parse(),
            Ok(Change::Set {
                name: "villager".into(),
                path: vec!["commitment_bonus".into()],
                value: serde_json::json!(0)
            })
        );
        assert!(matches!(
            "archetype.blacksmith.traits.trade=3".parse(),
            Ok(Change::Archetype { ref name, ref path, .. }) if name == "blacksmith" && path.len() == 2
        ));
        for bad in [
            "temperature=2",
            "tuning=2",
            "need.HUNGER=lots",
            "need.HUNGER=NaN",
            "x",
        ] {
            assert!(bad.parse::<Change>().is_err(), "{bad}");
        }
    }
}
