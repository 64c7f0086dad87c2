//! Affect dynamics on the shipped calibration: each test fails if its rule breaks.

use geppetto_core::affect::{AffectConfig, AffectEvent, AffectModel, AffectState, merge_layers};
use proptest::prelude::*;

const DEFAULTS: &str = include_str!("../../config/affect/defaults.yaml");
const HALGRIM: &str = include_str!("../../config/affect/halgrim.yaml");

fn config(persona: Option<&str>, patch: serde_json::Value) -> AffectConfig {
    let mut value: serde_json::Value = serde_saphyr::from_str(DEFAULTS).expect("defaults parse");
    if let Some(persona) = persona {
        merge_layers(
            &mut value,
            serde_saphyr::from_str(persona).expect("persona parses"),
        );
    }
    merge_layers(&mut value, patch);
    AffectConfig::from_value(value).expect("valid config")
}

fn model(persona: Option<&str>, patch: serde_json::Value) -> AffectModel {
    AffectModel::compile(&config(persona, patch)).expect("compiles")
}

fn value(model: &AffectModel, state: &AffectState, name: &str) -> f64 {
    state.values[model.state_index(name).expect("state exists")]
}

fn insult(from: &str) -> AffectEvent {
    AffectEvent::new("insult").from_source(from)
}

#[test]
fn one_insult_spikes_anger_which_halves_every_half_life() {
    let model = model(None, serde_json::json!({"couplings": []}));
    assert_eq!(model.dt_s(), 3.0);
    let mut state = model.initial_state();
    model.step(&mut state, &[insult("stranger")]);
    let peak = value(&model, &state, "anger");
    assert!((peak - 0.4).abs() < 1e-12);
    for _ in 0..10 {
        model.step(&mut state, &[]);
    }
    let after_half_life = value(&model, &state, "anger");
    assert!(
        (after_half_life - peak / 2.0).abs() < 1e-9,
        "{after_half_life}"
    );
}

#[test]
fn stress_rises_slowly_after_anger() {
    let model = model(None, serde_json::json!({}));
    let mut state = model.initial_state();
    model.step(&mut state, &[insult("stranger")]);
    let mut anger = vec![value(&model, &state, "anger")];
    let mut stress = vec![value(&model, &state, "stress")];
    for _ in 0..200 {
        model.step(&mut state, &[]);
        anger.push(value(&model, &state, "anger"));
        stress.push(value(&model, &state, "stress"));
    }
    let peak_tick = |series: &[f64]| {
        series
            .iter()
            .enumerate()
            .fold(0, |best, (i, v)| if *v > series[best] { i } else { best })
    };
    assert_eq!(peak_tick(&anger), 0, "anger jumps at once");
    assert!(stress[0] < 0.02, "no instant jump in stress: {}", stress[0]);
    assert!(
        peak_tick(&stress) > 10,
        "stress keeps climbing after anger peaked"
    );
    assert!(stress[peak_tick(&stress)] > 5.0 * stress[0]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn without_the_overlay_any_single_provocation_dies_away(
        kind in prop::sample::select(vec!["insult", "threat", "theft", "failed_search", "thunder"]),
        magnitude in 0.0f64..20.0,
    ) {
        let model = model(None, serde_json::json!({}));
        let mut state = model.initial_state();
        model.step(&mut state, &[AffectEvent { magnitude, ..AffectEvent::new(kind).from_source("x") }]);
        for _ in 0..2000 {
            let tick = model.step(&mut state, &[]);
            prop_assert!(!tick.burst_started);
            prop_assert!(state.values.iter().all(|v| v.is_finite() && (-1.0..=1.0).contains(v)));
        }
        for name in ["anger", "fear", "frustration"] {
            prop_assert!(value(&model, &state, name) < 0.05, "{name} still {}", value(&model, &state, name));
        }
    }
}

/// Halgrim, hungry and tired, fails to find what he looks for, then is insulted.
fn coincidence(model: &AffectModel) -> AffectState {
    let mut state = model.initial_state();
    state.values[model.state_index("hunger").expect("hunger")] = 0.9;
    state.values[model.state_index("fatigue").expect("fatigue")] = 0.85;
    model.step(&mut state, &[AffectEvent::new("failed_search")]);
    model.step(&mut state, &[AffectEvent::new("failed_search")]);
    state
}

#[test]
fn a_coincidence_of_pressures_bursts_and_the_burst_ends_by_itself() {
    let halgrim = model(Some(HALGRIM), serde_json::json!({}));
    let mut state = coincidence(&halgrim);
    let mut started = None;
    let mut ended = None;
    for tick in 0..3000 {
        let events = if tick == 0 {
            vec![insult("stranger")]
        } else {
            Vec::new()
        };
        let result = halgrim.step(&mut state, &events);
        if result.burst_started {
            started.get_or_insert(tick);
        }
        if result.burst_ended {
            ended.get_or_insert(tick);
        }
    }
    let (Some(started), Some(ended)) = (started, ended) else {
        panic!("burst {started:?} → {ended:?}")
    };
    assert!(started < ended, "latched at {started}, released at {ended}");
    assert!(
        !state.latched && value(&halgrim, &state, "anger") < 0.2,
        "it self-terminates"
    );
    // The same insult alone, or the same pressures without the insult, never burst.
    for with_insult in [true, false] {
        let mut state = if with_insult {
            halgrim.initial_state()
        } else {
            coincidence(&halgrim)
        };
        let mut bursts = 0;
        for tick in 0..2000 {
            let events = if with_insult && tick == 0 {
                vec![insult("stranger")]
            } else {
                Vec::new()
            };
            bursts += usize::from(halgrim.step(&mut state, &events).burst_started);
        }
        assert_eq!(bursts, 0, "with_insult = {with_insult}");
    }
}

/// Drives Halgrim into a latched burst; returns the state.
fn latched() -> (AffectModel, AffectState) {
    let halgrim = model(Some(HALGRIM), serde_json::json!({}));
    let mut state = coincidence(&halgrim);
    halgrim.step(&mut state, &[insult("stranger")]);
    for _ in 0..500 {
        if state.latched {
            return (halgrim, state);
        }
        halgrim.step(&mut state, &[]);
    }
    panic!("never latched");
}

#[test]
fn a_sourceless_event_never_opens_discharge() {
    let (halgrim, latched_state) = latched();
    // The same shouted insult, once from nobody in particular, once from Bo.
    let mut anonymous = latched_state.clone();
    let tick = halgrim.step(&mut anonymous, &[AffectEvent::new("insult")]);
    assert!(
        value(&halgrim, &anonymous, "anger") > 0.8,
        "the gate is otherwise open"
    );
    assert!(tick.discharge.is_none(), "you cannot kick the rain");
    let mut thunder = latched_state.clone();
    assert!(
        halgrim
            .step(&mut thunder, &[AffectEvent::new("thunder")])
            .discharge
            .is_none()
    );
    let mut provoked = latched_state;
    let bo = halgrim.step(&mut provoked, &[insult("sergeant_bo")]);
    assert_eq!(
        bo.discharge.map(|d| d.target),
        Some("sergeant_bo".to_owned())
    );
}

#[test]
fn the_refractory_edge_softens_a_repeat_hit_on_the_same_provoker() {
    let (halgrim, mut state) = latched();
    let first = halgrim
        .step(&mut state, &[insult("thief")])
        .discharge
        .expect("discharge");
    let second = halgrim
        .step(&mut state, &[insult("thief")])
        .discharge
        .expect("discharge");
    let other = halgrim
        .step(&mut state, &[insult("stranger")])
        .discharge
        .expect("discharge");
    assert!(!first.softened && second.softened && !other.softened);
    assert!(second.intensity < 0.5 * first.intensity);
}

/// The coincidence scenario in real time: two failed searches at 0 s, an insult at 6 s (both
/// × `clock`, the time scale the model runs at); every state sampled every `sample_s` seconds
/// for `seconds`.
fn trace(model: &AffectModel, seconds: f64, sample_s: f64, clock: f64) -> Vec<Vec<f64>> {
    let mut state = model.initial_state();
    state.values[model.state_index("hunger").expect("hunger")] = 0.9;
    state.values[model.state_index("fatigue").expect("fatigue")] = 0.85;
    let ticks = (seconds / model.dt_s()).round() as u64;
    let stride = (sample_s / model.dt_s()).round().max(1.0) as u64;
    let at = |tick: u64, second: f64| tick == (second / model.dt_s()).round() as u64;
    let mut samples = Vec::new();
    for tick in 0..ticks {
        let mut events = Vec::new();
        if at(tick, 0.0) {
            events.extend([
                AffectEvent::new("failed_search"),
                AffectEvent::new("failed_search"),
            ]);
        }
        if at(tick, 6.0 * clock) {
            events.push(insult("stranger"));
        }
        model.step(&mut state, &events);
        if (tick + 1) % stride == 0 {
            samples.push(state.values.clone());
        }
    }
    samples
}

#[test]
fn time_scale_relabels_the_clock_bit_for_bit() {
    let base = model(None, serde_json::json!({}));
    let scaled = model(None, serde_json::json!({"tick": {"time_scale": 40}}));
    assert_eq!(scaled.dt_s(), 120.0);
    // Same ticks: 1500 s of base time is 1500 × 40 s of scaled time.
    let (a, b) = (
        trace(&base, 1500.0, 3.0, 1.0),
        trace(&scaled, 1500.0 * 40.0, 120.0, 40.0),
    );
    assert_eq!(a.len(), 500);
    let bits = |t: &Vec<Vec<f64>>| t.iter().flatten().map(|v| v.to_bits()).collect::<Vec<_>>();
    let first_difference = bits(&a).iter().zip(bits(&b)).position(|(x, y)| *x != y);
    assert!(
        first_difference.is_none(),
        "traces differ at value {first_difference:?}"
    );
}

#[test]
fn resolution_refines_sampling_but_keeps_the_real_time_trajectory() {
    let base = model(None, serde_json::json!({}));
    let fine = model(None, serde_json::json!({"tick": {"resolution_factor": 8}}));
    assert_eq!(fine.dt_s(), 0.375);
    // Compare at equal real times (every base tick) over 20 minutes.
    let coarse = trace(&base, 1200.0, 3.0, 1.0);
    let refined = trace(&fine, 1200.0, 3.0, 1.0);
    assert_eq!(coarse.len(), refined.len());
    let worst = coarse
        .iter()
        .zip(&refined)
        .flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs()))
        .fold(0.0, f64::max);
    // Leaks are exact; couplings are forward Euler, so the coarse tick is off by O(dt).
    assert!(
        worst < 0.05,
        "stated tolerance 0.05 of the [0, 1] range, worst deviation {worst}"
    );
}

#[test]
fn an_unstable_loop_is_refused_naming_it_and_its_radius() {
    let patch = serde_json::json!({"couplings": [
        {"from": "anger", "to": "stress", "rate": 0.2},
        {"from": "stress", "to": "anger", "rate": 0.2},
        {"from": "hunger", "to": "anger", "rate": 0.001}
    ]});
    let error = AffectModel::compile(&config(None, patch))
        .expect_err("unstable")
        .to_string();
    assert!(
        error.contains("anger ↔ stress") && error.contains("spectral radius"),
        "{error}"
    );
    let self_loop = serde_json::json!({"couplings": [{"from": "fear", "to": "fear", "rate": 1.0}]});
    assert!(
        AffectModel::compile(&config(None, self_loop))
            .expect_err("unstable")
            .to_string()
            .contains("fear")
    );
}

#[test]
fn the_order_of_equations_does_not_matter() {
    let shipped = config(Some(HALGRIM), serde_json::json!({}));
    let mut shuffled = shipped.clone();
    shuffled.couplings.reverse();
    shuffled.couplings.rotate_left(3);
    let (a, b) = (
        AffectModel::compile(&shipped).expect("ok"),
        AffectModel::compile(&shuffled).expect("ok"),
    );
    assert!(
        trace(&a, 2400.0, 3.0, 1.0) == trace(&b, 2400.0, 3.0, 1.0),
        "shuffled equations changed the trace"
    );
}

mod in_the_simulator {
    use super::*;
    use geppetto_core::{
        AffectLayer, Agent, Consideration, Decider, DetailLevel, Position, SimEvent,
        SimulatedAgent, Simulator, TickRequest, Tuning, Updater, Vocabulary, World,
    };
    use std::sync::Arc;

    #[test]
    fn feelings_back_considerations_and_a_burst_lashes_out_at_the_provoker() {
        let mut vocabulary = Vocabulary::new();
        let halgrim = Arc::new(model(Some(HALGRIM), serde_json::json!({})));
        let mut agent = SimulatedAgent::new(Agent::new("halgrim", Position::default()));
        let mut anger = Consideration::new(vocabulary.intern("ANGER"), 0.0, 0.0, 100.0);
        anger.behaviour_mut().updater = Updater::ContextAggregate;
        agent.agent.considerations.push(anger);
        let mut layer = AffectLayer::new(Arc::clone(&halgrim), &mut vocabulary);
        let hunger = halgrim.state_index("hunger").expect("hunger");
        let fatigue = halgrim.state_index("fatigue").expect("fatigue");
        layer.state.values[hunger] = 0.9;
        layer.state.values[fatigue] = 0.85;
        layer.pending = vec![
            AffectEvent::new("failed_search"),
            AffectEvent::new("failed_search"),
        ];
        agent.layers.make_mut().affect = Some(Box::new(layer));
        let sim = Simulator::new(Decider::new(Tuning::default()));
        let world = World::default();
        let minute = 1.0 / 60.0;
        let mut all = Vec::new();
        for tick in 0..30 {
            if tick == 1 {
                agent
                    .layers
                    .get_mut()
                    .and_then(|layers| layers.affect.as_mut())
                    .expect("layer")
                    .pending
                    .push(insult("thief"));
            }
            if tick == 2 {
                // The thief is still in front of him, jeering.
                agent
                    .layers
                    .get_mut()
                    .and_then(|layers| layers.affect.as_mut())
                    .expect("layer")
                    .pending
                    .push(insult("thief"));
            }
            let request = TickRequest {
                now_hours: 9.0 + tick as f64 * minute,
                world: &world,
                level: DetailLevel::Full,
                simplified_event: None,
            };
            let result = sim.advance(&mut agent, request, tick);
            all.extend(result.events);
            if tick == 0 {
                let read = agent.agent.considerations[0].value;
                let felt = agent.layers.affect.as_ref().expect("layer").state.values
                    [halgrim.state_index("anger").expect("anger")];
                assert!(
                    (read - 100.0 * felt).abs() < 1e-9,
                    "the consideration reads the feeling: {read} vs {felt}"
                );
            }
        }
        let started = all
            .iter()
            .position(|e| *e == SimEvent::BurstStarted)
            .expect("a burst");
        let lash = all
            .iter()
            .position(|e| matches!(e, SimEvent::LashOut { target, .. } if target == "thief"));
        let ended = all
            .iter()
            .position(|e| *e == SimEvent::BurstEnded)
            .expect("it ends");
        assert!(lash.is_some_and(|l| started < l && l < ended), "{all:?}");
    }
}
