//! One rule per input, on every door (issue 41): a request names one host plainly, a message
//! the MCP SDK cannot take is a JSON-RPC error over HTTP as over stdio, a `/mcp` session
//! serves only the episode it opened, a body key given twice is refused, a quota has the range
//! of `--quota` (the u32 range), a seed past 2^64 − 1 is said to be one, and the OpenEnv WebSocket answers a
//! message without a type, and closes an oversize one with 1009.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use benchaudit_server::ServerConfig;
use common::Fixture;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// Sends `head` (a request head, `\r\n`-terminated lines, no body) and returns the status and
/// body of the answer.
async fn raw(fx: &Fixture, head: &str) -> (u16, Value) {
    let mut s = TcpStream::connect(fx.server.addr).await.unwrap();
    s.write_all(format!("{head}Connection: close\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out);
    let status = text[9..12].parse().unwrap();
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_names_one_host_plainly_or_is_refused() {
    let fx = Fixture::start(ServerConfig::default()).await;
    let id = fx
        .create(json!({"task_id": "T1_single_page", "seed": 1}))
        .await;
    // Each is refused by the router and by the page lane alike.
    for path in [
        "/v1/tasks".to_string(),
        format!("/v1/episodes/{id}/pages/1"),
    ] {
        let (status, _) = raw(&fx, &format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n")).await;
        assert_eq!(status, 200, "{path}");
        for (head, why) in [
            (
                format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nHost: evil.test\r\n"),
                "more than one Host",
            ),
            (
                format!("GET {path} HTTP/1.1\r\nHost: evil.test@localhost\r\n"),
                "user information",
            ),
            (
                format!("GET http://localhost{path} HTTP/1.1\r\nHost: localhost\r\n"),
                "must be a path",
            ),
            (
                format!("GET http://evil.test{path} HTTP/1.1\r\nHost: localhost\r\n"),
                "must be a path",
            ),
        ] {
            let (status, body) = raw(&fx, &head).await;
            assert_eq!(status, 400, "{head:?}: {body}");
            assert!(body["error"].as_str().unwrap().contains(why), "{body}");
        }
    }
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_over_http_answers_what_the_sdk_cannot_parse_as_json_rpc() {
    let fx = Fixture::start(ServerConfig::default()).await;
    let id = fx
        .create(json!({"task_id": "T1_single_page", "seed": 1}))
        .await;
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    for path in [
        format!("/v1/episodes/{id}/mcp"),
        "/mcp?task_id=T1_single_page&seed=1".into(),
    ] {
        for body in [
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"fetch_page","arguments":{{"page":{deep}}}}}}}"#
            ),
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}},"x":{deep}}}}}"#
            ),
            r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":5}"#.to_string(),
        ] {
            let r = fx
                .http
                .post(fx.url(&path))
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .header("mcp-protocol-version", "2025-11-25")
                .body(body.clone())
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            let text = r.text().await.unwrap();
            let v: Value = serde_json::from_str(&text)
                .unwrap_or_else(|_| panic!("{path}: not JSON ({status}): {text}"));
            assert_eq!(
                (status, v["id"].clone(), v["error"]["code"].clone()),
                (400, json!(7), json!(-32600)),
                "{path} {}: {v}",
                &body[..60]
            );
        }
    }
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_refuses_requests_naming_another_episode() {
    let fx = Fixture::start(ServerConfig::default()).await;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let post = |path: &str, session: Option<&str>, body: &str| {
        let mut r = fx
            .http
            .post(fx.url(path))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-11-25")
            .body(body.to_string());
        if let Some(s) = session {
            r = r.header("mcp-session-id", s);
        }
        r.send()
    };
    let opened = "/mcp?task_id=T1_single_page&seed=1";
    let r = post(opened, None, init).await.unwrap();
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    let message = |text: &str| -> Value {
        text.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .find_map(|d| serde_json::from_str(d).ok())
            .or_else(|| serde_json::from_str(text).ok())
            .unwrap_or_else(|| panic!("no message in {text:?}"))
    };
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_task_info","arguments":{}}}"#;
    let list = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#;
    for (path, served) in [
        (opened, true),
        ("/mcp", true),
        ("/mcp?task_id=T1_single_page&seed=2", false),
        ("/mcp?task_id=T2_multi_page&seed=1", false),
        ("/mcp?task_id=T1_single_page", false),
    ] {
        for body in [call, list] {
            let text = post(path, Some(&sid), body)
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            let v = message(&text);
            if served {
                assert!(v.get("result").is_some(), "{path}: {v}");
            } else {
                assert_eq!(v["error"]["code"], -32602, "{path}: {v}");
                let why = v["error"]["message"].as_str().unwrap();
                assert!(why.contains("serves only the episode it opened"), "{why}");
            }
        }
    }
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_bodies_have_one_rule_for_keys_quotas_and_seeds() {
    let fx = Fixture::start(ServerConfig::default()).await;
    let post = |body: &'static str| {
        fx.http
            .post(fx.url("/v1/episodes"))
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    for (body, status, says) in [
        (
            r#"{"task_id":"T1_single_page","task_id":"T2_multi_page","seed":1}"#,
            422,
            "duplicate field `task_id`",
        ),
        (
            r#"{"task_id":"T1_single_page","seed":1,"seed":2}"#,
            422,
            "duplicate field `seed`",
        ),
        (
            r#"{"task_id":"T1_single_page","seed":1,"max_requests":4294967296}"#,
            422,
            "max_requests must be between 0 and 4294967295",
        ),
        (
            r#"{"task_id":"T1_single_page","seed":1,"max_requests":-1}"#,
            422,
            "invalid value: integer `-1`",
        ),
        (
            r#"{"task_id":"T1_single_page","seed":18446744073709551616}"#,
            422,
            "seed must be at most 18446744073709551615",
        ),
        (
            r#"{"task_id":"T1_single_page","seed":-1}"#,
            422,
            "seed must be a whole number from 0",
        ),
        (r#"{"task_id":"T1_single_page","seed":1.5}"#, 422, "got 1.5"),
        (
            r#"{"task_id":"T1_single_page","seed":1"#,
            400,
            "malformed JSON",
        ),
        (
            r#"{"task_id":"T1_single_page","seed":18446744073709551615,"max_requests":4294967295}"#,
            201,
            "",
        ),
    ] {
        let r = post(body).await.unwrap();
        assert_eq!(r.status().as_u16(), status, "{body}");
        let v: Value = r.json().await.unwrap();
        if status != 201 {
            let error = v["error"].as_str().unwrap();
            assert!(error.contains(says), "{body}: {error}");
            assert!(!error.contains("floating point"), "{body}: {error}");
        }
    }
    // The same rules on /mcp's query.
    for query in [
        "task_id=T1_single_page&seed=1&max_requests=4294967296",
        "task_id=T1_single_page&seed=18446744073709551616",
    ] {
        let r = fx
            .http
            .post(fx.url(&format!("/mcp?{query}")))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 422, "{query}");
    }
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_websocket_names_a_missing_type_and_closes_an_oversize_message_with_1009() {
    let fx = Fixture::start(ServerConfig {
        max_body_bytes: 4096,
        ..ServerConfig::default()
    })
    .await;
    let url = format!("ws://{}/ws", fx.server.addr);
    let (mut ws, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
    for (sent, says) in [
        (json!({"type": ""}), "needs a `type`"),
        (json!({"data": {}}), "needs a `type`"),
        (json!({"type": 5}), "must be a string"),
        (json!({"type": "jump"}), "Unknown message type: jump"),
    ] {
        ws.send(Message::text(sent.to_string())).await.unwrap();
        let reply: Value = match ws.next().await.unwrap().unwrap() {
            Message::Text(t) => serde_json::from_str(t.as_str()).unwrap(),
            other => panic!("{other:?}"),
        };
        assert_eq!(reply["type"], "error", "{reply}");
        let message = reply["data"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{sent}: {message}");
    }
    // One message past the limit: the session ends with close code 1009, not a reset.
    ws.send(Message::text("x".repeat(10_000))).await.unwrap();
    match ws.next().await {
        Some(Ok(Message::Close(Some(frame)))) => {
            assert_eq!(frame.code, CloseCode::Size);
            assert!(frame.reason.contains("4096"), "{}", frame.reason);
        }
        other => panic!("expected close 1009, got {other:?}"),
    }
    fx.shutdown().await;
}
