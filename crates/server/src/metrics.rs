//! Prometheus counters, written by hand in the text exposition format (a few lines; no
//! metrics crate needed). Counters are relaxed atomics: exact totals, no ordering promises.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::store::Departures;

const STATUS_SLOTS: usize = 600;

/// Everything `/metrics` reports besides what the store knows.
#[derive(Debug)]
pub struct Metrics {
    /// HTTP responses by status code (index = code; codes ≥ 600 are counted as 599).
    responses: Box<[AtomicU64]>,
    /// Episodes created (REST, MCP sessions, stdio).
    pub episodes_created: AtomicU64,
    /// Transient faults served (429/500 with `retry: true`).
    pub faults_429: AtomicU64,
    /// See `faults_429`.
    pub faults_500: AtomicU64,
    /// fetch_page calls the episode rejected with 422 (page < 1, bad page_size).
    pub rejected_422: AtomicU64,
    /// fetch_page calls refused because the request budget was spent.
    pub budget_exhausted: AtomicU64,
    /// fetch_page calls refused because the episode was already submitted (409).
    pub after_submit: AtomicU64,
    /// fetch_page calls that served a page.
    pub pages_served: AtomicU64,
    /// Accepted submissions.
    pub submissions: AtomicU64,
    /// Submissions refused as a second submit (409).
    pub double_submits: AtomicU64,
    /// Accepted submissions a `--ledger` recorder failed to record (logged).
    pub recording_errors: AtomicU64,
    /// MCP tool calls, any transport.
    pub mcp_tool_calls: AtomicU64,
    /// OpenEnv WebSocket sessions opened on `/ws`.
    pub openenv_sessions: AtomicU64,
    /// Accept errors (e.g. out of file descriptors); the server backs off and keeps going.
    pub accept_errors: AtomicU64,
    /// Connections closed by the server for a timeout (header read or idle).
    pub connection_timeouts: AtomicU64,
    /// Malformed JSON-RPC messages answered with an error (HTTP and stdio).
    pub jsonrpc_rejected: AtomicU64,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            responses: (0..STATUS_SLOTS).map(|_| AtomicU64::new(0)).collect(),
            episodes_created: AtomicU64::new(0),
            faults_429: AtomicU64::new(0),
            faults_500: AtomicU64::new(0),
            rejected_422: AtomicU64::new(0),
            budget_exhausted: AtomicU64::new(0),
            after_submit: AtomicU64::new(0),
            pages_served: AtomicU64::new(0),
            submissions: AtomicU64::new(0),
            double_submits: AtomicU64::new(0),
            recording_errors: AtomicU64::new(0),
            mcp_tool_calls: AtomicU64::new(0),
            openenv_sessions: AtomicU64::new(0),
            accept_errors: AtomicU64::new(0),
            connection_timeouts: AtomicU64::new(0),
            jsonrpc_rejected: AtomicU64::new(0),
        }
    }
}

/// Adds one to a counter.
pub fn inc(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

impl Metrics {
    /// Counts one HTTP response.
    pub fn response(&self, status: u16) {
        let i = usize::from(status).min(STATUS_SLOTS - 1);
        if let Some(c) = self.responses.get(i) {
            inc(c);
        }
    }

    /// The exposition text.
    pub fn render(&self, open: usize, max_open: usize, departures: Departures) -> String {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let mut out = String::with_capacity(2048);
        let mut metric = |name: &str, kind: &str, help: &str, samples: &[(&str, u64)]| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for (labels, value) in samples {
                let _ = writeln!(out, "{name}{labels} {value}");
            }
        };
        metric(
            "benchaudit_episodes_open",
            "gauge",
            "Episodes open in the store.",
            &[("", open as u64)],
        );
        metric(
            "benchaudit_episodes_max",
            "gauge",
            "Cap on open episodes.",
            &[("", max_open as u64)],
        );
        metric(
            "benchaudit_episodes_created_total",
            "counter",
            "Episodes created.",
            &[("", get(&self.episodes_created))],
        );
        metric(
            "benchaudit_episodes_departed_total",
            "counter",
            "Episodes that left the store (they answer 410 afterwards).",
            &[
                (r#"{reason="evicted"}"#, departures.evicted),
                (r#"{reason="expired"}"#, departures.expired),
                (r#"{reason="closed"}"#, departures.closed),
            ],
        );
        metric(
            "benchaudit_faults_served_total",
            "counter",
            "fetch_page calls answered with a fault envelope.",
            &[
                (r#"{status="429",kind="rate_limit"}"#, get(&self.faults_429)),
                (
                    r#"{status="500",kind="server_error"}"#,
                    get(&self.faults_500),
                ),
                (
                    r#"{status="422",kind="invalid_argument"}"#,
                    get(&self.rejected_422),
                ),
                (
                    r#"{status="429",kind="budget_exhausted"}"#,
                    get(&self.budget_exhausted),
                ),
                (
                    r#"{status="409",kind="after_submit"}"#,
                    get(&self.after_submit),
                ),
            ],
        );
        metric(
            "benchaudit_pages_served_total",
            "counter",
            "fetch_page calls that served a page.",
            &[("", get(&self.pages_served))],
        );
        metric(
            "benchaudit_submissions_total",
            "counter",
            "Submissions accepted and scored.",
            &[("", get(&self.submissions))],
        );
        metric(
            "benchaudit_double_submits_total",
            "counter",
            "Second submissions refused (409).",
            &[("", get(&self.double_submits))],
        );
        metric(
            "benchaudit_recording_errors_total",
            "counter",
            "Accepted submissions the --ledger recorder failed to record.",
            &[("", get(&self.recording_errors))],
        );
        metric(
            "benchaudit_mcp_tool_calls_total",
            "counter",
            "MCP tool calls.",
            &[("", get(&self.mcp_tool_calls))],
        );
        metric(
            "benchaudit_openenv_sessions_total",
            "counter",
            "OpenEnv WebSocket sessions opened on /ws.",
            &[("", get(&self.openenv_sessions))],
        );
        metric(
            "benchaudit_accept_errors_total",
            "counter",
            "Connection accept errors.",
            &[("", get(&self.accept_errors))],
        );
        metric(
            "benchaudit_connection_timeouts_total",
            "counter",
            "Connections closed for a header-read or idle timeout.",
            &[("", get(&self.connection_timeouts))],
        );
        metric(
            "benchaudit_jsonrpc_rejected_total",
            "counter",
            "Malformed JSON-RPC messages answered with a JSON-RPC error.",
            &[("", get(&self.jsonrpc_rejected))],
        );
        let codes: Vec<(String, u64)> = self
            .responses
            .iter()
            .enumerate()
            .filter_map(|(code, c)| {
                let n = get(c);
                (n > 0).then(|| (format!(r#"{{code="{code}"}}"#), n))
            })
            .collect();
        let codes: Vec<(&str, u64)> = codes.iter().map(|(l, n)| (l.as_str(), *n)).collect();
        metric(
            "benchaudit_http_requests_total",
            "counter",
            "HTTP requests answered, by status.",
            &codes,
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_status_codes() {
        let m = Metrics::default();
        m.response(200);
        m.response(200);
        m.response(410);
        m.response(u16::MAX);
        inc(&m.faults_429);
        let text = m.render(
            7,
            10,
            Departures {
                evicted: 2,
                expired: 1,
                closed: 0,
            },
        );
        for line in [
            "benchaudit_episodes_open 7",
            r#"benchaudit_http_requests_total{code="200"} 2"#,
            r#"benchaudit_http_requests_total{code="410"} 1"#,
            r#"benchaudit_http_requests_total{code="599"} 1"#,
            r#"benchaudit_episodes_departed_total{reason="evicted"} 2"#,
            r#"benchaudit_faults_served_total{status="429",kind="rate_limit"} 1"#,
            "# TYPE benchaudit_submissions_total counter",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
    }
}
