//! The game's side of the integration contract (docs/integration.md): the game is the
//! authority on what happens in its world, geppetto on what NPCs want. This module applies
//! what the game reports — an intent carried out or failed, where an NPC is, a player's order,
//! an NPC taken over and given back, a goal assigned, a world context set — and writes the NPC
//! events a game acts on: an order's fate, a mood band crossed, an NPC relocated when it comes
//! out of Background. In `game` completion mode a started action waits for the game's reports
//! (the core's `GameCarried`) until its deadline; in `simulated` mode geppetto's timer ends it.

use std::collections::BTreeMap;

use geppetto_core::decision::world::Context;
use geppetto_core::life::action::{GameCarried, QueuedAction};
use geppetto_core::life::goals::{Goal, GoalCategory, GoalNote, GoalRefused};
use geppetto_core::life::simulator::SimEvent;
use serde::{Deserialize, Serialize};

use super::{Completion, IntentKind, Zone, ZoneOutput, room_key, unknown_npc};
use crate::bus::StreamKind;
use crate::bus::envelope::npc_event::GoalFields;
use crate::bus::envelope::world::AssignedGoal;
use crate::bus::envelope::{NpcEvent, WorldEvent, WorldMessage, header};

/// A report the zone could not apply: the field at fault and why.
pub(super) type Refused = (&'static str, String);

/// The world's contexts by where they come from: the weather's, and those the game set by
/// name (a season, a festival), which win over a weather context of the same name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorldContexts {
    /// The weather's, as `weather_changed` last set them.
    pub weather: Vec<Context>,
    /// Those the game set, by name, with the game time (ticks) they end at.
    pub set: BTreeMap<String, (Context, Option<u64>)>,
}

impl WorldContexts {
    /// The weather's contexts alone.
    pub fn from_weather(weather: Vec<Context>) -> Self {
        Self {
            weather,
            set: BTreeMap::new(),
        }
    }

    /// Every context in force: the game's by name, then the weather's they do not replace.
    fn combined(&self) -> Vec<Context> {
        let mut all: Vec<Context> = self.set.values().map(|(c, _)| c.clone()).collect();
        for context in &self.weather {
            if !all.iter().any(|c| c.name == context.name) {
                all.push(context.clone());
            }
        }
        all
    }
}

/// The lines a game shows for an NPC relocated by its schedule: to the room it leaves and to
/// the room it arrives in, naming the activity that calls it when there is one.
fn relocation_lines(name: &str, activity: Option<&str>) -> (String, String) {
    match activity {
        Some(activity) => (
            format!("{name} leaves: time for {activity}."),
            format!("{name} arrives: time for {activity}."),
        ),
        None => (format!("{name} leaves."), format!("{name} arrives.")),
    }
}

impl Zone {
    /// The settings this zone is configured with, as the world message its loop writes when it
    /// starts: applied from the log, they hold from there on, in a replay or a recovery too.
    pub fn settings_message(&self) -> WorldMessage {
        let completion = self.config.integration.completion_in(&self.name);
        WorldMessage {
            header: header(
                format!("{}:settings:{}", self.name, self.tick),
                &self.name,
                self.game_time,
            )
            .from_geppetto(),
            event: WorldEvent::ZoneSettings { completion },
        }
    }

    /// A zone replayed from the start of its log runs in the mode its first run was configured
    /// with — the first `zone_settings` in the log — from the first event on, as the live zone
    /// did, even where a game's events reached the log before the zone's own settings.
    pub fn begin_as_logged<'a>(&mut self, log: impl IntoIterator<Item = &'a WorldMessage>) {
        let first = log.into_iter().find_map(|message| match message.event {
            WorldEvent::ZoneSettings { completion } if message.header.zone == self.name => {
                Some(completion)
            }
            _ => None,
        });
        if let Some(completion) = first {
            self.completion = completion;
        }
    }

    /// Whether the game ends actions and moves NPCs in this zone.
    pub(super) fn game_completes(&self) -> bool {
        self.completion == Completion::Game
    }

    /// The weather is now `weather`: its contexts replace the weather's, beside the game's.
    pub(super) fn set_weather(&mut self, weather: &str) {
        self.contexts.weather = self
            .content
            .weather
            .get(weather)
            .cloned()
            .unwrap_or_default();
        self.world.contexts = self.contexts.combined();
    }

    /// A context the game sets, until game time `until` when given. Its name and tags are
    /// names a world event brings (bounded by `tick.max_event_names`).
    pub(super) fn set_context(
        &mut self,
        name: &str,
        tag_multipliers: &BTreeMap<String, f64>,
        until: Option<u64>,
    ) -> Result<(), Refused> {
        let symbol = self.event_name(name).map_err(|reason| ("name", reason))?;
        let mut multipliers = Vec::with_capacity(tag_multipliers.len());
        for (tag, m) in tag_multipliers {
            let tag = self
                .event_name(tag)
                .map_err(|reason| ("tag_multipliers", reason))?;
            multipliers.push((tag, *m));
        }
        let context = Context {
            name: symbol,
            tag_multipliers: multipliers,
        };
        self.contexts.set.insert(name.to_owned(), (context, until));
        self.world.contexts = self.contexts.combined();
        Ok(())
    }

    /// Ends a context the game set.
    pub(super) fn clear_context(&mut self, name: &str) -> Result<(), Refused> {
        if self.contexts.set.remove(name).is_none() {
            return Err(("name", format!("no context `{name}` was set")));
        }
        self.world.contexts = self.contexts.combined();
        Ok(())
    }

    /// Drops the game's contexts whose time is up (at the start of a tick).
    pub(super) fn expire_contexts(&mut self) {
        let now = self.game_time;
        let before = self.contexts.set.len();
        self.contexts
            .set
            .retain(|_, (_, until)| until.is_none_or(|until| until > now));
        if self.contexts.set.len() != before {
            self.world.contexts = self.contexts.combined();
        }
    }

    /// The game reports NPC `npc`'s intent carried out (`Ok(outcome)`) or failed
    /// (`Err(reason)`). It must be the NPC's current intent (absent: that one is meant).
    pub(super) fn reported(
        &mut self,
        npc: &str,
        intent: Option<&str>,
        result: Result<(Option<String>, &BTreeMap<String, f64>), String>,
        out: &mut ZoneOutput,
    ) -> Result<(), Refused> {
        let index = self
            .npc_index(npc)
            .ok_or_else(|| ("npc", unknown_npc(&self.name, npc)))?;
        let Some((current, kind)) = self.meta[index].current_intent.as_deref().cloned() else {
            return Err(("intent", format!("NPC `{npc}` has no intent in progress")));
        };
        if let Some(intent) = intent.filter(|i| *i != current) {
            return Err((
                "intent",
                format!("stale intent `{intent}`: NPC `{npc}` now carries out `{current}`"),
            ));
        }
        match (result, kind) {
            (Ok(_), IntentKind::Navigate) => {
                // The walk is done: the NPC stands in its provider's room.
                if let Some(room) = self.running_room(index) {
                    self.move_npc(index, room);
                }
                self.arrive_between_ticks(index, out);
            }
            (Ok(_), IntentKind::Reactive) => {
                return Err((
                    "intent",
                    "a reactive action ends when its set picks another; report only its failure"
                        .into(),
                ));
            }
            (Ok((outcome, resources)), IntentKind::Use) => {
                self.change_resources(index, resources);
                self.meta[index].current_intent = None;
                let events = self
                    .content
                    .simulator
                    .complete_running(&mut self.agents[index]);
                geppetto_core::apply_occupancy(&mut self.world, &events);
                self.emit_reported(index, &events, Some((current, outcome)), out);
            }
            (Err(reason), _) => self.fail_running(index, Some(current), &reason, out),
        }
        Ok(())
    }

    /// Who ends actions from now on: in `simulated` mode geppetto is the whole economy (a
    /// completed action pays its costs and earns its yields); in `game` mode the game says
    /// what anyone holds (`action_completed.resources`, `resources_changed`).
    pub(crate) fn set_completion(&mut self, completion: Completion) {
        self.completion = completion;
        let settles = completion == Completion::Simulated;
        self.content.simulator.settle(settles);
        self.content.nearby_simulator.settle(settles);
    }

    /// Adds `changes` to what NPC `index` holds (an amount never goes below 0): what the game
    /// reports it earned, paid or lost.
    pub(super) fn change_resources(&mut self, index: usize, changes: &BTreeMap<String, f64>) {
        for (name, change) in changes {
            let name = self.vocabulary.intern(name);
            let resources = &mut self.agents[index].agent.resources;
            match resources.iter_mut().find(|(held, _)| *held == name) {
                Some((_, amount)) => *amount = (*amount + change).max(0.0),
                None => resources.push((name, change.max(0.0))),
            }
        }
    }

    /// Drops NPC `index`'s action as failed (`action_failed` with `reason`); it decides again.
    fn fail_running(
        &mut self,
        index: usize,
        intent: Option<String>,
        reason: &str,
        out: &mut ZoneOutput,
    ) {
        self.release_running(index);
        self.meta[index].current_intent = None;
        let npc = self.agents[index].agent.id.clone();
        let failed = NpcEvent::ActionFailed {
            npc,
            intent,
            reason: reason.to_owned(),
        };
        self.publish(index, StreamKind::NpcEvents, &failed, out);
        self.order_ended(index, "failed", Some(reason), out);
    }

    /// The game timed out on NPC `index`'s action (the core dropped it at its deadline).
    pub(super) fn timed_out(&mut self, index: usize, out: &mut ZoneOutput) {
        let intent = self.meta[index]
            .current_intent
            .as_deref()
            .map(|(id, _)| id.clone());
        self.cancel(index, "timeout", out);
        let npc = self.agents[index].agent.id.clone();
        let failed = NpcEvent::ActionFailed {
            npc,
            intent,
            reason: "timeout".into(),
        };
        self.publish(index, StreamKind::NpcEvents, &failed, out);
        self.order_ended(index, "failed", Some("timeout"), out);
    }

    /// The room of the provider NPC `index` is using or walking to.
    fn running_room(&self, index: usize) -> Option<usize> {
        let running = self.agents[index].running.as_ref()?;
        self.providers.get(&running.provider).map(|p| p.room)
    }

    /// The game says NPC `npc` is now in `room`. In `game` mode an NPC walking to its provider
    /// arrives there (its `use` goes out), and one that leaves the room of the provider it is
    /// using stops (`cancel` with reason `moved`).
    pub(super) fn npc_moved(
        &mut self,
        npc: &str,
        room: &str,
        out: &mut ZoneOutput,
    ) -> Result<(), Refused> {
        let index = self
            .npc_index(npc)
            .ok_or_else(|| ("npc", unknown_npc(&self.name, npc)))?;
        let room = self
            .rooms
            .room(room)
            .ok_or_else(|| ("room", format!("unknown room `{room}`")))?;
        self.move_npc(index, room);
        if !self.game_completes() {
            return Ok(());
        }
        let walking = self.agents[index]
            .running
            .as_ref()
            .and_then(|r| r.carried_by_game)
            .is_some_and(|c| c.walking);
        match self.running_room(index) {
            Some(at) if walking && at == room => self.arrive_between_ticks(index, out),
            Some(at) if !walking && at != room => {
                self.cancel(index, "moved", out);
                self.release_running(index);
                self.order_ended(index, "failed", Some("moved"), out);
            }
            _ => {}
        }
        Ok(())
    }

    /// NPC `index`'s walk is over: its action runs from now, due within its duration ×
    /// `timeout_factor` + `timeout_grace_ticks`, and its `use` goes out.
    pub(super) fn arrive(&mut self, index: usize, out: &mut ZoneOutput) {
        let deadline_hours = self.action_deadline(index);
        let Some(running) = self.agents[index].running.as_mut() else {
            return;
        };
        running.carried_by_game = Some(GameCarried {
            walking: false,
            deadline_hours,
        });
        self.begin_use(index, out);
    }

    /// [`Zone::arrive`] on a report the game sends between ticks: who runs what where is read
    /// afresh (the tick's index of it is gone stale).
    fn arrive_between_ticks(&mut self, index: usize, out: &mut ZoneOutput) {
        self.running_by_provider = None;
        self.arrive(index, out);
        self.running_by_provider = None;
    }

    /// When NPC `index`'s running action, carried out from now, must be reported done.
    pub(super) fn action_deadline(&self, index: usize) -> f64 {
        let integration = &self.config.integration;
        let duration = self.agents[index]
            .running
            .as_ref()
            .map_or(0.0, |r| r.action.duration_hours);
        self.now_hours()
            + duration * integration.timeout_factor
            + integration.timeout_grace_ticks as f64 * self.full_tick_hours
    }

    /// When NPC `index`, setting out now, must be reported in its provider's room.
    pub(super) fn arrival_deadline(&self) -> f64 {
        self.now_hours()
            + self.config.integration.arrival_timeout_ticks as f64 * self.full_tick_hours
    }

    /// A player's order (`id`: the envelope's): queued in front of the NPC's own plans and
    /// behind its earlier orders; an action it chose for itself stops for it.
    pub(super) fn order(
        &mut self,
        id: &str,
        npc: &str,
        provider: &str,
        action: &str,
        by: &str,
        out: &mut ZoneOutput,
    ) -> Result<(), Refused> {
        let index = self
            .npc_index(npc)
            .ok_or_else(|| ("npc", unknown_npc(&self.name, npc)))?;
        let agent = &self.agents[index];
        let given = agent.queue.iter().any(|e| e.order.as_deref() == Some(id))
            || self.meta[index].game.order.as_deref() == Some(id);
        if given {
            return Err(("id", format!("order `{id}` was already given")));
        }
        let advertised = self
            .world
            .providers
            .iter()
            .find(|p| p.id == provider)
            .map(|p| p.actions.iter().any(|a| a.id == action));
        let refusal = match advertised {
            _ if agent.layers.engaged.is_some() => Some("engaged"),
            None => Some("unknown_provider"),
            Some(false) => Some("not_advertised"),
            Some(true) => None,
        };
        if let Some(reason) = refusal {
            let refused = NpcEvent::OrderRefused {
                npc: npc.to_owned(),
                order: id.to_owned(),
                reason: reason.to_owned(),
            };
            self.publish(index, StreamKind::NpcEvents, &refused, out);
            return Ok(());
        }
        let agent = &mut self.agents[index];
        let at = agent.queue.iter().take_while(|e| e.order.is_some()).count();
        agent.queue.insert(
            at,
            QueuedAction {
                provider: provider.to_owned(),
                action: action.to_owned(),
                player_queued: true,
                from_plan: false,
                order: Some(id.to_owned()),
            },
        );
        let own_choice = agent.running.as_ref().is_some_and(|r| r.order.is_none());
        let accepted = NpcEvent::OrderAccepted {
            npc: npc.to_owned(),
            order: id.to_owned(),
            provider: provider.to_owned(),
            action: action.to_owned(),
            by: by.to_owned(),
        };
        self.publish(index, StreamKind::NpcEvents, &accepted, out);
        if own_choice {
            self.cancel(index, "ordered", out);
            self.release_running(index);
        }
        Ok(())
    }

    /// A player withdraws order `order`: out of the queue, or stopped if it runs.
    pub(super) fn order_cancelled(
        &mut self,
        npc: &str,
        order: &str,
        out: &mut ZoneOutput,
    ) -> Result<(), Refused> {
        let index = self
            .npc_index(npc)
            .ok_or_else(|| ("npc", unknown_npc(&self.name, npc)))?;
        let queue = &mut self.agents[index].queue;
        if let Some(at) = queue.iter().position(|e| e.order.as_deref() == Some(order)) {
            queue.remove(at);
            let done = NpcEvent::OrderDone {
                npc: npc.to_owned(),
                order: order.to_owned(),
                outcome: "cancelled".into(),
                reason: None,
            };
            self.publish(index, StreamKind::NpcEvents, &done, out);
            return Ok(());
        }
        if self.meta[index].game.order.as_deref() != Some(order) {
            return Err(("order", format!("NPC `{npc}` has no order `{order}`")));
        }
        self.cancel(index, "order_cancelled", out);
        self.release_running(index);
        self.order_ended(index, "cancelled", None, out);
        Ok(())
    }

    /// The order NPC `index` was carrying out ended with `outcome` (nothing when it had none).
    pub(super) fn order_ended(
        &mut self,
        index: usize,
        outcome: &str,
        reason: Option<&str>,
        out: &mut ZoneOutput,
    ) {
        if let Some(order) = self.meta[index].game.order.take() {
            let done = NpcEvent::OrderDone {
                npc: self.agents[index].agent.id.clone(),
                order: order.into(),
                outcome: outcome.to_owned(),
                reason: reason.map(str::to_owned),
            };
            self.publish(index, StreamKind::NpcEvents, &done, out);
        }
    }

    /// The game takes NPC `npc` over: its intent is cancelled with `reason`, and it decides
    /// nothing until released.
    pub(super) fn engage(
        &mut self,
        npc: &str,
        reason: &str,
        out: &mut ZoneOutput,
    ) -> Result<(), Refused> {
        let index = self
            .npc_index(npc)
            .ok_or_else(|| ("npc", unknown_npc(&self.name, npc)))?;
        self.agents[index].layers.set_engaged(Some(reason.into()));
        self.cancel(index, reason, out);
        self.release_running(index);
        self.order_ended(index, "interrupted", Some(reason), out);
        let engaged = NpcEvent::NpcEngaged {
            npc: npc.to_owned(),
            reason: reason.to_owned(),
        };
        self.publish(index, StreamKind::NpcEvents, &engaged, out);
        Ok(())
    }

    /// The game gives NPC `npc` back: it decides afresh on the next tick.
    pub(super) fn release(&mut self, npc: &str, out: &mut ZoneOutput) -> Result<(), Refused> {
        let index = self
            .npc_index(npc)
            .ok_or_else(|| ("npc", unknown_npc(&self.name, npc)))?;
        let engaged = self.agents[index]
            .layers
            .get_mut()
            .and_then(|layers| layers.engaged.take());
        if engaged.is_none() {
            return Err(("npc", format!("NPC `{npc}` is not engaged")));
        }
        let released = NpcEvent::NpcReleased {
            npc: npc.to_owned(),
        };
        self.publish(index, StreamKind::NpcEvents, &released, out);
        Ok(())
    }

    /// A goal the game gives NPC `npc` (a quest); its `goal_created` follows.
    pub(super) fn assign_goal(
        &mut self,
        npc: &str,
        goal: &AssignedGoal,
        out: &mut ZoneOutput,
    ) -> Result<(), Refused> {
        let index = self
            .npc_index(npc)
            .ok_or_else(|| ("npc", unknown_npc(&self.name, npc)))?;
        // Decoded against a copy: the facts it names are names a world event brings, taken only
        // within `tick.max_event_names`.
        let mut vocabulary = self.vocabulary.clone();
        let predicate = self
            .goal_predicates
            .decode(&goal.predicate, &mut vocabulary)
            .map_err(|e| ("goal.predicate", e.to_string()))?;
        let limit = self.config.tick.max_event_names;
        if vocabulary.len().saturating_sub(self.content_names) > limit {
            return Err((
                "goal.predicate",
                format!(
                    "it names new names, and world events have added the most a zone takes \
                     (tick.max_event_names = {limit})"
                ),
            ));
        }
        self.vocabulary = vocabulary;
        let assigned = Goal {
            category: GoalCategory::Assigned,
            source: "game".into(),
            target: None,
            description: goal.description.clone(),
            predicate,
            deadline_hours: goal.deadline_hours.map(|h| self.now_hours() + h),
            due_within_hours: None,
            priority_bonus: goal
                .priority
                .unwrap_or(self.config.integration.assigned_goal_priority),
            id: Some(goal.id.clone()),
        };
        // The goals it came with are told first, once, so this one is not told twice.
        self.announce_goals_of(index, out);
        let note = assigned.note();
        let book = self.agents[index]
            .layers
            .make_mut()
            .goals
            .get_or_insert_with(Default::default);
        book.add(assigned).map_err(|refused| match refused {
            GoalRefused::Duplicate => (
                "goal.id",
                format!(
                    "NPC `{npc}` already pursues goal `{}` or its equal",
                    goal.id
                ),
            ),
            GoalRefused::Full => (
                "goal",
                format!(
                    "NPC `{npc}` already pursues {} goals, its most",
                    book.capacity
                ),
            ),
        })?;
        self.emit(index, &[SimEvent::GoalCreated { goal: note }], out);
        Ok(())
    }

    /// Announces the goals NPCs came with (an archetype's innate ones, a traveller's), once per
    /// NPC, so every goal's end follows a `goal_created` naming it.
    pub(super) fn announce_goals(&mut self, out: &mut ZoneOutput) {
        if !std::mem::take(&mut self.goals_unannounced) {
            return;
        }
        for index in 0..self.agents.len() {
            self.announce_goals_of(index, out);
        }
    }

    /// Announces the goals NPC `index` came with, unless they were announced.
    fn announce_goals_of(&mut self, index: usize, out: &mut ZoneOutput) {
        if std::mem::replace(&mut self.meta[index].game.goals_announced, true) {
            return;
        }
        let created: Vec<SimEvent> = self.agents[index]
            .layers
            .goals
            .iter()
            .flat_map(|book| &book.goals)
            .map(|goal| SimEvent::GoalCreated { goal: goal.note() })
            .collect();
        if !created.is_empty() {
            self.emit(index, &created, out);
        }
    }

    /// A goal as its NPC events name it.
    pub(super) fn goal_fields(&self, goal: &GoalNote) -> GoalFields {
        GoalFields {
            goal_id: goal.id.clone(),
            category: goal.category.as_str().to_owned(),
            source: goal.source.clone(),
            target: goal.target.clone(),
            predicate: self
                .goal_predicates
                .encode(&goal.predicate, &self.vocabulary),
            deadline_hours: goal.deadline_hours,
        }
    }

    /// After a tick, for the NPCs it processed that track a mood (`with_mood`): each whose
    /// mood crossed into another band reports it (`mood_changed`), at most once per
    /// `mood_event_min_ticks`.
    pub(super) fn report_moods(&mut self, with_mood: &[usize], out: &mut ZoneOutput) {
        let integration = &self.config.integration;
        let (min_ticks, tick) = (integration.mood_event_min_ticks, self.tick);
        let name = |band: u8| {
            integration
                .mood_band_names
                .get(usize::from(band))
                .cloned()
                .unwrap_or_default()
        };
        let mut changes = Vec::new();
        for &index in with_mood {
            let Some((_, wellbeing)) = self.agents[index].layers.wellbeing.as_deref() else {
                continue;
            };
            let value = wellbeing.mood;
            let below = integration.mood_bands.iter().filter(|b| value >= **b);
            // At most `MAX_MOOD_BANDS` bounds (the config's check), so a band fits a byte.
            let band = u8::try_from(below.count()).unwrap_or(u8::MAX);
            let state = &mut self.meta[index].game;
            let Some(was) = state.mood_band else {
                state.mood_band = Some(band);
                continue;
            };
            let rested = state
                .mood_reported_at
                .is_none_or(|at| tick.saturating_sub(at) >= min_ticks);
            if band == was || !rested {
                continue;
            }
            state.mood_band = Some(band);
            state.mood_reported_at = Some(tick);
            let changed = NpcEvent::MoodChanged {
                npc: self.agents[index].agent.id.clone(),
                mood: name(band),
                from: name(was),
                value: (value * 1000.0).round() / 1000.0,
                cause: state
                    .felt
                    .take()
                    .map_or_else(|| "needs".into(), String::from),
            };
            changes.push((index, changed));
        }
        for (index, changed) in changes {
            self.publish(index, StreamKind::NpcEvents, &changed, out);
        }
    }

    /// NPC `index` comes out of Background (or is caught up over a time jump): it is placed
    /// where its schedule puts it now, and the game is told (`npc_relocated`) before it
    /// decides.
    pub(super) fn place_on_schedule(&mut self, index: usize, out: &mut ZoneOutput) {
        let now = self.world.now_hours;
        let Some(place) = self.agents[index]
            .layers
            .schedule
            .as_ref()
            .and_then(|s| s.location_at(&self.world, now))
        else {
            return;
        };
        let Some(room) = self.providers.get(&place).map(|p| p.room) else {
            return;
        };
        if room == self.meta[index].room {
            return;
        }
        self.cancel(index, "relocated", out);
        self.release_running(index);
        self.order_ended(index, "interrupted", Some("relocated"), out);
        let from = room_key(&self.room_names, self.meta[index].room).to_owned();
        self.move_npc(index, room);
        if let Some(position) = self.provider_position(&place) {
            self.agents[index].agent.position = position;
        }
        let activity = self.agents[index]
            .layers
            .schedule
            .as_ref()
            .and_then(|s| s.activity_at(&self.world, now))
            .map(|symbol| self.vocabulary.name(symbol).to_owned());
        let (leave, arrive) = relocation_lines(&self.meta[index].name, activity.as_deref());
        let relocated = NpcEvent::NpcRelocated {
            npc: self.agents[index].agent.id.clone(),
            from,
            to: room_key(&self.room_names, room).to_owned(),
            activity,
            leave,
            arrive,
        };
        self.publish(index, StreamKind::NpcEvents, &relocated, out);
    }

    /// An admin reinstates NPC `npc`, held by isolation.
    pub(super) fn reinstate(&mut self, npc: &str, out: &mut ZoneOutput) -> Result<(), Refused> {
        let index = self
            .npc_index(npc)
            .ok_or_else(|| ("npc", unknown_npc(&self.name, npc)))?;
        if !self.isolation.reinstate(npc) {
            return Err(("npc", format!("NPC `{npc}` is not held")));
        }
        out.isolation_changed = Some(self.isolation.state.clone());
        let reinstated = NpcEvent::NpcReinstated {
            npc: npc.to_owned(),
        };
        self.publish(index, StreamKind::NpcEvents, &reinstated, out);
        Ok(())
    }

    /// An admin resets archetype `archetype`'s breaker (`id`: the world message's).
    pub(super) fn reset_breaker(
        &mut self,
        id: &str,
        archetype: &str,
        out: &mut ZoneOutput,
    ) -> Result<(), Refused> {
        if !self.isolation.reset_breaker(archetype) {
            return Err((
                "archetype",
                format!("the breaker of archetype `{archetype}` is not tripped"),
            ));
        }
        out.isolation_changed = Some(self.isolation.state.clone());
        let h = header(
            format!("{}:admin:{id}", self.name),
            &self.name,
            self.game_time,
        );
        out.push(
            StreamKind::NpcEvents,
            &h,
            &NpcEvent::BreakerReset {
                archetype: archetype.to_owned(),
            },
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests;
