//! What the workspace's tests and benchmarks share, in one place (a dev-dependency of
//! `geppetto-service`, whose `[[test]]` targets are the end-to-end tests in `tests/`, and of
//! `geppetto-storage`): private Redis servers and clusters on loopback, a running
//! `geppetto serve`, a real local model server, the Python the example clients need, scripted
//! worlds and world logs, the structural schema check, and the snapshot-store suite.
//!
//! Only a test of the package that owns the `geppetto` binary is told where cargo built it
//! (`env!("CARGO_BIN_EXE_geppetto")`), so the helpers that run it take its path.

#[cfg(feature = "service")]
pub mod bus_reader;
pub mod cluster_world;
pub mod http;
pub mod model_server;
pub mod python;
pub mod redis_cluster;
pub mod redis_server;
pub mod schema;
pub mod serve;
pub mod snapshot_suite;
pub mod snapshots;
#[cfg(feature = "service")]
pub mod village;
pub mod world_log;
pub mod world_script;

use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};

/// A free loopback port.
pub fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

/// The workspace's root directory (this crate sits right under it).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}
