//! The social fabric of a zone (seed 001 §4.4): who holds which rumours, who is engaged with
//! whom, and the social step that lets NPCs meet, talk, trade, argue and scheme.
//!
//! A step (every `step_every_ticks` ticks, default 10; or spread over them, see
//! [`SocialFabric::step_slice`]):
//! 1. Sweep expired reservations and cooldowns; invalidate the cached friend/rival/ally
//!    queries.
//! 2. Observe every NPC: a move, a significant mood shift (≥ 0.15) and a need falling below
//!    0.2 become story events.
//! 3. Witnessing: an NPC that started an action tagged hostile (`theft`) since the last step is
//!    seen by each other NPC in the same place with probability 0.7; a witness holds a
//!    first-hand threat rumour about the actor (confidence 1), trusts it 0.35 less and
//!    respects it 0.1 less, feels the threat and reacts like a credible threat's listener.
//! 4. Interactions, initiators in id order: an available NPC (not engaged, not cooling down)
//!    tries with probability `social_initiative`. Up to 8 nearest NPCs in its place
//!    **advertise** interactions to it as providers (an engaged partner advertises with no free
//!    slot, so the engine's slot gate refuses it: two NPCs never chase the same partner); the
//!    decision engine ranks and picks among them with the initiator's own needs, personality
//!    tags and contexts. The pick reserves both for `interaction_hours`, is resolved by its
//!    kind's rule (see [`super::interaction`]) and its effects applied; a gossip pick is heard
//!    by the listener (see [`super::gossip`]) and its reactions applied: survival pressure and
//!    the archetype's `threat` goal reactions for a credible threat, an acquire goal for an
//!    opportunity. The target's archetype may react to the kind itself (`on: intimidation`).
//!    Both then cool down for `cooldown_hours`. At most `max_interactions_per_step` a step.
//! 5. Interactions give rise to rumours: a trade to an opportunity at its place, an argument
//!    or intimidation to the target's grievance about the initiator, a scheme to a secret
//!    about its instigator held by the partner.
//!
//! Advertising lives in [`super::advert`], carrying a pick out in [`super::resolve`]; this
//! module owns the state and the step's order. It runs no zone tick and publishes nothing: the
//! caller feeds the step's story events to a detector and its records to the bus.
//!
//! Every draw comes from a stream derived from the step's seed and the NPC's id, so a step is
//! a pure function of its inputs. An interaction in a place with a player present is marked
//! `witnessed` (the service may ask the narrator for flavour text); no other one ever is.

use std::collections::BTreeMap;

use super::gossip::{Gossip, GossipConfig, GossipIntent, RumourTopic};
use super::interaction::{FacetDeltas, InteractionConfig, InteractionKind, NeedDeltas};
use super::relationships::{Facet, RelationshipCache, RelationshipThresholds, Relationships};
use super::reservation::Reservations;
use crate::decision::agent::Agent;
use crate::decision::decider::Decider;
use crate::life::simulator::SimulatedAgent;
use crate::rng::{DetRng, derive_seed, stable_hash};
use crate::story::event::{GoalChange, StoryEvent, StoryEventKind};
use crate::vocabulary::{Symbol, Vocabulary};

/// How one NPC takes part in social life (from its archetype).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SocialProfile {
    /// How readily it passes rumours on (0–1); default 0.5.
    pub gossip_tendency: f64,
    /// How readily it starts an interaction (0–1); default 0.5.
    pub social_initiative: f64,
    /// How much its word weighs (0–1): it raises the pull of its gossip and makes an
    /// influential NPC manipulate rather than defame; default 0.5.
    pub influence: f64,
    /// The faction it belongs to, if any.
    pub faction: Option<String>,
}

impl Default for SocialProfile {
    fn default() -> Self {
        Self {
            gossip_tendency: 0.5,
            social_initiative: 0.5,
            influence: 0.5,
            faction: None,
        }
    }
}

/// The names of the needs interactions touch, by role; defaults are the living-world needs.
#[derive(Clone, Debug, PartialEq)]
pub struct NeedNames {
    /// Company; default `SOCIAL`.
    pub social: String,
    /// Money; default `ECONOMIC`.
    pub economic: String,
    /// Safety; default `SURVIVAL`.
    pub survival: String,
    /// Meaning; default `PURPOSE`.
    pub purpose: String,
    /// Advancement; default `AMBITION`.
    pub ambition: String,
}

impl Default for NeedNames {
    fn default() -> Self {
        Self {
            social: "SOCIAL".into(),
            economic: "ECONOMIC".into(),
            survival: "SURVIVAL".into(),
            purpose: "PURPOSE".into(),
            ambition: "AMBITION".into(),
        }
    }
}

/// Every number of the social step, each a named default.
#[derive(Clone, Debug, PartialEq)]
pub struct FabricConfig {
    /// Gossip reception and telling.
    pub gossip: GossipConfig,
    /// Interaction rules and advertisement lines.
    pub interactions: InteractionConfig,
    /// Friend / rival / ally lines.
    pub thresholds: RelationshipThresholds,
    /// Need names by role.
    pub needs: NeedNames,
    /// Ticks between social steps; default 10.
    pub step_every_ticks: u64,
    /// Game hours an interaction reserves both sides; default 0.25.
    pub interaction_hours: f64,
    /// Game hours both sides wait before the next interaction; default 1.
    pub cooldown_hours: f64,
    /// Nearest NPCs in the same place that advertise to an initiator; default 8.
    pub max_partners_considered: usize,
    /// Interactions resolved per step at most; default 256.
    pub max_interactions_per_step: usize,
    /// Action tags whose start others may witness as a hostile act; default `[theft]`.
    pub hostile_act_tags: Vec<String>,
    /// Chance each NPC in the place sees a hostile act; default 0.7.
    pub witness_chance: f64,
    /// Confidence of a witness's rumour (what one saw oneself); default 1.
    pub witness_confidence: f64,
    /// Trust a witness loses in the actor; default 0.35.
    pub witness_trust_loss: f64,
    /// Respect a witness loses for the actor; default 0.1.
    pub witness_respect_loss: f64,
    /// Confidence of the grievance an argument or intimidation leaves its target with; default 0.8.
    pub grievance_confidence: f64,
    /// Confidence of the secret a scheme leaves its partner with; default 0.9.
    pub scheme_secret_confidence: f64,
    /// Confidence of the opportunity a trade makes known; default 0.7.
    pub trade_rumour_confidence: f64,
    /// The resource an acquire goal is about; default `gold`.
    pub acquire_resource: String,
    /// How much more of it an acquire goal wants; default 5.
    pub acquire_amount: f64,
    /// Game hours an acquire goal has; default 24.
    pub acquire_deadline_hours: f64,
    /// Priority bonus of an acquire goal; default 1.
    pub acquire_bonus: f64,
    /// A mood shift at least this large is a story event; default 0.15.
    pub mood_change_min: f64,
    /// A need below this (0–1) is a story event; default 0.2.
    pub need_low_below: f64,
}

impl Default for FabricConfig {
    fn default() -> Self {
        Self {
            gossip: GossipConfig::default(),
            interactions: InteractionConfig::default(),
            thresholds: RelationshipThresholds::default(),
            needs: NeedNames::default(),
            step_every_ticks: 10,
            interaction_hours: 0.25,
            cooldown_hours: 1.0,
            max_partners_considered: 8,
            max_interactions_per_step: 256,
            hostile_act_tags: vec!["theft".into()],
            witness_chance: 0.7,
            witness_confidence: 1.0,
            witness_trust_loss: 0.35,
            witness_respect_loss: 0.1,
            grievance_confidence: 0.8,
            scheme_secret_confidence: 0.9,
            trade_rumour_confidence: 0.7,
            acquire_resource: "gold".into(),
            acquire_amount: 5.0,
            acquire_deadline_hours: 24.0,
            acquire_bonus: 1.0,
            mood_change_min: 0.15,
            need_low_below: 0.2,
        }
    }
}

/// Where an NPC is this step and which players are there.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SocialPlace {
    /// Room or area id.
    pub location: String,
    /// Players present.
    pub players: Vec<String>,
}

/// The place of an NPC whose place index is out of range: nowhere, seen by nobody.
static NOWHERE: SocialPlace = SocialPlace {
    location: String::new(),
    players: Vec::new(),
};

/// Where a zone's NPCs are for a step: the distinct places, each NPC's place among them
/// (`at`, parallel to the agents), and the same grouped by place (`by_place`, as
/// [`Whereabouts::group`] makes it; a zone keeps it between steps). NPCs at the same place
/// index meet; an index out of range is nowhere.
#[derive(Clone, Copy, Debug)]
pub struct Whereabouts<'a> {
    /// The distinct places (a zone's rooms).
    pub places: &'a [SocialPlace],
    /// Each NPC's index into `places`.
    pub at: &'a [usize],
    /// The NPCs at each place, by ascending index.
    pub by_place: &'a [Vec<usize>],
}

impl Whereabouts<'_> {
    /// `at` grouped by place: the NPCs at each of `places` places, by ascending index (an NPC
    /// whose place is out of range is in none).
    pub fn group(places: usize, at: &[usize]) -> Vec<Vec<usize>> {
        let mut by_place = vec![Vec::new(); places];
        for (npc, &place) in at.iter().enumerate() {
            if let Some(here) = by_place.get_mut(place) {
                here.push(npc);
            }
        }
        by_place
    }

    /// NPC `npc`'s place.
    pub fn of(&self, npc: usize) -> &SocialPlace {
        self.at
            .get(npc)
            .and_then(|&place| self.places.get(place))
            .unwrap_or(&NOWHERE)
    }

    /// NPC `npc`'s place index (`usize::MAX` when it has none).
    fn index(&self, npc: usize) -> usize {
        self.at.get(npc).copied().unwrap_or(usize::MAX)
    }
}

/// Which NPCs a call of the step covers: indices `offset, offset + stride, …`, with at most
/// `cap` interactions.
#[derive(Clone, Copy, Debug)]
struct Slice {
    offset: usize,
    stride: usize,
    cap: usize,
}

impl SocialPlace {
    /// A story event that happened here at game hour `at_hours` (its players witnessed it).
    pub fn event(&self, at_hours: f64, kind: StoryEventKind) -> StoryEvent {
        StoryEvent {
            at_hours,
            location: self.location.clone(),
            players: self.players.clone(),
            kind,
        }
    }
}

/// One NPC's social state.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Member {
    /// How it takes part.
    pub profile: SocialProfile,
    /// What it has heard.
    pub rumours: super::gossip::RumourBook,
    location: Option<String>,
    mood: Option<f64>,
    low_needs: Vec<Symbol>,
}

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
    /// Goals created: (NPC, description).
    pub goals_created: Vec<(String, String)>,
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
    pub(super) fn goals_created(&mut self, npc: &str, descriptions: Vec<String>) {
        for description in descriptions {
            self.push_event(StoryEventKind::Goal {
                npc: npc.to_owned(),
                description: description.clone(),
                change: GoalChange::Created,
            });
            self.out.goals_created.push((npc.to_owned(), description));
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Role {
    Social,
    Economic,
    Survival,
    Purpose,
    Ambition,
}

pub(super) const ROLES: [Role; 5] = [
    Role::Social,
    Role::Economic,
    Role::Survival,
    Role::Purpose,
    Role::Ambition,
];

pub(super) fn role_delta(deltas: &NeedDeltas, role: Role) -> f64 {
    match role {
        Role::Social => deltas.social,
        Role::Economic => deltas.economic,
        Role::Survival => deltas.survival,
        Role::Purpose => deltas.purpose,
        Role::Ambition => deltas.ambition,
    }
}

/// A need's level in [0, 1].
pub(super) fn level(agent: &Agent, need: Symbol) -> Option<f64> {
    agent.consideration(need).map(|c| {
        if c.max > c.min {
            ((c.value - c.min) / (c.max - c.min)).clamp(0.0, 1.0)
        } else {
            0.0
        }
    })
}

/// Moves a need by `fraction` of its range.
pub(super) fn shift(agent: &mut Agent, need: Symbol, fraction: f64) {
    if let Some(c) = agent.considerations.iter_mut().find(|c| c.name == need) {
        c.value += fraction * (c.max - c.min);
        c.clamp_value();
    }
}

/// A zone's social state and step.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SocialFabric {
    /// Its numbers (from content, never from a snapshot: see [`SocialFabric::adopt_state`]).
    #[serde(skip)]
    pub config: FabricConfig,
    /// Everyone's regard for everyone.
    pub relationships: Relationships,
    /// Friend / rival / ally answers for the current step.
    pub cache: RelationshipCache,
    /// Who is engaged with whom; cooldowns.
    pub reservations: Reservations,
    pub(super) members: BTreeMap<String, Member>,
    pub(super) needs: [Symbol; 5],
    pub(super) acquire: Symbol,
    pub(super) hostile_tags: Vec<Symbol>,
    pub(super) kind_tags: Vec<(InteractionKind, Vec<Symbol>)>,
    pub(super) last_step_hours: Option<f64>,
}

impl SocialFabric {
    /// Takes every piece of `saved`'s state (relationships, rumours, reservations, members,
    /// cached answers, last step) and keeps this fabric's own numbers: how a snapshot is
    /// restored onto a fabric built from the current content.
    pub fn adopt_state(&mut self, saved: SocialFabric) {
        let config = std::mem::take(&mut self.config);
        let thresholds = self.cache.thresholds;
        *self = Self { config, ..saved };
        self.cache.thresholds = thresholds;
    }

    /// A fabric with `config`, its names interned in `vocabulary`.
    pub fn new(config: FabricConfig, vocabulary: &mut Vocabulary) -> Self {
        let n = &config.needs;
        let needs = [
            vocabulary.intern(&n.social),
            vocabulary.intern(&n.economic),
            vocabulary.intern(&n.survival),
            vocabulary.intern(&n.purpose),
            vocabulary.intern(&n.ambition),
        ];
        let acquire = vocabulary.intern(&config.acquire_resource);
        let hostile_tags = config
            .hostile_act_tags
            .iter()
            .map(|t| vocabulary.intern(t))
            .collect();
        let social = vocabulary.intern("social");
        let kind_tags = InteractionKind::ALL
            .into_iter()
            .map(|kind| {
                let mut tags = vec![social, vocabulary.intern(kind.as_str())];
                tags.extend(kind.extra_tags().iter().map(|t| vocabulary.intern(t)));
                (kind, tags)
            })
            .collect();
        Self {
            cache: RelationshipCache::new(config.thresholds),
            config,
            relationships: Relationships::default(),
            reservations: Reservations::default(),
            members: BTreeMap::new(),
            needs,
            acquire,
            hostile_tags,
            kind_tags,
            last_step_hours: None,
        }
    }

    pub(super) fn need(&self, role: Role) -> Symbol {
        self.needs[role as usize]
    }

    /// Sets how `npc` takes part.
    pub fn set_profile(&mut self, npc: &str, profile: SocialProfile) {
        self.members.entry(npc.to_owned()).or_default().profile = profile;
    }

    /// `npc`'s social state, if it has taken part.
    pub fn member(&self, npc: &str) -> Option<&Member> {
        self.members.get(npc)
    }

    /// The rumours `npc` holds.
    pub fn rumours(&self, npc: &str) -> &[Gossip] {
        self.members
            .get(npc)
            .map_or(&[], |m| m.rumours.rumours.as_slice())
    }

    /// Gives `npc` a rumour (as if it had heard it); returns whether it was new.
    pub fn learn(&mut self, npc: &str, rumour: Gossip) -> bool {
        let config = self.config.gossip;
        self.members
            .entry(npc.to_owned())
            .or_default()
            .rumours
            .learn(rumour, &config)
    }

    pub(super) fn profile(&self, npc: &str) -> SocialProfile {
        self.members
            .get(npc)
            .map(|m| m.profile.clone())
            .unwrap_or_default()
    }

    /// One social step over `agents` (with `places`, parallel to it) at `now_hours`. NPCs
    /// whose places share a location meet; events there carry the first such place's players.
    pub fn step(
        &mut self,
        agents: &mut [SimulatedAgent],
        places: &[SocialPlace],
        now_hours: f64,
        seed: u64,
        decider: &Decider,
    ) -> SocialStep {
        let mut distinct: Vec<SocialPlace> = Vec::new();
        let mut by_location: BTreeMap<&str, usize> = BTreeMap::new();
        let at: Vec<usize> = places
            .iter()
            .map(|place| {
                *by_location
                    .entry(place.location.as_str())
                    .or_insert_with(|| {
                        distinct.push(place.clone());
                        distinct.len() - 1
                    })
            })
            .collect();
        let by_place = Whereabouts::group(distinct.len(), &at);
        let whereabouts = Whereabouts {
            places: &distinct,
            at: &at,
            by_place: &by_place,
        };
        let whole = Slice {
            offset: 0,
            stride: 1,
            cap: self.config.max_interactions_per_step,
        };
        self.run(agents, whereabouts, now_hours, seed, decider, whole)
    }

    /// The share of a step due at zone tick `tick` when the step is spread over its
    /// `step_every_ticks` ticks (`n` of them): the NPCs at indices `tick mod n, + n, …` are
    /// observed and may start an interaction — each NPC once every `n` ticks, as with whole
    /// steps — with at most `⌈max_interactions_per_step / n⌉` interactions; hostile acts
    /// started since the previous call are witnessed by everyone in their place. A zone ticks
    /// this every tick so no tick carries a whole step.
    pub fn step_slice(
        &mut self,
        agents: &mut [SimulatedAgent],
        whereabouts: Whereabouts<'_>,
        now_hours: f64,
        tick: u64,
        seed: u64,
        decider: &Decider,
    ) -> SocialStep {
        let every = self.config.step_every_ticks.max(1);
        let slice = Slice {
            offset: usize::try_from(tick % every).unwrap_or(0),
            stride: usize::try_from(every).unwrap_or(1),
            cap: self
                .config
                .max_interactions_per_step
                .div_ceil(usize::try_from(every).unwrap_or(1)),
        };
        self.run(agents, whereabouts, now_hours, seed, decider, slice)
    }

    fn run(
        &mut self,
        agents: &mut [SimulatedAgent],
        whereabouts: Whereabouts<'_>,
        now_hours: f64,
        seed: u64,
        decider: &Decider,
        slice: Slice,
    ) -> SocialStep {
        let mut out = SocialStep::default();
        let count = agents.len().min(whereabouts.at.len());
        let covered = || (slice.offset..count).step_by(slice.stride.max(1));
        // Every query already ignores what has expired: sweeping only bounds the maps, so once
        // a step (a spread step's first slice) is enough.
        if slice.offset == 0 {
            self.reservations.sweep(now_hours);
        }
        self.cache.invalidate();
        // Observing looks each covered NPC up once and notes its initiative on the way.
        let initiatives: Vec<f64> = covered()
            .map(|index| {
                let at = &mut StepAt::new(whereabouts.of(index), now_hours, &mut out);
                self.observe(&agents[index], at)
            })
            .collect();
        self.witness_hostile_acts(agents, whereabouts, count, now_hours, seed, &mut out);
        for (initiator, initiative) in covered().zip(initiatives) {
            if out.interactions.len() >= slice.cap {
                break;
            }
            let id = &agents[initiator].agent.id;
            // Both checks only skip; the cheaper one (no lookup) goes first.
            let mut rng = DetRng::new(derive_seed(seed, stable_hash(id)));
            if rng.next_unit() >= initiative {
                continue;
            }
            if !self.reservations.is_available(id, now_hours) {
                continue;
            }
            let here = whereabouts
                .by_place
                .get(whereabouts.index(initiator))
                .map_or(&[][..], Vec::as_slice);
            let partners = self.nearest_partners(agents, initiator, here);
            if partners.is_empty() {
                continue;
            }
            let (world, offers) = self.advertise(agents, initiator, &partners, now_hours);
            let decision = decider.decide(&agents[initiator].agent, &world, rng.next_u64());
            let Some(pick) = decision.selected.filter(|c| c.utility > 0.0) else {
                continue;
            };
            let Some(offer) = offers
                .get(pick.provider)
                .and_then(|o| o.get(pick.action))
                .cloned()
            else {
                continue;
            };
            let draw = rng.next_unit();
            let at = &mut StepAt::new(whereabouts.of(initiator), now_hours, &mut out);
            self.resolve(agents, initiator, &offer, draw, at);
        }
        self.last_step_hours = Some(now_hours);
        out
    }

    fn observe(&mut self, simulated: &SimulatedAgent, at: &mut StepAt<'_>) -> f64 {
        let agent = &simulated.agent;
        let needs = self.needs;
        let (mood_change_min, low_line) = (self.config.mood_change_min, self.config.need_low_below);
        // One lookup (a key is cloned to ask: cheaper than walking the tree twice).
        let member = self.members.entry(agent.id.clone()).or_default();
        let initiative = member.profile.social_initiative;
        if member.location.as_deref() != Some(at.place.location.as_str())
            && let Some(from) = member.location.replace(at.place.location.clone())
        {
            at.push_event(StoryEventKind::Moved {
                npc: agent.id.clone(),
                from,
            });
        }
        if let Some((_, wellbeing)) = &simulated.wellbeing {
            match member.mood {
                Some(previous) if (wellbeing.mood - previous).abs() >= mood_change_min => {
                    at.push_event(StoryEventKind::MoodChanged {
                        npc: agent.id.clone(),
                        previous,
                        mood: wellbeing.mood,
                        stress: wellbeing.stress,
                    });
                    member.mood = Some(wellbeing.mood);
                }
                None => member.mood = Some(wellbeing.mood),
                _ => {}
            }
        }
        for (role, need) in ROLES.iter().zip(needs) {
            let Some(value) = level(agent, need) else {
                continue;
            };
            let was_low = member.low_needs.contains(&need);
            if value < low_line && !was_low {
                member.low_needs.push(need);
                let name = match role {
                    Role::Social => "social",
                    Role::Economic => "economic",
                    Role::Survival => "survival",
                    Role::Purpose => "purpose",
                    Role::Ambition => "ambition",
                };
                at.push_event(StoryEventKind::NeedLow {
                    npc: agent.id.clone(),
                    need: name.into(),
                    level: value,
                });
            } else if value >= low_line && was_low {
                member.low_needs.retain(|n| *n != need);
            }
        }
        initiative
    }

    fn witness_hostile_acts(
        &mut self,
        agents: &mut [SimulatedAgent],
        whereabouts: Whereabouts<'_>,
        count: usize,
        now_hours: f64,
        seed: u64,
        out: &mut SocialStep,
    ) {
        let last = self.last_step_hours;
        let acts: Vec<(usize, String)> = (0..count)
            .filter_map(|i| {
                let running = agents[i].running.as_ref()?;
                // Only acts started since the last call (asked first: it is the common no).
                if last.is_some_and(|last| running.started_at_hours <= last) {
                    return None;
                }
                let tag = running
                    .action
                    .tags
                    .iter()
                    .find(|t| self.hostile_tags.contains(t))?;
                let act = self
                    .config
                    .hostile_act_tags
                    .get(self.hostile_tags.iter().position(|h| h == tag)?)?;
                Some((i, act.clone()))
            })
            .collect();
        for (actor, act) in acts {
            let actor_id = agents[actor].agent.id.clone();
            let here = whereabouts
                .by_place
                .get(whereabouts.index(actor))
                .map_or(&[][..], Vec::as_slice);
            for &witness in here {
                if witness == actor || witness >= count {
                    continue;
                }
                let stream = derive_seed(
                    seed,
                    stable_hash(&format!("{}|{actor_id}", agents[witness].agent.id)),
                );
                if DetRng::new(stream).next_unit() < self.config.witness_chance {
                    let at = &mut StepAt::new(whereabouts.of(witness), now_hours, out);
                    self.witness(agents, witness, &actor_id, &act, at);
                }
            }
        }
    }

    /// `witness` sees `actor` commit `act` (`theft`) at `at`'s place and hour: it holds a
    /// first-hand threat rumour about the actor, trusts and respects it less, feels the threat,
    /// and its archetype may react to it (`on: threat`); the story events go to `at`'s step.
    pub fn witness(
        &mut self,
        agents: &mut [SimulatedAgent],
        witness: usize,
        actor: &str,
        act: &str,
        at: &mut StepAt<'_>,
    ) {
        let Some(witness_id) = agents.get(witness).map(|a| a.agent.id.clone()) else {
            return;
        };
        at.push_event(StoryEventKind::Witnessed {
            witness: witness_id.clone(),
            actor: actor.to_owned(),
            act: act.to_owned(),
        });
        let cause = format!("witnessed:{act}");
        let regard = FacetDeltas {
            trust: -self.config.witness_trust_loss,
            respect: -self.config.witness_respect_loss,
            ..FacetDeltas::default()
        };
        self.change_regard(&witness_id, actor, &regard, &cause, at);
        let confidence = self.config.witness_confidence;
        self.learn(
            &witness_id,
            Gossip {
                subject: actor.to_owned(),
                kind: RumourTopic::Threat,
                intent: GossipIntent::Warn,
                about_person: true,
                confidence,
                origin_event: format!("{act}:{actor}:{:.2}", at.now_hours),
                depth: 0,
                holder: witness_id.clone(),
            },
        );
        let pressure = confidence * self.config.gossip.threat_pressure_per_credibility;
        self.feel_threat(agents, witness, actor, pressure, at);
    }

    /// A credible threat about `subject` reaches `npc`: survival pressure, and the `threat`
    /// goal reactions of its archetype.
    pub(super) fn feel_threat(
        &mut self,
        agents: &mut [SimulatedAgent],
        npc: usize,
        subject: &str,
        pressure: f64,
        at: &mut StepAt<'_>,
    ) {
        let survival = self.need(Role::Survival);
        let simulated = &mut agents[npc];
        shift(&mut simulated.agent, survival, -pressure);
        let created = simulated
            .goals
            .as_mut()
            .map(|book| book.react("threat", subject, at.now_hours))
            .unwrap_or_default();
        let id = simulated.agent.id.clone();
        at.goals_created(&id, created);
    }

    pub(super) fn change_regard(
        &mut self,
        from: &str,
        to: &str,
        deltas: &FacetDeltas,
        cause: &str,
        at: &mut StepAt<'_>,
    ) {
        for (facet, delta) in deltas.changes() {
            let applied = self
                .relationships
                .adjust(from, to, facet, delta, at.now_hours);
            self.record_change(from, to, facet, applied, cause, at);
        }
    }

    pub(super) fn record_change(
        &self,
        from: &str,
        to: &str,
        facet: Facet,
        applied: f64,
        cause: &str,
        at: &mut StepAt<'_>,
    ) {
        if applied == 0.0 {
            return;
        }
        at.push_event(StoryEventKind::RelationshipChanged {
            from: from.to_owned(),
            to: to.to_owned(),
            facet,
            delta: applied,
            value: self.relationships.value(from, to, facet),
            cause: cause.to_owned(),
        });
    }

    pub(super) fn apply_needs(&self, agent: &mut Agent, deltas: &NeedDeltas) {
        for role in ROLES {
            let delta = role_delta(deltas, role);
            if delta != 0.0 {
                shift(agent, self.need(role), delta);
            }
        }
    }

    pub(super) fn remember_mood(simulated: &mut SimulatedAgent, mood_delta: f64, now_hours: f64) {
        if mood_delta == 0.0 {
            return;
        }
        if let Some((config, wellbeing)) = &mut simulated.wellbeing {
            config.remember(wellbeing, mood_delta, now_hours);
        }
    }
}
