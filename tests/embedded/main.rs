//! `geppetto serve` and the zone loop with nothing outside the process: the in-process bus,
//! the admin API on a loopback port, the embedded mode's redb log across restarts and replays,
//! and the integration contract's messages against `schema/`. Needs no outside service.

mod admin;
mod embedded_recovery;
mod game_contract;
