//! The world around the NPCs: a provider's state or capacity, the weather, the game's world
//! contexts (through `game`), and the zone's own records — its completion mode
//! (`zone_settings`) and the governor's decisions (applied by tick in a replay).

use crate::bus::envelope::{WorldEvent, WorldMessage};
use crate::zone::{Zone, ZoneOutput};

use super::event_symbol;

impl Zone {
    /// Applies a change to the world around the NPCs (`message`).
    pub(super) fn apply_world_change(&mut self, message: &WorldMessage, out: &mut ZoneOutput) {
        match &message.event {
            WorldEvent::ProviderUpdated {
                provider,
                state,
                capacity,
            } => self.update_provider(message, provider, state.as_deref(), *capacity, out),
            WorldEvent::WeatherChanged { weather } => self.set_weather(weather),
            WorldEvent::ContextSet {
                name,
                tag_multipliers,
                until,
            } => {
                let result = self.set_context(name, tag_multipliers, *until);
                out.refuse_on(message, result);
            }
            WorldEvent::ContextCleared { name } => {
                let result = self.clear_context(name);
                out.refuse_on(message, result);
            }
            WorldEvent::ZoneSettings { completion } => self.set_completion(*completion),
            // Recorded by this zone when it decided; a replay applies it by tick.
            WorldEvent::GovernorDecision(_) => {}
            // Another family's (see `Zone::apply_once`).
            _ => {}
        }
    }

    /// Provider `provider` is now in `state` and holds `capacity`, either when given.
    fn update_provider(
        &mut self,
        message: &WorldMessage,
        provider: &str,
        state: Option<&str>,
        capacity: Option<u32>,
        out: &mut ZoneOutput,
    ) {
        let Some(p) = self.world.providers.iter_mut().find(|p| p.id == provider) else {
            out.refuse(
                message,
                "provider",
                format!("unknown provider `{provider}`"),
            );
            return;
        };
        if let Some(state) = state {
            match event_symbol(
                &mut self.vocabulary,
                self.content_names,
                &self.config,
                state,
            ) {
                Ok(symbol) => p.state = Some(symbol),
                Err(reason) => {
                    out.refuse(message, "state", reason);
                    return;
                }
            }
        }
        if let Some(capacity) = capacity {
            p.capacity = capacity;
        }
    }
}
