//! The [`StoryDetector`]: its buffer, history, live signals and respect ranking, and a detection
//! run over time (begun every `every_ticks` ticks, one step a tick, the power shift last), with
//! each step's situations raised as new signals or merged into live ones. What each rule looks
//! for is in [`super::bonds`], [`super::knowledge`] and [`super::welfare`].

use std::collections::{BTreeMap, BTreeSet};

use super::config::DetectorConfig;
use super::found::{Candidate, Found};
use crate::social::chronicle::{EventBuffer, StoryEvent, StoryEventKind};
use crate::social::relationships::Facet;
use crate::story::history::History;
use crate::story::signal::{SignalChange, SignalClaimError, SignalEnd, SignalType, StorySignal};

/// A detection rule over the history at a game hour (power shift, which keeps state, aside).
type Rule = for<'d> fn(&'d StoryDetector, f64) -> Vec<Found<'d>>;

/// The rules, in the order a detection runs them.
const RULES: [Rule; 14] = [
    StoryDetector::rivalry,
    StoryDetector::faction_tension,
    StoryDetector::threats,
    StoryDetector::scarcity,
    StoryDetector::trade,
    StoryDetector::alliances,
    StoryDetector::discoveries,
    StoryDetector::blocked_goals,
    StoryDetector::betrayals,
    StoryDetector::secrets,
    StoryDetector::unrequited,
    StoryDetector::crises,
    StoryDetector::celebrations,
    StoryDetector::migrations,
];

/// Steps of a detection: each rule, then the influence ranking (power shift). A ticking
/// detector runs one a tick.
pub const DETECTION_STEPS: usize = RULES.len() + 1;

/// A detection in progress: the game hour it reads the history at and its next step.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Detecting {
    now_hours: f64,
    next_step: usize,
}

/// The detector: buffer, history, live signals and the influence ranking it tracks.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct StoryDetector {
    /// Its numbers (from content, never from a snapshot: see [`StoryDetector::adopt_state`]).
    #[serde(skip)]
    pub config: DetectorConfig,
    buffer: EventBuffer,
    pub(super) history: History,
    ticks: u64,
    live: Vec<(String, StorySignal)>,
    /// The detection in progress (absent from snapshots taken before detections were spread).
    #[serde(default)]
    detecting: Option<Detecting>,
    sequence: u64,
    pub(super) respect: BTreeMap<String, BTreeMap<String, f64>>,
    pub(super) top: Option<String>,
    /// The signals raised in the last 24 game hours: (game hour, type).
    #[serde(default)]
    raised_today: Vec<(f64, SignalType)>,
    /// New signals not raised because the day's budget was spent, ever.
    #[serde(default)]
    suppressed: u64,
    /// Ids of live signals merged into or taken since [`StoryDetector::take_changes`].
    #[serde(default)]
    changed: BTreeSet<String>,
    /// Signals that left the live set since then, and why (at most `max_live_signals`, the
    /// oldest dropped, for a caller that never asks).
    #[serde(default)]
    ended: Vec<(StorySignal, SignalEnd)>,
}

impl StoryDetector {
    /// Takes every piece of `saved`'s state (buffer, history, live signals, rankings) and keeps
    /// this detector's own numbers: how a snapshot is restored onto a detector built from the
    /// current content.
    pub fn adopt_state(&mut self, saved: StoryDetector) {
        let config = std::mem::take(&mut self.config);
        *self = Self { config, ..saved };
    }

    /// A detector with `config`.
    pub fn new(config: DetectorConfig) -> Self {
        Self {
            buffer: EventBuffer::new(config.buffer_capacity),
            config,
            history: History::default(),
            ticks: 0,
            live: Vec::new(),
            detecting: None,
            sequence: 0,
            respect: BTreeMap::new(),
            top: None,
            raised_today: Vec::new(),
            suppressed: 0,
            changed: BTreeSet::new(),
            ended: Vec::new(),
        }
    }

    /// What became of live signals since the last call: those merged into or taken (their
    /// state now, by id), then those that ended, in the order they did.
    pub fn take_changes(&mut self) -> Vec<SignalChange> {
        let changed = std::mem::take(&mut self.changed);
        let live = &self.live;
        let updated = changed.into_iter().filter_map(|id| {
            let (_, signal) = live.iter().find(|(_, s)| s.id == id)?;
            Some(SignalChange::Updated(signal.clone()))
        });
        let mut changes: Vec<SignalChange> = updated.collect();
        changes.extend(
            self.ended
                .drain(..)
                .map(|(signal, end)| SignalChange::Ended(signal, end)),
        );
        changes
    }

    /// Consumer `by` takes live signal `id` (taking one it holds again changes nothing).
    pub fn take(&mut self, id: &str, by: &str) -> Result<&StorySignal, SignalClaimError> {
        let (_, signal) = self
            .live
            .iter_mut()
            .find(|(_, s)| s.id == id)
            .ok_or_else(|| SignalClaimError::NotLive(id.to_owned()))?;
        match &signal.taken_by {
            Some(holder) if holder != by => Err(SignalClaimError::TakenByAnother {
                signal: id.to_owned(),
                by: holder.clone(),
            }),
            Some(_) => Ok(signal),
            None => {
                signal.taken_by = Some(by.to_owned());
                self.changed.insert(id.to_owned());
                Ok(signal)
            }
        }
    }

    /// Consumer `by` resolves live signal `id`: it leaves the live set and is returned. A
    /// signal another consumer took is refused; an untaken one any consumer may resolve.
    pub fn resolve(&mut self, id: &str, by: &str) -> Result<StorySignal, SignalClaimError> {
        let index = self
            .live
            .iter()
            .position(|(_, s)| s.id == id)
            .ok_or_else(|| SignalClaimError::NotLive(id.to_owned()))?;
        if let Some(holder) = &self.live[index].1.taken_by
            && holder != by
        {
            return Err(SignalClaimError::TakenByAnother {
                signal: id.to_owned(),
                by: holder.clone(),
            });
        }
        self.changed.remove(id);
        Ok(self.live.remove(index).1)
    }

    /// Notes that `signal` left the live set for `end`.
    fn end(&mut self, signal: StorySignal, end: SignalEnd) {
        self.changed.remove(&signal.id);
        if self.ended.len() >= self.config.max_live_signals.max(1) {
            self.ended.remove(0);
        }
        self.ended.push((signal, end));
    }

    /// New signals not raised because `max_signals_per_day` were raised already, ever.
    pub fn suppressed(&self) -> u64 {
        self.suppressed
    }

    /// Whether a new signal of `signal_type` fits the day's budget at `now_hours`: fewer than
    /// `max_signals_per_day` were raised in the last 24 game hours, and the last
    /// `daily_slots_for_new_kinds` of them go only to a type not raised in those hours.
    fn within_budget(&mut self, signal_type: SignalType, now_hours: f64) -> bool {
        let budget = self.config.max_signals_per_day;
        if budget == 0 {
            return true;
        }
        self.raised_today.retain(|(at, _)| now_hours - at < 24.0);
        let open = budget.saturating_sub(self.config.daily_slots_for_new_kinds);
        let raised = self.raised_today.len();
        let new_kind = !self.raised_today.iter().any(|(_, k)| *k == signal_type);
        if raised < open || (raised < budget && new_kind) {
            self.raised_today.push((now_hours, signal_type));
            return true;
        }
        self.suppressed += 1;
        false
    }

    /// Buffers an event for the next detection.
    pub fn push(&mut self, event: StoryEvent) {
        self.buffer.push(event);
    }

    /// Events waiting for the next detection.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Events dropped from a full buffer, ever.
    pub fn dropped(&self) -> u64 {
        self.buffer.dropped
    }

    /// Signals alive (raised or merged, not expired at the last detection).
    pub fn live(&self) -> impl Iterator<Item = &StorySignal> {
        self.live.iter().map(|(_, s)| s)
    }

    /// Counts a tick. Every `every_ticks`-th starts a detection at `now_hours`, and a detection
    /// runs one step a tick from then (see [`DETECTION_STEPS`]): its signals come out over the
    /// following ticks, each exactly as an all-at-once [`StoryDetector::detect`] at `now_hours`
    /// would raise it, and no tick carries every rule.
    pub fn tick(&mut self, now_hours: f64) -> Vec<StorySignal> {
        self.ticks += 1;
        let mut raised = Vec::new();
        if self.ticks.is_multiple_of(self.config.every_ticks.max(1)) {
            raised = self.finish_detection();
            self.begin_detection(now_hours);
        }
        raised.extend(self.detection_step());
        raised
    }

    /// Swaps the buffer out, runs every rule and returns the new signals (merged ones are not
    /// returned again). A detection still in progress finishes first.
    pub fn detect(&mut self, now_hours: f64) -> Vec<StorySignal> {
        let mut raised = self.finish_detection();
        self.begin_detection(now_hours);
        raised.extend(self.finish_detection());
        raised
    }

    /// Runs the steps left of the detection in progress, if any.
    fn finish_detection(&mut self) -> Vec<StorySignal> {
        let mut raised = Vec::new();
        while self.detecting.is_some() {
            raised.extend(self.detection_step());
        }
        raised
    }

    /// Moves the buffered events into the history (the rules read it as it is now until the
    /// detection ends), forgets what fell out of every window and the signals that expired.
    fn begin_detection(&mut self, now_hours: f64) {
        let batch = self.buffer.take();
        for event in &batch {
            if let StoryEventKind::RelationshipChanged {
                from,
                to,
                facet: Facet::Respect,
                value,
                ..
            } = &event.kind
            {
                self.respect
                    .entry(to.clone())
                    .or_default()
                    .insert(from.clone(), *value);
            }
        }
        let capacity = self.config.history_capacity;
        self.history.reserve_within(batch.len(), capacity);
        self.history.extend(batch);
        let keep_from = now_hours
            - self
                .config
                .rivalry_window_hours
                .max(self.config.pattern_window_hours)
                .max(self.config.gathering_window_hours);
        self.history
            .trim_front(|oldest, len| oldest.at_hours < keep_from || len > capacity);
        let (live, lapsed) = std::mem::take(&mut self.live)
            .into_iter()
            .partition(|(_, s)| s.expires_at_hours > now_hours || s.taken_by.is_some());
        self.live = live;
        for (_, signal) in lapsed {
            self.end(signal, SignalEnd::Lapsed);
        }
        self.detecting = Some(Detecting {
            now_hours,
            next_step: 0,
        });
    }

    /// The next step of the detection in progress: a rule, or last the influence ranking; its
    /// situations raised or merged into the live signals.
    fn detection_step(&mut self) -> Vec<StorySignal> {
        let Some(Detecting {
            now_hours,
            next_step,
        }) = self.detecting
        else {
            return Vec::new();
        };
        let found: Vec<Candidate> = match RULES.get(next_step) {
            Some(rule) => rule(self, now_hours)
                .into_iter()
                .filter(|f| f.has_fresh_evidence(&self.history))
                .map(|f| f.finish(self.config.max_named_npcs.max(1)))
                .collect(),
            None => self.power_shift().into_iter().collect(),
        };
        if next_step + 1 >= DETECTION_STEPS {
            self.detecting = None;
        } else {
            self.detecting = Some(Detecting {
                now_hours,
                next_step: next_step + 1,
            });
        }
        self.raise_or_merge(found, now_hours)
    }

    /// Raises each of `found` as a new signal, or merges it into the live one about the same
    /// situation — the same anchor, or the same incident (see
    /// [`DetectorConfig::incident_window_hours`]); returns the new ones. A merge keeps the
    /// signal's named NPCs and adds the newcomers while there is room.
    fn raise_or_merge(&mut self, found: Vec<Candidate>, now_hours: f64) -> Vec<StorySignal> {
        let mut raised = Vec::new();
        for Candidate {
            signal_type,
            anchor,
            importance,
            npcs,
            players,
            location,
            context,
        } in found
        {
            let ttl = self.config.signal_ttl_hours;
            let expires = now_hours + ttl;
            let incident_since = now_hours - self.config.incident_window_hours;
            let same_incident = |s: &StorySignal| {
                s.location == location
                    && s.expires_at_hours - ttl >= incident_since
                    && s.involved_npcs.iter().any(|npc| npcs.contains(npc))
            };
            let max_named = self.config.max_named_npcs.max(1);
            let open_since = now_hours - self.config.incident_max_hours;
            if let Some((_, live)) = self.live.iter_mut().find(|(a, s)| {
                s.signal_type == signal_type
                    && s.created_at_hours >= open_since
                    && (*a == anchor || same_incident(s))
            }) {
                let mut involved: BTreeSet<String> = live.involved_npcs.drain(..).collect();
                for npc in npcs {
                    if involved.len() >= max_named {
                        break;
                    }
                    involved.insert(npc);
                }
                live.involved_npcs = involved.into_iter().collect();
                let mut seen: BTreeSet<String> = live.involved_players.drain(..).collect();
                seen.extend(players);
                live.involved_players = seen.into_iter().collect();
                live.importance = live.importance.max(importance);
                live.expires_at_hours = expires;
                live.context.extend(context);
                live.merged += 1;
                self.changed.insert(live.id.clone());
                continue;
            }
            if !self.within_budget(signal_type, now_hours) {
                continue;
            }
            if self.live.len() >= self.config.max_live_signals.max(1) {
                // The soonest to lapse gives way, a signal nobody took before a taken one.
                let soonest = self
                    .live
                    .iter()
                    .enumerate()
                    .min_by(|(_, (_, a)), (_, (_, b))| {
                        (a.taken_by.is_some().cmp(&b.taken_by.is_some()))
                            .then(a.expires_at_hours.total_cmp(&b.expires_at_hours))
                    })
                    .map(|(i, _)| i);
                if let Some(i) = soonest {
                    let (_, displaced) = self.live.remove(i);
                    self.end(displaced, SignalEnd::Displaced);
                }
            }
            self.sequence += 1;
            let signal = StorySignal {
                id: format!("{}:{}", signal_type.as_str(), self.sequence),
                signal_type,
                importance: importance.clamp(0.0, 1.0),
                involved_npcs: npcs.into_iter().collect(),
                involved_players: players.into_iter().collect(),
                location,
                context,
                created_at_hours: now_hours,
                expires_at_hours: expires,
                merged: 0,
                taken_by: None,
            };
            self.live.push((anchor, signal.clone()));
            raised.push(signal);
        }
        raised
    }
}
