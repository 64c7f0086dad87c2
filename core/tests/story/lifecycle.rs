//! A signal's life after it is raised, as its consumers hear of it: merged evidence as an
//! update under the same id, a lapse or a displacement as its end, and a consumer's claims —
//! taking it (it no longer lapses) and resolving it.

use super::*;

/// `listener` at the market believes a rumour, credible enough for a threat (> 0.6) and not
/// for a discovery (< 0.7), that `subject` is dangerous, at game hour `h`.
fn threat_heard(listener: &str, subject: &str, h: f64) -> StoryEvent {
    at(
        h,
        "market",
        heard(listener, subject, RumourTopic::Threat, 0.65, true),
    )
}

/// The one signal `detector` raises at `h` from `listener` hearing about `subject`: a threat.
fn raise_threat(detector: &mut StoryDetector, listener: &str, subject: &str, h: f64) -> String {
    detector.push(threat_heard(listener, subject, h));
    let raised = detector.detect(h + 0.5);
    assert!(
        matches!(raised.as_slice(), [s] if s.signal_type == SignalType::ThreatDetected),
        "{raised:?}"
    );
    raised[0].id.clone()
}

#[test]
fn merged_evidence_is_an_update_under_the_signals_id_and_a_lapse_its_end() {
    let mut detector = StoryDetector::new(DetectorConfig::default());
    let id = raise_threat(&mut detector, "ada", "wolves", 1.0);
    let raised = detector.live().next().expect("live").clone();
    assert!(
        detector.take_changes().is_empty(),
        "raising is not a change"
    );
    detector.push(threat_heard("bo", "wolves", 2.0));
    assert!(detector.detect(2.5).is_empty(), "merged, not raised");
    let changes = detector.take_changes();
    let [SignalChange::Updated(updated)] = changes.as_slice() else {
        panic!("one update: {changes:?}");
    };
    assert_eq!(updated.id, id);
    assert_eq!(updated.merged, 1);
    assert!(updated.involved_npcs.contains(&"bo".to_owned()));
    assert!(updated.expires_at_hours > raised.expires_at_hours);
    assert!(detector.take_changes().is_empty(), "told once");
    assert!(detector.detect(27.0).is_empty());
    let changes = detector.take_changes();
    assert!(
        matches!(changes.as_slice(), [SignalChange::Ended(s, SignalEnd::Lapsed)] if s.id == id),
        "{changes:?}"
    );
}

#[test]
fn a_taken_signal_does_not_lapse_and_only_its_holder_resolves_it() {
    let mut detector = StoryDetector::new(DetectorConfig::default());
    let id = raise_threat(&mut detector, "ada", "wolves", 1.0);
    let taken = detector.take(&id, "board").expect("taken");
    assert_eq!(taken.taken_by.as_deref(), Some("board"));
    assert!(detector.take(&id, "board").is_ok(), "again: no change");
    assert_eq!(
        detector.take(&id, "rival"),
        Err(SignalClaimError::TakenByAnother {
            signal: id.clone(),
            by: "board".into()
        })
    );
    let changes = detector.take_changes();
    assert!(
        matches!(changes.as_slice(), [SignalChange::Updated(s)] if s.taken_by.as_deref() == Some("board")),
        "{changes:?}"
    );
    // Long past its time to live, it is still there: the board holds it.
    detector.detect(200.0);
    assert!(detector.take_changes().is_empty());
    assert_eq!(detector.live().count(), 1);
    assert!(detector.resolve(&id, "rival").is_err());
    let resolved = detector.resolve(&id, "board").expect("resolved");
    assert_eq!(resolved.id, id);
    assert_eq!(detector.live().count(), 0);
    assert_eq!(
        detector.resolve(&id, "board"),
        Err(SignalClaimError::NotLive(id.clone()))
    );
    assert!(
        detector.take_changes().is_empty(),
        "a resolution is the resolver's to tell"
    );
}

#[test]
fn a_full_live_set_displaces_the_soonest_to_lapse_that_nobody_took() {
    let config = DetectorConfig {
        max_live_signals: 2,
        ..DetectorConfig::default()
    };
    let mut detector = StoryDetector::new(config);
    let first = raise_threat(&mut detector, "ada", "wolves", 1.0);
    let second = raise_threat(&mut detector, "bo", "bandits", 2.0);
    detector.take(&first, "board").expect("taken");
    detector.take_changes();
    let third = raise_threat(&mut detector, "cy", "trolls", 3.0);
    let changes = detector.take_changes();
    assert!(
        matches!(changes.as_slice(), [SignalChange::Ended(s, SignalEnd::Displaced)] if s.id == second),
        "the untaken one gives way, though the taken one is older: {changes:?}"
    );
    let live: Vec<&str> = detector.live().map(|s| s.id.as_str()).collect();
    assert_eq!(live, [first.as_str(), third.as_str()]);
}
