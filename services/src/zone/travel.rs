//! NPCs coming and going at run time: spawned from a record, despawned, handed over to another
//! zone and settled here on arrival (needs and rumours travel with them). Applying the world
//! events that ask for these is `apply`'s.

use super::{Zone, ZoneError, ZoneOutput, room_key, unknown_npc};
use crate::bus::StreamKind;
use crate::bus::envelope::{Intent, NpcEvent, WorldEvent, WorldMessage, header};
use crate::content::world_file::SpawnRecord;

impl Zone {
    /// Builds an NPC from a spawn record (see [`SpawnRecord`]) and keeps the record for
    /// snapshots; returns its index.
    pub fn spawn_from_record(
        &mut self,
        path: &str,
        record: &serde_json::Value,
    ) -> Result<usize, ZoneError> {
        let parsed = SpawnRecord::parse(record).map_err(|(at, reason)| {
            ZoneError::Spec(format!(
                "{}: {reason}",
                crate::content::world_file::field_path(path, &at)
            ))
        })?;
        match &parsed {
            SpawnRecord::Npc(spec) => self.add_npc(path, spec)?,
            SpawnRecord::Resident(spec) => self.add_resident(path, spec)?,
        }
        let id = parsed.id().to_owned();
        self.records.spawned.insert(id.clone(), record.clone());
        self.records.departed.remove(&id);
        self.npc_index(&id)
            .ok_or_else(|| ZoneError::Spec(format!("{path}: `{id}` was not added")))
    }

    /// Hands NPC `npc` over to zone `to_zone`, arriving in `room`: the arrival (how to build
    /// it, its needs, its rumours) goes to that zone's world stream with an id derived from
    /// this zone, the NPC and the tick — so a replay hands it over again under the same id —
    /// and the NPC leaves this zone. Refused (path, reason) when it cannot travel.
    pub(super) fn hand_over(
        &mut self,
        npc: &str,
        to_zone: &str,
        room: &str,
        out: &mut ZoneOutput,
    ) -> Result<(), (&'static str, String)> {
        let index = self
            .npc_index(npc)
            .ok_or_else(|| ("npc", unknown_npc(&self.name, npc)))?;
        if to_zone == self.name {
            return Err(("to_zone", format!("`{npc}` is already in zone `{to_zone}`")));
        }
        if let Some(zones) = &self.config.zones
            && !zones.contains(to_zone)
        {
            return Err((
                "to_zone",
                format!("no zone `{to_zone}` in this service's config: `{npc}` stays"),
            ));
        }
        let mut record = match (
            self.records.spawned.get(npc),
            self.records.resident_specs.get(npc),
        ) {
            (Some(record), _) => record.clone(),
            (None, Some(resident)) => serde_json::json!({ "resident": resident }),
            (None, None) => {
                return Err((
                    "npc",
                    format!(
                        "`{npc}` is an inline NPC of the world file; archetype residents and \
                         spawned NPCs can move between zones"
                    ),
                ));
            }
        };
        let target = match record.get_mut("resident") {
            Some(resident) => resident,
            None => &mut record,
        };
        target["room"] = serde_json::Value::String(room.to_owned());
        let agent = &self.agents[index].agent;
        let needs = agent
            .considerations
            .iter()
            .map(|c| (self.vocabulary.name(c.name).to_owned(), c.value))
            .collect();
        let arrival = crate::bus::envelope::Arrival {
            from_zone: self.name.clone(),
            npc: record,
            needs,
            rumours: self.social.fabric.rumours(npc).to_vec(),
        };
        let message = WorldMessage {
            header: header(
                format!("{}:{npc}:{}:handover", self.name, self.tick),
                to_zone,
                self.game_time,
            )
            .from_geppetto(),
            event: WorldEvent::NpcArrived(Box::new(arrival)),
        };
        out.handovers.push((to_zone.to_owned(), message.to_json()));
        let departed = NpcEvent::NpcDeparted {
            npc: npc.to_owned(),
            to_zone: to_zone.to_owned(),
        };
        self.publish(index, StreamKind::NpcEvents, &departed, out);
        self.despawn(npc, "transferred", out);
        Ok(())
    }

    /// A traveller just built here takes on the needs it left with and the rumours it
    /// carries (told on here like any other: gossip crossing the border).
    pub(super) fn settle_traveller(
        &mut self,
        index: usize,
        arrival: &crate::bus::envelope::Arrival,
        out: &mut ZoneOutput,
    ) {
        let npc = self.agents[index].agent.id.clone();
        for (name, value) in &arrival.needs {
            let Some(symbol) = self.vocabulary.lookup(name) else {
                continue;
            };
            if let Some(c) = self.agents[index]
                .agent
                .considerations
                .iter_mut()
                .find(|c| c.name == symbol)
            {
                c.value = value.clamp(c.min(), c.max().max(c.min()));
            }
        }
        for rumour in &arrival.rumours {
            let mut rumour = rumour.clone();
            rumour.holder = npc.clone();
            self.social.fabric.learn(&npc, rumour);
        }
        let event = NpcEvent::NpcArrived {
            npc,
            from_zone: arrival.from_zone.clone(),
            room: room_key(&self.room_names, self.meta[index].room).to_owned(),
        };
        self.publish(index, StreamKind::NpcEvents, &event, out);
    }

    pub(super) fn despawn(&mut self, npc: &str, reason: &str, out: &mut ZoneOutput) {
        let Some(index) = self.npc_index(npc) else {
            return;
        };
        let h = self.header_for(index);
        if let Some((cancelled, _)) = self.meta[index].current_intent.take().map(|intent| *intent) {
            out.push(
                StreamKind::Intents,
                &h,
                &Intent::Cancel {
                    npc: npc.to_owned(),
                    cancelled,
                    reason: reason.to_owned(),
                },
            );
        }
        self.release_running(index);
        self.roster_changed();
        self.agents.remove(index);
        self.meta.remove(index);
        if self.records.spawned.remove(npc).is_none() {
            self.records.departed.insert(npc.to_owned());
        }
        self.records.resident_specs.remove(npc);
        self.isolation.forget(npc);
        self.governor.forget(npc);
        let h = header(
            format!("{}:{npc}:{}:despawn", self.name, self.tick),
            &self.name,
            self.game_time,
        );
        out.push(
            StreamKind::NpcEvents,
            &h,
            &NpcEvent::NpcDespawned {
                npc: npc.to_owned(),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zone::testing::*;

    #[test]
    fn a_resident_walks_into_another_zone_with_its_needs_and_rumours_and_arrives_once() {
        use geppetto_core::social::{Gossip, GossipIntent, RumourTopic};
        let mut here = village();
        let mut there = village_named("hamlet");
        there.despawn("vex", "despawned", &mut ZoneOutput::default());
        let rumour = Gossip {
            subject: "bjorn".into(),
            kind: RumourTopic::Person,
            intent: GossipIntent::Defame,
            about_person: true,
            confidence: 0.9,
            origin_event: "village:theft:1".into(),
            depth: 0,
            holder: "vex".into(),
        };
        assert!(here.social.fabric.learn("vex", rumour.clone()));
        let index = here.npc_index("vex").expect("vex");
        let first = &mut here.agents[index].agent.considerations[0];
        let level = first.min() + 0.37 * (first.max() - first.min());
        first.value = level;
        let need = here
            .vocabulary
            .name(here.agents[index].agent.considerations[0].name)
            .to_owned();
        let transfer = |npc: &str| WorldMessage {
            header: header(format!("move-{npc}"), "village", here_time()),
            event: WorldEvent::NpcTransfer {
                npc: npc.into(),
                to_zone: "hamlet".into(),
                room: "woods".into(),
            },
        };
        fn here_time() -> u64 {
            420
        }

        let mut out = ZoneOutput::default();
        here.apply(&transfer("vex"), &live(), &mut out);
        assert!(out.refused.is_empty(), "{:?}", out.refused);
        assert!(here.npc_index("vex").is_none(), "vex left the village");
        assert!(
            out.messages.iter().any(|(s, m)| *s == StreamKind::NpcEvents
                && m.contains("\"type\":\"npc_departed\"")
                && m.contains("\"to_zone\":\"hamlet\"")),
            "the departure is an NPC event"
        );
        assert_eq!(out.handovers.len(), 1);
        let (target, body) = &out.handovers[0];
        assert_eq!(target, "hamlet");
        let arrival = crate::bus::envelope::parse_world(body).expect("an arrival parses");
        assert_eq!(arrival.header.zone, "hamlet");
        assert_eq!(
            arrival.header.id,
            format!("village:vex:{}:handover", here.tick)
        );

        let mut arrived = ZoneOutput::default();
        there.apply(&arrival, &live(), &mut arrived);
        assert!(arrived.refused.is_empty(), "{:?}", arrived.refused);
        let index = there.npc_index("vex").expect("vex is in the hamlet");
        let symbol = there.vocabulary.lookup(&need).expect("need");
        let value = there.agents[index]
            .agent
            .considerations
            .iter()
            .find(|c| c.name == symbol)
            .map(|c| c.value);
        assert_eq!(value, Some(level), "the need travelled");
        assert_eq!(
            there.social.fabric.rumours("vex"),
            &[rumour],
            "the rumour travelled: vex can tell it here"
        );
        assert!(
            arrived
                .messages
                .iter()
                .any(|(s, m)| *s == StreamKind::NpcEvents
                    && m.contains("\"type\":\"npc_arrived\"")
                    && m.contains("\"from_zone\":\"village\"")
                    && m.contains("\"room\":\"woods\""))
        );

        // A zone where an NPC of that id already lives refuses the traveller.
        let mut crowded = ZoneOutput::default();
        village_named("crowded").apply(&arrival, &live(), &mut crowded);
        assert!(
            crowded
                .refused
                .iter()
                .any(|r| r.reason.contains("already lives")),
            "{:?}",
            crowded.refused
        );

        // The same handover again (the village replaying its log after a failover): ignored.
        let npcs = there.agents.len();
        let mut again = ZoneOutput::default();
        there.apply(&arrival, &live(), &mut again);
        assert_eq!(there.agents.len(), npcs);
        assert!(again.messages.is_empty() && again.refused.is_empty());

        // A snapshot of the hamlet keeps the traveller, needs and all.
        let restored = Zone::restored(village_named("hamlet"), there.capture()).expect("restores");
        let index = restored.npc_index("vex").expect("vex restored");
        assert_eq!(
            restored.agents[index]
                .agent
                .considerations
                .iter()
                .find(|c| c.name == symbol)
                .map(|c| c.value),
            Some(level)
        );

        // An inline NPC of the world file cannot travel; an unknown one is refused.
        for (npc, reason) in [("bram", "inline NPC"), ("nobody", "unknown NPC")] {
            let mut refused = ZoneOutput::default();
            here.apply(&transfer(npc), &live(), &mut refused);
            assert!(refused.handovers.is_empty());
            assert!(
                refused.refused.iter().any(|r| r.reason.contains(reason)),
                "{npc}: {:?}",
                refused.refused
            );
        }
    }
}
