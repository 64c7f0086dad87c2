//! The detector's mechanics: the bounded buffer swapped out in one step, the cadence, a
//! detection spread over ticks, merging into a live signal, expiry, fresh evidence and the
//! day's budget.

use super::*;

#[test]
fn the_buffer_keeps_the_newest_thousand_and_swaps_out_in_one_step() {
    let mut buffer = EventBuffer::new(DetectorConfig::default().buffer_capacity);
    for i in 0..1005 {
        buffer.push(mood(&format!("n{i}"), 0.0, 0.0));
    }
    assert_eq!((buffer.len(), buffer.dropped), (1000, 5));
    let taken = buffer.take();
    assert!(buffer.is_empty());
    assert!(matches!(&taken[0].kind, StoryEventKind::MoodChanged { npc, .. } if npc == "n5"));
}

#[test]
fn detection_starts_every_thirty_ticks_and_runs_a_rule_a_tick() {
    let mut detector = StoryDetector::new(DetectorConfig::default());
    let mut raised_at = Vec::new();
    for tick in 1..=90u64 {
        detector.push(mood(&format!("n{tick}"), -0.9, 0.0));
        let now = 12.0 + tick as f64 / 60.0;
        if !detector.tick(now).is_empty() {
            raised_at.push(tick);
        }
        if tick % 30 != 0 {
            assert!(detector.buffered() > 0, "gathering until tick 30");
        }
    }
    // The crisis rule is the twelfth step of a detection: it runs 11 ticks after the start.
    assert_eq!(
        raised_at,
        [41],
        "raised once; later crises merge into the live one"
    );
    assert_eq!(geppetto_core::story::detector::DETECTION_STEPS, 15);
}

/// A day of a small village's events, a few a minute, that raise several kinds of signal.
fn busy_minute(minute: u64) -> Vec<StoryEvent> {
    let hours = 8.0 + minute as f64 / 60.0;
    let npc = |k: u64| format!("n{}", (minute * 7 + k * 13) % 12);
    let mut events = vec![
        at(
            hours,
            "market",
            interaction(
                &npc(0),
                &npc(1),
                InteractionKind::Trade,
                !minute.is_multiple_of(3),
            ),
        ),
        at(hours, "square", trust(&npc(2), &npc(3), -0.2, 0.3)),
        at(
            hours,
            "square",
            StoryEventKind::MoodChanged {
                npc: npc(4),
                previous: 0.0,
                mood: if minute.is_multiple_of(5) { -0.6 } else { 0.2 },
                stress: 0.1,
            },
        ),
    ];
    if minute.is_multiple_of(17) {
        events.push(at(
            hours,
            "gate",
            StoryEventKind::Witnessed {
                witness: npc(5),
                actor: npc(6),
                act: "theft".into(),
            },
        ));
    }
    events
}

#[test]
fn a_detection_spread_over_ticks_raises_what_an_all_at_once_one_does() {
    let mut ticking = StoryDetector::new(DetectorConfig::default());
    let mut at_once = StoryDetector::new(DetectorConfig::default());
    let (mut spread, mut whole) = (Vec::new(), Vec::new());
    // Ten detections; the last one's steps finish on the ticks after them.
    for minute in 1..=300 + 15u64 {
        for event in busy_minute(minute) {
            ticking.push(event.clone());
            at_once.push(event);
        }
        let now = 8.0 + minute as f64 / 60.0;
        spread.extend(ticking.tick(now));
        if minute % 30 == 0 {
            whole.extend(at_once.detect(now));
        }
    }
    let kinds: std::collections::BTreeSet<_> = whole.iter().map(|s| s.signal_type).collect();
    assert!(
        kinds.len() >= 4 && whole.len() >= 8,
        "the village raises several kinds of signal: {kinds:?}"
    );
    assert_eq!(spread, whole, "same signals, ids, hours and contents");
    let live = |d: &StoryDetector| d.live().cloned().collect::<Vec<_>>();
    assert_eq!(
        live(&ticking),
        live(&at_once),
        "same live signals after merging"
    );
}

#[test]
fn a_live_signal_absorbs_its_duplicates_and_lapses_after_its_time() {
    let mut detector = StoryDetector::new(DetectorConfig::default());
    let seen = |witness: &str, h: f64, player: Option<&str>| {
        let mut e = at(
            h,
            "market",
            StoryEventKind::Witnessed {
                witness: witness.into(),
                actor: "vex".into(),
                act: "theft".into(),
            },
        );
        e.players = player.into_iter().map(str::to_owned).collect();
        e
    };
    detector.push(seen("ada", 1.0, None));
    let first = detector.detect(1.5);
    assert_eq!(of(&first, SignalType::ThreatDetected).len(), 1);
    detector.push(seen("bo", 2.0, Some("p1")));
    let second = detector.detect(2.5);
    assert!(of(&second, SignalType::ThreatDetected).is_empty(), "merged");
    let live: Vec<&StorySignal> = detector
        .live()
        .filter(|s| s.signal_type == SignalType::ThreatDetected)
        .collect();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].involved_npcs, ["ada", "bo", "vex"]);
    assert_eq!(live[0].involved_players, ["p1"]);
    assert_eq!((live[0].merged, live[0].expires_at_hours), (1, 26.5));
    assert!(detector.detect(27.0).is_empty(), "no new evidence");
    assert_eq!(detector.live().count(), 0, "expired");
    detector.push(seen("cy", 28.0, None));
    assert_eq!(
        of(&detector.detect(28.5), SignalType::ThreatDetected).len(),
        1,
        "raised anew"
    );
}

#[test]
fn evidence_is_fresh_once_by_arrival_not_by_its_game_hour() {
    let mut detector = StoryDetector::new(DetectorConfig::default());
    let seen = |witness: &str, h: f64| {
        at(
            h,
            "market",
            StoryEventKind::Witnessed {
                witness: witness.into(),
                actor: "vex".into(),
                act: "theft".into(),
            },
        )
    };
    let threat = |d: &StoryDetector| {
        d.live()
            .find(|s| s.signal_type == SignalType::ThreatDetected)
            .map(|s| (s.merged, s.expires_at_hours, s.involved_npcs.clone()))
    };
    // Stamped at the hour of the detection that reads it.
    detector.push(seen("ada", 1.5));
    assert_eq!(
        of(&detector.detect(1.5), SignalType::ThreatDetected).len(),
        1
    );
    // The next detection has no new evidence: the same event does not count again.
    assert!(detector.detect(2.0).is_empty());
    assert_eq!(
        threat(&detector),
        Some((0, 25.5, vec!["ada".to_owned(), "vex".to_owned()]))
    );
    // A report that arrives late, stamped before the previous detection, is still new evidence.
    detector.push(seen("bo", 1.5));
    assert!(
        of(&detector.detect(2.5), SignalType::ThreatDetected).is_empty(),
        "merged, not raised"
    );
    assert_eq!(
        threat(&detector),
        Some((1, 26.5, ["ada", "bo", "vex"].map(str::to_owned).to_vec()))
    );
}

#[test]
fn every_signal_type_has_a_distinct_wire_name() {
    let names: std::collections::BTreeSet<&str> =
        SignalType::VARIANTS.iter().map(|t| t.as_str()).collect();
    assert_eq!(names.len(), 15);
}

#[test]
fn a_day_raises_at_most_its_budget_and_past_it_only_a_rarer_kind_gets_through() {
    let mut detector = StoryDetector::new(DetectorConfig::default());
    for i in 0..30 {
        let place = format!("stall{i}");
        detector.push(at(
            1.0,
            &place,
            heard(
                &format!("npc{i}"),
                &format!("news{i}"),
                RumourTopic::Opportunity,
                0.9,
                true,
            ),
        ));
    }
    let first = detector.detect(2.0);
    assert_eq!(
        of(&first, SignalType::Discovery).len(),
        16,
        "the day's budget less the slots kept for other kinds"
    );
    assert_eq!(detector.suppressed(), 14);
    detector.push(at(3.0, "market", vex_seen_stealing_by("ada")));
    let busy = detector.detect(4.0);
    assert_eq!(
        of(&busy, SignalType::ThreatDetected).len(),
        1,
        "a rarer kind: {busy:?}"
    );
    assert!(
        of(&busy, SignalType::Discovery).is_empty(),
        "the busiest kind waits"
    );
    detector.push(at(
        27.0,
        "well",
        heard("bo", "ore", RumourTopic::Opportunity, 0.9, true),
    ));
    assert_eq!(
        of(&detector.detect(28.0), SignalType::Discovery).len(),
        1,
        "a new day, a new budget"
    );
}
