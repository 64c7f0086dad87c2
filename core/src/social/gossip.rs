//! Gossip as a behaviour driver: rumours an NPC holds, why it tells them, and
//! what hearing one does to the listener.
//!
//! - Reception: `credibility = confidence × trust(listener → teller) × dampening^depth` (trust
//!   0.5 for a teller never met, dampening 0.7). A rumour at the depth cap (5) is dropped
//!   unheard; one below the dismissal line (0.3) is dismissed; an accepted rumour becomes the
//!   listener's copy one retelling deeper (`depth + 1`, never reset), which it may pass on.
//! - Reactions of an accepted rumour: a threat more credible than 0.6 raises the listener's
//!   survival pressure by `credibility × 0.3`; an opportunity heard while the listener's
//!   economic need is below 0.5 becomes an acquire goal; a rumour about a person moves the
//!   listener's trust in that person (a threat by −0.2 × credibility, a defamation by
//!   −0.1 × credibility, other news by +0.05); a boast or a bond raises trust in the teller.
//! - Telling: [`GossipConfig::intent_for`] picks why a holder tells a rumour to a listener from
//!   their relationship and the holder's social influence; [`RumourBook`] is what an NPC holds
//!   (bounded) and which rumour it would tell a listener next.
//!
//! Reactions are returned as values; the fabric applies them to needs and goals. Trust changes
//! are applied here, to the relationships passed in.

use super::relationships::{Facet, RelationshipThresholds, Relationships};
use thin_vec::ThinVec;

geppetto_wire_enum::wire_enum! {
    /// What a rumour is about.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum RumourTopic {
        /// Danger (bandits on the road, a thief at the market).
        Threat = "threat",
        /// A chance (cheap ore at the market).
        Opportunity = "opportunity",
        /// Someone (the miller cheats).
        Person = "person",
        /// Something hidden (a plot).
        Secret = "secret",
    }
}

geppetto_wire_enum::wire_enum! {
    /// Why a rumour is told.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum GossipIntent {
        /// To protect the listener.
        Warn = "warn",
        /// To harm the subject.
        Defame = "defame",
        /// To look good.
        Boast = "boast",
        /// To grow closer.
        Bond = "bond",
        /// To steer the listener.
        Manipulate = "manipulate",
        /// Just news.
        Inform = "inform",
        /// To get help.
        SeekHelp = "seek_help",
    }
}

/// A rumour as one NPC holds it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Gossip {
    /// Whom or what it is about.
    pub subject: String,
    /// What kind of news.
    pub kind: RumourTopic,
    /// Why it was last told.
    pub intent: GossipIntent,
    /// Whether its subject is a person (an NPC or player), whose trust it moves.
    pub about_person: bool,
    /// How sure the first teller was (0–1).
    pub confidence: f64,
    /// The event it started from (one rumour per origin, however often retold).
    pub origin_event: String,
    /// Retellings since the origin (0 for a witness).
    pub depth: u32,
    /// Who holds this copy.
    pub holder: String,
}

/// The numbers of gossip, each a named default.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GossipConfig {
    /// Credibility lost per retelling: ×dampening^depth; default 0.7.
    pub dampening: f64,
    /// Below this credibility a rumour is dismissed; default 0.3.
    pub dismiss_below: f64,
    /// A rumour at this depth is no longer passed on or believed; default 5.
    pub max_depth: u32,
    /// Trust in a teller never met; default 0.5.
    pub unknown_trust: f64,
    /// A threat raises survival pressure only above this credibility; default 0.6.
    pub threat_credible_above: f64,
    /// Survival pressure per unit of a credible threat's credibility; default 0.15.
    pub threat_pressure_per_credibility: f64,
    /// An opportunity becomes an acquire goal while the listener's economic need (satisfaction,
    /// 0–1) is below this; default 0.5.
    pub opportunity_economic_below: f64,
    /// Trust in the subject lost per unit of credibility of a threat about a person; default 0.2.
    pub threat_trust_loss: f64,
    /// Trust in the subject lost per unit of credibility of a defamation; default 0.1.
    pub defamation_trust_loss: f64,
    /// Trust in the subject gained by other news about a person; default 0.05.
    pub person_trust_gain: f64,
    /// Trust in the teller gained by a boast or bond; default 0.05.
    pub bonding_trust_gain: f64,
    /// A holder defames (rather than informs about) a person it trusts less than this; default 0.4.
    pub defame_trust_below: f64,
    /// A holder at least this influential manipulates rather than defames; default 0.7.
    pub manipulate_influence_above: f64,
    /// Rumours one NPC holds at most (the least credible goes first); default 8.
    pub max_rumours_held: usize,
}

impl Default for GossipConfig {
    fn default() -> Self {
        Self {
            dampening: 0.7,
            dismiss_below: 0.3,
            max_depth: 5,
            unknown_trust: 0.5,
            threat_credible_above: 0.6,
            threat_pressure_per_credibility: 0.15,
            opportunity_economic_below: 0.5,
            threat_trust_loss: 0.2,
            defamation_trust_loss: 0.1,
            person_trust_gain: 0.05,
            bonding_trust_gain: 0.05,
            defame_trust_below: 0.4,
            manipulate_influence_above: 0.7,
            max_rumours_held: 8,
        }
    }
}

/// What an accepted rumour makes the listener do.
#[derive(Clone, Debug, PartialEq)]
pub enum GossipReaction {
    /// Raise survival pressure by this much (0–1 of the need's range): a credible threat.
    RaiseSurvivalPressure(f64),
    /// Take on a goal to acquire what the opportunity offers.
    AcquireGoal {
        /// What it is about.
        subject: String,
    },
    /// Trust in someone changed by this much (applied already).
    TrustChanged {
        /// In whom.
        toward: String,
        /// By how much.
        delta: f64,
    },
}

/// The outcome of hearing a rumour.
#[derive(Clone, Debug, PartialEq)]
pub enum Reception {
    /// At or beyond the depth cap: not believed, not passed on.
    Dropped,
    /// Not credible enough.
    Dismissed {
        /// Its credibility to this listener.
        credibility: f64,
    },
    /// Believed.
    Accepted {
        /// Its credibility to this listener.
        credibility: f64,
        /// The listener's copy, one retelling deeper.
        copy: Gossip,
        /// What it makes the listener do.
        reactions: Vec<GossipReaction>,
    },
}

impl GossipConfig {
    /// The credibility of `gossip` told by `teller` to `listener`.
    pub fn credibility(
        &self,
        relationships: &Relationships,
        listener: &str,
        teller: &str,
        gossip: &Gossip,
    ) -> f64 {
        let trust = relationships
            .trust(listener, teller)
            .unwrap_or(self.unknown_trust);
        gossip.confidence.clamp(0.0, 1.0) * trust * self.dampening.powi(gossip.depth as i32)
    }

    /// `listener` hears `gossip` from `teller` at `now_hours`; `economic_level` is the
    /// listener's economic need (satisfaction, 0–1), for opportunities. Trust changes are
    /// applied to `relationships`; the other reactions are returned for the caller to apply.
    pub fn receive(
        &self,
        relationships: &mut Relationships,
        listener: &str,
        teller: &str,
        gossip: &Gossip,
        economic_level: f64,
        now_hours: f64,
    ) -> Reception {
        if gossip.depth >= self.max_depth {
            return Reception::Dropped;
        }
        let credibility = self.credibility(relationships, listener, teller, gossip);
        if credibility < self.dismiss_below {
            return Reception::Dismissed { credibility };
        }
        let mut reactions = Vec::new();
        match gossip.kind {
            RumourTopic::Threat if credibility > self.threat_credible_above => {
                reactions.push(GossipReaction::RaiseSurvivalPressure(
                    credibility * self.threat_pressure_per_credibility,
                ));
            }
            RumourTopic::Opportunity if economic_level < self.opportunity_economic_below => {
                reactions.push(GossipReaction::AcquireGoal {
                    subject: gossip.subject.clone(),
                });
            }
            _ => {}
        }
        if gossip.about_person && gossip.subject != listener {
            let change = if gossip.kind == RumourTopic::Threat {
                -self.threat_trust_loss * credibility
            } else if gossip.intent == GossipIntent::Defame {
                -self.defamation_trust_loss * credibility
            } else {
                self.person_trust_gain
            };
            let delta =
                relationships.adjust(listener, &gossip.subject, Facet::Trust, change, now_hours);
            reactions.push(GossipReaction::TrustChanged {
                toward: gossip.subject.clone(),
                delta,
            });
        }
        if matches!(gossip.intent, GossipIntent::Boast | GossipIntent::Bond) {
            let delta = relationships.adjust(
                listener,
                teller,
                Facet::Trust,
                self.bonding_trust_gain,
                now_hours,
            );
            reactions.push(GossipReaction::TrustChanged {
                toward: teller.to_owned(),
                delta,
            });
        }
        let copy = Gossip {
            depth: gossip.depth + 1,
            holder: listener.to_owned(),
            ..gossip.clone()
        };
        Reception::Accepted {
            credibility,
            copy,
            reactions,
        }
    }

    /// Why `teller` would tell `rumour` to `listener`: about itself it boasts (or seeks help
    /// against a threat); a threat warns a friend or ally and informs anyone else; a person the
    /// teller distrusts is defamed (manipulated, by an influential teller); a secret or an
    /// opportunity bonds with a friend; anything else informs.
    pub fn intent_for(
        &self,
        relationships: &Relationships,
        thresholds: &RelationshipThresholds,
        teller: &str,
        listener: &str,
        rumour: &Gossip,
        teller_influence: f64,
    ) -> GossipIntent {
        let toward_listener = relationships.get(teller, listener);
        let close = thresholds.is_friend(&toward_listener) || thresholds.is_ally(&toward_listener);
        if rumour.subject == teller {
            return if rumour.kind == RumourTopic::Threat {
                GossipIntent::SeekHelp
            } else {
                GossipIntent::Boast
            };
        }
        match rumour.kind {
            RumourTopic::Threat if close => GossipIntent::Warn,
            RumourTopic::Threat => GossipIntent::Inform,
            _ if rumour.about_person
                && relationships.value(teller, &rumour.subject, Facet::Trust)
                    < self.defame_trust_below =>
            {
                if teller_influence >= self.manipulate_influence_above {
                    GossipIntent::Manipulate
                } else {
                    GossipIntent::Defame
                }
            }
            RumourTopic::Secret | RumourTopic::Opportunity if close => GossipIntent::Bond,
            _ => GossipIntent::Inform,
        }
    }

    /// How much a rumour is worth telling: `confidence × dampening^depth`.
    pub fn weight(&self, rumour: &Gossip) -> f64 {
        rumour.confidence * self.dampening.powi(rumour.depth as i32)
    }
}

/// The rumours one NPC holds, at most `GossipConfig::max_rumours_held`, one per origin.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RumourBook {
    /// Held rumours, oldest first.
    pub rumours: ThinVec<Gossip>,
}

impl RumourBook {
    /// Whether it holds a rumour from `origin_event`.
    pub fn knows(&self, origin_event: &str) -> bool {
        self.rumours.iter().any(|r| r.origin_event == origin_event)
    }

    /// Keeps `rumour` (a shallower copy of a known origin replaces the deeper one); when full,
    /// the least worth telling — the newcomer included — is forgotten (the oldest among
    /// equals). Returns whether it was kept as new.
    pub fn learn(&mut self, rumour: Gossip, config: &GossipConfig) -> bool {
        if let Some(known) = self
            .rumours
            .iter_mut()
            .find(|r| r.origin_event == rumour.origin_event)
        {
            if rumour.depth < known.depth {
                *known = rumour;
            }
            return false;
        }
        if self.rumours.len() >= config.max_rumours_held.max(1) {
            let weakest = self
                .rumours
                .iter()
                .enumerate()
                .min_by(|(_, a), (_, b)| config.weight(a).total_cmp(&config.weight(b)))
                .map(|(i, r)| (i, config.weight(r)));
            match weakest {
                Some((_, weight)) if config.weight(&rumour) < weight => return false,
                Some((i, _)) => {
                    self.rumours.remove(i);
                }
                None => {}
            }
        }
        self.rumours.push(rumour);
        true
    }

    /// The rumour most worth telling `listener` — not about the listener itself, not one it
    /// already holds (`listener_knows` an origin), not at the depth cap — the newest among
    /// equals.
    pub fn to_tell(
        &self,
        config: &GossipConfig,
        listener: &str,
        listener_knows: impl Fn(&str) -> bool,
    ) -> Option<&Gossip> {
        self.rumours
            .iter()
            .rev()
            .filter(|r| {
                r.depth < config.max_depth
                    && r.subject != listener
                    && !listener_knows(&r.origin_event)
            })
            .max_by(|a, b| config.weight(a).total_cmp(&config.weight(b)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rumour(kind: RumourTopic, intent: GossipIntent, depth: u32) -> Gossip {
        Gossip {
            subject: "tam".into(),
            kind,
            intent,
            about_person: true,
            confidence: 1.0,
            origin_event: "theft-17".into(),
            depth,
            holder: "ada".into(),
        }
    }

    #[test]
    fn credibility_is_confidence_times_trust_times_dampening_per_depth() {
        let config = GossipConfig::default();
        let mut r = Relationships::default();
        r.adjust("bo", "ada", Facet::Trust, 0.4, 0.0); // bo trusts ada 0.9
        let heard = config.receive(
            &mut r,
            "bo",
            "ada",
            &rumour(RumourTopic::Person, GossipIntent::Inform, 1),
            1.0,
            0.0,
        );
        let Reception::Accepted {
            credibility, copy, ..
        } = heard
        else {
            panic!("accepted: {heard:?}")
        };
        assert!((credibility - 0.9 * 0.7).abs() < 1e-12);
        assert_eq!((copy.depth, copy.holder.as_str()), (2, "bo"));
        let heard = config.receive(
            &mut r,
            "cy",
            "ada",
            &rumour(RumourTopic::Person, GossipIntent::Inform, 2),
            1.0,
            0.0,
        );
        let dismissed = matches!(heard, Reception::Dismissed { credibility } if (credibility - 0.5 * 0.49).abs() < 1e-12);
        assert!(dismissed, "{heard:?}");
        let heard = config.receive(
            &mut r,
            "bo",
            "ada",
            &rumour(RumourTopic::Person, GossipIntent::Inform, 5),
            1.0,
            0.0,
        );
        assert_eq!(heard, Reception::Dropped);
    }

    #[test]
    fn the_rumour_book_keeps_one_copy_per_origin_and_tells_the_weightiest_unknown_one() {
        let config = GossipConfig {
            max_rumours_held: 2,
            ..GossipConfig::default()
        };
        let mut book = RumourBook::default();
        let mut deep = rumour(RumourTopic::Person, GossipIntent::Inform, 3);
        deep.origin_event = "a".into();
        assert!(book.learn(deep.clone(), &config));
        deep.depth = 1;
        assert!(!book.learn(deep, &config), "known origin");
        assert_eq!(book.rumours[0].depth, 1, "the shallower copy is kept");
        let mut fresh = rumour(RumourTopic::Threat, GossipIntent::Warn, 0);
        fresh.origin_event = "b".into();
        book.learn(fresh, &config);
        let mut third = rumour(RumourTopic::Secret, GossipIntent::Inform, 4);
        third.origin_event = "c".into();
        book.learn(third, &config);
        assert_eq!(book.rumours.len(), 2, "bounded");
        assert!(!book.knows("c"), "the weakest went");
        assert_eq!(
            book.to_tell(&config, "bo", |_| false)
                .map(|r| r.origin_event.as_str()),
            Some("b")
        );
        assert_eq!(
            book.to_tell(&config, "bo", |o| o == "b")
                .map(|r| r.origin_event.as_str()),
            Some("a")
        );
        assert!(book.to_tell(&config, "bo", |_| true).is_none());
        assert!(
            book.to_tell(&config, "tam", |_| false).is_none(),
            "not to its subject"
        );
    }
}
