//! The load generator's report: throughput, latency and tick-time percentiles, NPCs per tier
//! and the process's memory, as the lines `geppetto load` prints.

use std::fmt::Write as _;

use geppetto_llm::SpendCounts;

use crate::drive::spend::spend_line;
use crate::zone::tiers::Tier;

/// One zone at the end of a run: its name, NPCs per tier and tick durations (ms).
pub(crate) type ZoneFigures = (String, Vec<(Tier, usize)>, Vec<f64>);

/// What a run measured.
pub(crate) struct Measured {
    /// NPCs in each zone.
    pub npcs: usize,
    /// Rooms with a player in each zone, and rooms in all.
    pub layout: (usize, usize),
    /// `redis` or `in-process`.
    pub bus: &'static str,
    /// Wall-clock seconds of the run, and of the part that sent events.
    pub wall: f64,
    pub sending: f64,
    /// World events sent, applied by the zones and outputs published.
    pub sent: u64,
    pub applied: u64,
    pub published: u64,
    /// Messages the bus dropped.
    pub dropped: u64,
    /// Social event → `social_interaction`, and `time_advanced` → first intent, ms.
    pub social_latencies: Vec<f64>,
    pub tick_latencies: Vec<f64>,
    /// Each zone's figures.
    pub zones: Vec<ZoneFigures>,
    /// The LLM endpoint, if any, and the lines said.
    pub llm_url: Option<String>,
    pub says: u64,
    /// What the model cost, when there is one, over this many game hours of every zone.
    pub spend: Option<SpendCounts>,
    pub game_hours: f64,
    /// The process's resident memory while its zones ran (read before they stop), MiB.
    pub rss_mib: f64,
    /// What the in-process bus's streams held then (their messages' bytes), MiB.
    pub bus_held_mib: f64,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// The process's `field` of `/proc/self/status` (`VmRSS`: resident now, `VmHWM`: its peak), MiB.
pub(crate) fn memory_mib(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| {
                    l.strip_prefix(field)
                        .is_some_and(|rest| rest.starts_with(':'))
                })
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn summary(label: &str, values: &mut [f64]) -> String {
    values.sort_by(f64::total_cmp);
    format!(
        "{label}: n={} p50={:.3} p99={:.3} max={:.3}",
        values.len(),
        percentile(values, 50.0),
        percentile(values, 99.0),
        values.last().copied().unwrap_or_default()
    )
}

/// NPCs per tier, as `active 580, nearby 1520, background 97900`.
fn tier_list(tiers: &[(Tier, usize)]) -> String {
    let tiers: Vec<String> = tiers
        .iter()
        .map(|(t, n)| format!("{} {n}", t.as_str()))
        .collect();
    tiers.join(", ")
}

/// NPCs per tier over every zone, in the order a zone lists them.
fn tiers_in_all(zones: &[ZoneFigures]) -> Vec<(Tier, usize)> {
    let mut tiers: Vec<(Tier, usize)> = Vec::new();
    for (tier, count) in zones.iter().flat_map(|(_, tiers, _)| tiers) {
        match tiers.iter_mut().find(|(t, _)| t == tier) {
            Some((_, sum)) => *sum += count,
            None => tiers.push((*tier, *count)),
        }
    }
    tiers
}

impl Measured {
    /// The first lines: what ran, on which bus, for how long, and the world events' throughput.
    fn headline(&self) -> String {
        let mut report = String::new();
        let (player_rooms, rooms) = self.layout;
        let (bus, wall, npcs) = (self.bus, self.wall, self.npcs);
        let tiers = tier_list(&tiers_in_all(&self.zones));
        // Writing into a `String` cannot fail.
        if self.zones.len() == 1 {
            let _ = writeln!(
                report,
                "load: {npcs} NPCs ({tiers}; players in {player_rooms} of {rooms} rooms), bus {bus}, {wall:.1} s",
            );
        } else {
            let _ = writeln!(
                report,
                "load: {} zones of {npcs} NPCs, {} in all ({tiers}; players in {player_rooms} of {rooms} rooms of each zone), bus {bus}, {wall:.1} s",
                self.zones.len(),
                npcs * self.zones.len(),
            );
        }
        let _ = writeln!(
            report,
            "world events sent {}, applied {} ({:.0}/s over the {:.1} s they were sent), published {}, bus dropped {}",
            self.sent,
            self.applied,
            self.applied as f64 / self.sending,
            self.sending,
            self.published,
            self.dropped
        );
        report
    }

    /// The report's lines.
    pub(crate) fn report(mut self) -> String {
        let mut report = self.headline();
        let all_npcs = self.npcs * self.zones.len();
        let _ = writeln!(
            report,
            "{} ms",
            summary(
                "event->output latency (social_event -> npc_event)",
                &mut self.social_latencies
            )
        );
        let _ = writeln!(
            report,
            "{} ms",
            summary(
                "time_advanced->first intent latency",
                &mut self.tick_latencies
            )
        );
        let mut all_durations: Vec<f64> = (self.zones.iter())
            .flat_map(|(_, _, durations)| durations.iter().copied())
            .collect();
        let _ = writeln!(
            report,
            "{} ms",
            summary("tick duration", &mut all_durations)
        );
        if self.zones.len() > 1 {
            for (name, tiers, mut durations) in self.zones {
                let _ = writeln!(
                    report,
                    "zone {name} ({}): {} ms",
                    tier_list(&tiers),
                    summary("tick duration", &mut durations)
                );
            }
        }
        let _ = writeln!(
            report,
            "llm: {}, {} said lines perceived",
            self.llm_url.as_deref().unwrap_or("templates only"),
            self.says
        );
        if let Some(spend) = &self.spend {
            let _ = writeln!(report, "{}", spend_line(spend, all_npcs, self.game_hours));
        }
        let _ = write!(
            report,
            "rss {:.1} MiB while running (peak {:.1} MiB); the bus's streams held {:.1} MiB of messages",
            self.rss_mib,
            memory_mib("VmHWM"),
            self.bus_held_mib
        );
        report
    }
}
