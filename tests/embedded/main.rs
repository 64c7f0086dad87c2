//! `geppetto serve` and the zone loop with nothing outside the process: the in-process bus,
//! the admin API on a loopback port, the embedded mode's redb log across restarts and replays,
//! the integration contract's messages against `schema/`, and the contract's pages against the
//! schemas and the parser. Needs no outside service.

mod admin;
mod contract_docs;
mod embedded_recovery;
mod game_contract;
