//! MCP with the SDK's own client: streamable HTTP (per-episode URL under every lifecycle, and
//! one episode per session on /mcp) and the stdio server on an in-memory pipe.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use benchaudit_comtrade::{EpisodeOptions, SubmissionProtocol, task};
use benchaudit_scoring::RewardScorer;
use benchaudit_server::{ServerConfig, StdioEpisode};
use common::{Fixture, InProcess, Mcp, Policy, connect_legacy, run_policy};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientConfig, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};

async fn call(
    c: &rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>,
    name: &'static str,
    args: Value,
) -> Value {
    c.call_tool(CallToolRequestParams::new(name).with_arguments(common::obj(args)))
        .await
        .unwrap()
        .structured_content
        .unwrap()
}

fn assert_three_tools(tools: &[rmcp::model::Tool]) {
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(names, ["fetch_page", "get_task_info", "submit_results"]);
    let fetch = tools.iter().find(|t| t.name == "fetch_page").unwrap();
    let schema = Value::Object(fetch.input_schema.as_ref().clone());
    // An integer, or its decimal text (the leniency the parser has, stated).
    assert_eq!(
        schema["properties"]["page"]["anyOf"],
        json!([{"type": "integer"}, {"type": "string", "pattern": benchaudit_comtrade::schema::INTEGER_TEXT_PATTERN}]),
        "{schema}"
    );
    assert!(
        schema["properties"]["page"]["description"]
            .as_str()
            .unwrap()
            .contains("1-based")
    );
    assert!(schema["properties"]["page_size"].is_object(), "{schema}");
    assert_eq!(schema["required"], json!(["page"]));
    let submit = tools.iter().find(|t| t.name == "submit_results").unwrap();
    let props = submit.input_schema["properties"].as_object().unwrap();
    for arg in ["data_jsonl", "metadata_json", "run_log", "record_ids"] {
        assert!(
            props[arg]["description"].as_str().is_some(),
            "{arg} undocumented"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oracle_episode_over_streamable_http_scores_f1_one() {
    let fx = Fixture::start(ServerConfig::default()).await;
    for (task_id, seed) in [("T8_mixed_faults", 4), ("T7_totals_trap", 2)] {
        let (id, mut mcp) = fx.mcp(json!({"task_id": task_id, "seed": seed})).await;
        assert_three_tools(&mcp.client.list_all_tools().await.unwrap());
        let answer = run_policy(&mut mcp, Policy::Oracle).await;
        assert_eq!(answer["scores"]["f1"], 1.0, "{answer}");
        assert_eq!(
            answer,
            run_policy(
                &mut InProcess::new(task_id, seed, EpisodeOptions::default()),
                Policy::Oracle
            )
            .await
        );
        // The REST view of the same episode shows the MCP submission.
        let (_, state) = fx.get(&format!("/v1/episodes/{id}")).await;
        assert_eq!(state["result"], answer);
        // One submission per episode, whatever the transport: a tool error, not a protocol error.
        let again = mcp
            .call("submit_results", json!({"data_jsonl": "", "run_log": "x"}))
            .await;
        assert_eq!(again.unwrap_err()["status"], 409);
        mcp.client.cancel().await.unwrap();
    }
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_errors_are_tool_results_not_protocol_failures() {
    let fx = Fixture::start(ServerConfig::default()).await;
    let (_, mcp) = fx
        .mcp(json!({"task_id": "T4_rate_limit_429", "seed": 1, "interface": "strict"}))
        .await;
    // T4 seed 1 faults on its first valid request (see the REST eviction test).
    let fault = mcp
        .call("fetch_page", json!({"page": 1}))
        .await
        .unwrap_err();
    assert_eq!(
        (
            fault["status"].clone(),
            fault["retry"].clone(),
            fault["retry_after_s"].clone()
        ),
        (json!(429), json!(true), json!(1))
    );
    assert_eq!(
        mcp.call("fetch_page", json!({"page": 0}))
            .await
            .unwrap_err(),
        json!({"status": 422, "error": "page must be >= 1, got 0", "retry": false})
    );
    for bad in [
        json!({"page": "abc"}),
        json!({}),
        json!({"page": 1, "pages": 2}),
        json!({"page": [1]}),
    ] {
        let e = mcp.call("fetch_page", bad.clone()).await.unwrap_err();
        assert_eq!(e["status"], 422, "{bad}: {e}");
    }
    // Lenient like the released API: a numeric string is a page number.
    let page = mcp
        .call("fetch_page", json!({"page": "2", "page_size": 10}))
        .await
        .unwrap();
    assert_eq!(
        (page["page"].clone(), page["rows"].as_array().unwrap().len()),
        (json!(2), 10)
    );
    let e = mcp
        .call("submit_results", json!({"run_log": 5}))
        .await
        .unwrap_err();
    assert_eq!(e["status"], 422);
    // An unknown tool cannot be routed: that one is a protocol error.
    let unknown = mcp
        .client
        .call_tool(CallToolRequestParams::new("drop_tables"))
        .await;
    assert!(unknown.is_err(), "{unknown:?}");
    // Three fetches reached the episode; the four unreadable ones never did.
    let info = mcp.call("get_task_info", json!({})).await.unwrap();
    assert_eq!(info["requests_used"], 3, "{info}");
    mcp.client.cancel().await.unwrap();
    let metrics = fx.metrics().await;
    metrics.assert_line(r#"benchaudit_faults_served_total{status="429",kind="rate_limit"} 1"#);
    assert!(metrics.value("benchaudit_mcp_tool_calls_total") > Some(0.0));
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_episode_url_works_under_the_stateless_protocol_and_legacy_sessions() {
    let fx = Fixture::start(ServerConfig::default()).await;
    // Discover lifecycle (protocol 2026-07-28, no sessions): every request stands alone, the
    // URL names the episode.
    let id = fx
        .create(json!({"task_id": "T3_duplicates", "seed": 8}))
        .await;
    let transport =
        StreamableHttpClientTransport::from_uri(fx.url(&format!("/v1/episodes/{id}/mcp")));
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = ().serve_with_lifecycle(transport, lifecycle).await.expect("discover");
    let mut mcp = Mcp { client };
    let answer = run_policy(&mut mcp, Policy::Oracle).await;
    assert_eq!(answer["scores"]["f1"], 1.0, "{answer}");
    assert_eq!(
        mcp.call("submit_results", json!({"data_jsonl": ""}))
            .await
            .unwrap_err()["status"],
        409
    );
    mcp.client.cancel().await.unwrap();
    // Legacy protocol with sessions, same kind of URL.
    let id = fx
        .create(json!({"task_id": "T3_duplicates", "seed": 9}))
        .await;
    let legacy = connect_legacy(fx.url(&format!("/v1/episodes/{id}/mcp"))).await;
    let r = legacy
        .call_tool(CallToolRequestParams::new("get_task_info"))
        .await
        .unwrap();
    assert_eq!(r.structured_content.unwrap()["task_id"], "T3_duplicates");
    legacy.cancel().await.unwrap();
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_endpoint_opens_one_episode_per_session() {
    let fx = Fixture::start(ServerConfig::default()).await;
    let url = fx.url("/mcp?task_id=T3_duplicates&seed=5");
    let a = connect_legacy(url.clone()).await;
    let b = connect_legacy(url.clone()).await;
    call(&a, "fetch_page", json!({"page": 1})).await;
    call(&a, "fetch_page", json!({"page": 2})).await;
    assert_eq!(
        call(&a, "get_task_info", json!({})).await["requests_used"],
        2
    );
    assert_eq!(
        call(&b, "get_task_info", json!({})).await["requests_used"],
        0,
        "sessions share no episode"
    );
    // Session a submits; b's episode is untouched and a second submit in a is refused.
    let answer = call(
        &a,
        "submit_results",
        json!({"data_jsonl": "", "run_log": "x"}),
    )
    .await;
    assert_eq!(answer["done"], true);
    let again = a
        .call_tool(
            CallToolRequestParams::new("submit_results")
                .with_arguments(common::obj(json!({"data_jsonl": ""}))),
        )
        .await
        .unwrap();
    assert_eq!(
        (
            again.is_error,
            again.structured_content.unwrap()["status"].clone()
        ),
        (Some(true), json!(409))
    );
    let b_answer = call(
        &b,
        "submit_results",
        json!({"data_jsonl": "", "run_log": "x"}),
    )
    .await;
    assert_eq!(b_answer["done"], true);
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
    fx.metrics()
        .await
        .assert_line("benchaudit_episodes_created_total 2");

    // An oracle over a session scores 1.
    let client = ()
        .serve(StreamableHttpClientTransport::from_uri(
            fx.url("/mcp?task_id=T10_constrained_budget&seed=3"),
        ))
        .await
        .unwrap();
    let mut mcp = Mcp { client };
    let answer = run_policy(&mut mcp, Policy::Oracle).await;
    assert_eq!(answer["scores"]["f1"], 1.0, "{answer}");
    mcp.client.cancel().await.unwrap();

    // Without task and seed there is nothing to open: an HTTP 422 before any session exists.
    for query in [
        "",
        "?task_id=T3_duplicates",
        "?task_id=T0&seed=1",
        "?task_id=T3_duplicates&seed=1&colour=red",
    ] {
        let r = fx
            .http
            .post(fx.url(&format!("/mcp{query}")))
            .header("accept", "application/json, text/event-stream")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 422, "{query}");
        assert_eq!(r.json::<Value>().await.unwrap()["status"], 422);
    }
    // /mcp offers only the handshake versions: a client that insists on the session-less
    // 2026-07-28 is refused at discovery, naming what is supported.
    let url = fx.url("/mcp?task_id=T3_duplicates&seed=1");
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let refused = ()
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(url.clone()),
            lifecycle,
        )
        .await
        .map(|_| ())
        .expect_err("2026-07-28 is not offered on /mcp");
    assert!(format!("{refused:?}").contains("2025-11-25"), "{refused:?}");
    // (Clients in auto mode take that list as the cue to fall back to `initialize`: the
    // official Python SDK's, fastmcp's and the TypeScript SDK's do, scripts/interop/.)
    // No orphan episodes.
    fx.metrics()
        .await
        .assert_line("benchaudit_episodes_created_total 3");
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunked_episodes_list_append_results() {
    let fx = Fixture::start(ServerConfig::default()).await;
    let (_, mut mcp) = fx
        .mcp(json!({"task_id": "T2_multi_page", "seed": 6, "submission": "chunked"}))
        .await;
    let tools = mcp.client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "append_results"));
    let answer = run_policy(&mut mcp, Policy::Oracle).await;
    assert_eq!(answer["scores"]["f1"], 1.0, "{answer}");
    mcp.client.cancel().await.unwrap();
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_server_runs_an_oracle_episode() {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    let t = task("T6_page_drift").unwrap();
    let options = EpisodeOptions {
        submission: SubmissionProtocol::Full,
        ..EpisodeOptions::default()
    };
    let server = tokio::spawn(benchaudit_server::serve_stdio(
        StdioEpisode {
            task: t,
            seed: 2,
            options,
            reward: RewardScorer::F1,
            max_line_bytes: 1 << 20,
            tool_text: benchaudit_comtrade::ToolText::Clarified,
        },
        server_read,
        server_write,
        std::future::pending(),
    ));
    let client = ().serve(client_io).await.expect("handshake");
    assert_three_tools(&client.list_all_tools().await.unwrap());
    let mut mcp = Mcp { client };
    let answer = run_policy(&mut mcp, Policy::Oracle).await;
    assert_eq!(
        answer,
        run_policy(
            &mut InProcess::new("T6_page_drift", 2, options),
            Policy::Oracle
        )
        .await
    );
    assert_eq!(answer["scores"]["f1"], 1.0, "{answer}");
    mcp.client.cancel().await.unwrap();
    // The client hung up: the server returns.
    tokio::time::timeout(std::time::Duration::from_secs(5), server)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

/// Issue 37: a plain `tools/call fetch_page` on `/v1/episodes/{id}/mcp` is answered from the
/// page's bytes (no value tree); its answer is the SDK's, as JSON, for pages, faults, argument
/// errors and a spent budget. The SDK answers the same call when it carries an
/// `MCP-Protocol-Version` header (2025-03-26: what a call without one is read as).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_path_answers_fetch_page_as_the_sdk_does() {
    let fx = Fixture::start(ServerConfig::default()).await;
    let post = |id: String, body: String, sdk: bool| {
        let mut r = fx
            .http
            .post(fx.url(&format!("/v1/episodes/{id}/mcp")))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        if sdk {
            r = r.header("mcp-protocol-version", "2025-03-26");
        }
        async move {
            let r = r.send().await.unwrap();
            let status = r.status().as_u16();
            let kind = r.headers()["content-type"].to_str().unwrap().to_string();
            (status, kind, r.text().await.unwrap())
        }
    };
    let call = |id: Value, args: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "fetch_page", "arguments": args}})
        .to_string()
    };
    // T1: one large page; T4: 429 faults on its first requests; T10: a small budget.
    for (task_id, max_requests) in [
        ("T1_single_page", None),
        ("T4_rate_limit_429", None),
        ("T7_totals_trap", None),
        ("T10_constrained_budget", Some(3)),
    ] {
        let body = json!({"task_id": task_id, "seed": 5, "max_requests": max_requests});
        let (lane, sdk) = (fx.create(body.clone()).await, fx.create(body).await);
        let calls = [
            call(json!(1), json!({"page": 1})),
            call(json!("two"), json!({"page": 1, "page_size": 50})),
            call(json!(3), json!({"page": 0})),
            call(json!(4), json!({"page": "x"})),
            call(json!(5), json!({"page": 2, "extra": true})),
            call(json!(-6), json!({"page": 1})),
            call(json!(7), json!({"page": 2})),
        ];
        for c in calls {
            let (a, b) = (
                post(lane.clone(), c.clone(), false).await,
                post(sdk.clone(), c.clone(), true).await,
            );
            assert_eq!((a.0, &a.1), (200, &"application/json".to_string()), "{c}");
            assert_eq!((b.0, &b.1), (a.0, &a.1), "{c}");
            // The text content is the structured content printed: compared as JSON (the SDK
            // prints keys sorted, the page path in the page's order).
            let parsed = |body: &str| {
                let mut v: Value = serde_json::from_str(body).unwrap();
                let text = &mut v["result"]["content"][0]["text"];
                *text = serde_json::from_str(text.as_str().unwrap()).unwrap();
                assert_eq!(
                    v["result"]["content"][0]["text"],
                    v["result"]["structuredContent"]
                );
                v
            };
            let (va, vb) = (parsed(&a.2), parsed(&b.2));
            assert_eq!(va, vb, "{task_id} {c}");
            if va["result"]["isError"] == false {
                // The page path wrote REST's bytes; the SDK writes keys in sorted order.
                assert!(
                    a.2.contains(r#""structuredContent":{"rows":"#),
                    "{}",
                    &a.2[..200]
                );
                assert!(!b.2.contains(r#""structuredContent":{"rows":"#));
            }
        }
        // Both episodes spent the same requests.
        let (_, la) = fx.get(&format!("/v1/episodes/{lane}")).await;
        let (_, lb) = fx.get(&format!("/v1/episodes/{sdk}")).await;
        assert_eq!(la["requests_used"], lb["requests_used"], "{la}");
    }
    // Every call above counted as an MCP tool call, by either path.
    let m = fx.metrics().await;
    assert_eq!(m.value("benchaudit_mcp_tool_calls_total"), Some(56.0));
    fx.shutdown().await;
}
