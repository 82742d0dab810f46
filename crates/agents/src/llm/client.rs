//! The HTTP side of the LLM policy: one blocking POST to `{base_url}/chat/completions`, with
//! provider faults (429, 5xx, timeouts, connection resets, garbled bodies) retried under a
//! bounded exponential backoff with jitter that honours `Retry-After`, and a requests-per-minute
//! limiter shared by every episode that talks to the same provider. Provider faults are never
//! shown to the model and never counted as its decisions; when the retries run out the caller
//! gets a [`ClientError`] and the episode becomes `infra_error`. No key ever appears in what
//! this module returns: errors and bodies are scrubbed before they leave it.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::Value;

use crate::llm::secret::ApiKey;

/// How provider faults are retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RetryPolicy {
    /// Attempts per model request, the first included.
    pub max_attempts: u32,
    /// Backoff before the second attempt; doubles per attempt.
    pub base_delay: Duration,
    /// Upper bound of the exponential backoff.
    pub max_delay: Duration,
    /// Upper bound of any single wait, `Retry-After` included (a provider asking for an hour
    /// does not stall the run for an hour; the attempt bound then ends the request).
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    /// 6 attempts, 1 s doubling to 30 s, `Retry-After` honoured up to 120 s.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 6,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// The wait after failed attempt `attempt` (1-based): "equal jitter", half of
    /// `min(max_delay, base·2^(attempt−1))` plus a random share of the other half, raised to
    /// the provider's `Retry-After` if that is longer, and capped by `max_retry_after`.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(
                1u32.checked_shl(attempt.saturating_sub(1))
                    .unwrap_or(u32::MAX),
            )
            .min(self.max_delay);
        let half = exp / 2;
        let jittered = half + half.mul_f64(jitter_fraction(attempt));
        jittered
            .max(retry_after.unwrap_or_default())
            .min(self.max_retry_after)
    }
}

/// A fraction in [0, 1) from a process-randomly keyed hash of (attempt, clock): jitter spreads
/// concurrent episodes' retries apart without pulling in an RNG crate.
fn jitter_fraction(attempt: u32) -> f64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u32(attempt);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(nanos);
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// Parses `Retry-After` (delta-seconds or an HTTP-date) and OpenAI's `retry-after-ms`.
pub fn retry_after(headers: &reqwest::header::HeaderMap, now: SystemTime) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms.min(1e9) / 1000.0));
    }
    let v = text("retry-after")?;
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(1e6)));
    }
    let at = parse_http_date(v)?;
    Some(at.duration_since(now).unwrap_or_default())
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form RFC 9110 requires.
pub fn parse_http_date(s: &str) -> Option<SystemTime> {
    let rest = s.split_once(", ")?.1;
    let parts: Vec<&str> = rest.split_whitespace().collect();
    let [day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let day: u32 = day.parse().ok()?;
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| m == month)? as u32 + 1;
    let year: i64 = year.parse().ok().filter(|y| (1970..=9999).contains(y))?;
    let hms: Vec<u64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, sec] = hms.as_slice() else {
        return None;
    };
    if !(1..=31).contains(&day) || *h > 23 || *m > 59 || *sec > 60 {
        return None;
    }
    // Days from the civil date (H. Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(month) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + (*h as i64) * 3600 + (*m as i64) * 60 + *sec as i64;
    let secs = u64::try_from(secs).ok()?;
    UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

/// Spaces request starts at least `60 / rpm` seconds apart. One limiter is shared (through an
/// `Arc`) by every episode and thread that talks to the same provider.
#[derive(Debug)]
pub struct RateLimiter {
    interval: Duration,
    next: Mutex<Option<Instant>>,
}

impl RateLimiter {
    /// A limiter of `rpm` requests per minute (`rpm` ≥ 1).
    pub fn per_minute(rpm: u32) -> RateLimiter {
        RateLimiter {
            interval: Duration::from_secs(60) / rpm.max(1),
            next: Mutex::new(None),
        }
    }

    /// The spacing between request starts.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Blocks until this caller's slot; slots are handed out in call order.
    pub fn acquire(&self) {
        let slot = {
            // A poisoned lock only means another thread panicked while holding a timestamp:
            // the timestamp is still valid.
            let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            let slot = next.map_or(now, |n| n.max(now));
            *next = Some(slot + self.interval);
            slot
        };
        let now = Instant::now();
        if slot > now {
            std::thread::sleep(slot - now);
        }
    }
}

/// How to reach one OpenAI-compatible server.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Base URL (`…/v1`); `/chat/completions` is appended unless already there.
    pub base_url: String,
    /// Sent as `Authorization: Bearer …` when present.
    pub api_key: Option<ApiKey>,
    /// Whole-request timeout (a timeout is a provider fault and retried).
    pub request_timeout: Duration,
    /// Connection timeout.
    pub connect_timeout: Duration,
    /// Retry schedule.
    pub retry: RetryPolicy,
    /// Shared requests-per-minute limiter, if any.
    pub limiter: Option<Arc<RateLimiter>>,
}

impl ClientConfig {
    /// Defaults for `base_url`: 300 s per request (reasoning models with a 12 000-token budget
    /// are slow), 10 s to connect, [`RetryPolicy::default`], no rate limit.
    pub fn new(base_url: &str, api_key: Option<ApiKey>) -> ClientConfig {
        ClientConfig {
            base_url: base_url.to_string(),
            api_key,
            request_timeout: Duration::from_secs(300),
            connect_timeout: Duration::from_secs(10),
            retry: RetryPolicy::default(),
            limiter: None,
        }
    }
}

/// One provider fault that was retried (or ended the request), for the transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Attempt {
    /// 1-based attempt number.
    pub attempt: u32,
    /// What went wrong (`HTTP 429: …`, `timeout`, …), key scrubbed.
    pub fault: String,
    /// How long the client waited before the next attempt, in milliseconds (0 for the last).
    pub waited_ms: u64,
}

/// A successful completion.
#[derive(Debug, Clone)]
pub struct Completion {
    /// The response body, key scrubbed.
    pub body: Value,
    /// Faults met on the way (empty when the first attempt succeeded).
    pub faults: Vec<Attempt>,
    /// Wall time of the successful attempt.
    pub latency: Duration,
}

/// Why a completion could not be had: the episode is an infrastructure error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    /// Every attempt met a retryable fault.
    #[error("provider kept failing: {attempts} attempts, last: {last}")]
    Exhausted {
        /// Attempts made.
        attempts: u32,
        /// The last fault.
        last: String,
        /// Every fault.
        faults: Vec<Attempt>,
    },
    /// The provider refused the request (4xx other than 408/425/429): retrying cannot help.
    #[error("provider rejected the request: HTTP {status}: {message}")]
    Rejected {
        /// HTTP status.
        status: u16,
        /// The provider's message, truncated, key scrubbed.
        message: String,
    },
    /// The HTTP client could not be built.
    #[error("could not set up the HTTP client: {0}")]
    Setup(String),
}

/// A blocking OpenAI-compatible chat-completions client. Cheap to share: wrap it in an `Arc`.
pub struct ChatClient {
    http: reqwest::blocking::Client,
    endpoint: String,
    key: Option<ApiKey>,
    retry: RetryPolicy,
    limiter: Option<Arc<RateLimiter>>,
}

impl fmt::Debug for ChatClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChatClient")
            .field("endpoint", &self.endpoint)
            .field("key", &self.key)
            .field("retry", &self.retry)
            .field("limiter", &self.limiter)
            .finish()
    }
}

/// Whether a base URL points at this machine (no proxy for those).
fn is_loopback(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let host = rest.split(['/', '?']).next().unwrap_or("");
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Keeps error text short enough for a ledger line.
fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// A provider's error message from an error body (`{"error": {"message"}}`, `{"error": "…"}`,
/// `{"message"}`), or the raw text.
fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let msg = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error").filter(|e| e.is_string()))
            .or_else(|| v.get("message"))
            .or_else(|| v.get("detail"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    truncate(msg.as_deref().unwrap_or(body).trim(), 300)
}

enum Fault {
    Retry {
        what: String,
        after: Option<Duration>,
    },
    Fatal(ClientError),
}

impl ChatClient {
    /// Builds the client (no request is sent).
    pub fn new(config: ClientConfig) -> Result<ChatClient, ClientError> {
        let base = config.base_url.trim().trim_end_matches('/');
        let endpoint = if base.ends_with("/chat/completions") {
            base.to_string()
        } else {
            format!("{base}/chat/completions")
        };
        let mut builder = reqwest::blocking::Client::builder()
            .timeout(config.request_timeout)
            .connect_timeout(config.connect_timeout)
            .user_agent(concat!("benchaudit/", env!("CARGO_PKG_VERSION")));
        if is_loopback(&endpoint) {
            builder = builder.no_proxy();
        }
        let http = builder
            .build()
            .map_err(|e| ClientError::Setup(e.without_url().to_string()))?;
        Ok(ChatClient {
            http,
            endpoint,
            key: config.api_key,
            retry: config.retry,
            limiter: config.limiter,
        })
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The retry schedule.
    pub fn retry_policy(&self) -> RetryPolicy {
        self.retry
    }

    /// The key, for scrubbing only (see [`crate::llm::secret::scrub_json`]).
    pub(crate) fn key(&self) -> Option<&ApiKey> {
        self.key.as_ref()
    }

    fn scrub(&self, s: &str) -> String {
        match &self.key {
            Some(k) => k.scrub(s),
            None => s.to_string(),
        }
    }

    /// POSTs `body` and returns the parsed response, retrying provider faults.
    pub fn complete(&self, body: &Value) -> Result<Completion, ClientError> {
        let mut faults = Vec::new();
        let mut attempt = 0;
        loop {
            attempt += 1;
            if let Some(l) = &self.limiter {
                l.acquire();
            }
            let started = Instant::now();
            let fault = match self.attempt(body) {
                Ok(body) => {
                    return Ok(Completion {
                        body,
                        faults,
                        latency: started.elapsed(),
                    });
                }
                Err(Fault::Fatal(e)) => return Err(e),
                Err(Fault::Retry { what, after }) => (what, after),
            };
            let (what, after) = fault;
            if attempt >= self.retry.max_attempts.max(1) {
                faults.push(Attempt {
                    attempt,
                    fault: what.clone(),
                    waited_ms: 0,
                });
                return Err(ClientError::Exhausted {
                    attempts: attempt,
                    last: what,
                    faults,
                });
            }
            let wait = self.retry.delay(attempt, after);
            faults.push(Attempt {
                attempt,
                fault: what,
                waited_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
            });
            std::thread::sleep(wait);
        }
    }

    fn attempt(&self, body: &Value) -> Result<Value, Fault> {
        let mut req = self.http.post(&self.endpoint).json(body);
        if let Some(k) = &self.key {
            req = req.bearer_auth(k.expose());
        }
        let transport = |e: reqwest::Error| {
            let e = e.without_url();
            let kind = if e.is_timeout() {
                "timeout"
            } else if e.is_connect() {
                "connection failed"
            } else {
                "transport error"
            };
            // The whole cause chain ("… tcp connect error: Connection refused"), URL left out.
            let mut what = format!("{kind}: {e}");
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                what.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            Fault::Retry {
                what: self.scrub(&what),
                after: None,
            }
        };
        let resp = req.send().map_err(transport)?;
        let status = resp.status().as_u16();
        let after = retry_after(resp.headers(), SystemTime::now());
        let text = resp.text().map_err(transport)?;
        let text = self.scrub(&text);
        match status {
            200..=299 => match serde_json::from_str::<Value>(&text) {
                Ok(v)
                    if v.get("choices")
                        .and_then(Value::as_array)
                        .is_some_and(|c| !c.is_empty()) =>
                {
                    Ok(v)
                }
                Ok(v) if v.get("error").is_some_and(|e| !e.is_null()) => Err(Fault::Retry {
                    what: format!("HTTP {status} with an error body: {}", error_message(&text)),
                    after,
                }),
                Ok(_) => Err(Fault::Retry {
                    what: format!("HTTP {status} without choices: {}", truncate(&text, 200)),
                    after,
                }),
                Err(e) => Err(Fault::Retry {
                    what: format!("HTTP {status} with an unreadable body ({e})"),
                    after,
                }),
            },
            408 | 425 | 429 | 500..=599 => Err(Fault::Retry {
                what: format!("HTTP {status}: {}", error_message(&text)),
                after,
            }),
            _ => Err(Fault::Fatal(ClientError::Rejected {
                status,
                message: error_message(&text),
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    #[test]
    fn backoff_doubles_is_jittered_capped_and_honours_retry_after() {
        let p = RetryPolicy {
            max_attempts: 6,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            max_retry_after: Duration::from_secs(5),
        };
        for attempt in 1..=8u32 {
            let full = (100u64 << (attempt - 1).min(20)).min(1000);
            for _ in 0..50 {
                let d = p.delay(attempt, None).as_millis() as u64;
                assert!(
                    d >= full / 2 && d <= full,
                    "attempt {attempt}: {d} not in [{}, {full}]",
                    full / 2
                );
            }
        }
        // Jitter actually varies.
        let samples: std::collections::BTreeSet<u128> =
            (0..50).map(|_| p.delay(3, None).as_micros()).collect();
        assert!(samples.len() > 1);
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(3600))),
            Duration::from_secs(5)
        );
        // A huge attempt number neither overflows nor exceeds the cap.
        assert!(p.delay(u32::MAX, None) <= Duration::from_millis(1000));
    }

    #[test]
    fn retry_after_reads_seconds_dates_and_milliseconds() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_770); // Sun, 06 Nov 1994 08:49:30 GMT
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h, now), None);
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(2)));
        h.insert(
            "retry-after",
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"),
        );
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(7)));
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h, now), None);
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_millis(250)));
        // Absurd values neither panic nor overflow (the policy's cap bounds the wait).
        h.insert("retry-after-ms", HeaderValue::from_static("1e300"));
        assert!(retry_after(&h, now).is_some());
        h.remove("retry-after-ms");
        h.insert("retry-after", HeaderValue::from_static("1e300"));
        assert!(retry_after(&h, now).is_some());
    }

    #[test]
    fn http_dates_match_the_unix_clock() {
        let t = parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT").expect("epoch");
        assert_eq!(t, UNIX_EPOCH);
        let t = parse_http_date("Tue, 29 Feb 2028 23:59:59 GMT").expect("leap day");
        assert_eq!(
            t.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).ok(),
            Some(1_835_481_599)
        );
        assert!(parse_http_date("Tue, 29 Foo 2028 23:59:59 GMT").is_none());
        assert!(parse_http_date("29 Feb 2028").is_none());
        assert!(parse_http_date("Tue, 29 Feb 9223372036854775807 23:59:59 GMT").is_none());
    }

    #[test]
    fn limiter_spaces_requests_across_threads() {
        let l = Arc::new(RateLimiter::per_minute(1200)); // 50 ms apart
        assert_eq!(l.interval(), Duration::from_millis(50));
        let started = Instant::now();
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let l = Arc::clone(&l);
                std::thread::spawn(move || l.acquire())
            })
            .collect();
        for h in handles {
            h.join().expect("no panic");
        }
        // Four slots: 0, 50, 100, 150 ms.
        assert!(
            started.elapsed() >= Duration::from_millis(150),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn loopback_detection_and_endpoints() {
        assert!(is_loopback("http://127.0.0.1:8081/v1"));
        assert!(is_loopback("http://localhost/v1"));
        assert!(is_loopback("http://[::1]:8000/v1"));
        assert!(!is_loopback("https://api.openai.com/v1"));
        let c = ChatClient::new(ClientConfig::new("http://127.0.0.1:9/v1/", None)).expect("client");
        assert_eq!(c.endpoint(), "http://127.0.0.1:9/v1/chat/completions");
        let c = ChatClient::new(ClientConfig::new("http://h/x/chat/completions", None))
            .expect("client");
        assert_eq!(c.endpoint(), "http://h/x/chat/completions");
    }

    #[test]
    fn a_refused_connection_is_retried_then_reported_with_its_cause() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            l.local_addr().expect("addr").port()
        }; // closed again: connections are refused
        let mut cc = ClientConfig::new(&format!("http://127.0.0.1:{port}/v1"), None);
        cc.retry = RetryPolicy {
            max_attempts: 2,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(2),
            max_retry_after: Duration::from_millis(2),
        };
        let c = ChatClient::new(cc).expect("client");
        match c.complete(&serde_json::json!({"model": "m"})) {
            Err(ClientError::Exhausted {
                attempts,
                last,
                faults,
            }) => {
                assert_eq!((attempts, faults.len()), (2, 2));
                assert!(last.starts_with("connection failed"), "{last}");
                assert!(
                    !last.contains(&port.to_string()),
                    "no URL in the message: {last}"
                );
            }
            other => panic!("expected exhaustion, got {other:?}"),
        }
    }

    #[test]
    fn error_messages_are_extracted_and_debug_hides_the_key() {
        assert_eq!(
            error_message(r#"{"error": {"message": "bad model"}}"#),
            "bad model"
        );
        assert_eq!(error_message(r#"{"error": "nope"}"#), "nope");
        assert_eq!(error_message("plain text"), "plain text");
        let c = ChatClient::new(ClientConfig::new(
            "http://127.0.0.1:9/v1",
            Some(ApiKey::new("sk-xyz")),
        ))
        .expect("client");
        assert!(!format!("{c:?}").contains("sk-xyz"));
        assert_eq!(c.scrub("echo sk-xyz"), "echo <redacted>");
    }
}
