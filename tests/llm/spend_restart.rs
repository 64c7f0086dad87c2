//! The LLM spend across a crash: the seams of a service spend on the loopback model, their
//! keeper saves what the budget holds within `[llm.budget] save_within_ms` of the calls —
//! before any shutdown — and a restarted worker restores it, so its hour already holds what
//! the crashed one spent (the budget's unit tests show restored spend refusing calls).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use geppetto_llm::{
    BudgetConfig, LlmConfig, LlmRequest, NpcRef, OpenAiProviderConfig, PerceptionContext,
    PerceptionRequest, Priority, Scope, SpendTags,
};
use geppetto_service::bus::EventBus;
use geppetto_service::bus::memory::InProcessBus;
use geppetto_service::runtime::llm_spend::SpendKeeper;
use geppetto_service::runtime::starter::{StartedSeams, start_llm};
use geppetto_storage::{MemorySnapshotStore, SnapshotStore, StorageConfig, ZoneName};
use tokio::sync::watch;

use crate::seams::{USAGE, model_server};

/// Lines the first run perceives through the model.
const LINES: u64 = 3;

/// How long a wait for the calls or the save goes on (only a broken run waits that long).
const PATIENCE: Duration = Duration::from_secs(60);

fn config(base_url: &str) -> LlmConfig {
    LlmConfig {
        provider: Some(OpenAiProviderConfig {
            name: "loopback".into(),
            base_url: base_url.to_owned(),
            model: "loopback".into(),
            api_key_env: "GEPPETTO_TEST_NO_KEY".into(),
            ..OpenAiProviderConfig::default()
        }),
        budget: BudgetConfig {
            tokens_per_hour: Some(1_000_000),
            save_within_ms: 50,
            ..BudgetConfig::default()
        },
        ..LlmConfig::default()
    }
}

fn line(index: u64) -> LlmRequest {
    LlmRequest::Perception(PerceptionRequest {
        utterance_id: format!("line-{index}"),
        speaker: "p1".into(),
        text: "Bram, you are a thief and a liar!".into(),
        context: PerceptionContext {
            zone: "village".into(),
            room: "square".into(),
            addressee: Some("bram".into()),
            npcs: vec![NpcRef {
                id: "bram".into(),
                name: "Bram".into(),
                zone: "village".into(),
            }],
        },
        priority: Priority::Witnessed,
        seed: index,
        tags: SpendTags::default(),
    })
}

/// The tokens the whole budget's hour holds.
fn hour_tokens(seams: &StartedSeams) -> u64 {
    (seams.spend.spent().into_iter())
        .find(|(scope, _, _)| *scope == Scope::All)
        .map_or(0, |(_, hour, _)| hour.tokens)
}

#[test]
fn a_crash_after_the_calls_does_not_give_the_spend_back() {
    let (base_url, calls) = model_server();
    let store: Arc<dyn SnapshotStore> =
        Arc::new(MemorySnapshotStore::new(&StorageConfig::default()).expect("store"));
    let spent = LINES * (USAGE.0 + USAGE.1);
    let (saved, restored) = geppetto_service::runtime::block_on(2, async move {
        let bus: Arc<dyn EventBus> = Arc::new(InProcessBus::new(10_000));
        let config = config(&base_url);
        let keeper = |seams: &StartedSeams| SpendKeeper {
            store: Arc::clone(&store),
            owner: "service".into(),
            budget: seams.spend.clone(),
        };
        // The first run spends, and its keeper saves on its own: nothing stops it.
        let (stop_first, stopped) = watch::channel(false);
        let first = start_llm(&config, None, &bus, &stopped).expect("seams");
        let first_keeper = keeper(&first);
        let after = first_keeper.restore().await;
        let keeping = tokio::spawn(first_keeper.keep(after, config.budget.save_within(), stopped));
        first.link.submit((0..LINES).map(line).collect());
        let deadline = Instant::now() + PATIENCE;
        let saved = loop {
            let record = store
                .latest_valid(
                    &ZoneName::new("llm-spend.service".to_owned()).expect("key"),
                    geppetto_service::runtime::llm_spend::SPEND_SCHEMA_VERSION,
                )
                .await
                .expect("store")
                .snapshot
                .map(|snapshot| {
                    serde_json::from_slice::<geppetto_llm::SpentRecord>(&snapshot.payload)
                        .expect("record")
                });
            let tokens: u64 = (record.iter())
                .flat_map(|record| record.scopes.get("all").into_iter().flatten())
                .map(|minute| minute.tokens)
                .sum();
            if tokens == spent || Instant::now() > deadline {
                break tokens;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        // The crash: the keeper is gone without a last save, then the worker.
        keeping.abort();
        let _ = stop_first.send(true);
        drop(first);
        // The restart restores the saved spend before any call.
        let (_stop, stopped) = watch::channel(false);
        let second = start_llm(&config, None, &bus, &stopped).expect("seams");
        keeper(&second).restore().await;
        (saved, hour_tokens(&second))
    })
    .expect("runtime");
    assert_eq!(
        calls.load(Ordering::SeqCst),
        LINES as usize,
        "every line was a call"
    );
    assert_eq!(
        saved, spent,
        "the calls' spend was saved before any shutdown"
    );
    assert_eq!(restored, spent, "the restarted worker's hour holds it");
}
