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
//!
//! Owns `brain`'s arguments ([`BrainArgs`]) and its run ([`brain`]); `simulate`'s are
//! [`super::simulate`]'s.

use crate::content::archetypes::ArchetypeLibrary;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use super::error::CommandError;
use super::output::print_line;
use super::report::Timeline;
use crate::bus::envelope::{WorldEvent, WorldMessage, header};
use crate::content::profiles::ProfileLibrary;
use crate::content::sets::SetLibrary;
use crate::content::world_file::{WorldFile, load_world};
use crate::history::scorecard::{Scorecard, SeedSpread};
use crate::zone::brain::{BRAIN_TOP_CANDIDATES, Brain};
use crate::zone::isolation::IsolationState;
use crate::zone::{IntegrationConfig, TickInputs, Zone, ZoneConfig, ZoneOutput};

/// Game ticks handed to the zone per clock event while simulating (one game hour).
const TICKS_PER_CLOCK_EVENT: u64 = 60;

/// The player id of the observer standing in `room`.
fn observer(room: &str) -> String {
    format!("observer-{room}")
}

/// A zone with `config`'s settings (the social fabric, the story detector, tiers…), an observer
/// in every room, geppetto's timer ending actions and the wall-clock budgets out of the way.
fn offline_zone(
    world: &WorldFile,
    profiles: &ProfileLibrary,
    archetypes: Option<&ArchetypeLibrary>,
    mut config: ZoneConfig,
) -> Result<Zone, CommandError> {
    config.governor.tick_budget_ms_soft = f64::MAX;
    config.governor.tick_budget_ms_hard = f64::MAX;
    config.tick.npc_budget_ms = f64::MAX;
    config.integration = IntegrationConfig::simulated();
    let sets = SetLibrary::embedded()?;
    let isolation = IsolationState::default();
    let mut zone = Zone::over(world, profiles, &sets, archetypes, config, isolation, &[])?;
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

/// How long, under which seeds and profiles a world runs offline, and how it is reported.
pub struct WorldRun {
    /// Game hours to run.
    pub hours: f64,
    /// The seeds to run it under, one run each (none: the world file's own).
    pub seeds: Vec<u64>,
    /// The profiles the world's `profile` names are looked up in.
    pub profiles: ProfileLibrary,
    /// The archetypes its residents are built from (none: the shipped ones).
    pub archetypes: Option<ArchetypeLibrary>,
    /// The whole scorecard as JSON instead of the text at a glance.
    pub json: bool,
    /// The zone settings of a service config (`--config`): the social fabric, the story
    /// detector and the rest; default the documented defaults.
    pub config: ZoneConfig,
    /// Write the village report page here (of the first seed's run).
    pub report: Option<std::path::PathBuf>,
}

/// Runs `world` for `run.hours` game hours under each seed and reports its scorecard (see
/// [`Scorecard`]): a line per NPC and the world's figures, or JSON; over several seeds, each
/// card and the spread of the world's figures.
pub fn simulate_world(world_path: &str, run: &WorldRun) -> Result<String, CommandError> {
    let hours = run.hours;
    if !(hours.is_finite() && hours > 0.0) {
        return Err(CommandError::BadInput(
            "--days/--hours: must be a positive number".into(),
        ));
    }
    let world = load_world(world_path)?;
    let seeds = if run.seeds.is_empty() {
        vec![world.seed]
    } else {
        run.seeds.clone()
    };
    let mut cards = Vec::with_capacity(seeds.len());
    for (n, &seed) in seeds.iter().enumerate() {
        let report = (n == 0).then_some(run.report.as_deref()).flatten();
        cards.push(score_world(
            &world,
            seed,
            hours,
            &run.profiles,
            run.archetypes.as_ref(),
            &run.config,
            report,
        )?);
    }
    Ok(match cards.as_slice() {
        [card] if run.json => serde_json::to_string_pretty(card)?,
        [card] => card.text(&world.zone),
        _ => {
            let spread = SeedSpread::of(cards);
            if run.json {
                serde_json::to_string_pretty(&spread)?
            } else {
                let mut out = String::new();
                for card in &spread.runs {
                    let _ = writeln!(out, "{}\n", card.text(&world.zone));
                }
                out.push_str(&spread.text());
                out
            }
        }
    })
}

/// One run of `world` under `seed` for `hours`, scored.
fn score_world(
    world: &WorldFile,
    seed: u64,
    hours: f64,
    profiles: &ProfileLibrary,
    archetypes: Option<&ArchetypeLibrary>,
    config: &ZoneConfig,
    report: Option<&Path>,
) -> Result<Scorecard, CommandError> {
    let mut world = world.clone();
    world.seed = seed;
    let mut zone = offline_zone(&world, profiles, archetypes, config.clone())?;
    let mut card = Scorecard::new(seed);
    let mut timeline = report.map(|_| Timeline::new(&zone));
    let ticks = (hours * 60.0).round() as u64;
    let progress = crate::history::progress::bar(
        ticks.div_ceil(TICKS_PER_CLOCK_EVENT),
        "simulating",
        "game hours",
    );
    let mut clock = 0;
    while clock < ticks {
        progress.inc(1);
        let step = TICKS_PER_CLOCK_EVENT.min(ticks - clock);
        advance(&mut zone, step, |zone, messages| {
            let parsed: Vec<Value> = messages
                .iter()
                .filter_map(|(_, text)| serde_json::from_str(text).ok())
                .collect();
            card.tick(zone, &parsed);
            if let Some(timeline) = timeline.as_mut() {
                timeline.signals(zone, &parsed);
            }
        });
        if let Some(timeline) = timeline.as_mut() {
            timeline.hour(&zone);
        }
        clock += step;
    }
    progress.finish_and_clear();
    card.finish(hours);
    if let (Some(path), Some(timeline)) = (report, timeline) {
        std::fs::write(path, timeline.html(&card)).map_err(|e| {
            CommandError::Environment(format!("{}: cannot write: {e}", path.display()))
        })?;
    }
    Ok(card)
}

/// The arguments of `geppetto brain`.
#[derive(clap::Args)]
pub struct BrainArgs {
    /// The world file or directory, or a shipped world by name (`village`, `harbour`).
    #[arg(long, default_value = "village")]
    world: String,
    /// The NPC.
    #[arg(long)]
    npc: String,
    /// Game hours to run first.
    #[arg(long, default_value_t = 0.0)]
    hours: f64,
    /// JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Ask a running service instead (its admin API, e.g. `http://127.0.0.1:7878`).
    #[arg(long, conflicts_with = "hours")]
    admin: Option<String>,
    /// With `--admin`: print the view again every second (Ctrl-C stops).
    #[arg(long, requires = "admin")]
    follow: bool,
    /// With `--follow`: stop after this many views.
    #[arg(long, requires = "follow")]
    count: Option<u64>,
}

/// `geppetto brain`: the view live from a running service (`--admin`, printed as it comes),
/// or from the world run offline (left to print).
pub fn brain(args: BrainArgs) -> Result<String, CommandError> {
    match args.admin {
        Some(admin) => {
            let follow = args
                .follow
                .then_some((std::time::Duration::from_secs(1), args.count));
            brain_live(&admin, &args.npc, args.json, follow, print_line)?;
            Ok(String::new())
        }
        None => brain_view(&args.world, &args.npc, args.hours, args.json),
    }
}

/// The brain view of `npc` in a running service, from its admin API at `admin`
/// (`http://127.0.0.1:7878`): once, or with `follow` every `every` until `count` views (or
/// forever), each handed to `write`.
fn brain_live(
    admin: &str,
    npc: &str,
    json: bool,
    follow: Option<(std::time::Duration, Option<u64>)>,
    mut write: impl FnMut(&str),
) -> Result<(), CommandError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(CommandError::io("cannot start the async runtime"))?;
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
fn brain_view(world_path: &str, npc: &str, hours: f64, json: bool) -> Result<String, CommandError> {
    if !(hours.is_finite() && hours >= 0.0) {
        return Err(CommandError::BadInput(
            "--hours: must be a non-negative number".into(),
        ));
    }
    let world = load_world(world_path)?;
    let profiles = ProfileLibrary::embedded()?;
    let mut zone = offline_zone(&world, &profiles, None, ZoneConfig::default())?;
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
