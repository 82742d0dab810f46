//! The HTTP side of the LLM policy: one blocking POST to `{base_url}/chat/completions`, with
//! provider faults (429, 5xx, timeouts, connection resets, garbled bodies) retried under a
//! bounded exponential backoff with jitter that honours `Retry-After`, and a requests-per-minute
//! limiter shared by every episode that talks to the same provider. Provider faults are never
//! shown to the model and never counted as its decisions; when the retries run out the caller
//! gets a [`ClientError`] and the episode becomes `infra_error`. No key ever appears in what
//! this module returns: errors and bodies are scrubbed before they leave it.
//!
//! Why one long file: retries, backoff, `Retry-After`, the rate limiter and key scrubbing act
//! on the same request and response; each is small, and the scrubbing must see every path a
//! body can leave by. A fifth of it is tests.

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

/// The largest response body read (a reply holding a 6 000-token conversation is far smaller):
/// a server that streams without end cannot exhaust memory.
pub const MAX_BODY_BYTES: u64 = 32 << 20;

/// Request timeouts on a loopback server are set for local inference, not for a cloud API: at
/// least this long, plus [`LOCAL_SECONDS_PER_TOKEN`] per requested output token (a non-streamed
/// request waits for the whole generation, and a CPU takes its time over the first token of a
/// long prompt).
pub const LOCAL_TIMEOUT_FLOOR: Duration = Duration::from_secs(300);
/// See [`LOCAL_TIMEOUT_FLOOR`]: half a second per token (2 tokens/s, a slow CPU).
pub const LOCAL_SECONDS_PER_TOKEN: f64 = 0.5;
/// Attempts after a timeout on a loopback server: the same request on the same busy machine
/// would take as long again, so a timeout is retried once, not `max_attempts` times.
pub const LOCAL_TIMEOUT_ATTEMPTS: u32 = 2;

/// Whether a provider's error text says the request outgrew the context window, as OpenAI
/// (`context_length_exceeded`), vLLM ("maximum context length", "maximum model length"),
/// llama.cpp (`exceed_context_size_error`, "exceeds the available context size"), Together
/// and TGI ("`inputs` tokens + `max_new_tokens` must be <="), and Anthropic ("prompt is too
/// long") phrase it.
pub fn is_context_overflow(body: &str) -> bool {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let code = |p: &str| {
        parsed
            .as_ref()
            .and_then(|v| v.pointer(p))
            .and_then(Value::as_str)
            .map(str::to_ascii_lowercase)
    };
    let codes = [
        code("/error/code"),
        code("/error/type"),
        code("/code"),
        code("/type"),
    ];
    if codes.iter().flatten().any(|c| {
        c == "context_length_exceeded"
            || c == "exceed_context_size_error"
            || c == "context_window_exceeded"
    }) {
        return true;
    }
    let text = error_message(body).to_ascii_lowercase();
    const PHRASES: [&str; 8] = [
        "maximum context length",
        "context length exceeded",
        "exceeds the available context size",
        "exceed_context_size",
        "maximum model length",
        "tokens + `max_new_tokens` must be <=",
        "prompt is too long",
        "context window",
    ];
    PHRASES.iter().any(|p| text.contains(p))
}

/// Reads a body up to [`MAX_BODY_BYTES`].
fn read_bounded(resp: reqwest::blocking::Response) -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    resp.take(MAX_BODY_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_BODY_BYTES {
        return Err(std::io::Error::other(format!(
            "response body larger than {MAX_BODY_BYTES} bytes"
        )));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// What a preflight learnt about a server: recorded in the run manifest with the model's
/// configuration, so a run names the exact server build and model file it measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerInfo {
    /// Model ids the server lists (`GET /models`), at most 20.
    pub models: Vec<String>,
    /// llama.cpp's `build_info` from `/props` (its version and commit), when it is llama.cpp.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llama_cpp_build: Option<String>,
    /// The served model file's name (llama.cpp `/props` `model_path`, directory dropped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_file: Option<String>,
    /// SHA-256 of that file, when the server is on this machine and the file readable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_sha256: Option<String>,
    /// Its size in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_bytes: Option<u64>,
    /// Context window per request (llama.cpp `n_ctx`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n_ctx: Option<u64>,
    /// Parallel request slots (llama.cpp `total_slots`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slots: Option<u64>,
}

/// Streams a file through SHA-256 (hex).
fn file_sha256(path: &std::path::Path) -> std::io::Result<(String, u64)> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        total += n as u64;
        h.update(&buf[..n]);
    }
    let hex = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok((hex, total))
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
    /// Timeouts for local inference ([`LOCAL_TIMEOUT_FLOOR`], [`LOCAL_TIMEOUT_ATTEMPTS`]):
    /// on by default for loopback base URLs.
    pub local_inference: bool,
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
            local_inference: is_loopback(base_url),
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
    /// The provider refused the request (4xx other than 408/425/429 and a context overflow):
    /// retrying cannot help, and every later request of the run would be refused the same way.
    #[error("provider rejected the request: HTTP {status}: {message}")]
    Rejected {
        /// HTTP status.
        status: u16,
        /// The provider's message, truncated, key scrubbed.
        message: String,
    },
    /// The conversation does not fit the model's context window (a model outcome).
    #[error("HTTP {status}: {message}")]
    ContextOverflow {
        /// HTTP status.
        status: u16,
        /// The provider's message, truncated.
        message: String,
    },
    /// The server could not be reached at all (preflight): the URL the request went to and
    /// what happened, in words (connection refused, timed out, DNS lookup failed).
    #[error("cannot reach {url}: {cause}")]
    Unreachable {
        /// The URL called (the preflight's `…/models`).
        url: String,
        /// What happened.
        cause: String,
    },
    /// The HTTP client could not be built.
    #[error("could not set up the HTTP client: {0}")]
    Setup(String),
}

/// How long the preflight waits for each of its requests.
const PREFLIGHT_TIMEOUT: Duration = Duration::from_secs(30);

/// What went wrong with a request that got no answer, in the words a user acts on: the
/// connection was refused (nothing listens there), the request timed out, or the host name
/// did not resolve; anything else with its whole cause chain (the URL left out: the caller
/// names it).
fn unreachable_cause(e: &reqwest::Error) -> String {
    let mut chain = Vec::new();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        chain.push(cause.to_string());
        source = cause.source();
    }
    let io_kind = |kind: std::io::ErrorKind| {
        let mut source = std::error::Error::source(e);
        while let Some(cause) = source {
            if cause
                .downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == kind)
            {
                return true;
            }
            source = cause.source();
        }
        false
    };
    let said = |words: &[&str]| {
        chain
            .iter()
            .any(|c| words.iter().any(|w| c.to_lowercase().contains(w)))
    };
    if e.is_timeout() || io_kind(std::io::ErrorKind::TimedOut) {
        format!(
            "timed out after {} s (the server accepted no connection or sent no answer)",
            PREFLIGHT_TIMEOUT.as_secs()
        )
    } else if io_kind(std::io::ErrorKind::ConnectionRefused) || said(&["connection refused"]) {
        "connection refused (nothing is listening at that address and port)".into()
    } else if said(&[
        "dns error",
        "failed to lookup address",
        "name or service not known",
    ]) {
        format!(
            "DNS lookup failed (the host name does not resolve): {}",
            chain.last().map_or("", String::as_str)
        )
    } else if chain.is_empty() {
        "the request failed without a cause".into()
    } else {
        chain.join(": ")
    }
}

/// A blocking OpenAI-compatible chat-completions client. Cheap to share: wrap it in an `Arc`.
pub struct ChatClient {
    http: reqwest::blocking::Client,
    endpoint: String,
    key: Option<ApiKey>,
    retry: RetryPolicy,
    limiter: Option<Arc<RateLimiter>>,
    request_timeout: Duration,
    local: bool,
    local_inference: bool,
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
        let local = is_loopback(&endpoint);
        let http = builder
            .build()
            .map_err(|e| ClientError::Setup(e.without_url().to_string()))?;
        Ok(ChatClient {
            http,
            endpoint,
            key: config.api_key,
            retry: config.retry,
            limiter: config.limiter,
            request_timeout: config.request_timeout,
            local,
            local_inference: config.local_inference,
        })
    }

    /// The timeout of one request asking for up to `max_tokens` output tokens: the configured
    /// one, raised on loopback servers to what local inference needs.
    pub fn timeout_for(&self, max_tokens: Option<u64>) -> Duration {
        if !self.local_inference {
            return self.request_timeout;
        }
        let tokens = max_tokens.unwrap_or(crate::llm::config::DEFAULT_TOKEN_BUDGET) as f64;
        let local = LOCAL_TIMEOUT_FLOOR
            + Duration::from_secs_f64(tokens.min(1e6) * LOCAL_SECONDS_PER_TOKEN);
        self.request_timeout.max(local)
    }

    /// The base URL requests go under (`…/v1`).
    fn base(&self) -> &str {
        self.endpoint
            .strip_suffix("/chat/completions")
            .unwrap_or(&self.endpoint)
    }

    fn get(&self, url: &str) -> Result<(u16, String), ClientError> {
        let mut req = self.http.get(url).timeout(PREFLIGHT_TIMEOUT);
        if let Some(k) = &self.key {
            req = req.bearer_auth(k.expose());
        }
        let unreachable = |cause: String| ClientError::Unreachable {
            url: url.to_string(),
            cause: self.scrub(&cause),
        };
        let resp = req.send().map_err(|e| unreachable(unreachable_cause(&e)))?;
        let status = resp.status().as_u16();
        let text =
            read_bounded(resp).map_err(|e| unreachable(format!("reading the answer: {e}")))?;
        Ok((status, self.scrub(&text)))
    }

    /// One look at the server before a run: `GET /models` (unreachable, refused or
    /// misconfigured endpoints fail here, with the provider's own message), then llama.cpp's
    /// `/props` (build, model file, context size) where the server is llama.cpp, and the model
    /// file's SHA-256 when it is on this machine.
    pub fn preflight(&self) -> Result<ServerInfo, ClientError> {
        let models = format!("{}/models", self.base());
        let (status, text) = self.get(&models)?;
        if !(200..300).contains(&status) {
            return Err(ClientError::Rejected {
                status,
                message: format!("GET {models}: {}", error_message(&text)),
            });
        }
        let listed: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let entries = listed
            .get("data")
            .or_else(|| listed.get("models"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut info = ServerInfo {
            models: entries
                .iter()
                .filter_map(|m| {
                    m.get("id")
                        .or_else(|| m.get("name"))
                        .and_then(Value::as_str)
                })
                .take(20)
                .map(str::to_string)
                .collect(),
            llama_cpp_build: None,
            model_file: None,
            model_sha256: None,
            model_bytes: None,
            n_ctx: None,
            slots: None,
        };
        let llama = entries
            .iter()
            .any(|m| m.get("owned_by").and_then(Value::as_str) == Some("llamacpp"));
        if !llama {
            return Ok(info);
        }
        let root = self.base().strip_suffix("/v1").unwrap_or(self.base());
        let Ok((200, props)) = self.get(&format!("{root}/props")) else {
            return Ok(info);
        };
        let props: Value = serde_json::from_str(&props).unwrap_or(Value::Null);
        info.llama_cpp_build = props
            .get("build_info")
            .and_then(Value::as_str)
            .map(str::to_string);
        info.n_ctx = props
            .pointer("/default_generation_settings/n_ctx")
            .and_then(Value::as_u64);
        info.slots = props.get("total_slots").and_then(Value::as_u64);
        if let Some(path) = props.get("model_path").and_then(Value::as_str) {
            let path = std::path::Path::new(path);
            info.model_file = path.file_name().map(|f| f.to_string_lossy().into_owned());
            if self.local
                && let Ok((sha, bytes)) = file_sha256(path)
            {
                info.model_sha256 = Some(sha);
                info.model_bytes = Some(bytes);
            }
        }
        Ok(info)
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
            let mut max_attempts = self.retry.max_attempts.max(1);
            if self.local_inference && what.starts_with("timeout") {
                max_attempts = max_attempts.min(LOCAL_TIMEOUT_ATTEMPTS);
            }
            if attempt >= max_attempts {
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
        let max_tokens = ["max_tokens", "max_completion_tokens"]
            .iter()
            .find_map(|f| body.get(*f).and_then(Value::as_u64));
        let mut req = self
            .http
            .post(&self.endpoint)
            .timeout(self.timeout_for(max_tokens))
            .json(body);
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
        let text = match read_bounded(resp) {
            Ok(t) => self.scrub(&t),
            Err(e) => {
                return Err(Fault::Retry {
                    what: format!("transport error: reading the body: {e}"),
                    after: None,
                });
            }
        };
        // An overflow is the model's conversation, whatever status it comes with: never retried.
        let overflow = || {
            Fault::Fatal(ClientError::ContextOverflow {
                status,
                message: error_message(&text),
            })
        };
        if !(200..300).contains(&status) && is_context_overflow(&text) {
            return Err(overflow());
        }
        match status {
            200..=299 => match serde_json::from_str::<Value>(&text) {
                Ok(v)
                    if v.get("choices")
                        .and_then(Value::as_array)
                        .is_some_and(|c| !c.is_empty()) =>
                {
                    Ok(v)
                }
                Ok(v)
                    if v.get("error").is_some_and(|e| !e.is_null())
                        && is_context_overflow(&text) =>
                {
                    Err(overflow())
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

    /// The error of one GET with a short timeout and no proxy.
    fn failed_get(url: &str) -> reqwest::Error {
        let client = reqwest::blocking::Client::builder()
            .no_proxy()
            .timeout(Duration::from_millis(300))
            .build()
            .expect("test setup");
        client.get(url).send().expect_err("nothing answers there")
    }

    #[test]
    fn an_unreachable_server_is_named_by_what_happened() {
        // Refused: a port nothing listens on.
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("test setup");
            l.local_addr().expect("test setup").port()
        };
        let refused = unreachable_cause(&failed_get(&format!("http://127.0.0.1:{port}/v1/models")));
        assert!(refused.starts_with("connection refused"), "{refused}");
        // Timed out: a listener that takes the connection (the kernel's backlog) and never
        // answers.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("test setup");
        let url = format!(
            "http://{}/v1/models",
            silent.local_addr().expect("test setup")
        );
        let timed_out = unreachable_cause(&failed_get(&url));
        assert!(timed_out.starts_with("timed out after 30 s"), "{timed_out}");
        // A host name that does not resolve (.invalid never does, RFC 6761).
        let dns = unreachable_cause(&failed_get("http://benchaudit-test.invalid/v1/models"));
        assert!(dns.starts_with("DNS lookup failed"), "{dns}");
        drop(silent);
    }

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
    fn loopback_servers_get_timeouts_for_local_inference() {
        let mut cc = ClientConfig::new("http://127.0.0.1:8081/v1", None);
        assert!(cc.local_inference);
        cc.request_timeout = Duration::from_secs(60);
        let c = ChatClient::new(cc).expect("client");
        // 6 000 tokens at 2 tokens/s after a 300 s floor: a CPU's worst first token and output.
        assert_eq!(c.timeout_for(Some(6_000)), Duration::from_secs(3_300));
        assert_eq!(c.timeout_for(Some(64)), Duration::from_secs(332));
        let mut cc = ClientConfig::new("https://api.openai.com/v1", None);
        assert!(!cc.local_inference);
        cc.request_timeout = Duration::from_secs(60);
        let c = ChatClient::new(cc).expect("client");
        assert_eq!(c.timeout_for(Some(6_000)), Duration::from_secs(60));
    }

    #[test]
    fn context_overflows_are_recognised_as_each_provider_phrases_them() {
        for body in [
            r#"{"error": {"message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.", "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}"#,
            r#"{"object": "error", "message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).", "type": "BadRequestError", "code": 400}"#,
            r#"{"object": "error", "message": "The decoder prompt (length 5000) is longer than the maximum model length of 4096.", "type": "BadRequestError"}"#,
            r#"{"error": {"code": 400, "message": "request (935 tokens) exceeds the available context size (512 tokens), try increasing it", "type": "exceed_context_size_error"}}"#,
            r#"{"error": {"message": "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8193. Given: 9000 `inputs` tokens and 512 `max_new_tokens`", "type": "invalid_request_error"}}"#,
            r#"{"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}}"#,
        ] {
            assert!(is_context_overflow(body), "{body}");
        }
        for body in [
            r#"{"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}"#,
            r#"{"error": {"message": "The model `gpt-9` does not exist", "code": "model_not_found"}}"#,
            r#"{"error": {"message": "Invalid schema for function 'fetch_page'"}}"#,
        ] {
            assert!(!is_context_overflow(body), "{body}");
        }
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
