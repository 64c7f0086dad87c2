//! An agent's life over time, built on [`crate::decision`].
//!
//! [`simulator`] advances an agent tick by tick over the [`action`] types (what it runs, what
//! is queued, at which level of detail); [`goals`] and [`planner`] give it aims beyond the next
//! action, [`goal_registry`] reads and writes them as data; [`schedule`] shapes its day,
//! [`wellbeing`] derives mood and stress, [`bark`] picks what it says aloud, [`reply`] what it says back to a player, [`reactive`] is the
//! "which now?" layer of utility sets. [`catch_up`] brings an unwatched agent up to date in one
//! step, [`agent_state`] is what a snapshot keeps of it, and [`scenario`] runs one agent
//! through a timeline.

pub mod action;
pub mod agent_state;
pub mod bark;
pub mod catch_up;
pub mod goal_registry;
pub mod goals;
pub mod planner;
pub mod reactive;
pub mod reply;
pub mod scenario;
pub mod schedule;
pub mod simulator;
pub mod wellbeing;
