//! Goal-oriented action planning: a bounded A* search over
//! symbolic facts that turns a goal needing several steps ("have a sword": buy ore at the
//! market, chop wood, smelt at the forge, forge at the anvil) into a sequence of advertised
//! actions for the agent's FIFO queue.
//!
//! A search state is the agent's facts, its resources and the provider it stands at. An
//! advertised action applies when its fact, resource and capability preconditions hold (other
//! preconditions — consideration levels, provider state — describe the moment of choice, not
//! the plan, and are left to the decider when the step runs); it adds and removes facts, costs
//! and yields resources, and moves the agent to its provider. A step costs its duration plus
//! the travel time to its provider.
//!
//! The search is bounded by an expansion budget and a depth limit: when either runs out the
//! answer is "no plan" with the reason, never a stall. Ties are broken by insertion order, so
//! the same input always gives the same plan.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashSet};

use crate::decision::agent::Agent;
use crate::decision::world::{Position, Precondition, World};
use crate::life::action::QueuedAction;
use crate::vocabulary::Symbol;

/// What a plan must achieve.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlanGoal {
    /// Facts that must hold at the end.
    pub facts: Vec<Symbol>,
    /// Resources the agent must hold at least this much of at the end.
    pub resources: Vec<(Symbol, f64)>,
}

/// The planner's bounds and costs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlannerConfig {
    /// Search states expanded at most; default 2,000.
    pub max_expansions: usize,
    /// Steps in a plan at most; default 8.
    pub max_depth: usize,
    /// World units an agent covers per game hour, for travel costs; default 50.
    pub travel_speed: f64,
}

impl Default for PlannerConfig {
    fn default() -> Self {
        Self {
            max_expansions: 2000,
            max_depth: 8,
            travel_speed: 50.0,
        }
    }
}

/// One step of a plan.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanStep {
    /// Index of the provider in the world.
    pub provider: usize,
    /// Index of the action in its provider.
    pub action: usize,
}

geppetto_wire_enum::wire_enum! {
    /// Why no plan was found.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum NoPlan {
        /// The expansion budget ran out first.
        BudgetExhausted = "budget_exhausted",
        /// Every sequence within the depth limit was tried; none reaches the goal.
        Unreachable = "unreachable",
    }
}

/// A found plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The steps, in order (empty when the goal already holds).
    pub steps: Vec<PlanStep>,
    /// Game hours it takes (durations plus travel).
    pub cost_hours: f64,
    /// States expanded to find it.
    pub expansions: usize,
}

impl Plan {
    /// The steps as queue entries (ids), ready for [`crate::SimulatedAgent::queue`].
    pub fn queue_entries(&self, world: &World, player_queued: bool) -> Vec<QueuedAction> {
        self.steps
            .iter()
            .filter_map(|step| {
                let provider = world.providers.get(step.provider)?;
                let action = provider.actions.get(step.action)?;
                Some(QueuedAction {
                    provider: provider.id.clone(),
                    action: action.id.clone(),
                    player_queued,
                    from_plan: true,
                    order: None,
                })
            })
            .collect()
    }
}

/// Resources in a search state: fixed-point so states hash and compare exactly.
type Stock = Vec<(Symbol, i64)>;

/// Resolution of resource amounts in the search (thousandths).
const STOCK_SCALE: f64 = 1000.0;

fn to_stock(amount: f64) -> i64 {
    (amount * STOCK_SCALE).round() as i64
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct State {
    facts: Vec<Symbol>,
    stock: Stock,
    at: Option<usize>,
}

impl State {
    fn held(&self, resource: Symbol) -> i64 {
        self.stock
            .iter()
            .find(|(name, _)| *name == resource)
            .map_or(0, |(_, amount)| *amount)
    }

    fn adjust(&mut self, resource: Symbol, delta: i64) {
        match self.stock.iter_mut().find(|(name, _)| *name == resource) {
            Some((_, amount)) => *amount += delta,
            None => {
                self.stock.push((resource, delta));
                self.stock.sort();
            }
        }
    }

    fn satisfies(&self, goal: &PlanGoal) -> bool {
        goal.facts.iter().all(|fact| self.facts.contains(fact))
            && goal
                .resources
                .iter()
                .all(|(resource, min)| self.held(*resource) >= to_stock(*min))
    }

    fn missing(&self, goal: &PlanGoal) -> usize {
        goal.facts
            .iter()
            .filter(|fact| !self.facts.contains(fact))
            .count()
            + goal
                .resources
                .iter()
                .filter(|(resource, min)| self.held(*resource) < to_stock(*min))
                .count()
    }
}

/// A frontier entry: lowest estimated total first, then lowest cost so far, then first
/// inserted.
struct Open {
    estimate: f64,
    cost: f64,
    order: usize,
    node: usize,
}

impl PartialEq for Open {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Open {}

impl PartialOrd for Open {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Open {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse every key.
        other
            .estimate
            .total_cmp(&self.estimate)
            .then(other.cost.total_cmp(&self.cost))
            .then(other.order.cmp(&self.order))
    }
}

struct Node {
    state: State,
    parent: Option<usize>,
    step: Option<PlanStep>,
    depth: usize,
}

/// Plans for `agent` in `world` toward `goal`.
pub fn plan(
    agent: &Agent,
    world: &World,
    goal: &PlanGoal,
    config: &PlannerConfig,
) -> Result<Plan, NoPlan> {
    let mut facts = agent.facts.to_vec();
    facts.sort();
    facts.dedup();
    let mut stock: Stock = agent
        .resources
        .iter()
        .map(|(name, amount)| (*name, to_stock(*amount)))
        .collect();
    stock.sort();
    let start = State {
        facts,
        stock,
        at: None,
    };
    // The cheapest step bounds the remaining cost per missing goal term from below.
    let cheapest_step = world
        .providers
        .iter()
        .flat_map(|p| p.actions.iter().map(|a| a.duration_hours))
        .fold(f64::INFINITY, f64::min);
    let per_missing = if cheapest_step.is_finite() {
        cheapest_step.max(0.0)
    } else {
        0.0
    };
    let mut nodes = vec![Node {
        state: start,
        parent: None,
        step: None,
        depth: 0,
    }];
    let mut frontier = BinaryHeap::new();
    frontier.push(Open {
        estimate: 0.0,
        cost: 0.0,
        order: 0,
        node: 0,
    });
    let mut closed: HashSet<State> = HashSet::new();
    let mut expansions = 0;
    let mut order = 1;
    while let Some(Open { cost, node, .. }) = frontier.pop() {
        let state = nodes[node].state.clone();
        if state.satisfies(goal) {
            let mut steps = Vec::new();
            let mut cursor = Some(node);
            while let Some(index) = cursor {
                if let Some(step) = nodes[index].step.clone() {
                    steps.push(step);
                }
                cursor = nodes[index].parent;
            }
            steps.reverse();
            return Ok(Plan {
                steps,
                cost_hours: cost,
                expansions,
            });
        }
        if !closed.insert(state.clone()) {
            continue;
        }
        if expansions >= config.max_expansions {
            return Err(NoPlan::BudgetExhausted);
        }
        expansions += 1;
        let depth = nodes[node].depth;
        if depth >= config.max_depth {
            continue;
        }
        let here: Option<Position> = state
            .at
            .and_then(|p| world.providers.get(p))
            .map(|p| p.position);
        let origin = here.unwrap_or(agent.position);
        for (p, provider) in world.providers.iter().enumerate() {
            let travel =
                origin.distance_to(&provider.position) / config.travel_speed.max(f64::MIN_POSITIVE);
            for (a, action) in provider.actions.iter().enumerate() {
                let applicable = action.preconditions.iter().all(|pre| match pre {
                    Precondition::Fact(fact) => state.facts.contains(fact),
                    Precondition::Resource { name, min } => state.held(*name) >= to_stock(*min),
                    Precondition::Capability(capability) => agent.capabilities.contains(capability),
                    Precondition::Consideration { .. } | Precondition::ProviderState(_) => true,
                }) && action
                    .costs
                    .iter()
                    .all(|(resource, amount)| state.held(*resource) >= to_stock(*amount));
                if !applicable {
                    continue;
                }
                let mut next = state.clone();
                next.facts
                    .retain(|fact| !action.effects.removes.contains(fact));
                next.facts.extend(action.effects.adds.iter().copied());
                next.facts.sort();
                next.facts.dedup();
                for (resource, amount) in &action.costs {
                    next.adjust(*resource, -to_stock(*amount));
                }
                for (resource, amount) in &action.effects.yields {
                    next.adjust(*resource, to_stock(*amount));
                }
                next.at = Some(p);
                if next == state || closed.contains(&next) {
                    continue;
                }
                let step_cost = action.duration_hours.max(0.0) + travel;
                let estimate = cost + step_cost + per_missing * next.missing(goal) as f64;
                nodes.push(Node {
                    state: next,
                    parent: Some(node),
                    step: Some(PlanStep {
                        provider: p,
                        action: a,
                    }),
                    depth: depth + 1,
                });
                frontier.push(Open {
                    estimate,
                    cost: cost + step_cost,
                    order,
                    node: nodes.len() - 1,
                });
                order += 1;
            }
        }
    }
    Err(NoPlan::Unreachable)
}
