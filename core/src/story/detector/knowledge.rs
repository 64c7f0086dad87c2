//! Rules over what NPCs witness and believe: threats (witnessed or rumoured), discoveries and
//! revealed secrets. When a rule runs and how its finds are merged is [`super::detecting`]'s job.

use std::collections::{BTreeMap, BTreeSet};

use super::detecting::StoryDetector;
use super::found::{Found, pair};
use super::window::Reading;
use crate::social::chronicle::{StoryEvent, StoryEventKind};
use crate::social::gossip::RumourTopic;
use crate::story::history::EventClass;
use crate::story::signal::SignalType;

impl StoryDetector {
    /// Subjects of witnessed acts and credible threats: subject → (aware NPCs, importance,
    /// evidence).
    pub(super) fn threat_awareness(
        &self,
        now_hours: f64,
    ) -> BTreeMap<&str, (BTreeSet<&str>, f64, Vec<&StoryEvent>)> {
        let mut subjects: BTreeMap<&str, (BTreeSet<&str>, f64, Vec<&StoryEvent>)> = BTreeMap::new();
        for e in self.pattern(
            Reading::All,
            now_hours,
            &[EventClass::Witnessed, EventClass::RumourHeard],
        ) {
            let (subject, aware, importance) = match &e.kind {
                StoryEventKind::Witnessed { witness, actor, .. } => (
                    actor.as_str(),
                    witness.as_str(),
                    self.config.witnessed_threat_importance,
                ),
                StoryEventKind::RumourHeard {
                    listener,
                    subject,
                    gossip: RumourTopic::Threat,
                    credibility,
                    accepted: true,
                    ..
                } if *credibility > self.config.threat_credible_above => {
                    (subject.as_str(), listener.as_str(), *credibility)
                }
                _ => continue,
            };
            let entry = subjects.entry(subject).or_default();
            entry.0.insert(aware);
            entry.1 = entry.1.max(importance);
            entry.2.push(e);
        }
        subjects
    }

    pub(super) fn threats(&self, now_hours: f64) -> Vec<Found<'_>> {
        self.threat_awareness(now_hours)
            .into_iter()
            .map(|(subject, (aware, importance, events))| {
                Found::new(SignalType::ThreatDetected, subject, importance)
                    .npcs(aware.iter().copied().chain([subject]))
                    .context("subject", subject)
                    .context("aware", aware.len())
                    .evidence(events)
            })
            .collect()
    }

    pub(super) fn discoveries(&self, now_hours: f64) -> Vec<Found<'_>> {
        self.pattern(
            Reading::Fresh,
            now_hours,
            &[EventClass::Witnessed, EventClass::RumourHeard],
        )
        .filter_map(|e| match &e.kind {
            StoryEventKind::Witnessed {
                witness,
                actor,
                act,
            } => Some(
                Found::new(
                    SignalType::Discovery,
                    pair(witness, actor),
                    self.config.discovery_importance,
                )
                .npcs([witness.as_str(), actor.as_str()])
                .context("learned", format!("{actor} {act}"))
                .context("first_hand", true)
                .evidence([e]),
            ),
            StoryEventKind::RumourHeard {
                listener,
                subject,
                gossip,
                credibility,
                accepted: true,
                ..
            } if *credibility >= self.config.discovery_credibility_above => Some(
                Found::new(SignalType::Discovery, pair(listener, subject), *credibility)
                    .npcs([listener.as_str()])
                    .context("learned", format!("{} about {subject}", gossip.as_str()))
                    .context("first_hand", false)
                    .evidence([e]),
            ),
            _ => None,
        })
        .collect()
    }

    pub(super) fn secrets(&self, now_hours: f64) -> Vec<Found<'_>> {
        self.pattern(Reading::Fresh, now_hours, &[EventClass::RumourHeard])
            .filter_map(|e| match &e.kind {
                StoryEventKind::RumourHeard {
                    listener,
                    teller,
                    subject,
                    gossip: RumourTopic::Secret,
                    credibility,
                    accepted: true,
                    ..
                } => Some(
                    Found::new(SignalType::SecretRevealed, subject.as_str(), *credibility)
                        .npcs([listener.as_str(), teller.as_str(), subject.as_str()])
                        .context("subject", subject)
                        .context("told_by", teller)
                        .evidence([e]),
                ),
                _ => None,
            })
            .collect()
    }
}
