//! The [`SocialFabric`]: a zone's relationships, reservations and cached answers, each NPC's
//! [`Member`] state (profile, rumours, what was last observed of it), and the symbols it reads.
//! The step that moves it is [`super::step`]'s.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use serde::Serialize;
use thin_vec::ThinVec;

use super::config::{FabricConfig, SocialProfile};
use super::needs::Role;
use crate::social::gossip::Gossip;
use crate::social::interaction::InteractionKind;
use crate::social::relationships::{RelationshipCache, Relationships};
use crate::social::reservation::Reservations;
use crate::vocabulary::{Symbol, Vocabulary};

/// One NPC's social state.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Member {
    /// How it takes part.
    pub profile: SocialProfile,
    /// What it has heard.
    pub rumours: crate::social::gossip::RumourBook,
    pub(super) location: Option<String>,
    pub(super) mood: Option<f64>,
    pub(super) low_needs: ThinVec<Symbol>,
    /// How used it is to each kind of interaction: (kind, level, game hour of the level); each
    /// interaction adds one, and the level halves every `habituation_half_life_hours`.
    #[serde(default)]
    pub(in crate::social) familiarity: ThinVec<(InteractionKind, f64, f64)>,
}

impl Member {
    /// How used it is to `kind` at `now_hours` (0 when never).
    pub(in crate::social) fn familiarity(
        &self,
        kind: InteractionKind,
        now_hours: f64,
        half_life_hours: f64,
    ) -> f64 {
        self.familiarity
            .iter()
            .find(|(k, ..)| *k == kind)
            .map_or(0.0, |(_, level, at)| {
                level * (-(now_hours - at).max(0.0) / half_life_hours.max(f64::MIN_POSITIVE)).exp2()
            })
    }

    /// Notes one more interaction of `kind` at `now_hours`.
    pub(in crate::social) fn habituate(
        &mut self,
        kind: InteractionKind,
        now_hours: f64,
        half_life_hours: f64,
    ) {
        let level = self.familiarity(kind, now_hours, half_life_hours) + 1.0;
        match self.familiarity.iter_mut().find(|(k, ..)| *k == kind) {
            Some(entry) => *entry = (kind, level, now_hours),
            None => self.familiarity.push((kind, level, now_hours)),
        }
    }
}

/// A zone's social state and step.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SocialFabric {
    /// Its numbers (from content, never from a snapshot: see [`SocialFabric::adopt_state`]).
    #[serde(skip)]
    pub config: FabricConfig,
    /// Everyone's regard for everyone.
    pub relationships: Relationships,
    /// Friend / rival / ally answers for the current step.
    pub cache: RelationshipCache,
    /// Who is engaged with whom; cooldowns.
    pub reservations: Reservations,
    /// Each NPC's member state by id: looked up for every NPC a step observes, so hashed
    /// (a tree of 10,000 ids took a dozen string comparisons a look-up); written in id order.
    #[serde(serialize_with = "in_id_order")]
    pub(in crate::social) members: FxHashMap<String, Member>,
    pub(in crate::social) needs: [Symbol; 5],
    pub(in crate::social) acquire: Symbol,
    pub(in crate::social) hostile_tags: Vec<Symbol>,
    pub(in crate::social) kind_tags: Vec<(InteractionKind, Vec<Symbol>)>,
    pub(in crate::social) last_step_hours: Option<f64>,
    /// The game day regard last relaxed toward neutral.
    #[serde(default)]
    pub(in crate::social) relaxed_day: Option<i64>,
}

/// Writes `members` in id order, as a map: a snapshot's bytes depend on the members, not on the
/// order a hash map holds them in.
fn in_id_order<S: serde::Serializer>(
    members: &FxHashMap<String, Member>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let ordered: BTreeMap<&String, &Member> = members.iter().collect();
    ordered.serialize(serializer)
}

impl SocialFabric {
    /// Takes every piece of `saved`'s state (relationships, rumours, reservations, members,
    /// cached answers, last step) and keeps this fabric's own numbers: how a snapshot is
    /// restored onto a fabric built from the current content.
    pub fn adopt_state(&mut self, saved: SocialFabric) {
        let config = std::mem::take(&mut self.config);
        let thresholds = self.cache.thresholds;
        *self = Self { config, ..saved };
        self.cache.thresholds = thresholds;
    }

    /// A fabric with `config`, its names interned in `vocabulary`.
    pub fn new(config: FabricConfig, vocabulary: &mut Vocabulary) -> Self {
        let n = &config.needs;
        let needs = [
            vocabulary.intern(&n.social),
            vocabulary.intern(&n.economic),
            vocabulary.intern(&n.survival),
            vocabulary.intern(&n.purpose),
            vocabulary.intern(&n.ambition),
        ];
        let acquire = vocabulary.intern(&config.acquire_resource);
        let hostile_tags = config
            .hostile_act_tags
            .iter()
            .map(|t| vocabulary.intern(t))
            .collect();
        let social = vocabulary.intern("social");
        let kind_tags = InteractionKind::ALL
            .into_iter()
            .map(|kind| {
                let mut tags = vec![social, vocabulary.intern(kind.as_str())];
                tags.extend(kind.extra_tags().iter().map(|t| vocabulary.intern(t)));
                (kind, tags)
            })
            .collect();
        Self {
            cache: RelationshipCache::new(config.thresholds),
            config,
            relationships: Relationships::default(),
            reservations: Reservations::default(),
            members: FxHashMap::default(),
            needs,
            acquire,
            hostile_tags,
            kind_tags,
            last_step_hours: None,
            relaxed_day: None,
        }
    }

    /// Once a game day, relaxes every relationship toward neutral by the days since the last
    /// time (see [`FabricConfig::regard_half_life_days`]).
    pub(in crate::social) fn relax_regard(&mut self, now_hours: f64) {
        let day = (now_hours / 24.0).floor() as i64;
        let half_life = self.config.regard_half_life_days;
        match self.relaxed_day {
            Some(last) if day > last && half_life > 0.0 => {
                let days = (day - last) as f64;
                self.relationships.relax((-days / half_life).exp2());
                self.relaxed_day = Some(day);
            }
            Some(_) => {}
            None => self.relaxed_day = Some(day),
        }
    }

    pub(in crate::social) fn need(&self, role: Role) -> Symbol {
        self.needs[role as usize]
    }

    /// Sets how `npc` takes part.
    pub fn set_profile(&mut self, npc: &str, profile: SocialProfile) {
        self.members.entry(npc.to_owned()).or_default().profile = profile;
    }

    /// `npc`'s social state, if it has taken part.
    pub fn member(&self, npc: &str) -> Option<&Member> {
        self.members.get(npc)
    }

    /// The rumours `npc` holds.
    pub fn rumours(&self, npc: &str) -> &[Gossip] {
        self.members
            .get(npc)
            .map_or(&[], |m| m.rumours.rumours.as_slice())
    }

    /// Gives `npc` a rumour (as if it had heard it); returns whether it was new.
    pub fn learn(&mut self, npc: &str, rumour: Gossip) -> bool {
        let config = self.config.gossip;
        self.members
            .entry(npc.to_owned())
            .or_default()
            .rumours
            .learn(rumour, &config)
    }

    pub(in crate::social) fn profile(&self, npc: &str) -> SocialProfile {
        self.members
            .get(npc)
            .map(|m| m.profile.clone())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_written_in_id_order_whatever_order_they_joined_in() {
        let mut vocabulary = Vocabulary::default();
        let mut fabric = SocialFabric::new(FabricConfig::default(), &mut vocabulary);
        let ids: Vec<String> = (0..200).rev().map(|n| format!("npc{n:03}")).collect();
        for id in &ids {
            fabric.set_profile(id, SocialProfile::default());
        }
        let text = serde_json::to_string(&fabric).expect("a fabric serializes");
        let at: Vec<usize> = (0..200)
            .map(|n| {
                text.find(&format!("\"npc{n:03}\":"))
                    .expect("each member written")
            })
            .collect();
        assert!(at.windows(2).all(|pair| pair[0] < pair[1]));
        let back: SocialFabric = serde_json::from_str(&text).expect("and reads back");
        assert_eq!(serde_json::to_string(&back).expect("again"), text);
    }
}
