//! Goals: what an NPC is trying to bring about beyond the next action —
//! innate ambitions, needs gone low, reactions to important events. Goals do not decide;
//! they raise the priority of actions that advance them and seed plans for the queue.
//!
//! - At most `capacity` (5) goals; a new one equal in (category, source, target, description)
//!   to an active one is a duplicate and refused; a full book refuses the newcomer.
//! - Typed predicates with a progress estimate: has a fact, holds a resource, stands at a
//!   provider, a relationship value, a need restored.
//! - A goal completes when its progress reaches 1, fails at its deadline.
//! - Need-derived goals appear when a need falls below 0.3 of its range (restore it to 0.6).
//! - The facts and resources of active goals become priority bonuses for the actions that
//!   produce them; a goal no single action can achieve gets a plan (see [`crate::life::planner`]).

use std::sync::Arc;

use crate::decision::agent::{Agent, lookup};
use crate::decision::world::World;
use crate::life::action::QueuedAction;
use crate::life::planner::{NoPlan, PlanGoal, PlannerConfig, plan};
use crate::vocabulary::Symbol;

geppetto_wire_enum::wire_enum! {
    /// Where a goal came from.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum GoalCategory {
        /// Part of who the NPC is (archetype).
        Innate = "innate",
        /// A need fell low.
        NeedDerived = "need_derived",
        /// Something important happened.
        Reactive = "reactive",
        /// The game gave it (a quest).
        Assigned = "assigned",
    }
}

/// What must be true for a goal to be met.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoalPredicate {
    /// The agent holds the fact.
    HasFact(Symbol),
    /// The agent holds at least `min` of a resource.
    Resource {
        /// Which resource.
        name: Symbol,
        /// How much.
        min: f64,
    },
    /// The agent is using an action of this provider.
    AtProvider(String),
    /// The world's relationship value of this name is at least `min`.
    Relationship {
        /// Which relationship value.
        name: Symbol,
        /// The threshold.
        min: f64,
    },
    /// A need is back above `min` (normalised 0–1).
    NeedAbove {
        /// Which need.
        need: Symbol,
        /// The normalised level.
        min: f64,
    },
}

/// A goal.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Goal {
    /// Where it came from.
    pub category: GoalCategory,
    /// Who or what caused it (`archetype`, `need`, an event id).
    pub source: String,
    /// Whom or what it is about.
    pub target: Option<String>,
    /// For humans and deduplication.
    pub description: String,
    /// When it is met.
    pub predicate: GoalPredicate,
    /// Game hour it fails if unmet.
    pub deadline_hours: Option<f64>,
    /// Game hours it has from the first review that sees it (an innate goal's time limit,
    /// counted from when its NPC starts living); the review turns it into `deadline_hours`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_within_hours: Option<f64>,
    /// Added to the intrinsic priority of actions that advance it.
    pub priority_bonus: f64,
    /// The id the game gave an assigned goal; others are named by [`Goal::id`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// A goal as its events name it: what a quest tool needs to match a goal's creation to its
/// end, and to tell what it is about.
#[derive(Clone, Debug, PartialEq)]
pub struct GoalNote {
    /// Its id (see [`Goal::id`]).
    pub id: String,
    /// Where it came from.
    pub category: GoalCategory,
    /// Who or what caused it.
    pub source: String,
    /// Whom or what it is about.
    pub target: Option<String>,
    /// For humans.
    pub description: String,
    /// When it is met.
    pub predicate: GoalPredicate,
    /// Game hour it fails if unmet.
    pub deadline_hours: Option<f64>,
}

impl Goal {
    /// Its id, stable for its life: the game's for an assigned goal, else `g` and the hex
    /// hash of what makes it unique (category, source, target, description), so the events of
    /// one goal name it alike and a snapshot needs to keep nothing more.
    pub fn id(&self) -> String {
        if let Some(id) = &self.id {
            return id.clone();
        }
        let (category, source, target, description) = self.key();
        let key = format!(
            "{}\u{1f}{source}\u{1f}{}\u{1f}{description}",
            category.as_str(),
            target.unwrap_or("")
        );
        format!("g{:016x}", crate::rng::stable_hash(&key))
    }

    /// The goal as its events name it.
    pub fn note(&self) -> GoalNote {
        GoalNote {
            id: self.id(),
            category: self.category,
            source: self.source.clone(),
            target: self.target.clone(),
            description: self.description.clone(),
            predicate: self.predicate.clone(),
            deadline_hours: self.deadline_hours,
        }
    }

    fn key(&self) -> (GoalCategory, &str, Option<&str>, &str) {
        (
            self.category,
            &self.source,
            self.target.as_deref(),
            &self.description,
        )
    }

    /// Whether anything in `world` could meet it: an action that adds the fact or yields the
    /// resource it needs (other predicates are not judged here).
    pub fn reachable_in(&self, world: &World) -> bool {
        let mut actions = world.providers.iter().flat_map(|p| &p.actions);
        match &self.predicate {
            GoalPredicate::HasFact(fact) => actions.any(|a| a.effects.adds.contains(fact)),
            GoalPredicate::Resource { name, .. } => actions.any(|a| {
                a.effects
                    .yields
                    .iter()
                    .any(|(r, amount)| r == name && *amount > 0.0)
            }),
            _ => true,
        }
    }

    /// How far along it is, 0–1.
    pub fn progress(&self, agent: &Agent, world: &World, at_provider: Option<&str>) -> f64 {
        let ratio = |have: f64, want: f64| {
            if want > 0.0 {
                (have / want).clamp(0.0, 1.0)
            } else {
                1.0
            }
        };
        match &self.predicate {
            GoalPredicate::HasFact(fact) => f64::from(u8::from(agent.facts.contains(fact))),
            GoalPredicate::Resource { name, min } => ratio(agent.resource(*name), *min),
            GoalPredicate::AtProvider(provider) => {
                f64::from(u8::from(at_provider == Some(provider.as_str())))
            }
            GoalPredicate::Relationship { name, min } => {
                ratio(lookup(&world.relationships, *name).unwrap_or(0.0), *min)
            }
            GoalPredicate::NeedAbove { need, min } => agent.consideration(*need).map_or(0.0, |c| {
                let value = if c.max() > c.min() {
                    (c.value - c.min()) / (c.max() - c.min())
                } else {
                    0.0
                };
                ratio(value, *min)
            }),
        }
    }
}

/// Why a goal was not added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoalRefused {
    /// An equal goal is active.
    Duplicate,
    /// The book holds `capacity` goals.
    Full,
}

/// What happened to goals in a review.
#[derive(Clone, Debug, PartialEq)]
pub enum GoalEvent {
    /// A goal was added.
    Created(GoalNote),
    /// A goal was met.
    Completed(GoalNote),
    /// A goal failed: its deadline passed (`deadline`), or nothing in the world could meet it
    /// (`unreachable`: no action adds the fact or yields the resource it needs), at once.
    Failed(GoalNote, &'static str),
    /// No plan reaches a goal.
    Blocked(GoalNote, NoPlan),
}

/// A rule that turns an important event into a reactive goal (compiled from an archetype's
/// `reactions`).
#[derive(Clone, Debug, PartialEq)]
pub struct ReactionRule {
    /// The social event kind that prompts it.
    pub on: String,
    /// The goal's description; `{source}` becomes who caused the event.
    pub description: String,
    /// When the goal is met.
    pub predicate: GoalPredicate,
    /// Game hours from the event to the goal's deadline; `None` never expires.
    pub deadline_hours: Option<f64>,
    /// Priority bonus for advancing actions.
    pub priority_bonus: f64,
}

/// An NPC's goals.
#[derive(Clone, Debug, PartialEq)]
pub struct GoalBook {
    /// Active goals, oldest first.
    pub goals: Vec<Goal>,
    /// Events that give it goals (shared by every NPC of an archetype).
    pub reactions: Arc<[ReactionRule]>,
    /// The description of each need's restore goal (`restore hunger`); a need not listed is
    /// described by its symbol number.
    pub need_goal_descriptions: Arc<[(Symbol, String)]>,
    /// Most goals at once; default 5.
    pub capacity: usize,
    /// A need below this normalised level spawns a restore goal; default 0.3.
    pub need_goal_below: f64,
    /// The level a restore goal aims for; default 0.6.
    pub need_goal_target: f64,
    /// Bonus of a need-derived goal; default 1.
    pub need_goal_bonus: f64,
    /// Goals whose plan failed, not retried until they change.
    pub blocked: Vec<String>,
    /// Goals already found reachable in the world (checked once each).
    pub reachable: Vec<String>,
}

impl Default for GoalBook {
    fn default() -> Self {
        Self {
            goals: Vec::new(),
            reactions: Arc::from([]),
            need_goal_descriptions: Arc::from([]),
            capacity: 5,
            need_goal_below: 0.3,
            need_goal_target: 0.6,
            need_goal_bonus: 1.0,
            blocked: Vec::new(),
            reachable: Vec::new(),
        }
    }
}

impl GoalBook {
    /// Adds a goal unless it duplicates an active one or the book is full.
    pub fn add(&mut self, goal: Goal) -> Result<(), GoalRefused> {
        let same_id = |g: &Goal| goal.id.is_some() && g.id == goal.id;
        if self
            .goals
            .iter()
            .any(|g| g.key() == goal.key() || same_id(g))
        {
            return Err(GoalRefused::Duplicate);
        }
        if self.goals.len() >= self.capacity {
            return Err(GoalRefused::Full);
        }
        self.goals.push(goal);
        Ok(())
    }

    /// Drops the goal with id `id` (one the game assigned), if this book holds it.
    pub fn withdraw(&mut self, id: &str) -> Option<Goal> {
        let at = self
            .goals
            .iter()
            .position(|g| g.id.as_deref() == Some(id))?;
        let goal = self.goals.remove(at);
        self.blocked.retain(|d| *d != goal.description);
        self.reachable.retain(|d| *d != goal.description);
        Some(goal)
    }

    /// Takes on the reactive goals a social event of `kind` caused by `source` prompts at game
    /// hour `now_hours`; duplicates (the same event kind from the same source while the goal is
    /// active) and goals past capacity are dropped. Returns the goals created.
    pub fn react(&mut self, kind: &str, source: &str, now_hours: f64) -> Vec<GoalNote> {
        let reactions = Arc::clone(&self.reactions);
        reactions
            .iter()
            .filter(|rule| rule.on == kind)
            .filter_map(|rule| {
                let description = rule.description.replace("{source}", source);
                let goal = Goal {
                    category: GoalCategory::Reactive,
                    source: format!("event:{kind}"),
                    target: Some(source.to_owned()),
                    description: description.clone(),
                    predicate: rule.predicate.clone(),
                    deadline_hours: rule.deadline_hours.map(|h| now_hours + h),
                    due_within_hours: None,
                    priority_bonus: rule.priority_bonus,
                    id: None,
                };
                let note = goal.note();
                self.add(goal).ok().map(|()| note)
            })
            .collect()
    }

    /// Completes and fails goals, adds need-derived ones, and sets the agent's goal bonuses.
    pub fn review(
        &mut self,
        agent: &mut Agent,
        world: &World,
        now_hours: f64,
        at_provider: Option<&str>,
    ) -> Vec<GoalEvent> {
        let mut events = Vec::new();
        let mut kept = Vec::with_capacity(self.goals.len());
        for mut goal in std::mem::take(&mut self.goals) {
            if let Some(hours) = goal.due_within_hours.take() {
                goal.deadline_hours = Some(now_hours + hours);
            }
            let reachable = self.reachable.contains(&goal.description) || {
                let reachable = goal.reachable_in(world);
                if reachable {
                    self.reachable.push(goal.description.clone());
                }
                reachable
            };
            let failed = if goal.progress(agent, world, at_provider) >= 1.0 {
                events.push(GoalEvent::Completed(goal.note()));
                None
            } else if !reachable && goal.category != GoalCategory::Assigned {
                // An assigned goal (the game's quest) waits for what no action yields — a fact
                // or resource the game grants — until its deadline or its withdrawal.
                Some("unreachable")
            } else if goal
                .deadline_hours
                .is_some_and(|deadline| now_hours >= deadline)
            {
                Some("deadline")
            } else {
                kept.push(goal);
                continue;
            };
            self.blocked.retain(|d| *d != goal.description);
            self.reachable.retain(|d| *d != goal.description);
            if let Some(reason) = failed {
                events.push(GoalEvent::Failed(goal.note(), reason));
            }
        }
        self.goals = kept;
        let low: Vec<(Symbol, String)> = agent
            .considerations
            .iter()
            .filter(|c| {
                c.max() > c.min()
                    && (c.value - c.min()) / (c.max() - c.min()) < self.need_goal_below
            })
            .map(|c| {
                let description = self
                    .need_goal_descriptions
                    .iter()
                    .find(|(need, _)| *need == c.name)
                    .map_or_else(
                        || format!("restore need #{}", c.name.index()),
                        |(_, d)| d.clone(),
                    );
                (c.name, description)
            })
            .collect();
        for (need, description) in low {
            let goal = Goal {
                category: GoalCategory::NeedDerived,
                source: "need".into(),
                target: None,
                description: description.clone(),
                predicate: GoalPredicate::NeedAbove {
                    need,
                    min: self.need_goal_target,
                },
                deadline_hours: None,
                due_within_hours: None,
                priority_bonus: self.need_goal_bonus,
                id: None,
            };
            let note = goal.note();
            if self.add(goal).is_ok() {
                events.push(GoalEvent::Created(note));
            }
        }
        agent.goal_bonuses = self
            .goals
            .iter()
            .filter_map(|g| match g.predicate {
                GoalPredicate::HasFact(fact) => Some((fact, g.priority_bonus)),
                GoalPredicate::Resource { name, .. } => Some((name, g.priority_bonus)),
                _ => None,
            })
            .collect();
        events
    }

    /// A plan for the first goal no single action achieves — a fact, or a resource amount a
    /// few purchases or gatherings reach — or for any reactive fact goal, which the NPC sets
    /// out to meet deliberately even when one action does it, as queue entries. A fact goal
    /// no plan reaches is reported once and not retried until it changes; a resource goal
    /// beyond the planner's budget ("save a hundred gold") is left, silently, to the priority
    /// bonus that drives its many repetitions, and not searched again. The error names the
    /// goal no plan reaches, when it is to be reported.
    ///
    /// `resources_settle` says whether completed actions credit their yields to the agent
    /// (where geppetto is the whole world); where they do not, a resource goal gets no plan —
    /// one assuming the yields would be queued again and again while the game, not the plan,
    /// decides what the NPC holds.
    pub fn seed_plan(
        &mut self,
        agent: &Agent,
        world: &World,
        config: &PlannerConfig,
        resources_settle: bool,
    ) -> Result<Vec<QueuedAction>, Option<Box<(GoalNote, NoPlan)>>> {
        for goal in &self.goals {
            if self.blocked.contains(&goal.description) {
                continue;
            }
            if !resources_settle && matches!(goal.predicate, GoalPredicate::Resource { .. }) {
                continue;
            }
            let (target, reported_when_unreachable) = match goal.predicate {
                GoalPredicate::HasFact(fact) => (
                    PlanGoal {
                        facts: vec![fact],
                        resources: Vec::new(),
                    },
                    true,
                ),
                GoalPredicate::Resource { name, min } => (
                    PlanGoal {
                        facts: Vec::new(),
                        resources: vec![(name, min)],
                    },
                    false,
                ),
                _ => continue,
            };
            return match plan(agent, world, &target, config) {
                Ok(found)
                    if found.steps.len() > 1
                        || (matches!(
                            goal.category,
                            GoalCategory::Reactive | GoalCategory::Assigned
                        ) && !found.steps.is_empty()) =>
                {
                    let mut entries = found.queue_entries(world, false);
                    if !reported_when_unreachable {
                        // Gathering never runs one action back to back: the plan waits while
                        // its first step is what was just done, and stops before a repeat.
                        let same = |a: &QueuedAction, (provider, action): (&str, &str)| {
                            a.provider == provider && a.action == action
                        };
                        let just_done = agent.just_completed.as_deref().map(|(p, a)| (&**p, &**a));
                        if entries
                            .first()
                            .zip(just_done)
                            .is_some_and(|(first, done)| same(first, done))
                        {
                            return Err(None);
                        }
                        let repeat = entries.windows(2).position(|pair| {
                            same(
                                &pair[1],
                                (pair[0].provider.as_str(), pair[0].action.as_str()),
                            )
                        });
                        if let Some(at) = repeat {
                            entries.truncate(at + 1);
                        }
                    }
                    Ok(entries)
                }
                Ok(_) => Err(None),
                Err(reason) => {
                    self.blocked.push(goal.description.clone());
                    if reported_when_unreachable {
                        Err(Some(Box::new((goal.note(), reason))))
                    } else {
                        Err(None)
                    }
                }
            };
        }
        Err(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::consideration::Consideration;
    use crate::decision::world::Position;
    use crate::vocabulary::Vocabulary;

    fn goal(description: &str, predicate: GoalPredicate) -> Goal {
        Goal {
            category: GoalCategory::Innate,
            source: "archetype".into(),
            target: None,
            description: description.into(),
            predicate,
            deadline_hours: None,
            due_within_hours: None,
            priority_bonus: 2.0,
            id: None,
        }
    }

    #[test]
    fn goals_are_deduplicated_and_capped() {
        let mut v = Vocabulary::new();
        let mut book = GoalBook::default();
        let fact = GoalPredicate::HasFact(v.intern("has:sword"));
        assert_eq!(book.add(goal("forge a sword", fact.clone())), Ok(()));
        assert_eq!(
            book.add(goal("forge a sword", fact.clone())),
            Err(GoalRefused::Duplicate)
        );
        for i in 0..4 {
            assert_eq!(book.add(goal(&format!("goal {i}"), fact.clone())), Ok(()));
        }
        assert_eq!(book.add(goal("one too many", fact)), Err(GoalRefused::Full));
        assert_eq!(book.goals.len(), 5);
    }

    #[test]
    fn a_time_limit_becomes_a_deadline_at_the_first_review_and_fails_the_goal_there() {
        let mut v = Vocabulary::new();
        let mut agent = Agent::new("bjorn", Position::default());
        let mut book = GoalBook::default();
        let mw = v.intern("mw");
        let mut masterwork = goal("forge a masterwork", GoalPredicate::HasFact(mw));
        masterwork.due_within_hours = Some(96.0);
        book.add(masterwork).expect("added");
        let world = granting(mw);
        assert!(book.review(&mut agent, &world, 7.0, None).is_empty());
        assert_eq!(book.goals[0].deadline_hours, Some(103.0));
        assert_eq!(book.goals[0].due_within_hours, None);
        assert!(book.review(&mut agent, &world, 102.9, None).is_empty());
        let events = book.review(&mut agent, &world, 103.0, None);
        assert!(
            matches!(events.as_slice(), [GoalEvent::Failed(note, _)] if note.deadline_hours == Some(103.0)),
            "{events:?}"
        );
    }

    #[test]
    fn goals_complete_fail_and_spawn_from_low_needs() {
        let mut v = Vocabulary::new();
        let sword = v.intern("has:sword");
        let mut agent = Agent::new("bram", Position::default());
        agent
            .considerations
            .push(Consideration::new(v.intern("HUNGER"), 10.0, 0.0, 100.0));
        let mut book = GoalBook::default();
        book.add(goal("forge a sword", GoalPredicate::HasFact(sword)))
            .expect("added");
        let mut late = goal(
            "deliver by noon",
            GoalPredicate::AtProvider("castle".into()),
        );
        late.deadline_hours = Some(12.0);
        book.add(late).expect("added");
        let world = granting(sword);
        let events = book.review(&mut agent, &world, 11.0, None);
        assert!(
            matches!(events.as_slice(), [GoalEvent::Created(_)]),
            "{events:?}"
        );
        assert_eq!(agent.goal_bonuses, vec![(sword, 2.0)]);
        agent.facts.push(sword);
        let events = book.review(&mut agent, &world, 12.0, None);
        assert!(
            events
                .iter()
                .any(|e| matches!(e, GoalEvent::Completed(g) if g.description == "forge a sword"))
        );
        assert!(
            events.iter().any(
                |e| matches!(e, GoalEvent::Failed(g, _) if g.description == "deliver by noon")
            )
        );
        assert_eq!(book.goals.len(), 1, "the need goal remains");
        agent.considerations[0].value = 70.0;
        let events = book.review(&mut agent, &world, 13.0, None);
        assert!(matches!(events.as_slice(), [GoalEvent::Completed(_)]));
        assert!(book.goals.is_empty());
    }

    #[test]
    fn an_event_gives_a_reactive_goal_once_with_its_deadline() {
        let mut v = Vocabulary::new();
        let reported = v.intern("theft_reported");
        let mut book = GoalBook {
            reactions: Arc::from([ReactionRule {
                on: "theft".into(),
                description: "report the theft by {source}".into(),
                predicate: GoalPredicate::HasFact(reported),
                deadline_hours: Some(12.0),
                priority_bonus: 2.0,
            }]),
            ..GoalBook::default()
        };
        assert!(book.react("insult", "vex", 8.0).is_empty(), "not this kind");
        let created = book.react("theft", "vex", 8.0);
        assert_eq!(created.len(), 1);
        assert_eq!(created[0].description, "report the theft by vex");
        assert_eq!(created[0].category, GoalCategory::Reactive);
        assert_eq!(created[0].deadline_hours, Some(20.0));
        assert!(book.react("theft", "vex", 9.0).is_empty(), "a duplicate");
        assert_eq!(book.react("theft", "kit", 9.0).len(), 1, "another thief");
        let goal = &book.goals[0];
        assert_eq!(goal.category, GoalCategory::Reactive);
        assert_eq!(goal.target.as_deref(), Some("vex"));
        assert_eq!(goal.deadline_hours, Some(20.0));
        let mut agent = Agent::new("piet", Position::default());
        let events = book.review(&mut agent, &granting(reported), 20.0, None);
        assert_eq!(
            events,
            vec![GoalEvent::Failed(created[0].clone(), "deadline")],
            "the failure names the goal as its creation did, id and all"
        );
        assert_eq!(book.goals.len(), 1);
    }

    /// A world with one action that adds `fact`.
    #[test]
    fn an_assigned_goal_no_action_meets_waits_for_the_game_until_its_deadline() {
        let mut vocabulary = crate::vocabulary::Vocabulary::new();
        let medal = vocabulary.intern("has:medal");
        let mut quest = goal("find the medal", GoalPredicate::HasFact(medal));
        quest.category = GoalCategory::Assigned;
        quest.deadline_hours = Some(10.0);
        let mut book = GoalBook::default();
        book.add(quest).expect("added");
        let mut agent = Agent::new("bjorn", Position::default());
        assert!(
            book.review(&mut agent, &World::default(), 1.0, None)
                .is_empty(),
            "kept: the game may grant what no action yields"
        );
        agent.facts.push(medal);
        assert!(matches!(
            book.review(&mut agent, &World::default(), 2.0, None)
                .as_slice(),
            [GoalEvent::Completed(_)]
        ));
        let mut late = GoalBook::default();
        let mut quest = goal("find the ring", GoalPredicate::HasFact(medal));
        quest.category = GoalCategory::Assigned;
        quest.deadline_hours = Some(10.0);
        late.add(quest).expect("added");
        let mut empty_handed = Agent::new("bjorn", Position::default());
        let events = late.review(&mut empty_handed, &World::default(), 10.0, None);
        assert!(
            matches!(events.as_slice(), [GoalEvent::Failed(_, "deadline")]),
            "{events:?}"
        );
    }

    fn granting(fact: Symbol) -> World {
        let mut action = crate::decision::world::AdvertisedAction::new("do_it");
        action.effects.adds.push(fact);
        World {
            providers: vec![crate::decision::world::Provider {
                id: "place".into(),
                position: Position::default(),
                capacity: 1,
                occupants: 0,
                state: None,
                actions: vec![action],
            }],
            ..World::default()
        }
    }

    #[test]
    fn a_goal_nothing_in_the_world_can_meet_fails_at_once_naming_why() {
        let mut v = Vocabulary::new();
        let (caught, gold) = (v.intern("thief_apprehended"), v.intern("gold"));
        let mut book = GoalBook::default();
        let mut protect = goal("protect the village", GoalPredicate::HasFact(caught));
        protect.deadline_hours = Some(48.0);
        book.add(protect).expect("added");
        book.add(goal(
            "save a hundred gold",
            GoalPredicate::Resource {
                name: gold,
                min: 100.0,
            },
        ))
        .expect("added");
        let mut agent = Agent::new("sela", Position::default());
        let events = book.review(&mut agent, &World::default(), 1.0, None);
        let failed: Vec<(&str, &str)> = events
            .iter()
            .filter_map(|e| match e {
                GoalEvent::Failed(note, reason) => Some((note.description.as_str(), *reason)),
                _ => None,
            })
            .collect();
        assert_eq!(
            failed,
            [
                ("protect the village", "unreachable"),
                ("save a hundred gold", "unreachable")
            ]
        );
        assert!(book.goals.is_empty());
        let mut again = GoalBook::default();
        let mut protect = goal("protect the village", GoalPredicate::HasFact(caught));
        protect.deadline_hours = Some(48.0);
        again.add(protect).expect("added");
        assert!(
            again
                .review(&mut agent, &granting(caught), 1.0, None)
                .is_empty(),
            "kept while an action grants the fact"
        );
        agent.facts.push(caught);
        assert!(
            matches!(
                again
                    .review(&mut agent, &World::default(), 2.0, None)
                    .as_slice(),
                [GoalEvent::Completed(_)]
            ),
            "met before it is judged unreachable"
        );
    }
}
