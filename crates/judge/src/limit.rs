//! An optional requests/tokens-per-minute limiter (a sliding one-minute window). The in-flight
//! cap is the runner's `concurrency`; this bounds the rate on top of it.

use std::collections::VecDeque;
use std::time::Duration;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateLimit {
    pub requests_per_minute: Option<u32>,
    /// Estimated prompt tokens plus max output tokens per request.
    pub tokens_per_minute: Option<u64>,
}

/// The window of requests started in the last minute.
#[derive(Debug, Default)]
pub struct RateLimiter {
    limit: RateLimit,
    window: VecDeque<(u64, u64)>,
}

const MINUTE_MS: u64 = 60_000;

impl RateLimiter {
    pub fn new(limit: RateLimit) -> Self {
        RateLimiter {
            limit,
            window: VecDeque::new(),
        }
    }

    /// How long to wait before a request of `tokens` may start at `now_ms` (`None`: now). A
    /// request larger than the whole token budget waits for an empty window, then goes.
    pub fn wait(&mut self, now_ms: u64, tokens: u64) -> Option<Duration> {
        while self
            .window
            .front()
            .is_some_and(|&(t, _)| t + MINUTE_MS <= now_ms)
        {
            self.window.pop_front();
        }
        let oldest = self.window.front()?.0;
        let until_oldest_leaves = Duration::from_millis(oldest + MINUTE_MS - now_ms);
        if let Some(r) = self.limit.requests_per_minute {
            if self.window.len() as u64 >= u64::from(r.max(1)) {
                return Some(until_oldest_leaves);
            }
        }
        if let Some(tpm) = self.limit.tokens_per_minute {
            let used: u64 = self.window.iter().map(|&(_, t)| t).sum();
            if used + tokens > tpm {
                return Some(until_oldest_leaves);
            }
        }
        None
    }

    /// Records a request started at `now_ms`.
    pub fn record(&mut self, now_ms: u64, tokens: u64) {
        if self.limit.requests_per_minute.is_some() || self.limit.tokens_per_minute.is_some() {
            self.window.push_back((now_ms, tokens));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_per_minute() {
        let mut l = RateLimiter::new(RateLimit {
            requests_per_minute: Some(2),
            tokens_per_minute: None,
        });
        assert_eq!(l.wait(0, 10), None);
        l.record(0, 10);
        assert_eq!(l.wait(1_000, 10), None);
        l.record(1_000, 10);
        assert_eq!(l.wait(2_000, 10), Some(Duration::from_millis(58_000)));
        assert_eq!(l.wait(60_000, 10), None);
    }

    #[test]
    fn tokens_per_minute() {
        let mut l = RateLimiter::new(RateLimit {
            requests_per_minute: None,
            tokens_per_minute: Some(100),
        });
        l.record(0, 60);
        assert_eq!(l.wait(10, 40), None);
        assert_eq!(l.wait(10, 41), Some(Duration::from_millis(59_990)));
    }
}
