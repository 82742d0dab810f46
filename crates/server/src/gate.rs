//! What every HTTP request passes before it reaches a route: the `Host` allow-list (a browser
//! page reaching the server through DNS rebinding names a foreign host) and the body, read
//! whole under a size limit (413) and a deadline (408), so no route ever waits on a slow body
//! or holds more than the limit.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};

use crate::answer::Failure;
use crate::app::truncate;

/// The gate's settings.
#[derive(Debug, Clone)]
pub struct Gate {
    /// Hosts (`name` or `name:port`) a request may name besides loopback.
    allowed: Vec<Authority>,
    /// Largest body.
    max_body_bytes: usize,
    /// Time allowed for a whole body to arrive after its head.
    body_timeout: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Authority {
    host: String,
    port: Option<u16>,
}

impl Authority {
    fn parse(text: &str) -> Option<Authority> {
        let text = text.trim();
        // `user@host` is a URL's authority, never a Host (RFC 9110 §7.2): the parser would
        // read `evil.test@localhost` as localhost.
        if text.is_empty() || text.contains('@') {
            return None;
        }
        let (host, port) = match axum::http::uri::Authority::try_from(text) {
            Ok(a) => (a.host().to_string(), a.port_u16()),
            Err(_) => (text.to_string(), None),
        };
        Some(Authority {
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_ascii_lowercase(),
            port,
        })
    }
}

/// The loopback names always allowed (any port): the same list the MCP transport checks.
pub const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

impl Gate {
    /// A gate allowing loopback and `allowed_hosts`.
    pub fn new(allowed_hosts: &[String], max_body_bytes: usize, body_timeout: Duration) -> Self {
        Gate {
            allowed: LOOPBACK_HOSTS
                .iter()
                .copied()
                .chain(allowed_hosts.iter().map(String::as_str))
                .filter_map(Authority::parse)
                .collect(),
            max_body_bytes,
            body_timeout,
        }
    }

    /// Whether a `Host` header value names this server.
    pub fn host_allowed(&self, host: &str) -> bool {
        let Some(asked) = Authority::parse(host) else {
            return false;
        };
        self.allowed
            .iter()
            .any(|a| a.host == asked.host && a.port.is_none_or(|p| asked.port == Some(p)))
    }

    /// 400 for a request that does not name one host plainly — no `Host` header, two of them,
    /// user information (`user@host`), or an absolute-form target (`GET http://host/path`,
    /// which would make two places name the host) — 403 for a host not allowed; `None` when
    /// the host is allowed.
    pub fn refuse_host(&self, headers: &HeaderMap, uri: &Uri) -> Option<Failure> {
        if uri.scheme().is_some() || uri.authority().is_some() {
            return Some(Failure::new(
                400,
                "the request target must be a path (origin form, `/v1/...`), with the host in Host; \
                 this server is not a proxy",
            ));
        }
        let mut hosts = headers.get_all(header::HOST).iter();
        let host = match (hosts.next(), hosts.next()) {
            (None, _) => return Some(Failure::new(400, "the request has no Host header")),
            (Some(_), Some(_)) => {
                return Some(Failure::new(
                    400,
                    "the request has more than one Host header",
                ));
            }
            (Some(h), None) => h.to_str().unwrap_or("\u{fffd}"),
        };
        if host.contains('@') {
            return Some(Failure::new(
                400,
                format!(
                    "Host `{}` holds user information (`@`): a Host names a host and an optional port",
                    truncate(host)
                ),
            ));
        }
        if self.host_allowed(host) {
            return None;
        }
        Some(Failure::new(
            403,
            format!(
                "Host `{}` is not allowed: this server answers to loopback names and the hosts given with --allow-host",
                truncate(host)
            ),
        ))
    }
}

/// The middleware: 403 for a foreign `Host`, 400 without one; bodies of POST/PUT/PATCH read
/// whole (413 past the limit, 408 past the deadline) before the route runs.
pub async fn check(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    if let Some(refusal) = gate.refuse_host(request.headers(), request.uri()) {
        return refusal.into_response();
    }
    if !matches!(
        *request.method(),
        Method::POST | Method::PUT | Method::PATCH
    ) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let limited = Limited::new(body, gate.max_body_bytes);
    let bytes = match tokio::time::timeout(gate.body_timeout, limited.collect()).await {
        Err(_) => {
            return Failure::new(
                408,
                format!(
                    "the request body did not arrive within {} s",
                    gate.body_timeout.as_secs_f64()
                ),
            )
            .into_response();
        }
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => {
            return Failure::new(
                413,
                format!(
                    "request body is larger than the server's limit of {} bytes",
                    gate.max_body_bytes
                ),
            )
            .into_response();
        }
        Ok(Err(e)) => {
            return Failure::new(400, format!("cannot read the request body: {e}")).into_response();
        }
        Ok(Ok(collected)) => collected.to_bytes(),
    };
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_match_by_name_and_optional_port() {
        let gate = Gate::new(
            &["example.test".into(), "api.test:8080".into()],
            1024,
            Duration::from_secs(1),
        );
        for ok in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:1",
            "[::1]:80",
            "LOCALHOST",
            "example.test:9",
            "api.test:8080",
        ] {
            assert!(gate.host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.test",
            "api.test:8081",
            "api.test",
            "localhost.evil.test",
            "127.0.0.2",
            "",
            "\u{fffd}",
            "evil.test@localhost",
            "user@127.0.0.1:80",
        ] {
            assert!(!gate.host_allowed(bad), "{bad}");
        }
    }
}
