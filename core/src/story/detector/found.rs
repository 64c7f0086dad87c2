//! What a rule finds ([`Found`], then [`Candidate`] once its players and place are settled) and
//! the small helpers rules share to name and weigh it (pair anchors, ratios, the most common
//! place). It reads no history and raises no signal.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use crate::social::chronicle::StoryEvent;
use crate::story::history::History;
use crate::story::signal::SignalType;

/// A situation a rule found, before merging.
pub(super) struct Found<'e> {
    signal_type: SignalType,
    pub(super) anchor: String,
    importance: f64,
    npcs: BTreeSet<String>,
    evidence: Vec<&'e StoryEvent>,
    context: BTreeMap<String, String>,
    location: Option<String>,
}

impl<'e> Found<'e> {
    pub(super) fn new(signal_type: SignalType, anchor: impl Into<String>, importance: f64) -> Self {
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
    pub(super) fn at(mut self, location: &str) -> Self {
        self.location = Some(location.to_owned());
        self
    }

    pub(super) fn npcs<'a>(mut self, npcs: impl IntoIterator<Item = &'a str>) -> Self {
        self.npcs.extend(npcs.into_iter().map(str::to_owned));
        self
    }

    pub(super) fn evidence(mut self, events: impl IntoIterator<Item = &'e StoryEvent>) -> Self {
        self.evidence.extend(events);
        self
    }

    pub(super) fn context(mut self, key: &str, value: impl ToString) -> Self {
        self.context.insert(key.to_owned(), value.to_string());
        self
    }

    /// Whether any of its evidence is fresh in `history`.
    pub(super) fn has_fresh_evidence(&self, history: &History) -> bool {
        self.evidence.iter().any(|e| history.is_fresh(e))
    }
}

/// NPCs gathered by a rule and the events that show it.
pub(super) type Gathering<'e> = (BTreeSet<&'e str>, Vec<&'e StoryEvent>);

/// `count / (scale × threshold)`, in [0, 1].
pub(super) fn ratio(count: usize, threshold: usize, scale: f64) -> f64 {
    (count as f64 / (scale * threshold.max(1) as f64)).clamp(0.0, 1.0)
}

/// `a` and `b` joined as `a|b`, with a `|` or `\` inside either escaped by `\`, so two
/// different couples never share a name (it anchors their signals).
pub(super) fn joined(a: &str, b: &str) -> String {
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
pub(super) fn pair(a: &str, b: &str) -> String {
    if a <= b { joined(a, b) } else { joined(b, a) }
}

/// The most common location among `events` (ties by name).
pub(super) fn most_common(events: &[&StoryEvent]) -> String {
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
pub(super) struct Candidate {
    pub(super) signal_type: SignalType,
    pub(super) anchor: String,
    pub(super) importance: f64,
    pub(super) npcs: BTreeSet<String>,
    pub(super) players: BTreeSet<String>,
    pub(super) location: String,
    pub(super) context: BTreeMap<String, String>,
}

impl Found<'_> {
    /// Settles its players and place, and names at most `max_named` of its NPCs: those most of
    /// its evidence is about (ties by name); when some are left out, the `participants`
    /// context counts them all.
    pub(super) fn finish(mut self, max_named: usize) -> Candidate {
        if self.npcs.len() > max_named {
            let mut mentions: BTreeMap<&str, usize> = BTreeMap::new();
            for npc in self.evidence.iter().flat_map(|e| e.npcs()) {
                *mentions.entry(npc).or_default() += 1;
            }
            let mut ranked: Vec<&String> = self.npcs.iter().collect();
            ranked.sort_by(|a, b| {
                let count = |npc: &str| mentions.get(npc).copied().unwrap_or(0);
                count(b).cmp(&count(a)).then(a.cmp(b))
            });
            let core: BTreeSet<String> = ranked.into_iter().take(max_named).cloned().collect();
            self.context
                .insert("participants".to_owned(), self.npcs.len().to_string());
            self.npcs = core;
        }
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
