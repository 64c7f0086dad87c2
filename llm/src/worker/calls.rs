//! Serving one request: the route (a provider whose breaker and back-off admit a call, the
//! tick budget and the spend budget permitting, else the templates), the call under its
//! ceiling, the breaker's and the spend's bookkeeping after it, and the fallback.

use super::*;

impl Shared {
    /// Chooses how to serve the next request: the first provider not backing off after a
    /// 429 whose breaker admits a call, if the tick budget allows one and the spend budget has
    /// room for it, else the template provider.
    pub(super) fn route(&self, request: &LlmRequest) -> Route {
        if self.slots.is_empty() {
            return Route::Fallback(FallbackReason::NoProvider);
        }
        let now = self.io.clock.now();
        if !self.slots.iter().any(|slot| slot.allows(now)) {
            return Route::Fallback(FallbackReason::RateLimited);
        }
        if !self.io.budget.try_spend() {
            return Route::Fallback(FallbackReason::BudgetSpent);
        }
        let mut refused = FallbackReason::BreakerOpen;
        for (index, slot) in self.slots.iter().enumerate() {
            if !slot.allows(now) {
                continue;
            }
            let estimate = slot.provider.reservation(request);
            let Ok(booking) = self.book(slot, request, estimate, now) else {
                refused = FallbackReason::SpendBudget;
                continue;
            };
            let mut breaker = slot.breaker();
            let before = breaker.state();
            if let Ok(permit) = breaker.admit(now) {
                let after = breaker.state();
                drop(breaker);
                let transition = (before != after).then(|| {
                    telemetry::breaker_state(slot.provider.name(), after);
                    BreakerEvent {
                        provider: slot.provider.name().to_owned(),
                        from: before,
                        to: after,
                    }
                });
                return Route::Call(Call {
                    slot: index,
                    permit,
                    transition,
                    estimate,
                    booking,
                });
            }
            drop(breaker);
            self.settle(booking, Amount::default());
        }
        self.io.budget.refund();
        Route::Fallback(refused)
    }

    /// Reserves `estimate` of the spend budget for a call to `slot`.
    fn book(
        &self,
        slot: &Slot,
        request: &LlmRequest,
        estimate: Usage,
        now: Instant,
    ) -> Result<Reservation, ()> {
        let amount = Amount {
            tokens: estimate.total(),
            nanos: slot.price.cost_nanos(&estimate),
        };
        let booked = self.spend.reserve(
            now,
            request.seam(),
            request.priority(),
            request.tags(),
            amount,
        );
        booked.map_err(|refused| {
            tracing::debug!(
                request_id = request.id(),
                scope = ?refused.scope,
                "spend budget has no room for the call"
            );
        })
    }

    fn settle(&self, booking: Reservation, actual: Amount) {
        self.spend.settle(booking, actual);
    }

    async fn emit(&self, message: LlmOutput) {
        if self.io.output.send(message).await.is_err() {
            tracing::debug!("llm output receiver gone; message dropped");
        }
    }

    fn timeout_for(&self, request: &LlmRequest) -> Duration {
        match request {
            LlmRequest::Narration(narration) if narration.priority == Priority::Witnessed => {
                self.witnessed_narration_timeout
            }
            LlmRequest::Narration(_) | LlmRequest::Perception(_) => self.call_timeout,
        }
    }

    pub(super) async fn serve_fallback(
        self: Arc<Self>,
        request: LlmRequest,
        reason: FallbackReason,
    ) {
        match request {
            LlmRequest::Narration(narration) => self.skip_narration(&narration, reason).await,
            LlmRequest::Perception(perception) => {
                self.perceive_with_rules(&perception, reason).await;
            }
        }
    }

    pub(super) async fn serve_call(self: Arc<Self>, mut call: Call, request: LlmRequest) {
        if let Some(transition) = call.transition.take() {
            self.emit(LlmOutput::Breaker(transition)).await;
        }
        let Some(slot) = self.slots.get(call.slot) else {
            self.settle(call.booking, Amount::default());
            return;
        };
        let provider = Arc::clone(&slot.provider);
        let ceiling = self.timeout_for(&request);
        let started = Instant::now();
        match &request {
            LlmRequest::Narration(narration) => {
                let result = with_ceiling(ceiling, provider.narrate(narration)).await;
                let result = self.finish_call(call, &request, result, started).await;
                match result.map(|text| slot.check.check(&text, narration)) {
                    Ok(Ok(text)) => self.deliver(narration, text, provider.name()).await,
                    Ok(Err(rejection)) => {
                        telemetry::narrative_rejected(rejection.as_str());
                        tracing::debug!(
                            interaction_id = %narration.interaction_id,
                            reason = rejection.as_str(),
                            "model narration refused; the template stands"
                        );
                        self.skip_narration(narration, FallbackReason::RejectedText)
                            .await;
                    }
                    Err(error) => {
                        self.skip_narration(narration, FallbackReason::of(&error))
                            .await;
                    }
                }
            }
            LlmRequest::Perception(perception) => {
                let result = with_ceiling(ceiling, provider.perceive(perception)).await;
                let result = self.finish_call(call, &request, result, started).await;
                match result {
                    Ok(candidates) => {
                        let outcome = validate_candidates(&candidates, perception, &self.limits);
                        self.model_perceived(perception, outcome, provider.name())
                            .await;
                    }
                    Err(error) => {
                        if error == ProviderError::MalformedOutput {
                            PerceptionOutcome::malformed().record_metrics();
                        }
                        self.perceive_with_rules(perception, FallbackReason::of(&error))
                            .await;
                    }
                }
            }
        }
    }

    /// Emits what the model perceived; when none of its candidates passed, the keyword rules
    /// read the line too, and stand in if they find an event.
    async fn model_perceived(
        &self,
        perception: &PerceptionRequest,
        outcome: PerceptionOutcome,
        provider: &str,
    ) {
        if outcome.events.is_empty() {
            let candidates = self.fallback.perceive_now(perception);
            let rules = validate_candidates(&candidates, perception, &self.limits);
            if !rules.events.is_empty() {
                // The model's refused candidates still count in the metrics.
                outcome.record_metrics();
                self.stats
                    .fallback(Seam::Perception, FallbackReason::NoValidEvent);
                self.emit_perception(
                    perception,
                    rules,
                    TEMPLATE_PROVIDER_NAME,
                    Some(FallbackReason::NoValidEvent),
                )
                .await;
                return;
            }
        }
        self.emit_perception(perception, outcome, provider, None)
            .await;
    }

    /// Records a call's result: its tokens and cost (settling its spend reservation), its
    /// breaker, a 429's back-off, its metrics and counters; publishes a breaker transition if
    /// there was one. Returns the answer without its usage.
    async fn finish_call<T>(
        &self,
        call: Call,
        request: &LlmRequest,
        result: Result<Metered<T>, ProviderError>,
        started: Instant,
    ) -> Result<T, ProviderError> {
        let took = started.elapsed();
        let Some(slot) = self.slots.get(call.slot) else {
            self.settle(call.booking, Amount::default());
            return result.map(|answer| answer.value);
        };
        let name = slot.provider.name();
        let seam = request.seam();
        let (outcome, breaker_result) = match &result {
            Ok(_) => ("ok", CallResult::Success),
            Err(error) if !error.is_provider_failure() => (error.as_str(), CallResult::Success),
            Err(error) => (error.as_str(), CallResult::Failure),
        };
        let usage = match &result {
            Ok(answer) => Some(answer.usage),
            Err(error) => spent_on_error(error, call.estimate),
        };
        let cost_nanos = usage.map_or(0, |usage| slot.price.cost_nanos(&usage));
        self.settle(
            call.booking,
            Amount {
                tokens: usage.map_or(0, |usage| usage.total()),
                nanos: cost_nanos,
            },
        );
        if let Some(usage) = usage {
            let record = CallRecord {
                provider: name,
                seam,
                zone: request.zone(),
                tags: request.tags(),
                usage,
                cost_nanos,
                latency: took,
                outcome,
            };
            self.stats.ledger.record(&record);
            telemetry::spend(seam, &usage, cost_nanos);
            tracing::debug!(
                provider = name,
                seam = seam.as_str(),
                zone = record.zone,
                class = record.tags.class.as_deref().unwrap_or("-"),
                tier = record.tags.tier.as_deref().unwrap_or("-"),
                tokens_in = usage.prompt_tokens,
                tokens_out = usage.completion_tokens,
                estimated = usage.estimated,
                cost_nanos,
                latency_ms = u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
                outcome,
                "llm call accounted"
            );
        }
        telemetry::call_finished(name, seam, outcome, took);
        if let Err(ProviderError::RateLimited { retry_after }) = &result {
            bump(&self.stats.counters.calls_rate_limited);
            let until = lock(&slot.backoff).rate_limited(
                *retry_after,
                self.io.clock.now(),
                self.io.clock.wall(),
                self.rate_limited_backoff,
                self.rate_limited_max_backoff,
            );
            tracing::warn!(
                provider = name,
                backoff_ms = u64::try_from(
                    until
                        .saturating_duration_since(self.io.clock.now())
                        .as_millis()
                )
                .unwrap_or(u64::MAX),
                "llm provider rate limited us (HTTP 429); backing off"
            );
        } else {
            match breaker_result {
                CallResult::Success => {
                    bump(&self.stats.counters.calls_succeeded);
                    self.stats.answered(took);
                }
                CallResult::Failure => {
                    bump(&self.stats.counters.calls_failed);
                    tracing::warn!(
                        provider = name,
                        seam = seam.as_str(),
                        outcome,
                        "llm call failed"
                    );
                }
            }
        }
        let (before, after) = {
            let mut breaker = slot.breaker();
            let before = breaker.state();
            breaker.record(call.permit, breaker_result, self.io.clock.now());
            (before, breaker.state())
        };
        if before != after {
            telemetry::breaker_state(name, after);
            tracing::warn!(
                provider = name,
                from = before.as_str(),
                to = after.as_str(),
                "llm circuit breaker changed state"
            );
            self.emit(LlmOutput::Breaker(BreakerEvent {
                provider: name.to_owned(),
                from: before,
                to: after,
            }))
            .await;
        }
        result.map(|answer| answer.value)
    }

    pub(super) fn room_has_player(&self, narration: &NarrationRequest) -> bool {
        self.io
            .guard
            .room_has_player(&narration.zone, &narration.room)
    }

    /// Counts a narration nobody is left to read.
    pub(super) fn discard(&self, narration: &NarrationRequest) {
        bump(&self.stats.counters.narratives_discarded);
        telemetry::narrative_discarded();
        tracing::debug!(
            interaction_id = %narration.interaction_id,
            room = %narration.room,
            "narrative discarded: no player left in the room"
        );
    }

    async fn deliver(&self, narration: &NarrationRequest, text: String, provider: &str) {
        if self.room_has_player(narration) {
            bump(&self.stats.counters.narratives_delivered);
            telemetry::narrative_delivered();
            self.emit(LlmOutput::NarrativeReady(NarrativeReady {
                interaction_id: narration.interaction_id.clone(),
                zone: narration.zone.clone(),
                room: narration.room.clone(),
                text,
                provider: provider.to_owned(),
            }))
            .await;
        } else {
            self.discard(narration);
        }
    }

    /// The template stands for `narration`, for `reason`.
    async fn skip_narration(&self, narration: &NarrationRequest, reason: FallbackReason) {
        self.stats.fallback(Seam::Narration, reason);
        bump(&self.stats.counters.narrations_skipped);
        self.emit(LlmOutput::NarrationSkipped(NarrationSkipped {
            interaction_id: narration.interaction_id.clone(),
            reason,
        }))
        .await;
    }

    /// The keyword rules read `perception` in the model's place, for `reason`.
    async fn perceive_with_rules(&self, perception: &PerceptionRequest, reason: FallbackReason) {
        self.stats.fallback(Seam::Perception, reason);
        let candidates = self.fallback.perceive_now(perception);
        let outcome = validate_candidates(&candidates, perception, &self.limits);
        self.emit_perception(perception, outcome, TEMPLATE_PROVIDER_NAME, Some(reason))
            .await;
    }

    async fn emit_perception(
        &self,
        perception: &PerceptionRequest,
        outcome: PerceptionOutcome,
        provider: &str,
        fallback: Option<FallbackReason>,
    ) {
        outcome.record_metrics();
        bump(&self.stats.counters.perceptions);
        self.emit(LlmOutput::Perception(PerceptionResult {
            utterance_id: perception.utterance_id.clone(),
            zone: perception.context.zone.clone(),
            outcome,
            provider: provider.to_owned(),
            fallback,
        }))
        .await;
    }
}

/// What a failed call is taken to have spent: what was reserved for it (marked estimated)
/// when the server may have generated before the call failed — a timeout, an answer that is
/// no completion or no candidate JSON — and nothing when it refused the call outright.
fn spent_on_error(error: &ProviderError, estimate: Usage) -> Option<Usage> {
    match error {
        ProviderError::Timeout
        | ProviderError::MalformedOutput
        | ProviderError::InvalidResponse(_) => Some(Usage {
            estimated: true,
            ..estimate
        }),
        ProviderError::RateLimited { .. }
        | ProviderError::Http { .. }
        | ProviderError::Transport(_)
        | ProviderError::Request(_) => None,
    }
}

async fn with_ceiling<T>(
    ceiling: Duration,
    call: impl Future<Output = Result<T, ProviderError>>,
) -> Result<T, ProviderError> {
    tokio::time::timeout(ceiling, call)
        .await
        .unwrap_or(Err(ProviderError::Timeout))
}
