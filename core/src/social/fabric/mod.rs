//! The social fabric of a zone: who holds which rumours, who is engaged with
//! whom, and the social step that lets NPCs meet, talk, trade, argue and scheme.
//!
//! A step (every `step_every_ticks` ticks, default 10; or spread over them, see
//! [`SocialFabric::step_slice`]):
//! 1. Sweep expired reservations and cooldowns; invalidate the cached friend/rival/ally
//!    queries.
//! 2. Observe every NPC: a move, a significant mood shift (≥ 0.15) and a need falling below
//!    0.2 become story events.
//! 3. Witnessing: an NPC that started an action tagged hostile (`theft`) since the last step is
//!    seen by each other NPC in the same place with probability 0.7; a witness holds a
//!    first-hand threat rumour about the actor (confidence 1), trusts it 0.35 less and
//!    respects it 0.1 less, feels the threat and reacts like a credible threat's listener.
//! 4. Interactions, initiators in id order: an available NPC (not engaged, not cooling down)
//!    tries with probability `social_initiative`. Up to 8 nearest NPCs in its place
//!    **advertise** interactions to it as providers (an engaged partner advertises with no free
//!    slot, so the engine's slot gate refuses it: two NPCs never chase the same partner); the
//!    decision engine ranks and picks among them with the initiator's own needs, personality
//!    tags and contexts. The pick reserves both for `interaction_hours`, is resolved by its
//!    kind's rule (see [`super::interaction`]) and its effects applied; a gossip pick is heard
//!    by the listener (see [`super::gossip`]) and its reactions applied: survival pressure and
//!    the archetype's `threat` goal reactions for a credible threat, an acquire goal for an
//!    opportunity. The target's archetype may react to the kind itself (`on: intimidation`).
//!    Both then cool down for `cooldown_hours`. At most `max_interactions_per_step` a step.
//! 5. Interactions give rise to rumours: a trade to an opportunity at its place, an argument
//!    or intimidation to the target's grievance about the initiator, a scheme to a secret
//!    about its instigator held by the partner.
//!
//! Advertising lives in [`super::advert`], carrying a pick out in [`super::resolve`]; this
//! module owns the state and the step's order. It runs no zone tick and publishes nothing: the
//! caller feeds the step's story events to a detector and its records to the bus.
//!
//! Every draw comes from a stream derived from the step's seed and the NPC's id, so a step is
//! a pure function of its inputs. An interaction in a place with a player present is marked
//! `witnessed` (the service may ask the narrator for flavour text); no other one ever is.
//!
//! The folder, each file importing only those above it in this list: [`config`] (the numbers
//! and profiles), [`place`] (where NPCs are for a step), [`record`] (what a step produces and the
//! handle that adds to it), [`needs`] (the five needs the social life moves, by role),
//! [`state`] (the [`SocialFabric`] and its members), [`effects`] (regard, needs and mood moved by
//! what happens), [`witness`] (hostile acts seen and threats felt), [`deeds`] (a player's deed
//! remembered by the NPCs a quest was about) and [`step`] (the step's order over the zone).

mod config;
mod deeds;
mod effects;
pub(super) mod needs;
mod place;
mod record;
mod state;
mod step;
mod witness;

pub use config::{FabricConfig, NeedNames, SocialProfile};
pub use deeds::Deed;
pub use place::{SocialPlace, Whereabouts};
pub use record::{InteractionRecord, SocialStep, StepAt};
pub use state::{Member, SocialFabric};
