use serde_json::{Value, json};

use super::*;
use crate::config::PerceptionLimits;
use crate::request::{NpcRef, PerceptionContext, PerceptionRequest, Priority};

fn request() -> PerceptionRequest {
    PerceptionRequest {
        utterance_id: "u1".to_owned(),
        speaker: "player-1".to_owned(),
        text: "irrelevant here".to_owned(),
        context: PerceptionContext {
            zone: "village".to_owned(),
            room: "square".to_owned(),
            addressee: Some("mira".to_owned()),
            npcs: vec![
                NpcRef {
                    id: "mira".to_owned(),
                    name: "Mira".to_owned(),
                    zone: "village".to_owned(),
                },
                NpcRef {
                    id: "gundren".to_owned(),
                    name: "Gundren".to_owned(),
                    zone: "village".to_owned(),
                },
                NpcRef {
                    id: "far-guard".to_owned(),
                    name: "Guard".to_owned(),
                    zone: "citadel".to_owned(),
                },
            ],
        },
        priority: Priority::Witnessed,
        seed: 9,
        tags: crate::request::SpendTags::default(),
    }
}

fn check(candidate: Value, expected: Result<(), RejectionReason>) {
    let outcome = validate_candidates(
        std::slice::from_ref(&candidate),
        &request(),
        &PerceptionLimits::default(),
    );
    match expected {
        Ok(()) => {
            assert_eq!(
                outcome.events.len(),
                1,
                "{candidate} should pass: {outcome:?}"
            );
            assert!(outcome.rejections.is_empty());
        }
        Err(reason) => {
            assert!(outcome.events.is_empty(), "{candidate} should fail");
            assert_eq!(
                outcome
                    .rejections
                    .iter()
                    .map(|r| r.reason)
                    .collect::<Vec<_>>(),
                [reason],
                "{candidate}"
            );
        }
    }
}

#[test]
fn table_of_candidates() {
    use RejectionReason as R;
    let cases = [
        (
            json!({"type": "social_event", "kind": "insult", "target": "mira", "magnitude": 0.4}),
            Ok(()),
        ),
        (
            json!({"type": "social_event", "kind": "help", "target": "gundren", "magnitude": 0.1, "summary": "offers a hand"}),
            Ok(()),
        ),
        (
            json!({"type": "gossip_event", "kind": "slander", "listener": "mira", "subject": "gundren", "magnitude": 0.3, "summary": "s"}),
            Ok(()),
        ),
        (json!("social_event"), Err(R::NotAnObject)),
        (
            json!({"kind": "insult", "target": "mira", "magnitude": 0.4}),
            Err(R::MissingField),
        ),
        (
            json!({"type": "give_gold", "target": "mira", "amount": 1000}),
            Err(R::UnknownType),
        ),
        (
            json!({"type": "social_event", "kind": "bribe", "target": "mira", "magnitude": 0.4}),
            Err(R::UnknownKind),
        ),
        (
            json!({"type": "social_event", "kind": "insult", "target": "nobody", "magnitude": 0.4}),
            Err(R::UnknownNpc),
        ),
        (
            json!({"type": "social_event", "kind": "insult", "target": "far-guard", "magnitude": 0.4}),
            Err(R::NpcInOtherZone),
        ),
        (
            json!({"type": "social_event", "kind": "insult", "target": "mira", "magnitude": "NaN"}),
            Err(R::WrongType),
        ),
        (
            json!({"type": "social_event", "kind": "insult", "target": "mira", "magnitude": 0.4, "actor": "mira"}),
            Err(R::UnknownField),
        ),
        (
            json!({"type": "social_event", "kind": "insult", "target": "mira", "magnitude": 0.4, "summary": "x".repeat(161)}),
            Err(R::StringTooLong),
        ),
        (
            json!({"type": "social_event", "kind": "insult", "target": "m".repeat(65), "magnitude": 0.4}),
            Err(R::StringTooLong),
        ),
        (
            json!({"type": "gossip_event", "kind": "praise", "listener": "mira", "subject": "mira", "magnitude": 0.3}),
            Err(R::SameNpcTwice),
        ),
        (
            json!({"type": "gossip_event", "kind": "insult", "listener": "mira", "subject": "gundren", "magnitude": 0.3}),
            Err(R::UnknownKind),
        ),
    ];
    for (candidate, expected) in cases {
        check(candidate, expected);
    }
}

#[test]
fn magnitudes_are_clamped_and_counted() {
    let outcome = validate_candidates(
        &[
            json!({"type": "social_event", "kind": "gift", "target": "mira", "magnitude": 1000}),
            json!({"type": "social_event", "kind": "theft", "target": "mira", "magnitude": -5}),
            json!({"type": "social_event", "kind": "help", "target": "mira", "magnitude": 0.5}),
        ],
        &request(),
        &PerceptionLimits::default(),
    );
    let magnitudes: Vec<f64> = outcome
        .events
        .iter()
        .map(|event| match event {
            PerceivedEvent::SocialEvent { magnitude, .. }
            | PerceivedEvent::GossipEvent { magnitude, .. } => *magnitude,
        })
        .collect();
    assert_eq!(magnitudes, [1.0, 0.0, 0.5]);
    assert_eq!(outcome.clamped, 2);
}

#[test]
fn duplicates_and_excess_events_are_refused() {
    let insult =
        json!({"type": "social_event", "kind": "insult", "target": "mira", "magnitude": 0.4});
    let limits = PerceptionLimits {
        max_events_per_utterance: 2,
        max_candidates_examined: 4,
        ..PerceptionLimits::default()
    };
    let outcome = validate_candidates(
        &[
            insult.clone(),
            insult,
            json!({"type": "social_event", "kind": "insult", "target": "gundren", "magnitude": 0.4}),
            json!({"type": "social_event", "kind": "praise", "target": "gundren", "magnitude": 0.4}),
            json!({"type": "social_event", "kind": "help", "target": "gundren", "magnitude": 0.4}),
        ],
        &request(),
        &limits,
    );
    assert_eq!(outcome.events.len(), 2);
    let reasons: Vec<_> = outcome
        .rejections
        .iter()
        .map(|r| (r.index, r.reason))
        .collect();
    assert_eq!(
        reasons,
        [
            (Some(1), RejectionReason::Duplicate),
            (Some(3), RejectionReason::TooManyEvents),
            (Some(4), RejectionReason::NotExamined),
        ]
    );
}

#[test]
fn the_actor_is_always_the_speaker() {
    let outcome = validate_candidates(
        &[json!({"type": "social_event", "kind": "threat", "target": "gundren", "magnitude": 0.9})],
        &request(),
        &PerceptionLimits::default(),
    );
    assert!(matches!(
        &outcome.events[..],
        [PerceivedEvent::SocialEvent { actor, .. }] if actor == "player-1"
    ));
}

#[test]
fn model_output_shapes() {
    let cases: [(&str, Option<usize>); 11] = [
        (r#"{"events": [{"type": "x"}, {"type": "y"}]}"#, Some(2)),
        // Plain text: the first candidate JSON in the prose, fenced or not.
        (
            "Sure! Here it is:\n```json\n{\"events\": [{\"type\": \"x\"}]}\n```\nHope it helps.",
            Some(1),
        ),
        (r#"The answer is {"events": []} and nothing else."#, Some(0)),
        (r#"{not json} then [{"type": "x"}, {"type": "y"}]"#, Some(2)),
        ("an unclosed { brace and [ bracket", None),
        (r#"[{"type": "x"}]"#, Some(1)),
        ("```json\n{\"events\": []}\n```", Some(0)),
        (r#"{"type": "social_event"}"#, Some(1)),
        (r#"{"events": "none", "extra": 1}"#, None),
        ("Sure! Here are the events: none", None),
        ("42", None),
    ];
    for (text, expected) in cases {
        assert_eq!(
            parse_model_output(text).map(|items| items.len()),
            expected,
            "{text}"
        );
    }
}

#[test]
fn schema_lists_only_same_zone_npcs_and_known_kinds() {
    let schema = candidate_json_schema(&request(), &PerceptionLimits::default());
    let text = schema.to_string();
    assert!(text.contains("\"mira\"") && text.contains("\"gundren\""));
    assert!(!text.contains("far-guard"));
    assert!(text.contains("\"threat\"") && text.contains("\"slander\""));
}

/// Serde and `as_str` agree for every variant of every wire enum of this crate.
#[test]
fn wire_names_agree_with_serde() {
    use geppetto_wire_enum::assert_wire_names_agree as check;
    check(
        EventType::VARIANTS,
        EventType::WIRE_NAMES,
        EventType::as_str,
    );
    check(
        SocialKind::VARIANTS,
        SocialKind::WIRE_NAMES,
        SocialKind::as_str,
    );
    check(
        GossipTone::VARIANTS,
        GossipTone::WIRE_NAMES,
        GossipTone::as_str,
    );
    check(
        RejectionReason::VARIANTS,
        RejectionReason::WIRE_NAMES,
        RejectionReason::as_str,
    );
    use crate::breaker::BreakerState;
    use crate::request::{Priority, Seam};
    use crate::worker::FallbackReason;
    check(
        BreakerState::VARIANTS,
        BreakerState::WIRE_NAMES,
        BreakerState::as_str,
    );
    check(Priority::VARIANTS, Priority::WIRE_NAMES, Priority::as_str);
    check(Seam::VARIANTS, Seam::WIRE_NAMES, Seam::as_str);
    check(
        FallbackReason::VARIANTS,
        FallbackReason::WIRE_NAMES,
        FallbackReason::as_str,
    );
}

#[test]
fn truncation_respects_character_boundaries() {
    assert_eq!(truncate_chars("héllo", 2), "hé");
    assert_eq!(truncate_chars("abc", 10), "abc");
}
