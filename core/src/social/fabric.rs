//! The social fabric of a zone (seed 001 §4.4): who holds which rumours, who is engaged with
//! whom, and the social step that lets NPCs meet, talk, trade, argue and scheme.
//!
//! A step (every `step_every_ticks` ticks, default 10):
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
//! Every draw comes from a stream derived from the step's seed and the NPC's id, so a step is
//! a pure function of its inputs. An interaction in a place with a player present is marked
//! `witnessed` (the service may ask the narrator for flavour text); no other one ever is.

use std::collections::BTreeMap;

use super::gossip::{Gossip, GossipConfig, GossipIntent, GossipKind, GossipReaction, Reception};
use super::interaction::{Effects, FacetDeltas, InteractionConfig, InteractionKind, NeedDeltas};
use super::relationships::{Facet, RelationshipCache, RelationshipThresholds, Relationships};
use super::reservation::Reservations;
use crate::agent::Agent;
use crate::decider::Decider;
use crate::goals::{Goal, GoalCategory, GoalPredicate};
use crate::rng::{DetRng, derive_seed, stable_hash};
use crate::simulator::SimulatedAgent;
use crate::story::event::{StoryEvent, StoryEventKind};
use crate::vocabulary::{Symbol, Vocabulary};
use crate::world::{AdvertisedAction, Provider, World};

/// How one NPC takes part in social life (from its archetype).
#[derive(Clone, Debug, PartialEq)]
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

/// One NPC's social state.
#[derive(Clone, Debug, Default, PartialEq)]
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

/// What a partner offers an initiator: the kind, and the rumour or victim it is about.
#[derive(Clone, Debug, PartialEq)]
pub struct Offer {
    /// The partner's index.
    pub partner: usize,
    /// The kind.
    pub kind: InteractionKind,
    /// The rumour to tell (gossip), its intent set.
    pub rumour: Option<Gossip>,
    /// The third party (scheming).
    pub victim: Option<String>,
}

#[derive(Clone, Copy, Debug)]
enum Role {
    Social,
    Economic,
    Survival,
    Purpose,
    Ambition,
}

const ROLES: [Role; 5] = [
    Role::Social,
    Role::Economic,
    Role::Survival,
    Role::Purpose,
    Role::Ambition,
];

fn role_delta(deltas: &NeedDeltas, role: Role) -> f64 {
    match role {
        Role::Social => deltas.social,
        Role::Economic => deltas.economic,
        Role::Survival => deltas.survival,
        Role::Purpose => deltas.purpose,
        Role::Ambition => deltas.ambition,
    }
}

/// A need's level in [0, 1].
fn level(agent: &Agent, need: Symbol) -> Option<f64> {
    agent.consideration(need).map(|c| {
        if c.max > c.min {
            ((c.value - c.min) / (c.max - c.min)).clamp(0.0, 1.0)
        } else {
            0.0
        }
    })
}

/// Moves a need by `fraction` of its range.
fn shift(agent: &mut Agent, need: Symbol, fraction: f64) {
    if let Some(c) = agent.considerations.iter_mut().find(|c| c.name == need) {
        c.value += fraction * (c.max - c.min);
        c.clamp_value();
    }
}

/// A zone's social state and step.
#[derive(Clone, Debug)]
pub struct SocialFabric {
    /// Its numbers.
    pub config: FabricConfig,
    /// Everyone's regard for everyone.
    pub relationships: Relationships,
    /// Friend / rival / ally answers for the current step.
    pub cache: RelationshipCache,
    /// Who is engaged with whom; cooldowns.
    pub reservations: Reservations,
    members: BTreeMap<String, Member>,
    needs: [Symbol; 5],
    acquire: Symbol,
    hostile_tags: Vec<Symbol>,
    kind_tags: Vec<(InteractionKind, Vec<Symbol>)>,
    last_step_hours: Option<f64>,
}

impl SocialFabric {
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

    fn need(&self, role: Role) -> Symbol {
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

    fn profile(&self, npc: &str) -> SocialProfile {
        self.members
            .get(npc)
            .map(|m| m.profile.clone())
            .unwrap_or_default()
    }

    /// Runs a step when `tick` is a multiple of `step_every_ticks`; otherwise does nothing.
    pub fn tick(
        &mut self,
        tick: u64,
        agents: &mut [SimulatedAgent],
        places: &[SocialPlace],
        now_hours: f64,
        seed: u64,
        decider: &Decider,
    ) -> SocialStep {
        if !tick.is_multiple_of(self.config.step_every_ticks.max(1)) {
            return SocialStep::default();
        }
        self.step(agents, places, now_hours, seed, decider)
    }

    /// One social step over `agents` (with `places`, parallel to it) at `now_hours`.
    pub fn step(
        &mut self,
        agents: &mut [SimulatedAgent],
        places: &[SocialPlace],
        now_hours: f64,
        seed: u64,
        decider: &Decider,
    ) -> SocialStep {
        let mut out = SocialStep::default();
        let count = agents.len().min(places.len());
        self.reservations.sweep(now_hours);
        self.cache.invalidate();
        for index in 0..count {
            self.observe(&agents[index], &places[index], now_hours, &mut out);
        }
        self.witness_hostile_acts(agents, places, count, now_hours, seed, &mut out);
        let mut by_place: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (index, place) in places.iter().enumerate().take(count) {
            by_place.entry(&place.location).or_default().push(index);
        }
        for initiator in 0..count {
            if out.interactions.len() >= self.config.max_interactions_per_step {
                break;
            }
            let id = agents[initiator].agent.id.clone();
            if !self.reservations.is_available(&id, now_hours) {
                continue;
            }
            let mut rng = DetRng::new(derive_seed(seed, stable_hash(&id)));
            if rng.next_unit() >= self.profile(&id).social_initiative {
                continue;
            }
            let here = by_place
                .get(places[initiator].location.as_str())
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
            self.resolve(
                agents,
                initiator,
                &offer,
                &places[initiator],
                now_hours,
                draw,
                &mut out,
            );
        }
        self.last_step_hours = Some(now_hours);
        out
    }

    /// Up to `max_partners_considered` others in the same place, nearest first (ties by index).
    fn nearest_partners(
        &self,
        agents: &[SimulatedAgent],
        initiator: usize,
        here: &[usize],
    ) -> Vec<usize> {
        let from = agents[initiator].agent.position;
        let mut partners: Vec<(f64, usize)> = here
            .iter()
            .copied()
            .filter(|&i| i != initiator)
            .map(|i| (agents[i].agent.position.distance_to(&from), i))
            .collect();
        partners.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        partners.truncate(self.config.max_partners_considered);
        partners.into_iter().map(|(_, i)| i).collect()
    }

    /// The world of what `partners` advertise to `initiator`: one provider per partner (no free
    /// slot when it is engaged), one action per kind the relationship admits. `offers[p][a]`
    /// says what provider `p`'s action `a` is.
    pub fn advertise(
        &mut self,
        agents: &[SimulatedAgent],
        initiator: usize,
        partners: &[usize],
        now_hours: f64,
    ) -> (World, Vec<Vec<Offer>>) {
        let me = &agents[initiator].agent;
        let adverts = self.config.interactions.adverts;
        let profile = self.profile(&me.id);
        let rel = &self.relationships;
        let mut victims: Vec<String> = self.cache.rivals(rel, &me.id).to_vec();
        let mut more: Vec<(f64, &str)> = rel
            .filtered(&me.id, |r| r.trust < adverts.scheme_victim_trust_below)
            .into_iter()
            .map(|to| (rel.value(&me.id, to, Facet::Trust), to))
            .collect();
        more.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(b.1)));
        victims.extend(more.into_iter().map(|(_, to)| to.to_owned()));
        let my_low = ROLES
            .iter()
            .filter_map(|&role| level(me, self.need(role)))
            .fold(1.0_f64, f64::min);
        let my_purpose = level(me, self.need(Role::Purpose));
        let mut world = World {
            now_hours,
            ..World::default()
        };
        let mut offers = Vec::with_capacity(partners.len());
        for &partner in partners {
            let them = &agents[partner].agent;
            let trust = rel.value(&me.id, &them.id, Facet::Trust);
            let mut provider_offers = Vec::new();
            let mut actions = Vec::new();
            for kind in InteractionKind::ALL {
                let mut offer = Offer {
                    partner,
                    kind,
                    rumour: None,
                    victim: None,
                };
                let priority = match kind {
                    InteractionKind::Conversation => Some(adverts.conversation_priority),
                    InteractionKind::Trade => Some(adverts.trade_priority),
                    InteractionKind::Gossip => {
                        let knows = self.members.get(&them.id);
                        let told = self.members.get(&me.id).and_then(|m| {
                            m.rumours.to_tell(&self.config.gossip, &them.id, |origin| {
                                knows.is_some_and(|k| k.rumours.knows(origin))
                            })
                        });
                        told.map(|rumour| {
                            let intent = self.config.gossip.intent_for(
                                rel,
                                &self.config.thresholds,
                                &me.id,
                                &them.id,
                                rumour,
                                profile.influence,
                            );
                            offer.rumour = Some(Gossip {
                                intent,
                                ..rumour.clone()
                            });
                            adverts.gossip_priority
                                * profile.gossip_tendency
                                * (0.5 + profile.influence)
                        })
                    }
                    InteractionKind::Argument => (trust < adverts.argue_trust_below).then(|| {
                        adverts.argue_drive * (adverts.argue_trust_below - trust)
                            / adverts.argue_trust_below
                    }),
                    InteractionKind::Favor => (my_low < adverts.favor_need_below
                        && trust > adverts.favor_trust_above)
                        .then_some(0.0),
                    InteractionKind::Intimidation => {
                        let respect = rel.value(&me.id, &them.id, Facet::Respect);
                        let loyal = self.config.thresholds.is_ally(&rel.get(&me.id, &them.id));
                        (respect < adverts.intimidate_respect_below && !loyal).then(|| {
                            adverts.intimidate_drive * (adverts.intimidate_respect_below - respect)
                                / adverts.intimidate_respect_below
                        })
                    }
                    InteractionKind::Scheming => victims
                        .iter()
                        .find(|v| **v != them.id)
                        .filter(|_| trust >= adverts.scheme_partner_trust_above)
                        .map(|victim| {
                            let against = rel.value(&me.id, victim, Facet::Trust);
                            offer.victim = Some(victim.clone());
                            adverts.scheme_drive
                                * ((adverts.scheme_victim_trust_below - against)
                                    / adverts.scheme_victim_trust_below)
                                    .max(0.0)
                        }),
                    InteractionKind::Mentoring => my_purpose
                        .zip(level(them, self.need(Role::Purpose)))
                        .filter(|(mine, theirs)| mine - theirs >= adverts.mentor_purpose_gap)
                        .map(|_| adverts.mentor_priority),
                    InteractionKind::Courtship => {
                        let affinity = rel.value(&me.id, &them.id, Facet::Affinity);
                        (affinity > adverts.court_affinity_above).then(|| {
                            adverts.court_drive * (affinity - adverts.court_affinity_above)
                                / (1.0 - adverts.court_affinity_above).max(f64::EPSILON)
                        })
                    }
                };
                let Some(priority) = priority else {
                    continue;
                };
                let mut action = AdvertisedAction::new(kind.as_str());
                action.tags = self
                    .kind_tags
                    .iter()
                    .find(|(k, _)| *k == kind)
                    .map(|(_, t)| t.clone())
                    .unwrap_or_default();
                action.duration_hours = self.config.interaction_hours;
                action.intrinsic_priority = priority;
                let promised = self
                    .config
                    .interactions
                    .rule(kind)
                    .on_success
                    .initiator_needs;
                for role in ROLES {
                    let delta = role_delta(&promised, role);
                    let need = self.need(role);
                    if let Some(c) = me.consideration(need).filter(|_| delta != 0.0) {
                        action.deltas.push((need, delta * (c.max - c.min)));
                    }
                }
                actions.push(action);
                provider_offers.push(offer);
            }
            let engaged = !self.reservations.is_available(&them.id, now_hours);
            world.providers.push(Provider {
                id: them.id.clone(),
                position: them.position,
                capacity: u32::from(!engaged),
                occupants: 0,
                state: None,
                actions,
            });
            offers.push(provider_offers);
        }
        (world, offers)
    }

    fn observe(
        &mut self,
        simulated: &SimulatedAgent,
        place: &SocialPlace,
        now_hours: f64,
        out: &mut SocialStep,
    ) {
        let agent = &simulated.agent;
        let needs = self.needs;
        let (mood_change_min, low_line) = (self.config.mood_change_min, self.config.need_low_below);
        let member = self.members.entry(agent.id.clone()).or_default();
        let event = |kind| StoryEvent {
            at_hours: now_hours,
            location: place.location.clone(),
            players: place.players.clone(),
            kind,
        };
        if let Some(from) = member
            .location
            .replace(place.location.clone())
            .filter(|from| *from != place.location)
        {
            out.events.push(event(StoryEventKind::Moved {
                npc: agent.id.clone(),
                from,
            }));
        }
        if let Some((_, wellbeing)) = &simulated.wellbeing {
            match member.mood {
                Some(previous) if (wellbeing.mood - previous).abs() >= mood_change_min => {
                    out.events.push(event(StoryEventKind::MoodChanged {
                        npc: agent.id.clone(),
                        previous,
                        mood: wellbeing.mood,
                        stress: wellbeing.stress,
                    }));
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
                out.events.push(event(StoryEventKind::NeedLow {
                    npc: agent.id.clone(),
                    need: name.into(),
                    level: value,
                }));
            } else if value >= low_line && was_low {
                member.low_needs.retain(|n| *n != need);
            }
        }
    }

    fn witness_hostile_acts(
        &mut self,
        agents: &mut [SimulatedAgent],
        places: &[SocialPlace],
        count: usize,
        now_hours: f64,
        seed: u64,
        out: &mut SocialStep,
    ) {
        let last = self.last_step_hours;
        let acts: Vec<(usize, String)> = (0..count)
            .filter_map(|i| {
                let running = agents[i].running.as_ref()?;
                let fresh = last.is_none_or(|last| running.started_at_hours > last);
                let tag = running
                    .action
                    .tags
                    .iter()
                    .find(|t| self.hostile_tags.contains(t))?;
                let act = self
                    .config
                    .hostile_act_tags
                    .get(self.hostile_tags.iter().position(|h| h == tag)?)?;
                fresh.then(|| (i, act.clone()))
            })
            .collect();
        for (actor, act) in acts {
            let actor_id = agents[actor].agent.id.clone();
            for witness in 0..count {
                if witness == actor || places[witness].location != places[actor].location {
                    continue;
                }
                let stream = derive_seed(
                    seed,
                    stable_hash(&format!("{}|{actor_id}", agents[witness].agent.id)),
                );
                if DetRng::new(stream).next_unit() < self.config.witness_chance {
                    self.witness(
                        agents,
                        witness,
                        &actor_id,
                        &act,
                        &places[witness],
                        now_hours,
                        out,
                    );
                }
            }
        }
    }

    /// `witness` sees `actor` commit `act` (`theft`) at `place`: it holds a first-hand threat
    /// rumour about the actor, trusts and respects it less, feels the threat, and its archetype
    /// may react to it (`on: threat`).
    #[allow(clippy::too_many_arguments)]
    pub fn witness(
        &mut self,
        agents: &mut [SimulatedAgent],
        witness: usize,
        actor: &str,
        act: &str,
        place: &SocialPlace,
        now_hours: f64,
        out: &mut SocialStep,
    ) {
        let Some(witness_id) = agents.get(witness).map(|a| a.agent.id.clone()) else {
            return;
        };
        let event = |kind| StoryEvent {
            at_hours: now_hours,
            location: place.location.clone(),
            players: place.players.clone(),
            kind,
        };
        out.events.push(event(StoryEventKind::Witnessed {
            witness: witness_id.clone(),
            actor: actor.to_owned(),
            act: act.to_owned(),
        }));
        let cause = format!("witnessed:{act}");
        let regard = FacetDeltas {
            trust: -self.config.witness_trust_loss,
            respect: -self.config.witness_respect_loss,
            ..FacetDeltas::default()
        };
        self.change_regard(&witness_id, actor, &regard, &cause, place, now_hours, out);
        let confidence = self.config.witness_confidence;
        self.learn(
            &witness_id,
            Gossip {
                subject: actor.to_owned(),
                kind: GossipKind::Threat,
                intent: GossipIntent::Warn,
                about_person: true,
                confidence,
                origin_event: format!("{act}:{actor}:{now_hours:.2}"),
                depth: 0,
                holder: witness_id.clone(),
            },
        );
        let pressure = confidence * self.config.gossip.threat_pressure_per_credibility;
        self.feel_threat(agents, witness, actor, pressure, place, now_hours, out);
    }

    /// A credible threat about `subject` reaches `npc`: survival pressure, and the `threat`
    /// goal reactions of its archetype.
    #[allow(clippy::too_many_arguments)]
    fn feel_threat(
        &mut self,
        agents: &mut [SimulatedAgent],
        npc: usize,
        subject: &str,
        pressure: f64,
        place: &SocialPlace,
        now_hours: f64,
        out: &mut SocialStep,
    ) {
        let survival = self.need(Role::Survival);
        let simulated = &mut agents[npc];
        shift(&mut simulated.agent, survival, -pressure);
        let created = simulated
            .goals
            .as_mut()
            .map(|book| book.react("threat", subject, now_hours))
            .unwrap_or_default();
        let id = simulated.agent.id.clone();
        Self::goals_created(&id, created, place, now_hours, out);
    }

    fn goals_created(
        npc: &str,
        descriptions: Vec<String>,
        place: &SocialPlace,
        now_hours: f64,
        out: &mut SocialStep,
    ) {
        for description in descriptions {
            out.events.push(StoryEvent {
                at_hours: now_hours,
                location: place.location.clone(),
                players: place.players.clone(),
                kind: StoryEventKind::GoalCreated {
                    npc: npc.to_owned(),
                    description: description.clone(),
                },
            });
            out.goals_created.push((npc.to_owned(), description));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn change_regard(
        &mut self,
        from: &str,
        to: &str,
        deltas: &FacetDeltas,
        cause: &str,
        place: &SocialPlace,
        now_hours: f64,
        out: &mut SocialStep,
    ) {
        for (facet, delta) in deltas.changes() {
            let applied = self.relationships.adjust(from, to, facet, delta, now_hours);
            self.record_change(from, to, facet, applied, cause, place, now_hours, out);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn record_change(
        &self,
        from: &str,
        to: &str,
        facet: Facet,
        applied: f64,
        cause: &str,
        place: &SocialPlace,
        now_hours: f64,
        out: &mut SocialStep,
    ) {
        if applied == 0.0 {
            return;
        }
        out.events.push(StoryEvent {
            at_hours: now_hours,
            location: place.location.clone(),
            players: place.players.clone(),
            kind: StoryEventKind::RelationshipChanged {
                from: from.to_owned(),
                to: to.to_owned(),
                facet,
                delta: applied,
                value: self.relationships.value(from, to, facet),
                cause: cause.to_owned(),
            },
        });
    }

    fn apply_needs(&self, agent: &mut Agent, deltas: &NeedDeltas) {
        for role in ROLES {
            let delta = role_delta(deltas, role);
            if delta != 0.0 {
                shift(agent, self.need(role), delta);
            }
        }
    }

    fn remember_mood(simulated: &mut SimulatedAgent, mood_delta: f64, now_hours: f64) {
        if mood_delta == 0.0 {
            return;
        }
        if let Some((config, wellbeing)) = &mut simulated.wellbeing {
            config.remember(wellbeing, mood_delta, now_hours);
        }
    }

    /// Resolves `offer` made to `initiator` with the uniform draw `draw`, applies its effects
    /// and records it.
    #[allow(clippy::too_many_arguments)]
    pub fn resolve(
        &mut self,
        agents: &mut [SimulatedAgent],
        initiator: usize,
        offer: &Offer,
        place: &SocialPlace,
        now_hours: f64,
        draw: f64,
        out: &mut SocialStep,
    ) {
        let target = offer.partner;
        if initiator == target || target >= agents.len() || initiator >= agents.len() {
            return;
        }
        let me = agents[initiator].agent.id.clone();
        let them = agents[target].agent.id.clone();
        if !self
            .reservations
            .reserve(&me, &them, now_hours, self.config.interaction_hours)
        {
            return;
        }
        let kind = offer.kind;
        let loyalty_before = self.relationships.value(&them, &me, Facet::Loyalty);
        let victim_loyalty_before = offer
            .victim
            .as_ref()
            .map(|v| self.relationships.value(v, &me, Facet::Loyalty));
        let (mut success, chance, mut effects) =
            self.config
                .interactions
                .resolve(&self.relationships, kind, &me, &them, draw);
        let cause = kind.as_str();
        if let Some(rumour) = &offer.rumour {
            success = self.tell(agents, initiator, target, rumour, place, now_hours, out);
            let rule = self.config.interactions.rule(kind);
            effects = if success {
                rule.on_success
            } else {
                rule.on_rejection
            };
        }
        self.apply_effects(
            agents, initiator, target, &effects, cause, place, now_hours, out,
        );
        self.consequences(
            agents, initiator, target, offer, success, place, now_hours, out,
        );
        for npc in [&me, &them] {
            self.reservations
                .cool_down(npc, now_hours + self.config.cooldown_hours);
        }
        let created = agents[target]
            .goals
            .as_mut()
            .map(|book| book.react(cause, &me, now_hours))
            .unwrap_or_default();
        Self::goals_created(&them, created, place, now_hours, out);
        let mood = |a: &SimulatedAgent| a.wellbeing.as_ref().map_or(0.0, |(_, w)| w.mood);
        let faction = |npc: &str| {
            self.members
                .get(npc)
                .and_then(|m| m.profile.faction.clone())
        };
        let witnessed = !place.players.is_empty();
        out.events.push(StoryEvent {
            at_hours: now_hours,
            location: place.location.clone(),
            players: place.players.clone(),
            kind: StoryEventKind::Interaction {
                initiator: me.clone(),
                target: them.clone(),
                interaction: kind,
                success,
                against: offer.victim.clone(),
                initiator_faction: faction(&me),
                target_faction: faction(&them),
                target_loyalty_before: loyalty_before,
                victim_loyalty_before,
                initiator_affinity: self.relationships.value(&me, &them, Facet::Affinity),
                target_affinity: self.relationships.value(&them, &me, Facet::Affinity),
                initiator_mood: mood(&agents[initiator]),
                target_mood: mood(&agents[target]),
                witnessed,
            },
        });
        out.interactions.push(InteractionRecord {
            initiator: me,
            target: them,
            kind,
            success,
            chance,
            location: place.location.clone(),
            witnessed,
            at_hours: now_hours,
            against: offer.victim.clone(),
            told: offer.rumour.clone(),
        });
    }

    #[allow(clippy::too_many_arguments)]
    fn apply_effects(
        &mut self,
        agents: &mut [SimulatedAgent],
        initiator: usize,
        target: usize,
        effects: &Effects,
        cause: &str,
        place: &SocialPlace,
        now_hours: f64,
        out: &mut SocialStep,
    ) {
        let me = agents[initiator].agent.id.clone();
        let them = agents[target].agent.id.clone();
        self.change_regard(
            &me,
            &them,
            &effects.initiator_regard,
            cause,
            place,
            now_hours,
            out,
        );
        self.change_regard(
            &them,
            &me,
            &effects.target_regard,
            cause,
            place,
            now_hours,
            out,
        );
        self.apply_needs(&mut agents[initiator].agent, &effects.initiator_needs);
        self.apply_needs(&mut agents[target].agent, &effects.target_needs);
        Self::remember_mood(&mut agents[initiator], effects.initiator_mood, now_hours);
        Self::remember_mood(&mut agents[target], effects.target_mood, now_hours);
    }

    /// The rumours and third-party effects an interaction leaves behind.
    #[allow(clippy::too_many_arguments)]
    fn consequences(
        &mut self,
        agents: &mut [SimulatedAgent],
        initiator: usize,
        target: usize,
        offer: &Offer,
        success: bool,
        place: &SocialPlace,
        now_hours: f64,
        out: &mut SocialStep,
    ) {
        let me = agents[initiator].agent.id.clone();
        let them = agents[target].agent.id.clone();
        let rumour =
            |subject: &str, kind, about_person, confidence, origin: String, holder: &str| Gossip {
                subject: subject.to_owned(),
                kind,
                intent: GossipIntent::Inform,
                about_person,
                confidence,
                origin_event: origin,
                depth: 0,
                holder: holder.to_owned(),
            };
        match offer.kind {
            InteractionKind::Trade if success => {
                let day = (now_hours / 24.0).floor();
                let origin = format!("trade:{}:{day}", place.location);
                for npc in [&me, &them] {
                    let news = rumour(
                        &place.location,
                        GossipKind::Opportunity,
                        false,
                        self.config.trade_rumour_confidence,
                        origin.clone(),
                        npc,
                    );
                    self.learn(npc, news);
                }
            }
            InteractionKind::Argument | InteractionKind::Intimidation => {
                let origin = format!("{}:{me}:{them}:{now_hours:.2}", offer.kind.as_str());
                let grievance = rumour(
                    &me,
                    GossipKind::Person,
                    true,
                    self.config.grievance_confidence,
                    origin,
                    &them,
                );
                self.learn(&them, grievance);
            }
            InteractionKind::Scheming => {
                if let Some(victim) = &offer.victim {
                    let origin = format!("scheme:{me}:{victim}:{now_hours:.2}");
                    let secret = rumour(
                        &me,
                        GossipKind::Secret,
                        true,
                        self.config.scheme_secret_confidence,
                        origin,
                        &them,
                    );
                    self.learn(&them, secret);
                    if success {
                        let turned = FacetDeltas {
                            trust: -self.config.interactions.scheme_victim_trust_loss,
                            ..FacetDeltas::default()
                        };
                        self.change_regard(
                            &them, victim, &turned, "scheming", place, now_hours, out,
                        );
                    }
                }
            }
            _ => {}
        }
        let _ = agents;
    }

    /// `teller` (index) tells `rumour` to `listener` (index); returns whether it was believed.
    #[allow(clippy::too_many_arguments)]
    fn tell(
        &mut self,
        agents: &mut [SimulatedAgent],
        teller: usize,
        listener: usize,
        rumour: &Gossip,
        place: &SocialPlace,
        now_hours: f64,
        out: &mut SocialStep,
    ) -> bool {
        let teller_id = agents[teller].agent.id.clone();
        let listener_id = agents[listener].agent.id.clone();
        let economic = level(&agents[listener].agent, self.need(Role::Economic)).unwrap_or(1.0);
        let config = self.config.gossip;
        let reception = config.receive(
            &mut self.relationships,
            &listener_id,
            &teller_id,
            rumour,
            economic,
            now_hours,
        );
        let (accepted, credibility) = match &reception {
            Reception::Dropped => (false, 0.0),
            Reception::Dismissed { credibility } => (false, *credibility),
            Reception::Accepted { credibility, .. } => (true, *credibility),
        };
        out.events.push(StoryEvent {
            at_hours: now_hours,
            location: place.location.clone(),
            players: place.players.clone(),
            kind: StoryEventKind::RumourHeard {
                listener: listener_id.clone(),
                teller: teller_id,
                subject: rumour.subject.clone(),
                gossip: rumour.kind,
                intent: rumour.intent,
                depth: rumour.depth,
                credibility,
                accepted,
            },
        });
        let Reception::Accepted {
            copy, reactions, ..
        } = reception
        else {
            return false;
        };
        for reaction in reactions {
            match reaction {
                GossipReaction::RaiseSurvivalPressure(pressure) => {
                    self.feel_threat(
                        agents,
                        listener,
                        &rumour.subject,
                        pressure,
                        place,
                        now_hours,
                        out,
                    );
                }
                GossipReaction::AcquireGoal { subject } => {
                    let simulated = &mut agents[listener];
                    let have = simulated.agent.resource(self.acquire);
                    let description = format!("seize the opportunity at {subject}");
                    let goal = Goal {
                        category: GoalCategory::Reactive,
                        source: format!("gossip:{}", rumour.origin_event),
                        target: Some(subject),
                        description: description.clone(),
                        predicate: GoalPredicate::Resource {
                            name: self.acquire,
                            min: have + self.config.acquire_amount,
                        },
                        deadline_hours: Some(now_hours + self.config.acquire_deadline_hours),
                        priority_bonus: self.config.acquire_bonus,
                    };
                    let added = simulated
                        .goals
                        .get_or_insert_with(Default::default)
                        .add(goal)
                        .is_ok();
                    if added {
                        Self::goals_created(&listener_id, vec![description], place, now_hours, out);
                    }
                }
                GossipReaction::TrustChanged { toward, delta } => {
                    self.record_change(
                        &listener_id,
                        &toward,
                        Facet::Trust,
                        delta,
                        "gossip",
                        place,
                        now_hours,
                        out,
                    );
                }
            }
        }
        self.learn(&listener_id, copy);
        true
    }
}
