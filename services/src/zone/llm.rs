//! What the zone asks of the LLM seams: narration requests for witnessed interactions (with
//! the placeholder line written at once from the templates; the scene's mood, and the names
//! of the NPCs elsewhere that the model's text must not bring in) and perception requests for
//! a player's `say`. Sending them and reading answers is the service's.

use std::sync::Arc;

use geppetto_core::rng::{derive_seed, stable_hash};
use geppetto_llm::{
    LlmConfig, NarrationRequest, NpcRef, Participant, PerceptionContext, PerceptionRequest,
    Priority, SpendTags, TemplateProvider,
};

use super::status::Roster;
use super::{Zone, ZoneError, room_key};
use crate::bus::envelope::WorldMessage;

/// The word a narration prompt gets for an NPC's mood (in −1..=1): below the first bound
/// the first word, above the second the last, the middle word otherwise (and for an NPC
/// without a mood).
const MOOD_WORDS: (f64, f64, [&str; 3]) = (-0.25, 0.25, ["gloomy", "calm", "cheerful"]);

/// The placeholder writer over the embedded narration templates.
pub(super) fn default_narrator() -> Result<Arc<TemplateProvider>, ZoneError> {
    let assets = crate::content::llm_assets::embedded_assets()
        .map_err(|e| ZoneError::Spec(e.to_string()))?;
    Ok(crate::content::llm_assets::placeholder_writer(
        &assets,
        &LlmConfig::default(),
    ))
}

impl Zone {
    /// Uses `narrator` for placeholder lines (narration templates loaded from elsewhere than
    /// the embedded ones).
    pub fn set_narrator(&mut self, narrator: Arc<TemplateProvider>) {
        self.content.narrator = narrator;
    }

    pub(super) fn display_name(&self, id: &str) -> String {
        self.npc_index(id)
            .map_or_else(|| id.to_owned(), |index| self.meta[index].name.to_string())
    }

    /// The narration request of an interaction `interaction_id` of NPC `index` with `other`
    /// in `room`, named after the action that brought them together (`chat at the well`;
    /// the templates are keyed by such names).
    pub(super) fn narration_request(
        &mut self,
        interaction_id: &str,
        index: usize,
        other: &str,
        room: usize,
        action: &str,
    ) -> NarrationRequest {
        let (known, present) = self.names_for_narration(room);
        let id = &self.agents[index].agent.id;
        NarrationRequest {
            interaction_id: interaction_id.to_owned(),
            zone: self.name.clone(),
            room: room_key(&self.room_names, room).to_owned(),
            initiator: Participant {
                id: id.clone(),
                name: self.meta[index].name.to_string(),
            },
            target: Participant {
                id: other.to_owned(),
                name: self.display_name(other),
            },
            interaction: action.replace('_', " "),
            mood: self.mood_word(index).to_owned(),
            known,
            present,
            priority: Priority::Witnessed,
            seed: derive_seed(self.seed, stable_hash(interaction_id)),
            tags: self.spend_tags(index),
        }
    }

    /// NPC `index`'s class (archetype) and tier, which its LLM spend is filed under.
    pub(super) fn spend_tags(&self, index: usize) -> SpendTags {
        self.meta
            .get(index)
            .map_or_else(SpendTags::default, |meta| SpendTags {
                class: meta.archetype.as_deref().map(str::to_owned),
                tier: Some(meta.tier.tier.as_str().to_owned()),
            })
    }

    /// What a narration in `room` is checked against: the names of the NPCs near players
    /// (shared) and of those in the room. Those far from every player are left out, so the
    /// check grows with the players' surroundings, not with the zone.
    pub(super) fn names_for_narration(&mut self, room: usize) -> (Arc<[String]>, Vec<String>) {
        let (meta, presence, rooms) = (&self.meta, &self.presence, self.room_names.len());
        let roster = (self.derived.roster).get_or_insert_with(|| Roster::of(meta, presence, rooms));
        let present = roster
            .by_room
            .get(room)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|&i| meta[i].name.to_string())
            .collect();
        (Arc::clone(&roster.known_names), present)
    }

    pub(super) fn mood_word(&self, index: usize) -> &'static str {
        let (low, high, [gloomy, calm, cheerful]) = MOOD_WORDS;
        match self.agents[index]
            .layers
            .wellbeing
            .as_deref()
            .map(|(_, w)| w.mood)
        {
            Some(mood) if mood < low => gloomy,
            Some(mood) if mood > high => cheerful,
            _ => calm,
        }
    }

    /// What perception needs to read a player's line: the NPCs of the room spoken in (all of
    /// the zone's when the game names no room), by id and name.
    pub(super) fn perception_request(
        &self,
        message: &WorldMessage,
        speaker: &str,
        room: &Option<String>,
        text: &str,
        addressee: &Option<String>,
    ) -> PerceptionRequest {
        let room_index = room.as_deref().and_then(|r| self.rooms.room(r));
        let npcs = self
            .agents
            .iter()
            .zip(&self.meta)
            .filter(|(_, meta)| room_index.is_none_or(|r| meta.room == r))
            .map(|(agent, meta)| NpcRef {
                id: agent.agent.id.clone(),
                name: meta.name.to_string(),
                zone: self.name.clone(),
            })
            .collect();
        PerceptionRequest {
            utterance_id: message.header.id.clone(),
            speaker: speaker.to_owned(),
            text: text.to_owned(),
            context: PerceptionContext {
                zone: self.name.clone(),
                room: room.clone().unwrap_or_default(),
                addressee: addressee.clone(),
                npcs,
            },
            priority: Priority::Witnessed,
            seed: derive_seed(self.seed, stable_hash(&message.header.id)),
            // The spend of reading a line is the addressee's, when it is one of ours.
            tags: addressee
                .as_deref()
                .and_then(|id| self.npc_index(id))
                .map(|index| self.spend_tags(index))
                .unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::envelope::{WorldEvent, header};
    use crate::zone::testing::*;
    use crate::zone::{GovernorScript, TickInputs, ZoneOutput};
    use geppetto_llm::LlmRequest;

    #[test]
    fn a_said_line_asks_perception_about_the_npcs_of_its_room_unless_replaying() {
        let mut zone = village();
        let said = || WorldEvent::Say {
            speaker: "p1".into(),
            room: Some("forge".into()),
            text: "Bram, lend me your hammer".into(),
            addressee: Some("bram".into()),
        };
        let message = WorldMessage {
            header: header("say-1", "village", zone.game_time),
            event: said(),
        };
        let mut out = ZoneOutput::default();
        zone.apply(&message, &live(), &mut out);
        // Bram answers (a narration request for the model's line, see `zone::reply`), and
        // perception reads the line.
        let perceptions: Vec<_> = out
            .llm
            .iter()
            .filter_map(|r| match r {
                LlmRequest::Perception(p) => Some(p),
                LlmRequest::Narration(_) => None,
            })
            .collect();
        let [request] = perceptions[..] else {
            panic!("one perception request: {:?}", out.llm);
        };
        assert_eq!(request.utterance_id, "say-1");
        assert_eq!(request.context.addressee.as_deref(), Some("bram"));
        let bram = zone.npc_index("bram").expect("bram");
        assert_eq!(
            request.tags.class.as_deref(),
            zone.meta[bram].archetype.as_deref()
        );
        assert_eq!(
            request.tags.tier.as_deref(),
            Some(zone.meta[bram].tier.tier.as_str())
        );
        let forge = zone.rooms.room("forge").expect("forge");
        let expected: Vec<&str> = zone
            .agents
            .iter()
            .zip(&zone.meta)
            .filter(|(_, meta)| meta.room == forge)
            .map(|(agent, _)| agent.agent.id.as_str())
            .collect();
        let named: Vec<&str> = request.context.npcs.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(named, expected);
        assert!(named.contains(&"bram"));

        let script = GovernorScript::new();
        let mut out = ZoneOutput::default();
        zone.apply(&message, &TickInputs::replaying(&still, &script), &mut out);
        assert!(
            !out.llm
                .iter()
                .any(|r| matches!(r, LlmRequest::Perception(_))),
            "a replayed say is not perceived again"
        );
    }
}
