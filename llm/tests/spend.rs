//! What model calls spend, against a real chat-completions server on loopback: tokens read
//! from the answer's `usage` (or estimated from the text and marked when there is none), priced
//! by `[llm.prices]` and added up by seam, class and tier; `[llm.budget]` allowances that a
//! burst never passes, a class whose share is spent falling back while another class still
//! gets the model; a 429 storm that never opens the breaker, and calls resuming once the
//! `Retry-After` has passed. Time is a manual clock: nothing sleeps or measures a duration.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use common::{
    Mode, TestServer, always_occupied, assets, collect, config, narration, perception,
    run_with_clock,
};
use geppetto_llm::{
    ApiKey, BudgetConfig, Clock, FallbackReason, LlmConfig, LlmOutput, LlmRequest, ManualClock,
    ModelPrice, OpenAiProvider, Priority, Provider, Seam, SpendTags, WorkerCounts,
};

const NARRATION_REPLY: &str = "Gundren and Mira argue about the price of iron.";
const VALID: &str = r#"{"events": [{"type": "social_event", "kind": "insult", "target": "mira", "magnitude": 0.6, "summary": "calls her an idiot"}]}"#;

fn tags(class: &str, tier: &str) -> SpendTags {
    SpendTags {
        class: Some(class.to_owned()),
        tier: Some(tier.to_owned()),
    }
}

fn fallbacks(counts: &WorkerCounts, reason: FallbackReason) -> u64 {
    counts
        .fallbacks_by_reason
        .iter()
        .find_map(|(r, n)| (*r == reason).then_some(*n))
        .unwrap_or_default()
}

/// What the worker reserves for `request` before calling: the provider's own estimate.
fn reserved(config: &LlmConfig, request: &LlmRequest) -> u64 {
    let provider = OpenAiProvider::new(
        config.provider.as_ref().expect("a provider"),
        ApiKey::new(String::new()),
        assets().prompts,
        config.perception.clone(),
        Duration::from_secs(10),
    )
    .expect("provider builds");
    provider.reservation(request).total()
}

/// The id of an output and whether the model served it (no fallback reason) or why not.
fn served(output: &LlmOutput) -> (String, Option<FallbackReason>) {
    match output {
        LlmOutput::Perception(result) => (result.utterance_id.clone(), result.fallback),
        LlmOutput::NarrativeReady(ready) => (ready.interaction_id.clone(), None),
        LlmOutput::NarrationSkipped(skipped) => {
            (skipped.interaction_id.clone(), Some(skipped.reason))
        }
        LlmOutput::Breaker(_) => (String::new(), None),
    }
}

fn ids_for(outputs: &[LlmOutput], reason: FallbackReason) -> BTreeSet<String> {
    outputs
        .iter()
        .map(served)
        .filter(|(_, why)| *why == Some(reason))
        .map(|(id, _)| id)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_the_server_reports_is_counted_and_priced_exactly_by_seam_class_and_tier() {
    let server = TestServer::start(Mode::Ok).await;
    server.set_perception_reply(VALID);
    server.set_usage(Some((13, 7)));
    let mut config = config(&server.base_url);
    config.prices.insert(
        "test-model".to_owned(),
        ModelPrice {
            input_per_million: 2.0,
            output_per_million: 8.0,
        },
    );
    let mut running = run_with_clock(&config, always_occupied(), Arc::new(ManualClock::new()));
    let handle = running.started.handle.clone();
    for index in 0..2 {
        let mut request = perception(&format!("p{index}"), "Mira, you idiot");
        request.tags = tags("guard", "active");
        handle.perceive(request);
    }
    let mut request = narration("n0", "square", Priority::Witnessed);
    request.tags = tags("smith", "background");
    handle.narrate(request);
    collect(&mut running.started.output, 3).await;
    let spend = running.started.worker.stats.snapshot().spend;
    assert_eq!(spend.total.calls, 3);
    assert_eq!((spend.total.tokens_in, spend.total.tokens_out), (39, 21));
    assert_eq!(
        (
            spend.total.estimated_tokens_in,
            spend.total.estimated_tokens_out
        ),
        (0, 0),
        "the server reported every call's usage"
    );
    // 2.0 and 8.0 a million tokens: 2000 and 8000 nanos a token.
    assert_eq!(spend.total.cost_nanos, 39 * 2000 + 21 * 8000);
    assert!((spend.total.cost() - 0.000_246).abs() < 1e-12);
    let perceptions = spend.seam(Seam::Perception);
    assert_eq!(
        (
            perceptions.calls,
            perceptions.tokens_in,
            perceptions.tokens_out
        ),
        (2, 26, 14)
    );
    assert_eq!(spend.seam(Seam::Narration).calls, 1);
    assert_eq!(spend.by_class["guard"].calls, 2);
    assert_eq!(spend.by_class["smith"].tokens_out, 7);
    assert_eq!(spend.by_tier["active"].cost_nanos, 26 * 2000 + 14 * 8000);
    assert_eq!(spend.by_tier["background"].calls, 1);
    assert_eq!(spend.by_zone["village"].calls, 3);
    // Each call one by one: seam, zone, class, tier, usage, cost and outcome.
    assert_eq!(spend.recent.len(), 3);
    for call in &spend.recent {
        assert_eq!(
            (call.provider.as_str(), call.zone.as_str()),
            ("loopback", "village")
        );
        assert_eq!(
            (call.usage.prompt_tokens, call.usage.completion_tokens),
            (13, 7)
        );
        assert_eq!(call.cost_nanos, 13 * 2000 + 7 * 8000);
        assert_eq!(call.outcome, "ok");
    }
    let narrated = spend
        .recent
        .iter()
        .find(|call| call.seam == Seam::Narration)
        .expect("the narration");
    assert_eq!(narrated.tags, tags("smith", "background"));
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_usage_tokens_are_estimated_from_the_text_and_marked_estimated() {
    let server = TestServer::start(Mode::Ok).await;
    server.set_perception_reply(VALID);
    server.set_narration_reply(NARRATION_REPLY);
    let config = config(&server.base_url);
    let mut running = run_with_clock(&config, always_occupied(), Arc::new(ManualClock::new()));
    running
        .started
        .handle
        .narrate(narration("n0", "square", Priority::Witnessed));
    collect(&mut running.started.output, 1).await;
    let spend = running.started.worker.stats.snapshot().spend;
    assert_eq!(spend.total.calls, 1);
    // 47 characters at the default 4 a token, rounded up.
    assert_eq!(NARRATION_REPLY.chars().count(), 47);
    assert_eq!(spend.total.tokens_out, 12);
    assert!(spend.total.tokens_in > 0);
    assert_eq!(spend.total.estimated_tokens_in, spend.total.tokens_in);
    assert_eq!(spend.total.estimated_tokens_out, spend.total.tokens_out);
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_perceptions_and_witnessed_narrations_never_spends_past_the_hourly_budget() {
    let server = TestServer::start(Mode::Ok).await;
    server.set_perception_reply(VALID);
    server.set_usage(Some((20, 10)));
    let mut config = config(&server.base_url);
    config.max_in_flight_calls = 1;
    let requests: Vec<LlmRequest> = (0..12)
        .map(|index| {
            if index % 2 == 0 {
                LlmRequest::Perception(perception(&format!("r{index}"), "Mira, you idiot"))
            } else {
                LlmRequest::Narration(narration(
                    &format!("r{index}"),
                    "square",
                    Priority::Witnessed,
                ))
            }
        })
        .collect();
    let sizes: Vec<u64> = requests.iter().map(|r| reserved(&config, r)).collect();
    let largest = sizes.iter().copied().max().unwrap_or_default();
    let limit = 3 * 30 + largest + 5;
    config.budget = BudgetConfig {
        tokens_per_hour: Some(limit),
        ..BudgetConfig::default()
    };
    // Served one at a time in queue order (all witnessed): a call is admitted when what was
    // spent plus its reservation fits the hour; each spends 30.
    let mut spent = 0;
    let mut expected_refused = BTreeSet::new();
    for (request, size) in requests.iter().zip(&sizes) {
        if spent + size <= limit {
            spent += 30;
        } else {
            expected_refused.insert(request.id().to_owned());
        }
    }
    assert!(!expected_refused.is_empty() && expected_refused.len() < requests.len());
    let mut running = run_with_clock(&config, always_occupied(), Arc::new(ManualClock::new()));
    for request in requests.clone() {
        match request {
            LlmRequest::Perception(p) => {
                running.started.handle.perceive(p);
            }
            LlmRequest::Narration(n) => {
                running.started.handle.narrate(n);
            }
        }
    }
    let (outputs, _) = collect(&mut running.started.output, requests.len()).await;
    assert_eq!(
        ids_for(&outputs, FallbackReason::SpendBudget),
        expected_refused
    );
    let counts = running.started.worker.stats.snapshot();
    let admitted = (requests.len() - expected_refused.len()) as u64;
    assert_eq!(server.calls() as u64, admitted);
    assert_eq!(counts.spend.total.calls, admitted);
    assert_eq!(
        counts.spend.total.tokens_in + counts.spend.total.tokens_out,
        spent
    );
    assert!(spent <= limit);
    assert_eq!(
        fallbacks(&counts, FallbackReason::SpendBudget),
        expected_refused.len() as u64
    );
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_never_spend_past_the_hourly_budget_in_tokens_or_money() {
    let server = TestServer::start(Mode::Ok).await;
    server.set_perception_reply(VALID);
    server.set_usage(Some((20, 10)));
    let mut config = config(&server.base_url);
    config.max_in_flight_calls = 4;
    config.prices.insert(
        "test-model".to_owned(),
        ModelPrice {
            input_per_million: 1.0,
            output_per_million: 1.0,
        },
    );
    let size = reserved(
        &config,
        &LlmRequest::Perception(perception("x", "Mira, you idiot")),
    );
    let limit = 4 * size + 100;
    config.budget = BudgetConfig {
        tokens_per_hour: Some(limit),
        // A token costs 1000 nanos: the money allowance is the same as the tokens'.
        money_per_hour: Some(limit as f64 * 1e-6),
        witnessed_reserve: 0.0,
        ..BudgetConfig::default()
    };
    let mut running = run_with_clock(&config, always_occupied(), Arc::new(ManualClock::new()));
    let total = 40;
    for index in 0..total {
        running
            .started
            .handle
            .perceive(perception(&format!("c{index}"), "Mira, you idiot"));
    }
    let (outputs, _) = collect(&mut running.started.output, total).await;
    let counts = running.started.worker.stats.snapshot();
    let spend = counts.spend.total;
    assert_eq!(spend.calls, server.calls() as u64);
    assert_eq!(spend.tokens_in + spend.tokens_out, 30 * spend.calls);
    assert!(
        spend.tokens_in + spend.tokens_out <= limit,
        "{spend:?} within {limit}"
    );
    assert!(spend.cost_nanos <= limit * 1000);
    let refused = ids_for(&outputs, FallbackReason::SpendBudget).len() as u64;
    assert!(refused > 0, "the budget was binding");
    assert_eq!(spend.calls + refused, total as u64);
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_class_whose_share_is_spent_falls_back_while_another_class_still_gets_the_model() {
    let server = TestServer::start(Mode::Ok).await;
    server.set_perception_reply(VALID);
    server.set_usage(Some((20, 10)));
    let mut config = config(&server.base_url);
    config.max_in_flight_calls = 1;
    let size = reserved(
        &config,
        &LlmRequest::Perception(perception("x", "Mira, you idiot")),
    );
    // The guards' half fits three calls: after two (60 spent) a third still fits its
    // reservation, a fourth (90 spent) does not.
    config.budget = BudgetConfig {
        tokens_per_hour: Some(2 * (size + 60)),
        classes: [("guard".to_owned(), 0.5)].into(),
        ..BudgetConfig::default()
    };
    let mut running = run_with_clock(&config, always_occupied(), Arc::new(ManualClock::new()));
    let mut sources = Vec::new();
    for index in 0..5 {
        let mut request = perception(&format!("guard{index}"), "Mira, you idiot");
        request.tags = tags("guard", "active");
        running.started.handle.perceive(request);
        let (outputs, _) = collect(&mut running.started.output, 1).await;
        sources.push(served(&outputs[0]).1);
    }
    let spent = Some(FallbackReason::SpendBudget);
    assert_eq!(sources, [None, None, None, spent, spent]);
    let mut smith = perception("smith", "Mira, you idiot");
    smith.tags = tags("smith", "active");
    running.started.handle.perceive(smith);
    let (outputs, _) = collect(&mut running.started.output, 1).await;
    assert!(
        matches!(&outputs[..], [LlmOutput::Perception(r)] if r.provider == "loopback"),
        "{outputs:?}"
    );
    let spend = running.started.worker.stats.snapshot().spend;
    assert_eq!(spend.by_class["guard"].calls, 3);
    assert_eq!(spend.by_class["smith"].calls, 1);
    assert_eq!(server.calls(), 4);
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_storm_never_opens_the_breaker_and_calls_resume_after_retry_after() {
    let server = TestServer::start(Mode::RateLimited).await;
    server.set_perception_reply(VALID);
    let mut config = config(&server.base_url);
    config.max_in_flight_calls = 1;
    let clock = ManualClock::new();
    let mut running = run_with_clock(&config, always_occupied(), Arc::new(clock.clone()));
    let handle = running.started.handle.clone();
    // A storm: every call answered 429 with `Retry-After: 0`, well past the breaker's five.
    server.set_retry_after(Some("0"));
    for index in 0..8 {
        handle.perceive(perception(&format!("storm{index}"), "Mira, you idiot"));
    }
    let (outputs, breaker) = collect(&mut running.started.output, 8).await;
    assert!(breaker.is_empty(), "429s are no outage: {breaker:?}");
    assert_eq!(server.calls(), 8);
    assert_eq!(ids_for(&outputs, FallbackReason::RateLimited).len(), 8);
    let counts = running.started.worker.stats.snapshot();
    assert_eq!((counts.calls_rate_limited, counts.calls_failed), (8, 0));
    assert_eq!(counts.spend.total.calls, 0, "a refused call spends nothing");

    // `Retry-After: 120`: nothing is sent for two minutes, then calls resume.
    server.set_retry_after(Some("120"));
    let ask = |id: String| {
        handle.perceive(perception(&id, "Mira, you idiot"));
    };
    ask("asked-to-wait".to_owned());
    collect(&mut running.started.output, 1).await;
    assert_eq!(server.calls(), 9);
    server.set_mode(Mode::Ok);
    for (step, advance) in [(0, 0), (1, 60), (2, 59)] {
        clock.advance(Duration::from_secs(advance));
        ask(format!("waiting{step}"));
        let (outputs, _) = collect(&mut running.started.output, 1).await;
        assert_eq!(served(&outputs[0]).1, Some(FallbackReason::RateLimited));
    }
    assert_eq!(server.calls(), 9, "no call inside the back-off");
    clock.advance(Duration::from_secs(1));
    ask("resumed".to_owned());
    let (outputs, _) = collect(&mut running.started.output, 1).await;
    assert_eq!(served(&outputs[0]), ("resumed".to_owned(), None));
    assert_eq!(server.calls(), 10);

    // An HTTP date five minutes ahead, and no header at all (the default 30 s).
    server.set_mode(Mode::RateLimited);
    let at = httpdate::fmt_http_date(clock.wall() + Duration::from_secs(300));
    server.set_retry_after(Some(&at));
    ask("dated".to_owned());
    collect(&mut running.started.output, 1).await;
    server.set_mode(Mode::Ok);
    clock.advance(Duration::from_secs(250));
    ask("before-the-date".to_owned());
    let (outputs, _) = collect(&mut running.started.output, 1).await;
    assert_eq!(served(&outputs[0]).1, Some(FallbackReason::RateLimited));
    clock.advance(Duration::from_secs(50));
    ask("after-the-date".to_owned());
    let (outputs, _) = collect(&mut running.started.output, 1).await;
    assert_eq!(served(&outputs[0]).1, None);

    server.set_mode(Mode::RateLimited);
    server.set_retry_after(None);
    ask("no-header".to_owned());
    collect(&mut running.started.output, 1).await;
    server.set_mode(Mode::Ok);
    clock.advance(Duration::from_millis(config.rate_limited_backoff_ms - 1));
    ask("inside-default".to_owned());
    let (outputs, _) = collect(&mut running.started.output, 1).await;
    assert_eq!(served(&outputs[0]).1, Some(FallbackReason::RateLimited));
    clock.advance(Duration::from_millis(1));
    ask("after-default".to_owned());
    let (outputs, _) = collect(&mut running.started.output, 1).await;
    assert_eq!(served(&outputs[0]).1, None);
    let counts = running.started.worker.stats.snapshot();
    assert_eq!(counts.calls_failed, 0);
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routine_work_stops_short_of_the_reserve_a_witnessed_scene_still_gets() {
    let server = TestServer::start(Mode::Ok).await;
    server.set_usage(Some((20, 10)));
    let mut config = config(&server.base_url);
    config.max_in_flight_calls = 1;
    let size = reserved(
        &config,
        &LlmRequest::Narration(narration("x", "square", Priority::Routine)),
    );
    // Half is kept for witnessed scenes: routine work fits three calls in the other half.
    config.budget = BudgetConfig {
        tokens_per_hour: Some(2 * (size + 60)),
        witnessed_reserve: 0.5,
        ..BudgetConfig::default()
    };
    let mut running = run_with_clock(&config, always_occupied(), Arc::new(ManualClock::new()));
    let mut refused = Vec::new();
    for index in 0..5 {
        running.started.handle.narrate(narration(
            &format!("routine{index}"),
            "square",
            Priority::Routine,
        ));
        let (outputs, _) = collect(&mut running.started.output, 1).await;
        refused.push(served(&outputs[0]).1 == Some(FallbackReason::SpendBudget));
    }
    assert_eq!(refused, [false, false, false, true, true]);
    running
        .started
        .handle
        .narrate(narration("witnessed", "square", Priority::Witnessed));
    let (outputs, _) = collect(&mut running.started.output, 1).await;
    assert_ne!(served(&outputs[0]).1, Some(FallbackReason::SpendBudget));
    assert_eq!(server.calls(), 4);
    running.stop().await;
}
