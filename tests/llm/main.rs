//! The LLM seams in a running zone: `seams` against a chat-completions server the test plays
//! itself, `spend_restart` (the spend a crashed worker saved, restored by the next) and
//! `load_spend` (`geppetto load`'s priced spend line) against the same server, needing nothing
//! outside; `real` against SmolLM2-135M behind
//! llama-cpp-python's server from the environment `scripts/llm-venv` builds, and a private
//! `redis-server`. The `real` tests run one at a time (`.config/nextest.toml`, test group
//! `real-model`).

mod load_spend;
mod real;
mod seams;
mod spend_restart;
