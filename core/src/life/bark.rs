//! Barks: the short lines an NPC says aloud — "Gods, I'm starving" — chosen
//! from data by need, mood and cooldown, deterministically from a seed. A bark is flavour the
//! game shows; it never changes state. A line grows stale: its cooldown is × the times the NPC
//! said it in the last 24 game hours (at least once), so an innkeeper's hourly welcome is heard
//! some seven times a day, not twenty-four.

use crate::decision::agent::Agent;
use crate::rng::DetRng;
use crate::vocabulary::Symbol;

/// One line and when it may be said.
#[derive(Clone, Debug, PartialEq)]
pub struct BarkTemplate {
    /// Identifies it (for cooldowns and the intent).
    pub id: String,
    /// What is said; `{name}` is replaced by the speaker's id.
    pub text: String,
    /// The need that prompts it; `None` for a mood-only line.
    pub trigger: Option<Symbol>,
    /// It fires while the trigger's normalised value is below this (0–1).
    pub below: f64,
    /// Mood range it fits, inclusive (−1..1).
    pub mood: (f64, f64),
    /// Game minutes before the same line may be said again by the same NPC.
    pub cooldown_minutes: f64,
}

/// An NPC's memory of its barks.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BarkMemory {
    /// Per template id, the game hour it was last said.
    pub last_said: Vec<(String, f64)>,
    /// Each line said in the last 24 game hours: (template id, game hour).
    #[serde(default)]
    pub said_today: Vec<(String, f64)>,
}

/// Game hours a line said counts toward its staleness.
const STALE_HOURS: f64 = 24.0;

/// A line chosen to be said.
#[derive(Clone, Debug, PartialEq)]
pub struct Bark {
    /// The template's id.
    pub id: String,
    /// The text with placeholders filled.
    pub text: String,
}

fn normalised(agent: &Agent, need: Symbol) -> Option<f64> {
    let c = agent.consideration(need)?;
    Some(if c.max > c.min {
        ((c.value - c.min) / (c.max - c.min)).clamp(0.0, 1.0)
    } else {
        0.0
    })
}

/// Game minutes of rounding forgiven when a cooldown ends, so a line due at minute 20 is not
/// held back by the float error of summing minute ticks.
const COOLDOWN_SLACK_MINUTES: f64 = 1e-6;

/// Chooses a line for `agent` at `now_hours` with mood `mood`, or none. Among the lines whose
/// trigger is met, whose mood range fits and which are not cooling down, the most pressing
/// wins (the lowest threshold met — "starving" before "peckish"; need lines before mood-only
/// ones), ties broken by the seed. The chosen line starts its cooldown.
pub fn choose(
    templates: &[BarkTemplate],
    agent: &Agent,
    mood: f64,
    now_hours: f64,
    memory: &mut BarkMemory,
    seed: u64,
) -> Option<Bark> {
    memory
        .said_today
        .retain(|(_, at)| now_hours - at < STALE_HOURS);
    let cooling = |id: &str, cooldown: f64| {
        let times = memory
            .said_today
            .iter()
            .filter(|(said, _)| said == id)
            .count();
        let cooldown = cooldown * times.max(1) as f64;
        memory.last_said.iter().any(|(said, at)| {
            said == id && (now_hours - at) * 60.0 + COOLDOWN_SLACK_MINUTES < cooldown
        })
    };
    let mut best: Vec<(usize, f64)> = Vec::new();
    for (index, template) in templates.iter().enumerate() {
        if mood < template.mood.0
            || mood > template.mood.1
            || cooling(&template.id, template.cooldown_minutes)
        {
            continue;
        }
        let urgency = match template.trigger {
            Some(need) => match normalised(agent, need) {
                // The line for the more extreme state (lower threshold) is the more pressing.
                Some(value) if value < template.below => 2.0 - template.below,
                _ => continue,
            },
            None => 0.5,
        };
        match best.first() {
            Some(&(_, top)) if urgency < top => {}
            Some(&(_, top)) if urgency == top => best.push((index, urgency)),
            _ => best = vec![(index, urgency)],
        }
    }
    if best.is_empty() {
        return None;
    }
    let (index, _) = best[DetRng::new(seed).next_index(best.len())];
    let template = &templates[index];
    memory.last_said.retain(|(id, _)| *id != template.id);
    memory.last_said.push((template.id.clone(), now_hours));
    memory.said_today.push((template.id.clone(), now_hours));
    Some(Bark {
        id: template.id.clone(),
        text: template.text.replace("{name}", &agent.id),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::consideration::Consideration;
    use crate::decision::world::Position;
    use crate::vocabulary::Vocabulary;

    fn setup() -> (Vec<BarkTemplate>, Agent) {
        let mut v = Vocabulary::new();
        let hunger = v.intern("HUNGER");
        let mut agent = Agent::new("bram", Position::default());
        agent
            .considerations
            .push(Consideration::new(hunger, 10.0, 0.0, 100.0));
        let templates = vec![
            BarkTemplate {
                id: "starving".into(),
                text: "{name} could eat a horse.".into(),
                trigger: Some(hunger),
                below: 0.2,
                mood: (-1.0, 1.0),
                cooldown_minutes: 30.0,
            },
            BarkTemplate {
                id: "peckish".into(),
                text: "Is it supper yet?".into(),
                trigger: Some(hunger),
                below: 0.5,
                mood: (-1.0, 1.0),
                cooldown_minutes: 30.0,
            },
            BarkTemplate {
                id: "grumble".into(),
                text: "Bah.".into(),
                trigger: None,
                below: 0.0,
                mood: (-1.0, -0.3),
                cooldown_minutes: 10.0,
            },
        ];
        (templates, agent)
    }

    #[test]
    fn the_most_pressing_line_wins_and_then_cools_down() {
        let (templates, agent) = setup();
        let mut memory = BarkMemory::default();
        let first = choose(&templates, &agent, 0.0, 12.0, &mut memory, 1).expect("a line");
        assert_eq!(first.text, "bram could eat a horse.");
        let second = choose(&templates, &agent, 0.0, 12.1, &mut memory, 1).expect("a line");
        assert_eq!(second.id, "peckish", "the first is cooling down");
        assert_eq!(
            choose(&templates, &agent, 0.0, 12.2, &mut memory, 1),
            None,
            "both cooling, mood too good to grumble"
        );
        assert_eq!(
            choose(&templates, &agent, -0.5, 12.2, &mut memory, 1).map(|b| b.id),
            Some("grumble".into())
        );
        assert_eq!(
            choose(&templates, &agent, 0.0, 12.6, &mut memory, 1).map(|b| b.id),
            Some("starving".into()),
            "30 minutes later"
        );
    }

    #[test]
    fn a_met_need_says_nothing_and_the_choice_is_deterministic() {
        let (templates, mut agent) = setup();
        agent.considerations[0].value = 90.0;
        assert_eq!(
            choose(&templates, &agent, 0.0, 1.0, &mut BarkMemory::default(), 7),
            None
        );
        agent.considerations[0].value = 10.0;
        let a = choose(&templates, &agent, 0.0, 1.0, &mut BarkMemory::default(), 7);
        let b = choose(&templates, &agent, 0.0, 1.0, &mut BarkMemory::default(), 7);
        assert_eq!(a, b);
    }

    #[test]
    fn a_line_said_often_grows_stale_for_a_day() {
        let (templates, agent) = setup();
        let welcome = [templates[2].clone()];
        let mut memory = BarkMemory::default();
        let said: Vec<f64> = (0..24 * 60)
            .map(|minute| f64::from(minute) / 60.0)
            .filter(|&hour| choose(&welcome, &agent, -0.5, hour, &mut memory, 1).is_some())
            .collect();
        // A 10-minute line: said at 0, 10, 30, 60, 100… minutes — each wait one cooldown longer.
        assert_eq!(&said[..4], [0.0, 10.0 / 60.0, 0.5, 1.0]);
        assert!(said.len() < 20, "not 144 times a day: {}", said.len());
        let next_day = choose(&welcome, &agent, -0.5, 48.0, &mut memory, 1);
        assert!(next_day.is_some(), "fresh again after a quiet day");
        assert_eq!(
            memory.said_today.len(),
            1,
            "only the last 24 hours are kept"
        );
    }
}
