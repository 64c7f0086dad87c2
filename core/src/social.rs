//! The social fabric (seed 001 §4.4): relationships per ordered pair of NPCs and gossip that
//! changes what the listener believes and does.
//!
//! - A relationship from A to B holds trust, respect, loyalty and affinity in [0, 1] (0.5 when
//!   they have never met) and a short history of recent changes. Friends: trust > 0.7; rivals:
//!   trust < 0.3 and respect < 0.3; allies: loyalty > 0.6.
//! - Gossip reception: `credibility = confidence × trust(listener → teller) × dampening^depth`
//!   (trust 0.5 for a stranger, dampening 0.7); a rumour at the depth cap (5) is dropped, one
//!   below the dismissal threshold (0.3) is dismissed; an accepted rumour can be retold one
//!   level deeper by its new holder.
//! - Reactions of an accepted rumour: a credible threat raises the listener's survival
//!   pressure; an opportunity becomes an acquire goal when the listener is short of money;
//!   defamation lowers the listener's trust in its subject; boasting and bonding raise trust in
//!   the teller.

use std::collections::{BTreeMap, VecDeque};

/// A facet of a relationship.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Facet {
    /// Belief the other is honest and well-meaning.
    Trust,
    /// Regard for the other's standing and ability.
    Respect,
    /// Willingness to stand by the other.
    Loyalty,
    /// Liking.
    Affinity,
}

/// Changes kept per relationship.
pub const HISTORY_LENGTH: usize = 8;

/// How one NPC regards another.
#[derive(Clone, Debug, PartialEq)]
pub struct Relationship {
    /// 0–1.
    pub trust: f64,
    /// 0–1.
    pub respect: f64,
    /// 0–1.
    pub loyalty: f64,
    /// 0–1.
    pub affinity: f64,
    /// Recent changes: (game hour, facet, applied delta), oldest first.
    pub history: VecDeque<(f64, Facet, f64)>,
}

/// The value of every facet between NPCs who have never met.
pub const NEUTRAL: f64 = 0.5;

impl Default for Relationship {
    fn default() -> Self {
        Self {
            trust: NEUTRAL,
            respect: NEUTRAL,
            loyalty: NEUTRAL,
            affinity: NEUTRAL,
            history: VecDeque::new(),
        }
    }
}

impl Relationship {
    fn facet_mut(&mut self, facet: Facet) -> &mut f64 {
        match facet {
            Facet::Trust => &mut self.trust,
            Facet::Respect => &mut self.respect,
            Facet::Loyalty => &mut self.loyalty,
            Facet::Affinity => &mut self.affinity,
        }
    }
}

/// Every relationship in a zone, by (from, to).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Relationships {
    pairs: BTreeMap<(String, String), Relationship>,
}

impl Relationships {
    /// How `from` regards `to` (neutral if they never met).
    pub fn get(&self, from: &str, to: &str) -> Relationship {
        self.pairs
            .get(&(from.to_owned(), to.to_owned()))
            .cloned()
            .unwrap_or_default()
    }

    /// Trust of `from` in `to`, if they have met.
    pub fn trust(&self, from: &str, to: &str) -> Option<f64> {
        self.pairs
            .get(&(from.to_owned(), to.to_owned()))
            .map(|r| r.trust)
    }

    /// Changes a facet (clamped to [0, 1]) and records the change actually applied.
    pub fn adjust(&mut self, from: &str, to: &str, facet: Facet, delta: f64, at_hours: f64) -> f64 {
        let relationship = self
            .pairs
            .entry((from.to_owned(), to.to_owned()))
            .or_default();
        let value = relationship.facet_mut(facet);
        let before = *value;
        *value = (*value + delta).clamp(0.0, 1.0);
        let applied = *value - before;
        if relationship.history.len() >= HISTORY_LENGTH {
            relationship.history.pop_front();
        }
        relationship.history.push_back((at_hours, facet, applied));
        applied
    }

    /// Everyone `of` trusts above 0.7.
    pub fn friends(&self, of: &str) -> Vec<&str> {
        self.filtered(of, |r| r.trust > 0.7)
    }

    /// Everyone `of` neither trusts nor respects (both below 0.3).
    pub fn rivals(&self, of: &str) -> Vec<&str> {
        self.filtered(of, |r| r.trust < 0.3 && r.respect < 0.3)
    }

    /// Everyone `of` is loyal to (above 0.6).
    pub fn allies(&self, of: &str) -> Vec<&str> {
        self.filtered(of, |r| r.loyalty > 0.6)
    }

    fn filtered(&self, of: &str, keep: impl Fn(&Relationship) -> bool) -> Vec<&str> {
        self.pairs
            .iter()
            .filter(|((from, _), r)| from == of && keep(r))
            .map(|((_, to), _)| to.as_str())
            .collect()
    }

    /// How many NPCs trust `subject` less than `below`.
    pub fn distrusted_by(&self, subject: &str, below: f64) -> usize {
        self.pairs
            .iter()
            .filter(|((_, to), r)| to == subject && r.trust < below)
            .count()
    }
}

/// What a rumour is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GossipKind {
    /// Danger (bandits on the road).
    Threat,
    /// A chance (cheap ore at the market).
    Opportunity,
    /// Someone (the miller cheats).
    Person,
    /// Something hidden.
    Secret,
}

/// Why a rumour is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GossipIntent {
    /// To protect the listener.
    Warn,
    /// To harm the subject.
    Defame,
    /// To look good.
    Boast,
    /// To grow closer.
    Bond,
    /// To steer the listener.
    Manipulate,
    /// Just news.
    Inform,
    /// To get help.
    SeekHelp,
}

/// A rumour as one NPC holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct Gossip {
    /// Whom or what it is about.
    pub subject: String,
    /// What kind of news.
    pub kind: GossipKind,
    /// Why it is told.
    pub intent: GossipIntent,
    /// How sure the first teller was (0–1).
    pub confidence: f64,
    /// The event it started from.
    pub origin_event: String,
    /// Retellings since the origin (0 for a witness).
    pub depth: u32,
    /// Who holds this copy.
    pub holder: String,
}

/// The numbers of gossip reception, each a named default (seed 001).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GossipConfig {
    /// Credibility lost per retelling: ×dampening^depth; default 0.7.
    pub dampening: f64,
    /// Below this credibility a rumour is dismissed; default 0.3.
    pub dismiss_below: f64,
    /// A rumour at this depth is no longer passed on or believed; default 5.
    pub max_depth: u32,
    /// Trust in a teller never met; default 0.5.
    pub unknown_trust: f64,
    /// Trust in the subject lost per unit of credibility of a defamation; default 0.2.
    pub defamation_trust_loss: f64,
    /// Trust in the teller gained by a boast or bond; default 0.05.
    pub bonding_trust_gain: f64,
    /// An opportunity becomes a goal when the listener's economic need is below this; default 0.4.
    pub opportunity_need_below: f64,
}

impl Default for GossipConfig {
    fn default() -> Self {
        Self {
            dampening: 0.7,
            dismiss_below: 0.3,
            max_depth: 5,
            unknown_trust: 0.5,
            defamation_trust_loss: 0.2,
            bonding_trust_gain: 0.05,
            opportunity_need_below: 0.4,
        }
    }
}

/// What an accepted rumour makes the listener do.
#[derive(Clone, Debug, PartialEq)]
pub enum GossipReaction {
    /// Raise survival pressure by this much (0–1): a credible threat.
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
    /// `listener` hears `gossip` from `teller` at `now_hours`; `economic_need` is the
    /// listener's economic need (normalised), for opportunities. Trust changes are applied to
    /// `relationships`.
    pub fn receive(
        &self,
        relationships: &mut Relationships,
        listener: &str,
        teller: &str,
        gossip: &Gossip,
        economic_need: f64,
        now_hours: f64,
    ) -> Reception {
        if gossip.depth >= self.max_depth {
            return Reception::Dropped;
        }
        let trust = relationships
            .trust(listener, teller)
            .unwrap_or(self.unknown_trust);
        let credibility =
            gossip.confidence.clamp(0.0, 1.0) * trust * self.dampening.powi(gossip.depth as i32);
        if credibility < self.dismiss_below {
            return Reception::Dismissed { credibility };
        }
        let mut reactions = Vec::new();
        match gossip.kind {
            GossipKind::Threat => {
                reactions.push(GossipReaction::RaiseSurvivalPressure(credibility))
            }
            GossipKind::Opportunity if economic_need < self.opportunity_need_below => {
                reactions.push(GossipReaction::AcquireGoal {
                    subject: gossip.subject.clone(),
                });
            }
            _ => {}
        }
        match gossip.intent {
            GossipIntent::Defame if gossip.subject != listener => {
                let delta = relationships.adjust(
                    listener,
                    &gossip.subject,
                    Facet::Trust,
                    -self.defamation_trust_loss * credibility,
                    now_hours,
                );
                reactions.push(GossipReaction::TrustChanged {
                    toward: gossip.subject.clone(),
                    delta,
                });
            }
            GossipIntent::Boast | GossipIntent::Bond => {
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
            _ => {}
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rumour(kind: GossipKind, intent: GossipIntent, depth: u32) -> Gossip {
        Gossip {
            subject: "tam".into(),
            kind,
            intent,
            confidence: 1.0,
            origin_event: "theft-17".into(),
            depth,
            holder: "ada".into(),
        }
    }

    #[test]
    fn relationships_start_neutral_clamp_and_remember_recent_changes() {
        let mut r = Relationships::default();
        assert_eq!(r.get("a", "b").trust, NEUTRAL);
        assert_eq!(
            r.adjust("a", "b", Facet::Trust, 0.9, 1.0),
            0.5,
            "clamped at 1"
        );
        assert_eq!(r.get("a", "b").trust, 1.0);
        assert_eq!(r.get("b", "a").trust, NEUTRAL, "ordered pairs");
        for i in 0..20 {
            r.adjust("a", "b", Facet::Respect, -0.01, f64::from(i));
        }
        assert_eq!(r.get("a", "b").history.len(), HISTORY_LENGTH);
    }

    #[test]
    fn friends_rivals_and_allies() {
        let mut r = Relationships::default();
        r.adjust("a", "friend", Facet::Trust, 0.3, 0.0);
        r.adjust("a", "rival", Facet::Trust, -0.3, 0.0);
        r.adjust("a", "rival", Facet::Respect, -0.3, 0.0);
        r.adjust("a", "ally", Facet::Loyalty, 0.2, 0.0);
        r.adjust("a", "wary", Facet::Trust, -0.3, 0.0);
        assert_eq!(r.friends("a"), ["friend"]);
        assert_eq!(r.rivals("a"), ["rival"], "low trust alone is not rivalry");
        assert_eq!(r.allies("a"), ["ally"]);
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
            &rumour(GossipKind::Person, GossipIntent::Inform, 1),
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
        assert_eq!(
            (copy.depth, copy.holder.as_str()),
            (2, "bo"),
            "retelling goes one deeper"
        );
        // A stranger's word counts half; two retellings deeper it is dismissed.
        let heard = config.receive(
            &mut r,
            "cy",
            "ada",
            &rumour(GossipKind::Person, GossipIntent::Inform, 2),
            1.0,
            0.0,
        );
        let dismissed = matches!(heard, Reception::Dismissed { credibility } if (credibility - 0.5 * 0.49).abs() < 1e-12);
        assert!(dismissed, "{heard:?}");
        let heard = config.receive(
            &mut r,
            "bo",
            "ada",
            &rumour(GossipKind::Person, GossipIntent::Inform, 5),
            1.0,
            0.0,
        );
        assert_eq!(heard, Reception::Dropped);
    }

    #[test]
    fn reactions_follow_the_kind_and_the_intent() {
        let config = GossipConfig::default();
        let mut r = Relationships::default();
        let reactions = |r: &mut Relationships, gossip: Gossip, need: f64| match config
            .receive(r, "bo", "ada", &gossip, need, 0.0)
        {
            Reception::Accepted { reactions, .. } => reactions,
            other => panic!("accepted: {other:?}"),
        };
        assert_eq!(
            reactions(
                &mut r,
                rumour(GossipKind::Threat, GossipIntent::Warn, 0),
                1.0
            ),
            [GossipReaction::RaiseSurvivalPressure(0.5)]
        );
        assert_eq!(
            reactions(
                &mut r,
                rumour(GossipKind::Opportunity, GossipIntent::Inform, 0),
                0.2
            ),
            [GossipReaction::AcquireGoal {
                subject: "tam".into()
            }]
        );
        assert!(
            reactions(
                &mut r,
                rumour(GossipKind::Opportunity, GossipIntent::Inform, 0),
                0.9
            )
            .is_empty(),
            "not short of money"
        );
        let defamed = reactions(
            &mut r,
            rumour(GossipKind::Person, GossipIntent::Defame, 0),
            1.0,
        );
        assert!(
            matches!(defamed.as_slice(), [GossipReaction::TrustChanged { toward, delta }] if toward == "tam" && *delta < 0.0)
        );
        assert!(r.get("bo", "tam").trust < NEUTRAL);
        let bonded = reactions(
            &mut r,
            rumour(GossipKind::Secret, GossipIntent::Bond, 0),
            1.0,
        );
        assert!(
            matches!(bonded.as_slice(), [GossipReaction::TrustChanged { toward, .. }] if toward == "ada")
        );
    }
}
