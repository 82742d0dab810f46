//! MCP's `fetch_page` over `/v1/episodes/{id}/mcp`, answered from the page's bytes.
//!
//! Through the SDK a page becomes a JSON value tree (every row an object of a dozen fields),
//! is printed once for the text copy MCP asks for, and the response is serialised again from
//! the tree, beside the per-request machinery of a stateless call (a spawned service, channels,
//! cancellation tokens): about 20× the CPU of the same page over REST. Here the page is written
//! from the rows twice by the REST writer, as the text content ([`PageResponse::write_json_string`]:
//! the same rows written from escaped parts, since escaping a written page, a quote every five
//! or six bytes, cost several times writing it) and as the structured content
//! ([`PageResponse::write_json`]); no value tree stands between the rows and the socket.
//!
//! Only requests whose answer is known to be the SDK's are taken ([`plain_page_call`]): a POST
//! of JSON accepting JSON and event streams, with no `Mcp-*` header (so the protocol version is
//! the SDK's default for a request without one, 2025-03-26, and no standard header must be
//! checked against the body), no `Origin`, and a body that is exactly a `tools/call` of
//! `fetch_page` with an integer or string id and an object of arguments (no `_meta`). Every
//! other request goes to the SDK. A test holds the answers of both paths equal for pages,
//! faults and argument errors.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::app::App;
use crate::store::Slot;

/// A JSON-RPC id as the SDK keeps it (`NumberOrString`: an `i64` or a string).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
enum Id {
    Number(i64),
    String(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Call {
    jsonrpc: String,
    id: Id,
    method: String,
    params: CallParams,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
}

/// Whether every `Accept` value is a plain media type (no parameters) and the types include
/// both `application/json` and `text/event-stream`, as the SDK requires of a POST.
fn accepts_json_and_events(headers: &HeaderMap) -> bool {
    let (mut json, mut events) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        for essence in value.split(',').map(str::trim) {
            if essence.contains([';', '"']) {
                return false;
            }
            json |= essence.eq_ignore_ascii_case("application/json");
            events |= essence.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && events
}

/// The id and arguments of a request this path answers, or `None` for the SDK.
fn plain_page_call(
    method: &Method,
    headers: &HeaderMap,
    body: &[u8],
) -> Option<(Id, Map<String, Value>)> {
    if method != Method::POST
        || !accepts_json_and_events(headers)
        || headers.contains_key(header::ORIGIN)
        || headers.keys().any(|k| k.as_str().starts_with("mcp-"))
    {
        return None;
    }
    let json_body = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json_body {
        return None;
    }
    let call: Call = serde_json::from_slice(body).ok()?;
    (call.jsonrpc == "2.0" && call.method == "tools/call" && call.params.name == "fetch_page")
        .then(|| (call.id, call.params.arguments.unwrap_or_default()))
}

/// `{"jsonrpc":"2.0","id":ID,"result":` — the response's head.
fn head(id: &Id, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    match id {
        Id::Number(n) => out.extend_from_slice(n.to_string().as_bytes()),
        // Writing a string into a Vec cannot fail.
        Id::String(s) => {
            let _ = serde_json::to_writer(&mut *out, s);
        }
    }
    out.extend_from_slice(br#","result":"#);
}

/// The JSON-RPC response to a `fetch_page` call on `slot`, as the SDK would write it for a
/// peer of protocol 2025-03-26: the page as text content and as structured content, or the
/// failure envelope as an error result.
async fn answer(app: &App, slot: &Slot, id: &Id, args: Map<String, Value>) -> Vec<u8> {
    crate::metrics::inc(&app.metrics.mcp_tool_calls);
    let mut out = Vec::new();
    match app.fetch_page_call(slot, args).await {
        Ok((task, page)) => {
            head(id, &mut out);
            out.extend_from_slice(br#"{"content":[{"type":"text","text":"#);
            page.write_json_string(task, &mut out);
            out.extend_from_slice(br#"}],"structuredContent":"#);
            page.write_json(task, &mut out);
            out.extend_from_slice(br#","isError":false}}"#);
        }
        Err(failure) => {
            // Protocols before 2026-07-28 carry no `resultType`.
            let mut result = CallToolResult::structured_error(failure.to_json());
            result.result_type = None;
            head(id, &mut out);
            let _ = serde_json::to_writer(&mut out, &result);
            out.push(b'}');
        }
    }
    out
}

/// Answers a plain `fetch_page` call on `slot` (see the module documentation), or gives the
/// request's body back for the SDK.
pub(crate) async fn try_answer(
    app: &Arc<App>,
    slot: &Slot,
    method: &Method,
    headers: &HeaderMap,
    body: Bytes,
) -> Result<Response, Bytes> {
    let Some((id, args)) = plain_page_call(method, headers, &body) else {
        return Err(body);
    };
    let bytes = answer(app, slot, &id, args).await;
    Ok((
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        Body::from(bytes),
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    const PLAIN: [(&str, &str); 2] = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    const CALL: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fetch_page","arguments":{"page":1}}}"#;

    #[test]
    fn only_plain_fetch_page_calls_are_taken() {
        let (id, args) =
            plain_page_call(&Method::POST, &headers(&PLAIN), CALL.as_bytes()).expect("taken");
        assert_eq!(id, Id::Number(7));
        assert_eq!(args["page"], 1);
        let string_id = CALL.replace("\"id\":7", "\"id\":\"a\\\"b\"");
        assert_eq!(
            plain_page_call(&Method::POST, &headers(&PLAIN), string_id.as_bytes()).map(|c| c.0),
            Some(Id::String("a\"b".into()))
        );
        let refused_bodies = [
            CALL.replace("fetch_page", "submit_results"),
            CALL.replace("tools/call", "tools/list"),
            CALL.replace("\"2.0\"", "\"1.0\""),
            CALL.replace("\"id\":7", "\"id\":7.5"),
            CALL.replace("\"id\":7", "\"id\":null"),
            CALL.replace("\"arguments\"", "\"_meta\":{},\"arguments\""),
            CALL.replace("{\"page\":1}", "[1]"),
            format!("[{CALL}]"),
            "not json".into(),
        ];
        for body in &refused_bodies {
            assert!(
                plain_page_call(&Method::POST, &headers(&PLAIN), body.as_bytes()).is_none(),
                "{body}"
            );
        }
        let refused_headers: [&[(&str, &str)]; 6] = [
            &[
                ("content-type", "application/json"),
                ("accept", "application/json"),
            ],
            &[
                ("content-type", "text/plain"),
                ("accept", "application/json, text/event-stream"),
            ],
            &[
                ("content-type", "application/json"),
                ("accept", "application/json;q=0, text/event-stream"),
            ],
            &[PLAIN[0], PLAIN[1], ("mcp-protocol-version", "2025-06-18")],
            &[PLAIN[0], PLAIN[1], ("mcp-session-id", "x")],
            &[PLAIN[0], PLAIN[1], ("origin", "http://localhost")],
        ];
        for h in refused_headers {
            assert!(
                plain_page_call(&Method::POST, &headers(h), CALL.as_bytes()).is_none(),
                "{h:?}"
            );
        }
        assert!(plain_page_call(&Method::GET, &headers(&PLAIN), CALL.as_bytes()).is_none());
    }
}
