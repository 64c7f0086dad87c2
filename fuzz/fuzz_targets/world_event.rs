//! World-stream messages (`services::bus::envelope::parse_world_within`) and their application
//! to a zone. The input is one message per line, applied in order to a fresh zone built from
//! part of the demo village (every room and provider, two inline villagers). No input may
//! panic, and no NPC's state may hold a NaN or an infinity afterwards.
//!
//! For speed (a fresh zone per input) the fixture has no archetype residents — building one
//! parses every shipped archetype — and a `time_advanced` runs at most a few ticks, with the
//! analytic catch-up capped at a few hours; the zone's own tests cover residents and long
//! catch-ups.
#![no_main]

use std::sync::OnceLock;

use geppetto_service::bus::envelope::{EnvelopeLimits, parse_world_within};
use geppetto_service::content::profiles::ProfileLibrary;
use geppetto_service::content::sets::SetLibrary;
use geppetto_service::zone::isolation::IsolationState;
use geppetto_service::content::world_file::{WorldFile, embedded_village};
use geppetto_service::zone::{TickInputs, Zone, ZoneConfig, ZoneOutput};
use libfuzzer_sys::fuzz_target;

struct Fixture {
    world: WorldFile,
    profiles: ProfileLibrary,
    sets: SetLibrary,
    config: ZoneConfig,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let mut world = embedded_village().expect("the shipped village loads");
        world.npcs.truncate(2);
        world.residents.clear();
        let mut config = ZoneConfig::default();
        config.tick.max_catch_up_ticks_per_event = 3;
        config.tick.catch_up_max_hours = 3.0;
        // Wall-clock budgets would make runs depend on the machine: out of the way.
        config.governor.tick_budget_ms_soft = 1e9;
        config.governor.tick_budget_ms_hard = 1e9;
        Fixture {
            world,
            profiles: ProfileLibrary::embedded().expect("profiles"),
            sets: SetLibrary::embedded().expect("sets"),
            config,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let fixture = fixture();
    let limits = EnvelopeLimits::default();
    let messages: Vec<_> = text
        .lines()
        .filter_map(|line| parse_world_within(line, &limits).ok())
        .collect();
    if messages.is_empty() {
        return;
    }
    let mut zone = Zone::new(
        &fixture.world,
        &fixture.profiles,
        &fixture.sets,
        fixture.config.clone(),
        IsolationState::default(),
    )
    .expect("the fixture zone builds");
    let mut out = ZoneOutput::default();
    let clock = geppetto_service::runtime::wall_clock();
    for message in &messages {
        zone.apply(message, &TickInputs::live(&clock), &mut out);
    }
    for npc in &zone.agents {
        for c in &npc.agent.considerations {
            assert!(
                c.value.is_finite() && c.min().is_finite() && c.max().is_finite(),
                "{}: {:?} = {} in [{}, {}]",
                npc.agent.id,
                c.name,
                c.value,
                c.min(),
                c.max()
            );
        }
    }
});
