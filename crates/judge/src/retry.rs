//! When to retry and how long to wait. Matches what the providers' SDKs do (REFERENCE.md §8):
//! retry 408/409/429/500/502/503/504/529 and connection errors, honour `retry-after-ms` then
//! `retry-after` (seconds or an HTTP date), else exponential backoff with jitter; never retry
//! 400/401/403/404 or OpenAI's `insufficient_quota` (a 429 that no wait cures).

use std::time::Duration;

/// Statuses worth another attempt.
pub const RETRY_STATUSES: [u16; 8] = [408, 409, 429, 500, 502, 503, 504, 529];

#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1 = no retry).
    pub max_attempts: u32,
    /// Backoff before the second attempt; doubled each time.
    pub initial_delay: Duration,
    /// Backoff ceiling.
    pub max_delay: Duration,
    /// Fraction of the backoff removed at random (0 = none): a delay lies in
    /// `[(1 - jitter)·d, d]`.
    pub jitter: f64,
    /// A server's `retry-after` is obeyed up to this; a longer one falls back to backoff.
    pub max_server_delay: Duration,
}

impl Default for RetryPolicy {
    /// The OpenAI/Anthropic SDKs' schedule (0.5 s·2ⁿ, cap 8 s, 25% jitter) with 5 attempts.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            jitter: 0.25,
            max_server_delay: Duration::from_secs(60),
        }
    }
}

/// Whether an HTTP error status (with the provider's error code) may succeed on a retry.
pub fn is_retryable_status(status: u16, code: Option<&str>) -> bool {
    RETRY_STATUSES.contains(&status) && code != Some("insufficient_quota")
}

/// The server's requested wait: `retry-after-ms` (milliseconds), else `retry-after` (seconds, or
/// an HTTP date compared with `now_ms`, Unix milliseconds).
pub fn server_delay(headers: &[(String, String)], now_ms: u64) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
    };
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64(ms / 1000.0));
        }
    }
    let v = get("retry-after")?;
    if let Ok(s) = v.parse::<f64>() {
        return (s.is_finite() && s >= 0.0).then(|| Duration::from_secs_f64(s));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    let at_ms = at.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis() as u64;
    Some(Duration::from_millis(at_ms.saturating_sub(now_ms)))
}

impl RetryPolicy {
    /// The wait after failed attempt number `attempt` (1-based). `server` is the server's
    /// requested wait; `seed` feeds the jitter (any value: a clock, a hash).
    pub fn delay(&self, attempt: u32, server: Option<Duration>, seed: u64) -> Duration {
        if let Some(d) = server {
            if d <= self.max_server_delay {
                return d;
            }
        }
        let exp = attempt.saturating_sub(1).min(30);
        let base = self
            .initial_delay
            .saturating_mul(1u32 << exp)
            .min(self.max_delay);
        let u = (splitmix64(seed) >> 11) as f64 / (1u64 << 53) as f64;
        base.mul_f64(1.0 - self.jitter.clamp(0.0, 1.0) * u)
    }
}

/// A well-mixed 64-bit hash (Steele et al., SplitMix64): jitter needs spread, not secrecy, and the
/// browser has no thread-local RNG without extra crates.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(k: &str, v: &str) -> Vec<(String, String)> {
        vec![(k.to_string(), v.to_string())]
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(
            server_delay(&h("retry-after-ms", "1500"), 0),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            server_delay(&h("Retry-After", "2"), 0),
            Some(Duration::from_secs(2))
        );
        // Sun, 06 Nov 1994 08:49:37 GMT = 784111777 s (RFC 9110's example date).
        let now = 784_111_777_000 - 3_000;
        assert_eq!(
            server_delay(&h("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT"), now),
            Some(Duration::from_secs(3))
        );
        assert_eq!(server_delay(&h("retry-after", "soon"), 0), None);
    }

    #[test]
    fn statuses() {
        for s in [408, 409, 429, 500, 502, 503, 504, 529] {
            assert!(is_retryable_status(s, None), "{s}");
        }
        for s in [400, 401, 403, 404, 413, 422] {
            assert!(!is_retryable_status(s, None), "{s}");
        }
        assert!(!is_retryable_status(429, Some("insufficient_quota")));
    }

    #[test]
    fn backoff_doubles_caps_and_jitters_down() {
        let p = RetryPolicy::default();
        for seed in 0..50 {
            let d1 = p.delay(1, None, seed);
            assert!(d1 <= Duration::from_millis(500) && d1 >= Duration::from_millis(375));
            let d3 = p.delay(3, None, seed);
            assert!(d3 <= Duration::from_secs(2) && d3 >= Duration::from_millis(1500));
            let d9 = p.delay(9, None, seed);
            assert!(d9 <= Duration::from_secs(8) && d9 >= Duration::from_secs(6));
        }
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(7)), 0),
            Duration::from_secs(7)
        );
        // An absurd retry-after falls back to backoff.
        assert!(p.delay(1, Some(Duration::from_secs(3600)), 0) <= Duration::from_millis(500));
    }
}
