//! Carrying out a chosen interaction: reserve both sides, resolve the kind's
//! rule with a seeded draw (or, for gossip, the listener's reception), apply the effects to
//! regard, needs, mood and goals, leave the rumours it gives rise to, cool both down, and
//! record it — `witnessed` exactly when a player is present.

use super::advert::Offer;
use super::fabric::needs::{Role, level};
use super::fabric::{InteractionRecord, SocialFabric, StepAt};
use super::gossip::{Gossip, GossipIntent, GossipReaction, Reception, RumourTopic};
use super::interaction::{Effects, FacetDeltas, InteractionKind};
use super::relationships::Facet;
use crate::life::goals::{Goal, GoalCategory, GoalPredicate};
use crate::life::simulator::SimulatedAgent;
use crate::social::chronicle::StoryEventKind;

impl SocialFabric {
    /// Resolves `offer` made to `initiator` with the uniform draw `draw` at `at`'s place and
    /// hour, applies its effects and records it in `at`'s step.
    pub fn resolve(
        &mut self,
        agents: &mut [SimulatedAgent],
        initiator: usize,
        offer: &Offer,
        draw: f64,
        at: &mut StepAt<'_>,
    ) {
        let now_hours = at.now_hours;
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
            success = self.tell(agents, initiator, target, rumour, at);
            let rule = self.config.interactions.rule(kind);
            effects = if success {
                rule.on_success
            } else {
                rule.on_rejection
            };
        }
        self.apply_effects(agents, initiator, target, &effects, cause, at);
        self.consequences(agents, initiator, target, offer, success, at);
        let half_life = self.config.interactions.adverts.habituation_half_life_hours;
        for npc in [&me, &them] {
            self.reservations
                .cool_down(npc, now_hours + self.config.cooldown_hours);
            self.with_member(npc, |member| member.habituate(kind, now_hours, half_life));
        }
        let created = agents[target]
            .layers
            .get_mut()
            .and_then(|layers| layers.goals.as_mut())
            .map(|book| book.react(cause, &me, now_hours))
            .unwrap_or_default();
        at.goals_created(&them, created);
        let mood = |a: &SimulatedAgent| a.layers.wellbeing.as_deref().map_or(0.0, |(_, w)| w.mood);
        let faction = |npc: &str| {
            self.members
                .get(npc)
                .and_then(|m| m.profile.faction.clone())
        };
        let witnessed = !at.place.players.is_empty();
        at.push_event(StoryEventKind::Interaction {
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
        });
        at.out.interactions.push(InteractionRecord {
            initiator: me,
            target: them,
            kind,
            success,
            chance,
            location: at.place.location.clone(),
            witnessed,
            at_hours: now_hours,
            against: offer.victim.clone(),
            told: offer.rumour.clone(),
        });
    }

    fn apply_effects(
        &mut self,
        agents: &mut [SimulatedAgent],
        initiator: usize,
        target: usize,
        effects: &Effects,
        cause: &str,
        at: &mut StepAt<'_>,
    ) {
        let now_hours = at.now_hours;
        let me = agents[initiator].agent.id.clone();
        let them = agents[target].agent.id.clone();
        self.change_regard(&me, &them, &effects.initiator_regard, cause, at);
        self.change_regard(&them, &me, &effects.target_regard, cause, at);
        self.apply_needs(&mut agents[initiator].agent, &effects.initiator_needs);
        self.apply_needs(&mut agents[target].agent, &effects.target_needs);
        Self::remember_mood(&mut agents[initiator], effects.initiator_mood, now_hours);
        Self::remember_mood(&mut agents[target], effects.target_mood, now_hours);
    }

    /// The rumours and third-party effects an interaction leaves behind.
    fn consequences(
        &mut self,
        agents: &mut [SimulatedAgent],
        initiator: usize,
        target: usize,
        offer: &Offer,
        success: bool,
        at: &mut StepAt<'_>,
    ) {
        let (place, now_hours) = (at.place, at.now_hours);
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
                        RumourTopic::Opportunity,
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
                    RumourTopic::Person,
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
                        RumourTopic::Secret,
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
                        self.change_regard(&them, victim, &turned, "scheming", at);
                    }
                }
            }
            _ => {}
        }
    }

    /// `teller` (index) tells `rumour` to `listener` (index); returns whether it was believed.
    fn tell(
        &mut self,
        agents: &mut [SimulatedAgent],
        teller: usize,
        listener: usize,
        rumour: &Gossip,
        at: &mut StepAt<'_>,
    ) -> bool {
        let now_hours = at.now_hours;
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
        at.push_event(StoryEventKind::RumourHeard {
            listener: listener_id.clone(),
            teller: teller_id,
            subject: rumour.subject.clone(),
            gossip: rumour.kind,
            intent: rumour.intent,
            depth: rumour.depth,
            credibility,
            accepted,
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
                    self.feel_threat(agents, listener, &rumour.subject, pressure, at);
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
                        due_within_hours: None,
                        priority_bonus: self.config.acquire_bonus,
                        id: None,
                    };
                    let note = goal.note();
                    let added = simulated
                        .layers
                        .make_mut()
                        .goals
                        .get_or_insert_with(Default::default)
                        .add(goal)
                        .is_ok();
                    if added {
                        at.goals_created(&listener_id, vec![note]);
                    }
                }
                GossipReaction::TrustChanged { toward, delta } => {
                    self.record_change(&listener_id, &toward, Facet::Trust, delta, "gossip", at);
                }
            }
        }
        self.learn(&listener_id, copy);
        true
    }
}
