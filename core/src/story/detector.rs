//! The story-signal detector (seed 001 §4.6). Events accumulate in a bounded buffer
//! (default 1000, oldest dropped); every `every_ticks` ticks (default 30) the buffer is swapped
//! out and appended to a bounded history, and each rule reads the history over its window.
//! A ticking detector spreads a detection over [`DETECTION_STEPS`] ticks, one rule a tick and
//! the influence ranking last, each reading the history and game hour of the tick the detection
//! began: its signals come out over those ticks exactly as an all-at-once detection would raise
//! them (same ids, hours and contents), and no tick carries every rule.
//! A rule fires only on fresh evidence — events that arrived since the previous detection
//! began (by arrival, not game hour: see [`super::history`]); a situation already live
//! (same type and anchor — the pair, subject, place… it is about) is merged into the live
//! signal (involved NPCs and players joined, importance raised, expiry extended) rather than
//! raised again. Signals expire `signal_ttl_hours` (24) after their last evidence.
//!
//! Because only fresh evidence fires, the costly rules first note which situations (pairs,
//! places, the market) have any, and gather the window's evidence for those alone: a detection
//! costs a cheap pass over the window plus work in proportion to what is new, not to the
//! history a 48-hour window holds. What they find is exactly what gathering everything and
//! then dropping the stale would find.
//!
//! The rules (thresholds are [`DetectorConfig`] fields; windows: rivalry 48 h, gatherings
//! 2 h, the rest 6 h):
//!
//! | signal | fires when | importance |
//! |---|---|---|
//! | rivalry_escalation | a pair's trust in each other (both directions summed) fell by ≥ 0.3 within 48 h | the fall, ≤ 1 |
//! | faction_tension | ≥ 3 arguments/intimidations between members of two different factions | conflicts / 6 |
//! | threat_detected | an NPC witnessed a hostile act, or accepted a threat rumour more credible than 0.6 | 0.9 witnessed, else the credibility |
//! | resource_scarcity | ≥ 3 NPCs fell short (below the low line) of the same need | NPCs / 6 |
//! | trade_opportunity | ≥ 2 NPCs wanted trade (a trade refused them, or an opportunity believed) while a trade succeeded | demand / 4 |
//! | alliance_forming | a scheme against a third succeeded, or two NPCs aware of the same threat became allies (loyalty crossed 0.6) | 0.6 |
//! | discovery | an NPC saw something first-hand, or believed a rumour at credibility ≥ 0.7 | 0.7 / the credibility |
//! | goal_blocked | no plan reaches a goal, or the same goal failed ≥ 2 times | 0.6 / 0.5 |
//! | betrayal | a hostile act against someone loyal (> 0.6) to its doer, or a scheme against one | that loyalty |
//! | secret_revealed | a secret was told and believed | the credibility |
//! | power_shift | the most respected NPC (mean respect, ≥ 2 raters) changed, by a margin ≥ 0.05 | 0.5 + margin |
//! | unrequited | a courtship refused while the suitor's affinity ≥ 0.65 and the other's ≤ 0.4 | the gap |
//! | crisis | ≥ 3 NPCs' mood fell below −0.2 or stress rose above 0.7 | NPCs / 6 |
//! | celebration | ≥ 3 friendly interactions succeeded in one place among ≥ 4 NPCs whose mean mood ≥ 0.3 | mean mood |
//! | migration | ≥ 4 NPCs arrived in, or left, one place | NPCs / 8 |

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::event::{EventBuffer, GoalChange, StoryEvent, StoryEventKind};
use super::history::{EventClass, EventKeys, History};
use super::signal::{SignalType, StorySignal};
use crate::social::gossip::RumourTopic;
use crate::social::interaction::InteractionKind;
use crate::social::relationships::Facet;

/// The detector's numbers, each a named default (seed 001 where it gives one).
#[derive(Clone, Debug, PartialEq)]
pub struct DetectorConfig {
    /// Ticks between detections; default 30.
    pub every_ticks: u64,
    /// Events buffered between detections at most; default 1000.
    pub buffer_capacity: usize,
    /// Events kept for the rules' windows at most; default 20 000.
    pub history_capacity: usize,
    /// Live signals kept at most (the soonest to expire goes first); default 512.
    pub max_live_signals: usize,
    /// A counted rule's importance reaches 1 at this multiple of its threshold; default 2.
    pub importance_saturation: f64,
    /// Importance of a power shift before its margin is added; default 0.5.
    pub power_shift_importance: f64,
    /// Game hours a signal lives after its last evidence; default 24.
    pub signal_ttl_hours: f64,
    /// Window of most rules; default 6.
    pub pattern_window_hours: f64,
    /// Window of crisis, celebration and migration; default 2.
    pub gathering_window_hours: f64,
    /// Window of rivalry; default 48.
    pub rivalry_window_hours: f64,
    /// Trust fall that makes a rivalry; default 0.3.
    pub rivalry_trust_drop: f64,
    /// Conflicts between two factions that make tension; default 3.
    pub faction_min_conflicts: usize,
    /// A believed threat counts above this credibility; default 0.6.
    pub threat_credible_above: f64,
    /// Importance of a witnessed hostile act; default 0.9.
    pub witnessed_threat_importance: f64,
    /// NPCs short of one need that make scarcity; default 3.
    pub scarcity_min_npcs: usize,
    /// NPCs wanting trade that make an opportunity; default 2.
    pub trade_min_demand: usize,
    /// Loyalty above which two NPCs are allies; default 0.6.
    pub ally_loyalty_above: f64,
    /// Importance of an alliance; default 0.6.
    pub alliance_importance: f64,
    /// A believed rumour is a discovery from this credibility; default 0.7.
    pub discovery_credibility_above: f64,
    /// Importance of a first-hand discovery; default 0.7.
    pub discovery_importance: f64,
    /// Failures of one goal that make it blocked; default 2.
    pub goal_failures_blocked: usize,
    /// Importance of a goal no plan reaches; default 0.6.
    pub goal_blocked_importance: f64,
    /// Importance of a goal that keeps failing; default 0.5.
    pub goal_failing_importance: f64,
    /// Raters an NPC needs to rank in influence; default 2.
    pub power_min_raters: usize,
    /// Lead the new top NPC needs over the old one; default 0.05.
    pub power_shift_margin: f64,
    /// A refused suitor's affinity at least this…; default 0.65.
    pub unrequited_affinity_above: f64,
    /// …while the other's is at most this; default 0.4.
    pub unrequited_other_below: f64,
    /// Distressed NPCs that make a crisis; default 3.
    pub crisis_min_npcs: usize,
    /// Mood below this is distress; default −0.2.
    pub crisis_mood_below: f64,
    /// Stress above this is distress; default 0.7.
    pub crisis_stress_above: f64,
    /// NPCs a celebration gathers; default 4.
    pub celebration_min_npcs: usize,
    /// Friendly interactions a celebration has; default 3.
    pub celebration_min_positive: usize,
    /// Mean mood of a celebration; default 0.3.
    pub celebration_mood_above: f64,
    /// NPCs moving to or from one place that make a migration; default 4.
    pub migration_min_npcs: usize,
}

impl Default for DetectorConfig {
    fn default() -> Self {
        Self {
            every_ticks: 30,
            buffer_capacity: 1000,
            history_capacity: 20_000,
            max_live_signals: 512,
            importance_saturation: 2.0,
            power_shift_importance: 0.5,
            signal_ttl_hours: 24.0,
            pattern_window_hours: 6.0,
            gathering_window_hours: 2.0,
            rivalry_window_hours: 48.0,
            rivalry_trust_drop: 0.3,
            faction_min_conflicts: 3,
            threat_credible_above: 0.6,
            witnessed_threat_importance: 0.9,
            scarcity_min_npcs: 3,
            trade_min_demand: 2,
            ally_loyalty_above: 0.6,
            alliance_importance: 0.6,
            discovery_credibility_above: 0.7,
            discovery_importance: 0.7,
            goal_failures_blocked: 2,
            goal_blocked_importance: 0.6,
            goal_failing_importance: 0.5,
            power_min_raters: 2,
            power_shift_margin: 0.05,
            unrequited_affinity_above: 0.65,
            unrequited_other_below: 0.4,
            crisis_min_npcs: 3,
            crisis_mood_below: -0.2,
            crisis_stress_above: 0.7,
            celebration_min_npcs: 4,
            celebration_min_positive: 3,
            celebration_mood_above: 0.3,
            migration_min_npcs: 4,
        }
    }
}

/// A situation a rule found, before merging.
struct Found<'e> {
    signal_type: SignalType,
    anchor: String,
    importance: f64,
    npcs: BTreeSet<String>,
    evidence: Vec<&'e StoryEvent>,
    context: BTreeMap<String, String>,
    location: Option<String>,
}

impl<'e> Found<'e> {
    fn new(signal_type: SignalType, anchor: impl Into<String>, importance: f64) -> Self {
        Self {
            signal_type,
            anchor: anchor.into(),
            importance: importance.clamp(0.0, 1.0),
            npcs: BTreeSet::new(),
            evidence: Vec::new(),
            context: BTreeMap::new(),
            location: None,
        }
    }

    /// Places it here rather than where its latest evidence happened.
    fn at(mut self, location: &str) -> Self {
        self.location = Some(location.to_owned());
        self
    }

    fn npcs<'a>(mut self, npcs: impl IntoIterator<Item = &'a str>) -> Self {
        self.npcs.extend(npcs.into_iter().map(str::to_owned));
        self
    }

    fn evidence(mut self, events: impl IntoIterator<Item = &'e StoryEvent>) -> Self {
        self.evidence.extend(events);
        self
    }

    fn context(mut self, key: &str, value: impl ToString) -> Self {
        self.context.insert(key.to_owned(), value.to_string());
        self
    }

    /// Whether any of its evidence is fresh in `history`.
    fn has_fresh_evidence(&self, history: &History) -> bool {
        self.evidence.iter().any(|e| history.is_fresh(e))
    }
}

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

/// NPCs gathered by a rule and the events that show it.
type Gathering<'e> = (BTreeSet<&'e str>, Vec<&'e StoryEvent>);

/// `count / (scale × threshold)`, in [0, 1].
fn ratio(count: usize, threshold: usize, scale: f64) -> f64 {
    (count as f64 / (scale * threshold.max(1) as f64)).clamp(0.0, 1.0)
}

/// `a` and `b` joined as `a|b`, with a `|` or `\` inside either escaped by `\`, so two
/// different couples never share a name (it anchors their signals).
fn joined(a: &str, b: &str) -> String {
    fn escaped(id: &str) -> Cow<'_, str> {
        if id.contains(['|', '\\']) {
            Cow::Owned(id.replace('\\', "\\\\").replace('|', "\\|"))
        } else {
            Cow::Borrowed(id)
        }
    }
    format!("{}|{}", escaped(a), escaped(b))
}

/// The pair `a`, `b` as one name, the same either way round (see [`joined`]).
fn pair(a: &str, b: &str) -> String {
    if a <= b { joined(a, b) } else { joined(b, a) }
}

/// What of the history a rule reads.
#[derive(Clone, Copy)]
enum Reading {
    /// Every event.
    All,
    /// The newest batch alone: the fresh evidence.
    Fresh,
}

/// The most common location among `events` (ties by name).
fn most_common(events: &[&StoryEvent]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for e in events {
        *counts.entry(e.location.as_str()).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
        .map(|(l, _)| l.to_owned())
        .unwrap_or_default()
}

/// A situation ready to raise or merge.
struct Candidate {
    signal_type: SignalType,
    anchor: String,
    importance: f64,
    npcs: BTreeSet<String>,
    players: BTreeSet<String>,
    location: String,
    context: BTreeMap<String, String>,
}

impl Found<'_> {
    fn finish(self) -> Candidate {
        let seen: BTreeSet<&str> = self
            .evidence
            .iter()
            .flat_map(|e| e.players.iter().map(String::as_str))
            .collect();
        let players = seen.into_iter().map(str::to_owned).collect();
        let location = self.location.unwrap_or_else(|| {
            self.evidence
                .iter()
                .max_by(|a, b| a.at_hours.total_cmp(&b.at_hours))
                .map(|e| e.location.clone())
                .unwrap_or_default()
        });
        Candidate {
            signal_type: self.signal_type,
            anchor: self.anchor,
            importance: self.importance,
            npcs: self.npcs,
            players,
            location,
            context: self.context,
        }
    }
}

/// The detector: buffer, history, live signals and the influence ranking it tracks.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct StoryDetector {
    /// Its numbers (from content, never from a snapshot: see [`StoryDetector::adopt_state`]).
    #[serde(skip)]
    pub config: DetectorConfig,
    buffer: EventBuffer,
    history: History,
    ticks: u64,
    live: Vec<(String, StorySignal)>,
    /// The detection in progress (absent from snapshots taken before detections were spread).
    #[serde(default)]
    detecting: Option<Detecting>,
    sequence: u64,
    respect: BTreeMap<String, BTreeMap<String, f64>>,
    top: Option<String>,
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
        }
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
        self.history.extend(batch);
        let keep_from = now_hours
            - self
                .config
                .rivalry_window_hours
                .max(self.config.pattern_window_hours)
                .max(self.config.gathering_window_hours);
        let capacity = self.config.history_capacity;
        self.history
            .trim_front(|oldest, len| oldest.at_hours < keep_from || len > capacity);
        self.live.retain(|(_, s)| s.expires_at_hours > now_hours);
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
                .map(Found::finish)
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
    /// situation; returns the new ones.
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
            let expires = now_hours + self.config.signal_ttl_hours;
            if let Some((_, live)) = self
                .live
                .iter_mut()
                .find(|(a, s)| s.signal_type == signal_type && *a == anchor)
            {
                let mut involved: BTreeSet<String> = live.involved_npcs.drain(..).collect();
                involved.extend(npcs);
                live.involved_npcs = involved.into_iter().collect();
                let mut seen: BTreeSet<String> = live.involved_players.drain(..).collect();
                seen.extend(players);
                live.involved_players = seen.into_iter().collect();
                live.importance = live.importance.max(importance);
                live.expires_at_hours = expires;
                live.context.extend(context);
                live.merged += 1;
                continue;
            }
            if self.live.len() >= self.config.max_live_signals.max(1) {
                let soonest = self
                    .live
                    .iter()
                    .enumerate()
                    .min_by(|a, b| a.1.1.expires_at_hours.total_cmp(&b.1.1.expires_at_hours))
                    .map(|(i, _)| i);
                if let Some(i) = soonest {
                    self.live.remove(i);
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
            };
            self.live.push((anchor, signal.clone()));
            raised.push(signal);
        }
        raised
    }

    /// The events of `classes` within `hours` of `now_hours` in `reading`, with their keys,
    /// oldest first; chosen by their keys alone, so the events a rule does not read are never
    /// touched.
    fn keyed_within(
        &self,
        reading: Reading,
        now_hours: f64,
        hours: f64,
        classes: &'static [EventClass],
    ) -> impl Iterator<Item = (EventKeys, &StoryEvent)> {
        let from = match reading {
            Reading::All => 0,
            Reading::Fresh => self.history.fresh_start(),
        };
        let after_hours = now_hours - hours;
        self.history
            .keyed_from(from)
            .filter(move |(keys, _)| keys.at_hours > after_hours && classes.contains(&keys.class))
    }

    fn within(
        &self,
        reading: Reading,
        now_hours: f64,
        hours: f64,
        classes: &'static [EventClass],
    ) -> impl Iterator<Item = &StoryEvent> {
        self.keyed_within(reading, now_hours, hours, classes)
            .map(|(_, e)| e)
    }

    /// The pattern window's events of `classes` in `reading`. A rule whose every event is a
    /// situation of its own reads the fresh ones alone (a stale one could not fire).
    fn pattern(
        &self,
        reading: Reading,
        now_hours: f64,
        classes: &'static [EventClass],
    ) -> impl Iterator<Item = &StoryEvent> {
        self.within(
            reading,
            now_hours,
            self.config.pattern_window_hours,
            classes,
        )
    }

    fn rivalry<'d>(&'d self, now_hours: f64) -> Vec<Found<'d>> {
        let hours = self.config.rivalry_window_hours;
        let window = || {
            self.keyed_within(
                Reading::All,
                now_hours,
                hours,
                &[EventClass::RelationshipChanged, EventClass::Interaction],
            )
        };
        let is_trust = |e: &StoryEvent| {
            matches!(
                &e.kind,
                StoryEventKind::RelationshipChanged {
                    facet: Facet::Trust,
                    ..
                }
            )
        };
        // A pair's evidence is its trust changes: only pairs with a fresh one can fire.
        let fresh: BTreeSet<u64> = self
            .keyed_within(
                Reading::Fresh,
                now_hours,
                hours,
                &[EventClass::RelationshipChanged],
            )
            .filter(|(_, e)| is_trust(e))
            .map(|(keys, _)| keys.pair)
            .collect();
        if fresh.is_empty() {
            return Vec::new();
        }
        // Keyed by the pair's hash first (a cheap compare), then its names in `pair`'s order
        // (two pairs sharing a hash stay apart).
        let ordered = |a: &'d str, b: &'d str| if a <= b { (a, b) } else { (b, a) };
        let mut pairs: BTreeMap<(u64, &str, &str), Vec<&StoryEvent>> = BTreeMap::new();
        let mut conflicts: BTreeMap<(u64, &str, &str), usize> = BTreeMap::new();
        for (keys, e) in window().filter(|(keys, _)| fresh.contains(&keys.pair)) {
            match &e.kind {
                StoryEventKind::RelationshipChanged {
                    from,
                    to,
                    facet: Facet::Trust,
                    ..
                } => {
                    let (a, b) = ordered(from, to);
                    pairs.entry((keys.pair, a, b)).or_default().push(e);
                }
                StoryEventKind::Interaction {
                    initiator,
                    target,
                    interaction,
                    ..
                } if interaction.is_hostile() => {
                    let (a, b) = ordered(initiator, target);
                    *conflicts.entry((keys.pair, a, b)).or_default() += 1;
                }
                _ => {}
            }
        }
        let mut found = Vec::new();
        for (key, events) in pairs {
            let mut fall = 0.0;
            let mut latest_cause = None;
            let mut trust_level = None;
            let mut names = ("", "");
            for e in &events {
                if let StoryEventKind::RelationshipChanged {
                    from,
                    to,
                    delta,
                    value,
                    cause,
                    ..
                } = &e.kind
                {
                    fall += delta;
                    if *delta < 0.0 {
                        latest_cause = Some(cause.as_str());
                    }
                    trust_level = Some(*value);
                    names = (from.as_str(), to.as_str());
                }
            }
            if fall <= -self.config.rivalry_trust_drop {
                found.push(
                    Found::new(SignalType::RivalryEscalation, pair(key.1, key.2), -fall)
                        .npcs([names.0, names.1])
                        .evidence(events)
                        .context("cause", latest_cause.unwrap_or_default())
                        .context("trust_level", format!("{:.2}", trust_level.unwrap_or(0.0)))
                        .context("trust_fall", format!("{:.2}", -fall))
                        .context(
                            "recent_conflicts",
                            conflicts.get(&key).copied().unwrap_or(0),
                        ),
                );
            }
        }
        // In the order of their anchors, as the rule has always listed them.
        found.sort_by(|a, b| a.anchor.cmp(&b.anchor));
        found
    }

    fn faction_tension(&self, now_hours: f64) -> Vec<Found<'_>> {
        let mut sides: BTreeMap<String, Vec<&StoryEvent>> = BTreeMap::new();
        for e in self.pattern(Reading::All, now_hours, &[EventClass::Interaction]) {
            if let StoryEventKind::Interaction {
                interaction: InteractionKind::Argument | InteractionKind::Intimidation,
                initiator_faction: Some(a),
                target_faction: Some(b),
                ..
            } = &e.kind
                && a != b
            {
                sides.entry(pair(a, b)).or_default().push(e);
            }
        }
        sides
            .into_iter()
            .filter(|(_, events)| events.len() >= self.config.faction_min_conflicts)
            .map(|(factions, events)| {
                let npcs: Vec<&str> = events
                    .iter()
                    .filter_map(|e| match &e.kind {
                        StoryEventKind::Interaction {
                            initiator, target, ..
                        } => Some([initiator.as_str(), target.as_str()]),
                        _ => None,
                    })
                    .flatten()
                    .collect();
                Found::new(
                    SignalType::FactionTension,
                    factions.clone(),
                    ratio(
                        events.len(),
                        self.config.faction_min_conflicts,
                        self.config.importance_saturation,
                    ),
                )
                .npcs(npcs)
                .context("factions", factions)
                .context("conflicts", events.len())
                .evidence(events)
            })
            .collect()
    }

    /// Subjects of witnessed acts and credible threats: subject → (aware NPCs, importance,
    /// evidence).
    fn threat_awareness(
        &self,
        now_hours: f64,
    ) -> BTreeMap<&str, (BTreeSet<&str>, f64, Vec<&StoryEvent>)> {
        let mut subjects: BTreeMap<&str, (BTreeSet<&str>, f64, Vec<&StoryEvent>)> = BTreeMap::new();
        for e in self.pattern(
            Reading::All,
            now_hours,
            &[EventClass::Witnessed, EventClass::RumourHeard],
        ) {
            let (subject, aware, importance) = match &e.kind {
                StoryEventKind::Witnessed { witness, actor, .. } => (
                    actor.as_str(),
                    witness.as_str(),
                    self.config.witnessed_threat_importance,
                ),
                StoryEventKind::RumourHeard {
                    listener,
                    subject,
                    gossip: RumourTopic::Threat,
                    credibility,
                    accepted: true,
                    ..
                } if *credibility > self.config.threat_credible_above => {
                    (subject.as_str(), listener.as_str(), *credibility)
                }
                _ => continue,
            };
            let entry = subjects.entry(subject).or_default();
            entry.0.insert(aware);
            entry.1 = entry.1.max(importance);
            entry.2.push(e);
        }
        subjects
    }

    fn threats(&self, now_hours: f64) -> Vec<Found<'_>> {
        self.threat_awareness(now_hours)
            .into_iter()
            .map(|(subject, (aware, importance, events))| {
                Found::new(SignalType::ThreatDetected, subject, importance)
                    .npcs(aware.iter().copied().chain([subject]))
                    .context("subject", subject)
                    .context("aware", aware.len())
                    .evidence(events)
            })
            .collect()
    }

    fn scarcity(&self, now_hours: f64) -> Vec<Found<'_>> {
        let mut short: BTreeMap<&str, (BTreeSet<&str>, Vec<&StoryEvent>)> = BTreeMap::new();
        for e in self.pattern(Reading::All, now_hours, &[EventClass::NeedLow]) {
            if let StoryEventKind::NeedLow { npc, need, .. } = &e.kind {
                let entry = short.entry(need.as_str()).or_default();
                entry.0.insert(npc.as_str());
                entry.1.push(e);
            }
        }
        short
            .into_iter()
            .filter(|(_, (npcs, _))| npcs.len() >= self.config.scarcity_min_npcs)
            .map(|(need, (npcs, events))| {
                Found::new(
                    SignalType::ResourceScarcity,
                    need,
                    ratio(
                        npcs.len(),
                        self.config.scarcity_min_npcs,
                        self.config.importance_saturation,
                    ),
                )
                .npcs(npcs.iter().copied())
                .context("need", need)
                .context("short", npcs.len())
                .at(&most_common(&events))
                .evidence(events)
            })
            .collect()
    }

    fn trade(&self, now_hours: f64) -> Vec<Found<'_>> {
        const TRADE: &[EventClass] = &[EventClass::Interaction, EventClass::RumourHeard];
        let evidence_of_trade = |e: &StoryEvent| {
            matches!(
                &e.kind,
                StoryEventKind::Interaction {
                    interaction: InteractionKind::Trade,
                    ..
                } | StoryEventKind::RumourHeard {
                    gossip: RumourTopic::Opportunity,
                    accepted: true,
                    ..
                }
            )
        };
        if !self
            .pattern(Reading::Fresh, now_hours, TRADE)
            .any(evidence_of_trade)
        {
            return Vec::new();
        }
        // Sets only counted and joined into the signal's (sorted) NPCs: their order is moot.
        let mut demand: HashSet<&str> = HashSet::new();
        let mut supply: HashSet<&str> = HashSet::new();
        let mut evidence = Vec::new();
        let mut market = None;
        for e in self.pattern(Reading::All, now_hours, TRADE) {
            match &e.kind {
                StoryEventKind::Interaction {
                    initiator,
                    target,
                    interaction: InteractionKind::Trade,
                    success,
                    ..
                } => {
                    if *success {
                        supply.extend([initiator.as_str(), target.as_str()]);
                        market = Some(e.location.as_str());
                    } else {
                        demand.insert(initiator.as_str());
                    }
                    evidence.push(e);
                }
                StoryEventKind::RumourHeard {
                    listener,
                    gossip: RumourTopic::Opportunity,
                    accepted: true,
                    ..
                } => {
                    demand.insert(listener.as_str());
                    evidence.push(e);
                }
                _ => {}
            }
        }
        match market {
            Some(market) if demand.len() >= self.config.trade_min_demand => {
                vec![
                    Found::new(
                        SignalType::TradeOpportunity,
                        market,
                        ratio(
                            demand.len(),
                            self.config.trade_min_demand,
                            self.config.importance_saturation,
                        ),
                    )
                    .npcs(demand.iter().chain(&supply).copied())
                    .context("demand", demand.len())
                    .context("suppliers", supply.len())
                    .context("market", market)
                    .at(market)
                    .evidence(evidence),
                ]
            }
            _ => Vec::new(),
        }
    }

    fn alliances(&self, now_hours: f64) -> Vec<Found<'_>> {
        let awareness = self.threat_awareness(now_hours);
        let mut found = Vec::new();
        for e in self.pattern(
            Reading::Fresh,
            now_hours,
            &[EventClass::Interaction, EventClass::RelationshipChanged],
        ) {
            match &e.kind {
                StoryEventKind::Interaction {
                    initiator,
                    target,
                    interaction: InteractionKind::Scheming,
                    success: true,
                    against: Some(victim),
                    ..
                } => found.push(
                    Found::new(
                        SignalType::AllianceForming,
                        pair(initiator, target),
                        self.config.alliance_importance,
                    )
                    .npcs([initiator.as_str(), target.as_str()])
                    .context("against", victim)
                    .evidence([e]),
                ),
                StoryEventKind::RelationshipChanged {
                    from,
                    to,
                    facet: Facet::Loyalty,
                    delta,
                    value,
                    ..
                } if *value > self.config.ally_loyalty_above
                    && value - delta <= self.config.ally_loyalty_above =>
                {
                    let common = awareness.iter().find(|(_, (aware, _, _))| {
                        aware.contains(from.as_str()) && aware.contains(to.as_str())
                    });
                    if let Some((subject, _)) = common {
                        found.push(
                            Found::new(
                                SignalType::AllianceForming,
                                pair(from, to),
                                self.config.alliance_importance,
                            )
                            .npcs([from.as_str(), to.as_str()])
                            .context("against", subject)
                            .evidence([e]),
                        );
                    }
                }
                _ => {}
            }
        }
        found
    }

    fn discoveries(&self, now_hours: f64) -> Vec<Found<'_>> {
        self.pattern(
            Reading::Fresh,
            now_hours,
            &[EventClass::Witnessed, EventClass::RumourHeard],
        )
        .filter_map(|e| match &e.kind {
            StoryEventKind::Witnessed {
                witness,
                actor,
                act,
            } => Some(
                Found::new(
                    SignalType::Discovery,
                    pair(witness, actor),
                    self.config.discovery_importance,
                )
                .npcs([witness.as_str(), actor.as_str()])
                .context("learned", format!("{actor} {act}"))
                .context("first_hand", true)
                .evidence([e]),
            ),
            StoryEventKind::RumourHeard {
                listener,
                subject,
                gossip,
                credibility,
                accepted: true,
                ..
            } if *credibility >= self.config.discovery_credibility_above => Some(
                Found::new(SignalType::Discovery, pair(listener, subject), *credibility)
                    .npcs([listener.as_str()])
                    .context("learned", format!("{} about {subject}", gossip.as_str()))
                    .context("first_hand", false)
                    .evidence([e]),
            ),
            _ => None,
        })
        .collect()
    }

    fn blocked_goals(&self, now_hours: f64) -> Vec<Found<'_>> {
        let mut failures: BTreeMap<(&str, &str), Vec<&StoryEvent>> = BTreeMap::new();
        let mut found = Vec::new();
        for e in self.pattern(Reading::All, now_hours, &[EventClass::Goal]) {
            match &e.kind {
                StoryEventKind::Goal {
                    npc,
                    description,
                    change: GoalChange::Blocked,
                } => found.push(
                    Found::new(
                        SignalType::GoalBlocked,
                        joined(npc, description),
                        self.config.goal_blocked_importance,
                    )
                    .npcs([npc.as_str()])
                    .context("goal", description)
                    .context("reason", "no plan")
                    .evidence([e]),
                ),
                StoryEventKind::Goal {
                    npc,
                    description,
                    change: GoalChange::Failed,
                } => failures
                    .entry((npc.as_str(), description.as_str()))
                    .or_default()
                    .push(e),
                _ => {}
            }
        }
        for ((npc, description), events) in failures {
            if events.len() >= self.config.goal_failures_blocked {
                found.push(
                    Found::new(
                        SignalType::GoalBlocked,
                        joined(npc, description),
                        self.config.goal_failing_importance,
                    )
                    .npcs([npc])
                    .context("goal", description)
                    .context("reason", format!("failed {} times", events.len()))
                    .evidence(events),
                );
            }
        }
        found
    }

    fn betrayals(&self, now_hours: f64) -> Vec<Found<'_>> {
        let ally = self.config.ally_loyalty_above;
        self.pattern(Reading::Fresh, now_hours, &[EventClass::Interaction])
            .filter_map(|e| {
                let StoryEventKind::Interaction {
                    initiator,
                    target,
                    interaction,
                    against,
                    target_loyalty_before,
                    victim_loyalty_before,
                    ..
                } = &e.kind
                else {
                    return None;
                };
                let (betrayed, loyalty) = match (interaction, against, victim_loyalty_before) {
                    (InteractionKind::Scheming, Some(victim), Some(loyalty)) if *loyalty > ally => {
                        (victim.as_str(), *loyalty)
                    }
                    (InteractionKind::Argument | InteractionKind::Intimidation, _, _)
                        if *target_loyalty_before > ally =>
                    {
                        (target.as_str(), *target_loyalty_before)
                    }
                    _ => return None,
                };
                Some(
                    Found::new(SignalType::Betrayal, pair(initiator, betrayed), loyalty)
                        .npcs([initiator.as_str(), betrayed])
                        .context("traitor", initiator)
                        .context("betrayed", betrayed)
                        .context("act", interaction.as_str())
                        .evidence([e]),
                )
            })
            .collect()
    }

    fn secrets(&self, now_hours: f64) -> Vec<Found<'_>> {
        self.pattern(Reading::Fresh, now_hours, &[EventClass::RumourHeard])
            .filter_map(|e| match &e.kind {
                StoryEventKind::RumourHeard {
                    listener,
                    teller,
                    subject,
                    gossip: RumourTopic::Secret,
                    credibility,
                    accepted: true,
                    ..
                } => Some(
                    Found::new(SignalType::SecretRevealed, subject.as_str(), *credibility)
                        .npcs([listener.as_str(), teller.as_str(), subject.as_str()])
                        .context("subject", subject)
                        .context("told_by", teller)
                        .evidence([e]),
                ),
                _ => None,
            })
            .collect()
    }

    /// The influence ranking's change since the last detection, as a finished signal tuple.
    fn power_shift(&mut self) -> Option<Candidate> {
        let influence = |raters: &BTreeMap<String, f64>| {
            (raters.len() >= self.config.power_min_raters)
                .then(|| raters.values().sum::<f64>() / raters.len() as f64)
        };
        let ranked = self
            .respect
            .iter()
            .filter_map(|(npc, raters)| influence(raters).map(|score| (npc.clone(), score)))
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))?;
        let previous = self.top.replace(ranked.0.clone());
        let old = previous.filter(|old| *old != ranked.0)?;
        let old_score = self.respect.get(&old).and_then(influence).unwrap_or(0.0);
        let margin = ranked.1 - old_score;
        if margin < self.config.power_shift_margin {
            self.top = Some(old);
            return None;
        }
        let location = self
            .history
            .events()
            .rev()
            .find(|e| matches!(&e.kind, StoryEventKind::RelationshipChanged { to, facet: Facet::Respect, .. } if *to == ranked.0))
            .map(|e| e.location.clone())
            .unwrap_or_default();
        let context = BTreeMap::from([
            ("from".to_owned(), old.clone()),
            ("to".to_owned(), ranked.0.clone()),
            ("margin".to_owned(), format!("{margin:.2}")),
        ]);
        Some(Candidate {
            signal_type: SignalType::PowerShift,
            anchor: format!("{old}->{}", ranked.0),
            importance: (self.config.power_shift_importance + margin).clamp(0.0, 1.0),
            npcs: BTreeSet::from([old, ranked.0]),
            players: BTreeSet::new(),
            location,
            context,
        })
    }

    fn unrequited(&self, now_hours: f64) -> Vec<Found<'_>> {
        self.pattern(Reading::Fresh, now_hours, &[EventClass::Interaction])
            .filter_map(|e| match &e.kind {
                StoryEventKind::Interaction {
                    initiator,
                    target,
                    interaction: InteractionKind::Courtship,
                    success: false,
                    initiator_affinity,
                    target_affinity,
                    ..
                } if *initiator_affinity >= self.config.unrequited_affinity_above
                    && *target_affinity <= self.config.unrequited_other_below =>
                {
                    Some(
                        Found::new(
                            SignalType::Unrequited,
                            pair(initiator, target),
                            initiator_affinity - target_affinity,
                        )
                        .npcs([initiator.as_str(), target.as_str()])
                        .context("suitor", initiator)
                        .context("beloved", target)
                        .evidence([e]),
                    )
                }
                _ => None,
            })
            .collect()
    }

    fn crises(&self, now_hours: f64) -> Vec<Found<'_>> {
        let mut distressed = BTreeSet::new();
        let mut evidence = Vec::new();
        for e in self.within(
            Reading::All,
            now_hours,
            self.config.gathering_window_hours,
            &[EventClass::MoodChanged],
        ) {
            if let StoryEventKind::MoodChanged {
                npc, mood, stress, ..
            } = &e.kind
                && (*mood < self.config.crisis_mood_below
                    || *stress > self.config.crisis_stress_above)
            {
                distressed.insert(npc.as_str());
                evidence.push(e);
            }
        }
        if distressed.len() < self.config.crisis_min_npcs {
            return Vec::new();
        }
        let place = most_common(&evidence);
        vec![
            Found::new(
                SignalType::Crisis,
                "crisis",
                ratio(
                    distressed.len(),
                    self.config.crisis_min_npcs,
                    self.config.importance_saturation,
                ),
            )
            .npcs(distressed.iter().copied())
            .context("distressed", distressed.len())
            .at(&place)
            .evidence(evidence),
        ]
    }

    fn celebrations(&self, now_hours: f64) -> Vec<Found<'_>> {
        let hours = self.config.gathering_window_hours;
        let window =
            || self.keyed_within(Reading::All, now_hours, hours, &[EventClass::Interaction]);
        let friendly = |e: &StoryEvent| match &e.kind {
            StoryEventKind::Interaction {
                interaction,
                success: true,
                ..
            } => !interaction.is_hostile() && *interaction != InteractionKind::Favor,
            _ => false,
        };
        // A place's evidence is its friendly interactions: only places with a fresh one can
        // fire.
        let fresh: BTreeSet<u64> = self
            .keyed_within(Reading::Fresh, now_hours, hours, &[EventClass::Interaction])
            .filter(|(_, e)| friendly(e))
            .map(|(keys, _)| keys.place)
            .collect();
        let mut places: BTreeMap<&str, (BTreeMap<&str, f64>, Vec<&StoryEvent>)> = BTreeMap::new();
        for (_, e) in window().filter(|(keys, e)| fresh.contains(&keys.place) && friendly(e)) {
            if let StoryEventKind::Interaction {
                initiator,
                target,
                initiator_mood,
                target_mood,
                ..
            } = &e.kind
            {
                let entry = places.entry(e.location.as_str()).or_default();
                entry.0.insert(initiator.as_str(), *initiator_mood);
                entry.0.insert(target.as_str(), *target_mood);
                entry.1.push(e);
            }
        }
        places
            .into_iter()
            .filter_map(|(place, (moods, events))| {
                let mean = moods.values().sum::<f64>() / moods.len().max(1) as f64;
                (events.len() >= self.config.celebration_min_positive
                    && moods.len() >= self.config.celebration_min_npcs
                    && mean >= self.config.celebration_mood_above)
                    .then(|| {
                        Found::new(SignalType::Celebration, place, mean)
                            .npcs(moods.keys().copied())
                            .context("gathered", moods.len())
                            .context("mean_mood", format!("{mean:.2}"))
                            .evidence(events)
                    })
            })
            .collect()
    }

    fn migrations(&self, now_hours: f64) -> Vec<Found<'_>> {
        let mut flows: BTreeMap<(bool, &str), Gathering<'_>> = BTreeMap::new();
        for e in self.within(
            Reading::All,
            now_hours,
            self.config.gathering_window_hours,
            &[EventClass::Moved],
        ) {
            if let StoryEventKind::Moved { npc, from } = &e.kind {
                for key in [(true, e.location.as_str()), (false, from.as_str())] {
                    let entry = flows.entry(key).or_default();
                    entry.0.insert(npc.as_str());
                    entry.1.push(e);
                }
            }
        }
        flows
            .into_iter()
            .filter(|(_, (npcs, _))| npcs.len() >= self.config.migration_min_npcs)
            .map(|((arriving, place), (npcs, events))| {
                let direction = if arriving { "to" } else { "from" };
                Found::new(
                    SignalType::Migration,
                    format!("{direction}:{place}"),
                    ratio(
                        npcs.len(),
                        self.config.migration_min_npcs,
                        self.config.importance_saturation,
                    ),
                )
                .npcs(npcs.iter().copied())
                .context(direction, place)
                .context("movers", npcs.len())
                .at(place)
                .evidence(events)
            })
            .collect()
    }
}
