//! Test helpers shared by the zone's tests (and the service's): the embedded village as a
//! zone, and short ways to advance its time and send it world events.

use std::time::Duration;

use super::{IntegrationConfig, TickInputs, Zone, ZoneConfig, ZoneOutput};
use crate::bus::StreamKind;
use crate::bus::envelope::{WorldEvent, WorldMessage, header};
use crate::content::profiles::ProfileLibrary;
use crate::content::sets::SetLibrary;
use crate::content::world_file::embedded_village;
use crate::zone::isolation::IsolationState;

/// A clock that stands still: the governor never finds a tick slow, so what these tests see
/// does not depend on the machine's speed.
pub(crate) fn still() -> Duration {
    Duration::ZERO
}

/// A world message id this thread has not used: a zone applies an id once, and these helpers
/// stand for events that each happen.
pub(crate) fn fresh_id(prefix: &str) -> String {
    thread_local! {
        static NEXT: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }
    let n = NEXT.with(|next| {
        let n = next.get();
        next.set(n + 1);
        n
    });
    format!("{prefix}{n}")
}

/// Live processing on the still clock.
pub(crate) fn live() -> TickInputs<'static> {
    TickInputs::live(&still)
}

pub(crate) fn village() -> Zone {
    village_named("village")
}

/// The village as zone `name`.
pub(crate) fn village_named(name: &str) -> Zone {
    let mut world = embedded_village().expect("village");
    world.zone = name.to_owned();
    // The governor's wall-clock budget is out of the way here: these tests are about the
    // engine's determinism, and an unoptimised test build can run over 5 ms a tick.
    // geppetto's timer ends actions here (the game's reports are tested in `game`).
    let mut config = ZoneConfig::default();
    config.governor.tick_budget_ms_soft = 60_000.0;
    config.governor.tick_budget_ms_hard = 60_000.0;
    config.tick.npc_budget_ms = 60_000.0;
    config.integration = IntegrationConfig::simulated();
    Zone::new(
        &world,
        &ProfileLibrary::embedded().expect("profiles"),
        &SetLibrary::embedded().expect("sets"),
        config,
        IsolationState::default(),
    )
    .expect("zone")
}

/// The village with the game carrying out intents (`[integration] completion = "game"`).
pub(crate) fn village_in_game() -> Zone {
    let mut world = embedded_village().expect("village");
    world.zone = "village".to_owned();
    let mut config = ZoneConfig::default();
    config.governor.tick_budget_ms_soft = 60_000.0;
    config.governor.tick_budget_ms_hard = 60_000.0;
    config.tick.npc_budget_ms = 60_000.0;
    Zone::new(
        &world,
        &ProfileLibrary::embedded().expect("profiles"),
        &SetLibrary::embedded().expect("sets"),
        config,
        IsolationState::default(),
    )
    .expect("zone")
}

/// Applies `event` as the world message `id` now; returns everything the zone produced.
pub(crate) fn apply_as(zone: &mut Zone, id: &str, event: WorldEvent) -> ZoneOutput {
    let now = zone.game_time;
    apply_message(zone, id, now, event)
}

/// Applies `event` at game time `game_time`; returns everything the zone produced.
pub(crate) fn apply_at(zone: &mut Zone, game_time: u64, event: WorldEvent) -> ZoneOutput {
    apply_message(zone, &fresh_id("e"), game_time, event)
}

fn apply_message(zone: &mut Zone, id: &str, game_time: u64, event: WorldEvent) -> ZoneOutput {
    let message = WorldMessage {
        header: header(id, "village", game_time),
        event,
    };
    let mut out = ZoneOutput::default();
    zone.apply(&message, &live(), &mut out);
    out
}

pub(crate) fn advance(zone: &mut Zone, ticks: u64) -> Vec<(StreamKind, String)> {
    let mut out = ZoneOutput::default();
    let target = zone.game_time + ticks;
    while zone.game_time < target {
        let message = WorldMessage {
            header: header(fresh_id("t"), "village", (zone.game_time + 60).min(target)),
            event: WorldEvent::TimeAdvanced,
        };
        zone.apply(&message, &live(), &mut out);
    }
    out.messages
}

pub(crate) fn enter(zone: &mut Zone, room: &str) {
    let message = WorldMessage {
        header: header(fresh_id("p"), "village", zone.game_time),
        event: WorldEvent::PlayerEntered {
            player: "ann".into(),
            room: room.into(),
        },
    };
    zone.apply(&message, &live(), &mut ZoneOutput::default());
}

pub(crate) fn send(zone: &mut Zone, event: WorldEvent) -> Vec<(StreamKind, String)> {
    let now = zone.game_time;
    send_at(zone, now, event)
}

pub(crate) fn send_at(
    zone: &mut Zone,
    game_time: u64,
    event: WorldEvent,
) -> Vec<(StreamKind, String)> {
    let message = WorldMessage {
        header: header(fresh_id("e"), "village", game_time),
        event,
    };
    let mut out = ZoneOutput::default();
    zone.apply(&message, &live(), &mut out);
    out.messages
}

pub(crate) fn social(
    kind: &str,
    target: &str,
    deltas: &[(&str, f64)],
    mood: Option<f64>,
) -> WorldEvent {
    WorldEvent::SocialEvent {
        kind: kind.into(),
        source: "stranger".into(),
        target: target.into(),
        deltas: deltas.iter().map(|(n, d)| ((*n).to_owned(), *d)).collect(),
        mood,
        about: None,
    }
}
