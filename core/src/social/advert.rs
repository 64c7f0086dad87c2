//! How partners advertise interactions to an initiator: one provider per
//! nearby NPC, one advertised action per interaction kind the relationship admits, scored by the
//! decision engine like any other action. An engaged partner advertises with no free slot, so
//! the engine's slot gate refuses it and two NPCs never chase the same partner.
//!
//! What is advertised when, and with which pull, is [`super::interaction::AdvertConfig`]; the
//! promised need deltas are the success effects the initiator would feel.

use super::fabric::SocialFabric;
use super::fabric::needs::{ROLES, Role, level, role_delta};
use super::gossip::Gossip;
use super::interaction::InteractionKind;
use super::relationships::{Facet, NEUTRAL, Relationship};
use crate::decision::world::{AdvertisedAction, Provider, World};
use crate::life::simulator::SimulatedAgent;

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

impl SocialFabric {
    /// Up to `max_partners_considered` others in the same place, nearest first (ties by index).
    pub(super) fn nearest_partners(
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
    /// slot when it is engaged; indices out of range and the initiator itself are skipped), one
    /// action per kind the relationship admits. `offers[p][a]`
    /// says what provider `p`'s action `a` is.
    pub fn advertise(
        &mut self,
        agents: &[SimulatedAgent],
        initiator: usize,
        partners: &[usize],
        now_hours: f64,
    ) -> (World, Vec<Vec<Offer>>) {
        let Some(me) = agents.get(initiator).map(|a| &a.agent) else {
            return (World::default(), Vec::new());
        };
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
        let never_met = Relationship::default();
        let mut offers = Vec::with_capacity(partners.len());
        for &partner in partners {
            let Some(them) = agents
                .get(partner)
                .map(|a| &a.agent)
                .filter(|them| them.id != me.id)
            else {
                continue;
            };
            // One look-up per partner; never having met reads as neutral.
            let regard = rel.find(&me.id, &them.id).unwrap_or(&never_met);
            let trust = regard.trust;
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
                        let knows = self.members.get(them.id.as_str());
                        let told = self.members.get(me.id.as_str()).and_then(|m| {
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
                                * (adverts.gossip_influence_base + profile.influence)
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
                        let respect = regard.respect;
                        let loyal = self.config.thresholds.is_ally(regard);
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
                        let affinity = regard.affinity;
                        // Wooing takes two: its pull grows with how much the other likes the
                        // suitor back (nothing at or below `court_returned_floor`, whole at the
                        // line) — a one-sided suitor still tries now and then, and is refused.
                        let returned = rel.value(&them.id, &me.id, Facet::Affinity);
                        let floor = adverts.court_returned_floor;
                        let welcome = ((returned - floor)
                            / (adverts.court_affinity_above - floor).max(f64::EPSILON))
                        .clamp(0.0, 1.0);
                        (affinity > adverts.court_affinity_above && welcome > 0.0).then(|| {
                            // A courtship ends in a bond: as loyalty between the two rises
                            // from neutral to whole, wooing gives way to their other kinds.
                            let bond =
                                regard
                                    .loyalty
                                    .min(rel.value(&them.id, &me.id, Facet::Loyalty));
                            let unbound = ((1.0 - bond) / (1.0 - NEUTRAL)).clamp(0.0, 1.0);
                            adverts.court_drive
                                * welcome
                                * unbound
                                * (affinity - adverts.court_affinity_above)
                                / (1.0 - adverts.court_affinity_above).max(f64::EPSILON)
                        })
                    }
                };
                let Some(priority) = priority else {
                    continue;
                };
                let novelty = 1.0
                    / (1.0
                        + adverts.habituation_weight
                            * self.members.get(me.id.as_str()).map_or(0.0, |m| {
                                m.familiarity(kind, now_hours, adverts.habituation_half_life_hours)
                            }));
                let priority = priority * novelty;
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
                        action
                            .deltas
                            .push((need, novelty * delta * (c.max() - c.min())));
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
}
