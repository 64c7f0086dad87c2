//! The games that drive geppetto, against a real `geppetto serve` over a private
//! `redis-server`: the example MUD client and the reference game (`examples/`, Python 3 with
//! redis-py; the game with the reference quest board too, whose unit tests run here), and the
//! Evennia integration with Evennia 5 and a real model (the environments
//! `scripts/evennia-venv` and `scripts/llm-venv` build; test group `real-model`).

mod evennia;
mod mud_client;
mod mud_world;
mod quests;
