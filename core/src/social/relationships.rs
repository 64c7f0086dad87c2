//! Relationships per ordered pair of NPCs: how A regards B as trust, respect,
//! loyalty and affinity in [0, 1] (0.5 when they have never met), with a short history of the
//! changes actually applied. Friends (trust > 0.7), rivals (trust < 0.3 and respect < 0.3) and
//! allies (loyalty > 0.6) are queries over it; [`RelationshipCache`] keeps their answers for
//! one tick and is invalidated at the start of the next.
//!
//! It owns no NPC state besides these numbers and decides nothing: interactions and gossip
//! (see the sibling modules) change them.

use std::collections::{BTreeMap, VecDeque};

geppetto_wire_enum::wire_enum! {
    /// A facet of a relationship.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Facet {
        /// Belief the other is honest and well-meaning.
        Trust = "trust",
        /// Regard for the other's standing and ability.
        Respect = "respect",
        /// Willingness to stand by the other.
        Loyalty = "loyalty",
        /// Liking.
        Affinity = "affinity",
    }
}

/// Changes kept per relationship.
pub const HISTORY_LENGTH: usize = 8;

/// The value of every facet between NPCs who have never met.
pub const NEUTRAL: f64 = 0.5;

/// How one NPC regards another.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
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
    /// One facet's value.
    pub fn facet(&self, facet: Facet) -> f64 {
        match facet {
            Facet::Trust => self.trust,
            Facet::Respect => self.respect,
            Facet::Loyalty => self.loyalty,
            Facet::Affinity => self.affinity,
        }
    }

    fn facet_mut(&mut self, facet: Facet) -> &mut f64 {
        match facet {
            Facet::Trust => &mut self.trust,
            Facet::Respect => &mut self.respect,
            Facet::Loyalty => &mut self.loyalty,
            Facet::Affinity => &mut self.affinity,
        }
    }
}

/// The lines of the friends / rivals / allies queries, each a named default.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RelationshipThresholds {
    /// A friend is trusted above this; default 0.7.
    pub friend_trust_above: f64,
    /// A rival is trusted below this…; default 0.3.
    pub rival_trust_below: f64,
    /// …and respected below this; default 0.3.
    pub rival_respect_below: f64,
    /// An ally is held with loyalty above this; default 0.6.
    pub ally_loyalty_above: f64,
}

impl Default for RelationshipThresholds {
    fn default() -> Self {
        Self {
            friend_trust_above: 0.7,
            rival_trust_below: 0.3,
            rival_respect_below: 0.3,
            ally_loyalty_above: 0.6,
        }
    }
}

impl RelationshipThresholds {
    /// Whether `r` makes its holder's counterpart a friend.
    pub fn is_friend(&self, r: &Relationship) -> bool {
        r.trust > self.friend_trust_above
    }

    /// Whether `r` makes its holder's counterpart a rival.
    pub fn is_rival(&self, r: &Relationship) -> bool {
        r.trust < self.rival_trust_below && r.respect < self.rival_respect_below
    }

    /// Whether `r` makes its holder's counterpart an ally.
    pub fn is_ally(&self, r: &Relationship) -> bool {
        r.loyalty > self.ally_loyalty_above
    }
}

/// Every relationship in a zone, by holder then counterpart (both ordered, so iteration is
/// deterministic).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Relationships {
    pairs: BTreeMap<String, BTreeMap<String, Relationship>>,
}

impl Relationships {
    /// How `from` regards `to`, if they have met.
    pub fn find(&self, from: &str, to: &str) -> Option<&Relationship> {
        self.pairs.get(from).and_then(|row| row.get(to))
    }

    /// How `from` regards `to` (neutral if they never met).
    pub fn get(&self, from: &str, to: &str) -> Relationship {
        self.find(from, to).cloned().unwrap_or_default()
    }

    /// One facet of how `from` regards `to` (neutral if they never met).
    pub fn value(&self, from: &str, to: &str, facet: Facet) -> f64 {
        self.find(from, to).map_or(NEUTRAL, |r| r.facet(facet))
    }

    /// Trust of `from` in `to`, if they have met.
    pub fn trust(&self, from: &str, to: &str) -> Option<f64> {
        self.find(from, to).map(|r| r.trust)
    }

    /// Changes a facet and records the change actually applied. A change away from neutral
    /// saturates: it is scaled by the room left toward that end over the room at neutral
    /// (`(1 − v) / (1 − 0.5)` going up from above neutral, `v / 0.5` going down from below),
    /// so liking and loathing approach their ends ever more slowly and no one kind of
    /// interaction pins a relationship; a change back toward neutral applies in full.
    pub fn adjust(&mut self, from: &str, to: &str, facet: Facet, delta: f64, at_hours: f64) -> f64 {
        let relationship = self
            .pairs
            .entry(from.to_owned())
            .or_default()
            .entry(to.to_owned())
            .or_default();
        let value = relationship.facet_mut(facet);
        let before = *value;
        let room = if delta > 0.0 && before > NEUTRAL {
            (1.0 - before) / (1.0 - NEUTRAL)
        } else if delta < 0.0 && before < NEUTRAL {
            before / NEUTRAL
        } else {
            1.0
        };
        *value = (*value + delta * room).clamp(0.0, 1.0);
        let applied = *value - before;
        if relationship.history.len() >= HISTORY_LENGTH {
            relationship.history.pop_front();
        }
        relationship.history.push_back((at_hours, facet, applied));
        applied
    }

    /// Moves every facet of every relationship toward neutral, keeping `kept` of its distance
    /// from it (0–1).
    pub fn relax(&mut self, kept: f64) {
        let kept = kept.clamp(0.0, 1.0);
        for relationship in self.pairs.values_mut().flat_map(BTreeMap::values_mut) {
            for facet in [
                Facet::Trust,
                Facet::Respect,
                Facet::Loyalty,
                Facet::Affinity,
            ] {
                let value = relationship.facet_mut(facet);
                *value = NEUTRAL + (*value - NEUTRAL) * kept;
            }
        }
    }

    /// Everyone `of` regards in a way `keep` accepts, by id.
    pub fn filtered(&self, of: &str, keep: impl Fn(&Relationship) -> bool) -> Vec<&str> {
        self.pairs.get(of).map_or_else(Vec::new, |row| {
            row.iter()
                .filter(|(_, r)| keep(r))
                .map(|(to, _)| to.as_str())
                .collect()
        })
    }

    /// Everyone `of` trusts above 0.7.
    pub fn friends(&self, of: &str) -> Vec<&str> {
        let t = RelationshipThresholds::default();
        self.filtered(of, |r| t.is_friend(r))
    }

    /// Everyone `of` neither trusts nor respects (both below 0.3).
    pub fn rivals(&self, of: &str) -> Vec<&str> {
        let t = RelationshipThresholds::default();
        self.filtered(of, |r| t.is_rival(r))
    }

    /// Everyone `of` is loyal to (above 0.6).
    pub fn allies(&self, of: &str) -> Vec<&str> {
        let t = RelationshipThresholds::default();
        self.filtered(of, |r| t.is_ally(r))
    }

    /// The ids of everyone who has formed a view of someone.
    pub fn holders(&self) -> impl Iterator<Item = &str> {
        self.pairs.keys().map(String::as_str)
    }
}

/// Which query a cached answer belongs to.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
enum Query {
    Friends,
    Rivals,
    Allies,
}

/// The friends / rivals / allies of each NPC, computed on first use in a tick and kept until
/// [`RelationshipCache::invalidate`] (called at the start of every social step). Answers may be
/// stale within a tick by design: a step reads the fabric as it stood when the step began.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RelationshipCache {
    /// The lines the queries use.
    pub thresholds: RelationshipThresholds,
    #[serde(with = "crate::serde_pairs")]
    answers: BTreeMap<(Query, String), Vec<String>>,
}

impl RelationshipCache {
    /// A cache over these thresholds.
    pub fn new(thresholds: RelationshipThresholds) -> Self {
        Self {
            thresholds,
            answers: BTreeMap::new(),
        }
    }

    /// Forgets every answer (start of a tick).
    pub fn invalidate(&mut self) {
        self.answers.clear();
    }

    fn answer(&mut self, relationships: &Relationships, query: Query, of: &str) -> &[String] {
        let t = self.thresholds;
        self.answers
            .entry((query, of.to_owned()))
            .or_insert_with(|| {
                let keep = |r: &Relationship| match query {
                    Query::Friends => t.is_friend(r),
                    Query::Rivals => t.is_rival(r),
                    Query::Allies => t.is_ally(r),
                };
                relationships
                    .filtered(of, keep)
                    .into_iter()
                    .map(str::to_owned)
                    .collect()
            })
    }

    /// `of`'s friends (cached for the tick).
    pub fn friends(&mut self, relationships: &Relationships, of: &str) -> &[String] {
        self.answer(relationships, Query::Friends, of)
    }

    /// `of`'s rivals (cached for the tick).
    pub fn rivals(&mut self, relationships: &Relationships, of: &str) -> &[String] {
        self.answer(relationships, Query::Rivals, of)
    }

    /// `of`'s allies (cached for the tick).
    pub fn allies(&mut self, relationships: &Relationships, of: &str) -> &[String] {
        self.answer(relationships, Query::Allies, of)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_cache_keeps_answers_until_invalidated() {
        let mut r = Relationships::default();
        let mut cache = RelationshipCache::default();
        r.adjust("a", "b", Facet::Trust, 0.3, 0.0);
        assert_eq!(cache.friends(&r, "a"), ["b"]);
        r.adjust("a", "c", Facet::Trust, 0.3, 0.0);
        assert_eq!(cache.friends(&r, "a"), ["b"], "stale within the tick");
        cache.invalidate();
        assert_eq!(cache.friends(&r, "a"), ["b", "c"]);
        assert!(cache.rivals(&r, "a").is_empty());
        assert!(cache.allies(&r, "a").is_empty());
    }

    #[test]
    fn changes_away_from_neutral_saturate_and_changes_back_apply_in_full() {
        let mut r = Relationships::default();
        assert!((r.adjust("a", "b", Facet::Affinity, 0.1, 0.0) - 0.1).abs() < 1e-12);
        let near_the_top = r.adjust("a", "b", Facet::Affinity, 0.1, 1.0);
        assert!(
            (near_the_top - 0.1 * 0.4 / 0.5).abs() < 1e-12,
            "0.6 has 0.4 of the 0.5 room left: {near_the_top}"
        );
        for hour in 2..200 {
            r.adjust("a", "b", Facet::Affinity, 0.1, f64::from(hour));
        }
        let liking = r.get("a", "b").affinity;
        assert!(
            liking < 1.0 && liking > 0.99,
            "approaches its end: {liking}"
        );
        assert!((r.adjust("a", "b", Facet::Affinity, -0.2, 300.0) + 0.2).abs() < 1e-12);
        r.adjust("a", "c", Facet::Trust, -0.4, 0.0);
        let lower = r.adjust("a", "c", Facet::Trust, -0.1, 1.0);
        assert!((lower + 0.1 * 0.1 / 0.5).abs() < 1e-12, "{lower}");
    }

    #[test]
    fn regard_relaxes_toward_neutral_by_the_share_kept() {
        let mut r = Relationships::default();
        r.adjust("a", "b", Facet::Trust, -0.4, 0.0);
        r.adjust("a", "b", Facet::Affinity, 0.3, 0.0);
        r.relax(0.5);
        let relaxed = r.get("a", "b");
        assert!((relaxed.trust - 0.3).abs() < 1e-12, "{}", relaxed.trust);
        assert!(
            (relaxed.affinity - 0.65).abs() < 1e-12,
            "{}",
            relaxed.affinity
        );
        assert_eq!(relaxed.respect, NEUTRAL);
    }
}
