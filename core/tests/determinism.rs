//! Same input and seed ⇒ identical output, bit for bit; a different seed may differ.

mod support;

use geppetto_core::{Decider, TuningPatch};
use support::{Scene, provider, world};

#[test]
fn identical_inputs_and_seeds_give_identical_decisions() {
    let mut scene = Scene::default();
    let agent = scene.agent(
        "ann",
        1.0,
        2.0,
        &[("HUNGER", 30.0), ("FUN", 40.0), ("ENERGY", 50.0)],
    );
    let actions = vec![
        scene.action("eat", &[("HUNGER", 30.0)], &["food"]),
        scene.action("dance", &[("FUN", 30.0), ("ENERGY", -10.0)], &["social"]),
        scene.action("nap", &[("ENERGY", 30.0)], &["rest"]),
    ];
    let world = world(vec![provider("inn", 3.0, 3.0, 3, actions)]);
    let decider = Decider::new(
        TuningPatch {
            perception_noise: Some(3.0),
            convention_break_probability: Some(0.2),
            ..Default::default()
        }
        .resolve(),
    );
    let mut different = 0;
    for seed in 0..200 {
        let first = decider.decide(&agent, &world, seed);
        let second = decider.decide(&agent, &world, seed);
        assert_eq!(first, second, "seed {seed}");
        let bits = |d: &geppetto_core::Decision| d.selected.map(|c| c.utility.to_bits());
        assert_eq!(bits(&first), bits(&second));
        if first.selected.map(|c| c.action)
            != decider
                .decide(&agent, &world, seed + 1000)
                .selected
                .map(|c| c.action)
        {
            different += 1;
        }
    }
    assert!(
        different > 20,
        "the seed matters: {different} of 200 differ"
    );
}
