//! Replies: what an NPC says back when a player speaks to it — a line from data chosen by how
//! it regards the speaker (warm, neutral, cold), its mood and whether it is busy, picked
//! deterministically from a seed. Like a bark, a reply is flavour the game shows; it never
//! changes state. An archetype authors its own lines (`replies`); every NPC falls back to
//! [`default_replies`], so a player spoken to always hears something.

use crate::rng::DetRng;

geppetto_wire_enum::wire_enum! {
    /// How an NPC regards the one who spoke to it.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Tone {
        /// Trusted and liked.
        Warm = "warm",
        /// Neither.
        Neutral = "neutral",
        /// Distrusted or disliked.
        Cold = "cold",
    }
}

impl Tone {
    /// The tone of a regard of `trust` and `affinity` (0–1 each): its warmth, their mean, at
    /// or above `warm_above` is warm, at or below `cold_below` cold, neutral between.
    pub fn of((trust, affinity): (f64, f64), warm_above: f64, cold_below: f64) -> Self {
        let warmth = (trust + affinity) / 2.0;
        if warmth >= warm_above {
            Self::Warm
        } else if warmth <= cold_below {
            Self::Cold
        } else {
            Self::Neutral
        }
    }
}

/// One reply line and when it fits. `{speaker}` is replaced by the speaker's name, `{name}`
/// by the NPC's, `{activity}` by what it is doing.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplyTemplate {
    /// The line.
    pub text: String,
    /// The regard it fits; any when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regard: Option<Tone>,
    /// The mood range it fits (−1..1, inclusive); any when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mood: Option<(f64, f64)>,
    /// Whether it fits an NPC in the middle of an action (`true`) or an idle one (`false`);
    /// either when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy: Option<bool>,
}

impl ReplyTemplate {
    /// How many conditions it names (the more, the better it fits when they hold), or `None`
    /// when one of them does not hold.
    fn fit(&self, situation: &Situation) -> Option<usize> {
        let regard = match self.regard {
            Some(tone) if tone != situation.tone => return None,
            Some(_) => 1,
            None => 0,
        };
        let mood = match self.mood {
            Some((low, high)) if situation.mood < low || situation.mood > high => return None,
            Some(_) => 1,
            None => 0,
        };
        let busy = match self.busy {
            Some(busy) if busy != situation.busy => return None,
            Some(_) => 1,
            None => 0,
        };
        Some(regard + mood + busy)
    }
}

/// What a reply is chosen by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Situation {
    /// How the NPC regards the speaker.
    pub tone: Tone,
    /// Its mood, −1..1 (0 for an NPC without one).
    pub mood: f64,
    /// Whether it is in the middle of an action.
    pub busy: bool,
}

/// The line for `situation` among `templates`: of those whose conditions all hold, one that
/// names the most conditions, ties broken by `seed`; `None` when none fits.
pub fn choose<'t>(
    templates: &'t [ReplyTemplate],
    situation: &Situation,
    seed: u64,
) -> Option<&'t ReplyTemplate> {
    let fits: Vec<(usize, &ReplyTemplate)> = templates
        .iter()
        .filter_map(|t| t.fit(situation).map(|fit| (fit, t)))
        .collect();
    let best = fits.iter().map(|(fit, _)| *fit).max()?;
    let tied: Vec<&ReplyTemplate> = fits
        .into_iter()
        .filter(|(fit, _)| *fit == best)
        .map(|(_, t)| t)
        .collect();
    Some(tied[DetRng::new(seed).next_index(tied.len())])
}

/// The lines every NPC can fall back on: one for each tone, busy or idle, and for a dark mood;
/// an archetype's own `replies` are tried first.
pub fn default_replies() -> Vec<ReplyTemplate> {
    let line = |text: &str, regard: Option<Tone>, mood: Option<(f64, f64)>, busy: Option<bool>| {
        ReplyTemplate {
            text: text.to_owned(),
            regard,
            mood,
            busy,
        }
    };
    vec![
        line(
            "{speaker}! Good to see you.",
            Some(Tone::Warm),
            None,
            Some(false),
        ),
        line(
            "For you, {speaker}, I'll stop a moment from {activity}.",
            Some(Tone::Warm),
            None,
            Some(true),
        ),
        line("Aye? What is it?", Some(Tone::Neutral), None, Some(false)),
        line(
            "Mm? I'm busy with {activity}, but go on.",
            Some(Tone::Neutral),
            None,
            Some(true),
        ),
        line("What do you want, {speaker}?", Some(Tone::Cold), None, None),
        line(
            "Not now. Today is not the day for it.",
            None,
            Some((-1.0, -0.5)),
            None,
        ),
        line("Hm?", None, None, None),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn situation(tone: Tone, mood: f64, busy: bool) -> Situation {
        Situation { tone, mood, busy }
    }

    #[test]
    fn the_tone_follows_trust_and_affinity() {
        assert_eq!(Tone::of((0.5, 0.5), 0.65, 0.35), Tone::Neutral);
        assert_eq!(Tone::of((0.9, 0.8), 0.65, 0.35), Tone::Warm);
        assert_eq!(Tone::of((0.1, 0.3), 0.65, 0.35), Tone::Cold);
    }

    #[test]
    fn the_most_specific_fitting_line_wins() {
        let defaults = default_replies();
        let pick = |s: Situation| choose(&defaults, &s, 7).expect("a line").text.clone();
        assert!(pick(situation(Tone::Warm, 0.0, false)).contains("Good to see you"));
        assert!(pick(situation(Tone::Warm, 0.0, true)).contains("{activity}"));
        assert!(pick(situation(Tone::Neutral, 0.0, true)).contains("busy with"));
        assert!(pick(situation(Tone::Cold, 0.0, true)).contains("What do you want"));
        // A dark mood and a cold regard name one condition each: the seed decides.
        let dark: Vec<String> = (0..32)
            .map(|seed| {
                choose(&defaults, &situation(Tone::Cold, -0.8, false), seed)
                    .expect("a line")
                    .text
                    .clone()
            })
            .collect();
        assert!(dark.iter().any(|t| t.contains("Not now")));
        assert!(dark.iter().any(|t| t.contains("What do you want")));
    }

    #[test]
    fn every_situation_has_a_default_line_and_the_choice_is_repeatable() {
        let defaults = default_replies();
        for tone in [Tone::Warm, Tone::Neutral, Tone::Cold] {
            for mood in [-1.0, -0.5, 0.0, 1.0] {
                for busy in [false, true] {
                    let s = situation(tone, mood, busy);
                    let first = choose(&defaults, &s, 11).expect("a line");
                    assert_eq!(choose(&defaults, &s, 11), Some(first));
                }
            }
        }
    }

    #[test]
    fn no_line_fits_when_every_condition_fails() {
        let only_warm = vec![ReplyTemplate {
            text: "hello".into(),
            regard: Some(Tone::Warm),
            mood: None,
            busy: None,
        }];
        assert_eq!(
            choose(&only_warm, &situation(Tone::Cold, 0.0, false), 1),
            None
        );
    }
}
