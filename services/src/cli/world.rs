//! `geppetto simulate --world FILE --days N` and `geppetto brain --world FILE --npc ID`: a
//! whole zone run offline, every NPC at full detail (an observer stands in every room), no bus
//! and no wall-clock budget — for designers checking how a village lives over days, and for
//! looking inside one NPC's head at a moment.
//!
//! While simulating, the zone's social fabric runs beside its tick (NPCs meet, talk, trade,
//! argue, scheme, witness thefts and spread rumours, every `step_every_ticks`) and the story
//! detector reads what happens — the fabric's events and the zone's goal lifecycle — every
//! `every_ticks`; the summary lists the social life and the signal types that emerged. Nothing
//! is scripted: every interaction and every signal comes from the NPCs' own choices.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use super::error::CommandError;
use crate::bus::envelope::{WorldEvent, WorldMessage, header};
use crate::content::profiles::ProfileLibrary;
use crate::content::sets::SetLibrary;
use crate::content::world_file::{WorldFile, embedded_village, load_world_file};
use crate::zone::brain::{BRAIN_TOP_CANDIDATES, Brain};
use crate::zone::isolation::IsolationState;
use crate::zone::{IntegrationConfig, TickInputs, Zone, ZoneConfig, ZoneOutput};

/// Game ticks handed to the zone per clock event while simulating (one game hour).
const TICKS_PER_CLOCK_EVENT: u64 = 60;

/// The world at `path` (a file or a directory), or the embedded village for `village`.
pub fn world(path: &str) -> Result<WorldFile, CommandError> {
    if path == "village" && !Path::new(path).exists() {
        return embedded_village().map_err(|e| CommandError::BadInput(e.to_string()));
    }
    // A world is a file or a directory of section files; `worlds/town` may name `town.yaml`.
    let with_extension = format!("{path}.yaml");
    let file = if !Path::new(path).exists() && Path::new(&with_extension).is_file() {
        with_extension.as_str()
    } else {
        path
    };
    load_world_file(Path::new(file)).map_err(|e| CommandError::BadInput(e.to_string()))
}

/// The player id of the observer standing in `room`.
fn observer(room: &str) -> String {
    format!("observer-{room}")
}

/// A zone with an observer in every room and the governor's budget out of the way.
fn offline_zone(world: &WorldFile, profiles: &ProfileLibrary) -> Result<Zone, CommandError> {
    let mut config = ZoneConfig::default();
    config.governor.tick_budget_ms_soft = f64::MAX;
    config.governor.tick_budget_ms_hard = f64::MAX;
    config.tick.npc_budget_ms = f64::MAX;
    config.integration = IntegrationConfig::simulated();
    let sets = SetLibrary::embedded().map_err(|e| CommandError::BadInput(e.to_string()))?;
    let mut zone = Zone::new(world, profiles, &sets, config, IsolationState::default())
        .map_err(|e| CommandError::BadInput(e.to_string()))?;
    let mut out = ZoneOutput::default();
    let clock = crate::runtime::wall_clock();
    for room in &world.rooms {
        let message = WorldMessage {
            header: header(observer(&room.id), &zone.name, zone.game_time),
            event: WorldEvent::PlayerEntered {
                player: observer(&room.id),
                room: room.id.clone(),
            },
        };
        zone.apply(&message, &TickInputs::live(&clock), &mut out);
    }
    Ok(zone)
}

/// Per-NPC tallies of a run.
#[derive(Default)]
struct Tally {
    actions: usize,
    ticks: usize,
    critical_ticks: usize,
    scheduled_ticks: usize,
    adherent_ticks: usize,
    goals_completed: usize,
    goals_failed: usize,
    barks: usize,
}

/// What the zone's social life produced, read from its messages like any subscriber would.
#[derive(Default)]
struct SocialTally {
    interactions: BTreeMap<String, usize>,
    witnessed: usize,
    rumours_heard: usize,
    rumours_believed: usize,
    signals: BTreeMap<String, usize>,
}

impl SocialTally {
    fn count(&mut self, message: &Value) {
        match message["type"].as_str() {
            Some("interaction") => {
                let kind = message["kind"].as_str().unwrap_or_default().to_owned();
                *self.interactions.entry(kind).or_default() += 1;
                self.witnessed += usize::from(message["witnessed"] == true);
            }
            Some("rumour_heard") => {
                self.rumours_heard += 1;
                self.rumours_believed += usize::from(message["believed"] == true);
            }
            Some("story_signal") => {
                let kind = message["signal_type"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                *self.signals.entry(kind).or_default() += 1;
            }
            _ => {}
        }
    }

    fn summary(&self, out: &mut String) {
        let total: usize = self.interactions.values().sum();
        let _ = writeln!(
            out,
            "social life: {total} interactions ({}), {} seen by a player; {} rumours heard, {} believed",
            listed(&self.interactions, |n| n.to_string()),
            self.witnessed,
            self.rumours_heard,
            self.rumours_believed
        );
        let raised: usize = self.signals.values().sum();
        let _ = write!(
            out,
            "story signals: {raised} raised, {} distinct types: {}",
            self.signals.len(),
            listed(&self.signals, |n| format!("×{n}"))
        );
    }
}

/// `name count` pairs joined by commas (`count` written by `show`).
fn listed(counts: &BTreeMap<String, usize>, show: impl Fn(usize) -> String) -> String {
    counts
        .iter()
        .map(|(name, n)| format!("{name} {}", show(*n)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn advance(
    zone: &mut Zone,
    ticks: u64,
    mut on_tick: impl FnMut(&mut Zone, &[(crate::bus::StreamKind, String)]),
) {
    let target = zone.game_time + ticks;
    let clock = crate::runtime::wall_clock();
    while zone.game_time < target {
        let step_to = (zone.game_time + 1).min(target);
        let mut out = ZoneOutput::default();
        let message = WorldMessage {
            header: header(format!("clock-{step_to}"), &zone.name, step_to),
            event: WorldEvent::TimeAdvanced,
        };
        zone.apply(&message, &TickInputs::live(&clock), &mut out);
        on_tick(zone, &out.messages);
    }
}

/// How long and under which seed and profiles a world runs offline.
pub struct WorldRun {
    /// Game hours to run.
    pub hours: f64,
    /// Replaces the world file's seed.
    pub seed: Option<u64>,
    /// The profiles the world's `profile` names are looked up in.
    pub profiles: ProfileLibrary,
}

/// Runs `world` for `run.hours` game hours and renders a summary per NPC: actions started,
/// share of scheduled time spent at the schedule's place, share of time with a need critical,
/// goals completed and failed, barks.
pub fn simulate_world(world_path: &str, run: &WorldRun) -> Result<String, CommandError> {
    let hours = run.hours;
    if !(hours.is_finite() && hours > 0.0) {
        return Err(CommandError::BadInput(
            "--days/--hours: must be a positive number".into(),
        ));
    }
    let mut world = world(world_path)?;
    if let Some(seed) = run.seed {
        world.seed = seed;
    }
    let mut zone = offline_zone(&world, &run.profiles)?;
    let mut social = SocialTally::default();
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let ticks = (hours * 60.0).round() as u64;
    let progress = super::progress::bar(
        ticks.div_ceil(TICKS_PER_CLOCK_EVENT),
        "simulating",
        "game hours",
    );
    let mut clock = 0;
    while clock < ticks {
        progress.inc(1);
        let step = TICKS_PER_CLOCK_EVENT.min(ticks - clock);
        advance(&mut zone, step, |zone, messages| {
            for (_, text) in messages {
                let Ok(message) = serde_json::from_str::<Value>(text) else {
                    continue;
                };
                social.count(&message);
                let npc = message["npc"].as_str().unwrap_or_default().to_owned();
                let tally = tallies.entry(npc).or_default();
                match (message["type"].as_str(), message["event"].as_str()) {
                    (Some("action_started"), _) => tally.actions += 1,
                    (Some("bark"), _) => tally.barks += 1,
                    (Some("goal_completed"), _) => tally.goals_completed += 1,
                    (Some("goal_failed"), _) => tally.goals_failed += 1,
                    _ => {}
                }
            }
            for (agent, meta) in zone.agents.iter().zip(&zone.meta) {
                let tally = tallies.entry(agent.agent.id.clone()).or_default();
                let _ = meta;
                tally.ticks += 1;
                if agent.agent.considerations.iter().any(|c| c.is_critical()) {
                    tally.critical_ticks += 1;
                }
                if let Some((place, _)) = &agent.agent.preferred_provider {
                    tally.scheduled_ticks += 1;
                    if agent.running.as_ref().is_some_and(|r| &r.provider == place) {
                        tally.adherent_ticks += 1;
                    }
                }
            }
        });
        clock += step;
    }
    progress.finish_and_clear();
    tallies.retain(|npc, tally| !npc.is_empty() && tally.ticks > 0);
    let percent = |part: usize, whole: usize| {
        if whole == 0 {
            "-".to_owned()
        } else {
            format!("{:.0} %", 100.0 * part as f64 / whole as f64)
        }
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} for {} game days ({} NPCs, every one at full detail){}",
        world.zone,
        hours / 24.0,
        tallies.len(),
        run.seed
            .map_or(String::new(), |seed| format!(", seed {seed}"))
    );
    let _ = writeln!(
        out,
        "{:<10} {:>8} {:>10} {:>9} {:>7} {:>7} {:>6}",
        "npc", "actions", "adherence", "critical", "goals+", "goals-", "barks"
    );
    let (mut scheduled, mut adherent, mut completed, mut failed) = (0, 0, 0, 0);
    for (npc, t) in &tallies {
        let _ = writeln!(
            out,
            "{npc:<10} {:>8} {:>10} {:>9} {:>7} {:>7} {:>6}",
            t.actions,
            percent(t.adherent_ticks, t.scheduled_ticks),
            percent(t.critical_ticks, t.ticks),
            t.goals_completed,
            t.goals_failed,
            t.barks
        );
        scheduled += t.scheduled_ticks;
        adherent += t.adherent_ticks;
        completed += t.goals_completed;
        failed += t.goals_failed;
    }
    let _ = writeln!(
        out,
        "schedule adherence {} of scheduled time; goals completed {completed}, failed {failed}",
        percent(adherent, scheduled)
    );
    social.summary(&mut out);
    Ok(out)
}

/// The brain view of `npc` in a running service, from its admin API at `admin`
/// (`http://127.0.0.1:7878`): once, or with `follow` every `every` until `count` views (or
/// forever), each handed to `write`.
pub fn brain_live(
    admin: &str,
    npc: &str,
    json: bool,
    follow: Option<(std::time::Duration, Option<u64>)>,
    mut write: impl FnMut(&str),
) -> Result<(), CommandError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CommandError::Environment(e.to_string()))?;
    let format = if json { "json" } else { "text" };
    let url = format!(
        "{}/npcs/{npc}/brain?format={format}",
        admin.trim_end_matches('/')
    );
    let client = reqwest::Client::new();
    let mut shown = 0u64;
    runtime.block_on(async {
        loop {
            let response = client
                .get(&url)
                .send()
                .await
                .map_err(|e| CommandError::Environment(format!("{url}: {e}")))?;
            if response.status() == reqwest::StatusCode::NOT_FOUND {
                return Err(CommandError::BadInput(format!(
                    "--npc: no NPC `{npc}` at {admin}"
                )));
            }
            let view = response
                .text()
                .await
                .map_err(|e| CommandError::Environment(format!("{url}: {e}")))?;
            write(view.trim_end());
            shown += 1;
            let Some((every, count)) = follow else {
                return Ok(());
            };
            if count.is_some_and(|count| shown >= count) {
                return Ok(());
            }
            write("");
            tokio::time::sleep(every).await;
        }
    })
}

/// Runs `world` for `hours` and prints the debug-brain view of `npc`.
pub fn brain_view(
    world_path: &str,
    npc: &str,
    hours: f64,
    json: bool,
) -> Result<String, CommandError> {
    if !(hours.is_finite() && hours >= 0.0) {
        return Err(CommandError::BadInput(
            "--hours: must be a non-negative number".into(),
        ));
    }
    let world = world(world_path)?;
    let profiles = ProfileLibrary::embedded().map_err(|e| CommandError::BadInput(e.to_string()))?;
    let mut zone = offline_zone(&world, &profiles)?;
    advance(&mut zone, (hours * 60.0).round() as u64, |_, _| {});
    let view = Brain::of(&zone, npc, BRAIN_TOP_CANDIDATES).ok_or_else(|| {
        CommandError::BadInput(format!("--npc: no NPC `{npc}` in {}", world.zone))
    })?;
    Ok(if json {
        serde_json::to_string_pretty(&view).unwrap_or_default()
    } else {
        view.to_string()
    })
}
