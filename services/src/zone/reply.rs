//! What an NPC says back when a player speaks to it: the NPC a `say` is addressed to (named
//! by the game, named in the line, or the only one in the room), and its `reply` intent — a
//! line from its archetype's replies (else the defaults) chosen by its regard for the speaker,
//! its mood and whether it is busy, the same in a replay as live (an NPC the game has engaged
//! does not answer: the game speaks for it). The line goes out at once;
//! with a model configured, an in-character line may follow as `narrative_ready` under the
//! reply's id (off-tick, through the narration seam, never touching state).

use geppetto_core::life::reply::{self, ReplyTemplate, Situation, Tone};
use geppetto_core::rng::{derive_seed, stable_hash};
use geppetto_llm::{LlmRequest, NarrationRequest, Participant, Priority};

use crate::bus::StreamKind;
use crate::bus::envelope::{Intent, WorldMessage};
use crate::zone::{NpcMeta, Zone, ZoneOutput, room_key};

/// A player's line, as a `say` carries it.
pub(super) struct Said<'a> {
    pub speaker: &'a str,
    pub room: Option<&'a str>,
    pub text: &'a str,
    pub addressee: Option<&'a str>,
}

/// The lowercase words of `text` (letters and digits).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

impl Zone {
    /// The NPC `said` is addressed to: the one the game names (by id, full name or first
    /// name), else, among the NPCs of the room it was said in (the zone's when the game names
    /// no room), the only one the line names, else the only one there.
    pub(super) fn addressed(&mut self, said: &Said<'_>) -> Option<usize> {
        let first_name = |meta: &[NpcMeta], index: usize| {
            let name = &meta[index].name;
            name.split_whitespace()
                .next()
                .unwrap_or(name)
                .to_lowercase()
        };
        if let Some(addressee) = said.addressee {
            let wanted = addressee.to_lowercase();
            return self.npc_index(addressee).or_else(|| {
                (0..self.agents.len()).find(|&i| {
                    self.meta[i].name.to_lowercase() == wanted
                        || first_name(&self.meta, i) == wanted
                })
            });
        }
        let room = match said.room {
            Some(room) => Some(self.rooms.room(room)?),
            None => None,
        };
        let there: Vec<usize> = match room {
            Some(room) => self.npcs_in(room).to_vec(),
            None => (0..self.agents.len()).collect(),
        };
        let words = words(said.text);
        let named: Vec<usize> = there
            .iter()
            .copied()
            .filter(|&i| {
                let id = self.agents[i].agent.id.to_lowercase();
                words
                    .iter()
                    .any(|w| *w == id || *w == first_name(&self.meta, i))
            })
            .collect();
        match (named.as_slice(), there.as_slice()) {
            ([one], _) => Some(*one),
            ([], [only]) if room.is_some() => Some(*only),
            _ => None,
        }
    }

    /// The addressed NPC answers `said` (`message`): a `reply` intent with its line, and a
    /// narration request for the model's line under the reply's id.
    pub(super) fn reply(&mut self, message: &WorldMessage, said: &Said<'_>, out: &mut ZoneOutput) {
        // An NPC the game has taken over (a fight, a dialogue) speaks as the game makes it.
        let Some(index) = self
            .addressed(said)
            .filter(|&i| self.agents[i].layers.engaged.is_none())
        else {
            return;
        };
        let seed = derive_seed(self.seed, stable_hash(&message.header.id));
        let npc = &self.agents[index];
        let config = &self.social.fabric.config;
        let regard = self
            .social
            .fabric
            .relationships
            .get(&npc.agent.id, said.speaker);
        let situation = Situation {
            tone: Tone::of(
                (regard.trust, regard.affinity),
                config.reply_warm_above,
                config.reply_cold_below,
            ),
            mood: npc.layers.wellbeing.as_deref().map_or(0.0, |(_, w)| w.mood),
            busy: npc.running.is_some(),
        };
        let activity = npc.running.as_ref().map_or_else(
            || "nothing much".to_owned(),
            |r| r.action.id.replace('_', " "),
        );
        let defaults;
        let own: &[ReplyTemplate] = npc.layers.replies.as_deref().map_or(&[], Vec::as_slice);
        let template = match reply::choose(own, &situation, seed) {
            Some(template) => template,
            None => {
                defaults = reply::default_replies();
                match reply::choose(&defaults, &situation, seed) {
                    Some(template) => template,
                    None => return,
                }
            }
        };
        let text = template
            .text
            .replace("{speaker}", said.speaker)
            .replace("{name}", &self.meta[index].name)
            .replace("{activity}", &activity);
        let intent = Intent::Reply {
            npc: npc.agent.id.clone(),
            to: said.speaker.to_owned(),
            text,
            in_reply_to: message.header.id.clone(),
        };
        let header = self.publish(index, StreamKind::Intents, &intent, out);
        let request = self.reply_narration(&header.id, index, said, situation.tone);
        out.llm.push(LlmRequest::Narration(request));
    }

    /// The narration request for the model's line of NPC `index` replying to `said`.
    fn reply_narration(
        &mut self,
        reply_id: &str,
        index: usize,
        said: &Said<'_>,
        tone: Tone,
    ) -> NarrationRequest {
        let room = self.meta[index].room;
        let (known, present) = self.names_for_narration(room);
        NarrationRequest {
            interaction_id: reply_id.to_owned(),
            zone: self.name.clone(),
            room: room_key(&self.room_names, room).to_owned(),
            initiator: Participant {
                id: self.agents[index].agent.id.clone(),
                name: self.meta[index].name.to_string(),
            },
            target: Participant {
                id: said.speaker.to_owned(),
                name: said.speaker.to_owned(),
            },
            interaction: format!(
                "answer ({} toward them) to their words: \"{}\"",
                tone.as_str(),
                said.text
            ),
            mood: self.mood_word(index).to_owned(),
            known,
            present,
            priority: Priority::Witnessed,
            seed: derive_seed(self.seed, stable_hash(reply_id)),
            tags: self.spend_tags(index),
        }
    }
}

#[cfg(test)]
mod tests {
    use geppetto_core::social::relationships::Facet;
    use geppetto_llm::LlmRequest;
    use serde_json::Value;

    use crate::bus::StreamKind;
    use crate::bus::envelope::{WorldEvent, WorldMessage, header};
    use crate::zone::testing::*;
    use crate::zone::{GovernorScript, TickInputs, Zone, ZoneOutput};

    fn say(room: &str, text: &str, addressee: Option<&str>) -> WorldEvent {
        WorldEvent::Say {
            speaker: "ann".into(),
            room: Some(room.into()),
            text: text.into(),
            addressee: addressee.map(str::to_owned),
        }
    }

    fn replies(out: &ZoneOutput) -> Vec<Value> {
        out.messages
            .iter()
            .filter(|(stream, _)| *stream == StreamKind::Intents)
            .map(|(_, line)| serde_json::from_str::<Value>(line).expect("json"))
            .filter(|v| v["type"] == "reply")
            .collect()
    }

    /// Moves NPC `npc`'s regard for Ann to `warmth` (trust and affinity both).
    fn regard_ann(zone: &mut Zone, npc: &str, warmth: f64) {
        let relationships = &mut zone.social.fabric.relationships;
        for facet in [Facet::Trust, Facet::Affinity] {
            let now = relationships.value(npc, "ann", facet);
            relationships.adjust(npc, "ann", facet, warmth - now, 0.0);
        }
    }

    #[test]
    fn the_npc_named_in_a_line_answers_it_at_once_and_the_model_may_follow() {
        let mut zone = village();
        let out = apply_as(
            &mut zone,
            "say-1",
            say("forge", "Bram, lend me a hammer?", None),
        );
        let [reply] = &replies(&out)[..] else {
            panic!("one reply: {:?}", out.messages);
        };
        assert_eq!(reply["npc"], "bram");
        assert_eq!(reply["to"], "ann");
        assert_eq!(reply["in_reply_to"], "say-1");
        let text = reply["text"].as_str().expect("text");
        assert!(!text.is_empty() && !text.contains('{'), "{text}");
        let narration = out.llm.iter().find_map(|r| match r {
            LlmRequest::Narration(n) => Some(n),
            LlmRequest::Perception(_) => None,
        });
        let narration = narration.expect("a narration request for the model's line");
        assert_eq!(narration.interaction_id, reply["id"].as_str().expect("id"));
        assert!(narration.interaction.contains("lend me a hammer"));
    }

    #[test]
    fn the_addressee_is_the_named_one_else_the_only_one_there_else_nobody() {
        let mut zone = village();
        // By the game's addressee, by id or by name.
        let out = apply_as(&mut zone, "a1", say("square", "hello", Some("bram")));
        assert_eq!(replies(&out)[0]["npc"], "bram");
        let out = apply_as(
            &mut zone,
            "a2",
            say("square", "hello", Some("Mira the baker")),
        );
        assert_eq!(replies(&out)[0]["npc"], "mira");
        // A room with several NPCs and a line naming none of them: nobody answers.
        let there = |zone: &Zone, room: &str| {
            let room = zone.rooms.room(room).expect("room");
            zone.meta.iter().filter(|m| m.room == room).count()
        };
        assert!(there(&zone, "forge") > 1);
        let out = apply_as(&mut zone, "a3", say("forge", "hello, anyone?", None));
        assert!(replies(&out).is_empty());
        // An unknown room: nobody.
        let out = apply_as(&mut zone, "a4", say("nowhere", "Bram?", None));
        assert!(replies(&out).is_empty());
    }

    #[test]
    fn the_line_follows_the_regard_for_the_speaker() {
        let mut zone = village();
        // Roderick is a guard: the archetype's own lines.
        regard_ann(&mut zone, "roderick", 0.9);
        let out = apply_as(&mut zone, "w1", say("lane", "Roderick!", None));
        let warm = replies(&out)[0]["text"].as_str().expect("text").to_owned();
        assert!(warm.contains("honest face"), "{warm}");
        regard_ann(&mut zone, "roderick", 0.1);
        let out = apply_as(&mut zone, "c1", say("lane", "Roderick!", None));
        let cold = replies(&out)[0]["text"].as_str().expect("text").to_owned();
        assert!(cold.contains("my eye on you, ann"), "{cold}");
    }

    #[test]
    fn a_replayed_say_gets_the_same_reply() {
        let message = WorldMessage {
            header: header("say-9", "village", 0),
            event: say("forge", "Bram, how goes the work?", None),
        };
        let mut live_zone = village();
        let mut out = ZoneOutput::default();
        live_zone.apply(&message, &live(), &mut out);
        let mut replayed = village();
        let script = GovernorScript::new();
        let mut again = ZoneOutput::default();
        replayed.apply(
            &message,
            &TickInputs::replaying(&still, &script),
            &mut again,
        );
        assert_eq!(replies(&out), replies(&again));
        assert_eq!(replies(&again).len(), 1);
    }
}
