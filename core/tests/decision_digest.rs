//! The decision engine's outputs are pinned bit for bit: random scenes that use every gate,
//! every factor of the utility and every draw (noise, softmax, convention breaking) are ranked,
//! decided and batch-decided, and a digest of every field of every answer (utilities and
//! breakdowns as bits, ineligible reasons, picks, preferences, assignments, rounds) must equal
//! the recorded one. Decisions over the world compiled (`Decider::compile`) must be those over
//! the world, bit for bit, for each agent and for it made plain (what the compiled records
//! score), over the world and over it with every action made one a record stands for alone. Rewriting how the engine computes must not change what it computes; a
//! deliberate change of the formula or the draws updates the digest and says why.

use geppetto_core::decision::agent::SchedulePull;
use geppetto_core::rng::{DetRng, derive_seed};
use geppetto_core::{
    ActionEffects, AdvertisedAction, Agent, Commitment, CompareOp, Consideration, Context, Decider,
    Decision, Position, Precondition, Provider, ResponseCurve, Symbol, TuningPatch, Updater,
    Vocabulary, World,
};
use thin_vec::ThinVec;

/// The digest of every answer of [`SCENES`] scenes, as the engine computes them.
const RECORDED_DIGEST: u64 = 0x692c_a76d_d0f7_d145;
const SCENES: u64 = 400;

/// Names of one kind, interned in order.
struct Names {
    needs: Vec<Symbol>,
    tags: Vec<Symbol>,
    domains: Vec<Symbol>,
    resources: Vec<Symbol>,
    facts: Vec<Symbol>,
    states: Vec<Symbol>,
}

impl Names {
    fn new(vocabulary: &mut Vocabulary) -> Self {
        let mut kind = |prefix: &str, count: usize| -> Vec<Symbol> {
            (0..count)
                .map(|i| vocabulary.intern(&format!("{prefix}{i}")))
                .collect()
        };
        Self {
            needs: kind("NEED", 8),
            tags: kind("tag", 10),
            domains: kind("domain", 3),
            resources: kind("res", 3),
            facts: kind("fact", 3),
            states: kind("state", 2),
        }
    }
}

fn pick<T: Copy>(rng: &mut DetRng, items: &[T]) -> T {
    items[rng.next_index(items.len())]
}

fn some_of<T: Copy>(rng: &mut DetRng, items: &[T], most: usize) -> Vec<T> {
    (0..rng.next_index(most + 1))
        .map(|_| pick(rng, items))
        .collect()
}

fn chance(rng: &mut DetRng, probability: f64) -> bool {
    rng.next_unit() < probability
}

fn curve(rng: &mut DetRng) -> ResponseCurve {
    match rng.next_index(5) {
        0 => ResponseCurve::Convex { exponent: 0.0 },
        1 => ResponseCurve::Convex {
            exponent: 0.5 + rng.next_unit() * 3.0,
        },
        2 => ResponseCurve::Linear,
        3 => ResponseCurve::Step {
            threshold: rng.next_unit() * 100.0,
            below: rng.next_unit(),
            above: rng.next_unit(),
        },
        _ => ResponseCurve::Logistic {
            steepness: rng.next_unit() * 0.4 - 0.2,
            midpoint: rng.next_unit() * 100.0,
        },
    }
}

fn agent(rng: &mut DetRng, names: &Names, index: usize, provider_count: usize) -> Agent {
    let mut agent = Agent::new(
        format!("agent{index}"),
        Position::new(rng.next_unit() * 80.0, rng.next_unit() * 80.0),
    );
    for _ in 0..1 + rng.next_index(6) {
        let (min, max) = if chance(rng, 0.05) {
            (10.0, 10.0)
        } else {
            (0.0, 100.0)
        };
        let mut c = Consideration::new(pick(rng, &names.needs), rng.next_unit() * 100.0, min, max);
        c.weight = 0.5 + rng.next_unit();
        c.behaviour_mut().curve = curve(rng);
        if chance(rng, 0.3) {
            c.behaviour_mut().updater = Updater::PerceptionDriven;
        }
        c.behaviour_mut().critical_threshold = chance(rng, 0.3).then(|| rng.next_unit() * 40.0);
        agent.considerations.push(c);
    }
    let factor = |rng: &mut DetRng| 0.5 + rng.next_unit() * 1.5;
    agent.tag_modifiers = some_of(rng, &names.tags, 3)
        .into_iter()
        .map(|tag| (tag, factor(rng)))
        .collect();
    agent.domain_preferences = some_of(rng, &names.domains, 2)
        .into_iter()
        .map(|domain| (domain, factor(rng)))
        .collect();
    agent.resources = some_of(rng, &names.resources, 3)
        .into_iter()
        .map(|resource| (resource, rng.next_unit() * 10.0))
        .collect();
    agent.capabilities = some_of(rng, &names.facts, 1).into();
    agent.facts = some_of(rng, &names.facts, 2).into();
    if chance(rng, 0.3) {
        agent.commitments.push(Commitment {
            forbid_tags: some_of(rng, &names.tags, 2),
            expires_at: chance(rng, 0.5).then(|| rng.next_unit() * 16.0),
        });
    }
    if chance(rng, 0.5) && provider_count > 0 {
        agent.schedule = Some(Box::new(SchedulePull {
            tags: some_of(rng, &names.tags, 3),
            place: chance(rng, 0.5).then(|| format!("provider{}", rng.next_index(provider_count))),
            tag_bonus: rng.next_unit() * 0.2,
            place_bonus: rng.next_unit() * 0.2,
            binding: false,
            reserved: Vec::new(),
            reserved_from_hours: 0.0,
        }));
    }
    if chance(rng, 0.4) && provider_count > 0 {
        agent.just_completed = Some(Box::new((
            format!("provider{}", rng.next_index(provider_count)).into(),
            format!("action{}", rng.next_index(3)).into(),
        )));
    }
    agent.goal_bonuses = some_of(rng, &[names.facts[0], names.resources[0]], 2)
        .into_iter()
        .map(|symbol| (symbol, rng.next_unit()))
        .collect();
    agent
}

/// `agent` without goals, schedule, domain preferences, commitments or an action just
/// completed: an agent whose candidates the compiled world's records can score.
fn plain(agent: &Agent) -> Agent {
    let mut plain = agent.clone();
    plain.goal_bonuses.clear();
    plain.schedule = None;
    plain.domain_preferences.clear();
    plain.commitments.clear();
    plain.just_completed = None;
    plain
}

/// `world` with every action stripped of what a compiled record cannot stand for (an action
/// slot limit, preconditions, costs, more than two deltas or three tags).
fn simple(world: &World) -> World {
    let mut simple = world.clone();
    for action in simple.providers.iter_mut().flat_map(|p| &mut p.actions) {
        action.capacity = 0;
        action.preconditions.clear();
        action.costs.clear();
        action.deltas.truncate(2);
        action.tags.truncate(3);
    }
    simple
}

fn precondition(rng: &mut DetRng, names: &Names) -> Precondition {
    match rng.next_index(5) {
        0 => Precondition::Consideration {
            name: pick(rng, &names.needs),
            op: pick(
                rng,
                &[
                    CompareOp::Lt,
                    CompareOp::Le,
                    CompareOp::Gt,
                    CompareOp::Ge,
                    CompareOp::Eq,
                    CompareOp::Ne,
                ],
            ),
            value: rng.next_unit() * 100.0,
        },
        1 => Precondition::Capability(pick(rng, &names.facts)),
        2 => Precondition::Resource {
            name: pick(rng, &names.resources),
            min: rng.next_unit() * 5.0,
        },
        3 => Precondition::ProviderState(pick(rng, &names.states)),
        _ => Precondition::Fact(pick(rng, &names.facts)),
    }
}

fn action(rng: &mut DetRng, names: &Names, index: usize) -> AdvertisedAction {
    let mut action = AdvertisedAction::new(format!("action{index}"));
    action.tags = some_of(rng, &names.tags, 4).into();
    action.domain = chance(rng, 0.5).then(|| pick(rng, &names.domains));
    action.deltas = some_of(rng, &names.needs, 3)
        .into_iter()
        .map(|need| (need, rng.next_unit() * 60.0 - 15.0))
        .collect();
    action.intrinsic_priority = if chance(rng, 0.5) {
        0.0
    } else {
        rng.next_unit()
    };
    action.radius = chance(rng, 0.7).then(|| 5.0 + rng.next_unit() * 60.0);
    if chance(rng, 0.2) {
        action.capacity = 1 + rng.next_index(2) as u32;
        action.occupancy = rng.next_index(3) as u32;
    }
    if chance(rng, 0.2) {
        action.preconditions = (0..1 + rng.next_index(2))
            .map(|_| precondition(rng, names))
            .collect();
    }
    if chance(rng, 0.2) {
        action.costs = some_of(rng, &names.resources, 2)
            .into_iter()
            .map(|resource| (resource, rng.next_unit() * 6.0 - 1.0))
            .collect();
    }
    action.effects = ActionEffects {
        adds: some_of(rng, &names.facts, 1).into(),
        removes: ThinVec::new(),
        yields: some_of(rng, &names.resources, 1)
            .into_iter()
            .map(|resource| (resource, 1.0))
            .collect(),
    };
    action
}

fn world(rng: &mut DetRng, names: &Names, provider_count: usize) -> World {
    let contexts = (0..rng.next_index(3))
        .map(|c| Context {
            name: names.states[c % names.states.len()],
            tag_multipliers: some_of(rng, &names.tags, 3)
                .into_iter()
                .map(|tag| (tag, 0.5 + rng.next_unit() * 1.5))
                .collect(),
        })
        .collect();
    let providers = (0..provider_count)
        .map(|p| Provider {
            id: format!("provider{p}"),
            position: Position::new(rng.next_unit() * 80.0, rng.next_unit() * 80.0),
            capacity: rng.next_index(4) as u32,
            occupants: rng.next_index(2) as u32,
            state: chance(rng, 0.5).then(|| pick(rng, &names.states)),
            actions: (0..1 + rng.next_index(3))
                .map(|a| action(rng, names, a))
                .collect(),
        })
        .collect();
    World {
        now_hours: 8.0,
        contexts,
        providers,
        ..World::default()
    }
}

fn decider(rng: &mut DetRng, names: &Names) -> Decider {
    let decider = Decider::new(
        TuningPatch {
            selection_top_k: Some(1 + rng.next_index(5)),
            temperature: Some(0.05 + rng.next_unit()),
            reconciliation_top_k: Some(1 + rng.next_index(4)),
            perception_noise: chance(rng, 0.5).then(|| rng.next_unit() * 10.0),
            convention_break_probability: chance(rng, 0.5).then(|| rng.next_unit() * 0.5),
            repeat_factor: Some(0.05 + rng.next_unit() * 0.5),
            distance_reference: Some(5.0 + rng.next_unit() * 30.0),
            priority_weight: Some(rng.next_unit() * 2.0),
            ..Default::default()
        }
        .resolve(),
    );
    if chance(rng, 0.3) {
        decider.with_consideration_weights(vec![(pick(rng, &names.needs), 0.5 + rng.next_unit())])
    } else {
        decider
    }
}

/// Folds values into a digest.
#[derive(Default)]
struct Digest(u64);

impl Digest {
    fn add(&mut self, value: u64) {
        self.0 = derive_seed(self.0, value);
    }

    fn float(&mut self, value: f64) {
        self.add(value.to_bits());
    }

    fn candidate(&mut self, candidate: &geppetto_core::Candidate) {
        self.add(candidate.provider as u64);
        self.add(candidate.action as u64);
        self.float(candidate.utility);
        self.float(candidate.distance);
        let b = &candidate.breakdown;
        for value in [
            b.benefit,
            b.priority,
            b.personality,
            b.context,
            b.schedule,
            b.repeat,
            b.distance,
            b.cost,
        ] {
            self.float(value);
        }
    }

    fn ranking(&mut self, ranking: &geppetto_core::Ranking) {
        self.add(ranking.ranked().len() as u64);
        ranking.ranked().iter().for_each(|c| self.candidate(c));
        self.add(ranking.ineligible.len() as u64);
        for removed in &ranking.ineligible {
            self.add(removed.provider as u64);
            self.add(removed.action as u64);
            self.add(removed.reason as u64);
        }
    }

    /// Adds a decision: its ranking, whether it broke convention and its pick.
    fn decision(&mut self, decision: &Decision) -> bool {
        self.ranking(&decision.ranking);
        self.add(u64::from(decision.convention_broken));
        match &decision.selected {
            Some(candidate) => self.candidate(candidate),
            None => self.add(u64::MAX),
        }
        decision.selected.is_some()
    }

    /// The digest of a decision alone.
    fn of_decision(decision: &Decision) -> u64 {
        let mut digest = Self::default();
        digest.decision(decision);
        digest.0
    }

    fn preference(&mut self, preference: &geppetto_core::Preference) {
        self.add(preference.provider as u64);
        self.add(preference.action as u64);
        self.float(preference.utility);
        self.float(preference.distance);
    }
}

#[test]
fn decisions_are_the_recorded_ones_bit_for_bit() {
    let mut digest = Digest::default();
    let (mut decided, mut plain_decided, mut plain_removed) = (0, 0, 0);
    let mut reused = Decision::default();
    for scene in 0..SCENES {
        let mut rng = DetRng::new(derive_seed(0x5eed, scene));
        let mut vocabulary = Vocabulary::new();
        let names = Names::new(&mut vocabulary);
        let decider = decider(&mut rng, &names);
        let provider_count = rng.next_index(60);
        let world = world(&mut rng, &names, provider_count);
        let mut agents: Vec<Agent> = (0..1 + rng.next_index(30))
            .map(|a| agent(&mut rng, &names, a, provider_count))
            .collect();
        // Some agents stand where another stands: contention breaks their ties by id.
        for a in 1..agents.len() {
            if chance(&mut rng, 0.2) {
                agents[a].position = agents[rng.next_index(a)].position;
            }
        }
        let compiled = decider.compile(&world);
        let simple = simple(&world);
        let simple_compiled = decider.compile(&simple);
        for (a, agent) in agents.iter().enumerate().take(4) {
            let seed = derive_seed(scene, a as u64);
            digest.ranking(&decider.rank(agent, &world, seed));
            let decision = decider.decide(agent, &world, seed);
            decided += usize::from(digest.decision(&decision));
            // Over the compiled world, bit for bit, for this agent and for it without what
            // keeps an agent from the compiled records' loop.
            // Into a decision reused from agent to agent and scene to scene (its ranking read,
            // so ordered, each time).
            compiled.decide_into(agent, seed, &mut reused);
            assert_eq!(
                Digest::of_decision(&reused),
                Digest::of_decision(&decision),
                "scene {scene}, agent {a}: the compiled world decided otherwise"
            );
            let plain = plain(agent);
            let plain_decision = decider.decide(&plain, &world, seed);
            assert_eq!(
                Digest::of_decision(&compiled.decide(&plain, seed)),
                Digest::of_decision(&plain_decision),
                "scene {scene}, agent {a} made plain: the compiled world decided otherwise"
            );
            plain_decided += usize::from(plain_decision.selected.is_some());
            plain_removed += plain_decision.ranking.ineligible.len();
            // And over a world of actions the records stand for alone.
            assert_eq!(
                Digest::of_decision(&simple_compiled.decide(&plain, seed)),
                Digest::of_decision(&decider.decide(&plain, &simple, seed)),
                "scene {scene}, agent {a} made plain, actions made simple: the compiled world \
                 decided otherwise"
            );
        }
        let batch = decider.decide_batch(&agents, &world, scene, 1);
        assert_eq!(
            decider.decide_batch(&agents, &world, scene, 3),
            batch,
            "scene {scene}: the batch depends on its worker count"
        );
        for a in 0..batch.preferences.len() {
            let list = batch.preferences.of(a);
            digest.add(list.len() as u64);
            list.iter().for_each(|p| digest.preference(p));
        }
        for assignment in &batch.assignments {
            match assignment {
                Some(preference) => digest.preference(preference),
                None => digest.add(u64::MAX),
            }
        }
        digest.add(batch.rounds as u64);
    }
    assert!(decided > 500, "too few scenes decided anything: {decided}");
    assert!(
        plain_decided > 500 && plain_removed > 500,
        "too few plain agents decided ({plain_decided}) or had candidates removed \
         ({plain_removed})"
    );
    assert_eq!(
        digest.0, RECORDED_DIGEST,
        "the decisions changed: digest {:#018x}",
        digest.0
    );
}
