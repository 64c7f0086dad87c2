//! Who is due at a tick, without a pass over every NPC: the Active NPCs (due every tick) and
//! the Nearby and Background ones bucketed by the tick they are due at. An NPC of a tier
//! stepped every `every` ticks is due at tick `t` when `(t + id_hash) mod every = 0`, so each
//! bucket holds the NPCs of one `id_hash mod every` and a tick reads one bucket a tier. Built
//! from the NPCs' tiers, kept as NPCs change tier (each moved to its new list), rebuilt when
//! NPCs join or leave.

use super::NpcMeta;
use crate::zone::tiers::Tier;

/// The NPCs of each tier by index, the slower tiers in buckets by due tick.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Cadence {
    active: Vec<usize>,
    nearby: Buckets,
    background: Buckets,
}

/// NPC indices (ascending) by `id_hash mod every`.
#[derive(Clone, Debug, Default, PartialEq)]
struct Buckets {
    every: u64,
    by_remainder: Vec<Vec<usize>>,
}

impl Buckets {
    fn new(every: u64) -> Self {
        let every = every.max(1);
        Self {
            every,
            by_remainder: vec![Vec::new(); usize::try_from(every).unwrap_or(usize::MAX)],
        }
    }

    fn insert(&mut self, id_hash: u64, index: usize) {
        if let Some(bucket) = self.bucket(id_hash) {
            insert_sorted(bucket, index);
        }
    }

    fn remove(&mut self, id_hash: u64, index: usize) {
        if let Some(bucket) = self.bucket(id_hash) {
            remove_sorted(bucket, index);
        }
    }

    /// The bucket of the NPCs of `id_hash`.
    fn bucket(&mut self, id_hash: u64) -> Option<&mut Vec<usize>> {
        let remainder = usize::try_from(id_hash % self.every).unwrap_or(0);
        self.by_remainder.get_mut(remainder)
    }

    /// The remainder of `id_hash` that is due at `tick`: `−tick` modulo `every`.
    fn due_remainder(&self, tick: u64) -> u64 {
        (self.every - tick % self.every) % self.every
    }

    /// Whether an NPC of `id_hash` is due at `tick`.
    fn is_due(&self, tick: u64, id_hash: u64) -> bool {
        id_hash % self.every == self.due_remainder(tick)
    }

    /// The NPCs due at `tick`.
    fn due_at(&self, tick: u64) -> &[usize] {
        usize::try_from(self.due_remainder(tick))
            .ok()
            .and_then(|r| self.by_remainder.get(r))
            .map_or(&[], Vec::as_slice)
    }
}

/// Inserts `index` into an ascending list of NPC indices unless it is there.
pub(super) fn insert_sorted(list: &mut Vec<usize>, index: usize) {
    if let Err(at) = list.binary_search(&index) {
        list.insert(at, index);
    }
}

/// Removes `index` from an ascending list of NPC indices if it is there.
pub(super) fn remove_sorted(list: &mut Vec<usize>, index: usize) {
    if let Ok(at) = list.binary_search(&index) {
        list.remove(at);
    }
}

impl Cadence {
    /// The cadence of `meta`'s NPCs with Nearby stepped every `nearby_every` ticks and
    /// Background every `background_every`.
    pub(super) fn of(meta: &[NpcMeta], nearby_every: u64, background_every: u64) -> Self {
        let mut cadence = Self {
            active: Vec::new(),
            nearby: Buckets::new(nearby_every),
            background: Buckets::new(background_every),
        };
        for (index, meta) in meta.iter().enumerate() {
            match meta.tier.tier {
                Tier::Active => cadence.active.push(index),
                Tier::Nearby => cadence.nearby.insert(meta.id_hash, index),
                Tier::Background => cadence.background.insert(meta.id_hash, index),
            }
        }
        cadence
    }

    /// NPC `index` (of `id_hash`) went from tier `from` to `to`.
    pub(super) fn retier(&mut self, index: usize, id_hash: u64, from: Tier, to: Tier) {
        match from {
            Tier::Active => remove_sorted(&mut self.active, index),
            Tier::Nearby => self.nearby.remove(id_hash, index),
            Tier::Background => self.background.remove(id_hash, index),
        }
        match to {
            Tier::Active => insert_sorted(&mut self.active, index),
            Tier::Nearby => self.nearby.insert(id_hash, index),
            Tier::Background => self.background.insert(id_hash, index),
        }
    }

    /// Every Active NPC (the caller decides which of them the governor has slowed down).
    pub(super) fn active(&self) -> &[usize] {
        &self.active
    }

    /// An Active NPC slowed to the Nearby cadence is due at `tick` (the Nearby rule).
    pub(super) fn nearby_due(&self, tick: u64, id_hash: u64) -> bool {
        self.nearby.is_due(tick, id_hash)
    }

    /// The Nearby NPCs due at `tick`, in ascending index.
    pub(super) fn nearby_due_at(&self, tick: u64) -> &[usize] {
        self.nearby.due_at(tick)
    }

    /// The Background NPCs due at `tick`, in ascending index.
    pub(super) fn background_due_at(&self, tick: u64) -> &[usize] {
        self.background.due_at(tick)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_npc_is_due_exactly_when_its_tick_plus_hash_is_a_multiple_of_its_step() {
        let mut buckets = Buckets::new(60);
        let hashes = [0u64, 1, 59, 60, 61, 12_345_678_901, u64::MAX / 3];
        for (index, hash) in hashes.iter().enumerate() {
            buckets.insert(*hash, index);
        }
        for tick in 0..400u64 {
            let due: Vec<usize> = buckets.due_at(tick).to_vec();
            let expected: Vec<usize> = hashes
                .iter()
                .enumerate()
                .filter(|(_, hash)| (tick + **hash % 60).is_multiple_of(60))
                .map(|(index, _)| index)
                .collect();
            assert_eq!(due, expected, "tick {tick}");
        }
    }
}
