//! Rules over relationships between people: rivalry, faction tension, alliances, betrayal,
//! unrequited courtship, and the influence ranking's power shift (the one rule that keeps state).
//! When a rule runs and how its finds are merged is [`super::detecting`]'s job.

use std::collections::{BTreeMap, BTreeSet};

use super::detecting::StoryDetector;
use super::found::{Candidate, Found, pair, ratio};
use super::window::Reading;
use crate::social::chronicle::{StoryEvent, StoryEventKind};
use crate::social::interaction::InteractionKind;
use crate::social::relationships::Facet;
use crate::story::history::EventClass;
use crate::story::signal::SignalType;

impl StoryDetector {
    pub(super) fn rivalry<'d>(&'d self, now_hours: f64) -> Vec<Found<'d>> {
        let hours = self.config.rivalry_window_hours;
        let window = || {
            self.keyed_within(
                Reading::All,
                now_hours,
                hours,
                &[EventClass::RelationshipChanged, EventClass::Interaction],
            )
        };
        let is_trust = |e: &StoryEvent| {
            matches!(
                &e.kind,
                StoryEventKind::RelationshipChanged {
                    facet: Facet::Trust,
                    ..
                }
            )
        };
        // A pair's evidence is its trust changes: only pairs with a fresh one can fire.
        let fresh: BTreeSet<u64> = self
            .keyed_within(
                Reading::Fresh,
                now_hours,
                hours,
                &[EventClass::RelationshipChanged],
            )
            .filter(|(_, e)| is_trust(e))
            .map(|(keys, _)| keys.pair)
            .collect();
        if fresh.is_empty() {
            return Vec::new();
        }
        // Keyed by the pair's hash first (a cheap compare), then its names in `pair`'s order
        // (two pairs sharing a hash stay apart).
        let ordered = |a: &'d str, b: &'d str| if a <= b { (a, b) } else { (b, a) };
        let mut pairs: BTreeMap<(u64, &str, &str), Vec<&StoryEvent>> = BTreeMap::new();
        let mut conflicts: BTreeMap<(u64, &str, &str), usize> = BTreeMap::new();
        for (keys, e) in window().filter(|(keys, _)| fresh.contains(&keys.pair)) {
            match &e.kind {
                StoryEventKind::RelationshipChanged {
                    from,
                    to,
                    facet: Facet::Trust,
                    ..
                } => {
                    let (a, b) = ordered(from, to);
                    pairs.entry((keys.pair, a, b)).or_default().push(e);
                }
                StoryEventKind::Interaction {
                    initiator,
                    target,
                    interaction,
                    ..
                } if interaction.is_hostile() => {
                    let (a, b) = ordered(initiator, target);
                    *conflicts.entry((keys.pair, a, b)).or_default() += 1;
                }
                _ => {}
            }
        }
        let mut found = Vec::new();
        for (key, events) in pairs {
            let mut fall = 0.0;
            let mut latest_cause = None;
            let mut trust_level = None;
            let mut names = ("", "");
            for e in &events {
                if let StoryEventKind::RelationshipChanged {
                    from,
                    to,
                    delta,
                    value,
                    cause,
                    ..
                } = &e.kind
                {
                    fall += delta;
                    if *delta < 0.0 {
                        latest_cause = Some(cause.as_str());
                    }
                    trust_level = Some(*value);
                    names = (from.as_str(), to.as_str());
                }
            }
            if fall <= -self.config.rivalry_trust_drop {
                found.push(
                    Found::new(SignalType::RivalryEscalation, pair(key.1, key.2), -fall)
                        .npcs([names.0, names.1])
                        .evidence(events)
                        .context("cause", latest_cause.unwrap_or_default())
                        .context("trust_level", format!("{:.2}", trust_level.unwrap_or(0.0)))
                        .context("trust_fall", format!("{:.2}", -fall))
                        .context(
                            "recent_conflicts",
                            conflicts.get(&key).copied().unwrap_or(0),
                        ),
                );
            }
        }
        // In the order of their anchors, as the rule has always listed them.
        found.sort_by(|a, b| a.anchor.cmp(&b.anchor));
        found
    }

    pub(super) fn faction_tension(&self, now_hours: f64) -> Vec<Found<'_>> {
        let mut sides: BTreeMap<String, Vec<&StoryEvent>> = BTreeMap::new();
        for e in self.pattern(Reading::All, now_hours, &[EventClass::Interaction]) {
            if let StoryEventKind::Interaction {
                interaction: InteractionKind::Argument | InteractionKind::Intimidation,
                initiator_faction: Some(a),
                target_faction: Some(b),
                ..
            } = &e.kind
                && a != b
            {
                sides.entry(pair(a, b)).or_default().push(e);
            }
        }
        sides
            .into_iter()
            .filter(|(_, events)| events.len() >= self.config.faction_min_conflicts)
            .map(|(factions, events)| {
                let npcs: Vec<&str> = events
                    .iter()
                    .filter_map(|e| match &e.kind {
                        StoryEventKind::Interaction {
                            initiator, target, ..
                        } => Some([initiator.as_str(), target.as_str()]),
                        _ => None,
                    })
                    .flatten()
                    .collect();
                Found::new(
                    SignalType::FactionTension,
                    factions.clone(),
                    ratio(
                        events.len(),
                        self.config.faction_min_conflicts,
                        self.config.importance_saturation,
                    ),
                )
                .npcs(npcs)
                .context("factions", factions)
                .context("conflicts", events.len())
                .evidence(events)
            })
            .collect()
    }

    pub(super) fn alliances(&self, now_hours: f64) -> Vec<Found<'_>> {
        let awareness = self.threat_awareness(now_hours);
        let mut found = Vec::new();
        for e in self.pattern(
            Reading::Fresh,
            now_hours,
            &[EventClass::Interaction, EventClass::RelationshipChanged],
        ) {
            match &e.kind {
                StoryEventKind::Interaction {
                    initiator,
                    target,
                    interaction: InteractionKind::Scheming,
                    success: true,
                    against: Some(victim),
                    target_loyalty_before,
                    ..
                } if *target_loyalty_before <= self.config.ally_loyalty_above => found.push(
                    Found::new(
                        SignalType::AllianceForming,
                        pair(initiator, target),
                        self.config.alliance_importance,
                    )
                    .npcs([initiator.as_str(), target.as_str()])
                    .context("against", victim)
                    .evidence([e]),
                ),
                StoryEventKind::RelationshipChanged {
                    from,
                    to,
                    facet: Facet::Loyalty,
                    delta,
                    value,
                    ..
                } if *value > self.config.ally_loyalty_above
                    && value - delta <= self.config.ally_loyalty_above =>
                {
                    let common = awareness.iter().find(|(_, (aware, _, _))| {
                        aware.contains(from.as_str()) && aware.contains(to.as_str())
                    });
                    if let Some((subject, _)) = common {
                        found.push(
                            Found::new(
                                SignalType::AllianceForming,
                                pair(from, to),
                                self.config.alliance_importance,
                            )
                            .npcs([from.as_str(), to.as_str()])
                            .context("against", subject)
                            .evidence([e]),
                        );
                    }
                }
                _ => {}
            }
        }
        found
    }

    pub(super) fn betrayals(&self, now_hours: f64) -> Vec<Found<'_>> {
        let ally = self.config.ally_loyalty_above;
        self.pattern(Reading::Fresh, now_hours, &[EventClass::Interaction])
            .filter_map(|e| {
                let StoryEventKind::Interaction {
                    initiator,
                    target,
                    interaction,
                    against,
                    target_loyalty_before,
                    victim_loyalty_before,
                    ..
                } = &e.kind
                else {
                    return None;
                };
                let (betrayed, loyalty) = match (interaction, against, victim_loyalty_before) {
                    (InteractionKind::Scheming, Some(victim), Some(loyalty)) if *loyalty > ally => {
                        (victim.as_str(), *loyalty)
                    }
                    (InteractionKind::Argument | InteractionKind::Intimidation, _, _)
                        if *target_loyalty_before > ally =>
                    {
                        (target.as_str(), *target_loyalty_before)
                    }
                    _ => return None,
                };
                Some(
                    Found::new(SignalType::Betrayal, pair(initiator, betrayed), loyalty)
                        .npcs([initiator.as_str(), betrayed])
                        .context("traitor", initiator)
                        .context("betrayed", betrayed)
                        .context("act", interaction.as_str())
                        .evidence([e]),
                )
            })
            .collect()
    }

    pub(super) fn unrequited(&self, now_hours: f64) -> Vec<Found<'_>> {
        self.pattern(Reading::Fresh, now_hours, &[EventClass::Interaction])
            .filter_map(|e| match &e.kind {
                StoryEventKind::Interaction {
                    initiator,
                    target,
                    interaction: InteractionKind::Courtship,
                    success: false,
                    initiator_affinity,
                    target_affinity,
                    ..
                } if *initiator_affinity >= self.config.unrequited_affinity_above
                    && *target_affinity <= self.config.unrequited_other_below =>
                {
                    Some(
                        Found::new(
                            SignalType::Unrequited,
                            pair(initiator, target),
                            initiator_affinity - target_affinity,
                        )
                        .npcs([initiator.as_str(), target.as_str()])
                        .context("suitor", initiator)
                        .context("beloved", target)
                        .evidence([e]),
                    )
                }
                _ => None,
            })
            .collect()
    }

    /// The influence ranking's change since the last detection, as a finished signal tuple.
    pub(super) fn power_shift(&mut self) -> Option<Candidate> {
        let influence = |raters: &BTreeMap<String, f64>| {
            (raters.len() >= self.config.power_min_raters)
                .then(|| raters.values().sum::<f64>() / raters.len() as f64)
        };
        let ranked = self
            .respect
            .iter()
            .filter_map(|(npc, raters)| influence(raters).map(|score| (npc.clone(), score)))
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))?;
        let previous = self.top.replace(ranked.0.clone());
        let old = previous.filter(|old| *old != ranked.0)?;
        let old_score = self.respect.get(&old).and_then(influence).unwrap_or(0.0);
        let margin = ranked.1 - old_score;
        if margin < self.config.power_shift_margin {
            self.top = Some(old);
            return None;
        }
        let location = self
            .history
            .events()
            .rev()
            .find(|e| matches!(&e.kind, StoryEventKind::RelationshipChanged { to, facet: Facet::Respect, .. } if *to == ranked.0))
            .map(|e| e.location.clone())
            .unwrap_or_default();
        let context = BTreeMap::from([
            ("from".to_owned(), old.clone()),
            ("to".to_owned(), ranked.0.clone()),
            ("margin".to_owned(), format!("{margin:.2}")),
        ]);
        Some(Candidate {
            signal_type: SignalType::PowerShift,
            anchor: format!("{old}->{}", ranked.0),
            importance: (self.config.power_shift_importance + margin).clamp(0.0, 1.0),
            npcs: BTreeSet::from([old, ranked.0]),
            players: BTreeSet::new(),
            location,
            context,
        })
    }
}
