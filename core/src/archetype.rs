//! Archetypes: what kind of person an NPC is — needs with their weights and
//! decay, personality, schedule, innate goals, barks, and the names of its reactive set and
//! affect persona — authored as data with `parent` inheritance, and NPCs that store only their
//! differences from their archetype.
//!
//! Inheritance works on the authored data: a child's fields override its parent's field by
//! field (objects merge key by key, recursively; lists and numbers replace), so a `guard`
//! inheriting from `villager` restates only what differs. Unknown parents and cycles are
//! refused, naming the chain. An NPC is an archetype name plus a (usually tiny) override object
//! merged the same way — its bytes are what a save or a snapshot has to hold per NPC.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::affect::merge_layers;
use crate::decision::agent::Agent;
use crate::decision::consideration::{Consideration, ConsiderationBehaviour, Updater};
use crate::decision::world::Position;
use crate::life::bark::{BarkLines, BarkMemory, BarkTemplate};
use crate::life::goals::{Goal, GoalBook, GoalCategory, GoalPredicate, ReactionRule};
use crate::life::reply::ReplyTemplate;
use crate::life::schedule::{
    Condition, ConditionKind, ConditionTest, Schedule, ScheduleBlock, ScheduleLayer,
};
use crate::life::simulator::SimulatedAgent;
use crate::life::wellbeing::{Wellbeing, WellbeingConfig, WellbeingLimits};
use crate::vocabulary::{Symbol, Vocabulary};
use crate::wire::WireError;

/// A need as an archetype declares it. Needs live in [0, 1].
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NeedSpec {
    /// Personality weight: the single source of priority; default 1.
    #[serde(default = "one")]
    pub weight: f64,
    /// Lost per game hour; default 0.
    #[serde(default)]
    pub decay_per_hour: f64,
    /// Starting value; default 0.7.
    #[serde(default = "seventy_percent")]
    pub initial: f64,
    /// Below this it is critical (may interrupt); optional.
    #[serde(default)]
    pub critical: Option<f64>,
}

fn one() -> f64 {
    1.0
}

fn seventy_percent() -> f64 {
    0.7
}

/// A schedule block as authored.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BlockSpec {
    /// Start hour (0–24).
    pub start: f64,
    /// End hour; before `start` wraps midnight.
    pub end: f64,
    /// The activity.
    pub activity: String,
    /// Action tags it favours.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Where (a provider id or `{placeholder}`).
    #[serde(default)]
    pub location: Option<String>,
    /// Priority; default 1.
    #[serde(default = "one")]
    pub priority: f64,
    /// Conditions, e.g. `{weather: storm}`, `{season_not: winter}`, `{event_gt: [market, 0.5]}`.
    #[serde(default)]
    pub when: Vec<ConditionSpec>,
    /// The coarse event it records while simplified.
    #[serde(default)]
    pub coarse_event: Option<String>,
    /// Whether it binds: while it is in force, only what fits it (or restores a critical need)
    /// is done, and a fitting action's need preconditions give way; default false.
    #[serde(default)]
    pub binding: bool,
}

/// A typed condition: exactly one field set.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ConditionSpec {
    /// Weather is this.
    #[serde(default)]
    pub weather: Option<String>,
    /// Weather is not this.
    #[serde(default)]
    pub weather_not: Option<String>,
    /// Season is this.
    #[serde(default)]
    pub season: Option<String>,
    /// Season is not this.
    #[serde(default)]
    pub season_not: Option<String>,
    /// Event is on.
    #[serde(default)]
    pub event: Option<String>,
    /// Event is off.
    #[serde(default)]
    pub event_not: Option<String>,
    /// Event's intensity above a number: `[name, number]`.
    #[serde(default)]
    pub event_gt: Option<(String, f64)>,
}

/// A schedule as authored.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScheduleSpec {
    /// How strictly the NPC keeps to it (0 = needs always decide); scales both bonuses;
    /// default 0.8.
    #[serde(default = "default_adherence")]
    pub adherence: f64,
    /// Utility added to an action with a tag of the activity in force; default 0.1 (needs
    /// are 0–1, so an empty need weighted 1 that an action fully restores is worth 1).
    #[serde(default = "default_schedule_bonus")]
    pub tag_bonus: f64,
    /// Utility added to an action at the activity's place; default 0.1.
    #[serde(default = "default_schedule_bonus")]
    pub place_bonus: f64,
    /// The blocks.
    #[serde(default)]
    pub blocks: Vec<BlockSpec>,
}

fn default_adherence() -> f64 {
    0.8
}

fn default_schedule_bonus() -> f64 {
    0.1
}

/// An innate goal as authored: a fact to hold or a resource to reach.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GoalSpec {
    /// For humans.
    pub description: String,
    /// Holds this fact.
    #[serde(default)]
    pub has: Option<String>,
    /// Holds at least this much: `[resource, amount]`.
    #[serde(default)]
    pub resource: Option<(String, f64)>,
    /// Priority bonus for advancing actions (× the profile's `priority_weight`, 5 by
    /// default: needs are 0–1, so 0.1 weighs like an empty need of weight 1 that an action
    /// half restores); default 1.
    #[serde(default = "one")]
    pub bonus: f64,
    /// Game hours the NPC has to meet it, from when it starts living; past them the goal
    /// fails (a `goal_failed` with its deadline). Absent: no limit.
    #[serde(default)]
    pub within_hours: Option<f64>,
}

/// A reactive goal as authored: when a social event of kind `on` befalls the NPC, it takes on
/// a goal about the event's source (`{source}` in the description is replaced by it).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReactionSpec {
    /// The social event kind that prompts it (`theft`, `insult`, `gift`…).
    pub on: String,
    /// For humans and deduplication; `{source}` is who caused the event.
    pub description: String,
    /// Holds this fact.
    #[serde(default)]
    pub has: Option<String>,
    /// Holds at least this much: `[resource, amount]`.
    #[serde(default)]
    pub resource: Option<(String, f64)>,
    /// Game hours from the event until the goal fails; default none (it never expires).
    #[serde(default)]
    pub deadline_hours: Option<f64>,
    /// Priority bonus for advancing actions; default 1.
    #[serde(default = "one")]
    pub bonus: f64,
}

/// A bark as authored.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BarkSpec {
    /// Its id.
    pub id: String,
    /// The line (`{name}` is the speaker).
    pub text: String,
    /// The need that prompts it.
    #[serde(default)]
    pub need: Option<String>,
    /// Fires while the need is below this; default 0.3.
    #[serde(default = "default_bark_below")]
    pub below: f64,
    /// Mood range; default the whole range.
    #[serde(default = "default_mood_range")]
    pub mood: (f64, f64),
    /// Game minutes between repeats; default the archetype's `bark_cooldown_minutes`.
    #[serde(default)]
    pub cooldown_minutes: Option<f64>,
}

/// An idle line as authored: said while nothing presses, at the archetype's
/// `chatter_per_hour`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ChatterSpec {
    /// Its id.
    pub id: String,
    /// The line (`{name}` is the speaker).
    pub text: String,
    /// Mood range; default the whole range.
    #[serde(default = "default_mood_range")]
    pub mood: (f64, f64),
    /// Game minutes between repeats; default the archetype's `bark_cooldown_minutes`.
    #[serde(default)]
    pub cooldown_minutes: Option<f64>,
}

fn default_bark_below() -> f64 {
    0.3
}

fn default_mood_range() -> (f64, f64) {
    (-1.0, 1.0)
}

fn default_bark_cooldown() -> f64 {
    15.0
}

/// A resolved archetype (inheritance applied).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ArchetypeSpec {
    /// Its name.
    pub name: String,
    /// The archetype it inherits from (already applied).
    #[serde(default)]
    pub parent: Option<String>,
    /// For humans.
    #[serde(default)]
    pub description: String,
    /// Needs by name.
    #[serde(default)]
    pub needs: BTreeMap<String, NeedSpec>,
    /// Personality: multiplier per action tag.
    #[serde(default)]
    pub traits: BTreeMap<String, f64>,
    /// Multiplier per action domain.
    #[serde(default)]
    pub domains: BTreeMap<String, f64>,
    /// Capabilities.
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// Starting resources.
    #[serde(default)]
    pub resources: BTreeMap<String, f64>,
    /// Starting facts.
    #[serde(default)]
    pub facts: Vec<String>,
    /// The daily schedule.
    #[serde(default)]
    pub schedule: Option<ScheduleSpec>,
    /// Innate goals.
    #[serde(default)]
    pub goals: Vec<GoalSpec>,
    /// Goals it takes on when social events befall it.
    #[serde(default)]
    pub reactions: Vec<ReactionSpec>,
    /// Goal descriptions it never takes on.
    #[serde(default)]
    pub forbidden_goals: Vec<String>,
    /// How a social event of each kind (`insult`, `gift`, `theft`…) moves its mood, −1…1;
    /// remembered and fading. Kinds not named leave mood alone.
    #[serde(default)]
    pub event_moods: BTreeMap<String, f64>,
    /// Its mood and stress numbers (a parent's, else the defaults).
    #[serde(default)]
    pub wellbeing: WellbeingLimits,
    /// Game minutes between repeats of a line that names none; default 15.
    #[serde(default = "default_bark_cooldown")]
    pub bark_cooldown_minutes: f64,
    /// How readily it passes rumours on (0–1); default 0.5.
    #[serde(default = "half")]
    pub gossip_tendency: f64,
    /// How readily it starts conversations (0–1); default 0.5.
    #[serde(default = "half")]
    pub social_initiative: f64,
    /// How much its word weighs in gossip (0–1); default 0.5.
    #[serde(default = "half")]
    pub social_influence: f64,
    /// The faction it belongs to; default none (the archetype's own name stands in).
    #[serde(default)]
    pub faction: Option<String>,
    /// Name of its reactive utility set.
    #[serde(default)]
    pub reactive_set: Option<String>,
    /// Name of its affect persona.
    #[serde(default)]
    pub affect_persona: Option<String>,
    /// Its lines.
    #[serde(default)]
    pub barks: Vec<BarkSpec>,
    /// Idle lines an hour it says, on average, while it runs at full detail (a player in or
    /// near its room) and no need or mood prompts a bark; default 0 (none).
    #[serde(default)]
    pub chatter_per_hour: f64,
    /// Its idle lines.
    #[serde(default)]
    pub chatter: Vec<ChatterSpec>,
    /// What it says back when a player speaks to it (the best fitting line; the defaults when
    /// none fits).
    #[serde(default)]
    pub replies: Vec<ReplyTemplate>,
}

fn half() -> f64 {
    0.5
}

/// Why archetypes could not be resolved.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArchetypeError {
    /// A parent is not defined.
    #[error("archetype `{child}`: unknown parent `{parent}`")]
    UnknownParent {
        /// The child.
        child: String,
        /// The missing parent.
        parent: String,
    },
    /// An inheritance chain longer than [`MAX_ARCHETYPE_ANCESTORS`].
    #[error(
        "archetype `{name}`: more than {most} ancestors (an inheritance chain that deep is refused)"
    )]
    TooDeep {
        /// Which archetype.
        name: String,
        /// The most ancestors allowed.
        most: usize,
    },
    /// Parents form a cycle.
    #[error("archetype inheritance cycle: {chain}")]
    Cycle {
        /// The archetype whose chain comes back to itself.
        name: String,
        /// The chain, `a → b → a`.
        chain: String,
    },
    /// The merged data is not a valid archetype.
    #[error("archetype `{name}`: {error}")]
    Invalid {
        /// Which archetype.
        name: String,
        /// What is wrong, with its path.
        error: WireError,
    },
}

/// Deepest archetype inheritance: an archetype with more ancestors is refused (a chain that
/// long is a mistake, and resolving each archetype walks its chain).
pub const MAX_ARCHETYPE_ANCESTORS: usize = 32;

/// Resolves every archetype's inheritance chain. `authored` maps names to the data as written
/// (each with an optional `parent`); a chain with more than [`MAX_ARCHETYPE_ANCESTORS`]
/// ancestors is refused, so resolving is linear in the archetypes.
pub fn resolve_archetypes(
    authored: &BTreeMap<String, serde_json::Value>,
) -> Result<BTreeMap<String, ArchetypeSpec>, ArchetypeError> {
    let mut resolved = BTreeMap::new();
    for name in authored.keys() {
        let mut chain = vec![name.clone()];
        let mut cursor = name.clone();
        while let Some(parent) = authored
            .get(&cursor)
            .and_then(|v| v.get("parent"))
            .and_then(|p| p.as_str())
        {
            if chain.iter().any(|seen| seen == parent) {
                chain.push(parent.to_owned());
                return Err(ArchetypeError::Cycle {
                    name: name.clone(),
                    chain: chain.join(" → "),
                });
            }
            if !authored.contains_key(parent) {
                return Err(ArchetypeError::UnknownParent {
                    child: cursor,
                    parent: parent.to_owned(),
                });
            }
            if chain.len() > MAX_ARCHETYPE_ANCESTORS {
                return Err(ArchetypeError::TooDeep {
                    name: name.clone(),
                    most: MAX_ARCHETYPE_ANCESTORS,
                });
            }
            chain.push(parent.to_owned());
            cursor = parent.to_owned();
        }
        let mut merged = serde_json::Value::Object(serde_json::Map::new());
        for ancestor in chain.iter().rev() {
            if let Some(layer) = authored.get(ancestor) {
                merge_layers(&mut merged, layer.clone());
            }
        }
        if let Some(object) = merged.as_object_mut() {
            object.insert("name".into(), serde_json::Value::String(name.clone()));
        }
        let spec: ArchetypeSpec =
            serde_path_to_error::deserialize(merged).map_err(|e| ArchetypeError::Invalid {
                name: name.clone(),
                error: WireError {
                    path: e.path().to_string(),
                    message: e.into_inner().to_string(),
                },
            })?;
        let names_a_target: [(&str, Vec<bool>); 2] = [
            (
                "goals",
                spec.goals
                    .iter()
                    .map(|g| g.has.is_some() || g.resource.is_some())
                    .collect(),
            ),
            (
                "reactions",
                spec.reactions
                    .iter()
                    .map(|r| r.has.is_some() || r.resource.is_some())
                    .collect(),
            ),
        ];
        for (field, targets) in names_a_target {
            if let Some(index) = targets.iter().position(|named| !named) {
                return Err(ArchetypeError::Invalid {
                    name: name.clone(),
                    error: WireError {
                        path: format!("{field}[{index}]"),
                        message: "a goal needs `has` (a fact) or `resource` ([name, amount])"
                            .into(),
                    },
                });
            }
        }
        if !(spec.chatter_per_hour.is_finite() && spec.chatter_per_hour >= 0.0) {
            return Err(ArchetypeError::Invalid {
                name: name.clone(),
                error: WireError {
                    path: "chatter_per_hour".into(),
                    message: format!(
                        "{} is not a rate: idle lines an hour, a number 0 or more",
                        spec.chatter_per_hour
                    ),
                },
            });
        }
        resolved.insert(name.clone(), spec);
    }
    Ok(resolved)
}

/// An NPC as stored: its archetype and only what differs from it.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NpcRecord {
    /// Unique id.
    pub id: String,
    /// Its archetype.
    pub archetype: String,
    /// Where it is.
    #[serde(default)]
    pub position: [f64; 2],
    /// Its own places (`workplace: forge`, `home: cottage_2`).
    #[serde(default)]
    pub places: BTreeMap<String, String>,
    /// Anything that differs from the archetype, in archetype form (`needs: {HUNGER: {initial:
    /// 0.2}}`).
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub overrides: serde_json::Value,
}

impl NpcRecord {
    /// The bytes this NPC takes in storage (compact JSON).
    pub fn stored_bytes(&self) -> usize {
        serde_json::to_vec(self).map_or(0, |bytes| bytes.len())
    }
}

fn condition(spec: &ConditionSpec, vocabulary: &mut Vocabulary) -> Option<Condition> {
    let mut sym = |name: &String| vocabulary.intern(name);
    let (kind, test) = match spec {
        ConditionSpec {
            weather: Some(w), ..
        } => (ConditionKind::Weather, ConditionTest::Is(sym(w))),
        ConditionSpec {
            weather_not: Some(w),
            ..
        } => (ConditionKind::Weather, ConditionTest::Not(sym(w))),
        ConditionSpec {
            season: Some(s), ..
        } => (ConditionKind::Season, ConditionTest::Is(sym(s))),
        ConditionSpec {
            season_not: Some(s),
            ..
        } => (ConditionKind::Season, ConditionTest::Not(sym(s))),
        ConditionSpec { event: Some(e), .. } => (ConditionKind::Event, ConditionTest::Is(sym(e))),
        ConditionSpec {
            event_not: Some(e), ..
        } => (ConditionKind::Event, ConditionTest::Not(sym(e))),
        ConditionSpec {
            event_gt: Some((e, x)),
            ..
        } => (ConditionKind::Event, ConditionTest::Gt(sym(e), *x)),
        _ => return None,
    };
    Some(Condition { kind, test })
}

/// An archetype compiled once for every NPC of its kind: the shared parts behind `Arc`s.
#[derive(Clone, Debug)]
pub struct CompiledArchetype {
    /// The resolved data.
    pub spec: ArchetypeSpec,
    schedule: Option<Arc<Schedule>>,
    barks: Arc<BarkLines>,
    replies: Option<Arc<Vec<ReplyTemplate>>>,
    wellbeing: Arc<WellbeingConfig>,
    reactions: Arc<[ReactionRule]>,
    need_goal_descriptions: Arc<[(Symbol, String)]>,
}

/// The predicate of an authored goal: a fact to hold, else a resource to reach; `None` when
/// it names neither.
fn goal_predicate(
    has: Option<&String>,
    resource: Option<&(String, f64)>,
    vocabulary: &mut Vocabulary,
) -> Option<GoalPredicate> {
    match (has, resource) {
        (Some(fact), _) => Some(GoalPredicate::HasFact(vocabulary.intern(fact))),
        (None, Some((name, min))) => Some(GoalPredicate::Resource {
            name: vocabulary.intern(name),
            min: *min,
        }),
        (None, None) => None,
    }
}

impl CompiledArchetype {
    /// Compiles the shared parts with `vocabulary`.
    pub fn new(spec: ArchetypeSpec, vocabulary: &mut Vocabulary) -> Self {
        let schedule = spec.schedule.as_ref().map(|s| {
            Arc::new(Schedule {
                blocks: s
                    .blocks
                    .iter()
                    .map(|b| ScheduleBlock {
                        start_hour: b.start,
                        end_hour: b.end,
                        activity: vocabulary.intern(&b.activity),
                        tags: b.tags.iter().map(|t| vocabulary.intern(t)).collect(),
                        location: b.location.clone(),
                        priority: b.priority,
                        conditions: b
                            .when
                            .iter()
                            .filter_map(|c| condition(c, vocabulary))
                            .collect(),
                        coarse_event: b.coarse_event.as_deref().map(|e| vocabulary.intern(e)),
                        binding: b.binding,
                    })
                    .collect(),
                adherence: s.adherence,
                tag_bonus: s.tag_bonus,
                place_bonus: s.place_bonus,
            })
        });
        let prompted = spec
            .barks
            .iter()
            .map(|b| BarkTemplate {
                id: b.id.clone(),
                text: b.text.clone(),
                trigger: b.need.as_deref().map(|n| vocabulary.intern(n)),
                below: b.below,
                mood: b.mood,
                cooldown_minutes: b.cooldown_minutes.unwrap_or(spec.bark_cooldown_minutes),
            })
            .collect();
        let chatter = spec
            .chatter
            .iter()
            .map(|c| BarkTemplate {
                id: c.id.clone(),
                text: c.text.clone(),
                trigger: None,
                below: 0.0,
                mood: c.mood,
                cooldown_minutes: c.cooldown_minutes.unwrap_or(spec.bark_cooldown_minutes),
            })
            .collect();
        let barks = BarkLines {
            prompted,
            chatter,
            chatter_per_hour: spec.chatter_per_hour,
        };
        let mut wellbeing = WellbeingConfig::with_limits(
            spec.needs
                .iter()
                .map(|(name, need)| (vocabulary.intern(name), need.weight))
                .collect(),
            spec.event_moods
                .iter()
                .map(|(kind, mood)| (kind.clone(), mood.clamp(-1.0, 1.0)))
                .collect(),
            &spec.wellbeing,
        );
        wellbeing.sleep_tag = Some(vocabulary.intern("sleep"));
        let reactions = spec
            .reactions
            .iter()
            .filter(|r| !spec.forbidden_goals.contains(&r.description))
            .filter_map(|r| {
                Some(ReactionRule {
                    on: r.on.clone(),
                    description: r.description.clone(),
                    predicate: goal_predicate(r.has.as_ref(), r.resource.as_ref(), vocabulary)?,
                    deadline_hours: r.deadline_hours,
                    priority_bonus: r.bonus,
                })
            })
            .collect();
        let need_goal_descriptions = spec
            .needs
            .keys()
            .map(|need| {
                (
                    vocabulary.intern(need),
                    format!("restore {}", need.to_lowercase()),
                )
            })
            .collect();
        let replies = (!spec.replies.is_empty()).then(|| Arc::new(spec.replies.clone()));
        Self {
            spec,
            schedule,
            reactions,
            need_goal_descriptions,
            barks: Arc::new(barks),
            replies,
            wellbeing: Arc::new(wellbeing),
        }
    }

    /// Builds an NPC of this archetype, `record.overrides` merged over the archetype first.
    /// Needs, personality, resources, facts and goals may differ per NPC; the schedule and barks
    /// are the archetype's (an NPC that lives differently is an archetype of its own).
    pub fn instantiate(
        &self,
        record: &NpcRecord,
        vocabulary: &mut Vocabulary,
    ) -> Result<SimulatedAgent, ArchetypeError> {
        let spec = if record.overrides.is_null() {
            self.spec.clone()
        } else {
            let mut base = serde_json::to_value(&self.spec).unwrap_or_default();
            merge_layers(&mut base, record.overrides.clone());
            serde_path_to_error::deserialize(base).map_err(|e| ArchetypeError::Invalid {
                name: format!("{} (npc {})", self.spec.name, record.id),
                error: WireError {
                    path: e.path().to_string(),
                    message: e.into_inner().to_string(),
                },
            })?
        };
        let [x, y] = record.position;
        let mut agent = Agent::new(record.id.clone(), Position::new(x, y));
        for (name, need) in &spec.needs {
            let mut c = Consideration::new(
                vocabulary.intern(name),
                need.initial.clamp(0.0, 1.0),
                0.0,
                1.0,
            );
            c.weight = need.weight;
            *c.behaviour_mut() = ConsiderationBehaviour {
                updater: Updater::LinearDecay {
                    rate: need.decay_per_hour,
                },
                critical_threshold: need.critical,
                ..ConsiderationBehaviour::bounded(0.0, 1.0)
            };
            agent.considerations.push(c);
        }
        agent.tag_modifiers = spec
            .traits
            .iter()
            .map(|(t, m)| (vocabulary.intern(t), *m))
            .collect();
        agent.domain_preferences = spec
            .domains
            .iter()
            .map(|(d, m)| (vocabulary.intern(d), *m))
            .collect();
        agent.capabilities = spec
            .capabilities
            .iter()
            .map(|c| vocabulary.intern(c))
            .collect();
        agent.resources = spec
            .resources
            .iter()
            .map(|(r, a)| (vocabulary.intern(r), *a))
            .collect();
        agent.facts = spec.facts.iter().map(|f| vocabulary.intern(f)).collect();
        let mut npc = SimulatedAgent::new(agent);
        let places = record
            .places
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let layers = npc.layers.make_mut();
        layers.schedule = self
            .schedule
            .as_ref()
            .map(|s| Box::new(ScheduleLayer::new(Arc::clone(s), places)));
        layers.barks = (!self.barks.is_empty())
            .then(|| Box::new((Arc::clone(&self.barks), BarkMemory::default())));
        layers.replies = self.replies.clone();
        layers.wellbeing = Some(Box::new((
            Arc::clone(&self.wellbeing),
            Wellbeing::default(),
        )));
        let mut book = GoalBook::default();
        for goal in spec
            .goals
            .iter()
            .filter(|g| !spec.forbidden_goals.contains(&g.description))
        {
            let Some(predicate) =
                goal_predicate(goal.has.as_ref(), goal.resource.as_ref(), vocabulary)
            else {
                continue;
            };
            let _ = book.add(Goal {
                category: GoalCategory::Innate,
                source: format!("archetype:{}", spec.name),
                target: None,
                description: goal.description.clone(),
                predicate,
                deadline_hours: None,
                due_within_hours: goal.within_hours,
                priority_bonus: goal.bonus,
                id: None,
            });
        }
        book.reactions = Arc::clone(&self.reactions);
        book.need_goal_descriptions = Arc::clone(&self.need_goal_descriptions);
        layers.goals = Some(Box::new(book));
        Ok(npc)
    }
}
