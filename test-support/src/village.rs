//! The embedded village as a zone, for end-to-end tests that run it through the service loop.

use geppetto_service::content::profiles::ProfileLibrary;
use geppetto_service::content::sets::SetLibrary;
use geppetto_service::content::world_file::embedded_village;
use geppetto_service::zone::isolation::IsolationState;
use geppetto_service::zone::{Zone, ZoneConfig};

/// The village zone with `config` and persisted isolation counts `isolation`.
pub fn village(config: ZoneConfig, isolation: IsolationState) -> Zone {
    let world = embedded_village().expect("village");
    Zone::new(
        &world,
        &ProfileLibrary::embedded().expect("profiles"),
        &SetLibrary::embedded().expect("sets"),
        config,
        isolation,
    )
    .expect("zone")
}

/// A zone config whose wall-clock tick budget is out of the way: these tests are about the
/// bus and the engine, and an unoptimised test build can run over 5 ms a tick. Only the
/// governor's own test keeps the documented 4/5 ms.
pub fn calm() -> ZoneConfig {
    let mut config = ZoneConfig::default();
    config.governor.tick_budget_ms_soft = 60_000.0;
    config.governor.tick_budget_ms_hard = 60_000.0;
    config.tick.npc_budget_ms = 60_000.0;
    config.integration = geppetto_service::zone::IntegrationConfig::simulated();
    config
}
