//! The story-signal detector. Events accumulate in a bounded buffer
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
//! raised again — for `incident_max_hours` (72) after it was raised; later evidence is a new
//! story. Signals expire `signal_ttl_hours` (24) after their last evidence. At most
//! `max_signals_per_day` (20) new signals are raised in any 24 game hours, the last
//! `daily_slots_for_new_kinds` (4) of them only of a type not raised in those hours: a large or
//! turbulent world tells a day's worth of stories, of many kinds, and the rest are counted
//! ([`StoryDetector::suppressed`]).
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
//! | alliance_forming | a scheme against a third succeeded between two not yet allies (the partner's loyalty ≤ 0.6 before), or two NPCs aware of the same threat became allies (loyalty crossed 0.6) | 0.6 |
//! | discovery | an NPC saw something first-hand, or believed a rumour at credibility ≥ 0.7 | 0.7 / the credibility |
//! | goal_blocked | no plan reaches a goal, or the same goal failed ≥ 2 times | 0.6 / 0.5 |
//! | betrayal | a hostile act against someone loyal (> 0.6) to its doer, or a scheme against one | that loyalty |
//! | secret_revealed | a secret was told and believed | the credibility |
//! | power_shift | the most respected NPC (mean respect, ≥ 2 raters) changed, by a margin ≥ 0.05 | 0.5 + margin |
//! | unrequited | a courtship refused while the suitor's affinity ≥ 0.65 and the other's ≤ 0.4 | the gap |
//! | crisis | ≥ 3 NPCs' mood fell below −0.2 or stress rose above 0.7 | NPCs / 6 |
//! | celebration | ≥ 3 friendly interactions succeeded in one place among ≥ 4 NPCs whose mean mood ≥ 0.3 | mean mood |
//! | migration | ≥ 4 NPCs arrived in, or left, one place | NPCs / 8 |
//!
//! The folder, each file importing only those above it in this list: [`config`] (the numbers),
//! [`found`] (what a rule finds and the helpers that name and weigh it), [`detecting`] (the
//! [`StoryDetector`]: buffer, history, the detection's steps, raising and merging signals),
//! [`window`] (how a rule reads the history), and the rules by what they read: [`bonds`]
//! (relationships between people), [`knowledge`] (what NPCs witness and believe) and
//! [`welfare`] (needs, goals, mood, trade and whereabouts).

mod bonds;
mod config;
mod detecting;
mod found;
mod knowledge;
mod welfare;
mod window;

pub use config::DetectorConfig;
pub use detecting::{DETECTION_STEPS, StoryDetector};
