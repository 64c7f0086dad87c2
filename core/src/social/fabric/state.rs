//! The [`SocialFabric`]: a zone's relationships, reservations and cached answers, each NPC's
//! [`Member`] state (profile, rumours, what was last observed of it), and the symbols it reads.
//! The step that moves it is [`super::step`]'s. Members share their profiles: an archetype's
//! NPCs point at one copy ([`SharedProfiles`]).

use std::collections::BTreeMap;
use std::sync::Arc;

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
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Member {
    /// How it takes part (shared with the members of the same profile).
    pub profile: Arc<SocialProfile>,
    /// What it has heard.
    pub rumours: crate::social::gossip::RumourBook,
    pub(super) location: Option<Box<str>>,
    /// The mood last observed (NaN before the first observation; written as `null`).
    #[serde(with = "unobserved_as_null")]
    pub(super) mood: f64,
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

impl Member {
    /// A member that has done nothing yet, taking part by `profile`.
    fn new(profile: Arc<SocialProfile>) -> Self {
        Self {
            profile,
            rumours: Default::default(),
            location: None,
            mood: f64::NAN,
            low_needs: ThinVec::new(),
            familiarity: ThinVec::new(),
        }
    }
}

/// A member's last observed mood: NaN (not yet observed) is written as `null` and read back
/// from it, so a member holds eight bytes where an `Option<f64>` takes sixteen.
mod unobserved_as_null {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(mood: &f64, serializer: S) -> Result<S::Ok, S::Error> {
        if mood.is_nan() {
            serializer.serialize_none()
        } else {
            serializer.serialize_some(mood)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::NAN))
    }
}

/// The distinct profiles of a fabric's members, each held once: a zone of 100,000 NPCs of a
/// few archetypes holds a few profiles, not 100,000 copies.
#[derive(Clone, Debug)]
pub(in crate::social) struct SharedProfiles {
    /// The profile of a member none was set for.
    default: Arc<SocialProfile>,
    /// Every other profile set, by its numbers' bits and faction.
    by_value: FxHashMap<ProfileKey, Arc<SocialProfile>>,
}

/// A profile as a hashable key: its three numbers' bits and its faction.
type ProfileKey = ([u64; 3], Option<String>);

impl Default for SharedProfiles {
    fn default() -> Self {
        Self {
            default: Arc::new(SocialProfile::default()),
            by_value: FxHashMap::default(),
        }
    }
}

impl SharedProfiles {
    /// The held copy of `profile`, held from now on if it is new.
    fn share(&mut self, profile: &SocialProfile) -> Arc<SocialProfile> {
        if *profile == *self.default {
            return Arc::clone(&self.default);
        }
        let key = (
            [
                profile.gossip_tendency.to_bits(),
                profile.social_initiative.to_bits(),
                profile.influence.to_bits(),
            ],
            profile.faction.clone(),
        );
        Arc::clone(
            self.by_value
                .entry(key)
                .or_insert_with(|| Arc::new(profile.clone())),
        )
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
    /// The member state of each NPC with a profile of its own or that has taken part, by id:
    /// looked up for every NPC a step observes, so hashed (a tree of 10,000 ids took a dozen
    /// string comparisons a look-up); written in id order.
    #[serde(serialize_with = "in_id_order")]
    pub(in crate::social) members: FxHashMap<Box<str>, Member>,
    pub(in crate::social) needs: [Symbol; 5],
    pub(in crate::social) acquire: Symbol,
    pub(in crate::social) hostile_tags: Vec<Symbol>,
    pub(in crate::social) kind_tags: Vec<(InteractionKind, ThinVec<Symbol>)>,
    pub(in crate::social) last_step_hours: Option<f64>,
    /// The game day regard last relaxed toward neutral.
    #[serde(default)]
    pub(in crate::social) relaxed_day: Option<i64>,
    /// The members' profiles, one copy each (rebuilt from the members on restore).
    #[serde(skip)]
    profiles: SharedProfiles,
}

/// Writes `members` in id order, as a map: a snapshot's bytes depend on the members, not on the
/// order a hash map holds them in.
fn in_id_order<S: serde::Serializer>(
    members: &FxHashMap<Box<str>, Member>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let ordered: BTreeMap<&str, &Member> = members.iter().map(|(id, m)| (&**id, m)).collect();
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
        let mut profiles = SharedProfiles::default();
        for member in self.members.values_mut() {
            member.profile = profiles.share(&member.profile);
        }
        self.profiles = profiles;
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
                let mut tags = thin_vec::thin_vec![social, vocabulary.intern(kind.as_str())];
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
            profiles: SharedProfiles::default(),
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

    /// Sets how `npc` takes part. An NPC given the default profile gets no member until it
    /// takes part (observed in a place, told a rumour, the other side of an interaction): the
    /// member made then has the default profile, the same state — so the townsfolk of a large
    /// zone, away from social life, hold nothing here.
    pub fn set_profile(&mut self, npc: &str, profile: SocialProfile) {
        if profile == *self.profiles.default && !self.members.contains_key(npc) {
            return;
        }
        let profile = self.profiles.share(&profile);
        self.with_member(npc, |member| member.profile = profile);
    }

    /// Runs `change` on `npc`'s social state, made (with the default profile) if it has none
    /// yet. A known member is found without a key made to ask; only a new one costs a copy of
    /// its id (and a second look-up).
    pub(in crate::social) fn with_member<R>(
        &mut self,
        npc: &str,
        change: impl FnOnce(&mut Member) -> R,
    ) -> R {
        match self.members.get_mut(npc) {
            Some(member) => change(member),
            None => change(
                self.members
                    .entry(npc.into())
                    .or_insert_with(|| Member::new(Arc::clone(&self.profiles.default))),
            ),
        }
    }

    /// A member that has done nothing yet, with the default profile.
    pub(in crate::social) fn new_member(&self) -> Member {
        Member::new(Arc::clone(&self.profiles.default))
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
        self.with_member(npc, |member| member.rumours.learn(rumour, &config))
    }

    pub(in crate::social) fn profile(&self, npc: &str) -> SocialProfile {
        self.members
            .get(npc)
            .map(|m| SocialProfile::clone(&m.profile))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zone holds a member for each NPC with a profile or a part in its social life: the
    /// profile is shared, the lists thin.
    #[test]
    fn a_member_is_small() {
        assert!(std::mem::size_of::<Member>() <= 64);
    }

    /// A default profile makes no member, but it does replace a profile an NPC had.
    #[test]
    fn the_default_profile_waits_for_a_part_but_replaces_another_profile() {
        let mut vocabulary = Vocabulary::default();
        let mut fabric = SocialFabric::new(FabricConfig::default(), &mut vocabulary);
        fabric.set_profile("ann", SocialProfile::default());
        assert!(fabric.member("ann").is_none());
        let guard = SocialProfile {
            faction: Some("watch".into()),
            ..SocialProfile::default()
        };
        fabric.set_profile("ann", guard);
        fabric.set_profile("ann", SocialProfile::default());
        let member = fabric
            .member("ann")
            .expect("a member once it had a profile");
        assert_eq!(*member.profile, SocialProfile::default());
    }

    #[test]
    fn members_of_one_profile_share_it_and_a_restored_fabric_shares_it_again() {
        let mut vocabulary = Vocabulary::default();
        let mut fabric = SocialFabric::new(FabricConfig::default(), &mut vocabulary);
        let guard = SocialProfile {
            faction: Some("watch".into()),
            ..SocialProfile::default()
        };
        fabric.set_profile("ann", guard.clone());
        fabric.set_profile("bob", guard.clone());
        fabric.set_profile("cid", SocialProfile::default());
        // The default profile takes no member until the NPC takes part.
        assert!(fabric.member("cid").is_none());
        fabric.with_member("cid", |_| ());
        fabric.with_member("dot", |_| ());
        let profile = |fabric: &SocialFabric, npc: &str| {
            Arc::clone(&fabric.member(npc).expect("a member").profile)
        };
        assert!(Arc::ptr_eq(
            &profile(&fabric, "ann"),
            &profile(&fabric, "bob")
        ));
        assert!(Arc::ptr_eq(
            &profile(&fabric, "cid"),
            &profile(&fabric, "dot")
        ));
        assert_eq!(*profile(&fabric, "ann"), guard);
        let text = serde_json::to_string(&fabric).expect("a fabric serializes");
        let mut restored = SocialFabric::new(FabricConfig::default(), &mut vocabulary);
        restored.adopt_state(serde_json::from_str(&text).expect("and reads back"));
        assert!(Arc::ptr_eq(
            &profile(&restored, "ann"),
            &profile(&restored, "bob")
        ));
        assert_eq!(*profile(&restored, "bob"), guard);
        assert_eq!(serde_json::to_string(&restored).expect("again"), text);
    }

    #[test]
    fn members_are_written_in_id_order_whatever_order_they_joined_in() {
        let mut vocabulary = Vocabulary::default();
        let mut fabric = SocialFabric::new(FabricConfig::default(), &mut vocabulary);
        let ids: Vec<String> = (0..200).rev().map(|n| format!("npc{n:03}")).collect();
        for id in &ids {
            fabric.with_member(id, |_| ());
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
