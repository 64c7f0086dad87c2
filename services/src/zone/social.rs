//! The zone's share of social life: this tick's slice of the social step over the rooms and
//! who is in them, the story detector's signals, and a social step's interactions, rumours and
//! goals as messages (narrated when witnessed). The rules of social life are `social_life`'s
//! and the core's.

use geppetto_core::social::{SocialPlace, SocialStep, Whereabouts};
use geppetto_core::story::StoryEventKind;
use geppetto_llm::LlmRequest;

use super::social_life::StoryMessage;
use super::status::{Roster, room_place};
use super::{Zone, ZoneOutput};
use crate::bus::StreamKind;
use crate::bus::envelope::{NpcEvent, header};

impl Zone {
    /// NPC `index`'s place for the story detector.
    pub(super) fn social_place(&self, index: usize) -> SocialPlace {
        self.room_place(self.meta[index].room)
    }

    /// Room `room` as a place of social life: its id and the players in it.
    pub(super) fn room_place(&self, room: usize) -> SocialPlace {
        room_place(&self.presence, &self.room_names, room)
    }

    pub(super) fn social_tick(&mut self, out: &mut ZoneOutput) {
        let now_hours = self.now_hours();
        // A share of the step every tick: the rooms' places (one per room, not per NPC) and
        // where each NPC is, both kept between ticks until someone moves.
        let (meta, presence, names) = (&self.meta, &self.presence, &self.room_names);
        let roster =
            (self.derived.roster).get_or_insert_with(|| Roster::of(meta, presence, names.len()));
        let places = self.derived.places.get_or_insert_with(|| {
            (0..names.len())
                .map(|room| room_place(presence, names, room))
                .collect()
        });
        let started: Option<Vec<usize>> = (self.derived.started.take()).map(Vec::from_iter);
        let step = self.social.step(
            &mut self.agents,
            Whereabouts {
                places,
                at: &roster.social_at,
                by_place: &roster.social_by_room,
                present: &roster.social_present,
                started: started.as_deref(),
            },
            now_hours,
            self.tick,
            self.content.simulator.decider(),
        );
        self.publish_social(step, out);
        for message in self.social.signals(now_hours, self.full_tick_hours) {
            self.push_story(&message, out);
        }
    }

    /// `message` on the `story` stream, under an id made of the signal's.
    pub(super) fn push_story(&self, message: &StoryMessage, out: &mut ZoneOutput) {
        let id = format!(
            "{}:story:{}{}",
            self.name,
            message.signal().signal,
            message.id_suffix(self.game_time)
        );
        let h = header(id, &self.name, self.game_time);
        out.push(StreamKind::Story, &h, message);
    }

    /// A social step's interactions (narrated when witnessed), rumours and goals as messages;
    /// then its story events go to the detector.
    pub(super) fn publish_social(&mut self, step: SocialStep, out: &mut ZoneOutput) {
        let SocialStep {
            interactions,
            events,
            goals_created,
        } = step;
        for interaction in interactions {
            let Some(index) = self.npc_index(&interaction.initiator) else {
                continue;
            };
            let h = self.header_for(index);
            let kind = interaction.kind.as_str();
            let narration = interaction.witnessed.then(|| {
                let room = self.meta[index].room;
                let request = self.narration_request(&h.id, index, &interaction.target, room, kind);
                let placeholder = self.content.narrator.narrate_now(&request);
                out.llm.push(LlmRequest::Narration(request));
                placeholder
            });
            let body = NpcEvent::Interaction {
                npc: interaction.initiator,
                with: interaction.target,
                kind: kind.to_owned(),
                success: interaction.success,
                witnessed: interaction.witnessed,
                narration,
            };
            out.push(StreamKind::NpcEvents, &h, &body);
        }
        for event in &events {
            if let StoryEventKind::RumourHeard {
                listener,
                teller,
                subject,
                gossip,
                accepted,
                ..
            } = &event.kind
            {
                let Some(index) = self.npc_index(listener) else {
                    continue;
                };
                let body = NpcEvent::RumourHeard {
                    npc: listener.clone(),
                    teller: teller.clone(),
                    subject: subject.clone(),
                    gossip: gossip.as_str().to_owned(),
                    believed: *accepted,
                };
                self.publish(index, StreamKind::NpcEvents, &body, out);
            }
        }
        for (npc, goal) in goals_created {
            if let Some(index) = self.npc_index(&npc) {
                let body = NpcEvent::GoalCreated {
                    npc,
                    description: goal.description.clone(),
                    goal: self.goal_fields(&goal),
                };
                self.publish(index, StreamKind::NpcEvents, &body, out);
            }
        }
        self.social.feed(events);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::envelope::{WorldEvent, WorldMessage};
    use crate::zone::testing::*;
    use crate::zone::tiers::Tier;

    /// The NPCs in rooms no player is near.
    fn away(zone: &Zone) -> Vec<String> {
        (0..zone.agents.len())
            .filter(|&i| zone.presence.room_tier(zone.meta[i].room) == Tier::Background)
            .map(|i| zone.agents[i].agent.id.clone())
            .collect()
    }

    #[test]
    fn npcs_away_from_every_player_take_no_part_in_social_life() {
        let mut zone = village();
        enter(&mut zone, "woods");
        let mut interactions = 0;
        for tick in 0..720 {
            let messages = advance(&mut zone, 1);
            let away = away(&zone);
            assert!(
                !away.is_empty(),
                "tick {tick}: someone is far from the woods"
            );
            for (_, message) in messages.iter().filter(|(s, _)| *s == StreamKind::NpcEvents) {
                let event: serde_json::Value = serde_json::from_str(message).expect("json");
                if event["type"] != "interaction" {
                    continue;
                }
                interactions += 1;
                for side in ["npc", "with"] {
                    let id = event[side].as_str().unwrap_or_default();
                    assert!(!away.iter().any(|a| a == id), "tick {tick}: {message}");
                }
            }
        }
        assert!(interactions > 0, "those near the player still meet");
    }

    #[test]
    fn a_narration_is_checked_against_the_names_near_players() {
        let mut zone = village();
        enter(&mut zone, "woods");
        advance(&mut zone, 5);
        let away = away(&zone);
        assert!(!away.is_empty());
        let near =
            |zone: &Zone, i: usize| zone.presence.room_tier(zone.meta[i].room) != Tier::Background;
        let here = (0..zone.agents.len())
            .find(|&i| near(&zone, i))
            .expect("someone near the player");
        let room = zone.meta[here].room;
        let first = zone.narration_request("i", here, "stranger", room, "chat");
        let known: Vec<String> = (0..zone.agents.len())
            .filter(|&i| near(&zone, i))
            .map(|i| zone.meta[i].name.to_string())
            .collect();
        let present: Vec<String> = (0..zone.agents.len())
            .filter(|&i| zone.meta[i].room == room)
            .map(|i| zone.meta[i].name.to_string())
            .collect();
        assert_eq!(first.known.to_vec(), known);
        assert_eq!(first.present, present);
        for id in &away {
            let name = &zone.meta[zone.npc_index(id).expect("npc")].name;
            assert!(
                !first.known.iter().any(|known| **known == **name),
                "{name} is far from every player"
            );
        }
        // One list serves every request until someone moves.
        let second = zone.narration_request("j", here, "stranger", room, "chat");
        assert!(std::sync::Arc::ptr_eq(&first.known, &second.known));
    }

    #[test]
    fn with_background_social_life_npcs_far_from_players_are_part_of_it() {
        let mut world = crate::content::world_file::embedded_village().expect("village");
        world.zone = "village".to_owned();
        let mut config = crate::zone::ZoneConfig::default();
        config.tiers.background_social_life = true;
        config.integration = crate::zone::IntegrationConfig::simulated();
        let mut zone = Zone::new(
            &world,
            &crate::content::profiles::ProfileLibrary::embedded().expect("profiles"),
            &crate::content::sets::SetLibrary::embedded().expect("sets"),
            config,
            crate::zone::isolation::IsolationState::default(),
        )
        .expect("zone");
        enter(&mut zone, "woods");
        advance(&mut zone, 5);
        let away = away(&zone);
        assert!(!away.is_empty());
        let here = zone.npc_index(&away[0]).expect("npc");
        let room = zone.meta[here].room;
        let request = zone.narration_request("i", here, "stranger", room, "chat");
        assert_eq!(request.known.len(), zone.agents.len(), "every NPC's name");
    }

    /// The village with story signals lapsing after `ttl_hours` without new evidence.
    fn village_with_signal_ttl(ttl_hours: f64) -> Zone {
        let mut world = crate::content::world_file::embedded_village().expect("village");
        world.zone = "village".into();
        let mut config = crate::zone::ZoneConfig::default();
        config.governor.tick_budget_ms_soft = 60_000.0;
        config.governor.tick_budget_ms_hard = 60_000.0;
        config.tick.npc_budget_ms = 60_000.0;
        config.integration = crate::zone::IntegrationConfig::simulated();
        config.story.signal_ttl_hours = ttl_hours;
        Zone::new(
            &world,
            &crate::content::profiles::ProfileLibrary::embedded().expect("profiles"),
            &crate::content::sets::SetLibrary::embedded().expect("sets"),
            config,
            crate::zone::isolation::IsolationState::default(),
        )
        .expect("zone")
    }

    #[test]
    fn a_signal_nobody_takes_lapses_on_the_wire_and_every_story_message_fits_its_schema() {
        let mut zone = village_with_signal_ttl(1.0);
        enter(&mut zone, "market");
        let mut out = advance(&mut zone, 60);
        out.extend(send(&mut zone, social("theft", "piet", &[], None)));
        out.extend(advance(&mut zone, 8 * 60));
        let day: Vec<serde_json::Value> = out
            .into_iter()
            .filter(|(stream, _)| *stream == StreamKind::Story)
            .map(|(_, m)| serde_json::from_str(&m).expect("json"))
            .collect();
        for message in &day {
            support::schema::check_schema("story", message);
        }
        let raised: Vec<&str> = day
            .iter()
            .filter(|m| m["type"] == "story_signal")
            .filter_map(|m| m["signal"].as_str())
            .collect();
        let lapsed: Vec<&serde_json::Value> = day
            .iter()
            .filter(|m| m["type"] == "story_signal_expired" && m["reason"] == "lapsed")
            .collect();
        assert!(!lapsed.is_empty(), "raised {raised:?}, none lapsed");
        for m in &lapsed {
            let signal = m["signal"].as_str().expect("signal");
            assert!(raised.contains(&signal), "{signal} lapsed, never raised");
            let expires_at = m["expires_at"].as_u64().expect("expires_at");
            assert!(m["game_time"].as_u64() >= Some(expires_at), "{m}");
        }
    }

    /// Vex works the crowd in the market of an evening (an act tagged `theft`) before a
    /// player there: a day of the village, the social step told who started an action each
    /// tick or (`forget`) looking at everyone present: what the zone wrote, and each NPC's
    /// regard for Vex at the end.
    fn a_day_of_the_thief(forget: bool) -> (Vec<(StreamKind, String)>, Vec<String>) {
        let mut zone = village();
        enter(&mut zone, "market");
        let mut out = Vec::new();
        for _ in 0..24 * 60 {
            if forget {
                zone.derived.started = super::super::status::Marked::Everyone;
            }
            out.extend(advance(&mut zone, 1));
        }
        let regard = (zone.agents.iter())
            .map(|a| a.agent.id.as_str())
            .map(|id| format!("{id} {:?}", zone.social.fabric.relationships.get(id, "vex")))
            .collect();
        (out, regard)
    }

    #[test]
    fn a_hostile_act_is_witnessed_the_same_told_who_started_or_looking_at_everyone() {
        let told = a_day_of_the_thief(false);
        assert!(
            (told.0.iter()).any(|(s, m)| *s == StreamKind::Story && m.contains("witnessed:theft")),
            "the crowd sees Vex at work, and the detector makes a story of it"
        );
        assert_eq!(told, a_day_of_the_thief(true));
    }

    #[test]
    fn a_theft_in_the_market_is_seen_talked_about_and_becomes_a_story() {
        let mut zone = village();
        enter(&mut zone, "market");
        advance(&mut zone, 60);
        let market = zone.rooms.room("market").expect("market");
        let piet = zone.npc_index("piet").expect("piet");
        zone.move_npc(piet, market);
        let witnesses: Vec<String> = (0..zone.agents.len())
            .filter(|&i| zone.meta[i].room == market && zone.agents[i].agent.id != "vex")
            .map(|i| zone.agents[i].agent.id.clone())
            .collect();
        assert!(witnesses.len() >= 2, "{witnesses:?}");
        send(&mut zone, social("theft", "piet", &[], None));
        // The thief is "stranger" in `social`; the witnesses now distrust them first-hand.
        for witness in &witnesses {
            let trust = zone
                .social
                .fabric
                .relationships
                .get(witness, "stranger")
                .trust;
            assert!(trust < 0.5, "{witness} trusts the thief {trust}");
        }
        let brain = crate::zone::brain::Brain::of(&zone, &witnesses[0], 3).expect("witness");
        let text = brain.to_string();
        assert!(
            text.contains("rumour: threat about stranger"),
            "the brain view shows what the witness knows: {text}"
        );
        let day = advance(&mut zone, 12 * 60);
        let of = |kind: &str| {
            day.iter()
                .filter(|(_, m)| m.contains(&format!("\"type\":\"{kind}\"")))
                .map(|(stream, m)| {
                    (
                        *stream,
                        serde_json::from_str::<serde_json::Value>(m).expect("json"),
                    )
                })
                .collect::<Vec<_>>()
        };
        let interactions = of("interaction");
        assert!(!interactions.is_empty(), "villagers meet");
        assert!(
            interactions
                .iter()
                .all(|(s, _)| *s == StreamKind::NpcEvents)
        );
        for (_, m) in &interactions {
            assert_eq!(
                m["witnessed"] == true,
                m.get("narration").is_some(),
                "narrated exactly when witnessed: {m}"
            );
        }
        let rumours = of("rumour_heard");
        assert!(
            rumours.iter().any(|(_, m)| m["subject"] == "stranger"),
            "the theft is talked about"
        );
        let signals = of("story_signal");
        assert!(!signals.is_empty(), "the detector raises signals");
        assert!(signals.iter().all(|(s, m)| {
            *s == StreamKind::Story
                && m["importance"]
                    .as_f64()
                    .is_some_and(|i| (0.0..=1.0).contains(&i))
                && m["expires_at_hours"].as_f64().is_some()
                && m["expires_at"].as_u64().is_some()
        }));
        // A quest board takes the first signal, then resolves it; a second resolution is
        // refused with the field at fault.
        let id = signals[0].1["signal"].as_str().expect("id").to_owned();
        let taken = WorldEvent::StorySignalTaken {
            signal: id.clone(),
            by: "board".into(),
        };
        send(&mut zone, taken);
        let next = advance(&mut zone, 1);
        let updated: Vec<serde_json::Value> = (next.iter())
            .filter(|(s, m)| *s == StreamKind::Story && m.contains("story_signal_updated"))
            .map(|(_, m)| serde_json::from_str(m).expect("json"))
            .collect();
        assert!(
            updated
                .iter()
                .any(|m| m["signal"] == id.as_str() && m["taken_by"] == "board"),
            "{updated:?}"
        );
        let resolve = || WorldEvent::StorySignalResolved {
            signal: id.clone(),
            by: "board".into(),
            outcome: "completed".into(),
        };
        let resolved = send(&mut zone, resolve());
        let [(StreamKind::Story, message)] = resolved.as_slice() else {
            panic!("one story message: {resolved:?}");
        };
        let message: serde_json::Value = serde_json::from_str(message).expect("json");
        assert_eq!(message["type"], "story_signal_resolved");
        assert_eq!(
            (&message["signal"], &message["outcome"]),
            (&id.clone().into(), &"completed".into())
        );
        assert_eq!(message["id"], format!("village:story:{id}:resolved"));
        let mut out = ZoneOutput::default();
        let again = WorldMessage {
            header: header("again", "village", zone.game_time),
            event: resolve(),
        };
        zone.apply(&again, &crate::zone::testing::live(), &mut out);
        assert_eq!(out.refused.len(), 1);
        assert_eq!(out.refused[0].path, "signal");
        assert!(
            out.refused[0].reason.contains("no live story signal"),
            "{}",
            out.refused[0].reason
        );
    }

    /// What a zone published but its story messages.
    fn without_story(messages: &[(StreamKind, String)]) -> Vec<&(StreamKind, String)> {
        (messages.iter())
            .filter(|(stream, _)| *stream != StreamKind::Story)
            .collect()
    }

    #[test]
    fn a_detector_beside_the_zone_leaves_it_as_the_detector_at_home_does() {
        // The two zones' own events had ids of their own (`advance`, `enter`).
        let snapshot = |zone: &Zone| {
            let mut state = serde_json::to_value(zone.capture()).expect("json");
            state["recent_ids"] = serde_json::Value::Null;
            state
        };
        let mut home = village();
        let mut beside = village();
        beside.social.detect_beside();
        for zone in [&mut home, &mut beside] {
            enter(zone, "market");
        }
        let mut signal = None;
        for round in 0..6 {
            let at_home = advance(&mut home, 4 * 60);
            let aside = advance(&mut beside, 4 * 60);
            assert_eq!(
                without_story(&at_home),
                without_story(&aside),
                "round {round}"
            );
            assert!(
                aside.iter().all(|(stream, _)| *stream != StreamKind::Story),
                "beside the zone, the detector's signals are not published"
            );
            signal = signal.or_else(|| {
                let raised = at_home
                    .iter()
                    .find(|(_, m)| m.contains("\"story_signal\""))?;
                let raised: serde_json::Value = serde_json::from_str(&raised.1).ok()?;
                Some(raised["signal"].as_str()?.to_owned())
            });
            let thief = ["piet", "vex", "sela"][round % 3];
            for zone in [&mut home, &mut beside] {
                let market = zone.rooms.room("market").expect("market");
                let index = zone.npc_index(thief).expect("thief");
                zone.move_npc(index, market);
            }
            let (id, theft) = (fresh_id("theft"), social("theft", thief, &[], None));
            let at_home = apply_as(&mut home, &id, theft.clone());
            assert_eq!(at_home.messages, apply_as(&mut beside, &id, theft).messages);
            assert_eq!(snapshot(&home), snapshot(&beside), "round {round}");
        }
        // Claims on a signal wait for the detector: taken, resolved, refused the same.
        let id = signal.expect("the village raises a signal in a day");
        let claims = [
            WorldEvent::StorySignalTaken {
                signal: id.clone(),
                by: "board".into(),
            },
            WorldEvent::StorySignalTaken {
                signal: id.clone(),
                by: "rival board".into(),
            },
            WorldEvent::StorySignalResolved {
                signal: id.clone(),
                by: "board".into(),
                outcome: "completed".into(),
            },
            WorldEvent::StorySignalResolved {
                signal: id,
                by: "board".into(),
                outcome: "completed".into(),
            },
        ];
        for claim in claims {
            let id = fresh_id("claim");
            let at_home = apply_as(&mut home, &id, claim.clone());
            let aside = apply_as(&mut beside, &id, claim);
            assert_eq!(at_home.refused, aside.refused);
            assert_eq!(
                without_story(&at_home.messages),
                without_story(&aside.messages)
            );
        }
        beside.social.detect_here();
        assert_eq!(snapshot(&home), snapshot(&beside));
        let (at_home, back) = (advance(&mut home, 60), advance(&mut beside, 60));
        assert_eq!(at_home, back, "back home, the detector publishes again");
    }
}
