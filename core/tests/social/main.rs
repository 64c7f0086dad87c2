//! The social fabric as behaviour: each interaction kind's rule, each gossip
//! rule with its reaction actually applied, reservations and cooldowns, interactions chosen by
//! the decision engine (and shaped by personality), player witnesses, and the chain from a
//! witnessed theft to a guard's protect goal and story signals.

mod chain;
mod choice;
mod gossip;
mod interactions;

use std::sync::Arc;

use geppetto_core::life::goals::{GoalBook, GoalPredicate, ReactionRule};
use geppetto_core::life::wellbeing::{Wellbeing, WellbeingConfig};
use geppetto_core::rng::derive_seed;
use geppetto_core::social::{
    FabricConfig, Facet, Gossip, GossipIntent, InteractionKind, NEUTRAL, Offer, RumourTopic,
    SocialFabric, SocialPlace, SocialProfile, SocialStep, StepAt, Whereabouts,
};
use geppetto_core::story::{DetectorConfig, SignalType, StoryDetector};
use geppetto_core::{Agent, Consideration, Decider, Position, SimulatedAgent, Vocabulary};

const NEEDS: [&str; 5] = ["SOCIAL", "ECONOMIC", "SURVIVAL", "PURPOSE", "AMBITION"];

/// NPCs standing in one place, a fabric over them and the engine that chooses for them.
struct Village {
    vocabulary: Vocabulary,
    fabric: SocialFabric,
    agents: Vec<SimulatedAgent>,
    places: Vec<SocialPlace>,
    decider: Decider,
}

impl Village {
    /// `ids` in the square, one unit apart, every need at 0.5.
    fn new(ids: &[&str]) -> Self {
        let mut vocabulary = Vocabulary::new();
        let fabric = SocialFabric::new(FabricConfig::default(), &mut vocabulary);
        let mut village = Self {
            vocabulary,
            fabric,
            agents: Vec::new(),
            places: Vec::new(),
            decider: Decider::default(),
        };
        for (i, id) in ids.iter().enumerate() {
            let mut agent = Agent::new(*id, Position::new(i as f64, 0.0));
            for need in NEEDS {
                let name = village.vocabulary.intern(need);
                agent
                    .considerations
                    .push(Consideration::new(name, 0.5, 0.0, 1.0));
            }
            let mut npc = SimulatedAgent::new(agent);
            npc.layers.make_mut().wellbeing = Some(Box::new((
                Arc::new(WellbeingConfig::default()),
                Wellbeing::default(),
            )));
            npc.layers.make_mut().goals = Some(Box::new(GoalBook::default()));
            village.agents.push(npc);
            village.places.push(SocialPlace {
                location: "square".into(),
                players: Vec::new(),
            });
        }
        village
    }

    fn index(&self, id: &str) -> usize {
        self.agents
            .iter()
            .position(|a| a.agent.id == id)
            .expect("known npc")
    }

    fn need(&self, id: &str, need: &str) -> f64 {
        let symbol = self.vocabulary.lookup(need).expect("need");
        self.agents[self.index(id)]
            .agent
            .consideration(symbol)
            .expect("has need")
            .value
    }

    fn set_need(&mut self, id: &str, need: &str, value: f64) {
        let symbol = self.vocabulary.intern(need);
        let index = self.index(id);
        if let Some(c) = self.agents[index]
            .agent
            .considerations
            .iter_mut()
            .find(|c| c.name == symbol)
        {
            c.value = value;
        }
    }

    fn regard(&mut self, from: &str, to: &str, facet: Facet, value: f64) {
        let now = self.fabric.relationships.value(from, to, facet);
        self.fabric
            .relationships
            .adjust(from, to, facet, value - now, 0.0);
    }

    fn value(&self, from: &str, to: &str, facet: Facet) -> f64 {
        self.fabric.relationships.value(from, to, facet)
    }

    /// The guard's archetype rule: a credible threat makes it protect the village.
    fn make_guard(&mut self, id: &str) {
        let fact = self.vocabulary.intern("village_safe");
        let index = self.index(id);
        if let Some(book) = self.agents[index]
            .layers
            .get_mut()
            .and_then(|layers| layers.goals.as_mut())
        {
            book.reactions = Arc::from([ReactionRule {
                on: "threat".into(),
                description: "protect the village from {source}".into(),
                predicate: GoalPredicate::HasFact(fact),
                deadline_hours: None,
                priority_bonus: 2.0,
            }]);
        }
    }

    fn goals(&self, id: &str) -> Vec<String> {
        self.agents[self.index(id)]
            .layers
            .goals
            .as_ref()
            .map(|b| b.goals.iter().map(|g| g.description.clone()).collect())
            .unwrap_or_default()
    }

    /// Resolves `kind` from `initiator` to `target` with the uniform draw `draw`.
    fn resolve(&mut self, initiator: &str, target: &str, offer: Offer, draw: f64) -> SocialStep {
        let (i, t) = (self.index(initiator), self.index(target));
        let mut out = SocialStep::default();
        let place = self.places[i].clone();
        let offer = Offer {
            partner: t,
            ..offer
        };
        let at = &mut StepAt::new(&place, 10.0, &mut out);
        self.fabric.resolve(&mut self.agents, i, &offer, draw, at);
        out
    }

    fn step(&mut self, now_hours: f64, seed: u64) -> SocialStep {
        self.fabric.step(
            &mut self.agents,
            &self.places,
            now_hours,
            seed,
            &self.decider,
        )
    }
}

impl Village {
    /// Zone tick `tick`'s slice of a step spread over `step_every_ticks` ticks.
    fn slice(&mut self, now_hours: f64, tick: u64, seed: u64) -> SocialStep {
        let at: Vec<usize> = vec![0; self.agents.len()];
        self.slice_at(&at, now_hours, tick, seed)
    }

    /// The same with each NPC at `at` (`usize::MAX`: at no place).
    fn slice_at(&mut self, at: &[usize], now_hours: f64, tick: u64, seed: u64) -> SocialStep {
        self.slice_started(at, None, now_hours, (tick, seed))
    }

    /// The same, told which NPCs started an action since the last step (`None`: not told).
    fn slice_started(
        &mut self,
        at: &[usize],
        started: Option<&[usize]>,
        now_hours: f64,
        (tick, seed): (u64, u64),
    ) -> SocialStep {
        let by_place = Whereabouts::group(1, at);
        let present = Whereabouts::present_in(1, at);
        let whereabouts = Whereabouts {
            places: &self.places[..1],
            at,
            by_place: &by_place,
            present: &present,
            started,
        };
        self.fabric.step_slice(
            &mut self.agents,
            whereabouts,
            now_hours,
            tick,
            seed,
            &self.decider,
        )
    }
}

fn offer(kind: InteractionKind) -> Offer {
    Offer {
        partner: 0,
        kind,
        rumour: None,
        victim: None,
    }
}

const SUCCEED: f64 = 0.0;
const FAIL: f64 = 0.999_999;

fn rumour(subject: &str, kind: RumourTopic, intent: GossipIntent, depth: u32) -> Gossip {
    Gossip {
        subject: subject.into(),
        kind,
        intent,
        about_person: kind != RumourTopic::Opportunity,
        confidence: 1.0,
        origin_event: format!("{}:{subject}", kind.as_str()),
        depth,
        holder: "ada".into(),
    }
}
