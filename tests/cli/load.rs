//! The load generator (`geppetto load`): throughput, latency and the NPCs per tier, for one
//! zone and for several in one process.

use crate::commands::geppetto;

#[test]
fn the_load_generator_reports_throughput_latency_and_the_npcs_per_tier() {
    // 400 NPCs in 20 rooms, players in 2 of them: their rooms and neighbours Active, rooms up
    // to five steps away Nearby, the rest Background.
    let output = geppetto(
        &[
            "load",
            "--npcs",
            "400",
            "--player-rooms",
            "2",
            "--events-per-sec",
            "100",
            "--seconds",
            "1",
        ],
        "",
    );
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    let head = text.lines().next().unwrap_or_default();
    assert!(head.contains("players in 2 of 20 rooms"), "{head}");
    let count = |tier: &str| tier_count(head, tier);
    let (active, nearby, background) = (count("active"), count("nearby"), count("background"));
    assert_eq!(active + nearby + background, 400, "{head}");
    assert!(active > 0 && nearby > 0 && background > 0, "{head}");
    assert!(text.contains("event->output latency"), "{text}");
    assert!(text.contains("tick duration"), "{text}");
    assert!(text.contains("rss "), "{text}");
}

/// The number after `tier` (`active 12,`) in the head line of a `load` report.
fn tier_count(head: &str, tier: &str) -> usize {
    head.split(&format!("{tier} "))
        .nth(1)
        .and_then(|rest| rest.split([',', ';']).next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {tier} count in {head}"))
}

#[test]
fn the_load_generator_runs_several_zones_in_one_process_and_reports_each() {
    let output = geppetto(
        &[
            "load",
            "--zones",
            "3",
            "--npcs",
            "200",
            "--player-rooms",
            "2",
            "--events-per-sec",
            "60",
            "--seconds",
            "1",
        ],
        "",
    );
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    let head = text.lines().next().unwrap_or_default();
    assert!(
        head.contains("3 zones of 200 NPCs, 600 in all")
            && head.contains("players in 2 of 10 rooms of each zone"),
        "{head}"
    );
    let tiers: usize = ["active", "nearby", "background"]
        .iter()
        .map(|tier| tier_count(head, tier))
        .sum();
    assert_eq!(tiers, 600, "{head}");
    // One tick-duration line a zone, each zone ticked.
    for zone in ["load-0", "load-1", "load-2"] {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("zone {zone} (")))
            .unwrap_or_else(|| panic!("no line for {zone} in {text}"));
        let ticks: usize = line
            .split("tick duration: n=")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no tick count in {line}"));
        assert!(ticks > 0, "{line}");
        assert!(line.contains(" p50=") && line.contains(" p99="), "{line}");
    }
    assert_eq!(text.matches("\nzone load-").count(), 3, "{text}");
    assert!(text.contains("rss ") && text.contains("(peak "), "{text}");
}
