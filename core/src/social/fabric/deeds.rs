//! A player's deed toward NPCs, as the game reports how a quest about them ended: each NPC
//! involved regards the doer anew — more trust, respect and affinity for one who helped them,
//! less for one who harmed them, a share of the loss for one who failed them — and holds a
//! first-hand rumour about it, told on as any rumour is (so the village hears of it).

use super::record::StepAt;
use super::state::SocialFabric;
use crate::social::gossip::{Gossip, GossipIntent, RumourTopic};
use crate::social::interaction::FacetDeltas;

geppetto_wire_enum::wire_enum! {
    /// What a player's deed was to the NPCs a quest was about.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Deed {
        /// The quest was done for them (the purse returned, the quarrel settled).
        Helped = "helped",
        /// The player took the quest on and let it fail.
        Failed = "failed",
        /// The player acted against them.
        Harmed = "harmed",
    }
}

impl Deed {
    /// The sign and share of the deed's effects: +1 helped, −1 harmed, −`failed_share` failed.
    pub fn weight(self, failed_share: f64) -> f64 {
        match self {
            Self::Helped => 1.0,
            Self::Failed => -failed_share,
            Self::Harmed => -1.0,
        }
    }
}

impl SocialFabric {
    /// `npc` remembers `doer`'s `deed` (`what`: the quest, for the rumour's origin) at `at`'s
    /// place and hour: its regard for the doer moves by the `deed_*` numbers, weighted by
    /// [`Deed::weight`], and it holds a first-hand rumour about the doer (a bond for help, a
    /// warning for harm; none for a failure). The regard's changes are `at`'s story events.
    pub fn remember_deed(
        &mut self,
        npc: &str,
        doer: &str,
        (deed, what): (Deed, &str),
        at: &mut StepAt<'_>,
    ) {
        let weight = deed.weight(self.config.deed_failed_share);
        let regard = FacetDeltas {
            trust: weight * self.config.deed_trust,
            respect: weight * self.config.deed_respect,
            affinity: weight * self.config.deed_affinity,
            ..FacetDeltas::default()
        };
        let cause = format!("deed:{}:{what}", deed.as_str());
        self.change_regard(npc, doer, &regard, &cause, at);
        let intent = match deed {
            Deed::Helped => GossipIntent::Bond,
            Deed::Harmed => GossipIntent::Warn,
            Deed::Failed => return,
        };
        self.learn(
            npc,
            Gossip {
                subject: doer.to_owned(),
                kind: RumourTopic::Person,
                intent,
                about_person: true,
                confidence: self.config.deed_confidence,
                origin_event: format!("{}:{doer}:{what}", deed.as_str()),
                depth: 0,
                holder: npc.to_owned(),
            },
        );
    }
}
