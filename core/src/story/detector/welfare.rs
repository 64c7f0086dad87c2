//! Rules over needs, goals, mood, trade and whereabouts: scarcity, trade opportunities,
//! blocked goals, crises, celebrations and migrations. When a rule runs and how its finds are
//! merged is [`super::detecting`]'s job.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::detecting::StoryDetector;
use super::found::{Found, Gathering, joined, most_common, ratio};
use super::window::Reading;
use crate::social::chronicle::{GoalChange, StoryEvent, StoryEventKind};
use crate::social::gossip::RumourTopic;
use crate::social::interaction::InteractionKind;
use crate::story::history::EventClass;
use crate::story::signal::SignalType;

impl StoryDetector {
    pub(super) fn scarcity(&self, now_hours: f64) -> Vec<Found<'_>> {
        let mut short: BTreeMap<&str, (BTreeSet<&str>, Vec<&StoryEvent>)> = BTreeMap::new();
        for e in self.pattern(Reading::All, now_hours, &[EventClass::NeedLow]) {
            if let StoryEventKind::NeedLow { npc, need, .. } = &e.kind {
                let entry = short.entry(need.as_str()).or_default();
                entry.0.insert(npc.as_str());
                entry.1.push(e);
            }
        }
        short
            .into_iter()
            .filter(|(_, (npcs, _))| npcs.len() >= self.config.scarcity_min_npcs)
            .map(|(need, (npcs, events))| {
                Found::new(
                    SignalType::ResourceScarcity,
                    need,
                    ratio(
                        npcs.len(),
                        self.config.scarcity_min_npcs,
                        self.config.importance_saturation,
                    ),
                )
                .npcs(npcs.iter().copied())
                .context("need", need)
                .context("short", npcs.len())
                .at(&most_common(&events))
                .evidence(events)
            })
            .collect()
    }

    pub(super) fn trade(&self, now_hours: f64) -> Vec<Found<'_>> {
        const TRADE: &[EventClass] = &[EventClass::Interaction, EventClass::RumourHeard];
        let evidence_of_trade = |e: &StoryEvent| {
            matches!(
                &e.kind,
                StoryEventKind::Interaction {
                    interaction: InteractionKind::Trade,
                    ..
                } | StoryEventKind::RumourHeard {
                    gossip: RumourTopic::Opportunity,
                    accepted: true,
                    ..
                }
            )
        };
        if !self
            .pattern(Reading::Fresh, now_hours, TRADE)
            .any(evidence_of_trade)
        {
            return Vec::new();
        }
        // Sets only counted and joined into the signal's (sorted) NPCs: their order is moot.
        let mut demand: HashSet<&str> = HashSet::new();
        let mut supply: HashSet<&str> = HashSet::new();
        let mut evidence = Vec::new();
        let mut market = None;
        for e in self.pattern(Reading::All, now_hours, TRADE) {
            match &e.kind {
                StoryEventKind::Interaction {
                    initiator,
                    target,
                    interaction: InteractionKind::Trade,
                    success,
                    ..
                } => {
                    if *success {
                        supply.extend([initiator.as_str(), target.as_str()]);
                        market = Some(e.location.as_str());
                    } else {
                        demand.insert(initiator.as_str());
                    }
                    evidence.push(e);
                }
                StoryEventKind::RumourHeard {
                    listener,
                    gossip: RumourTopic::Opportunity,
                    accepted: true,
                    ..
                } => {
                    demand.insert(listener.as_str());
                    evidence.push(e);
                }
                _ => {}
            }
        }
        match market {
            Some(market) if demand.len() >= self.config.trade_min_demand => {
                vec![
                    Found::new(
                        SignalType::TradeOpportunity,
                        market,
                        ratio(
                            demand.len(),
                            self.config.trade_min_demand,
                            self.config.importance_saturation,
                        ),
                    )
                    .npcs(demand.iter().chain(&supply).copied())
                    .context("demand", demand.len())
                    .context("suppliers", supply.len())
                    .context("market", market)
                    .at(market)
                    .evidence(evidence),
                ]
            }
            _ => Vec::new(),
        }
    }

    pub(super) fn blocked_goals(&self, now_hours: f64) -> Vec<Found<'_>> {
        let mut failures: BTreeMap<(&str, &str), Vec<&StoryEvent>> = BTreeMap::new();
        let mut found = Vec::new();
        for e in self.pattern(Reading::All, now_hours, &[EventClass::Goal]) {
            match &e.kind {
                StoryEventKind::Goal {
                    npc,
                    description,
                    change: GoalChange::Blocked,
                } => found.push(
                    Found::new(
                        SignalType::GoalBlocked,
                        joined(npc, description),
                        self.config.goal_blocked_importance,
                    )
                    .npcs([npc.as_str()])
                    .context("goal", description)
                    .context("reason", "no plan")
                    .evidence([e]),
                ),
                StoryEventKind::Goal {
                    npc,
                    description,
                    change: GoalChange::Failed,
                } => failures
                    .entry((npc.as_str(), description.as_str()))
                    .or_default()
                    .push(e),
                _ => {}
            }
        }
        for ((npc, description), events) in failures {
            if events.len() >= self.config.goal_failures_blocked {
                found.push(
                    Found::new(
                        SignalType::GoalBlocked,
                        joined(npc, description),
                        self.config.goal_failing_importance,
                    )
                    .npcs([npc])
                    .context("goal", description)
                    .context("reason", format!("failed {} times", events.len()))
                    .evidence(events),
                );
            }
        }
        found
    }

    pub(super) fn crises(&self, now_hours: f64) -> Vec<Found<'_>> {
        let mut distressed = BTreeSet::new();
        let mut evidence = Vec::new();
        for e in self.within(
            Reading::All,
            now_hours,
            self.config.gathering_window_hours,
            &[EventClass::MoodChanged],
        ) {
            if let StoryEventKind::MoodChanged {
                npc, mood, stress, ..
            } = &e.kind
                && (*mood < self.config.crisis_mood_below
                    || *stress > self.config.crisis_stress_above)
            {
                distressed.insert(npc.as_str());
                evidence.push(e);
            }
        }
        if distressed.len() < self.config.crisis_min_npcs {
            return Vec::new();
        }
        let place = most_common(&evidence);
        vec![
            Found::new(
                SignalType::Crisis,
                "crisis",
                ratio(
                    distressed.len(),
                    self.config.crisis_min_npcs,
                    self.config.importance_saturation,
                ),
            )
            .npcs(distressed.iter().copied())
            .context("distressed", distressed.len())
            .at(&place)
            .evidence(evidence),
        ]
    }

    pub(super) fn celebrations(&self, now_hours: f64) -> Vec<Found<'_>> {
        let hours = self.config.gathering_window_hours;
        let window =
            || self.keyed_within(Reading::All, now_hours, hours, &[EventClass::Interaction]);
        let friendly = |e: &StoryEvent| match &e.kind {
            StoryEventKind::Interaction {
                interaction,
                success: true,
                ..
            } => !interaction.is_hostile() && *interaction != InteractionKind::Favor,
            _ => false,
        };
        // A place's evidence is its friendly interactions: only places with a fresh one can
        // fire.
        let fresh: BTreeSet<u64> = self
            .keyed_within(Reading::Fresh, now_hours, hours, &[EventClass::Interaction])
            .filter(|(_, e)| friendly(e))
            .map(|(keys, _)| keys.place)
            .collect();
        let mut places: BTreeMap<&str, (BTreeMap<&str, f64>, Vec<&StoryEvent>)> = BTreeMap::new();
        for (_, e) in window().filter(|(keys, e)| fresh.contains(&keys.place) && friendly(e)) {
            if let StoryEventKind::Interaction {
                initiator,
                target,
                initiator_mood,
                target_mood,
                ..
            } = &e.kind
            {
                let entry = places.entry(e.location.as_str()).or_default();
                entry.0.insert(initiator.as_str(), *initiator_mood);
                entry.0.insert(target.as_str(), *target_mood);
                entry.1.push(e);
            }
        }
        places
            .into_iter()
            .filter_map(|(place, (moods, events))| {
                let mean = moods.values().sum::<f64>() / moods.len().max(1) as f64;
                (events.len() >= self.config.celebration_min_positive
                    && moods.len() >= self.config.celebration_min_npcs
                    && mean >= self.config.celebration_mood_above)
                    .then(|| {
                        Found::new(SignalType::Celebration, place, mean)
                            .npcs(moods.keys().copied())
                            .context("gathered", moods.len())
                            .context("mean_mood", format!("{mean:.2}"))
                            .evidence(events)
                    })
            })
            .collect()
    }

    pub(super) fn migrations(&self, now_hours: f64) -> Vec<Found<'_>> {
        let mut flows: BTreeMap<(bool, &str), Gathering<'_>> = BTreeMap::new();
        for e in self.within(
            Reading::All,
            now_hours,
            self.config.gathering_window_hours,
            &[EventClass::Moved],
        ) {
            if let StoryEventKind::Moved { npc, from } = &e.kind {
                for key in [(true, e.location.as_str()), (false, from.as_str())] {
                    let entry = flows.entry(key).or_default();
                    entry.0.insert(npc.as_str());
                    entry.1.push(e);
                }
            }
        }
        flows
            .into_iter()
            .filter(|(_, (npcs, _))| npcs.len() >= self.config.migration_min_npcs)
            .map(|((arriving, place), (npcs, events))| {
                let direction = if arriving { "to" } else { "from" };
                Found::new(
                    SignalType::Migration,
                    format!("{direction}:{place}"),
                    ratio(
                        npcs.len(),
                        self.config.migration_min_npcs,
                        self.config.importance_saturation,
                    ),
                )
                .npcs(npcs.iter().copied())
                .context(direction, place)
                .context("movers", npcs.len())
                .at(place)
                .evidence(events)
            })
            .collect()
    }
}
