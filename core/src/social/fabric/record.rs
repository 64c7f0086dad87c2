//! What a step produces: each [`InteractionRecord`], the [`SocialStep`] that gathers them with
//! the story events and goals, and [`StepAt`], the place-and-hour handle the step's parts add to.

use super::place::SocialPlace;
use crate::life::goals::GoalNote;
use crate::social::chronicle::{GoalChange, StoryEvent, StoryEventKind};
use crate::social::gossip::Gossip;
use crate::social::interaction::InteractionKind;

/// One interaction as it happened.
#[derive(Clone, Debug, PartialEq)]
pub struct InteractionRecord {
    /// Who started it.
    pub initiator: String,
    /// With whom.
    pub target: String,
    /// What kind.
    pub kind: InteractionKind,
    /// Whether it succeeded.
    pub success: bool,
    /// Its success chance under the rule.
    pub chance: f64,
    /// Where.
    pub location: String,
    /// Whether a player saw it.
    pub witnessed: bool,
    /// Game hour.
    pub at_hours: f64,
    /// A scheme's victim.
    pub against: Option<String>,
    /// The rumour told, for gossip.
    pub told: Option<Gossip>,
}

/// What a step produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SocialStep {
    /// Interactions, in resolution order.
    pub interactions: Vec<InteractionRecord>,
    /// Story events, in order.
    pub events: Vec<StoryEvent>,
    /// Goals created: (NPC, the goal).
    pub goals_created: Vec<(String, GoalNote)>,
}

/// Where and when a part of a step happens, and the step it adds to: what the functions that
/// carry out an interaction, a witnessing or an observation all pass along.
#[derive(Debug)]
pub struct StepAt<'s> {
    /// Where it happens (its players witness the story events).
    pub place: &'s SocialPlace,
    /// Game hour.
    pub now_hours: f64,
    /// The step's output, added to.
    pub out: &'s mut SocialStep,
}

impl<'s> StepAt<'s> {
    /// At `place` and game hour `now_hours`, adding to `out`.
    pub fn new(place: &'s SocialPlace, now_hours: f64, out: &'s mut SocialStep) -> Self {
        Self {
            place,
            now_hours,
            out,
        }
    }

    /// Adds a story event of `kind` that happened here and now.
    pub fn push_event(&mut self, kind: StoryEventKind) {
        self.out.events.push(self.place.event(self.now_hours, kind));
    }

    /// Adds the goals `npc` took on (`descriptions`): each a story event and a created goal.
    pub(in crate::social) fn goals_created(&mut self, npc: &str, goals: Vec<GoalNote>) {
        for goal in goals {
            self.push_event(StoryEventKind::Goal {
                npc: npc.to_owned(),
                description: goal.description.clone(),
                change: GoalChange::Created,
            });
            self.out.goals_created.push((npc.to_owned(), goal));
        }
    }
}
