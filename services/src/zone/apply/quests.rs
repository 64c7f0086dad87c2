//! What the game does for and about quests: facts granted to or revoked from an NPC (what a
//! goal's `has_fact` reads), a goal it assigned withdrawn, and a quest's outcome, which the
//! NPCs it was about remember through the social fabric — their regard for the player, their
//! mood, a rumour they tell on (`deed_remembered`). A refused `goal_assigned` is told as
//! `goal_refused` by `reports`.

use std::collections::BTreeMap;

use geppetto_core::life::simulator::SimEvent;
use geppetto_core::social::Deed;
use geppetto_core::vocabulary::Symbol;

use crate::bus::StreamKind;
use crate::bus::envelope::{NpcEvent, Regard, WorldEvent, WorldMessage};
use crate::zone::game::Refused;
use crate::zone::{Zone, ZoneOutput, unknown_npc};

/// The reason of the `goal_failed` a withdrawn goal ends with.
const WITHDRAWN: &str = "withdrawn";

/// The kind a deed is felt as by an NPC with a wellbeing layer.
const DEED_FELT: &str = "quest_outcome";

impl Zone {
    /// Applies `facts_granted`, `facts_revoked`, `goal_withdrawn` or `quest_outcome`.
    pub(super) fn apply_quest(&mut self, message: &WorldMessage, out: &mut ZoneOutput) {
        let result = match &message.event {
            WorldEvent::FactsGranted { npc, facts } => self.grant_facts(npc, facts),
            WorldEvent::FactsRevoked { npc, facts } => self.revoke_facts(npc, facts),
            WorldEvent::GoalWithdrawn { npc, goal } => self.withdraw_goal(npc, goal, out),
            WorldEvent::QuestOutcome {
                by,
                outcome,
                quest,
                npcs,
                signal,
                goal,
            } => self.quest_outcome((by, *outcome, quest.as_deref()), npcs, (signal, goal), out),
            _ => Ok(()),
        };
        out.refuse_on(message, result);
    }

    /// The index of NPC `npc`, or the refusal naming it.
    fn known_npc(&self, npc: &str) -> Result<usize, Refused> {
        self.npc_index(npc)
            .ok_or_else(|| ("npc", unknown_npc(&self.name, npc)))
    }

    /// `facts` now hold for `npc` (all or none: a name past the zone's bound refuses them all).
    fn grant_facts(&mut self, npc: &str, facts: &[String]) -> Result<(), Refused> {
        let index = self.known_npc(npc)?;
        let symbols: Vec<Symbol> = facts
            .iter()
            .map(|fact| self.event_name(fact))
            .collect::<Result<_, _>>()
            .map_err(|reason| ("facts", reason))?;
        let held = &mut self.agents[index].agent.facts;
        for symbol in symbols {
            if !held.contains(&symbol) {
                held.push(symbol);
            }
        }
        Ok(())
    }

    /// `facts` no longer hold for `npc` (one it never held changes nothing).
    fn revoke_facts(&mut self, npc: &str, facts: &[String]) -> Result<(), Refused> {
        let index = self.known_npc(npc)?;
        let symbols: Vec<Symbol> = (facts.iter())
            .filter_map(|fact| self.vocabulary.lookup(fact))
            .collect();
        self.agents[index]
            .agent
            .facts
            .retain(|held| !symbols.contains(held));
        Ok(())
    }

    /// `npc` drops goal `goal`: it fails with reason `withdrawn`.
    fn withdraw_goal(
        &mut self,
        npc: &str,
        goal: &str,
        out: &mut ZoneOutput,
    ) -> Result<(), Refused> {
        let index = self.known_npc(npc)?;
        let withdrawn = (self.agents[index]
            .layers
            .get_mut()
            .and_then(|layers| layers.goals.as_mut()))
        .and_then(|book| book.withdraw(goal))
        .ok_or_else(|| ("goal", format!("NPC `{npc}` pursues no goal `{goal}`")))?;
        let failed = SimEvent::GoalFailed {
            goal: withdrawn.note(),
            reason: WITHDRAWN,
        };
        self.emit(index, &[failed], out);
        Ok(())
    }

    /// The NPCs a quest was about: those named, else the live signal's (its wrongdoers
    /// aside), else those pursuing the goal.
    fn quest_npcs(
        &mut self,
        npcs: &Option<Vec<String>>,
        (signal, goal): (&Option<String>, &Option<String>),
    ) -> Result<Vec<usize>, Refused> {
        if let Some(npcs) = npcs {
            return (npcs.iter().enumerate())
                .map(|(i, npc)| {
                    self.npc_index(npc).ok_or_else(|| {
                        (
                            "npcs",
                            format!("npcs[{i}]: {}", unknown_npc(&self.name, npc)),
                        )
                    })
                })
                .collect();
        }
        if let Some(signal) = signal {
            let named = self.social.signal_npcs(signal).ok_or_else(|| {
                let reason = format!(
                    "no live story signal `{signal}` to read the NPCs from: send quest_outcome \
                     before story_signal_resolved, or name the npcs"
                );
                ("signal", reason)
            })?;
            return Ok(named.iter().filter_map(|npc| self.npc_index(npc)).collect());
        }
        if let Some(goal) = goal {
            let pursuing = |i: &usize| {
                (self.agents[*i].layers.goals.iter())
                    .flat_map(|book| &book.goals)
                    .any(|g| g.id.as_deref() == Some(goal.as_str()))
            };
            let found: Vec<usize> = (0..self.agents.len()).filter(pursuing).collect();
            if found.is_empty() {
                return Err((
                    "goal",
                    format!("no NPC pursues goal `{goal}`: name the npcs"),
                ));
            }
            return Ok(found);
        }
        Err((
            "npcs",
            "name the npcs, a live story signal or an assigned goal".to_owned(),
        ))
    }

    /// Each NPC the quest was about remembers `by`'s deed: regard, mood and a rumour; each
    /// tells it (`deed_remembered`, with its regard before and after).
    fn quest_outcome(
        &mut self,
        (by, deed, quest): (&str, Deed, Option<&str>),
        npcs: &Option<Vec<String>>,
        about: (&Option<String>, &Option<String>),
        out: &mut ZoneOutput,
    ) -> Result<(), Refused> {
        let involved = self.quest_npcs(npcs, about)?;
        let what = quest
            .or(about.0.as_deref())
            .or(about.1.as_deref())
            .unwrap_or("a quest")
            .to_owned();
        let now_hours = self.now_hours();
        let config = &self.social.fabric.config;
        let mood = deed.weight(config.deed_failed_share) * config.deed_mood;
        for index in involved {
            let npc = self.agents[index].agent.id.clone();
            let regard =
                |zone: &Zone| Regard::from(&zone.social.fabric.relationships.get(&npc, by));
            let before = regard(self);
            let place = self.social_place(index);
            (self.social).remember_deed(&npc, by, (deed, &what), (&place, now_hours));
            self.feel(index, DEED_FELT, &BTreeMap::new(), Some(mood), now_hours);
            let after = regard(self);
            let remembered = NpcEvent::DeedRemembered {
                npc,
                by: by.to_owned(),
                outcome: deed.as_str(),
                quest: quest.map(str::to_owned),
                before,
                after,
            };
            self.publish(index, StreamKind::NpcEvents, &remembered, out);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
