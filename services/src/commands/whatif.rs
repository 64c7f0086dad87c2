//! `geppetto whatif`: a recorded window replayed twice — as it was, and with parameters
//! changed — and one NPC's two timelines side by side, the first divergence marked.
//!
//! A change is `PATH=VALUE`: `tuning.FIELD` (the world's profile's tuning, e.g.
//! `tuning.temperature=0.2`), `profile.PATH` (any field of that profile, e.g.
//! `profile.consideration_weights.HUNGER=2`) or `need.NAME` (the NPC's consideration value at
//! the window's start, e.g. `need.HUNGER=5`). Both runs are offline replays of the same log from
//! the same start (the world file or a stored snapshot): the live world is never touched.

use serde::Serialize;
use serde_json::Value;

use super::CommandError;
use super::replay::{ReplayOptions, replay_window};
use crate::content::profiles::{DEFAULT_PROFILE, ProfileLibrary};
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
                "`{key}`: a change starts with `tuning.`, `profile.` or `need.`"
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
    /// As recorded.
    pub baseline: Vec<Step>,
    /// With the changes.
    pub changed: Vec<Step>,
    /// Index of the first step that differs (`None`: the change made no difference here).
    pub first_divergence: Option<usize>,
}

fn profile_library(
    options: &ReplayOptions,
    changes: &[Change],
) -> Result<ProfileLibrary, CommandError> {
    let bad = |e: String| CommandError::BadInput(e);
    let mut library = ProfileLibrary::embedded().map_err(|e| bad(e.to_string()))?;
    let world = super::world::world(&options.world)?;
    let name = world.profile.as_deref().unwrap_or(DEFAULT_PROFILE);
    let mut profile = serde_json::to_value(
        library
            .get(name)
            .ok_or_else(|| bad(format!("the world's profile `{name}` is unknown")))?,
    )
    .map_err(|e| bad(e.to_string()))?;
    let mut changed = false;
    for change in changes {
        let Change::Profile { path, value } = change else {
            continue;
        };
        changed = true;
        let mut at = &mut profile;
        for segment in path {
            if at.is_null() {
                *at = Value::Object(serde_json::Map::new());
            }
            let Value::Object(fields) = at else {
                return Err(bad(format!("profile.{}: not a table", path.join("."))));
            };
            at = fields.entry(segment.clone()).or_insert(Value::Null);
        }
        *at = value.clone();
    }
    if changed {
        let patched = serde_json::from_value(profile)
            .map_err(|e| bad(format!("the changed profile `{name}`: {e}")))?;
        library.replace(patched).map_err(|e| bad(e.to_string()))?;
    }
    Ok(library)
}

fn set_needs(zone: &mut Zone, npc: &str, changes: &[Change]) -> Result<(), CommandError> {
    let index = zone
        .npc_index(npc)
        .ok_or_else(|| CommandError::BadInput(format!("--npc `{npc}`: no such NPC in the zone")))?;
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
                CommandError::BadInput(format!("need.{name}: `{npc}` has no such need"))
            })?;
        consideration.value = value.clamp(consideration.min, consideration.max);
    }
    Ok(())
}

fn timeline(intents: &[String], npc: &str) -> Vec<Step> {
    intents
        .iter()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m.get("npc").and_then(Value::as_str) == Some(npc))
        .map(|m| {
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
            Step {
                game_time: m
                    .get("game_time")
                    .and_then(Value::as_u64)
                    .unwrap_or_default(),
                intent,
                what,
            }
        })
        .collect()
}

/// Replays the window as recorded and with `changes`; `ticks` bounds it (all of the log when
/// `None`).
pub fn what_if(
    options: &ReplayOptions,
    npc: &str,
    changes: &[Change],
    ticks: Option<u64>,
) -> Result<WhatIfReport, CommandError> {
    if changes.is_empty() {
        return Err(CommandError::BadInput(
            "give at least one --set PATH=VALUE".into(),
        ));
    }
    let embedded = ProfileLibrary::embedded().map_err(|e| CommandError::BadInput(e.to_string()))?;
    let check_npc = |zone: &mut Zone| set_needs(zone, npc, &[]);
    let baseline = replay_window(options, &embedded, check_npc, ticks)?;
    let changed_profiles = profile_library(options, changes)?;
    let changed = replay_window(
        options,
        &changed_profiles,
        |zone| set_needs(zone, npc, changes),
        ticks,
    )?;
    let baseline = timeline(&baseline.intents, npc);
    let changed = timeline(&changed.intents, npc);
    let first_divergence = baseline
        .iter()
        .zip(&changed)
        .position(|(a, b)| a != b)
        .or_else(|| (baseline.len() != changed.len()).then(|| baseline.len().min(changed.len())));
    Ok(WhatIfReport {
        npc: npc.to_owned(),
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
    let mut lines = vec![format!(
        "{:<3}{:<48} | with the change",
        "",
        format!("{} as recorded", report.npc)
    )];
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
        None => "no divergence: the change made no difference in this window".into(),
    });
    lines.join("\n")
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
