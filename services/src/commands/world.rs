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

use geppetto_core::Decider;
use geppetto_core::rng::{derive_seed, stable_hash};
use geppetto_core::social::{FabricConfig, SocialFabric, SocialPlace, SocialProfile, SocialStep};
use geppetto_core::story::{DetectorConfig, GoalChange, StoryDetector, StoryEvent, StoryEventKind};
use serde_json::Value;

use super::CommandError;
use crate::admin::{brain, brain_text};
use crate::bus::envelope::{WorldEvent, WorldMessage, header};
use crate::content::archetypes::ArchetypeLibrary;
use crate::content::profiles::ProfileLibrary;
use crate::content::sets::SetLibrary;
use crate::isolation::IsolationState;
use crate::world_file::{EMBEDDED_VILLAGE, WorldFile, load_world_file, parse_world_file};
use crate::zone::{Zone, ZoneConfig, ZoneOutput};

/// Game ticks handed to the zone per clock event while simulating (one game hour).
const TICKS_PER_CLOCK_EVENT: u64 = 60;

/// Candidates the brain view lists.
pub const BRAIN_TOP_CANDIDATES: usize = 5;

/// The world file at `path`, or the embedded village for `village`.
pub fn world(path: &str) -> Result<WorldFile, CommandError> {
    if path == "village" && !Path::new(path).exists() {
        let (file, text) = EMBEDDED_VILLAGE;
        return parse_world_file(file, text).map_err(|e| CommandError::BadInput(e.to_string()));
    }
    // `config/worlds/village` names `config/worlds/village.yaml`.
    let with_extension = format!("{path}.yaml");
    let file = if !Path::new(path).is_file() && Path::new(&with_extension).is_file() {
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
fn offline_zone(world: &WorldFile) -> Result<Zone, CommandError> {
    let mut config = ZoneConfig::default();
    config.governor.tick_budget_ms_soft = f64::MAX;
    config.governor.tick_budget_ms_hard = f64::MAX;
    let profiles = ProfileLibrary::embedded().map_err(|e| CommandError::BadInput(e.to_string()))?;
    let sets = SetLibrary::embedded().map_err(|e| CommandError::BadInput(e.to_string()))?;
    let mut zone = Zone::new(world, &profiles, &sets, config, IsolationState::default())
        .map_err(|e| CommandError::BadInput(e.to_string()))?;
    let mut out = ZoneOutput::default();
    for room in &world.rooms {
        let message = WorldMessage {
            header: header(observer(&room.id), &zone.name, zone.game_time),
            event: WorldEvent::PlayerEntered {
                player: observer(&room.id),
                room: room.id.clone(),
            },
        };
        zone.apply(&message, &mut out);
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

/// The zone's social fabric and story detector, run beside the offline tick.
struct SocialLife {
    fabric: SocialFabric,
    detector: StoryDetector,
    decider: Decider,
    seed: u64,
    interactions: BTreeMap<&'static str, usize>,
    witnessed: usize,
    rumours_heard: usize,
    rumours_believed: usize,
    signals: BTreeMap<&'static str, usize>,
}

impl SocialLife {
    /// A fabric over `zone`'s NPCs, each taking part as its archetype says (gossip tendency,
    /// initiative, influence, faction — the archetype's name when it names none).
    fn new(zone: &mut Zone, world_seed: u64) -> Result<Self, CommandError> {
        let library =
            ArchetypeLibrary::embedded().map_err(|e| CommandError::BadInput(e.to_string()))?;
        let mut fabric = SocialFabric::new(FabricConfig::default(), &mut zone.vocabulary);
        for (agent, meta) in zone.agents.iter().zip(&zone.meta) {
            let Some(archetype) = &meta.archetype else {
                continue;
            };
            let profile = library.get(archetype).map_or_else(
                || SocialProfile {
                    faction: Some(archetype.clone()),
                    ..SocialProfile::default()
                },
                |spec| SocialProfile {
                    gossip_tendency: spec.gossip_tendency,
                    social_initiative: spec.social_initiative,
                    influence: spec.social_influence,
                    faction: Some(spec.faction.clone().unwrap_or_else(|| archetype.clone())),
                },
            );
            fabric.set_profile(&agent.agent.id, profile);
        }
        Ok(Self {
            fabric,
            detector: StoryDetector::new(DetectorConfig::default()),
            decider: zone.decider().clone(),
            seed: derive_seed(world_seed, stable_hash("social")),
            interactions: BTreeMap::new(),
            witnessed: 0,
            rumours_heard: 0,
            rumours_believed: 0,
            signals: BTreeMap::new(),
        })
    }

    /// One tick: the social step when due, the zone's goal events, the detector.
    fn tick(&mut self, zone: &mut Zone, messages: &[(crate::bus::StreamKind, String)]) {
        let places: Vec<SocialPlace> = zone
            .meta
            .iter()
            .map(|meta| {
                let room = zone.room_name(meta.room).0.to_owned();
                SocialPlace {
                    players: vec![observer(&room)],
                    location: room,
                }
            })
            .collect();
        let now_hours = zone.world.now_hours;
        let step = if self.fabric.is_due(zone.tick) {
            self.fabric.step(
                &mut zone.agents,
                &places,
                now_hours,
                derive_seed(self.seed, zone.tick),
                &self.decider,
            )
        } else {
            SocialStep::default()
        };
        for interaction in &step.interactions {
            *self
                .interactions
                .entry(interaction.kind.as_str())
                .or_default() += 1;
            self.witnessed += usize::from(interaction.witnessed);
        }
        for event in step.events {
            if let StoryEventKind::RumourHeard { accepted, .. } = &event.kind {
                self.rumours_heard += 1;
                self.rumours_believed += usize::from(*accepted);
            }
            self.detector.push(event);
        }
        for (_, text) in messages {
            if let Some(event) = goal_event(zone, &places, text, now_hours) {
                self.detector.push(event);
            }
        }
        for signal in self.detector.tick(now_hours) {
            *self.signals.entry(signal.signal_type.as_str()).or_default() += 1;
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

/// A goal lifecycle message of the zone as a story event at its NPC's place.
fn goal_event(
    zone: &Zone,
    places: &[SocialPlace],
    text: &str,
    now_hours: f64,
) -> Option<StoryEvent> {
    let message = serde_json::from_str::<Value>(text).ok()?;
    let change = GoalChange::from_event_type(message["type"].as_str()?)?;
    let npc = message["npc"].as_str()?.to_owned();
    let place = zone
        .npc_index(&npc)
        .and_then(|i| places.get(i))
        .cloned()
        .unwrap_or_default();
    Some(StoryEvent {
        at_hours: now_hours,
        location: place.location,
        players: place.players,
        kind: StoryEventKind::Goal {
            npc,
            description: message["description"].as_str()?.to_owned(),
            change,
        },
    })
}

/// `name count` pairs joined by commas (`count` written by `show`).
fn listed(counts: &BTreeMap<&'static str, usize>, show: impl Fn(usize) -> String) -> String {
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
    while zone.game_time < target {
        let step_to = (zone.game_time + 1).min(target);
        let mut out = ZoneOutput::default();
        let message = WorldMessage {
            header: header(format!("clock-{step_to}"), &zone.name, step_to),
            event: WorldEvent::TimeAdvanced,
        };
        zone.apply(&message, &mut out);
        on_tick(zone, &out.messages);
    }
}

/// Runs `world` for `days` game days and renders a summary per NPC: actions started, share of
/// scheduled time spent at the schedule's place, share of time with a need critical, goals
/// completed and failed, barks.
pub fn simulate_world(world_path: &str, days: f64) -> Result<String, CommandError> {
    if !(days.is_finite() && days > 0.0) {
        return Err(CommandError::BadInput(
            "--days: must be a positive number".into(),
        ));
    }
    let world = world(world_path)?;
    let mut zone = offline_zone(&world)?;
    let mut social = SocialLife::new(&mut zone, world.seed)?;
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let ticks = (days * 24.0 * 60.0).round() as u64;
    let mut clock = 0;
    while clock < ticks {
        let step = TICKS_PER_CLOCK_EVENT.min(ticks - clock);
        advance(&mut zone, step, |zone, messages| {
            social.tick(zone, messages);
            for (_, text) in messages {
                let Ok(message) = serde_json::from_str::<Value>(text) else {
                    continue;
                };
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
        "{} for {days} game days ({} NPCs, every one at full detail)",
        world.zone,
        tallies.len()
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
    let mut zone = offline_zone(&world)?;
    advance(&mut zone, (hours * 60.0).round() as u64, |_, _| {});
    let view = brain(&zone, npc, BRAIN_TOP_CANDIDATES).ok_or_else(|| {
        CommandError::BadInput(format!("--npc: no NPC `{npc}` in {}", world.zone))
    })?;
    Ok(if json {
        serde_json::to_string_pretty(&view).unwrap_or_default()
    } else {
        brain_text(&view)
    })
}
