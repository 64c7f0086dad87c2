//! The `geppetto` binary's commands that need no bus as a user meets them — `decide` and
//! `decide-batch`, `validate`, `simulate`, `sets`, `affect`, `brain`, the load generator,
//! `demo`, `replay` — with their exit codes, messages, bad-input corpus and peak memory. Needs
//! nothing outside the workspace but `python3` (the world-log generator `scripts/world-log`).

mod commands;
mod corpus;
mod decide_memory;
mod demo;
mod load;
mod replay_memory;
mod worlds;
