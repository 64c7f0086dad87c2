//! Scale-out and crash recovery: `geppetto serve` instances sharing zones by lease over a real
//! Redis Cluster (`redis-server` nodes joined by `redis-cli --cluster create`), and one
//! instance killed with SIGKILL over and over against a private `redis-server`.

mod borders;
mod crash_recovery;
mod scale_out;
