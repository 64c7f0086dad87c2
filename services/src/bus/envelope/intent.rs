//! The intents geppetto writes to a zone's `intents` stream: what the game should make an NPC
//! do next (walk, use a provider, interact, speak, stop, react). Declared once as the
//! internally tagged serde enum [`Intent`]; [`super::to_envelope`] puts the header in front.

use serde::Serialize;

/// What geppetto tells the game an NPC now does.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Intent {
    /// Walk to a room (to reach a provider).
    Navigate {
        /// NPC id.
        npc: String,
        /// Room it is in.
        from_room: String,
        /// Room to reach.
        to_room: String,
        /// The provider it is heading for.
        provider: String,
    },
    /// Use an advertised action of a provider.
    Use {
        /// NPC id.
        npc: String,
        /// Provider id.
        provider: String,
        /// Action id.
        action: String,
        /// How long it lasts, in ticks.
        duration_ticks: u64,
        /// Whether a player ordered it.
        player_queued: bool,
    },
    /// Interact with other NPCs at the same place.
    Social {
        /// NPC id.
        npc: String,
        /// The others.
        with: Vec<String>,
        /// The action that brings them together.
        action: String,
        /// Where.
        provider: String,
        /// Whether a player is in the room to see it (only then is it narrated).
        witnessed: bool,
        /// For a witnessed interaction, the placeholder line to show now; model text may
        /// follow as `narrative_ready` on the narrative stream, under this intent's id.
        #[serde(skip_serializing_if = "Option::is_none")]
        narration: Option<String>,
    },
    /// Say a line aloud.
    Bark {
        /// NPC id.
        npc: String,
        /// The line.
        text: String,
    },
    /// Answer a player who spoke to the NPC (a `say`): show the line to them at once; with a
    /// model configured, an in-character line may follow as `narrative_ready` under this
    /// intent's id.
    Reply {
        /// NPC id.
        npc: String,
        /// The speaker answered (the `say`'s `speaker`).
        to: String,
        /// The line.
        text: String,
        /// The id of the `say` answered.
        in_reply_to: String,
    },
    /// Stop carrying out an earlier intent.
    Cancel {
        /// NPC id.
        npc: String,
        /// The id of the cancelled intent.
        cancelled: String,
        /// Why: `preempted`, `interrupted`, `timeout`, `moved`, `ordered`, `order_cancelled`,
        /// `relocated`, `demoted`, `caught_up`, `despawned`, or the reason of an `npc_engaged`.
        reason: String,
    },
    /// A reactive set's action (flee, call the guard…).
    Reactive {
        /// NPC id.
        npc: String,
        /// The set.
        set: String,
        /// The set's action.
        action: String,
    },
}

impl Intent {
    /// The NPC the intent is for.
    pub fn npc(&self) -> &str {
        match self {
            Self::Navigate { npc, .. }
            | Self::Use { npc, .. }
            | Self::Social { npc, .. }
            | Self::Bark { npc, .. }
            | Self::Reply { npc, .. }
            | Self::Cancel { npc, .. }
            | Self::Reactive { npc, .. } => npc,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::envelope::{header, to_envelope};
    use serde_json::Value;

    #[test]
    fn intents_carry_the_envelope_header_and_type() {
        let line = to_envelope(
            &header("village:bram:7:0", "village", 7),
            &Intent::Cancel {
                npc: "bram".into(),
                cancelled: "village:bram:3:1".into(),
                reason: "preempted".into(),
            },
        );
        let value: Value = serde_json::from_str(&line).expect("json");
        assert_eq!(value["v"], 1);
        assert_eq!(value["type"], "cancel");
        assert_eq!(value["zone"], "village");
        assert_eq!(value["game_time"], 7);
        assert_eq!(value["cancelled"], "village:bram:3:1");
    }
}
