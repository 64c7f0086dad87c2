//! The LLM seams in a running zone: `seams` against a chat-completions server the test plays
//! itself (needs nothing outside), `real` against SmolLM2-135M behind llama-cpp-python's server
//! from the environment `scripts/llm-venv` builds, and a private `redis-server`. The `real`
//! tests run one at a time (`.config/nextest.toml`, test group `real-model`).

mod real;
mod seams;
