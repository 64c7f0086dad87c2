//! The story-signal detector as behaviour: for each of the fifteen signal
//! types, the situation that raises it and a nearby one that must not; then the buffer
//! (bounded, oldest dropped, swapped out), the cadence, merging of a live signal and expiry.

mod detector;
mod lifecycle;
mod signals;

use geppetto_core::social::{Facet, GossipIntent, InteractionKind, RumourTopic};
use geppetto_core::story::{
    DetectorConfig, EventBuffer, GoalChange, SignalChange, SignalClaimError, SignalEnd, SignalType,
    StoryDetector, StoryEvent, StoryEventKind, StorySignal,
};

fn at(hours: f64, location: &str, kind: StoryEventKind) -> StoryEvent {
    StoryEvent {
        at_hours: hours,
        location: location.into(),
        players: Vec::new(),
        kind,
    }
}

/// An interaction with neutral regard and mood.
fn interaction(
    initiator: &str,
    target: &str,
    kind: InteractionKind,
    success: bool,
) -> StoryEventKind {
    StoryEventKind::Interaction {
        initiator: initiator.into(),
        target: target.into(),
        interaction: kind,
        success,
        against: None,
        initiator_faction: None,
        target_faction: None,
        target_loyalty_before: 0.5,
        victim_loyalty_before: None,
        initiator_affinity: 0.5,
        target_affinity: 0.5,
        initiator_mood: 0.0,
        target_mood: 0.0,
        witnessed: false,
    }
}

/// `witness` saw vex steal.
fn vex_seen_stealing_by(witness: &str) -> StoryEventKind {
    StoryEventKind::Witnessed {
        witness: witness.into(),
        actor: "vex".into(),
        act: "theft".into(),
    }
}

fn trust(from: &str, to: &str, delta: f64, value: f64) -> StoryEventKind {
    StoryEventKind::RelationshipChanged {
        from: from.into(),
        to: to.into(),
        facet: Facet::Trust,
        delta,
        value,
        cause: "argument".into(),
    }
}

fn heard(
    listener: &str,
    subject: &str,
    gossip: RumourTopic,
    credibility: f64,
    accepted: bool,
) -> StoryEventKind {
    StoryEventKind::RumourHeard {
        listener: listener.into(),
        teller: "teller".into(),
        subject: subject.into(),
        gossip,
        intent: GossipIntent::Inform,
        depth: 1,
        credibility,
        accepted,
    }
}

/// A fresh detector fed `events`, detecting an hour after the first.
fn detect(events: Vec<StoryEvent>) -> Vec<StorySignal> {
    let now = events.iter().map(|e| e.at_hours).fold(0.0, f64::max) + 0.5;
    let mut detector = StoryDetector::new(DetectorConfig::default());
    for event in events {
        detector.push(event);
    }
    detector.detect(now)
}

fn of(signals: &[StorySignal], t: SignalType) -> Vec<&StorySignal> {
    signals.iter().filter(|s| s.signal_type == t).collect()
}

fn fires(events: Vec<StoryEvent>, t: SignalType) -> bool {
    !of(&detect(events), t).is_empty()
}

fn mood(npc: &str, mood: f64, stress: f64) -> StoryEvent {
    at(
        12.0,
        "cottages",
        StoryEventKind::MoodChanged {
            npc: npc.into(),
            previous: 0.0,
            mood,
            stress,
        },
    )
}
