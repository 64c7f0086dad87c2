//! The perception candidate validator (`geppetto-llm`): whatever a model answers, extraction
//! and validation never panic, and every accepted event lies inside the closed schema —
//! magnitude finite and within bounds, ids of the speaker's zone, the speaker as actor.
#![no_main]

use geppetto_llm::{
    NpcRef, PerceivedEvent, PerceptionContext, PerceptionLimits, PerceptionRequest, Priority,
    perception::parse_model_output, validate_candidates,
};
use libfuzzer_sys::fuzz_target;

fn npc(id: &str, zone: &str) -> NpcRef {
    NpcRef {
        id: id.into(),
        name: id.into(),
        zone: zone.into(),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let request = PerceptionRequest {
        utterance_id: "u1".into(),
        speaker: "player".into(),
        text: "you thief".into(),
        context: PerceptionContext {
            zone: "village".into(),
            room: "square".into(),
            addressee: Some("bram".into()),
            npcs: vec![
                npc("bram", "village"),
                npc("mira", "village"),
                npc("ghost", "elsewhere"),
            ],
        },
        priority: Priority::Witnessed,
        seed: 7,
        tags: geppetto_llm::SpendTags::default(),
    };
    let limits = PerceptionLimits::default();
    let Some(candidates) = parse_model_output(text) else {
        return;
    };
    let outcome = validate_candidates(&candidates, &request, &limits);
    assert!(outcome.events.len() <= limits.max_events_per_utterance);
    let in_zone = |id: &str| id == "bram" || id == "mira";
    for event in &outcome.events {
        let magnitude = match event {
            PerceivedEvent::SocialEvent {
                actor,
                target,
                magnitude,
                ..
            } => {
                assert_eq!(actor, "player");
                assert!(in_zone(target), "{target}");
                *magnitude
            }
            PerceivedEvent::GossipEvent {
                speaker,
                listener,
                subject,
                magnitude,
                ..
            } => {
                assert_eq!(speaker, "player");
                assert!(in_zone(listener) && in_zone(subject));
                *magnitude
            }
        };
        assert!(magnitude.is_finite());
        assert!((limits.magnitude_min..=limits.magnitude_max).contains(&magnitude));
    }
});
