//! One hostile client must not stall, exhaust or fool the server: a long submission hammered
//! by its own client, slow and idle connections, eviction at scale, foreign hosts, bodies that
//! are not declared JSON, huge echoes, abandoned MCP sessions, malformed JSON-RPC over HTTP and
//! stdio, and a session re-initialised with other parameters.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use benchaudit_comtrade::{EpisodeOptions, task};
use benchaudit_scoring::RewardScorer;
use benchaudit_server::{ServerConfig, StdioEpisode, StoreLimits};
use common::Fixture;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// A JSON Lines body of about `bytes` bytes: plausible records, each distinct.
fn big_jsonl(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 200);
    let mut i = 0u64;
    while out.len() < bytes {
        out.push_str(&format!(
            r#"{{"year":2021,"reporter":"USA","partner":"CHN","flow":"M","hs":"8471","cmdCode":"8471","tradeValue":{i}.5,"netWeight":{i},"qty":3,"record_id":"r{i:012}"}}"#
        ));
        out.push('\n');
        i += 1;
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_answers_while_one_episode_is_scored_and_hammered() {
    let fx = Arc::new(Fixture::start(ServerConfig::default()).await);
    let id = fx
        .create(json!({"task_id": "T2_multi_page", "seed": 1}))
        .await;
    let body = json!({"data_jsonl": big_jsonl(12 << 20), "metadata_json": "{}", "run_log": "x"});
    let done = Arc::new(AtomicBool::new(false));
    let submit = {
        let (fx, id, done) = (Arc::clone(&fx), id.clone(), Arc::clone(&done));
        tokio::spawn(async move {
            let started = Instant::now();
            let r = fx
                .http
                .post(fx.url(&format!("/v1/episodes/{id}/submit")))
                .json(&body)
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            done.store(true, Ordering::SeqCst);
            (status, started.elapsed())
        })
    };
    // The same client hammers its episode: every request waits for the episode's lock.
    let hammers: Vec<_> = (0..16)
        .map(|_| {
            let (fx, id, done) = (Arc::clone(&fx), id.clone(), Arc::clone(&done));
            tokio::spawn(async move {
                let mut n = 0;
                while !done.load(Ordering::SeqCst) {
                    let r = fx
                        .http
                        .get(fx.url(&format!("/v1/episodes/{id}")))
                        .send()
                        .await;
                    n += usize::from(r.is_ok_and(|r| r.status() == 200));
                }
                n
            })
        })
        .collect();
    // Meanwhile an unrelated client checks health.
    let mut latencies = Vec::new();
    while !done.load(Ordering::SeqCst) {
        let started = Instant::now();
        let r = fx.http.get(fx.url("/healthz")).send().await.unwrap();
        assert_eq!(r.status(), 200);
        if !done.load(Ordering::SeqCst) {
            latencies.push(started.elapsed());
        }
    }
    let (status, took) = submit.await.unwrap();
    assert_eq!(status, 200);
    for h in hammers {
        assert!(h.await.unwrap() > 0);
    }
    let worst = latencies.iter().max().copied().unwrap_or_default();
    // Blocked workers would hold /healthz for about as long as the scoring: here it answers
    // throughout, every answer far faster than the submission.
    assert!(
        latencies.len() >= 5 && worst < took / 2,
        "{} health checks during a {took:?} submit, worst {worst:?}",
        latencies.len()
    );
    match Arc::try_unwrap(fx) {
        Ok(fx) => fx.shutdown().await,
        Err(_) => panic!("fixture still shared"),
    }
}

/// Opens a raw connection and sends `bytes`.
async fn raw(fx: &Fixture, bytes: &[u8]) -> TcpStream {
    let mut s = TcpStream::connect(fx.server.addr).await.unwrap();
    s.write_all(bytes).await.unwrap();
    s
}

/// Reads until the server closes the connection, or `within` passes (then `None`).
async fn closed_within(s: &mut TcpStream, within: Duration) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    match tokio::time::timeout(within, s.read_to_end(&mut out)).await {
        Ok(_) => Some(out),
        Err(_) => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_and_idle_connections_are_closed_and_never_lock_out_healthy_clients() {
    let fx = Fixture::start(ServerConfig {
        max_connections: 20,
        header_timeout: Duration::from_secs(1),
        body_timeout: Duration::from_secs(1),
        ..ServerConfig::default()
    })
    .await;
    // Twice the connection cap: half send one header line and stall, half send nothing.
    let mut slow = Vec::new();
    for i in 0..40 {
        let bytes: &[u8] = if i % 2 == 0 {
            b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n"
        } else {
            b""
        };
        slow.push(raw(&fx, bytes).await);
    }
    // A healthy client is served once the slow ones time out.
    let healthy = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(15))
        .build()
        .unwrap();
    let r = healthy.get(fx.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    for s in &mut slow {
        assert!(
            closed_within(s, Duration::from_secs(10)).await.is_some(),
            "a slow connection was kept open"
        );
    }
    // An idle keep-alive connection is closed after the header timeout too.
    let mut idle = raw(&fx, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n").await;
    let answer = closed_within(&mut idle, Duration::from_secs(10))
        .await
        .expect("idle keep-alive closed");
    assert!(answer.starts_with(b"HTTP/1.1 200"), "{answer:?}");
    // A body that stalls gets 408 after the body timeout.
    let mut stalled = raw(
        &fx,
        b"POST /v1/episodes HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"task_id\"",
    )
    .await;
    let answer = closed_within(&mut stalled, Duration::from_secs(10))
        .await
        .expect("stalled body answered");
    assert!(
        answer.starts_with(b"HTTP/1.1 408"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    let metrics = fx.metrics().await;
    assert!(metrics.value("benchaudit_connection_timeouts_total") >= Some(40.0));
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_evicted_id_answers_410_far_past_the_tombstone_window() {
    let fx = Arc::new(
        Fixture::start(ServerConfig {
            limits: StoreLimits {
                max_episodes: 100,
                max_tombstones: 100,
                idle_timeout: None,
                ..StoreLimits::default()
            },
            ..ServerConfig::default()
        })
        .await,
    );
    let mut ids = Vec::new();
    for seed in 0..3000 {
        ids.push(
            fx.create(json!({"task_id": "T1_single_page", "seed": seed}))
                .await,
        );
    }
    let checks: Vec<_> = ids
        .chunks(300)
        .map(|chunk| {
            let (fx, chunk) = (Arc::clone(&fx), chunk.to_vec());
            tokio::spawn(async move {
                let mut statuses = Vec::new();
                for id in chunk {
                    let (status, v) = fx.get(&format!("/v1/episodes/{id}")).await;
                    statuses.push((status, v["reason"].as_str().map(str::to_string)));
                }
                statuses
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for c in checks {
        statuses.extend(c.await.unwrap());
    }
    for (i, (status, reason)) in statuses.iter().enumerate() {
        let want = match i {
            0..2800 => (410, Some("departed")),
            2800..2900 => (410, Some("evicted")),
            _ => (200, None),
        };
        assert_eq!((*status, reason.as_deref()), want, "episode {i}");
    }
    // A tampered id was never issued: 404.
    let mut forged = ids[5].clone().into_bytes();
    forged[31] = if forged[31] == b'0' { b'1' } else { b'0' };
    let forged = String::from_utf8(forged).unwrap();
    assert_eq!(fx.get(&format!("/v1/episodes/{forged}")).await.0, 404);
    match Arc::try_unwrap(fx) {
        Ok(fx) => fx.shutdown().await,
        Err(_) => panic!("fixture still shared"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_hosts_and_undeclared_bodies_are_refused() {
    let fx = Fixture::start(ServerConfig {
        allowed_hosts: vec!["bench.test".into()],
        ..ServerConfig::default()
    })
    .await;
    let create = json!({"task_id": "T1_single_page", "seed": 1}).to_string();
    for (host, want) in [
        ("evil.test", 403),
        ("evil.test:80", 403),
        ("bench.test:8080", 200),
    ] {
        let r = fx
            .http
            .get(fx.url("/v1/tasks"))
            .header("host", host)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), want, "{host}");
        let r = fx
            .http
            .post(fx.url("/v1/episodes"))
            .header("host", host)
            .header("content-type", "application/json")
            .body(create.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), if want == 200 { 201 } else { 403 }, "{host}");
        let v: Value = r.json().await.unwrap();
        assert!(v.get("status").is_none() || v["status"] == 403, "{v}");
    }
    // What a browser page can send without a preflight: no content type, a form, plain text.
    for content_type in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let mut r = fx.http.post(fx.url("/v1/episodes")).body(create.clone());
        if let Some(ct) = content_type {
            r = r.header("content-type", ct);
        }
        let r = r.send().await.unwrap();
        assert_eq!(r.status(), 415, "{content_type:?}");
    }
    fx.metrics()
        .await
        .assert_line("benchaudit_episodes_created_total 1");
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn echoed_input_is_bounded() {
    let fx = Fixture::start(ServerConfig::default()).await;
    for body in [
        json!({"task_id": "T".repeat(10_000_000), "seed": 1}),
        json!({"task_id": "T1_single_page", "seed": 1, "interface": "i".repeat(1_000_000)}),
        json!({"task_id": "T1_single_page", "seed": 1, "k".repeat(1_000_000): 1}),
    ] {
        let r = fx
            .http
            .post(fx.url("/v1/episodes"))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422);
        let text = r.text().await.unwrap();
        assert!(text.len() < 2048, "{} bytes echoed", text.len());
    }
    let r = fx
        .http
        .get(fx.url(&format!("/v1/episodes/{}/task", "a".repeat(60_000))))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    assert!(r.text().await.unwrap().len() < 2048);
    fx.shutdown().await;
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// POSTs a JSON-RPC body to an MCP endpoint: (status, session id, body text).
async fn mcp_post(
    fx: &Fixture,
    path: &str,
    session: Option<&str>,
    body: &str,
) -> (u16, Option<String>, String) {
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
    let r = r.send().await.unwrap();
    let status = r.status().as_u16();
    let sid = r
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    (status, sid, r.text().await.unwrap())
}

/// The JSON-RPC message in a JSON or event-stream body.
fn message(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|_| {
        body.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .find_map(|d| serde_json::from_str(d).ok())
            .unwrap_or_else(|| panic!("no message in {body:?}"))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_over_http_answers_malformed_json_rpc_as_json_rpc() {
    let fx = Fixture::start(ServerConfig::default()).await;
    let id = fx
        .create(json!({"task_id": "T1_single_page", "seed": 1}))
        .await;
    for path in [
        format!("/v1/episodes/{id}/mcp"),
        "/mcp?task_id=T1_single_page&seed=1".into(),
    ] {
        for (body, status, code, rpc_id) in [
            ("{bad", 400, -32700, Value::Null),
            ("[1, 2]", 400, -32600, Value::Null),
            (
                r#"{"jsonrpc":"1.0","id":4,"method":"tools/list"}"#,
                400,
                -32600,
                json!(4),
            ),
            (
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{}}"#,
                200,
                -32602,
                json!(5),
            ),
            (
                r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":7}}"#,
                200,
                -32602,
                json!(6),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"fetch_page","arguments":[1]}}"#,
                200,
                -32602,
                json!("a"),
            ),
        ] {
            let (got, _, text) = mcp_post(&fx, &path, None, body).await;
            let v: Value =
                serde_json::from_str(&text).unwrap_or_else(|_| panic!("{path} {body}: {text}"));
            assert_eq!(
                (
                    got,
                    v["jsonrpc"].clone(),
                    v["id"].clone(),
                    v["error"]["code"].clone()
                ),
                (status, json!("2.0"), rpc_id, json!(code)),
                "{path} {body}: {v}"
            );
        }
    }
    assert_eq!(
        fx.metrics()
            .await
            .value("benchaudit_jsonrpc_rejected_total"),
        Some(12.0)
    );
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_keeps_its_episode_and_is_capped_and_closed_when_idle() {
    let fx = Fixture::start(ServerConfig {
        max_mcp_sessions: 2,
        mcp_session_timeout: Duration::from_secs(1),
        ..ServerConfig::default()
    })
    .await;
    let path = "/mcp?task_id=T1_single_page&seed=1";
    let (status, sid, body) = mcp_post(&fx, path, None, INIT).await;
    assert_eq!(status, 200, "{body}");
    let sid = sid.expect("a session");
    // Re-initialising with other parameters is refused; the same ones are accepted.
    let (_, _, body) = mcp_post(&fx, "/mcp?task_id=T1_single_page&seed=2", Some(&sid), INIT).await;
    let v = message(&body);
    assert_eq!(v["error"]["code"], -32602, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("re-initialised"),
        "{v}"
    );
    let (_, _, body) = mcp_post(&fx, "/mcp?task_id=T2_multi_page&seed=1", Some(&sid), INIT).await;
    assert_eq!(message(&body)["error"]["code"], -32602);
    let (_, _, body) = mcp_post(&fx, path, Some(&sid), INIT).await;
    assert!(message(&body)["result"]["serverInfo"].is_object(), "{body}");
    let metrics = fx.metrics().await;
    metrics.assert_line("benchaudit_episodes_created_total 1");
    metrics.assert_line("benchaudit_mcp_sessions_max 2");
    metrics.assert_line("benchaudit_mcp_session_timeout_seconds 1");
    // The cap: two sessions open, the next one is refused.
    assert_eq!(mcp_post(&fx, path, None, INIT).await.0, 200);
    let (status, _, body) = mcp_post(&fx, path, None, INIT).await;
    assert_eq!(status, 503, "{body}");
    // Idle past their lifetime, both sessions close, their episodes with them.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let metrics = fx.metrics().await;
    metrics.assert_line("benchaudit_mcp_sessions_open 0");
    metrics.assert_line("benchaudit_episodes_open 0");
    metrics.assert_line(r#"benchaudit_episodes_departed_total{reason="closed"} 2"#);
    assert_eq!(mcp_post(&fx, path, None, INIT).await.0, 200);
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_answers_every_malformed_line_and_carries_on() {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    let server = tokio::spawn(benchaudit_server::serve_stdio(
        StdioEpisode {
            task: task("T1_single_page").unwrap(),
            seed: 1,
            options: EpisodeOptions::default(),
            reward: RewardScorer::F1,
            max_line_bytes: 4096,
            tool_text: benchaudit_comtrade::ToolText::Clarified,
        },
        server_read,
        server_write,
        std::future::pending(),
    ));
    let (read, mut write) = tokio::io::split(client_io);
    let mut lines = BufReader::new(read).lines();
    let mut send = async |text: &str| {
        write.write_all(text.as_bytes()).await.unwrap();
        write.write_all(b"\n").await.unwrap();
    };
    send(INIT).await;
    let init: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(init["id"], 1);
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    let oversized = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","pad":"{}"}}"#,
        "x".repeat(10_000)
    );
    send(&oversized).await;
    send("{not json").await;
    send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":["fetch_page"]}}"#)
        .await;
    send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"fetch_page","arguments":{"page":1}}}"#).await;
    let mut replies = Vec::new();
    for _ in 0..4 {
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("a reply to every line")
            .unwrap()
            .unwrap();
        replies.push(serde_json::from_str::<Value>(&line).unwrap());
    }
    let codes: Vec<(Value, Value)> = replies
        .iter()
        .map(|r| (r["id"].clone(), r["error"]["code"].clone()))
        .collect();
    assert_eq!(
        codes,
        [
            (Value::Null, json!(-32600)),
            (Value::Null, json!(-32700)),
            (json!(3), json!(-32602)),
            (json!(4), Value::Null),
        ],
        "{replies:?}"
    );
    assert!(
        replies[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("4096")
    );
    assert_eq!(
        replies[3]["result"]["structuredContent"]["page"], 1,
        "{}",
        replies[3]
    );
    drop(write);
    drop(lines);
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}
