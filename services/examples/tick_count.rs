//! Runs `geppetto load`'s synthetic zone through the service's own tick (`Zone::apply` of
//! `time_advanced` and social events, emission included) a fixed number of ticks, with no bus
//! and no actor around it, for instruction counts that do not depend on timing (figures in
//! BENCHMARKS.md):
//!
//! ```sh
//! cargo build --release -p geppetto-service --example tick_count
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/tick_count 10000 150
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/tick_count 10000 0
//! ```
//!
//! Arguments: NPCs, ticks, then optionally rooms with a player (`--player-rooms`; default all)
//! and social events a tick (default 100, `load`'s 1,000 events/s at 10 ticks a second). The
//! difference of two counts over the difference of their ticks is the cost of one tick. It
//! prints the messages each stream received and a digest of them all (stream and text, in
//! order), so two builds can be checked to say the same.
//!
//! `--times GAP_MS` (anywhere among the arguments) also times each tick: it waits `GAP_MS`
//! milliseconds before each one, as a live zone idles between ticks (0: back to back), and
//! prints `tick <n> <ms> <messages>` to stderr for every tick. `--phases` (with `--times`)
//! also prints the mean time of each of the tick's phases over the ticks after the first 100
//! (all of them in a shorter run), where a tick's time goes.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Mutex;

use geppetto_service::bus::envelope::{WorldEvent, WorldMessage, header};
use geppetto_service::content::profiles::ProfileLibrary;
use geppetto_service::content::sets::SetLibrary;
use geppetto_service::drive::load::{LOAD_ZONE, build_zone};
use geppetto_service::runtime::wall_clock;
use geppetto_service::zone::{PhaseTimes, TICK_PHASES, TickInputs, ZoneOutput};

/// The allocator the `geppetto` binary is built with, so the counts are the service's.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let gap = match args.iter().position(|a| a == "--times") {
        None => None,
        Some(at) => {
            let parsed = args.get(at + 1).map(|ms| ms.parse::<u64>());
            let Some(Ok(ms)) = parsed else {
                eprintln!("--times takes the milliseconds to wait before each tick");
                return ExitCode::FAILURE;
            };
            args.drain(at..=at + 1);
            Some(std::time::Duration::from_millis(ms))
        }
    };
    let phases = match args.iter().position(|a| a == "--phases") {
        None => None,
        Some(at) => {
            args.remove(at);
            Some(Mutex::new(Vec::<PhaseTimes>::new()))
        }
    };
    if phases.is_some() && gap.is_none() {
        eprintln!("--phases times the ticks of a run with --times");
        return ExitCode::FAILURE;
    }
    let number = |at: usize| args.get(at).map(|text| text.parse::<usize>());
    let (Some(Ok(npcs)), Some(Ok(ticks))) = (number(0), number(1)) else {
        eprintln!(
            "usage: tick_count NPCS TICKS [PLAYER_ROOMS] [SOCIAL_EVENTS_PER_TICK] [--times GAP_MS]"
        );
        return ExitCode::FAILURE;
    };
    let player_rooms = match number(2) {
        None => None,
        Some(Ok(rooms)) => Some(rooms),
        Some(Err(error)) => {
            eprintln!("player rooms: {error}");
            return ExitCode::FAILURE;
        }
    };
    let social_per_tick = match number(3) {
        None => 100,
        Some(Ok(count)) => count,
        Some(Err(error)) => {
            eprintln!("social events a tick: {error}");
            return ExitCode::FAILURE;
        }
    };
    let built = ProfileLibrary::embedded()
        .map_err(|e| e.to_string())
        .and_then(|profiles| {
            let sets = SetLibrary::embedded().map_err(|e| e.to_string())?;
            build_zone(LOAD_ZONE, (npcs, player_rooms), &profiles, &sets).map_err(|e| e.to_string())
        });
    let mut load = match built {
        Ok(load) => load,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    let clock = wall_clock();
    let inputs = TickInputs {
        phase_sink: phases.as_ref(),
        ..TickInputs::live(&clock)
    };
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut digest = xxhash_rust::xxh3::Xxh3::new();
    let mut sent = 0usize;
    for game_time in 1..=ticks as u64 {
        let mut out = ZoneOutput::default();
        for _ in 0..social_per_tick {
            sent += 1;
            let Some(target) = load
                .targets
                .get((sent * 7919) % load.targets.len().max(1))
                .cloned()
            else {
                break;
            };
            let message = WorldMessage {
                header: header(format!("s{sent}"), LOAD_ZONE, game_time - 1),
                event: WorldEvent::SocialEvent {
                    kind: "greeting".into(),
                    source: format!("load-{sent}"),
                    target,
                    deltas: BTreeMap::from([("FUN".into(), 1.0)]),
                    mood: None,
                    about: None,
                },
            };
            load.zone.apply(&message, &inputs, &mut out);
        }
        let tick = WorldMessage {
            header: header(format!("t{game_time}"), LOAD_ZONE, game_time),
            event: WorldEvent::TimeAdvanced,
        };
        match gap {
            None => load.zone.apply(&tick, &inputs, &mut out),
            Some(gap) => {
                std::thread::sleep(gap);
                let (before, started) = (out.messages.len(), std::time::Instant::now());
                load.zone.apply(&tick, &inputs, &mut out);
                let ms = started.elapsed().as_secs_f64() * 1000.0;
                eprintln!("tick {game_time} {ms:.3} {}", out.messages.len() - before);
            }
        }
        for (stream, text) in &out.messages {
            *counts.entry(stream.as_str()).or_default() += 1;
            digest.update(stream.as_str().as_bytes());
            digest.update(text.as_bytes());
        }
    }
    let counts: Vec<String> = counts.iter().map(|(s, n)| format!("{s} {n}")).collect();
    println!(
        "{npcs} NPCs, {ticks} ticks: {}; digest {:016x}",
        counts.join(", "),
        digest.digest()
    );
    if let Some(Ok(times)) = phases.map(Mutex::into_inner) {
        let kept = times
            .get(100..)
            .filter(|rest| !rest.is_empty())
            .unwrap_or(&times);
        let count = kept.len().max(1) as f64;
        let means: Vec<String> = TICK_PHASES
            .iter()
            .enumerate()
            .map(|(phase, name)| {
                let mean = kept.iter().map(|t| t[phase]).sum::<f64>() / count;
                format!("{name} {mean:.3}")
            })
            .collect();
        println!(
            "phases, mean ms over {} ticks: {}",
            kept.len(),
            means.join(", ")
        );
    }
    ExitCode::SUCCESS
}
