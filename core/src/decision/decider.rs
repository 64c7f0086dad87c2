//! The point-in-time decision API: [`Decider::rank`], [`Decider::decide`] and
//! [`Decider::decide_batch`]. Stateless: it owns only its tuning and profile weights, takes an
//! explicit seed, and returns every candidate's breakdown for inspection.
//!
//! In a batch each agent draws from its own stream, `batch_agent_seed(seed, id)`, so an agent's
//! preferences depend neither on its place in the list nor on how the batch is split across
//! worker threads; contention is then a serial reduction over bounded lists.

use std::borrow::Borrow;
use std::sync::Arc;

use crate::decision::agent::Agent;
use crate::decision::batch_index::BatchIndex;
use crate::decision::compiled::CompiledActions;
use crate::decision::compiled_decide::{plain_applies, rank_plain};
use crate::decision::compiled_scoring::{CompiledBuffers, evaluate_compiled};
use crate::decision::contention::{self, Preference, PreferenceLists};
use crate::decision::deferred::PlainCandidate;
use crate::decision::order::{
    KEPT_ON_STACK, best, best_few_in_place_order, sort_scored_in_any_order,
};
use crate::decision::ranking::Ranking;
use crate::decision::scored::{Compact, Scored};
use crate::decision::scoring::{Candidate, ScoringView, SymbolEntry};
use crate::decision::selection::{self, Pick};
use crate::decision::spatial::ProviderGrid;
use crate::decision::tuning::Tuning;
use crate::decision::workers::in_shares;
use crate::decision::world::World;
use crate::rng::{DetRng, derive_seed, stable_hash};
use crate::vocabulary::Symbol;

/// A ranking and the stochastic pick from it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decision {
    /// The chosen candidate; `None` when nothing is eligible.
    pub selected: Option<Candidate>,
    /// Whether convention breaking chose it.
    pub convention_broken: bool,
    /// Everything that was considered.
    pub ranking: Ranking,
}

/// The result of [`Decider::decide_batch`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BatchDecision {
    /// Each agent's retained preferences (the pick first, then fallbacks; at most
    /// `reconciliation_top_k`).
    pub preferences: PreferenceLists,
    /// Each agent's granted preference after contention, in input order.
    pub assignments: Vec<Option<Preference>>,
    /// How many contention rounds ran.
    pub rounds: usize,
}

/// The seed agent `id` draws from inside a batch seeded with `seed`. Its first preference is
/// exactly what [`Decider::decide`] picks with this seed.
pub fn batch_agent_seed(seed: u64, agent_id: &str) -> u64 {
    derive_seed(seed, stable_hash(agent_id))
}

/// Buffers reused from one agent's scoring to the next, of full candidates or (a batch's)
/// compact ones.
pub(crate) struct Scratch<C = Candidate> {
    table: Vec<SymbolEntry>,
    /// A compiled world's tables, when they outgrow the stack.
    compiled: CompiledBuffers,
    nearby: Vec<(u32, f64)>,
    /// The last agent's eligible candidates, in the grid's order.
    scored: Vec<C>,
    /// The best of the last agent's eligible candidates by descending utility: at least those
    /// its pick and fallbacks are drawn from, and its pick.
    pub(crate) ranked: Vec<C>,
}

impl<C> Default for Scratch<C> {
    fn default() -> Self {
        Self {
            table: Vec::new(),
            compiled: CompiledBuffers::default(),
            nearby: Vec::new(),
            scored: Vec::new(),
            ranked: Vec::new(),
        }
    }
}

/// A world prepared for many decisions of one decider ([`Decider::compile`]): its actions
/// compiled into flat records, with what depends only on the world and the tuning (`M_context`,
/// the weighted intrinsic priority) computed once, so deciding for an agent whose scoring they
/// can stand for multiplies over contiguous memory. It borrows the decider and the world, so
/// neither can change while it lives: its decisions are always exactly [`Decider::decide`]'s
/// over that world.
#[derive(Debug)]
pub struct CompiledWorld<'a> {
    decider: &'a Decider,
    world: &'a World,
    /// Shared with the rankings of its decisions, whose candidates' breakdowns are put together
    /// from them when read (see [`crate::decision::deferred`]).
    actions: Arc<CompiledActions>,
}

impl CompiledWorld<'_> {
    /// Exactly what [`Decider::decide`] decides for `agent` over the world with `seed`.
    pub fn decide(&self, agent: &Agent, seed: u64) -> Decision {
        let mut decision = Decision::default();
        self.decide_into(agent, seed, &mut decision);
        decision
    }

    /// [`CompiledWorld::decide`] written over `decision` (a decision no longer needed, such as
    /// this agent's last one), whose buffers of eligible and removed candidates it reuses: a
    /// caller deciding again and again does not allocate them anew each time.
    pub fn decide_into(&self, agent: &Agent, seed: u64, decision: &mut Decision) {
        let compiled = (self.world, &*self.actions);
        let decider = self.decider;
        let weights = (&decider.tuning, decider.consideration_weights.as_slice());
        let plain = plain_applies(agent, self.world, &self.actions);
        let rank = |rng: &mut DetRng, ranking: &mut Ranking| {
            if plain {
                let deferred = ranking.refill_deferred(&self.actions);
                rank_plain(agent, compiled, weights, rng, deferred);
            } else {
                decider.rank_compiled(agent, compiled, ranking, rng);
            }
        };
        decider.decide_with(seed, rank, decision);
    }
}

/// The decision engine, configured with a tuning and optional profile weights.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decider {
    tuning: Tuning,
    consideration_weights: Vec<(Symbol, f64)>,
}

impl Decider {
    /// A decider with this tuning and no profile weights.
    pub fn new(tuning: Tuning) -> Self {
        Self {
            tuning,
            consideration_weights: Vec::new(),
        }
    }

    /// Adds a profile's per-consideration weight multipliers.
    pub fn with_consideration_weights(mut self, weights: Vec<(Symbol, f64)>) -> Self {
        self.consideration_weights = weights;
        self
    }

    /// The tuning in force.
    pub fn tuning(&self) -> &Tuning {
        &self.tuning
    }

    fn rank_with(&self, agent: &Agent, world: &World, rng: &mut DetRng) -> Ranking {
        let mut table = Vec::new();
        let view = ScoringView::new(
            &mut table,
            agent,
            (&world.contexts, world.now_hours),
            &self.tuning,
            &self.consideration_weights,
            rng,
        );
        let candidate_count = world.providers.iter().map(|p| p.actions.len()).sum();
        let mut scored = Vec::with_capacity(candidate_count);
        let mut ineligible = Vec::new();
        let placed = world
            .providers
            .iter()
            .enumerate()
            .map(|(index, provider)| (index, agent.position.distance_to(&provider.position)));
        view.evaluate_providers(
            world,
            placed,
            &self.tuning,
            &mut scored,
            Some(&mut ineligible),
        );
        Ranking::new(scored, ineligible)
    }

    /// [`Self::rank_with`] over `world` compiled as `compiled`, into `ranking` (emptied first,
    /// its buffers reused).
    fn rank_compiled(
        &self,
        agent: &Agent,
        (world, compiled): (&World, &CompiledActions),
        ranking: &mut Ranking,
        rng: &mut DetRng,
    ) {
        let (scored, ineligible) = ranking.refill();
        scored.reserve(compiled.action_count());
        let placed = compiled
            .providers()
            .iter()
            .enumerate()
            .map(|(index, provider)| {
                let distance = agent.position.distance_to(&provider.position);
                (index, provider, distance)
            });
        evaluate_compiled::<_, true>(
            (&mut Vec::new(), &mut CompiledBuffers::default()),
            (agent, rng),
            (world, compiled),
            (&self.tuning, &self.consideration_weights),
            placed,
            (scored, ineligible),
        );
    }

    /// Every candidate of `agent`, gated and scored. The seed only matters when perception
    /// noise is on; it is the same stream [`Decider::decide`] starts with.
    pub fn rank(&self, agent: &Agent, world: &World, seed: u64) -> Ranking {
        self.rank_with(agent, world, &mut DetRng::new(seed))
    }

    /// Ranks, then samples the top k by softmax (and maybe breaks convention). Only the top k
    /// are put in order here; the full order is sorted when the ranking is first read, unless
    /// the top k are all there is (or more than are kept on the stack) or convention breaking
    /// picked beyond them.
    pub fn decide(&self, agent: &Agent, world: &World, seed: u64) -> Decision {
        let mut decision = Decision::default();
        let rank = |rng: &mut DetRng, ranking: &mut Ranking| {
            *ranking = self.rank_with(agent, world, rng);
        };
        self.decide_with(seed, rank, &mut decision);
        decision
    }

    /// Prepares `world` for many decisions of this decider: its actions are compiled once into
    /// flat records (see [`CompiledWorld`]), which [`CompiledWorld::decide`] reads instead of
    /// the world's actions. Worth it once the world is decided over more than once.
    pub fn compile<'a>(&'a self, world: &'a World) -> CompiledWorld<'a> {
        CompiledWorld {
            decider: self,
            world,
            actions: Arc::new(CompiledActions::new(world, &self.tuning)),
        }
    }

    /// [`Decider::decide`] of the ranking `rank` makes (into the decision's) from the stream
    /// seeded with `seed`, written over `decision` in place.
    #[inline(always)]
    fn decide_with(
        &self,
        seed: u64,
        rank: impl FnOnce(&mut DetRng, &mut Ranking),
        decision: &mut Decision,
    ) {
        let mut rng = DetRng::new(seed);
        rank(&mut rng, &mut decision.ranking);
        let ranking = &decision.ranking;
        let pick = match (ranking.scored(), ranking.deferred()) {
            (Some(scored), _) => self.pick_among(scored, &mut rng, ranking, |c| *c),
            (None, Some(deferred)) => {
                let full = |c: &PlainCandidate| deferred.full(c);
                self.pick_among(deferred.candidates(), &mut rng, ranking, full)
            }
            (None, None) => None,
        };
        decision.convention_broken = pick.is_some_and(|(p, _)| p.convention_broken);
        decision.selected = pick.map(|(_, candidate)| candidate);
    }

    /// The pick among `scored` (the candidates of `ranking` as scored, in place order) and the
    /// candidate it picks (put together by `full` from what it is in `scored`): the top k are
    /// found among `scored` and picked among by reference (no copy, no allocation); when they
    /// are all there is, or too many to keep on the stack, the full order is the head.
    fn pick_among<C: Scored>(
        &self,
        scored: &[C],
        rng: &mut DetRng,
        ranking: &Ranking,
        full: impl Fn(&C) -> Candidate,
    ) -> Option<(Pick, Candidate)> {
        let top_k = self.tuning.selection_top_k.max(1);
        let mut kept = [(0, 0); KEPT_ON_STACK];
        let best = best_few_in_place_order(scored, top_k, &mut kept);
        let (pick, head) = match (best, scored.first()) {
            (Some(best), Some(first)) => {
                let mut head = [first; KEPT_ON_STACK];
                for (slot, &(_, index)) in head.iter_mut().zip(best) {
                    *slot = &scored[index];
                }
                let head = &head[..best.len()];
                let pick = selection::pick(head, scored, &self.tuning, rng)?;
                (pick, head.get(pick.index).map(|c| full(c)))
            }
            _ => {
                let ranked = ranking.ranked();
                (selection::pick(ranked, ranked, &self.tuning, rng)?, None)
            }
        };
        let candidate = head.or_else(|| ranking.ranked().get(pick.index).copied())?;
        Some((pick, candidate))
    }

    /// Decides for many agents at once and resolves their contention for slots. Scoring runs
    /// on `workers` threads, the caller's among them (1 runs inline); the result never depends
    /// on that number.
    pub fn decide_batch<A: Borrow<Agent> + Sync>(
        &self,
        agents: &[A],
        world: &World,
        seed: u64,
        workers: usize,
    ) -> BatchDecision {
        let mut index = BatchIndex::new(world, &self.tuning);
        self.decide_batch_indexed(agents, world, &mut index, seed, workers)
    }

    /// [`Decider::decide_batch`] over `index`, the world's providers indexed once and kept
    /// between batches while the providers and their actions stay as they are (a zone's
    /// tick): a batch then costs what its agents cost, however many providers the world
    /// holds. The decision is the one `decide_batch` makes.
    pub fn decide_batch_indexed<A: Borrow<Agent> + Sync>(
        &self,
        agents: &[A],
        world: &World,
        index: &mut BatchIndex,
        seed: u64,
        workers: usize,
    ) -> BatchDecision {
        index.compiled.reprice(world, &self.tuning);
        let near = (&index.grid, Some(&index.compiled));
        let threads = workers.clamp(1, agents.len().max(1));
        let preferences = if threads == 1 {
            self.preferences(agents, world, near, seed)
        } else {
            let shares = in_shares(agents, threads, |share| {
                self.preferences(share, world, near, seed)
            });
            let mut merged = PreferenceLists::with_capacity(agents.len(), 0);
            shares.into_iter().for_each(|lists| merged.append(lists));
            merged
        };
        let (assignments, rounds) = contention::resolve(&preferences, agents, world);
        BatchDecision {
            preferences,
            assignments,
            rounds,
        }
    }

    /// Scores `agent` over the providers `grid` finds near it (reading their actions from
    /// `compiled`, the world's actions compiled under this tuning, when given), puts the best of them into
    /// `scratch.ranked` (by descending utility: the first `selection_top_k`, the first
    /// `reconciliation_top_k` and any candidate held back as just completed, and the pick) and
    /// picks with `rng`: the pick [`Decider::decide`] makes from the same stream, since every
    /// provider the grid leaves out fails a gate.
    pub(crate) fn pick_near<C: Scored>(
        &self,
        agent: &Agent,
        world: &World,
        (grid, compiled): (&ProviderGrid, Option<&CompiledActions>),
        rng: &mut DetRng,
        scratch: &mut Scratch<C>,
    ) -> Option<Pick> {
        grid.near(&agent.position, &mut scratch.nearby);
        scratch.scored.clear();
        let placed = scratch
            .nearby
            .iter()
            .map(|&(index, distance)| (index as usize, distance));
        match compiled {
            Some(compiled) => {
                let providers = compiled.providers();
                let placed = placed
                    .filter_map(|(index, distance)| Some((index, providers.get(index)?, distance)));
                evaluate_compiled::<_, false>(
                    (&mut scratch.table, &mut scratch.compiled),
                    (agent, rng),
                    (world, compiled),
                    (&self.tuning, &self.consideration_weights),
                    placed,
                    (&mut scratch.scored, &mut ()),
                )
            }
            None => {
                let view = ScoringView::new(
                    &mut scratch.table,
                    agent,
                    (&world.contexts, world.now_hours),
                    &self.tuning,
                    &self.consideration_weights,
                    rng,
                );
                view.evaluate_providers(world, placed, &self.tuning, &mut scratch.scored, None)
            }
        }
        let scored = &scratch.scored;
        let held_back = if agent.just_completed.is_some() {
            scored.iter().filter(|c| c.compact().held_back).count()
        } else {
            0
        };
        let tuning = &self.tuning;
        // The softmax reads the first `selection_top_k`; the pick and its fallbacks are among
        // the first `reconciliation_top_k` once those held back are passed over.
        let count = (tuning.selection_top_k.max(1))
            .max(tuning.reconciliation_top_k.max(1).saturating_add(held_back));
        scratch.ranked.clear();
        best(scored, count, &mut scratch.ranked);
        let pick = selection::pick(&scratch.ranked, scored, tuning, rng)?;
        if pick.index >= scratch.ranked.len() {
            scratch.ranked.clear();
            scratch.ranked.extend_from_slice(scored);
            sort_scored_in_any_order(&mut scratch.ranked);
        }
        Some(pick)
    }

    /// Each agent's retained preferences (the pick first, then fallbacks) against `grid`, a
    /// grid of the providers with a free slot (and the world's actions compiled, if given, as
    /// [`Self::pick_near`] reads them), in a batch seeded with `seed`.
    pub(crate) fn preferences<A: Borrow<Agent>>(
        &self,
        agents: &[A],
        world: &World,
        near: (&ProviderGrid, Option<&CompiledActions>),
        seed: u64,
    ) -> PreferenceLists {
        let keep = self.tuning.reconciliation_top_k.max(1);
        let mut lists = PreferenceLists::with_capacity(agents.len(), keep);
        let mut scratch = Scratch::<Compact>::default();
        for agent in agents {
            let agent = agent.borrow();
            let mut rng = DetRng::new(batch_agent_seed(seed, &agent.id));
            let picked = self.pick_near(agent, world, near, &mut rng, &mut scratch);
            let ranked = &scratch.ranked;
            if let Some(pick) = picked {
                let as_preference = |c: &Compact| Preference {
                    provider: c.provider,
                    action: c.action,
                    utility: c.utility,
                    distance: c.distance,
                };
                lists.push(as_preference(&ranked[pick.index]));
                // The action just completed is no fallback while another is worth something
                // (as in the softmax, see `selection::pick`).
                let scored = &scratch.scored;
                let alternative = scored.iter().any(|c| !c.held_back && c.utility > 0.0);
                ranked
                    .iter()
                    .enumerate()
                    .filter(|(index, c)| *index != pick.index && !(alternative && c.held_back))
                    .take(keep - 1)
                    .for_each(|(_, candidate)| lists.push(as_preference(candidate)));
            }
            lists.end_agent();
        }
        lists
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::consideration::Consideration;
    use crate::decision::tuning::TuningPatch;
    use crate::decision::world::{AdvertisedAction, Context, Position, Provider};
    use crate::vocabulary::Vocabulary;

    /// Random scenes (providers near and far, full and free, some with an unlimited radius)
    /// under perception noise and convention breaking: scoring only what a grid of every
    /// provider finds in reach picks exactly what a full `decide` picks from the same seed —
    /// which is what lets preemption score only the providers near the agent — whether their
    /// actions are read from the world or compiled.
    #[test]
    fn picking_among_providers_in_reach_is_deciding_over_all_of_them() {
        let mut names = Vocabulary::default();
        let needs = [names.intern("HUNGER"), names.intern("ENERGY")];
        let tags = [
            names.intern("food"),
            names.intern("rest"),
            names.intern("indoor"),
        ];
        let decider = Decider::new(
            TuningPatch {
                perception_noise: Some(0.2),
                convention_break_probability: Some(0.3),
                ..Default::default()
            }
            .resolve(),
        );
        let mut scratch: Scratch = Scratch::default();
        let mut picked = 0;
        for scene in 0..300u64 {
            let mut rng = DetRng::new(scene);
            let mut agent = Agent::new(
                "a",
                Position::new(rng.next_unit() * 60.0, rng.next_unit() * 60.0),
            );
            for &need in &needs {
                agent.considerations.push(Consideration::new(
                    need,
                    rng.next_unit() * 100.0,
                    0.0,
                    100.0,
                ));
            }
            agent.tag_modifiers = thin_vec::thin_vec![(tags[0], 0.5 + rng.next_unit())];
            let providers = (0..(rng.next_u64() % 40) as usize)
                .map(|p| {
                    let actions = (0..1 + (rng.next_u64() % 3) as usize)
                        .map(|a| {
                            let mut action = AdvertisedAction::new(format!("x{a}"));
                            action.deltas =
                                thin_vec::thin_vec![(needs[a % 2], 10.0 + rng.next_unit() * 40.0)];
                            action.tags = tags[a % 2..].to_vec().into();
                            action.radius = (rng.next_unit() > 0.1).then(|| rng.next_unit() * 25.0);
                            action
                        })
                        .collect();
                    let capacity = (rng.next_u64() % 3) as u32;
                    Provider {
                        id: format!("p{p}"),
                        position: Position::new(rng.next_unit() * 60.0, rng.next_unit() * 60.0),
                        capacity,
                        occupants: (rng.next_u64() % 2) as u32,
                        state: None,
                        actions,
                    }
                })
                .collect();
            let storm = Context {
                name: names.intern("storm"),
                tag_multipliers: vec![(tags[2], 0.5 + rng.next_unit())],
            };
            let world = World {
                now_hours: 8.0,
                providers,
                contexts: vec![storm],
                ..World::default()
            };
            let grid = ProviderGrid::of_all(&world);
            let seed = rng.next_u64();
            let whole = decider.decide(&agent, &world, seed).selected;
            let compiled = CompiledActions::new(&world, decider.tuning());
            for actions in [None, Some(&compiled)] {
                let near = decider
                    .pick_near(
                        &agent,
                        &world,
                        (&grid, actions),
                        &mut DetRng::new(seed),
                        &mut scratch,
                    )
                    .and_then(|pick| scratch.ranked.get(pick.index).copied());
                // Bit for bit (the debug form tells the signs of zeros apart).
                assert_eq!(format!("{near:?}"), format!("{whole:?}"), "scene {scene}");
            }
            picked += usize::from(whole.is_some());
        }
        assert!(
            picked > 100,
            "too few scenes had anything to pick: {picked}"
        );
    }
}
