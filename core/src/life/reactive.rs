//! Reactive utility sets: the judgement half of a character — "of
//! these few things, which now?" — scored from normalised inputs, beside the needs-driven
//! decider. An archetype may carry one (flee, call the guard, lash out); when it picks an action
//! in an emergency bucket, that action preempts daily life.
//!
//! - Each consideration is one input (normalised by the input's own min/max, never by the
//!   curve) through one [`Shape`].
//! - An action scores `weight · (Π considerations)^(1/n)`: the n-th root makes the number of
//!   considerations irrelevant, and any zero vetoes ("never, under any circumstances").
//! - Selectors: [`Selector::Highest`], [`Selector::WeightedRandom`],
//!   [`Selector::TopWeightedRandom`], [`Selector::Bucketed`] (dual utility: the highest bucket
//!   with anything in it, then the best inside it).
//! - Inertia lives on the set, not the selector: a commitment bonus for the running action,
//!   added *after* the veto (a condition that went false cannot hold on); a cooldown per action
//!   after it ends; a decision interval between re-scorings.
//!
//! Time here is in seconds, passed in; randomness is a seed, passed in.

use crate::decision::curve::Shape;
use crate::rng::DetRng;
use crate::vocabulary::Symbol;

/// The commitment bonus a set gets when its file says nothing.
pub const DEFAULT_COMMITMENT_BONUS: f64 = 0.15;
/// The decision interval, in seconds, a set gets when its file says nothing.
pub const DEFAULT_DECISION_INTERVAL_S: f64 = 0.2;

/// How a set picks among its scored actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selector {
    /// The best one: deterministic, for anything a designer must predict.
    Highest,
    /// Score as weight: natural-looking, occasionally stupid.
    WeightedRandom,
    /// Weighted random among the best `n`.
    TopWeightedRandom(usize),
    /// The highest bucket with a non-vetoed action, then the best inside it.
    Bucketed,
}

/// A named input and the range that normalises it.
#[derive(Clone, Debug, PartialEq)]
pub struct SetInput {
    /// The key it is read by (a consideration, a perception, an affect state…).
    pub name: Symbol,
    /// Raw value that maps to 0.
    pub min: f64,
    /// Raw value that maps to 1.
    pub max: f64,
}

impl SetInput {
    /// `clamp((raw − min)/(max − min), 0, 1)`; 0 when the range is empty. A range too wide
    /// for `max − min` to be a number (±1e308) is halved first, which is exact, so even then
    /// the answer is a number.
    pub fn normalise(&self, raw: f64) -> f64 {
        if !(self.max > self.min && raw.is_finite()) {
            return 0.0;
        }
        let span = self.max - self.min;
        let unit = if span.is_finite() {
            (raw - self.min) / span
        } else {
            (raw / 2.0 - self.min / 2.0) / (self.max / 2.0 - self.min / 2.0)
        };
        unit.clamp(0.0, 1.0)
    }
}

/// One input through one curve.
#[derive(Clone, Debug, PartialEq)]
pub struct SetConsideration {
    /// Its name, for the inspector.
    pub name: String,
    /// Index into the set's inputs.
    pub input: usize,
    /// The response curve.
    pub shape: Shape,
}

/// An action of a set.
#[derive(Clone, Debug, PartialEq)]
pub struct SetAction {
    /// Its name (what the intent carries).
    pub name: String,
    /// Multiplier — 1 ambient, 2–3 important, 5 emergency.
    pub weight: f64,
    /// Dual-utility bucket: higher buckets win outright under [`Selector::Bucketed`].
    pub bucket: u32,
    /// Seconds it cannot be chosen after it ends.
    pub cooldown_s: f64,
    /// Its considerations (at least one).
    pub considerations: Vec<SetConsideration>,
}

/// A reactive utility set.
#[derive(Clone, Debug, PartialEq)]
pub struct UtilitySet {
    /// Its name (what the intent carries).
    pub name: String,
    /// Declared inputs; considerations refer to them by index.
    pub inputs: Vec<SetInput>,
    /// The picking policy.
    pub selector: Selector,
    /// Added to the running action's score after the veto. Default 0.15.
    pub commitment_bonus: f64,
    /// Seconds between re-scorings. Default 0.2.
    pub decision_interval_s: f64,
    /// Actions in this bucket or above preempt the needs-driven action; `None`: never.
    pub emergency_bucket: Option<u32>,
    /// The actions.
    pub actions: Vec<SetAction>,
}

/// One action's score in one evaluation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ActionScore {
    /// `weight · (Π considerations)^(1/n)`; 0 when vetoed.
    pub utility: f64,
    /// Whether a consideration was zero.
    pub vetoed: bool,
    /// Whether it is cooling down (and so not selectable).
    pub cooling_down: bool,
    /// What the selector sees: the utility plus the commitment bonus for the running action
    /// (never for a vetoed one); 0 when not selectable.
    pub selectable: f64,
}

/// Per-agent memory of a set: what runs, when it last decided, cooldowns.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SetState {
    /// The running action (index into the set's actions).
    pub running: Option<usize>,
    /// When it last re-scored, in seconds.
    pub last_decision_s: Option<f64>,
    /// Per action, the second its cooldown ends (absent: never cooled).
    pub cooldown_until_s: Vec<(usize, f64)>,
}

/// The result of [`UtilitySet::decide`].
#[derive(Clone, Debug, PartialEq)]
pub struct SetDecision {
    /// The action now running (after this decision).
    pub choice: Option<usize>,
    /// Whether the set re-scored (false inside the decision interval).
    pub rescored: bool,
    /// Whether the running action changed.
    pub switched: bool,
    /// The scores, when it re-scored.
    pub scores: Vec<ActionScore>,
}

impl UtilitySet {
    /// Scores every action for raw inputs `raw_inputs` (by input index; missing ones read as
    /// the input's minimum), with the state's running action and cooldowns at `now_s`.
    pub fn evaluate(&self, state: &SetState, raw_inputs: &[f64], now_s: f64) -> Vec<ActionScore> {
        let normalised: Vec<f64> = self
            .inputs
            .iter()
            .enumerate()
            .map(|(i, input)| raw_inputs.get(i).map_or(0.0, |raw| input.normalise(*raw)))
            .collect();
        self.actions
            .iter()
            .enumerate()
            .map(|(index, action)| {
                let product: f64 = action
                    .considerations
                    .iter()
                    .map(|c| {
                        c.shape
                            .evaluate(normalised.get(c.input).copied().unwrap_or(0.0))
                    })
                    .product();
                let vetoed = product <= 0.0 || action.considerations.is_empty();
                let n = action.considerations.len().max(1) as f64;
                let utility = if vetoed {
                    0.0
                } else {
                    action.weight * product.powf(1.0 / n)
                };
                let cooling_down = state
                    .cooldown_until_s
                    .iter()
                    .any(|(cooling, until)| *cooling == index && now_s < *until);
                let bonus = if state.running == Some(index) {
                    self.commitment_bonus
                } else {
                    0.0
                };
                let selectable = if vetoed || cooling_down {
                    0.0
                } else {
                    utility + bonus
                };
                ActionScore {
                    utility,
                    vetoed,
                    cooling_down,
                    selectable,
                }
            })
            .collect()
    }

    /// Picks from `scores` with the set's selector; `None` when everything is vetoed or
    /// cooling down. Ties go to the earlier action.
    pub fn select(&self, scores: &[ActionScore], rng: &mut DetRng) -> Option<usize> {
        let selectable: Vec<(usize, f64)> = scores
            .iter()
            .enumerate()
            .filter(|(_, s)| s.selectable > 0.0)
            .map(|(i, s)| (i, s.selectable))
            .collect();
        let best = |candidates: &[(usize, f64)]| {
            candidates
                .iter()
                .fold(None, |best: Option<(usize, f64)>, &(i, s)| match best {
                    Some((_, b)) if b >= s => best,
                    _ => Some((i, s)),
                })
        };
        let weighted = |candidates: &[(usize, f64)], rng: &mut DetRng| {
            let total: f64 = candidates.iter().map(|(_, s)| s).sum();
            let mut remaining = rng.next_unit() * total;
            for &(i, s) in candidates {
                remaining -= s;
                if remaining < 0.0 {
                    return Some(i);
                }
            }
            candidates.last().map(|(i, _)| *i)
        };
        match self.selector {
            Selector::Highest => best(&selectable).map(|(i, _)| i),
            Selector::WeightedRandom => weighted(&selectable, rng),
            Selector::TopWeightedRandom(n) => {
                let mut top = selectable.clone();
                top.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                top.truncate(n.max(1));
                top.sort_by_key(|(i, _)| *i);
                weighted(&top, rng)
            }
            Selector::Bucketed => {
                let bucket = selectable
                    .iter()
                    .map(|(i, _)| self.actions[*i].bucket)
                    .max()?;
                let inside: Vec<(usize, f64)> = selectable
                    .iter()
                    .copied()
                    .filter(|(i, _)| self.actions[*i].bucket == bucket)
                    .collect();
                best(&inside).map(|(i, _)| i)
            }
        }
    }

    /// Runs the set for one frame at `now_s`: inside the decision interval it keeps the running
    /// action; otherwise it re-scores and selects, and a switch starts the old action's cooldown.
    pub fn decide(
        &self,
        state: &mut SetState,
        raw_inputs: &[f64],
        now_s: f64,
        seed: u64,
    ) -> SetDecision {
        let due = state
            .last_decision_s
            .is_none_or(|last| now_s - last >= self.decision_interval_s);
        if !due {
            return SetDecision {
                choice: state.running,
                rescored: false,
                switched: false,
                scores: Vec::new(),
            };
        }
        state.last_decision_s = Some(now_s);
        let scores = self.evaluate(state, raw_inputs, now_s);
        let choice = self.select(&scores, &mut DetRng::new(seed));
        let switched = choice != state.running;
        if switched {
            if let Some(ended) = state.running {
                let cooldown = self.actions.get(ended).map_or(0.0, |a| a.cooldown_s);
                state.cooldown_until_s.retain(|(index, _)| *index != ended);
                if cooldown > 0.0 {
                    state.cooldown_until_s.push((ended, now_s + cooldown));
                }
            }
            state.running = choice;
        }
        SetDecision {
            choice,
            rescored: true,
            switched,
            scores,
        }
    }

    /// Whether action `index` is in the emergency bucket (or above).
    pub fn is_emergency(&self, index: usize) -> bool {
        match (self.emergency_bucket, self.actions.get(index)) {
            (Some(threshold), Some(action)) => action.bucket >= threshold,
            _ => false,
        }
    }
}

impl UtilitySet {
    /// The same set with inertia turned off: no commitment bonus, no cooldowns, re-scored
    /// every frame.
    pub fn without_inertia(&self) -> UtilitySet {
        let mut set = self.clone();
        set.commitment_bonus = 0.0;
        set.decision_interval_s = 0.0;
        for action in &mut set.actions {
            action.cooldown_s = 0.0;
        }
        set
    }
}

/// A run of [`run_wobbling`]: the choice after every change, and how many times it changed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WobbleRun {
    /// `(second, choice)` at the start and at every switch.
    pub timeline: Vec<(f64, Option<usize>)>,
    /// Changes of the running action after the first choice.
    pub switches: usize,
    /// Frames simulated.
    pub frames: usize,
}

/// Runs `set` for `seconds` at `frame_hz` frames a second, each input jittered uniformly by
/// ±`wobble` (in normalised units of its range) every frame around `base_inputs` — how
/// flapping is measured (two actions within 2 %, sixty seconds).
pub fn run_wobbling(
    set: &UtilitySet,
    base_inputs: &[f64],
    seconds: f64,
    frame_hz: f64,
    wobble: f64,
    seed: u64,
) -> WobbleRun {
    let mut rng = DetRng::new(seed);
    let mut state = SetState::default();
    let mut run = WobbleRun::default();
    let frames = if frame_hz > 0.0 && seconds > 0.0 {
        (seconds * frame_hz).round() as usize
    } else {
        0
    };
    for frame in 0..frames {
        let now_s = frame as f64 / frame_hz;
        let inputs: Vec<f64> = set
            .inputs
            .iter()
            .enumerate()
            .map(|(i, input)| {
                let base = base_inputs.get(i).copied().unwrap_or(input.min);
                base + (rng.next_unit() * 2.0 - 1.0) * wobble * (input.max - input.min)
            })
            .collect();
        let decision = set.decide(&mut state, &inputs, now_s, rng.next_u64());
        if frame == 0 {
            run.timeline.push((now_s, decision.choice));
        } else if decision.switched {
            run.switches += 1;
            run.timeline.push((now_s, decision.choice));
        }
        run.frames += 1;
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_range_as_wide_as_floats_go_still_normalises_to_a_number() {
        let input = SetInput {
            name: Symbol::FIRST,
            min: -1e308,
            max: 1e308,
        };
        assert_eq!(input.normalise(1e308), 1.0);
        assert_eq!(input.normalise(-1e308), 0.0);
        assert_eq!(input.normalise(0.0), 0.5);
        let narrow = SetInput {
            name: Symbol::FIRST,
            min: 2.0,
            max: 6.0,
        };
        assert_eq!(narrow.normalise(3.0), 0.25);
    }
    use crate::decision::curve::{SampledCurve, ShapeParams};
    use crate::vocabulary::Vocabulary;

    fn linear() -> Shape {
        Shape::Linear(ShapeParams::default())
    }

    fn consideration(input: usize, shape: Shape) -> SetConsideration {
        SetConsideration {
            name: format!("c{input}"),
            input,
            shape,
        }
    }

    fn action(
        name: &str,
        weight: f64,
        bucket: u32,
        considerations: Vec<SetConsideration>,
    ) -> SetAction {
        SetAction {
            name: name.into(),
            weight,
            bucket,
            cooldown_s: 0.0,
            considerations,
        }
    }

    fn set(inputs: usize, selector: Selector, actions: Vec<SetAction>) -> UtilitySet {
        let mut vocabulary = Vocabulary::new();
        UtilitySet {
            name: "test".into(),
            inputs: (0..inputs)
                .map(|i| SetInput {
                    name: vocabulary.intern(&format!("in{i}")),
                    min: 0.0,
                    max: 1.0,
                })
                .collect(),
            selector,
            commitment_bonus: DEFAULT_COMMITMENT_BONUS,
            decision_interval_s: DEFAULT_DECISION_INTERVAL_S,
            emergency_bucket: Some(5),
            actions,
        }
    }

    #[test]
    fn inputs_normalise_themselves() {
        let input = SetInput {
            name: Vocabulary::new().intern("hp"),
            min: 0.0,
            max: 200.0,
        };
        assert_eq!(input.normalise(50.0), 0.25);
        assert_eq!(input.normalise(-5.0), 0.0);
        assert_eq!(input.normalise(500.0), 1.0);
        assert_eq!(input.normalise(f64::NAN), 0.0);
    }

    #[test]
    fn a_zero_vetoes_whatever_the_weight() {
        let s = set(
            2,
            Selector::Highest,
            vec![action(
                "never",
                1e9,
                9,
                vec![consideration(0, linear()), consideration(1, linear())],
            )],
        );
        let scores = s.evaluate(&SetState::default(), &[1.0, 0.0], 0.0);
        assert!(scores[0].vetoed);
        assert_eq!(scores[0].utility, 0.0);
        assert_eq!(s.select(&scores, &mut DetRng::new(1)), None);
    }

    #[test]
    fn the_nth_root_makes_the_count_of_considerations_irrelevant() {
        let three = set(
            1,
            Selector::Highest,
            vec![action("a", 1.0, 0, vec![consideration(0, linear()); 3])],
        );
        let six = set(
            1,
            Selector::Highest,
            vec![action("a", 1.0, 0, vec![consideration(0, linear()); 6])],
        );
        let a = three.evaluate(&SetState::default(), &[0.6], 0.0)[0].utility;
        let b = six.evaluate(&SetState::default(), &[0.6], 0.0)[0].utility;
        assert!(
            (a - 0.6).abs() < 1e-12 && (b - 0.6).abs() < 1e-12,
            "{a} {b}"
        );
    }

    #[test]
    fn highest_picks_the_best_and_ties_go_first() {
        let s = set(
            1,
            Selector::Highest,
            vec![
                action("low", 1.0, 0, vec![consideration(0, linear())]),
                action("high", 2.0, 0, vec![consideration(0, linear())]),
                action("also_high", 2.0, 0, vec![consideration(0, linear())]),
            ],
        );
        let scores = s.evaluate(&SetState::default(), &[0.5], 0.0);
        assert_eq!(s.select(&scores, &mut DetRng::new(0)), Some(1));
    }

    #[test]
    fn weighted_random_follows_the_scores() {
        let s = set(
            1,
            Selector::WeightedRandom,
            vec![
                action("one", 1.0, 0, vec![consideration(0, linear())]),
                action("three", 3.0, 0, vec![consideration(0, linear())]),
            ],
        );
        let scores = s.evaluate(&SetState::default(), &[1.0], 0.0);
        let picks_of_three = (0..4000)
            .filter(|seed| s.select(&scores, &mut DetRng::new(*seed)) == Some(1))
            .count();
        assert!((2800..3200).contains(&picks_of_three), "{picks_of_three}");
    }

    #[test]
    fn top_weighted_random_never_picks_outside_the_top_n() {
        let actions = (0..6)
            .map(|i| {
                action(
                    &format!("a{i}"),
                    1.0 + i as f64,
                    0,
                    vec![consideration(0, linear())],
                )
            })
            .collect();
        let s = set(1, Selector::TopWeightedRandom(2), actions);
        let scores = s.evaluate(&SetState::default(), &[1.0], 0.0);
        let picks: std::collections::BTreeSet<usize> = (0..500)
            .filter_map(|seed| s.select(&scores, &mut DetRng::new(seed)))
            .collect();
        assert_eq!(picks.into_iter().collect::<Vec<_>>(), [4, 5]);
    }

    #[test]
    fn bucketed_takes_an_adequate_emergency_over_an_excellent_ambient_action() {
        let s = set(
            2,
            Selector::Bucketed,
            vec![
                action("drink_coffee", 3.0, 1, vec![consideration(0, linear())]),
                action("take_cover", 1.0, 5, vec![consideration(1, linear())]),
            ],
        );
        let scores = s.evaluate(&SetState::default(), &[1.0, 0.3], 0.0);
        assert!(scores[0].utility > 5.0 * scores[1].utility);
        assert_eq!(s.select(&scores, &mut DetRng::new(0)), Some(1));
        // With the emergency vetoed, the ambient bucket is next.
        let calm = s.evaluate(&SetState::default(), &[1.0, 0.0], 0.0);
        assert_eq!(s.select(&calm, &mut DetRng::new(0)), Some(0));
        assert!(s.is_emergency(1) && !s.is_emergency(0));
    }

    #[test]
    fn the_bonus_never_rescues_a_vetoed_running_action() {
        let s = set(
            2,
            Selector::Highest,
            vec![
                action("running", 1.0, 0, vec![consideration(0, linear())]),
                action("other", 1.0, 0, vec![consideration(1, linear())]),
            ],
        );
        let state = SetState {
            running: Some(0),
            ..SetState::default()
        };
        let scores = s.evaluate(&state, &[0.0, 0.01], 0.0);
        assert_eq!(scores[0].selectable, 0.0);
        assert_eq!(s.select(&scores, &mut DetRng::new(0)), Some(1));
        // A wobbling but true condition does hold on.
        let scores = s.evaluate(&state, &[0.5, 0.6], 0.0);
        assert_eq!(s.select(&scores, &mut DetRng::new(0)), Some(0));
    }

    #[test]
    fn cooldowns_start_when_an_action_ends_and_expire() {
        let mut stab = action("stab", 2.0, 0, vec![consideration(0, linear())]);
        stab.cooldown_s = 10.0;
        let mut s = set(
            1,
            Selector::Highest,
            vec![
                stab,
                action("wait", 1.0, 0, vec![consideration(0, linear())]),
            ],
        );
        s.commitment_bonus = 0.0;
        let mut state = SetState::default();
        assert_eq!(s.decide(&mut state, &[0.5], 0.0, 0).choice, Some(0));
        state.running = Some(1); // the game switched it off (the action ended)
        state.cooldown_until_s.push((0, 10.0));
        assert_eq!(
            s.decide(&mut state, &[0.5], 1.0, 0).choice,
            Some(1),
            "cooling down"
        );
        assert_eq!(
            s.decide(&mut state, &[0.5], 10.5, 0).choice,
            Some(0),
            "cooled"
        );
        // Switching away starts the cooldown too.
        let decision = s.decide(&mut state, &[0.0], 11.0, 0);
        assert!(decision.switched && decision.choice.is_none());
        assert!(state.cooldown_until_s.contains(&(0, 21.0)));
    }

    #[test]
    fn the_decision_interval_holds_the_choice_between_scorings() {
        let s = set(
            2,
            Selector::Highest,
            vec![
                action("a", 1.0, 0, vec![consideration(0, linear())]),
                action("b", 1.0, 0, vec![consideration(1, linear())]),
            ],
        );
        let mut state = SetState::default();
        assert_eq!(s.decide(&mut state, &[1.0, 0.0], 0.0, 0).choice, Some(0));
        let held = s.decide(&mut state, &[0.0, 1.0], 0.1, 0);
        assert!(!held.rescored && held.choice == Some(0));
        let rescored = s.decide(&mut state, &[0.0, 1.0], 0.2, 0);
        assert!(rescored.rescored && rescored.choice == Some(1));
    }

    #[test]
    fn sampled_considerations_score_through_their_keys() {
        let keys =
            SampledCurve::new(vec![(0.0, 0.0), (0.5, 0.0), (0.6, 1.0), (1.0, 1.0)]).expect("valid");
        let s = set(
            1,
            Selector::Highest,
            vec![action(
                "a",
                1.0,
                0,
                vec![consideration(0, Shape::Sampled(keys))],
            )],
        );
        assert!(
            s.evaluate(&SetState::default(), &[0.4], 0.0)[0].vetoed,
            "ignore it entirely"
        );
        assert_eq!(
            s.evaluate(&SetState::default(), &[0.7], 0.0)[0].utility,
            1.0,
            "then suddenly care"
        );
    }
}
