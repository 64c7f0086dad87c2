//! The demo's short script: a traveller arrives in the square, a cutpurse robs Greta, Vex
//! lifts Piet's purse, and the traveller goes to the tavern for a drink.

use std::collections::BTreeMap;

use crate::bus::envelope::{WorldEvent, WorldMessage, header};

/// The script's world messages for `zone`, timed from game minute `start`.
pub(crate) fn script(zone: &str, start: u64) -> Vec<WorldMessage> {
    let at = |offset: u64, id: &str, event: WorldEvent| WorldMessage {
        header: header(format!("{zone}:script:{start}:{id}"), zone, start + offset),
        event,
    };
    let theft =
        |source: &str, target: &str, deltas: BTreeMap<String, f64>| WorldEvent::SocialEvent {
            kind: "theft".into(),
            source: source.into(),
            target: target.into(),
            deltas,
            mood: None,
            about: None,
        };
    let traveller_enters = |room: &str| WorldEvent::PlayerEntered {
        player: "traveller".into(),
        room: room.into(),
    };
    vec![
        at(1, "arrive", traveller_enters("square")),
        at(
            50,
            "theft",
            theft(
                "a cutpurse",
                "greta",
                BTreeMap::from([("THREAT".into(), 90.0)]),
            ),
        ),
        // Vex lifts Piet's purse; Piet, a trader by archetype, sets out to report it.
        at(70, "purse", theft("vex", "piet", BTreeMap::new())),
        at(95, "tavern", traveller_enters("tavern")),
    ]
}
