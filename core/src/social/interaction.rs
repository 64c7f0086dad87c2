//! NPC-to-NPC interactions: the nine kinds, how a partner advertises
//! each to an initiator (so the decision engine chooses among them like any other action), and
//! the deterministic rule that resolves one into an outcome.
//!
//! **Resolution.** Every kind succeeds with
//! `chance = clamp(base_chance + chance_weight × facet(target → initiator), 0, 1)`, drawn once
//! from the caller's seeded stream; the outcome's [`Effects`] then move both sides' regard for
//! each other, their needs (fractions of each need's range) and their mood. Defaults:
//!
//! | kind | chance | on success | on rejection |
//! |---|---|---|---|
//! | conversation | 0.4 + 0.6 affinity | affinity +0.04, trust +0.02 both ways; social +0.15 both | initiator's affinity −0.02 |
//! | gossip | (the listener's reception decides) | social +0.1 both; affinity +0.02 both ways | social +0.05 initiator |
//! | trade | 0.3 + 0.7 trust | economic +0.12 both; trust +0.03, respect +0.02 both ways | initiator's trust −0.02 |
//! | argument | 0.25 + 0.5 respect (initiator prevails) | trust −0.1, affinity −0.08 both ways; target respects the winner +0.03, winner −0.05 | mirror image |
//! | favor | 0 + 1.0 trust | initiator loyalty +0.1, trust +0.05; economic +0.1 initiator, purpose +0.05 target | initiator loyalty −0.08, affinity −0.04 |
//! | intimidation | 0.25 + 0.5 respect | target trust −0.15, affinity −0.1, respect +0.05, survival −0.1; initiator economic +0.08, ambition +0.05 | target respect −0.1, trust −0.05 |
//! | scheming | 0 + 1.0 trust | loyalty +0.08, trust +0.03 both ways; ambition +0.05 both (and the target turns on the victim) | target trust −0.12 |
//! | mentoring | 0.5 + 0.5 respect | target respect +0.06, loyalty +0.03; purpose +0.12, ambition +0.05 target, purpose +0.06 initiator | initiator respect −0.03 |
//! | courtship | 0 + 1.0 affinity | affinity +0.1, loyalty +0.05 both ways; social +0.15 both | target affinity −0.02; initiator affinity +0.02, social −0.05 |
//!
//! **Advertisement.** A partner advertises a kind to an initiator only when the relationship
//! makes sense of it (an argument with someone trusted below 0.4, courtship with someone liked
//! above 0.6 — its pull growing with how much they like the suitor back and fading as loyalty
//! between them grows, a courtship ending in a bond — scheming with a trusted partner against a distrusted
//! third…), its pull dulled by how used the initiator is to that kind lately (habituation: no
//! one kind of interaction takes over a life); its tags (`social`,
//! the kind's own, `violence` for intimidation, `stealth` for scheming) let archetype traits
//! shape the choice, its need deltas are the success effects the initiator would feel, and a
//! relationship-driven intrinsic priority gives hostile and romantic kinds their pull.

use super::relationships::{Facet, Relationships};

geppetto_wire_enum::wire_enum! {
    /// The kinds of NPC-to-NPC interaction.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum InteractionKind {
        /// Share a rumour.
        Gossip = "gossip",
        /// Buy and sell.
        Trade = "trade",
        /// Pass the time.
        Conversation = "conversation",
        /// Fall out.
        Argument = "argument",
        /// Ask for help.
        Favor = "favor",
        /// Threaten.
        Intimidation = "intimidation",
        /// Plot together against a third.
        Scheming = "scheming",
        /// Teach.
        Mentoring = "mentoring",
        /// Woo.
        Courtship = "courtship",
    }
}

impl InteractionKind {
    /// Every kind, in a fixed order (advertisement order).
    pub const ALL: [Self; 9] = [
        Self::Conversation,
        Self::Gossip,
        Self::Trade,
        Self::Argument,
        Self::Favor,
        Self::Intimidation,
        Self::Scheming,
        Self::Mentoring,
        Self::Courtship,
    ];

    /// Whether it works against its target (or, for scheming, against a third).
    pub fn is_hostile(self) -> bool {
        matches!(self, Self::Argument | Self::Intimidation | Self::Scheming)
    }

    /// The action tags it carries besides `social` and its own name.
    pub fn extra_tags(self) -> &'static [&'static str] {
        match self {
            Self::Intimidation => &["violence"],
            Self::Scheming => &["stealth"],
            Self::Mentoring => &["work"],
            _ => &[],
        }
    }
}

/// The needs an interaction touches, named by role (the fabric maps roles to need names).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NeedDeltas {
    /// Company.
    pub social: f64,
    /// Money.
    pub economic: f64,
    /// Safety (negative: fear).
    pub survival: f64,
    /// Meaning.
    pub purpose: f64,
    /// Advancement.
    pub ambition: f64,
}

/// Changes to how one side regards the other.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FacetDeltas {
    /// Trust.
    pub trust: f64,
    /// Respect.
    pub respect: f64,
    /// Loyalty.
    pub loyalty: f64,
    /// Affinity.
    pub affinity: f64,
}

impl FacetDeltas {
    /// The non-zero changes, facet by facet.
    pub fn changes(&self) -> impl Iterator<Item = (Facet, f64)> {
        [
            (Facet::Trust, self.trust),
            (Facet::Respect, self.respect),
            (Facet::Loyalty, self.loyalty),
            (Facet::Affinity, self.affinity),
        ]
        .into_iter()
        .filter(|(_, d)| *d != 0.0)
    }
}

/// What one outcome does.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Effects {
    /// How the initiator's regard for the target changes.
    pub initiator_regard: FacetDeltas,
    /// How the target's regard for the initiator changes.
    pub target_regard: FacetDeltas,
    /// The initiator's needs (fractions of each need's range).
    pub initiator_needs: NeedDeltas,
    /// The target's needs.
    pub target_needs: NeedDeltas,
    /// Remembered by the initiator's mood (−1…1).
    pub initiator_mood: f64,
    /// Remembered by the target's mood.
    pub target_mood: f64,
}

/// The resolution rule of one kind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InteractionRule {
    /// Success chance before the relationship term.
    pub base_chance: f64,
    /// The facet of the target's regard for the initiator that adds to the chance.
    pub chance_facet: Facet,
    /// Its weight.
    pub chance_weight: f64,
    /// Effects of success.
    pub on_success: Effects,
    /// Effects of rejection.
    pub on_rejection: Effects,
}

impl InteractionRule {
    /// The success chance between these two.
    pub fn chance(&self, relationships: &Relationships, initiator: &str, target: &str) -> f64 {
        (self.base_chance
            + self.chance_weight * relationships.value(target, initiator, self.chance_facet))
        .clamp(0.0, 1.0)
    }
}

/// When a partner advertises the relationship-gated kinds, and how strongly; each a named
/// default.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AdvertConfig {
    /// Intrinsic priority of a conversation (gives personality something to scale); default 0.2.
    pub conversation_priority: f64,
    /// Intrinsic priority of a trade; default 0.2.
    pub trade_priority: f64,
    /// Intrinsic priority of telling a rumour, × gossip tendency × (base + influence); default 0.6.
    pub gossip_priority: f64,
    /// The base the teller's influence is added to; default 0.5.
    pub gossip_influence_base: f64,
    /// Argue with someone trusted below this; default 0.4.
    pub argue_trust_below: f64,
    /// Priority of an argument at zero trust (linear to 0 at the line); default 1.0.
    pub argue_drive: f64,
    /// Ask a favour while some need is below this (0–1)…; default 0.35.
    pub favor_need_below: f64,
    /// …of someone trusted above this; default 0.5.
    pub favor_trust_above: f64,
    /// Intimidate someone respected below this; default 0.4.
    pub intimidate_respect_below: f64,
    /// Priority of intimidation at zero respect; default 0.6.
    pub intimidate_drive: f64,
    /// Scheme against someone trusted below this…; default 0.35.
    pub scheme_victim_trust_below: f64,
    /// …with a partner trusted at least this much; default 0.55.
    pub scheme_partner_trust_above: f64,
    /// Priority of scheming against a victim at zero trust; default 0.3.
    pub scheme_drive: f64,
    /// Mentor someone whose purpose is at least this far below one's own; default 0.2.
    pub mentor_purpose_gap: f64,
    /// Priority of mentoring; default 0.3.
    pub mentor_priority: f64,
    /// Court someone liked above this; default 0.6.
    pub court_affinity_above: f64,
    /// Priority of courtship at full affinity (linear from the line); default 1.0.
    pub court_drive: f64,
    /// Courtship's pull is × how much the other likes the suitor back, from nothing at this
    /// affinity to whole at `court_affinity_above`; default 0.3.
    pub court_returned_floor: f64,
    /// How much each recent interaction of a kind dulls its pull for the NPCs who took part:
    /// a kind's priority and promised need deltas are × `1 / (1 + weight · familiarity)`, the
    /// familiarity counting each interaction of that kind as one, halving every
    /// `habituation_half_life_hours`; default 0.25.
    pub habituation_weight: f64,
    /// Game hours for familiarity with a kind to halve; default 24.
    pub habituation_half_life_hours: f64,
}

impl Default for AdvertConfig {
    fn default() -> Self {
        Self {
            conversation_priority: 0.2,
            trade_priority: 0.2,
            gossip_priority: 0.6,
            gossip_influence_base: 0.5,
            argue_trust_below: 0.4,
            argue_drive: 1.0,
            favor_need_below: 0.35,
            favor_trust_above: 0.5,
            intimidate_respect_below: 0.4,
            intimidate_drive: 0.6,
            scheme_victim_trust_below: 0.35,
            scheme_partner_trust_above: 0.55,
            scheme_drive: 0.3,
            mentor_purpose_gap: 0.2,
            mentor_priority: 0.3,
            court_affinity_above: 0.6,
            court_drive: 1.0,
            court_returned_floor: 0.3,
            habituation_weight: 0.25,
            habituation_half_life_hours: 24.0,
        }
    }
}

/// Every kind's rule and the advertisement lines.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct InteractionConfig {
    /// One rule per kind, in [`InteractionKind::ALL`] order (the kinds' effects are part of
    /// the model, not settings).
    #[serde(skip)]
    pub rules: [(InteractionKind, InteractionRule); 9],
    /// When kinds are advertised.
    pub adverts: AdvertConfig,
    /// Trust lost by a scheme's target in its victim when the scheme succeeds; default 0.1.
    pub scheme_victim_trust_loss: f64,
}

fn rule(
    base_chance: f64,
    chance_facet: Facet,
    chance_weight: f64,
    on_success: Effects,
    on_rejection: Effects,
) -> InteractionRule {
    InteractionRule {
        base_chance,
        chance_facet,
        chance_weight,
        on_success,
        on_rejection,
    }
}

/// Regard changes: trust, respect, loyalty, affinity.
const fn regard(trust: f64, respect: f64, loyalty: f64, affinity: f64) -> FacetDeltas {
    FacetDeltas {
        trust,
        respect,
        loyalty,
        affinity,
    }
}

/// Need changes: social, economic, survival, purpose, ambition.
const fn needs(
    social: f64,
    economic: f64,
    survival: f64,
    purpose: f64,
    ambition: f64,
) -> NeedDeltas {
    NeedDeltas {
        social,
        economic,
        survival,
        purpose,
        ambition,
    }
}

/// Effects: (initiator's regard, target's regard), (initiator's needs, target's needs),
/// (initiator's mood, target's mood).
const fn effects(
    (initiator_regard, target_regard): (FacetDeltas, FacetDeltas),
    (initiator_needs, target_needs): (NeedDeltas, NeedDeltas),
    (initiator_mood, target_mood): (f64, f64),
) -> Effects {
    Effects {
        initiator_regard,
        target_regard,
        initiator_needs,
        target_needs,
        initiator_mood,
        target_mood,
    }
}

const CALM: FacetDeltas = regard(0.0, 0.0, 0.0, 0.0);
const UNMOVED: NeedDeltas = needs(0.0, 0.0, 0.0, 0.0, 0.0);

impl Default for InteractionConfig {
    /// The table of the module header.
    fn default() -> Self {
        use Facet::{Affinity, Respect, Trust};
        let warm = regard(0.02, 0.0, 0.0, 0.04);
        let chatted = needs(0.15, 0.0, 0.0, 0.0, 0.0);
        let conversation = rule(
            0.4,
            Affinity,
            0.6,
            effects((warm, warm), (chatted, chatted), (0.05, 0.05)),
            effects(
                (regard(0.0, 0.0, 0.0, -0.02), CALM),
                (UNMOVED, UNMOVED),
                (0.0, 0.0),
            ),
        );
        let shared = regard(0.0, 0.0, 0.0, 0.02);
        let gossip = rule(
            1.0,
            Trust,
            0.0,
            effects(
                (shared, shared),
                (
                    needs(0.1, 0.0, 0.0, 0.0, 0.0),
                    needs(0.1, 0.0, 0.0, 0.0, 0.0),
                ),
                (0.03, 0.0),
            ),
            effects(
                (CALM, CALM),
                (needs(0.05, 0.0, 0.0, 0.0, 0.0), UNMOVED),
                (0.0, 0.0),
            ),
        );
        let fair = regard(0.03, 0.02, 0.0, 0.0);
        let paid = needs(0.0, 0.12, 0.0, 0.0, 0.0);
        let trade = rule(
            0.3,
            Trust,
            0.7,
            effects((fair, fair), (paid, paid), (0.05, 0.05)),
            effects(
                (regard(-0.02, 0.0, 0.0, 0.0), CALM),
                (UNMOVED, UNMOVED),
                (0.0, 0.0),
            ),
        );
        // Trust and affinity sour both ways; the loser respects the winner a little more, the
        // winner the loser less.
        let (won, lost) = (
            regard(-0.1, -0.05, 0.0, -0.08),
            regard(-0.1, 0.03, 0.0, -0.08),
        );
        let sour = needs(-0.05, 0.0, 0.0, 0.0, 0.0);
        let argument = rule(
            0.25,
            Respect,
            0.5,
            effects((won, lost), (sour, sour), (-0.05, -0.15)),
            effects((lost, won), (sour, sour), (-0.15, -0.05)),
        );
        let favor = rule(
            0.0,
            Trust,
            1.0,
            effects(
                (regard(0.05, 0.0, 0.1, 0.0), regard(0.0, 0.0, 0.0, 0.03)),
                (
                    needs(0.0, 0.1, 0.0, 0.0, 0.0),
                    needs(0.0, 0.0, 0.0, 0.05, 0.0),
                ),
                (0.1, 0.05),
            ),
            effects(
                (regard(0.0, 0.0, -0.08, -0.04), CALM),
                (UNMOVED, UNMOVED),
                (-0.05, 0.0),
            ),
        );
        let intimidation = rule(
            0.25,
            Respect,
            0.5,
            effects(
                (CALM, regard(-0.15, 0.05, 0.0, -0.1)),
                (
                    needs(0.0, 0.08, 0.0, 0.0, 0.05),
                    needs(0.0, 0.0, -0.1, 0.0, 0.0),
                ),
                (0.05, -0.2),
            ),
            effects(
                (CALM, regard(-0.05, -0.1, 0.0, 0.0)),
                (UNMOVED, UNMOVED),
                (-0.05, 0.0),
            ),
        );
        let plotting = regard(0.03, 0.0, 0.08, 0.0);
        let emboldened = needs(0.0, 0.0, 0.0, 0.0, 0.05);
        let scheming = rule(
            0.0,
            Trust,
            1.0,
            effects((plotting, plotting), (emboldened, emboldened), (0.0, 0.0)),
            effects(
                (CALM, regard(-0.12, 0.0, 0.0, 0.0)),
                (UNMOVED, UNMOVED),
                (0.0, 0.0),
            ),
        );
        let mentoring = rule(
            0.5,
            Respect,
            0.5,
            effects(
                (CALM, regard(0.0, 0.06, 0.03, 0.0)),
                (
                    needs(0.0, 0.0, 0.0, 0.06, 0.0),
                    needs(0.0, 0.0, 0.0, 0.12, 0.05),
                ),
                (0.05, 0.05),
            ),
            effects(
                (regard(0.0, -0.03, 0.0, 0.0), CALM),
                (UNMOVED, UNMOVED),
                (0.0, 0.0),
            ),
        );
        let love = regard(0.0, 0.0, 0.05, 0.1);
        let courtship = rule(
            0.0,
            Affinity,
            1.0,
            effects((love, love), (chatted, chatted), (0.2, 0.1)),
            effects(
                (regard(0.0, 0.0, 0.0, 0.02), regard(0.0, 0.0, 0.0, -0.02)),
                (needs(-0.05, 0.0, 0.0, 0.0, 0.0), UNMOVED),
                (-0.2, 0.0),
            ),
        );
        Self {
            rules: [
                (InteractionKind::Conversation, conversation),
                (InteractionKind::Gossip, gossip),
                (InteractionKind::Trade, trade),
                (InteractionKind::Argument, argument),
                (InteractionKind::Favor, favor),
                (InteractionKind::Intimidation, intimidation),
                (InteractionKind::Scheming, scheming),
                (InteractionKind::Mentoring, mentoring),
                (InteractionKind::Courtship, courtship),
            ],
            adverts: AdvertConfig::default(),
            scheme_victim_trust_loss: 0.1,
        }
    }
}

impl InteractionConfig {
    /// The rule of `kind`.
    pub fn rule(&self, kind: InteractionKind) -> &InteractionRule {
        self.rules
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(&self.rules[0].1, |(_, r)| r)
    }

    /// Resolves `kind` between the two with a uniform draw `draw` in [0, 1): success when the
    /// draw falls below the rule's chance. Returns (success, chance, the effects that apply).
    pub fn resolve(
        &self,
        relationships: &Relationships,
        kind: InteractionKind,
        initiator: &str,
        target: &str,
        draw: f64,
    ) -> (bool, f64, Effects) {
        let rule = self.rule(kind);
        let chance = rule.chance(relationships, initiator, target);
        let success = draw < chance;
        let effects = if success {
            rule.on_success
        } else {
            rule.on_rejection
        };
        (success, chance, effects)
    }
}
