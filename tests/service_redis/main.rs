//! The service over a real Redis, each test with a private `redis-server` on a free loopback
//! port (or `REDIS_URL`, loopback only): the zone loop's streams, consumer groups and dead
//! letters; AUTH and TLS (`openssl` makes the certificates); and exact replay of a world log
//! (`python3` generates it), with snapshot positions read from a Redis stream.

mod hardening;
mod replay;
mod tiers_and_faults;
mod zone_loop;
