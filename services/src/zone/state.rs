//! A zone's snapshot: everything that changes as the zone lives, none of its content.
//!
//! [`Zone::capture`] writes a [`ZoneState`] — tick and game time, the vocabulary its symbols
//! index, the world (providers' occupancy, states, capacities, contexts), every NPC's changing
//! state ([`AgentState`]) and zone-side record (room, tier, the intent it carries out, its id
//! sequence and decision trace, its order and mood band), the world's contexts by source, NPCs
//! spawned since the world file (their specs), players' presence, the governor's demotions,
//! isolation counts, the social fabric (relationships, rumours, reservations) and the story
//! detector; [`Zone::capture_at`] adds the anchor snapshots carry (the world file and the log
//! entry the state ends at, see [`super::anchor`]). [`Zone::restored`] lays it over a zone
//! freshly built from the same world file and content; the result continues exactly as the
//! saved zone would have (tested against an uninterrupted run).
//!
//! What is content is rebuilt, not saved: archetypes, sets, personas, schedules, the weather
//! table, the room graph, the simulators' tuning; caches (catch-up days) are rebuilt on use.
//! Serialised as JSON with string enums and game time as integer ticks; floats round-trip
//! exactly (`serde_json`'s `float_roundtrip`).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use geppetto_core::decision::world::World;
use geppetto_core::life::agent_state::{AgentState, StateMismatch};
use geppetto_core::social::SocialFabric;
use geppetto_core::story::StoryDetector;
use geppetto_core::vocabulary::VocabularyMismatch;
use serde::{Deserialize, Serialize};

use super::anchor::{LogMark, SnapshotAnchor};
use super::game::WorldContexts;
use super::recent_ids::RecentIds;
use super::status::Derived;
use super::{Completion, DecisionTrace, IntentKind, NpcGameState, Zone, ZoneError};
use crate::zone::governor::Governor;
use crate::zone::isolation::IsolationState;
use crate::zone::tiers::{NpcTier, Presence};

/// The schema version of a zone snapshot's payload; a newer one is refused, never misread.
pub const ZONE_STATE_SCHEMA_VERSION: u32 = 1;

/// What a snapshot holds of a zone.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ZoneState {
    /// Zone name.
    pub zone: String,
    /// Ticks run.
    pub tick: u64,
    /// Game time, ticks.
    pub game_time: u64,
    /// The zone's interned names, in symbol order.
    pub vocabulary: Vec<String>,
    /// Providers and contexts as they stand.
    pub world: World,
    /// Specs of NPCs spawned since the world file, by id.
    pub spawned: BTreeMap<String, serde_json::Value>,
    /// Every NPC, by id.
    pub npcs: Vec<NpcState>,
    /// Players and the rooms' tiers.
    pub presence: Presence,
    /// The governor's demotions.
    pub governor: Governor,
    /// Failure counts and demotions.
    pub isolation: IsolationState,
    /// Relationships, rumours, reservations.
    pub fabric: SocialFabric,
    /// The story detector's buffer, history and live signals.
    pub detector: StoryDetector,
    /// Envelope ids of the world events applied lately, oldest first (older snapshots kept
    /// only the hand-overs', as `arrivals`).
    #[serde(default, alias = "arrivals")]
    pub recent_ids: std::collections::VecDeque<String>,
    /// The game time each of `recent_ids` was applied at (absent in older snapshots: taken as
    /// the snapshot's time).
    #[serde(default)]
    pub recent_id_times: Vec<u64>,
    /// NPCs of the content that left at run time (despawned, or walked into another zone):
    /// they stay gone when the snapshot is restored, while NPCs the content added since join.
    /// Absent in older snapshots, whose NPC set is taken as it was saved.
    #[serde(default)]
    pub departed: Option<std::collections::BTreeSet<String>>,
    /// The world's contexts by source (the weather's, the game's); absent in older snapshots,
    /// whose contexts are all taken as the weather's.
    #[serde(default)]
    pub contexts: Option<WorldContexts>,
    /// Who ended actions when the snapshot was taken; absent in older snapshots (simulated).
    #[serde(default)]
    pub completion: Option<Completion>,
    /// The world file and the log entry the snapshot was taken over, set by the snapshot
    /// writer; absent in older snapshots, which cannot be checked against a log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<SnapshotAnchor>,
}

/// One NPC in a snapshot.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NpcState {
    /// NPC id.
    pub id: String,
    /// Room index in the world file's room order.
    pub room: usize,
    /// Its tier and pending demotion.
    pub tier: NpcTier,
    /// The intent it carries out (id, kind).
    pub current_intent: Option<(String, IntentKind)>,
    /// Its id sequence within the last tick it published in.
    pub seq: (u64, u32),
    /// Its recent decisions.
    pub decisions: VecDeque<DecisionTrace>,
    /// The order it carries out, its mood band and what moved it.
    #[serde(default)]
    pub game: NpcGameState,
    /// Its simulated state.
    pub state: AgentState,
}

/// Why a snapshot cannot be laid over a zone built from the current files.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    /// The snapshot is of another zone.
    #[error("the snapshot is of zone `{saved}`, not `{zone}`")]
    OtherZone {
        /// The zone being restored.
        zone: String,
        /// The snapshot's zone.
        saved: String,
    },
    /// The content's names do not match the snapshot's.
    #[error("the content changed since the snapshot: {0}")]
    Vocabulary(#[from] VocabularyMismatch),
    /// The room graph does not match.
    #[error("the snapshot knows {saved} rooms but the world file has {current}")]
    Rooms {
        /// Rooms saved.
        saved: usize,
        /// Rooms now.
        current: usize,
    },
    /// A saved NPC is neither in the world file nor among the saved spawns.
    #[error("NPC `{0}` is in the snapshot but neither in the world file nor spawned")]
    UnknownNpc(String),
    /// A saved spawn spec no longer builds.
    #[error("spawned NPC `{npc}`: {source}")]
    Spawn {
        /// NPC id.
        npc: String,
        /// Why.
        source: ZoneError,
    },
    /// A saved NPC's state does not fit what the content builds.
    #[error("NPC `{npc}`: {source}")]
    Npc {
        /// NPC id.
        npc: String,
        /// Why.
        source: StateMismatch,
    },
}

impl Zone {
    /// Everything that changes in this zone, for a snapshot.
    pub fn capture(&self) -> ZoneState {
        let (recent_ids, recent_id_times) = self.recent_ids.saved();
        ZoneState {
            zone: self.name.clone(),
            tick: self.tick,
            game_time: self.game_time,
            vocabulary: self.vocabulary.names().to_vec(),
            world: self.world.clone(),
            spawned: self.records.spawned.clone(),
            npcs: self
                .agents
                .iter()
                .zip(&self.meta)
                .map(|(agent, meta)| NpcState {
                    id: agent.agent.id.clone(),
                    room: meta.room,
                    tier: meta.tier,
                    current_intent: meta.current_intent.as_deref().cloned(),
                    seq: meta.seq,
                    decisions: self.choice_names.show(&meta.decisions),
                    game: meta.game.clone(),
                    state: AgentState::capture(agent),
                })
                .collect(),
            presence: self.presence.clone(),
            governor: self.governor.clone(),
            isolation: self.isolation.state.clone(),
            fabric: self.social.fabric.clone(),
            detector: self.social.detector_state(),
            recent_ids,
            recent_id_times,
            departed: Some(self.records.departed.clone()),
            contexts: Some(self.contexts.clone()),
            completion: Some(self.completion),
            anchor: None,
        }
    }

    /// This zone's snapshot anchored at `last`, the log entry its state ends at.
    pub fn capture_at(&self, last: LogMark) -> ZoneState {
        ZoneState {
            anchor: Some(SnapshotAnchor {
                world: self.world_fingerprint.clone(),
                last,
            }),
            ..self.capture()
        }
    }

    /// `fresh` — a zone just built from the world file and content — carrying on from `saved`.
    /// On an error `fresh` is dropped: build another (and replay the whole log).
    pub fn restored(mut fresh: Zone, saved: ZoneState) -> Result<Zone, RestoreError> {
        fresh.check_fits(&saved)?;
        fresh.vocabulary.extend_to(&saved.vocabulary)?;
        let left = fresh.keep_saved_npcs(&saved)?;
        fresh.restore_npcs(saved.npcs, saved.departed.is_some())?;
        fresh.tick = saved.tick;
        fresh.game_time = saved.game_time;
        fresh.contexts = saved
            .contexts
            .unwrap_or_else(|| WorldContexts::from_weather(saved.world.contexts.clone()));
        fresh.world = saved.world;
        fresh.set_completion(saved.completion.unwrap_or(Completion::Simulated));
        fresh.records.spawned = saved.spawned;
        fresh.recent_ids =
            RecentIds::restored(saved.recent_ids, &saved.recent_id_times, saved.game_time);
        // An older snapshot's departures are the content NPCs it did not hold.
        fresh.records.departed = saved.departed.unwrap_or(left);
        fresh.presence.adopt_state(saved.presence);
        fresh.governor.adopt_state(saved.governor);
        fresh.isolation.state = saved.isolation;
        fresh.social.adopt_state(saved.fabric, saved.detector);
        fresh.derived = Derived::default();
        fresh.goals_unannounced = true;
        Ok(fresh)
    }

    /// Whether `saved` is a snapshot of this zone, over its rooms.
    fn check_fits(&self, saved: &ZoneState) -> Result<(), RestoreError> {
        if saved.zone != self.name {
            return Err(RestoreError::OtherZone {
                zone: self.name.clone(),
                saved: saved.zone.clone(),
            });
        }
        let rooms = self.rooms.len();
        let saved_rooms = saved.presence.room_count();
        if saved_rooms != rooms || saved.npcs.iter().any(|npc| npc.room >= rooms) {
            return Err(RestoreError::Rooms {
                saved: saved_rooms,
                current: rooms,
            });
        }
        Ok(())
    }

    /// Makes this zone's NPC set `saved`'s: content NPCs that left at run time stay gone
    /// (older snapshots, which do not say, keep exactly the NPCs they saved); NPCs the content
    /// added since join as the content builds them; spawned ones are rebuilt from their
    /// records (their names are interned already, so symbols agree) — also one that shares
    /// its id with a content NPC (a villager who left and came back), whose record then
    /// stands. Answers the content NPCs that left.
    fn keep_saved_npcs(&mut self, saved: &ZoneState) -> Result<BTreeSet<String>, RestoreError> {
        let saved_ids: BTreeSet<&str> = saved.npcs.iter().map(|npc| npc.id.as_str()).collect();
        let keep = |id: &str| {
            !saved.spawned.contains_key(id)
                && match &saved.departed {
                    Some(departed) => !departed.contains(id),
                    None => saved_ids.contains(id),
                }
        };
        let mut left = BTreeSet::new();
        let mut index = 0;
        while index < self.agents.len() {
            let id = self.agents[index].agent.id.as_str();
            if keep(id) {
                index += 1;
            } else {
                if !saved.spawned.contains_key(id) {
                    left.insert(id.to_owned());
                }
                self.agents.remove(index);
                self.meta.remove(index);
            }
        }
        for (npc, record) in &saved.spawned {
            self.spawn_from_record("npc", record)
                .map_err(|source| RestoreError::Spawn {
                    npc: npc.clone(),
                    source,
                })?;
        }
        Ok(left)
    }

    /// Lays each saved NPC's state and record over the NPC of its id; one the zone does not
    /// hold was taken out of the content since (it goes) when the snapshot says who
    /// `departed`, and is an error when it does not.
    fn restore_npcs(&mut self, npcs: Vec<NpcState>, departed: bool) -> Result<(), RestoreError> {
        for npc in npcs {
            let Some(index) = self.npc_index(&npc.id) else {
                if departed {
                    continue;
                }
                return Err(RestoreError::UnknownNpc(npc.id.clone()));
            };
            npc.state
                .restore_onto(&mut self.agents[index])
                .map_err(|source| RestoreError::Npc {
                    npc: npc.id.clone(),
                    source,
                })?;
            self.behaviours
                .share(&mut self.agents[index].agent.considerations);
            let meta = &mut self.meta[index];
            meta.room = npc.room;
            meta.tier = npc.tier;
            meta.current_intent = npc.current_intent.map(Box::new);
            meta.seq = npc.seq;
            meta.decisions = self.choice_names.keep(npc.decisions);
            meta.game = npc.game;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::StreamKind;
    use crate::bus::envelope::{WorldEvent, WorldMessage, header};
    use crate::zone::ZoneOutput;
    use crate::zone::testing::{live, village};

    /// A scripted afternoon in the village: players come and go, a theft, an insult, a gift, a
    /// weather change, a summons, a stall closing, an NPC spawned and one despawned — between
    /// time steps of uneven length, so cuts fall mid-action and between social steps.
    fn script() -> Vec<WorldMessage> {
        let mut events: Vec<(u64, WorldEvent)> = Vec::new();
        let social = |kind: &str, source: &str, target: &str| WorldEvent::SocialEvent {
            kind: kind.into(),
            source: source.into(),
            target: target.into(),
            deltas: BTreeMap::new(),
            mood: None,
            about: None,
        };
        events.push((
            0,
            WorldEvent::PlayerEntered {
                player: "ann".into(),
                room: "market".into(),
            },
        ));
        events.push((40, social("theft", "vex", "piet")));
        events.push((95, social("insult", "stranger", "bjorn")));
        events.push((
            130,
            WorldEvent::WeatherChanged {
                weather: "storm".into(),
            },
        ));
        events.push((
            170,
            WorldEvent::ScheduleOverride {
                npc: "ivo".into(),
                activity: "summoned".into(),
                location: Some("well".into()),
                tags: Vec::new(),
                hours: 2.0,
            },
        ));
        events.push((
            200,
            WorldEvent::NpcSpawned {
                npc: serde_json::json!({
                    "id": "pedlar", "room": "square", "position": [1, 1],
                    "considerations": [
                        { "name": "HUNGER", "value": 30, "min": 0, "max": 100,
                          "curve": { "kind": "convex", "exponent": 2 },
                          "updater": { "kind": "linear_decay", "rate": 4 } }
                    ]
                }),
            },
        ));
        events.push((
            230,
            WorldEvent::PlayerEntered {
                player: "bo".into(),
                room: "forge".into(),
            },
        ));
        events.push((260, social("gift", "ann", "ulla")));
        events.push((
            300,
            WorldEvent::ProviderUpdated {
                provider: "stalls".into(),
                state: Some("closed".into()),
                capacity: None,
            },
        ));
        events.push((
            330,
            WorldEvent::PlayerLeft {
                player: "ann".into(),
                room: None,
            },
        ));
        events.push((360, WorldEvent::NpcDespawned { npc: "nell".into() }));
        let mut messages = Vec::new();
        let mut now = 0;
        let mut step = 3;
        let mut scripted = events.into_iter().peekable();
        while now < 780 {
            while let Some((_, event)) = scripted.next_if(|(at, _)| *at <= now) {
                messages.push(WorldMessage {
                    header: header(format!("e{}", messages.len()), "village", now),
                    event,
                });
            }
            now += step;
            step = step % 17 + 4;
            messages.push(WorldMessage {
                header: header(format!("t{now}"), "village", now),
                event: WorldEvent::TimeAdvanced,
            });
        }
        messages
    }

    fn run(zone: &mut Zone, messages: &[WorldMessage]) -> Vec<(StreamKind, String)> {
        let mut out = ZoneOutput::default();
        for message in messages {
            zone.apply(message, &live(), &mut out);
        }
        out.messages
    }

    fn encoded(zone: &Zone) -> Vec<u8> {
        serde_json::to_vec(&zone.capture()).expect("a zone state serialises")
    }

    #[test]
    fn a_restored_snapshot_continues_exactly_as_the_uninterrupted_zone() {
        let messages = script();
        let mut whole = village();
        let mut outputs = Vec::new();
        for message in &messages {
            outputs.push(run(&mut whole, std::slice::from_ref(message)));
        }
        assert!(
            outputs
                .iter()
                .flatten()
                .any(|(s, _)| *s == StreamKind::Story),
            "the script is rich enough to raise story signals"
        );
        let expected_end = encoded(&whole);
        for cut in [
            1,
            9,
            messages.len() / 3,
            messages.len() / 2,
            messages.len() - 2,
        ] {
            let mut first = village();
            run(&mut first, &messages[..cut]);
            let saved: ZoneState =
                serde_json::from_slice(&encoded(&first)).expect("a zone state reads back");
            let mut restored = Zone::restored(village(), saved).expect("restores");
            assert_eq!(
                encoded(&restored),
                encoded(&first),
                "restoring loses nothing (cut {cut})"
            );
            let rest = run(&mut restored, &messages[cut..]);
            let expected: Vec<_> = outputs[cut..].iter().flatten().cloned().collect();
            assert_eq!(rest.len(), expected.len(), "same outputs after cut {cut}");
            for (got, want) in rest.iter().zip(&expected) {
                assert_eq!(got, want, "first difference after cut {cut}");
            }
            assert_eq!(
                encoded(&restored),
                expected_end,
                "same final state (cut {cut})"
            );
        }
    }

    fn refusal(saved: ZoneState) -> String {
        match Zone::restored(village(), saved) {
            Ok(_) => panic!("the snapshot was accepted"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn a_snapshot_is_refused_by_another_zone_or_changed_content() {
        let mut zone = village();
        run(&mut zone, &script()[..20]);
        let mut saved = zone.capture();
        saved.zone = "elsewhere".into();
        let error = refusal(saved);
        assert!(error.contains("`elsewhere`"), "{error}");
        let mut saved = zone.capture();
        saved.vocabulary[3] = "renamed".into();
        let error = refusal(saved);
        assert!(
            error.contains("content changed") && error.contains("renamed"),
            "{error}"
        );
        let mut saved = zone.capture();
        saved.npcs[0].id = "ghost".into();
        saved.npcs.sort_by(|a, b| a.id.cmp(&b.id));
        // A snapshot that records departures takes an NPC the content no longer has as
        // taken out of the content; the content's NPCs it does not hold join fresh.
        let restored = Zone::restored(village(), saved.clone()).expect("restores");
        assert!(restored.npc_index("ghost").is_none());
        assert_eq!(restored.agents.len(), zone.agents.len());
        // An older snapshot, which does not record them, cannot tell and refuses.
        saved.departed = None;
        let error = refusal(saved);
        assert!(error.contains("`ghost`"), "{error}");
    }

    #[test]
    fn a_despawned_npc_stays_gone_and_one_added_to_the_content_joins() {
        let mut zone = village();
        run(&mut zone, &script()[..20]);
        zone.despawn("pip", "despawned", &mut ZoneOutput::default());
        let mut saved = zone.capture();
        // The content grew an NPC since (here: the snapshot never knew `nell`).
        saved.npcs.retain(|npc| npc.id != "nell");
        let restored = Zone::restored(village(), saved).expect("restores");
        assert!(restored.npc_index("pip").is_none(), "pip stays gone");
        assert!(restored.npc_index("nell").is_some(), "nell joins");
        assert_eq!(restored.capture().departed, Some(["pip".to_owned()].into()));
    }

    #[test]
    fn a_snapshot_writes_enums_as_strings_and_time_as_ticks() {
        let mut zone = village();
        run(&mut zone, &script()[..30]);
        let json: serde_json::Value = serde_json::to_value(zone.capture()).expect("json");
        assert!(json["game_time"].is_u64());
        let npc = &json["npcs"][0];
        assert!(npc["tier"]["tier"].is_string(), "{}", npc["tier"]);
        assert!(
            npc["state"]["level"].is_string(),
            "{}",
            npc["state"]["level"]
        );
    }
}
