//! Barks: the short lines an NPC says aloud — "Gods, I'm starving" — chosen
//! from data by need, mood and cooldown, deterministically from a seed; and its idle chatter,
//! said at a rate its archetype sets while nothing presses and it runs at full detail (a
//! player in or near its room), so a square a player stands in is not silent. A bark is
//! flavour the game shows; it never changes state. A line grows stale: its cooldown is × the
//! times the NPC said it in the last 24 game hours (at least once), so an innkeeper's hourly
//! welcome is heard some seven times a day, not twenty-four.

use crate::decision::agent::Agent;
use crate::rng::DetRng;
use crate::vocabulary::Symbol;
use thin_vec::ThinVec;

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

/// An NPC's lines: those its needs and mood prompt, and its idle chatter.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BarkLines {
    /// Lines a need or a mood prompts; the most pressing is said.
    pub prompted: Vec<BarkTemplate>,
    /// Idle lines (no need named), said while nothing presses.
    pub chatter: Vec<BarkTemplate>,
    /// Idle lines an hour of full detail, on average (0: none).
    pub chatter_per_hour: f64,
}

impl BarkLines {
    /// Whether there is anything to say.
    pub fn is_empty(&self) -> bool {
        self.prompted.is_empty() && (self.chatter.is_empty() || self.chatter_per_hour <= 0.0)
    }
}

/// An NPC's memory of its barks.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BarkMemory {
    /// Per template id, the game hour it was last said.
    pub last_said: ThinVec<(String, f64)>,
    /// Each line said in the last 24 game hours: (template id, game hour).
    #[serde(default)]
    pub said_today: ThinVec<(String, f64)>,
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
    Some(if c.max() > c.min() {
        ((c.value - c.min()) / (c.max() - c.min())).clamp(0.0, 1.0)
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
    pick(templates, agent, (mood, now_hours), memory, seed, true)
}

/// [`choose`], each line's cooldown × the times it was said today when `stale`.
fn pick(
    templates: &[BarkTemplate],
    agent: &Agent,
    (mood, now_hours): (f64, f64),
    memory: &mut BarkMemory,
    seed: u64,
    stale: bool,
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
        let cooldown = if stale {
            cooldown * times.max(1) as f64
        } else {
            cooldown
        };
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

/// Over an update of `hours` at full detail, an idle line of `lines` for `agent` at
/// `now_hours` with mood `mood`, or none: one comes with probability
/// `1 − exp(−chatter_per_hour · hours)` (so `chatter_per_hour` a game hour on average, whatever
/// the step), a line that fits the mood and is not cooling down, chosen by the seed. Its
/// cooldown does not grow with the times it was said (a designer's rate is kept while lines
/// are free; more lines, less repetition).
pub fn chatter(
    lines: &BarkLines,
    agent: &Agent,
    (mood, now_hours, hours): (f64, f64, f64),
    memory: &mut BarkMemory,
    seed: u64,
) -> Option<Bark> {
    if lines.chatter.is_empty() || lines.chatter_per_hour <= 0.0 || hours <= 0.0 {
        return None;
    }
    let mut rng = DetRng::new(seed);
    let chance = 1.0 - (-lines.chatter_per_hour * hours).exp();
    if rng.next_unit() >= chance {
        return None;
    }
    pick(
        &lines.chatter,
        agent,
        (mood, now_hours),
        memory,
        rng.next_u64(),
        false,
    )
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

    fn idle(id: &str, mood: (f64, f64)) -> BarkTemplate {
        BarkTemplate {
            id: id.into(),
            text: format!("{id}, says {{name}}."),
            trigger: None,
            below: 0.0,
            mood,
            cooldown_minutes: 15.0,
        }
    }

    #[test]
    fn chatter_comes_at_its_rate_whatever_the_step_and_fits_the_mood() {
        let (_, agent) = setup();
        let lines = BarkLines {
            prompted: Vec::new(),
            chatter: (0..8)
                .map(|n| idle(&format!("line{n}"), (-1.0, 1.0)))
                .collect(),
            chatter_per_hour: 3.0,
        };
        for step_minutes in [1u32, 5] {
            let hours = f64::from(step_minutes) / 60.0;
            let mut memory = BarkMemory::default();
            let steps = 200 * 60 / step_minutes;
            let said = (0..steps)
                .filter(|&n| {
                    let now = f64::from(n) * hours;
                    chatter(&lines, &agent, (0.0, now, hours), &mut memory, u64::from(n)).is_some()
                })
                .count();
            // 600 expected over 200 game hours; a seeded draw, well inside ±15 %.
            assert!(
                (510..=690).contains(&said),
                "{step_minutes}-minute steps: {said}"
            );
        }
        let moody = BarkLines {
            chatter: vec![idle("glum", (-1.0, -0.3)), idle("bright", (0.3, 1.0))],
            chatter_per_hour: 1000.0,
            ..BarkLines::default()
        };
        let line = chatter(
            &moody,
            &agent,
            (0.8, 1.0, 0.1),
            &mut BarkMemory::default(),
            3,
        );
        assert_eq!(line.map(|b| b.text), Some("bright, says bram.".into()));
        let mute = BarkLines {
            chatter_per_hour: 0.0,
            ..lines
        };
        assert!(mute.chatter.iter().all(|l| l.trigger.is_none()));
        assert_eq!(
            chatter(
                &mute,
                &agent,
                (0.0, 1.0, 1.0),
                &mut BarkMemory::default(),
                3
            ),
            None
        );
    }
}
