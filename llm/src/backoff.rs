//! A provider's HTTP 429 and its `Retry-After`: the header's two forms (delay in seconds or an
//! HTTP date) parsed, and the back-off they start: no call to that provider until it ends,
//! requests in the window falling back with reason `rate_limited`. A 429 is the provider
//! asking for less, not failing, so it never counts against the breaker. This module owns the
//! parsing and the deadline; the worker asks it before each call.

use std::time::{Duration, Instant, SystemTime};

/// When the server said to come back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAfter {
    /// `Retry-After: <seconds>`.
    Delay(Duration),
    /// `Retry-After: <HTTP-date>`.
    At(SystemTime),
}

impl RetryAfter {
    /// Parses a `Retry-After` value; `None` when it is neither form.
    #[must_use]
    pub fn parse(value: &str) -> Option<Self> {
        let value = value.trim();
        if let Ok(seconds) = value.parse::<u64>() {
            return Some(RetryAfter::Delay(Duration::from_secs(seconds)));
        }
        httpdate::parse_http_date(value).ok().map(RetryAfter::At)
    }

    /// How long from `wall` the server asked to wait (zero for a date already past).
    #[must_use]
    pub fn delay_from(&self, wall: SystemTime) -> Duration {
        match self {
            RetryAfter::Delay(delay) => *delay,
            RetryAfter::At(at) => at.duration_since(wall).unwrap_or(Duration::ZERO),
        }
    }
}

/// One provider's back-off: the instant before which it is not called.
#[derive(Debug, Clone, Copy, Default)]
pub struct Backoff {
    until: Option<Instant>,
}

impl Backoff {
    /// Whether a call may start at `now`.
    #[must_use]
    pub fn allows(&self, now: Instant) -> bool {
        self.until.is_none_or(|until| now >= until)
    }

    /// A 429 answered at `now` (calendar time `wall`): backs off for what `retry_after` asks,
    /// `default` when it asks nothing, never longer than `max`. An earlier 429's longer
    /// back-off stands.
    pub fn rate_limited(
        &mut self,
        retry_after: Option<RetryAfter>,
        now: Instant,
        wall: SystemTime,
        default: Duration,
        max: Duration,
    ) -> Instant {
        let delay = retry_after
            .map_or(default, |asked| asked.delay_from(wall))
            .min(max);
        let until = now + delay;
        let until = self.until.map_or(until, |earlier| earlier.max(until));
        self.until = Some(until);
        until
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_of_retry_after_parse() {
        assert_eq!(
            RetryAfter::parse(" 120 "),
            Some(RetryAfter::Delay(Duration::from_secs(120)))
        );
        let at = RetryAfter::parse("Wed, 21 Oct 2015 07:28:00 GMT").expect("an HTTP date");
        let wall = httpdate::parse_http_date("Wed, 21 Oct 2015 07:27:00 GMT").expect("date");
        assert_eq!(at.delay_from(wall), Duration::from_secs(60));
        assert_eq!(
            at.delay_from(wall + Duration::from_secs(600)),
            Duration::ZERO
        );
        assert_eq!(RetryAfter::parse("soon"), None);
        assert_eq!(RetryAfter::parse("-5"), None);
    }

    #[test]
    fn the_back_off_takes_the_asked_delay_else_the_default_capped_at_the_max() {
        let now = Instant::now();
        let wall = SystemTime::now();
        let (default, max) = (Duration::from_secs(30), Duration::from_secs(600));
        let mut backoff = Backoff::default();
        assert!(backoff.allows(now));
        let until = backoff.rate_limited(None, now, wall, default, max);
        assert_eq!(until - now, default);
        assert!(!backoff.allows(now + Duration::from_secs(29)));
        assert!(backoff.allows(now + default));
        let asked = Some(RetryAfter::Delay(Duration::from_secs(86_400)));
        assert_eq!(
            backoff.rate_limited(asked, now, wall, default, max) - now,
            max
        );
        // A shorter ask does not cut a longer back-off already running.
        let short = Some(RetryAfter::Delay(Duration::from_secs(1)));
        assert_eq!(
            backoff.rate_limited(short, now, wall, default, max) - now,
            max
        );
    }
}
