//! Serde and `as_str` agree for every variant of every wire enum of the core crate: the name a
//! metric label, a log line or a snapshot carries is the one JSON and YAML carry.

use geppetto_wire_enum::assert_wire_names_agree as check;

#[test]
fn every_core_wire_enum_agrees_with_serde() {
    use geppetto_core::decision::scoring::IneligibleReason;
    use geppetto_core::life::action::DetailLevel;
    use geppetto_core::life::goals::GoalCategory;
    use geppetto_core::life::planner::NoPlan;
    use geppetto_core::life::simulator::SimEventKind;
    use geppetto_core::social::gossip::{GossipIntent, RumourTopic};
    use geppetto_core::social::interaction::InteractionKind;
    use geppetto_core::social::relationships::Facet;
    use geppetto_core::story::signal::SignalType;
    check(
        IneligibleReason::VARIANTS,
        IneligibleReason::WIRE_NAMES,
        IneligibleReason::as_str,
    );
    check(
        DetailLevel::VARIANTS,
        DetailLevel::WIRE_NAMES,
        DetailLevel::as_str,
    );
    check(
        GoalCategory::VARIANTS,
        GoalCategory::WIRE_NAMES,
        GoalCategory::as_str,
    );
    check(NoPlan::VARIANTS, NoPlan::WIRE_NAMES, NoPlan::as_str);
    check(
        SimEventKind::VARIANTS,
        SimEventKind::WIRE_NAMES,
        SimEventKind::as_str,
    );
    check(
        GossipIntent::VARIANTS,
        GossipIntent::WIRE_NAMES,
        GossipIntent::as_str,
    );
    check(
        RumourTopic::VARIANTS,
        RumourTopic::WIRE_NAMES,
        RumourTopic::as_str,
    );
    check(
        InteractionKind::VARIANTS,
        InteractionKind::WIRE_NAMES,
        InteractionKind::as_str,
    );
    check(Facet::VARIANTS, Facet::WIRE_NAMES, Facet::as_str);
    check(
        SignalType::VARIANTS,
        SignalType::WIRE_NAMES,
        SignalType::as_str,
    );
}
