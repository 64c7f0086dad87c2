//! How the seams degrade against servers that do less than asked, over a real chat-completions
//! server on loopback: a refused structured-output mode is learned once and the weaker mode
//! kept; a model answer with nothing valid leaves the player's line to the keyword rules; a
//! narration that fails the answer check keeps its template; a narration whose room emptied
//! before its turn is never sent. Every fallback is counted by reason.

mod common;

use common::{
    Mode, TestServer, always_occupied, collect, config, narration, perception, run, skipped_ids,
};
use geppetto_llm::{FallbackReason, LlmOutput, PerceivedEvent, Priority, StructuredMode};
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::Arc;

const VALID: &str = r#"{"events": [{"type": "social_event", "kind": "insult", "target": "mira", "magnitude": 0.6, "summary": "calls her an idiot"}]}"#;

fn formats(server: &TestServer) -> Vec<Option<String>> {
    server
        .bodies()
        .iter()
        .map(|body| body["response_format"]["type"].as_str().map(str::to_owned))
        .collect()
}

fn fallbacks(counts: &geppetto_llm::WorkerCounts, reason: FallbackReason) -> u64 {
    counts
        .fallbacks_by_reason
        .iter()
        .find_map(|(r, n)| (*r == reason).then_some(*n))
        .unwrap_or_default()
}

/// Sends `lines` one at a time and returns their perception results.
async fn perceive_each(
    running: &mut common::Running,
    lines: &[&str],
) -> Vec<geppetto_llm::PerceptionResult> {
    let mut results = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        running
            .started
            .handle
            .perceive(perception(&format!("u{index}"), line));
        let (outputs, breaker) = collect(&mut running.started.output, 1).await;
        assert!(breaker.is_empty(), "a refusal is no outage: {breaker:?}");
        match outputs.into_iter().next() {
            Some(LlmOutput::Perception(result)) => results.push(result),
            other => panic!("expected a perception result, got {other:?}"),
        }
    }
    results
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_refusing_json_schema_is_asked_for_json_object_once_and_from_then_on() {
    let server = TestServer::start(Mode::RefuseJsonSchema).await;
    server.set_perception_reply(VALID);
    let mut running = run(&config(&server.base_url), always_occupied());
    let results = perceive_each(&mut running, &["Mira, you idiot", "idiot", "idiot!"]).await;
    for result in &results {
        assert_eq!(result.provider, "loopback");
        assert_eq!(result.fallback, None);
        assert_eq!(result.outcome.events.len(), 1, "{result:?}");
    }
    assert_eq!(
        formats(&server),
        [
            Some("json_schema".to_owned()),
            Some("json_object".to_owned()),
            Some("json_object".to_owned()),
            Some("json_object".to_owned()),
        ],
        "refused once, then never asked again"
    );
    let body = server.bodies().pop().expect("a request");
    assert!(
        body["response_format"]["schema"]["properties"]["events"].is_object(),
        "json_object carries the closed schema for servers that enforce it"
    );
    assert_eq!(
        body["max_tokens"], 160,
        "the cap every compatible server reads"
    );
    let counts = running.started.worker.stats.snapshot();
    assert_eq!((counts.calls_succeeded, counts.calls_failed), (3, 0));
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_refusing_every_response_format_gets_plain_text_and_the_json_is_extracted() {
    let server = TestServer::start(Mode::RefuseResponseFormat).await;
    server.set_perception_reply(&format!(
        "Here you go:\n```json\n{VALID}\n```\nAnything else?"
    ));
    let mut running = run(&config(&server.base_url), always_occupied());
    let results = perceive_each(&mut running, &["Mira, you idiot", "idiot"]).await;
    assert!(
        results
            .iter()
            .all(|r| r.provider == "loopback" && r.outcome.events.len() == 1),
        "{results:?}"
    );
    assert_eq!(
        formats(&server),
        [
            Some("json_schema".to_owned()),
            Some("json_object".to_owned()),
            None,
            None
        ]
    );
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_weaker_mode_is_where_perception_starts() {
    let server = TestServer::start(Mode::Ok).await;
    server.set_perception_reply(VALID);
    let mut config = config(&server.base_url);
    if let Some(provider) = config.provider.as_mut() {
        provider.structured_output = StructuredMode::Text;
    }
    let mut running = run(&config, always_occupied());
    perceive_each(&mut running, &["Mira, you idiot"]).await;
    assert_eq!(formats(&server), [None]);
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_answer_with_nothing_valid_leaves_the_line_to_the_keyword_rules() {
    let server = TestServer::start(Mode::Ok).await;
    // In-schema JSON, but about an NPC that is not there and of a kind that does not exist.
    server.set_perception_reply(
        r#"{"events": [{"type": "social_event", "kind": "bribe", "target": "nobody", "magnitude": 1, "summary": "x"}]}"#,
    );
    let mut running = run(&config(&server.base_url), always_occupied());
    let results = perceive_each(&mut running, &["Mira, you idiot", "What a lovely day."]).await;
    // The insult is not lost: the rules find it, and say they stood in.
    assert_eq!(results[0].provider, "template");
    assert_eq!(results[0].fallback, Some(FallbackReason::NoValidEvent));
    assert!(matches!(
        &results[0].outcome.events[..],
        [PerceivedEvent::SocialEvent { target, .. }] if target == "mira"
    ));
    // Nothing to find: the model's (refused) answer stands, no fallback is counted.
    assert_eq!(results[1].provider, "loopback");
    assert_eq!(results[1].fallback, None);
    assert!(results[1].outcome.events.is_empty());
    assert!(!results[1].outcome.rejections.is_empty());
    let counts = running.started.worker.stats.snapshot();
    assert_eq!(fallbacks(&counts, FallbackReason::NoValidEvent), 1);
    assert_eq!(counts.fallbacks, 1);
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_model_leaves_the_line_to_the_keyword_rules_counted_by_reason() {
    let server = TestServer::start(Mode::ServerError).await;
    let mut running = run(&config(&server.base_url), always_occupied());
    let results = perceive_each(&mut running, &["Mira, you idiot"]).await;
    assert_eq!(results[0].fallback, Some(FallbackReason::ProviderFailed));
    assert_eq!(results[0].outcome.events.len(), 1);
    // A plain 500 is tried with each weaker mode once, and teaches nothing.
    assert_eq!(server.calls(), 3);
    let counts = running.started.worker.stats.snapshot();
    assert_eq!(fallbacks(&counts, FallbackReason::ProviderFailed), 1);
    assert_eq!(
        counts.calls_failed, 1,
        "one call, one failure for the breaker"
    );
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn narration_answers_are_checked_before_delivery() {
    let server = TestServer::start(Mode::Ok).await;
    let config = config(&server.base_url);
    let mut running = run(&config, always_occupied());
    let cases = [
        (
            "Gundren slams the table while Mira rolls her eyes. Then the",
            Some("Gundren slams the table while Mira rolls her eyes."),
        ),
        ("Captain Vell watches Gundren and Mira argue.", None),
        ("Continue the story with one sentence about them.", None),
        ("The mood is tense.", None),
        (
            "Gundren and Mira argue about the price of iron while the",
            None,
        ),
        ("", None),
    ];
    let mut rejected = BTreeSet::new();
    for (index, (reply, delivered)) in cases.iter().enumerate() {
        server.set_narration_reply(reply);
        let id = format!("n{index}");
        running
            .started
            .handle
            .narrate(narration(&id, "square", Priority::Witnessed));
        let (outputs, _) = collect(&mut running.started.output, 1).await;
        match (delivered, &outputs[..]) {
            (Some(text), [LlmOutput::NarrativeReady(ready)]) => assert_eq!(ready.text, *text),
            (None, [LlmOutput::NarrationSkipped(_)]) => {
                rejected.extend(skipped_ids(&outputs, FallbackReason::RejectedText));
            }
            _ => panic!("{reply:?} gave {outputs:?}"),
        }
    }
    assert_eq!(rejected.len(), 5, "{rejected:?}");
    let counts = running.started.worker.stats.snapshot();
    assert_eq!(fallbacks(&counts, FallbackReason::RejectedText), 5);
    assert_eq!(
        counts.calls_failed, 0,
        "a refused answer is not a provider failure"
    );
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_narration_whose_room_emptied_before_its_turn_is_never_sent() {
    let server = TestServer::start(Mode::Ok).await;
    let guard = Arc::new(|_zone: &str, room: &str| room == "square");
    let mut running = run(&config(&server.base_url), guard);
    running
        .started
        .handle
        .narrate(narration("gone", "forge", Priority::Witnessed));
    running
        .started
        .handle
        .narrate(narration("here", "square", Priority::Witnessed));
    let (outputs, _) = collect(&mut running.started.output, 1).await;
    assert!(
        matches!(&outputs[..], [LlmOutput::NarrativeReady(ready)] if ready.interaction_id == "here")
    );
    assert_eq!(
        server.calls(),
        1,
        "the empty room's narration never reached the model"
    );
    let bodies: Vec<Value> = server.bodies();
    let user = bodies[0]["messages"][1]["content"]
        .as_str()
        .unwrap_or_default();
    assert!(
        user.contains("Gundren") && user.contains("tense"),
        "the scene and its mood reach the prompt: {user}"
    );
    assert_eq!(
        running.started.worker.stats.snapshot().narratives_discarded,
        1
    );
    running.stop().await;
}
