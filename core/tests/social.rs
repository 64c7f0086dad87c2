//! The social fabric as behaviour: each interaction kind's rule, each gossip
//! rule with its reaction actually applied, reservations and cooldowns, interactions chosen by
//! the decision engine (and shaped by personality), player witnesses, and the chain from a
//! witnessed theft to a guard's protect goal and story signals.

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
            npc.wellbeing = Some((Arc::new(WellbeingConfig::default()), Wellbeing::default()));
            npc.goals = Some(Box::new(GoalBook::default()));
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
        if let Some(book) = &mut self.agents[index].goals {
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
        let by_place = Whereabouts::group(1, at);
        let whereabouts = Whereabouts {
            places: &self.places[..1],
            at,
            by_place: &by_place,
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

// ---- interaction kinds -------------------------------------------------------------------

#[test]
fn a_conversation_warms_both_and_fills_their_social_need() {
    let mut v = Village::new(&["ada", "bo"]);
    let out = v.resolve("ada", "bo", offer(InteractionKind::Conversation), SUCCEED);
    assert!(out.interactions[0].success);
    assert!(v.value("ada", "bo", Facet::Affinity) > NEUTRAL);
    assert!(v.value("bo", "ada", Facet::Trust) > NEUTRAL);
    assert!((v.need("ada", "SOCIAL") - 0.65).abs() < 1e-9);
    assert!((v.need("bo", "SOCIAL") - 0.65).abs() < 1e-9);
    let mut cold = Village::new(&["ada", "bo"]);
    cold.resolve("ada", "bo", offer(InteractionKind::Conversation), FAIL);
    assert!(
        cold.value("ada", "bo", Facet::Affinity) < NEUTRAL,
        "snubbed"
    );
    assert_eq!(cold.need("bo", "SOCIAL"), 0.5);
}

#[test]
fn a_trade_pays_both_when_trusted_and_sours_the_initiator_when_refused() {
    let mut v = Village::new(&["ada", "bo"]);
    let out = v.resolve("ada", "bo", offer(InteractionKind::Trade), SUCCEED);
    assert!(out.interactions[0].success);
    assert!((out.interactions[0].chance - (0.3 + 0.7 * 0.5)).abs() < 1e-12);
    assert!(v.need("ada", "ECONOMIC") > 0.5 && v.need("bo", "ECONOMIC") > 0.5);
    assert!(v.value("bo", "ada", Facet::Respect) > NEUTRAL);
    assert!(
        v.fabric
            .rumours("ada")
            .iter()
            .any(|r| r.kind == RumourTopic::Opportunity),
        "a trade makes the market's opportunity known"
    );
    let mut refused = Village::new(&["ada", "bo"]);
    refused.resolve("ada", "bo", offer(InteractionKind::Trade), FAIL);
    assert!(refused.value("ada", "bo", Facet::Trust) < NEUTRAL);
    assert_eq!(refused.need("ada", "ECONOMIC"), 0.5);
}

#[test]
fn an_argument_costs_trust_both_ways_and_leaves_a_grievance() {
    let mut v = Village::new(&["ada", "bo"]);
    v.resolve("ada", "bo", offer(InteractionKind::Argument), SUCCEED);
    assert!(v.value("ada", "bo", Facet::Trust) < NEUTRAL);
    assert!(v.value("bo", "ada", Facet::Trust) < NEUTRAL);
    assert!(v.value("bo", "ada", Facet::Respect) > NEUTRAL, "the winner");
    assert!(v.value("ada", "bo", Facet::Respect) < NEUTRAL);
    assert!(v.need("ada", "SOCIAL") < 0.5);
    let grievance = &v.fabric.rumours("bo")[0];
    assert_eq!(
        (grievance.subject.as_str(), grievance.kind),
        ("ada", RumourTopic::Person)
    );
}

#[test]
fn a_favor_binds_the_asker_when_granted_and_loosens_it_when_refused() {
    let mut v = Village::new(&["ada", "bo"]);
    v.regard("bo", "ada", Facet::Trust, 0.9);
    v.resolve("ada", "bo", offer(InteractionKind::Favor), SUCCEED);
    assert!(v.value("ada", "bo", Facet::Loyalty) > NEUTRAL);
    assert!(v.need("ada", "ECONOMIC") > 0.5 && v.need("bo", "PURPOSE") > 0.5);
    let mut refused = Village::new(&["ada", "bo"]);
    refused.resolve("ada", "bo", offer(InteractionKind::Favor), FAIL);
    assert!(refused.value("ada", "bo", Facet::Loyalty) < NEUTRAL);
}

#[test]
fn intimidation_frightens_a_target_that_respects_the_bully_and_makes_it_react() {
    let mut v = Village::new(&["vex", "bo"]);
    let fact = v.vocabulary.intern("bully_reported");
    let index = v.index("bo");
    if let Some(book) = &mut v.agents[index].goals {
        book.reactions = Arc::from([ReactionRule {
            on: "intimidation".into(),
            description: "report {source} to the watch".into(),
            predicate: GoalPredicate::HasFact(fact),
            deadline_hours: Some(12.0),
            priority_bonus: 2.0,
        }]);
    }
    let out = v.resolve("vex", "bo", offer(InteractionKind::Intimidation), SUCCEED);
    assert!(v.need("bo", "SURVIVAL") < 0.5, "afraid");
    assert!(v.need("vex", "ECONOMIC") > 0.5, "extorted");
    assert!(v.value("bo", "vex", Facet::Trust) < NEUTRAL);
    let created: Vec<(&str, &str)> = out
        .goals_created
        .iter()
        .map(|(npc, goal)| (npc.as_str(), goal.description.as_str()))
        .collect();
    assert_eq!(created, [("bo", "report vex to the watch")]);
    let mut stood_up = Village::new(&["vex", "bo"]);
    stood_up.resolve("vex", "bo", offer(InteractionKind::Intimidation), FAIL);
    assert!(stood_up.value("bo", "vex", Facet::Respect) < NEUTRAL);
    assert_eq!(stood_up.need("bo", "SURVIVAL"), 0.5);
}

#[test]
fn scheming_binds_the_plotters_turns_the_partner_on_the_victim_and_leaves_a_secret() {
    let mut v = Village::new(&["ada", "bo", "cy"]);
    v.regard("bo", "ada", Facet::Trust, 0.9);
    let scheme = Offer {
        victim: Some("cy".into()),
        ..offer(InteractionKind::Scheming)
    };
    let out = v.resolve("ada", "bo", scheme.clone(), SUCCEED);
    assert!(out.interactions[0].success);
    assert_eq!(out.interactions[0].against.as_deref(), Some("cy"));
    assert!(v.value("ada", "bo", Facet::Loyalty) > NEUTRAL);
    assert!(
        v.value("bo", "cy", Facet::Trust) < NEUTRAL,
        "turned on the victim"
    );
    assert!(
        v.fabric
            .rumours("bo")
            .iter()
            .any(|r| r.kind == RumourTopic::Secret && r.subject == "ada")
    );
    let mut refused = Village::new(&["ada", "bo", "cy"]);
    refused.resolve("ada", "bo", scheme, FAIL);
    assert!(refused.value("bo", "ada", Facet::Trust) < NEUTRAL);
    assert_eq!(refused.value("bo", "cy", Facet::Trust), NEUTRAL);
}

#[test]
fn mentoring_gives_the_pupil_purpose_and_respect_for_the_master() {
    let mut v = Village::new(&["ada", "bo"]);
    v.resolve("ada", "bo", offer(InteractionKind::Mentoring), SUCCEED);
    assert!(v.need("bo", "PURPOSE") > v.need("ada", "PURPOSE"));
    assert!(v.value("bo", "ada", Facet::Respect) > NEUTRAL);
    let mut refused = Village::new(&["ada", "bo"]);
    refused.resolve("ada", "bo", offer(InteractionKind::Mentoring), FAIL);
    assert_eq!(refused.need("bo", "PURPOSE"), 0.5);
}

#[test]
fn courtship_succeeds_by_the_others_affinity_and_a_refusal_is_one_sided() {
    let mut v = Village::new(&["ada", "bo"]);
    v.regard("bo", "ada", Facet::Affinity, 0.9);
    let out = v.resolve("ada", "bo", offer(InteractionKind::Courtship), 0.85);
    assert!(out.interactions[0].success, "chance is bo's affinity, 0.9");
    assert!(v.value("ada", "bo", Facet::Affinity) > NEUTRAL);
    let mut cold = Village::new(&["ada", "bo"]);
    cold.regard("bo", "ada", Facet::Affinity, 0.2);
    let out = cold.resolve("ada", "bo", offer(InteractionKind::Courtship), 0.5);
    assert!(!out.interactions[0].success);
    assert!(cold.value("ada", "bo", Facet::Affinity) > NEUTRAL, "pining");
    assert!(cold.value("bo", "ada", Facet::Affinity) < 0.2);
}

#[test]
fn a_gossip_interaction_succeeds_when_the_listener_believes_it() {
    let mut v = Village::new(&["ada", "bo", "tam"]);
    v.regard("bo", "ada", Facet::Trust, 0.9);
    let told = Offer {
        rumour: Some(rumour("tam", RumourTopic::Person, GossipIntent::Defame, 0)),
        ..offer(InteractionKind::Gossip)
    };
    let out = v.resolve("ada", "bo", told, FAIL);
    assert!(out.interactions[0].success, "belief, not the draw, decides");
    assert!(v.value("bo", "tam", Facet::Trust) < NEUTRAL);
    assert_eq!(v.fabric.rumours("bo")[0].depth, 1);
}

// ---- gossip rules ---------------------------------------------------------------------------

/// `listener` hears `gossip` from `teller` (trusted `trust`); returns (credibility, accepted).
fn hear(trust: f64, gossip: Gossip) -> (Village, bool) {
    let mut v = Village::new(&["ada", "bo", "tam"]);
    if trust != NEUTRAL {
        v.regard("bo", "ada", Facet::Trust, trust);
    }
    let told = Offer {
        rumour: Some(gossip),
        ..offer(InteractionKind::Gossip)
    };
    let out = v.resolve("ada", "bo", told, SUCCEED);
    let accepted = out.interactions[0].success;
    (v, accepted)
}

#[test]
fn credibility_is_confidence_times_trust_times_dampening_and_dismisses_below_the_line() {
    let config = geppetto_core::social::GossipConfig::default();
    let mut r = geppetto_core::social::Relationships::default();
    r.adjust("bo", "ada", Facet::Trust, 0.3, 0.0);
    // (trust in teller, confidence, depth) → credibility
    for (trust_known, confidence, depth, expected) in [
        (true, 1.0, 0, 0.8),
        (true, 1.0, 1, 0.8 * 0.7),
        (true, 0.5, 2, 0.5 * 0.8 * 0.49),
        (false, 1.0, 0, 0.5),
        (false, 0.8, 1, 0.8 * 0.5 * 0.7),
    ] {
        let mut g = rumour("tam", RumourTopic::Person, GossipIntent::Inform, depth);
        g.confidence = confidence;
        let listener = if trust_known { "bo" } else { "cy" };
        let got = config.credibility(&r, listener, "ada", &g);
        assert!((got - expected).abs() < 1e-12, "{got} ≠ {expected}");
    }
    let (_, believed) = hear(
        0.9,
        rumour("tam", RumourTopic::Person, GossipIntent::Inform, 1),
    );
    assert!(believed, "0.9 × 0.7 = 0.63");
    let (_, believed) = hear(
        0.9,
        rumour("tam", RumourTopic::Person, GossipIntent::Inform, 4),
    );
    assert!(!believed, "0.9 × 0.7⁴ = 0.216 is below 0.3");
}

#[test]
fn dampening_makes_each_retelling_weigh_less_until_dismissal() {
    let config = geppetto_core::social::GossipConfig::default();
    let r = geppetto_core::social::Relationships::default();
    let credibility: Vec<f64> = (0..5)
        .map(|depth| {
            config.credibility(
                &r,
                "bo",
                "ada",
                &rumour("tam", RumourTopic::Threat, GossipIntent::Warn, depth),
            )
        })
        .collect();
    assert!(
        credibility
            .windows(2)
            .all(|w| (w[1] / w[0] - 0.7).abs() < 1e-12)
    );
    let (_, believed) = hear(
        NEUTRAL,
        rumour("tam", RumourTopic::Threat, GossipIntent::Warn, 1),
    );
    assert!(
        believed,
        "a stranger's word one retelling deep: 0.5 × 0.7 = 0.35"
    );
    let (_, believed) = hear(
        NEUTRAL,
        rumour("tam", RumourTopic::Threat, GossipIntent::Warn, 2),
    );
    assert!(!believed, "two deep: 0.245");
}

#[test]
fn a_rumour_at_the_depth_cap_is_dropped_even_from_a_trusted_teller() {
    let (v, believed) = hear(
        1.0,
        rumour("tam", RumourTopic::Person, GossipIntent::Inform, 5),
    );
    assert!(!believed);
    assert!(v.fabric.rumours("bo").is_empty(), "not passed on");
    let (_, believed) = hear(
        1.0,
        rumour("tam", RumourTopic::Person, GossipIntent::Inform, 3),
    );
    assert!(believed, "depth 3 from full trust: 0.343");
}

#[test]
fn retelling_goes_one_level_deeper_and_never_resets() {
    let mut v = Village::new(&["ada", "bo", "cy", "tam"]);
    v.regard("bo", "ada", Facet::Trust, 1.0);
    v.regard("cy", "bo", Facet::Trust, 1.0);
    v.fabric.learn(
        "ada",
        rumour("tam", RumourTopic::Person, GossipIntent::Inform, 1),
    );
    let first = Offer {
        rumour: v.fabric.rumours("ada").first().cloned(),
        ..offer(InteractionKind::Gossip)
    };
    v.resolve("ada", "bo", first, SUCCEED);
    assert_eq!(v.fabric.rumours("bo")[0].depth, 2);
    v.fabric.reservations.release("bo");
    let second = Offer {
        rumour: v.fabric.rumours("bo").first().cloned(),
        ..offer(InteractionKind::Gossip)
    };
    v.resolve("bo", "cy", second, SUCCEED);
    assert_eq!(v.fabric.rumours("cy")[0].depth, 3);
}

#[test]
fn a_credible_threat_raises_survival_pressure_and_the_guards_protect_goal() {
    let (v, _) = hear(
        0.8,
        rumour("tam", RumourTopic::Threat, GossipIntent::Warn, 0),
    );
    assert!(
        (v.need("bo", "SURVIVAL") - (0.5 - 0.8 * 0.15)).abs() < 1e-9,
        "credibility 0.8 × 0.15"
    );
    let mut guarded = Village::new(&["ada", "gus", "tam"]);
    guarded.make_guard("gus");
    guarded.regard("gus", "ada", Facet::Trust, 0.8);
    let told = Offer {
        rumour: Some(rumour("tam", RumourTopic::Threat, GossipIntent::Warn, 0)),
        ..offer(InteractionKind::Gossip)
    };
    guarded.resolve("ada", "gus", told, SUCCEED);
    assert_eq!(guarded.goals("gus"), ["protect the village from tam"]);
    // Believed but not credible enough to frighten (0.5): no pressure.
    let (v, believed) = hear(
        NEUTRAL,
        rumour("tam", RumourTopic::Threat, GossipIntent::Warn, 0),
    );
    assert!(believed);
    assert_eq!(v.need("bo", "SURVIVAL"), 0.5);
}

#[test]
fn an_opportunity_becomes_an_acquire_goal_only_when_money_is_short() {
    let mut v = Village::new(&["ada", "bo", "tam"]);
    v.set_need("bo", "ECONOMIC", 0.3);
    v.regard("bo", "ada", Facet::Trust, 0.8);
    let told = Offer {
        rumour: Some(rumour(
            "market",
            RumourTopic::Opportunity,
            GossipIntent::Inform,
            0,
        )),
        ..offer(InteractionKind::Gossip)
    };
    v.resolve("ada", "bo", told.clone(), SUCCEED);
    assert_eq!(v.goals("bo"), ["seize the opportunity at market"]);
    let mut rich = Village::new(&["ada", "bo", "tam"]);
    rich.set_need("bo", "ECONOMIC", 0.8);
    rich.regard("bo", "ada", Facet::Trust, 0.8);
    rich.resolve("ada", "bo", told, SUCCEED);
    assert!(rich.goals("bo").is_empty());
}

#[test]
fn defamation_lowers_trust_in_the_subject_and_other_person_news_raises_it() {
    let (v, _) = hear(
        0.8,
        rumour("tam", RumourTopic::Person, GossipIntent::Defame, 0),
    );
    assert!((v.value("bo", "tam", Facet::Trust) - (0.5 - 0.1 * 0.8)).abs() < 1e-9);
    let (v, _) = hear(
        0.8,
        rumour("tam", RumourTopic::Person, GossipIntent::Inform, 0),
    );
    assert!((v.value("bo", "tam", Facet::Trust) - 0.55).abs() < 1e-9);
    let (v, _) = hear(
        0.8,
        rumour("tam", RumourTopic::Threat, GossipIntent::Warn, 0),
    );
    assert!((v.value("bo", "tam", Facet::Trust) - (0.5 - 0.2 * 0.8)).abs() < 1e-9);
    let (v, _) = hear(
        0.8,
        rumour("tam", RumourTopic::Secret, GossipIntent::Bond, 0),
    );
    assert!(
        v.value("bo", "ada", Facet::Trust) > 0.8,
        "bonding with the teller"
    );
}

#[test]
fn why_a_rumour_is_told_follows_the_tellers_relationships_and_influence() {
    let config = geppetto_core::social::GossipConfig::default();
    let thresholds = geppetto_core::social::RelationshipThresholds::default();
    let mut r = geppetto_core::social::Relationships::default();
    r.adjust("ada", "friend", Facet::Trust, 0.4, 0.0);
    r.adjust("ada", "tam", Facet::Trust, -0.3, 0.0);
    let intent = |listener: &str, g: &Gossip, influence: f64| {
        config.intent_for(&r, &thresholds, "ada", listener, g, influence)
    };
    let threat = rumour("wolves", RumourTopic::Threat, GossipIntent::Inform, 0);
    assert_eq!(intent("friend", &threat, 0.5), GossipIntent::Warn);
    assert_eq!(intent("stranger", &threat, 0.5), GossipIntent::Inform);
    let about_tam = rumour("tam", RumourTopic::Person, GossipIntent::Inform, 0);
    assert_eq!(intent("stranger", &about_tam, 0.5), GossipIntent::Defame);
    assert_eq!(
        intent("stranger", &about_tam, 0.9),
        GossipIntent::Manipulate
    );
    let about_me = rumour("ada", RumourTopic::Person, GossipIntent::Inform, 0);
    assert_eq!(intent("stranger", &about_me, 0.5), GossipIntent::Boast);
    let secret = rumour("bo", RumourTopic::Secret, GossipIntent::Inform, 0);
    assert_eq!(intent("friend", &secret, 0.5), GossipIntent::Bond);
}

#[test]
fn courtship_takes_two_and_any_kind_done_often_loses_its_pull() {
    let mut v = Village::new(&["ada", "bo"]);
    v.regard("ada", "bo", Facet::Affinity, 0.9);
    let kinds = |v: &mut Village| -> Vec<String> {
        let (_, offers) = v.fabric.advertise(&v.agents, 0, &[1], 1.0);
        offers[0]
            .iter()
            .map(|o| o.kind.as_str().to_owned())
            .collect()
    };
    v.regard("bo", "ada", Facet::Affinity, 0.2);
    assert!(
        !kinds(&mut v).contains(&"courtship".to_owned()),
        "bo does not care for ada"
    );
    v.regard("bo", "ada", Facet::Affinity, 0.8);
    assert!(
        kinds(&mut v).contains(&"courtship".to_owned()),
        "now both do"
    );
    let pull = |v: &mut Village, now: f64| {
        let (world, offers) = v.fabric.advertise(&v.agents, 0, &[1], now);
        let at = offers[0]
            .iter()
            .position(|o| o.kind == InteractionKind::Conversation)
            .expect("conversation");
        world.providers[0].actions[at].intrinsic_priority
    };
    // The helper resolves at game hour 10.
    let fresh = pull(&mut v, 10.0);
    for _ in 0..4 {
        v.resolve("ada", "bo", offer(InteractionKind::Conversation), SUCCEED);
        v.fabric.reservations = Default::default();
    }
    let used = pull(&mut v, 10.0);
    assert!(
        (used - fresh / (1.0 + 0.25 * 4.0)).abs() < 1e-9,
        "four talks halve the pull: {fresh} → {used}"
    );
    let rested = pull(&mut v, 10.0 + 24.0);
    assert!(
        rested > used && rested < fresh,
        "the familiarity fades: {rested}"
    );
}

// ---- choice through the engine, reservations, witnesses -----------------------------------

#[test]
fn partners_advertise_interactions_the_relationship_admits() {
    let mut v = Village::new(&["ada", "bo", "cy"]);
    v.regard("ada", "bo", Facet::Trust, 0.1);
    v.regard("ada", "cy", Facet::Affinity, 0.9);
    v.regard("cy", "ada", Facet::Affinity, 0.7);
    let (world, offers) = v.fabric.advertise(&v.agents, 0, &[1, 2], 1.0);
    let kinds = |p: usize| -> Vec<&str> { offers[p].iter().map(|o| o.kind.as_str()).collect() };
    assert_eq!(world.providers[0].id, "bo");
    assert!(kinds(0).contains(&"argument") && !kinds(0).contains(&"courtship"));
    assert!(kinds(1).contains(&"courtship") && !kinds(1).contains(&"argument"));
    assert!(kinds(1).contains(&"conversation") && kinds(1).contains(&"trade"));
    assert!(!kinds(1).contains(&"gossip"), "ada knows nothing to tell");
}

#[test]
fn personality_shapes_the_choice_among_advertised_interactions() {
    // Two traders: one whose archetype loves trade, one neutral; count their picks.
    let trades = |trade_trait: f64| {
        let mut v = Village::new(&["ada", "bo"]);
        let trade = v.vocabulary.intern("trade");
        v.agents[0].agent.tag_modifiers = vec![(trade, trade_trait)];
        (0..200)
            .filter(|seed| {
                let (world, offers) = v.fabric.advertise(&v.agents, 0, &[1], 1.0);
                let pick = v.decider.decide(&v.agents[0].agent, &world, *seed).selected;
                pick.is_some_and(|c| offers[c.provider][c.action].kind == InteractionKind::Trade)
            })
            .count()
    };
    let (keen, plain) = (trades(3.0), trades(1.0));
    assert!(keen > plain + 50, "keen trader {keen} vs plain {plain}");
}

#[test]
fn a_reserved_partner_is_not_chased_and_cooldowns_space_interactions() {
    let mut v = Village::new(&["ada", "bo", "cy"]);
    // ada and cy are far apart; bo stands between them: both would pick bo first.
    v.agents[0].agent.position = Position::new(-5.0, 0.0);
    v.agents[1].agent.position = Position::new(0.0, 0.0);
    v.agents[2].agent.position = Position::new(5.0, 0.0);
    for id in ["ada", "bo", "cy"] {
        v.fabric.set_profile(
            id,
            SocialProfile {
                social_initiative: 1.0,
                ..SocialProfile::default()
            },
        );
    }
    let out = v.step(1.0, 7);
    let with_bo = out
        .interactions
        .iter()
        .filter(|i| i.initiator == "bo" || i.target == "bo")
        .count();
    assert_eq!(with_bo, 1, "{:?}", out.interactions);
    assert!(
        out.interactions.len() <= 1,
        "nobody else is free: {:?}",
        out.interactions
    );
    let again = v.step(1.1, 8);
    assert!(again.interactions.is_empty(), "engaged, then cooling down");
    assert!(!v.fabric.reservations.is_available("bo", 1.1));
    assert!(
        v.fabric.reservations.is_available("bo", 2.5),
        "after the cooldown"
    );
    let later = v.step(2.5, 9);
    assert!(!later.interactions.is_empty());
}

#[test]
fn a_spread_step_ignores_expired_engagements_and_sweeps_them_once_a_step() {
    let mut v = Village::new(&["ada", "bo", "cy"]);
    v.fabric.config.step_every_ticks = 10;
    v.fabric.config.max_interactions_per_step = 0;
    assert!(v.fabric.reservations.reserve("ada", "bo", 0.0, 0.5));
    // Ticks 1–9 are slices past a step's first: the expired engagement stays in the map…
    for tick in 1..10 {
        v.slice(1.0, tick, 7);
    }
    assert_eq!(v.fabric.reservations.engaged_count(), 2);
    // …and blocks nobody meanwhile.
    assert!(v.fabric.reservations.is_available("bo", 1.0));
    assert!(v.fabric.reservations.reserve("cy", "bo", 1.0, 0.1));
    // The next step's first slice sweeps what has expired by then.
    v.slice(2.0, 10, 7);
    assert_eq!(v.fabric.reservations.engaged_count(), 0);
}

#[test]
fn an_npc_at_no_place_is_neither_observed_nor_met_nor_a_witness() {
    let ids = ["ada", "bo", "cy", "dee"];
    let mut v = Village::new(&ids);
    for id in ids {
        v.set_need(id, "SOCIAL", 0.05);
    }
    // Dee is at no place (a zone's Background NPC): nothing of the step is about her.
    let at = [0, 0, 0, usize::MAX];
    let mut met = Vec::new();
    for tick in 0..40 {
        let step = v.slice_at(&at, 1.0 + tick as f64 * 0.5, tick, 3);
        met.extend(
            step.interactions
                .iter()
                .flat_map(|i| [i.initiator.clone(), i.target.clone()]),
        );
        assert!(
            step.events.iter().all(|e| !e.npcs().contains(&"dee")),
            "tick {tick}: {:?}",
            step.events
        );
    }
    assert!(!met.is_empty(), "the others meet");
    assert!(!met.iter().any(|id| id == "dee"), "{met:?}");
}

#[test]
fn reservations_expire_and_refuse_a_second_suitor_meanwhile() {
    let mut r = geppetto_core::social::Reservations::default();
    assert!(r.reserve("ada", "bo", 1.0, 0.25));
    assert!(!r.reserve("cy", "bo", 1.1, 0.25), "bo is taken");
    assert!(r.reserve("ada", "bo", 1.1, 0.25), "the same pair extends");
    assert_eq!(r.partner("bo", 1.2), Some("ada"));
    assert!(r.reserve("cy", "bo", 1.4, 0.25), "expired at 1.35");
    r.sweep(2.0);
    assert_eq!(r.engaged_count(), 0);
    r.cool_down("ada", 3.0);
    assert!(!r.is_available("ada", 2.5) && r.is_available("ada", 3.0));
}

#[test]
fn only_interactions_a_player_sees_are_marked_witnessed() {
    let mut v = Village::new(&["ada", "bo"]);
    let out = v.resolve("ada", "bo", offer(InteractionKind::Conversation), SUCCEED);
    assert!(!out.interactions[0].witnessed);
    let mut seen = Village::new(&["ada", "bo"]);
    seen.places[0].players = vec!["player-1".into()];
    let out = seen.resolve("ada", "bo", offer(InteractionKind::Conversation), SUCCEED);
    assert!(out.interactions[0].witnessed);
}

#[test]
fn a_chatterbox_spreads_what_a_secretive_npc_keeps() {
    let told = |tendency: f64| {
        (0..40u64)
            .filter(|seed| {
                let mut v = Village::new(&["ada", "bo"]);
                v.fabric.set_profile(
                    "ada",
                    SocialProfile {
                        gossip_tendency: tendency,
                        social_initiative: 1.0,
                        ..SocialProfile::default()
                    },
                );
                v.fabric.learn(
                    "ada",
                    rumour("tam", RumourTopic::Person, GossipIntent::Inform, 0),
                );
                v.step(1.0, *seed)
                    .interactions
                    .iter()
                    .any(|i| i.kind == InteractionKind::Gossip)
            })
            .count()
    };
    let (chatterbox, secretive) = (told(1.0), told(0.0));
    assert!(chatterbox > secretive + 10, "{chatterbox} vs {secretive}");
}

// ---- the chain ------------------------------------------------------------------------------

/// A theft witnessed by one villager, then twelve hours of social steps (the detector runs
/// every half hour); returns the village, every interaction and the signals raised.
fn theft_chain(seed: u64) -> (Village, SocialStep, Vec<SignalType>) {
    let villagers = ["ada", "bo", "cy", "di", "ed", "gus"];
    let mut ids = villagers.to_vec();
    ids.push("vex");
    let mut v = Village::new(&ids);
    for a in villagers {
        v.fabric.set_profile(
            a,
            SocialProfile {
                gossip_tendency: 0.9,
                social_initiative: 0.9,
                ..SocialProfile::default()
            },
        );
        for b in villagers {
            if a != b {
                v.regard(a, b, Facet::Trust, 0.9);
            }
        }
    }
    v.make_guard("gus");
    let mut detector = StoryDetector::new(DetectorConfig::default());
    let mut all = SocialStep::default();
    let witness = v.index("ada");
    let place = v.places[witness].clone();
    let at = &mut StepAt::new(&place, 8.0, &mut all);
    v.fabric.witness(&mut v.agents, witness, "vex", "theft", at);
    let mut signals = Vec::new();
    for step in 0..72u64 {
        let now = 8.0 + step as f64 / 6.0;
        let out = v.step(now, derive_seed(seed, step));
        for event in all.events.drain(..).chain(out.events) {
            detector.push(event);
        }
        all.interactions.extend(out.interactions);
        all.goals_created.extend(out.goals_created);
        if step % 3 == 2 {
            signals.extend(detector.detect(now).into_iter().map(|s| s.signal_type));
        }
    }
    (v, all, signals)
}

#[test]
fn a_witnessed_theft_spreads_turns_the_village_against_the_thief_and_rouses_the_guard() {
    let (v, all, signals) = theft_chain(2024);
    let distrustful = ["ada", "bo", "cy", "di", "ed", "gus"]
        .iter()
        .filter(|id| v.value(id, "vex", Facet::Trust) < NEUTRAL)
        .count();
    assert!(distrustful >= 3, "only {distrustful} distrust the thief");
    assert!(
        all.interactions
            .iter()
            .any(|i| i.kind == InteractionKind::Gossip && i.initiator != "ada"),
        "the rumour is retold beyond its witness"
    );
    assert!(
        v.goals("gus")
            .contains(&"protect the village from vex".to_owned()),
        "{:?}",
        v.goals("gus")
    );
    assert!(signals.contains(&SignalType::ThreatDetected), "{signals:?}");
    assert!(
        signals.contains(&SignalType::RivalryEscalation),
        "{signals:?}"
    );
    let (_, again, signals_again) = theft_chain(2024);
    assert_eq!(
        format!("{:?}", all.interactions),
        format!("{:?}", again.interactions)
    );
    assert_eq!(signals, signals_again, "deterministic for a seed");
}

proptest::proptest! {
    /// Whatever the seed and the NPCs' initiative, a step never puts one NPC in two
    /// interactions, never exceeds its bound, and leaves every rumour book within its cap.
    #[test]
    fn a_step_never_double_books_an_npc(seed in 0u64..10_000, initiative in 0.0f64..1.0) {
        let ids = ["a", "b", "c", "d", "e", "f", "g"];
        let mut v = Village::new(&ids);
        for (i, id) in ids.iter().enumerate() {
            v.fabric.set_profile(
                id,
                SocialProfile {
                    social_initiative: initiative,
                    gossip_tendency: 1.0,
                    ..SocialProfile::default()
                },
            );
            v.fabric.learn(
                id,
                rumour(ids[(i + 1) % ids.len()], RumourTopic::Person, GossipIntent::Inform, 0),
            );
        }
        for step in 0..6u64 {
            let out = v.step(1.0 + step as f64 / 6.0, derive_seed(seed, step));
            let mut seen = std::collections::BTreeSet::new();
            for i in &out.interactions {
                proptest::prop_assert!(seen.insert(i.initiator.clone()), "{:?}", out.interactions);
                proptest::prop_assert!(seen.insert(i.target.clone()), "{:?}", out.interactions);
            }
            proptest::prop_assert!(out.interactions.len() <= v.fabric.config.max_interactions_per_step);
        }
        for id in ids {
            proptest::prop_assert!(
                v.fabric.rumours(id).len() <= v.fabric.config.gossip.max_rumours_held
            );
        }
    }
}
