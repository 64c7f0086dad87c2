//! The social fabric: NPCs that talk, trade, argue, scheme and
//! spread rumours that change what others do.
//!
//! - [`relationships`]: trust, respect, loyalty and affinity per ordered pair with history;
//!   friends, rivals and allies, cached per tick.
//! - [`gossip`]: rumours, why they are told, credibility and the listener's reactions.
//! - [`interaction`]: the nine interaction kinds, how partners advertise them to the decision
//!   engine, and their deterministic resolution rules.
//! - [`reservation`]: reservations with expiry and social cooldowns.
//! - [`fabric`]: a zone's social state and the social step that ties them together.
//! - [`advert`]: partners advertising interactions to the decision engine.
//! - [`resolve`]: carrying a chosen interaction out.
//! - [`chronicle`]: the events NPCs' lives produce, which the story detector reads, and their
//!   bounded buffer.

pub mod advert;
pub mod chronicle;
pub mod fabric;
pub mod gossip;
pub mod interaction;
pub mod relationships;
pub mod reservation;
pub mod resolve;

pub use advert::Offer;
pub use fabric::{
    Deed, FabricConfig, InteractionRecord, Member, NeedNames, SocialFabric, SocialPlace,
    SocialProfile, SocialStep, StepAt, Whereabouts,
};
pub use gossip::{
    Gossip, GossipConfig, GossipIntent, GossipReaction, Reception, RumourBook, RumourTopic,
};
pub use interaction::{InteractionConfig, InteractionKind};
pub use relationships::{
    Facet, NEUTRAL, Relationship, RelationshipCache, RelationshipThresholds, Relationships,
};
pub use reservation::Reservations;
