//! One point-in-time decision: what it reads, how it scores, how it picks.
//!
//! The data a decision reads is [`agent`], [`world`], [`consideration`] and [`curve`];
//! [`scoring`] gates the candidates and computes their utility (a batch, or a caller deciding
//! many times over the same content through `Decider::compile`, reads the world's actions as
//! [`compiled`] once — a zone keeps them between ticks in a [`batch_index`] — and
//! [`compiled_scoring`] scores off those records, and [`compiled_decide`] in one tight loop
//! for a plain agent's decide), [`order`] orders them
//! (and [`ranking`] holds them, ordered on first read — a plain agent's decide keeps them
//! without their breakdowns, [`deferred`], put together on first read), [`selection`] picks among the best, and
//! [`decider`] puts them together as `rank`, `decide` and `decide_batch`, with [`contention`]
//! resolving a batch's disputes. [`tuning`] holds the numbers all of it is calibrated by, and [`workers`] how a batch's scoring is spread over threads. Nothing here knows about time passing: that is [`crate::life`].

pub mod agent;
pub mod batch_index;
pub(crate) mod compiled;
pub(crate) mod compiled_decide;
pub(crate) mod compiled_scoring;
pub mod consideration;
pub mod contention;
pub mod curve;
pub mod decider;
pub(crate) mod deferred;
pub(crate) mod order;
pub mod ranking;
pub(crate) mod scored;
pub mod scoring;
pub mod selection;
pub(crate) mod spatial;
pub mod tuning;
pub(crate) mod workers;
pub mod world;
