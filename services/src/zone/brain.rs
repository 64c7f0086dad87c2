//! The debug-brain view of one NPC, typed once and shown two ways: as JSON by the admin API
//! (`GET /npcs/{id}/brain`, which the inspector draws) and as text by `geppetto brain` and
//! `?format=text` (its `Display`).
//!
//! It reads a zone and changes nothing: the NPC's considerations with their curves, mood and
//! stress, schedule block, goals with their progress, feelings, queued plan, reactive set,
//! social ties and rumours, the running action, and the decider's ranking of what it could do
//! next (`Decider::rank` under the seed its next decision would use), every factor shown.

use std::fmt;

use geppetto_core::decision::consideration::Updater;
use geppetto_core::life::goal_registry::GoalRecord;
use geppetto_core::life::simulator::{ReactiveLayer, SimulatedAgent};
use geppetto_core::rng::derive_seed;
use geppetto_core::wire::response::{IneligibleOut, RankedOut, round4};
use geppetto_core::wire::{ineligible_out, ranked_out};
use serde::Serialize;

use crate::zone::Zone;

/// Points of a response curve drawn over its domain (`[value, pressure]`).
const CURVE_PREVIEW_POINTS: usize = 21;

/// Candidates the brain view lists.
pub const BRAIN_TOP_CANDIDATES: usize = 5;

/// Why an NPC has no mood: mood and stress are derived from an archetype's needs.
const NO_MOOD: &str = "no mood or stress: they are derived from an archetype's needs, and this NPC was given inline, without an archetype";

/// One NPC's head at one moment.
#[derive(Clone, Debug, Serialize)]
pub struct Brain {
    /// The NPC's id.
    pub id: String,
    /// Its display name.
    pub name: String,
    /// The zone it lives in.
    pub zone: String,
    /// Its processing tier (`active`, `nearby`, `background`).
    pub tier: &'static str,
    /// The room it is in.
    pub room: String,
    /// The zone's game time, ticks.
    pub game_time: u64,
    /// Its needs and other considerations.
    pub considerations: Vec<ConsiderationView>,
    /// Mood in [−1, 1], derived from its needs (absent: see `mood_note`).
    pub mood: Option<f64>,
    /// Stress in [0, 1], derived from its unmet needs.
    pub stress: Option<f64>,
    /// Why `mood` and `stress` are absent, when they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mood_note: Option<&'static str>,
    /// The schedule's activity in force.
    pub schedule_block: Option<String>,
    /// Its goals, each with its progress.
    pub goals: Vec<GoalView>,
    /// Its persona's feelings (anger, stress, fear…), a separate model from `mood`.
    pub feelings: Vec<Feeling>,
    /// Its queued actions, next first.
    pub plan: Vec<QueuedStep>,
    /// Its reactive utility set, if it has one.
    pub reactive_set: Option<ReactiveView>,
    /// Consecutive failed updates (isolation).
    pub errors: u32,
    /// Its friends, rivals, allies and the rumours it holds.
    pub social: SocialView,
    /// What it is doing.
    pub current_action: Option<CurrentAction>,
    /// The best candidates for its next decision, every factor of each utility.
    pub top_candidates: Vec<RankedOut>,
    /// The options ruled out, each with the first gate that removed it (its own running
    /// action is shown as `current_action`, not here).
    pub ineligible: Vec<IneligibleOut>,
}

/// A consideration as the view shows it.
#[derive(Clone, Debug, Serialize)]
pub struct ConsiderationView {
    /// Its name (`HUNGER`).
    pub name: String,
    /// Its value.
    pub value: f64,
    /// Lower bound.
    pub min: f64,
    /// Upper bound.
    pub max: f64,
    /// Its weight (the NPC's personality).
    pub weight: f64,
    /// Below its critical threshold.
    pub critical: bool,
    /// Units lost per game hour (negative: regained).
    pub decay_per_hour: f64,
    /// Its response curve: `[[value, pressure], …]` from `min` to `max`.
    pub curve: Vec<[f64; 2]>,
}

/// A goal and how far it has come.
#[derive(Clone, Debug, Serialize)]
pub struct GoalView {
    /// The goal as it is stored.
    #[serde(flatten)]
    pub record: GoalRecord,
    /// Progress in [0, 1].
    pub progress: f64,
}

/// One feeling of the NPC's persona.
#[derive(Clone, Debug, Serialize)]
pub struct Feeling {
    /// Its name.
    pub name: String,
    /// Its value.
    pub value: f64,
}

/// A queued action.
#[derive(Clone, Debug, Serialize)]
pub struct QueuedStep {
    /// Provider id.
    pub provider: String,
    /// Action id.
    pub action: String,
    /// Ordered by a player.
    pub player_queued: bool,
    /// A step of a goal's plan.
    pub from_plan: bool,
}

/// The NPC's reactive utility set.
#[derive(Clone, Debug, Serialize)]
pub struct ReactiveView {
    /// The set's name.
    pub name: String,
    /// The set's action running, if any.
    pub running: Option<String>,
    /// Each consideration's shape over its normalised input.
    pub curves: Vec<SetCurve>,
}

/// One consideration's shape in a reactive set.
#[derive(Clone, Debug, Serialize)]
pub struct SetCurve {
    /// The set's action.
    pub action: String,
    /// The consideration.
    pub consideration: String,
    /// `[[input, output], …]` over `[0, 1]`.
    pub curve: Vec<[f64; 2]>,
}

/// The NPC's social ties.
#[derive(Clone, Debug, Serialize)]
pub struct SocialView {
    /// NPCs it counts as friends.
    pub friends: Vec<String>,
    /// NPCs it counts as rivals.
    pub rivals: Vec<String>,
    /// NPCs it counts as allies.
    pub allies: Vec<String>,
    /// Rumours it holds.
    pub rumours: Vec<RumourView>,
}

/// A rumour the NPC holds.
#[derive(Clone, Debug, Serialize)]
pub struct RumourView {
    /// Whom or what it is about.
    pub subject: String,
    /// What kind of rumour.
    pub kind: &'static str,
    /// How many tellings from its origin.
    pub depth: u32,
    /// How sure the holder is.
    pub confidence: f64,
}

/// The action the NPC is carrying out.
#[derive(Clone, Debug, Serialize)]
pub struct CurrentAction {
    /// Provider id.
    pub provider: String,
    /// Action id.
    pub action: String,
    /// Game hours since it started.
    pub elapsed_hours: f64,
    /// The utility it holds on with.
    pub utility: f64,
}

/// A consideration's response curve sampled at [`CURVE_PREVIEW_POINTS`] values from `min` to
/// `max`.
fn curve_preview(c: &geppetto_core::Consideration, convex_exponent: f64) -> Vec<[f64; 2]> {
    let steps = (CURVE_PREVIEW_POINTS - 1) as f64;
    (0..CURVE_PREVIEW_POINTS)
        .map(|i| {
            let value = c.min() + (c.max() - c.min()) * i as f64 / steps;
            [
                round4(value),
                round4(c.curve().pressure(value, c.min(), c.max(), convex_exponent)),
            ]
        })
        .collect()
}

/// A utility-set consideration's shape sampled over its normalised input `[0, 1]`.
fn shape_preview(shape: &geppetto_core::Shape) -> Vec<[f64; 2]> {
    let steps = (CURVE_PREVIEW_POINTS - 1) as f64;
    (0..CURVE_PREVIEW_POINTS)
        .map(|i| {
            let x = i as f64 / steps;
            [round4(x), round4(shape.evaluate(x))]
        })
        .collect()
}

impl Brain {
    /// The view of NPC `id` of `zone` with its `top` best candidates, if the zone holds it.
    pub fn of(zone: &Zone, id: &str, top: usize) -> Option<Self> {
        let index = zone.npc_index(id)?;
        let agent = &zone.agents[index];
        let meta = &zone.meta[index];
        let ranking = zone.decider().rank(
            &agent.agent,
            &zone.world,
            derive_seed(zone.tick, index as u64),
        );
        let running = agent.running.as_ref();
        Some(Self {
            id: id.to_owned(),
            name: meta.name.to_string(),
            zone: zone.name.clone(),
            tier: meta.tier.tier.as_str(),
            room: zone.room_name(meta.room).0.to_owned(),
            game_time: zone.game_time,
            considerations: considerations(zone, agent),
            mood: agent
                .layers
                .wellbeing
                .as_deref()
                .map(|(_, w)| round4(w.mood)),
            stress: agent
                .layers
                .wellbeing
                .as_deref()
                .map(|(_, w)| round4(w.stress)),
            mood_note: agent.layers.wellbeing.is_none().then_some(NO_MOOD),
            schedule_block: agent
                .layers
                .schedule
                .as_ref()
                .and_then(|s| s.current)
                .map(|a| zone.vocabulary.name(a).to_owned()),
            goals: goals(zone, agent),
            feelings: feelings(agent),
            plan: plan(agent),
            reactive_set: agent.layers.reactive.as_deref().map(reactive_view),
            errors: zone.isolation.failures(id),
            social: social_view(zone, id),
            current_action: running.map(|r| CurrentAction {
                provider: r.provider.clone(),
                action: r.action.id.clone(),
                elapsed_hours: round4(r.elapsed_hours),
                utility: round4(r.continuation_utility),
            }),
            top_candidates: ranking
                .ranked()
                .iter()
                .take(top)
                .map(|c| ranked_out(&zone.world, c))
                .collect(),
            ineligible: ranking
                .ineligible
                .iter()
                .map(|i| ineligible_out(&zone.world, i))
                // Its own running action fills its slot: it is what it does, not ruled out.
                .filter(|i| {
                    running.is_none_or(|r| r.provider != i.provider || r.action.id != i.action)
                })
                .collect(),
        })
    }
}

/// `agent`'s considerations with their curves.
fn considerations(zone: &Zone, agent: &SimulatedAgent) -> Vec<ConsiderationView> {
    let convex_exponent = zone.decider().tuning().convex_exponent;
    agent
        .agent
        .considerations
        .iter()
        .map(|c| ConsiderationView {
            name: zone.vocabulary.name(c.name).to_owned(),
            value: round4(c.value),
            min: c.min(),
            max: c.max(),
            weight: c.weight,
            critical: c.is_critical(),
            decay_per_hour: match *c.updater() {
                Updater::LinearDecay { rate } => rate,
                Updater::LinearRegen { rate } => -rate,
                _ => 0.0,
            },
            curve: curve_preview(c, convex_exponent),
        })
        .collect()
}

/// `agent`'s goals with their progress.
fn goals(zone: &Zone, agent: &SimulatedAgent) -> Vec<GoalView> {
    let at = agent.running.as_ref().map(|r| r.provider.as_str());
    agent
        .layers
        .goals
        .as_ref()
        .map(|book| {
            book.goals
                .iter()
                .map(|g| GoalView {
                    record: zone.goal_predicates.goal_record(g, &zone.vocabulary),
                    progress: round4(g.progress(&agent.agent, &zone.world, at)),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `agent`'s feelings, when it has a temper.
fn feelings(agent: &SimulatedAgent) -> Vec<Feeling> {
    agent
        .layers
        .affect
        .as_ref()
        .map(|layer| {
            layer
                .model
                .state_names()
                .iter()
                .zip(&layer.state.values)
                .map(|(name, value)| Feeling {
                    name: name.to_string(),
                    value: round4(*value),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `agent`'s queued plan.
fn plan(agent: &SimulatedAgent) -> Vec<QueuedStep> {
    agent
        .queue
        .iter()
        .map(|q| QueuedStep {
            provider: q.provider.clone(),
            action: q.action.clone(),
            player_queued: q.player_queued,
            from_plan: q.from_plan,
        })
        .collect()
}

/// A reactive set's running action and its actions' curves.
fn reactive_view(layer: &ReactiveLayer) -> ReactiveView {
    ReactiveView {
        name: layer.set.name.clone(),
        running: layer
            .state
            .running
            .and_then(|i| layer.set.actions.get(i))
            .map(|a| a.name.clone()),
        curves: layer
            .set
            .actions
            .iter()
            .flat_map(|action| {
                action.considerations.iter().map(|c| SetCurve {
                    action: action.name.clone(),
                    consideration: c.name.clone(),
                    curve: shape_preview(&c.shape),
                })
            })
            .collect(),
    }
}

/// NPC `id`'s social ties and the rumours it holds.
fn social_view(zone: &Zone, id: &str) -> SocialView {
    let fabric = &zone.social.fabric;
    let owned = |names: Vec<&str>| names.into_iter().map(str::to_owned).collect();
    SocialView {
        friends: owned(fabric.relationships.friends(id)),
        rivals: owned(fabric.relationships.rivals(id)),
        allies: owned(fabric.relationships.allies(id)),
        rumours: fabric
            .rumours(id)
            .iter()
            .map(|r| RumourView {
                subject: r.subject.clone(),
                kind: r.kind.as_str(),
                depth: r.depth,
                confidence: round4(r.confidence),
            })
            .collect(),
    }
}

/// Twenty characters of `#` and `.` showing where `value` lies between `min` and `max`.
fn bar(value: f64, min: f64, max: f64) -> String {
    let filled = if max > min {
        (((value - min) / (max - min)) * 20.0)
            .round()
            .clamp(0.0, 20.0) as usize
    } else {
        0
    };
    format!("{}{}", "#".repeat(filled), ".".repeat(20 - filled))
}

impl fmt::Display for Brain {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            out,
            "{} ({}) in {}, tier {}",
            self.name, self.id, self.room, self.tier
        )?;
        if let Some(mood) = self.mood {
            let stress = self.stress.unwrap_or_default();
            writeln!(
                out,
                "mood {mood:+.2}, stress {stress:.2}, errors {}",
                self.errors
            )?;
        }
        if let Some(block) = &self.schedule_block {
            writeln!(out, "schedule: {block}")?;
        }
        for c in &self.considerations {
            let flag = if c.critical { " CRITICAL" } else { "" };
            writeln!(
                out,
                "  {:<9} [{}] {:>7.2}  weight {:?}  decay/h {:?}{flag}",
                c.name,
                bar(c.value, c.min, c.max),
                c.value,
                c.weight,
                c.decay_per_hour
            )?;
        }
        for g in &self.goals {
            writeln!(
                out,
                "goal: {} ({}, {:.0} %)",
                g.record.description,
                g.record.category,
                g.progress * 100.0
            )?;
        }
        let social = &self.social;
        for (key, list) in [
            ("friends", &social.friends),
            ("rivals", &social.rivals),
            ("allies", &social.allies),
        ] {
            if !list.is_empty() {
                writeln!(out, "{key}: {}", list.join(", "))?;
            }
        }
        for r in &social.rumours {
            writeln!(
                out,
                "rumour: {} about {} (depth {}, confidence {:.2})",
                r.kind, r.subject, r.depth, r.confidence
            )?;
        }
        match &self.current_action {
            Some(a) => writeln!(out, "doing: {}/{}", a.provider, a.action)?,
            None => writeln!(out, "doing: nothing")?,
        }
        for (i, c) in self.top_candidates.iter().enumerate() {
            write_candidate(out, i + 1, c)?;
        }
        Ok(())
    }
}

/// One ranked candidate as the text view lists it, `rank` from 1.
fn write_candidate(out: &mut fmt::Formatter<'_>, rank: usize, c: &RankedOut) -> fmt::Result {
    let b = &c.breakdown;
    // Foresight shows only where it bites: an action outlasting a need running out.
    let foresight = if b.foresight == 1.0 {
        String::new()
    } else {
        format!(", foresight {:?}", b.foresight)
    };
    writeln!(
        out,
        "{rank}. {}/{} -> {:.2}  (benefit {:?}, priority {:?}, schedule {:?}, personality {:?}, context {:?}, distance {:?}{foresight}, cost {:?})",
        c.provider,
        c.action,
        c.utility,
        b.benefit,
        b.priority,
        b.schedule,
        b.personality,
        b.context,
        b.distance,
        b.cost
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_brain_view_explains_the_ranking() {
        let zone = crate::zone::testing::village();
        let view = Brain::of(&zone, "bram", 3).expect("bram");
        assert_eq!(view.considerations.len(), 7);
        assert_eq!(view.top_candidates.len(), 3);
        assert!(view.top_candidates[0].utility >= view.top_candidates[1].utility);
        let json = serde_json::to_value(&view).expect("json");
        assert!(json["top_candidates"][0]["breakdown"]["benefit"].is_number());
        let text = view.to_string();
        assert!(text.starts_with("Bram the smith (bram) in forge"), "{text}");
        assert!(Brain::of(&zone, "nobody", 3).is_none());
    }

    #[test]
    fn a_running_action_is_not_listed_as_ineligible_and_a_missing_mood_is_explained() {
        use crate::zone::testing::{advance, enter, village};
        let mut zone = village();
        for room in [
            "square", "forge", "tavern", "market", "bakery", "chapel", "cottages",
        ] {
            enter(&mut zone, room);
        }
        advance(&mut zone, 30);
        let mut busy = 0;
        for index in 0..zone.agents.len() {
            let id = zone.agents[index].agent.id.clone();
            let view = Brain::of(&zone, &id, 3).expect("npc");
            if let Some(running) = &view.current_action {
                busy += 1;
                assert!(
                    !view
                        .ineligible
                        .iter()
                        .any(|i| i.provider == running.provider && i.action == running.action),
                    "{id}: its own action {}/{} is listed as ineligible",
                    running.provider,
                    running.action
                );
            }
            assert_eq!(view.mood.is_none(), view.mood_note.is_some(), "{id}");
        }
        assert!(busy > 0, "some NPC is doing something after 30 ticks");
    }
}
