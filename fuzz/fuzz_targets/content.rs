//! Content files as the service loads them (`services::content`, `services::world_file`): the
//! first byte picks the kind — profile, utility set, affect persona (over the shipped
//! defaults, compiled with its stability check), archetypes (the rest split into files at NUL
//! bytes, resolved — parents, cycles — and compiled), world (YAML or JSON, then built into a
//! zone). No input may panic; refusals are errors with file and reason.
#![no_main]

use std::sync::OnceLock;

use geppetto_core::vocabulary::Vocabulary;
use geppetto_service::content::affect::{DEFAULTS, compile_persona};
use geppetto_service::content::archetypes::ArchetypeLibrary;
use geppetto_service::content::profiles::{ProfileLibrary, parse_profile};
use geppetto_service::content::sets::{SetLibrary, parse_set};
use geppetto_service::zone::isolation::IsolationState;
use geppetto_service::content::world_file::{parse_world_file, parse_world_json};
use geppetto_service::zone::{Zone, ZoneConfig};
use libfuzzer_sys::fuzz_target;

fn libraries() -> &'static (ProfileLibrary, SetLibrary) {
    static LIBRARIES: OnceLock<(ProfileLibrary, SetLibrary)> = OnceLock::new();
    LIBRARIES.get_or_init(|| {
        (
            ProfileLibrary::embedded().expect("profiles"),
            SetLibrary::embedded().expect("sets"),
        )
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    match kind % 6 {
        0 => {
            let _ = parse_profile("fuzz.yaml", text);
        }
        1 => {
            if let Ok(set) = parse_set("fuzz.yaml", text) {
                let _ = set.compile(&mut Vocabulary::new());
            }
        }
        2 => {
            let _ = compile_persona(DEFAULTS, ("fuzz.yaml", text));
        }
        3 => {
            let files = text
                .split('\0')
                .enumerate()
                .map(|(i, part)| (format!("fuzz-{i}.yaml"), part));
            if let Ok(library) = ArchetypeLibrary::from_sources(files) {
                let _ = library.compile_all(&mut Vocabulary::new());
            }
        }
        kind => {
            let world = if kind == 4 {
                parse_world_file("fuzz.yaml", text)
            } else {
                parse_world_json("fuzz.json", text)
            };
            if let Ok(world) = world {
                let (profiles, sets) = libraries();
                let _ = Zone::new(
                    &world,
                    profiles,
                    sets,
                    ZoneConfig::default(),
                    IsolationState::default(),
                );
            }
        }
    }
});
