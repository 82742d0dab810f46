//! REST end to end: episodes, faults as HTTP statuses, bad input, eviction, metrics, shutdown.
//!
//! Why one file over 600 lines: every test drives a fresh server through the same fixture
//! (`common::Fixture`) and the public HTTP surface; one test binary links the server once, and
//! each extra binary costs the suite a link on two cores.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use benchaudit_comtrade::{EpisodeOptions, tasks};
use benchaudit_server::{ServerConfig, StoreLimits};
use common::{Fixture, InProcess, Policy, Rest, TestServer, create, run_policy};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oracle_scores_f1_one_on_every_task_and_faults_arrive_as_http_statuses() {
    let fx = Fixture::start(ServerConfig::default()).await;
    let (server, http) = (&fx.server, &fx.http);
    for t in tasks() {
        let seed = 11;
        let id = create(http, server, json!({"task_id": t.task_id, "seed": seed})).await;
        let mut rest = Rest::new(http.clone(), server, &id);
        let answer = run_policy(&mut rest, Policy::Oracle).await;
        // Same policy on the pure episode: the server adds nothing and loses nothing.
        let reference = run_policy(
            &mut InProcess::new(t.task_id, seed, EpisodeOptions::default()),
            Policy::Oracle,
        )
        .await;
        assert_eq!(answer, reference, "{}", t.task_id);
        assert_eq!(answer["scores"]["f1"], 1.0, "{}: {answer}", t.task_id);
        assert_eq!(answer["done"], true);
        assert_eq!(answer["reward"], answer["scores"]["f1"]);
        match t.fault.mode() {
            "rate_limit" | "mixed" => assert!(
                rest.statuses.contains(&429),
                "{}: {:?}",
                t.task_id,
                rest.statuses
            ),
            "server_error" => assert!(
                rest.statuses.contains(&500),
                "{}: {:?}",
                t.task_id,
                rest.statuses
            ),
            _ => {}
        }
        // The episode now reports its scores.
        let state: Value = http
            .get(server.url(&format!("/v1/episodes/{id}")))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(state["state"], "submitted");
        assert_eq!(state["result"], answer);
        assert_eq!(state["task_id"], t.task_id);
    }
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_pages_are_422_with_the_profile_retry_flag_and_spend_budget() {
    let fx = Fixture::start(ServerConfig::default()).await;
    let (server, http) = (&fx.server, &fx.http);
    for (interface, retry) in [("legacy", true), ("strict", false)] {
        let id = create(
            http,
            server,
            json!({"task_id": "T2_multi_page", "seed": 1, "interface": interface}),
        )
        .await;
        for path in [
            "pages/0",
            "pages/-3",
            "pages/1?page_size=0",
            "pages/1?page_size=5000",
        ] {
            let r = http
                .get(server.url(&format!("/v1/episodes/{id}/{path}")))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 422, "{path}");
            let v: Value = r.json().await.unwrap();
            assert_eq!(
                (v["status"].clone(), v["retry"].clone()),
                (json!(422), json!(retry)),
                "{path}: {v}"
            );
        }
        // Unreadable arguments: same 422 envelope, but they never reach the episode.
        for path in [
            "pages/one",
            "pages/1.5",
            "pages/1?page_size=ten",
            "pages/1?pagesize=10",
        ] {
            let r = http
                .get(server.url(&format!("/v1/episodes/{id}/{path}")))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 422, "{path}");
            let v: Value = r.json().await.unwrap();
            assert_eq!(v["retry"], retry, "{path}: {v}");
        }
        let info: Value = http
            .get(server.url(&format!("/v1/episodes/{id}/task")))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(info["requests_used"], 4, "{info}");
    }
    // Budget: once spent, 429 with retry false and no data.
    let id = create(
        http,
        server,
        json!({"task_id": "T1_single_page", "seed": 1, "max_requests": 2}),
    )
    .await;
    let statuses: Vec<u16> = futures_statuses(http, server, &id, 3).await;
    assert_eq!(statuses, vec![200, 200, 429]);
    let r = http
        .get(server.url(&format!("/v1/episodes/{id}/pages/1")))
        .send()
        .await
        .unwrap();
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        v,
        json!({"status": 429, "error": "request budget exhausted", "retry": false})
    );
    fx.shutdown().await;
}

async fn futures_statuses(
    http: &reqwest::Client,
    server: &TestServer,
    id: &str,
    n: usize,
) -> Vec<u16> {
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(
            http.get(server.url(&format!("/v1/episodes/{id}/pages/1")))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16(),
        );
    }
    out
}

/// Sends a raw body with a content type and returns (status, JSON body).
async fn post_raw(
    http: &reqwest::Client,
    url: String,
    content_type: &str,
    body: impl Into<reqwest::Body>,
) -> (u16, Value) {
    let r = http
        .post(url)
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    let v: Value = serde_json::from_str(&text)
        .unwrap_or_else(|_| panic!("status {status}: body is not JSON: {text:?}"));
    assert_eq!(v["status"], status, "{v}");
    assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()), "{v}");
    (status, v)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_the_right_status_and_never_crashes_the_server() {
    let limit = 64 * 1024;
    let fx = Fixture::start(ServerConfig {
        max_body_bytes: limit,
        ..ServerConfig::default()
    })
    .await;
    let (server, http) = (&fx.server, &fx.http);
    let episodes = server.url("/v1/episodes");
    let json_ct = "application/json";
    // Creating episodes.
    assert_eq!(
        post_raw(http, episodes.clone(), json_ct, "{\"task_id\": ")
            .await
            .0,
        400
    );
    assert_eq!(post_raw(http, episodes.clone(), json_ct, "").await.0, 400);
    assert_eq!(
        post_raw(http, episodes.clone(), json_ct, "[1, 2]").await.0,
        422
    );
    assert_eq!(
        post_raw(
            http,
            episodes.clone(),
            json_ct,
            r#"{"task_id": "T1_single_page", "seed": "7"}"#
        )
        .await
        .0,
        422
    );
    assert_eq!(
        post_raw(
            http,
            episodes.clone(),
            json_ct,
            r#"{"task_id": "T1_single_page", "seed": -7}"#
        )
        .await
        .0,
        422
    );
    assert_eq!(
        post_raw(
            http,
            episodes.clone(),
            json_ct,
            r#"{"task_id": 1, "seed": 7}"#
        )
        .await
        .0,
        422
    );
    assert_eq!(
        post_raw(
            http,
            episodes.clone(),
            json_ct,
            r#"{"task_id": "T1_single_page"}"#
        )
        .await
        .0,
        422
    );
    let (status, v) = post_raw(
        http,
        episodes.clone(),
        json_ct,
        r#"{"task_id": "T1_single_page", "seed": 7, "sede": 1}"#,
    )
    .await;
    assert_eq!(status, 422);
    assert!(
        v["error"].as_str().unwrap().contains("sede"),
        "names the unknown field: {v}"
    );
    let (status, v) = post_raw(
        http,
        episodes.clone(),
        json_ct,
        r#"{"task_id": "T99", "seed": 7}"#,
    )
    .await;
    assert_eq!(status, 422);
    assert!(
        v["error"].as_str().unwrap().contains("T1_single_page"),
        "lists known tasks: {v}"
    );
    assert_eq!(
        post_raw(
            http,
            episodes.clone(),
            json_ct,
            r#"{"task_id": "T1_single_page", "seed": 7, "interface": "loose"}"#
        )
        .await
        .0,
        422
    );
    assert_eq!(
        post_raw(
            http,
            episodes.clone(),
            "text/plain",
            r#"{"task_id": "T1_single_page", "seed": 7}"#
        )
        .await
        .0,
        415
    );
    let huge = format!(
        r#"{{"task_id": "T1_single_page", "seed": 7, "pad": "{}"}}"#,
        "x".repeat(limit + 1)
    );
    assert_eq!(
        post_raw(http, episodes.clone(), json_ct, huge.clone())
            .await
            .0,
        413
    );
    // Bodies without a length (chunked transfer encoding) are capped too.
    let stream = futures_stream(huge.into_bytes());
    assert_eq!(
        post_raw(http, episodes.clone(), json_ct, stream).await.0,
        413
    );

    // Addressing episodes.
    let id = create(http, server, json!({"task_id": "T3_duplicates", "seed": 2})).await;
    for missing in [
        "0123456789abcdef0123456789abcdef",
        "not-an-id",
        "%ff%fe",
        &"a".repeat(10_000),
    ] {
        let r = http
            .get(server.url(&format!("/v1/episodes/{missing}/task")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404, "{missing}");
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["status"], 404);
    }
    let r = http
        .get(server.url("/v1/nothing/here"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(r.json::<Value>().await.unwrap()["status"], 404);
    let r = http
        .delete(server.url(&format!("/v1/episodes/{id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 405);
    assert_eq!(r.json::<Value>().await.unwrap()["status"], 405);
    let r = http
        .get(server.url(&format!("/v1/episodes/{id}/pages/0")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);

    // Submitting.
    let submit = server.url(&format!("/v1/episodes/{id}/submit"));
    assert_eq!(post_raw(http, submit.clone(), json_ct, "{{").await.0, 400);
    assert_eq!(
        post_raw(http, submit.clone(), json_ct, r#"{"data_jsonl": 5}"#)
            .await
            .0,
        422
    );
    assert_eq!(
        post_raw(
            http,
            submit.clone(),
            json_ct,
            r#"{"run_log": "x", "extra": true}"#
        )
        .await
        .0,
        422
    );
    assert_eq!(
        post_raw(http, submit.clone(), json_ct, r#""just a string""#)
            .await
            .0,
        422
    );
    assert_eq!(
        post_raw(
            http,
            submit.clone(),
            json_ct,
            format!(r#"{{"data_jsonl": "{}"}}"#, "y".repeat(limit))
        )
        .await
        .0,
        413
    );
    // None of those was a submission: the real one is accepted, the next is 409.
    let ok =
        r#"{"data_jsonl": "not json\n{}\n", "metadata_json": "{\"task_id\": 1}", "run_log": ""}"#;
    let r = http
        .post(&submit)
        .header("content-type", json_ct)
        .body(ok)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let answer: Value = r.json().await.unwrap();
    assert_eq!(answer["scores"]["f1"], 0.0);
    assert_eq!(post_raw(http, submit.clone(), json_ct, ok).await.0, 409);
    // Appending is for the chunked protocol only.
    assert_eq!(
        post_raw(
            http,
            server.url(&format!("/v1/episodes/{id}/append")),
            json_ct,
            r#"{"data_jsonl": "x"}"#
        )
        .await
        .0,
        409
    );
    let full = create(http, server, json!({"task_id": "T3_duplicates", "seed": 2})).await;
    let append = server.url(&format!("/v1/episodes/{full}/append"));
    assert_eq!(
        post_raw(http, append.clone(), json_ct, r#"{"data_jsonl": "x"}"#)
            .await
            .0,
        400
    );
    assert_eq!(
        post_raw(http, append.clone(), json_ct, r#"{"data": "x"}"#)
            .await
            .0,
        422
    );

    // Not even HTTP: the connection is dropped, the server lives on.
    let mut raw = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    raw.write_all(b"\x00\x01\x02 garbage \r\n\r\n\xff\xfe")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), raw.read_to_end(&mut buf)).await;
    let r = http.get(server.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap(), json!({"status": "ok"}));
    fx.shutdown().await;
}

fn futures_stream(bytes: Vec<u8>) -> reqwest::Body {
    // A body of unknown length: reqwest sends it with chunked transfer encoding.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        bytes.chunks(8192).map(|c| Ok(c.to_vec())).collect();
    reqwest::Body::wrap_stream(futures::stream::iter(chunks))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evicted_and_expired_episodes_answer_410_never_a_fresh_episode() {
    let limits = StoreLimits {
        max_episodes: 2,
        idle_timeout: None,
        ..StoreLimits::default()
    };
    let fx = Fixture::start(ServerConfig {
        limits,
        ..ServerConfig::default()
    })
    .await;
    let (server, http) = (&fx.server, &fx.http);
    let first = create(
        http,
        server,
        json!({"task_id": "T4_rate_limit_429", "seed": 1}),
    )
    .await;
    let second = create(
        http,
        server,
        json!({"task_id": "T4_rate_limit_429", "seed": 2}),
    )
    .await;
    // Touch `first`, so `second` is the least recently used when the cap is hit.
    assert_eq!(
        http.get(server.url(&format!("/v1/episodes/{first}/pages/1")))
            .send()
            .await
            .unwrap()
            .status(),
        429
    );
    let third = create(
        http,
        server,
        json!({"task_id": "T4_rate_limit_429", "seed": 3}),
    )
    .await;
    let gets = ["", "/task", "/pages/1"];
    for path in gets {
        let r = http
            .get(server.url(&format!("/v1/episodes/{second}{path}")))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 410, "{path}");
        let v: Value = r.json().await.unwrap();
        assert_eq!(
            (v["status"].clone(), v["reason"].clone()),
            (json!(410), json!("evicted")),
            "{v}"
        );
    }
    let r = http
        .post(server.url(&format!("/v1/episodes/{second}/submit")))
        .json(&json!({"data_jsonl": ""}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 410);
    let r = http
        .post(server.url(&format!("/v1/episodes/{second}/mcp")))
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.status(),
        410,
        "the MCP endpoint of an evicted episode is gone too"
    );
    for alive in [&first, &third] {
        assert_eq!(
            http.get(server.url(&format!("/v1/episodes/{alive}")))
                .send()
                .await
                .unwrap()
                .status(),
            200
        );
    }
    let metrics = fx.metrics().await;
    metrics.assert_line(r#"benchaudit_episodes_departed_total{reason="evicted"} 1"#);
    metrics.assert_line("benchaudit_episodes_open 2");
    fx.shutdown().await;

    let limits = StoreLimits {
        idle_timeout: Some(Duration::from_millis(1000)),
        ..StoreLimits::default()
    };
    let fx = Fixture::start(ServerConfig {
        limits,
        ..ServerConfig::default()
    })
    .await;
    let (server, http) = (&fx.server, &fx.http);
    let idle = create(
        http,
        server,
        json!({"task_id": "T1_single_page", "seed": 1}),
    )
    .await;
    let busy = create(
        http,
        server,
        json!({"task_id": "T1_single_page", "seed": 2}),
    )
    .await;
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert_eq!(
            http.get(server.url(&format!("/v1/episodes/{busy}")))
                .send()
                .await
                .unwrap()
                .status(),
            200
        );
    }
    let r = http
        .get(server.url(&format!("/v1/episodes/{idle}/task")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 410);
    assert_eq!(r.json::<Value>().await.unwrap()["reason"], "expired");
    let metrics = fx.metrics().await;
    metrics.assert_line(r#"benchaudit_episodes_departed_total{reason="expired"} 1"#);
    // The sweep removed it.
    metrics.assert_line("benchaudit_episodes_open 1");
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunked_ids_and_judge_reward_protocols_work_over_rest() {
    let fx = Fixture::start(ServerConfig::default()).await;
    let (server, http) = (&fx.server, &fx.http);
    // chunked: the policy appends two chunks, then submits.
    let options = EpisodeOptions {
        submission: benchaudit_comtrade::SubmissionProtocol::Chunked,
        ..EpisodeOptions::default()
    };
    let id = create(
        http,
        server,
        json!({"task_id": "T7_totals_trap", "seed": 5, "submission": "chunked"}),
    )
    .await;
    let answer = run_policy(&mut Rest::new(http.clone(), server, &id), Policy::Oracle).await;
    assert_eq!(answer["scores"]["f1"], 1.0, "{answer}");
    assert_eq!(
        answer,
        run_policy(
            &mut InProcess::new("T7_totals_trap", 5, options),
            Policy::Oracle
        )
        .await
    );
    // ids: record ids resolve against rows served to this episode only.
    let id = create(
        http,
        server,
        json!({"task_id": "T3_duplicates", "seed": 5, "submission": "ids"}),
    )
    .await;
    let mut ids = Vec::new();
    for page in 1..=3 {
        let v: Value = http
            .get(server.url(&format!("/v1/episodes/{id}/pages/{page}")))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        ids.extend(
            v["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["record_id"].as_str().unwrap().to_string()),
        );
    }
    ids.sort();
    ids.dedup();
    let r = http
        .post(server.url(&format!("/v1/episodes/{id}/submit")))
        .json(&json!({"record_ids": ids, "run_log": "done"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["scores"]["f1"], 1.0);
    // judge as the primary scorer.
    let id = create(
        http,
        server,
        json!({"task_id": "T2_multi_page", "seed": 5, "reward": "judge"}),
    )
    .await;
    let answer = run_policy(&mut Rest::new(http.clone(), server, &id), Policy::Oracle).await;
    // The judge on the 0–1 scale of every benchaudit output; its parts sum to it up to the
    // released judge's rounding of its total to 0.1 points.
    let judge = answer["scores"]["judge"].as_f64().unwrap();
    assert!(judge > 0.5 && judge <= 1.0, "{answer}");
    assert_eq!(answer["reward"].as_f64().unwrap(), judge);
    let parts: f64 = answer["scores"]["judge_breakdown"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!((parts - judge).abs() <= 0.0005 + 1e-12, "{answer}");
    assert_eq!(answer["scores"]["f1"], 1.0);
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_health_and_metrics_describe_the_server() {
    let fx = Fixture::start(ServerConfig::default()).await;
    let (server, http) = (&fx.server, &fx.http);
    let v: Value = http
        .get(server.url("/v1/tasks"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let listed = v["tasks"].as_array().unwrap();
    assert_eq!(listed.len(), tasks().len());
    assert_eq!(listed[1]["task_id"], "T2_multi_page");
    assert_eq!(listed[1]["total_pages"], 5);
    // T5: one planned 500, then a submission.
    let id = create(
        http,
        server,
        json!({"task_id": "T5_server_error_500", "seed": 3}),
    )
    .await;
    let _ = http
        .get(server.url(&format!("/v1/episodes/{id}/pages/0")))
        .send()
        .await
        .unwrap();
    let mut rest = Rest::new(http.clone(), server, &id);
    run_policy(&mut rest, Policy::Oracle).await;
    // The episode is over: a page asked for now is refused and spends nothing.
    let used = fx.get(&format!("/v1/episodes/{id}")).await.1["requests_used"].clone();
    let (status, v) = fx.get(&format!("/v1/episodes/{id}/pages/1")).await;
    assert_eq!((status, v["status"].clone()), (409, json!(409)), "{v}");
    assert_eq!(
        fx.get(&format!("/v1/episodes/{id}")).await.1["requests_used"],
        used
    );
    let r = http.get(server.url("/metrics")).send().await.unwrap();
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let text = r.text().await.unwrap();
    for line in [
        "benchaudit_episodes_open 1",
        "benchaudit_episodes_created_total 1",
        "benchaudit_submissions_total 1",
        r#"benchaudit_faults_served_total{status="500",kind="server_error"} 1"#,
        r#"benchaudit_faults_served_total{status="422",kind="invalid_argument"} 1"#,
        r#"benchaudit_faults_served_total{status="409",kind="after_submit"} 1"#,
        r#"benchaudit_http_requests_total{code="201"} 1"#,
        r#"benchaudit_http_requests_total{code="500"} 1"#,
        r#"benchaudit_http_requests_total{code="422"} 1"#,
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line:?}:\n{text}");
    }
    let pages: u64 = rest.statuses.iter().filter(|s| **s == 200).count() as u64;
    assert!(
        text.lines()
            .any(|l| l == format!("benchaudit_pages_served_total {pages}")),
        "{text}"
    );
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_stops_accepting_and_returns() {
    let server = TestServer::start(ServerConfig::default()).await;
    let addr = server.addr;
    let http = common::client();
    create(
        &http,
        &server,
        json!({"task_id": "T1_single_page", "seed": 1}),
    )
    .await;
    let started = std::time::Instant::now();
    server.shutdown().await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "graceful shutdown took {:?}",
        started.elapsed()
    );
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "still accepting after shutdown"
    );
}

/// Every `benchaudit_http_requests_total{code=…}` sample: status → count.
fn response_counts(metrics: &common::Metrics) -> std::collections::BTreeMap<String, f64> {
    metrics
        .0
        .lines()
        .filter_map(|l| l.strip_prefix("benchaudit_http_requests_total{code=\""))
        .filter_map(|l| {
            let (code, n) = l.split_once("\"} ")?;
            Some((code.to_owned(), n.parse().ok()?))
        })
        .collect()
}

/// A response as compared: status, headers but `date`, body.
type Answer = (u16, Vec<(String, String)>, String);

/// `s` with its first byte percent-encoded: the same segment to the router, not to the lane.
fn encode_first(s: &str) -> String {
    let mut bytes = s.bytes();
    let first = bytes
        .next()
        .map(|b| format!("%{b:02X}"))
        .unwrap_or_default();
    first + &String::from_utf8(bytes.collect()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_lane_answers_exactly_as_the_router_does() {
    // Plain page GETs take the lane (crates/server/src/lane.rs); the same requests with one
    // byte of a segment percent-encoded take the router. Two episodes opened alike, sent the
    // same sequence one way each, must get the same statuses, headers and bodies, and the
    // responses must be counted alike: faults (429, 500, drift, budgets), bad pages, bad
    // queries and an unknown episode included.
    let fx = Fixture::start(ServerConfig::default()).await;
    let pages = [
        "1", "2", "0", "-1", "abc", "1.5", "99999", "3", "1", "2", "4", "5", "6", "1", "2",
    ];
    let queries = [
        "",
        "?page_size=5",
        "?page_size=",
        "?page_size=0",
        "?page_size=abc",
        "?pge=1",
        "?page_size=5&page_size=6",
        "?page=2",
        "?page_size=%zz",
    ];
    for task in [
        "T1_single_page",
        "T3_duplicates",
        "T4_rate_limit_429",
        "T5_server_error_500",
        "T6_page_drift",
        "T8_mixed_faults",
        "T9_adaptive_adversary",
        "T10_constrained_budget",
    ] {
        let body = json!({"task_id": task, "seed": 5});
        let ids = [fx.create(body.clone()).await, fx.create(body).await];
        let mut answers: [Vec<Answer>; 2] = [vec![], vec![]];
        // Each `/metrics` read is counted once its text is out, so the next read counts it.
        let mut counts = vec![response_counts(&fx.metrics().await)];
        for (way, id) in ids.iter().enumerate() {
            let mut requests: Vec<(String, String)> = vec![];
            for (i, page) in pages.iter().enumerate() {
                requests.push((id.clone(), format!("{page}{}", queries[i % queries.len()])));
            }
            requests.push(("not-an-episode".into(), "1".into()));
            for (id, target) in requests {
                let (id, target) = if way == 0 {
                    (id, target)
                } else {
                    (encode_first(&id), encode_first(&target))
                };
                let r = fx
                    .http
                    .get(fx.url(&format!("/v1/episodes/{id}/pages/{target}")))
                    .send()
                    .await
                    .unwrap();
                let status = r.status().as_u16();
                let headers = r
                    .headers()
                    .iter()
                    .filter(|(k, _)| k.as_str() != "date")
                    .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_owned()))
                    .collect();
                // Error messages may name the episode; the two episodes' ids differ.
                let text = r.text().await.unwrap().replace(&ids[way], "<id>");
                answers[way].push((status, headers, text));
            }
            counts.push(response_counts(&fx.metrics().await));
        }
        assert_eq!(answers[0], answers[1], "{task}");
        assert!(answers[0].iter().any(|(s, _, _)| *s == 200), "{task}");
        assert!(answers[0].iter().any(|(s, _, _)| *s == 422), "{task}");
        // Each way's requests were counted once each, by the same statuses (plus the
        // `/metrics` read before them, a 200).
        let delta = |w: usize| {
            counts[w + 1]
                .iter()
                .map(|(k, n)| (k.clone(), n - counts[w].get(k).copied().unwrap_or(0.0)))
                .filter(|(_, n)| *n != 0.0)
                .collect::<std::collections::BTreeMap<_, _>>()
        };
        assert_eq!(delta(0), delta(1), "{task}");
        assert_eq!(
            delta(0).values().sum::<f64>() as usize,
            pages.len() + 2,
            "{task}"
        );
    }
    fx.shutdown().await;
}
