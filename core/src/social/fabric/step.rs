//! The social step's order over a zone ([`SocialFabric::step`], or a share of it a tick with
//! [`SocialFabric::step_slice`]): sweep, observe every covered NPC, witness hostile acts, then
//! let initiators in id order pick a partner through the decision engine and carry it out.
//! Advertising and resolving a pick are the sibling `advert` and `resolve` modules' jobs.

use std::collections::BTreeMap;

use super::needs::{ROLES, Role, level};
use super::place::{SocialPlace, Whereabouts};
use super::record::{SocialStep, StepAt};
use super::state::SocialFabric;
use crate::decision::decider::Decider;
use crate::life::simulator::SimulatedAgent;
use crate::rng::{DetRng, derive_seed, stable_hash};
use crate::social::chronicle::StoryEventKind;

/// Covered NPCs whose members are read ahead at once (see `SocialFabric::read_members_ahead`).
const MEMBERS_READ_AHEAD: usize = 64;

/// Which NPCs a call of the step covers: indices `offset, offset + stride, …`, with at most
/// `cap` interactions.
#[derive(Clone, Copy, Debug)]
struct Slice {
    offset: usize,
    stride: usize,
    cap: usize,
}

impl SocialFabric {
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
        let present = Whereabouts::present_in(distinct.len(), &at);
        let whereabouts = Whereabouts {
            places: &distinct,
            at: &at,
            by_place: &by_place,
            present: &present,
            started: None,
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
        // The NPCs at `offset, offset + stride, …` that are at a place: those at a place
        // whose index leaves `offset` over `stride` (`offset < stride`).
        let stride = slice.stride.max(1);
        let covered = || {
            whereabouts
                .present
                .iter()
                .copied()
                .take_while(move |&index| index < count)
                .filter(move |&index| index % stride == slice.offset)
        };
        // Every query already ignores what has expired: sweeping only bounds the maps, so once
        // a step (a spread step's first slice) is enough.
        if slice.offset == 0 {
            self.reservations.sweep(now_hours);
            self.relax_regard(now_hours);
        }
        self.cache.invalidate();
        // Observing notes each covered NPC's initiative on the way; their members are read
        // ahead a chunk at a time (see `read_members_ahead`), then observed.
        let observed: Vec<usize> = covered().collect();
        let mut initiatives = Vec::with_capacity(observed.len());
        for chunk in observed.chunks(MEMBERS_READ_AHEAD) {
            self.read_members_ahead(agents, chunk);
            for &index in chunk {
                let at = &mut StepAt::new(whereabouts.of(index), now_hours, &mut out);
                initiatives.push(self.observe(&agents[index], at));
            }
        }
        self.witness_hostile_acts(agents, whereabouts, count, now_hours, seed, &mut out);
        for (&initiator, initiative) in observed.iter().zip(initiatives) {
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

    /// Looks the members of NPCs `indices` up, back to back, and reads what observing them
    /// reads (their location's text); nothing depends on what is read. The members of a zone's
    /// thousands of NPCs are spread over a large table that leaves the caches between steps:
    /// looked up inside observing, each NPC's misses (its id, its slot, the id the slot holds,
    /// its location) wait one NPC after another; in a short loop of look-ups alone, many
    /// NPCs' are under way at once. Changes nothing.
    fn read_members_ahead(&self, agents: &[SimulatedAgent], indices: &[usize]) {
        let mut seen = 0usize;
        for &index in indices {
            if let Some(member) = agents
                .get(index)
                .and_then(|simulated| self.members.get(simulated.agent.id.as_str()))
            {
                seen ^= member.location.as_deref().map_or(0, |location| {
                    usize::from(location.as_bytes().first().copied().unwrap_or(0))
                }) ^ member.low_needs.len();
            }
        }
        std::hint::black_box(seen);
    }

    fn observe(&mut self, simulated: &SimulatedAgent, at: &mut StepAt<'_>) -> f64 {
        let agent = &simulated.agent;
        let needs = self.needs;
        let (mood_change_min, low_line) = (self.config.mood_change_min, self.config.need_low_below);
        // A known member is found without a key made to ask; only a new one costs a copy of
        // its id (and a second look-up).
        let member = match self.members.get_mut(agent.id.as_str()) {
            Some(member) => member,
            None => {
                let member = self.new_member();
                self.members
                    .entry(agent.id.as_str().into())
                    .or_insert(member)
            }
        };
        let initiative = member.profile.social_initiative;
        if member.location.as_deref() != Some(at.place.location.as_str())
            && let Some(from) = member.location.replace(at.place.location.as_str().into())
        {
            at.push_event(StoryEventKind::Moved {
                npc: agent.id.clone(),
                from: from.into(),
            });
        }
        if let Some((_, wellbeing)) = simulated.layers.wellbeing.as_deref() {
            let previous = member.mood;
            if previous.is_nan() {
                member.mood = wellbeing.mood;
            } else if (wellbeing.mood - previous).abs() >= mood_change_min {
                at.push_event(StoryEventKind::MoodChanged {
                    npc: agent.id.clone(),
                    previous,
                    mood: wellbeing.mood,
                    stress: wellbeing.stress,
                });
                member.mood = wellbeing.mood;
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
}
