//! Daily schedules: blocks of the day with an activity, a
//! place and conditions, turned into what the decision engine already understands — the active
//! block becomes the agent's [`SchedulePull`]: a bonus added to the utility of the actions that
//! carry one of its tags or stand at its place. Schedules are data; nothing here is a branch
//! per activity.
//!
//! - A block covers `[start_hour, end_hour)`; an end before the start wraps midnight.
//! - Conditions read the world: `is`/`not` a named active context (weather, season or event —
//!   a storm is a context the world turns on), `gt` a context-aggregate value.
//! - Among the blocks that cover the hour and whose conditions hold, the highest priority wins
//!   (ties: the earlier block). Temporary overrides with an expiry come before the schedule.
//! - Adherence (0–1) scales the bonus: `tag_bonus · adherence` for an action with a tag of the
//!   activity, `place_bonus · adherence` for one at its place. It is a score, never a coin: at
//!   0 needs always decide; the higher it is, the more pressing a need must be to win over the
//!   schedule (an empty need's benefit is its weight times what the action restores).
//! - A change of activity is an event.

use crate::decision::agent::{Agent, SchedulePull, lookup};
use crate::decision::world::World;
use crate::vocabulary::Symbol;

/// What a condition is about (for authors and validation; all read the world's contexts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConditionKind {
    /// Weather (`storm`, `rain`…), a context the world turns on.
    Weather,
    /// Season (`winter`…), a context.
    Season,
    /// An event (`festival`…), a context; `gt` reads its aggregate value.
    Event,
}

/// A test on the world.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConditionTest {
    /// The named context is active.
    Is(Symbol),
    /// The named context is not active.
    Not(Symbol),
    /// The named context-aggregate value is above the number.
    Gt(Symbol, f64),
}

/// A condition of a schedule block.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Condition {
    /// What it is about.
    pub kind: ConditionKind,
    /// The test.
    pub test: ConditionTest,
}

impl Condition {
    /// Whether it holds in `world`.
    pub fn holds(&self, world: &World) -> bool {
        let active = |name: Symbol| world.contexts.iter().any(|c| c.name == name);
        match self.test {
            ConditionTest::Is(name) => active(name),
            ConditionTest::Not(name) => !active(name),
            ConditionTest::Gt(name, threshold) => {
                lookup(&world.context_aggregates, name).is_some_and(|v| v > threshold)
            }
        }
    }
}

/// A block of the day.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ScheduleBlock {
    /// Hour of day it starts (0–24).
    pub start_hour: f64,
    /// Hour of day it ends; before `start_hour` it wraps midnight.
    pub end_hour: f64,
    /// What the agent does (`work`, `sleep`, `worship`…).
    pub activity: Symbol,
    /// Action tags the activity favours.
    pub tags: Vec<Symbol>,
    /// Where: a provider id, or a placeholder like `{workplace}` resolved per agent.
    pub location: Option<String>,
    /// Higher wins when blocks overlap.
    pub priority: f64,
    /// All must hold.
    pub conditions: Vec<Condition>,
    /// The coarse event a simplified (far from players) NPC records when the block begins
    /// (`meal` for a lunch block), reconstructed by the profile's effects table.
    pub coarse_event: Option<Symbol>,
    /// Whether the block binds (see [`SchedulePull::binding`]): a sleep block is kept by
    /// sleeping, not merely favoured.
    #[serde(default)]
    pub binding: bool,
}

impl ScheduleBlock {
    /// Whether the block covers `hour_of_day` (wrapping midnight when it ends before it starts).
    pub fn covers(&self, hour_of_day: f64) -> bool {
        if self.start_hour <= self.end_hour {
            (self.start_hour..self.end_hour).contains(&hour_of_day)
        } else {
            hour_of_day >= self.start_hour || hour_of_day < self.end_hour
        }
    }
}

/// A schedule: its blocks and how strongly the agent keeps to them.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    /// The blocks, in authored order.
    pub blocks: Vec<ScheduleBlock>,
    /// How strictly the agent keeps to it (0–1): the share of the bonuses it feels.
    pub adherence: f64,
    /// Utility added to an action carrying a tag of the activity in force (× adherence).
    pub tag_bonus: f64,
    /// Utility added to an action at the activity's place (× adherence).
    pub place_bonus: f64,
}

impl Schedule {
    /// The tags of the binding blocks that `in_force` does not carry: what they bind is kept
    /// to their hours while it is in force.
    fn reserved_outside(&self, in_force: &ScheduleBlock) -> Vec<Symbol> {
        let mut reserved: Vec<Symbol> = self
            .blocks
            .iter()
            .filter(|block| block.binding)
            .flat_map(|block| block.tags.iter().copied())
            .filter(|tag| !in_force.tags.contains(tag))
            .collect();
        reserved.sort_unstable();
        reserved.dedup();
        reserved
    }
}

/// A temporary block that replaces the schedule until it expires.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ScheduleOverride {
    /// The block (its hours are ignored: it holds until it expires).
    pub block: ScheduleBlock,
    /// Game hour it ends.
    pub expires_at_hours: f64,
}

/// What the schedule says at a moment.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduleFocus {
    /// The activity.
    pub activity: Symbol,
    /// Whether it comes from an override.
    pub overridden: bool,
    /// The resolved location, if any.
    pub location: Option<String>,
}

impl Schedule {
    /// The block in force at `now_hours` in `world`, overrides first.
    pub fn active<'a>(
        &'a self,
        now_hours: f64,
        world: &World,
        overrides: &'a [ScheduleOverride],
    ) -> Option<(&'a ScheduleBlock, bool)> {
        if let Some(o) = overrides.iter().find(|o| o.expires_at_hours > now_hours) {
            return Some((&o.block, true));
        }
        let hour_of_day = now_hours.rem_euclid(24.0);
        self.blocks
            .iter()
            .filter(|b| b.covers(hour_of_day) && b.conditions.iter().all(|c| c.holds(world)))
            .fold(None, |best: Option<&ScheduleBlock>, block| match best {
                Some(b) if b.priority >= block.priority => Some(b),
                _ => Some(block),
            })
            .map(|block| (block, false))
    }
}

/// Replaces `{name}` placeholders in a location with the agent's own places.
pub fn resolve_location(location: &str, places: &[(String, String)]) -> String {
    let mut resolved = location.to_owned();
    for (name, place) in places {
        resolved = resolved.replace(&format!("{{{name}}}"), place);
    }
    resolved
}

/// An agent's schedule and its state: its own places, overrides, and the current activity.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduleLayer {
    /// The schedule (shared by an archetype).
    pub schedule: std::sync::Arc<Schedule>,
    /// Placeholder values (`workplace` → `forge`).
    pub places: Vec<(String, String)>,
    /// Temporary overrides.
    pub overrides: Vec<ScheduleOverride>,
    /// The activity in force after the last tick.
    pub current: Option<Symbol>,
    /// What a binding activity binds is kept to its hours only in actions lasting this many
    /// game hours or more — a night's sleep, not a nap; 0 keeps every one to them.
    pub reserve_from_hours: f64,
}

impl ScheduleLayer {
    /// A layer with no overrides and no current activity.
    pub fn new(schedule: std::sync::Arc<Schedule>, places: Vec<(String, String)>) -> Self {
        Self {
            schedule,
            places,
            overrides: Vec::new(),
            current: None,
            reserve_from_hours: 0.0,
        }
    }

    /// Sets the agent's schedule pull for this tick (none without a block in force), drops
    /// expired overrides, and returns `(from, to)` when the activity changed.
    pub fn apply(
        &mut self,
        agent: &mut Agent,
        world: &World,
        now_hours: f64,
    ) -> Option<(Option<Symbol>, Option<Symbol>)> {
        self.overrides.retain(|o| o.expires_at_hours > now_hours);
        let schedule = std::sync::Arc::clone(&self.schedule);
        let focus = schedule
            .active(now_hours, world, &self.overrides)
            .map(|(block, _)| block);
        let pull = focus.map(|block| SchedulePull {
            tags: block.tags.clone(),
            place: block
                .location
                .as_deref()
                .map(|l| resolve_location(l, &self.places)),
            tag_bonus: schedule.tag_bonus * schedule.adherence,
            place_bonus: schedule.place_bonus * schedule.adherence,
            binding: block.binding,
            reserved: schedule.reserved_outside(block),
            reserved_from_hours: self.reserve_from_hours,
        });
        // The pull is boxed (an agent without a schedule carries a pointer); a box already
        // there is written over, not allocated again each tick.
        match (&mut agent.schedule, pull) {
            (Some(held), Some(pull)) => **held = pull,
            (slot, pull) => *slot = pull.map(Box::new),
        }
        let activity = focus.map(|block| block.activity);
        let changed = (activity != self.current).then_some((self.current, activity));
        self.current = activity;
        changed
    }

    /// For a simplified tick: follows the activity without steering decisions, and returns
    /// `(from, to, coarse event of the block that began)` when the activity changed.
    pub fn track(
        &mut self,
        world: &World,
        now_hours: f64,
    ) -> Option<(Option<Symbol>, Option<Symbol>, Option<Symbol>)> {
        self.overrides.retain(|o| o.expires_at_hours > now_hours);
        let schedule = std::sync::Arc::clone(&self.schedule);
        let block = schedule
            .active(now_hours, world, &self.overrides)
            .map(|(block, _)| block);
        let activity = block.map(|b| b.activity);
        if activity == self.current {
            return None;
        }
        let from = std::mem::replace(&mut self.current, activity);
        Some((from, activity, block.and_then(|b| b.coarse_event)))
    }

    /// The activity of the block in force at `now_hours`, if any.
    pub fn activity_at(&self, world: &World, now_hours: f64) -> Option<Symbol> {
        let (block, _) = self.schedule.active(now_hours, world, &self.overrides)?;
        Some(block.activity)
    }

    /// The resolved location of the block in force at `now_hours`, if any.
    pub fn location_at(&self, world: &World, now_hours: f64) -> Option<String> {
        let (block, _) = self.schedule.active(now_hours, world, &self.overrides)?;
        block
            .location
            .as_deref()
            .map(|l| resolve_location(l, &self.places))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::world::Context;
    use crate::vocabulary::Vocabulary;

    fn block(
        v: &mut Vocabulary,
        start: f64,
        end: f64,
        activity: &str,
        priority: f64,
    ) -> ScheduleBlock {
        ScheduleBlock {
            start_hour: start,
            end_hour: end,
            activity: v.intern(activity),
            tags: vec![v.intern(activity)],
            location: None,
            priority,
            conditions: Vec::new(),
            binding: false,
            coarse_event: None,
        }
    }

    #[test]
    fn blocks_wrap_midnight() {
        let mut v = Vocabulary::new();
        let sleep = block(&mut v, 22.0, 6.0, "sleep", 1.0);
        assert!(sleep.covers(23.5) && sleep.covers(0.0) && sleep.covers(5.99));
        assert!(!sleep.covers(6.0) && !sleep.covers(12.0) && !sleep.covers(21.99));
        let work = block(&mut v, 8.0, 17.0, "work", 1.0);
        assert!(work.covers(8.0) && !work.covers(17.0));
    }

    #[test]
    fn the_highest_priority_block_whose_conditions_hold_wins() {
        let mut v = Vocabulary::new();
        let storm = v.intern("storm");
        let work = block(&mut v, 8.0, 17.0, "work_in_the_fields", 1.0);
        let mut shelter = block(&mut v, 0.0, 24.0, "shelter", 5.0);
        shelter.conditions = vec![Condition {
            kind: ConditionKind::Weather,
            test: ConditionTest::Is(storm),
        }];
        let schedule = Schedule {
            blocks: vec![work, shelter],
            adherence: 0.8,
            tag_bonus: 0.2,
            place_bonus: 0.2,
        };
        let mut world = World::default();
        let at = |world: &World| {
            schedule
                .active(10.0, world, &[])
                .map(|(b, _)| v.name(b.activity).to_owned())
        };
        assert_eq!(at(&world).as_deref(), Some("work_in_the_fields"));
        world.contexts.push(Context {
            name: storm,
            tag_multipliers: Vec::new(),
        });
        assert_eq!(
            at(&world).as_deref(),
            Some("shelter"),
            "the storm overrides the fields"
        );
        assert_eq!(schedule.active(20.0, &World::default(), &[]), None);
    }

    #[test]
    fn an_override_holds_until_it_expires() {
        let mut v = Vocabulary::new();
        let schedule = Schedule {
            blocks: vec![block(&mut v, 8.0, 17.0, "work", 1.0)],
            adherence: 1.0,
            tag_bonus: 0.2,
            place_bonus: 0.2,
        };
        let overrides = vec![ScheduleOverride {
            block: block(&mut v, 0.0, 0.0, "mourn", 0.0),
            expires_at_hours: 12.0,
        }];
        let name = |now: f64| {
            schedule
                .active(now, &World::default(), &overrides)
                .map(|(b, o)| (v.name(b.activity).to_owned(), o))
        };
        assert_eq!(name(10.0), Some(("mourn".to_owned(), true)));
        assert_eq!(name(12.5), Some(("work".to_owned(), false)));
    }

    #[test]
    fn placeholders_resolve_per_agent() {
        let places = vec![
            ("workplace".to_owned(), "forge".to_owned()),
            ("home".to_owned(), "cottage_3".to_owned()),
        ];
        assert_eq!(resolve_location("{workplace}", &places), "forge");
        assert_eq!(resolve_location("{home}", &places), "cottage_3");
        assert_eq!(resolve_location("chapel", &places), "chapel");
    }
}
