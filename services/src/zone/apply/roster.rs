//! Who is here: players entering and leaving (the tiers follow them), NPCs spawned and
//! despawned, handed over to another zone and arriving from one (through `travel`).

use crate::bus::StreamKind;
use crate::bus::envelope::{Arrival, NpcEvent, WorldEvent, WorldMessage};
use crate::content::world_file::{SpawnRecord, field_path};
use crate::zone::{Zone, ZoneOutput, room_key, unknown_npc};

impl Zone {
    /// Applies a player's or an NPC's coming or going (`message`).
    pub(super) fn apply_roster(&mut self, message: &WorldMessage, out: &mut ZoneOutput) {
        match &message.event {
            WorldEvent::PlayerEntered { player, room } => match self.rooms.room(room) {
                Some(room) => {
                    let changed = self.presence.player_entered(&self.rooms, player, room);
                    self.players_moved(&changed);
                }
                None => out.refuse(message, "room", format!("unknown room `{room}`")),
            },
            WorldEvent::PlayerLeft { player, room } => {
                let still_there = match room.as_deref().map(|name| (name, self.rooms.room(name))) {
                    None => true,
                    Some((_, Some(room))) => self.presence.room_of(player) == Some(room),
                    Some((name, None)) => {
                        return out.refuse(message, "room", format!("unknown room `{name}`"));
                    }
                };
                if still_there {
                    let changed = self.presence.player_left(&self.rooms, player);
                    self.players_moved(&changed);
                }
            }
            WorldEvent::NpcSpawned { npc } => match self.spawn_from_record("npc", npc) {
                Ok(index) => {
                    let event = NpcEvent::NpcSpawned {
                        npc: self.agents[index].agent.id.clone(),
                        room: room_key(&self.room_names, self.meta[index].room).to_owned(),
                    };
                    self.publish(index, StreamKind::NpcEvents, &event, out);
                }
                Err(error) => out.refuse(message, "npc", error.to_string()),
            },
            WorldEvent::NpcDespawned { npc } => {
                if self.npc_index(npc).is_none() {
                    out.refuse(message, "npc", unknown_npc(&self.name, npc));
                }
                self.despawn(npc, "despawned", out);
            }
            WorldEvent::NpcTransfer { npc, to_zone, room } => {
                let result = self.hand_over(npc, to_zone, room, out);
                out.refuse_on(message, result);
            }
            WorldEvent::NpcArrived(arrival) => self.arrived(message, arrival, out),
            // Another family's (see `Zone::apply_once`).
            _ => {}
        }
    }

    /// An NPC handed over by another zone arrives, unless one of its id lives here already.
    fn arrived(&mut self, message: &WorldMessage, arrival: &Arrival, out: &mut ZoneOutput) {
        let id = match SpawnRecord::parse(&arrival.npc) {
            Ok(record) => record.id().to_owned(),
            Err((path, reason)) => {
                out.refuse(message, &field_path("npc", &path), reason);
                return;
            }
        };
        if self.npc_index(&id).is_some() {
            let reason = format!("an NPC `{id}` already lives in zone `{}`", self.name);
            out.refuse(message, "npc", reason);
            return;
        }
        match self.spawn_from_record("npc", &arrival.npc) {
            Ok(index) => self.settle_traveller(index, arrival, out),
            Err(error) => out.refuse(message, "npc", error.to_string()),
        }
    }
}
