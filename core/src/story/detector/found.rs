//! What a rule finds ([`Found`], then [`Candidate`] once its players and place are settled) and
//! the small helpers rules share to name and weigh it (pair anchors, ratios, the most common
//! place). It reads no history and raises no signal.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;

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
            let mut mentions: FxHashMap<&str, usize> = FxHashMap::default();
            for npc in self.evidence.iter().flat_map(|e| e.npcs()) {
                *mentions.entry(npc).or_default() += 1;
            }
            // Each NPC's count looked up once. Most mentioned first, ties by name: names are
            // unique, so the order is strict and the first `max_named` are the same however
            // they are picked — selected, not sorted, as a crowd may be thousands.
            let mut ranked: Vec<(usize, &String)> = (self.npcs.iter())
                .map(|npc| (mentions.get(npc.as_str()).copied().unwrap_or(0), npc))
                .collect();
            if let Some(last) = max_named.checked_sub(1) {
                ranked.select_nth_unstable_by(last, |a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
            }
            let core: BTreeSet<String> = (ranked[..max_named].iter())
                .map(|(_, npc)| (*npc).clone())
                .collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::social::chronicle::{GoalChange, StoryEventKind};

    fn goal_of(npc: &str) -> StoryEvent {
        StoryEvent {
            at_hours: 1.0,
            location: "square".into(),
            players: Vec::new(),
            kind: StoryEventKind::Goal {
                npc: npc.into(),
                description: String::new(),
                change: GoalChange::Created,
            },
        }
    }

    #[test]
    fn a_crowd_is_named_by_its_most_mentioned_members_ties_by_name() {
        // 300 NPCs mentioned 0–4 times each, so most counts are tied many ways.
        let names: Vec<String> = (0..300)
            .map(|i| format!("npc-{:03}", (i * 7919) % 300))
            .collect();
        let events: Vec<StoryEvent> = (names.iter().enumerate())
            .flat_map(|(i, name)| std::iter::repeat_n(goal_of(name), (i * 31) % 5))
            .collect();
        let found = Found::new(SignalType::Crisis, "square", 0.5)
            .npcs(names.iter().map(String::as_str))
            .evidence(&events);
        let candidate = found.finish(6);

        let count = |npc: &str| events.iter().filter(|e| e.npcs() == [npc]).count();
        let mut expected: Vec<&String> = names.iter().collect();
        expected.sort_by(|a, b| count(b).cmp(&count(a)).then(a.cmp(b)));
        let expected: BTreeSet<String> = expected.into_iter().take(6).cloned().collect();
        assert_eq!(candidate.npcs, expected);
        assert_eq!(candidate.context["participants"], "300");
    }
}
