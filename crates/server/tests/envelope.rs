//! One tool-argument error envelope on every door: the same bad call gets the same
//! `{status, error, retry, retry_after_s?}` — and spends the same budget — from the in-process
//! L2 tools (`benchaudit_agents::tools::execute`), REST and MCP, under either interface
//! profile (docs/servers.md "Tool errors").
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use benchaudit_agents::ToolCall;
use benchaudit_agents::ToolResult;
use benchaudit_agents::tools::execute;
use benchaudit_comtrade::{Episode, EpisodeOptions, InterfaceProfile, SubmissionProtocol, task};
use benchaudit_scoring::RewardScorer;
use benchaudit_server::ServerConfig;
use common::{Fixture, obj};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

const TASK: &str = "T2_multi_page";

/// A bad call as each door spells it: the tool and its JSON arguments, and the REST request
/// (method, path under the episode, body) when REST can express the same call.
struct Bad {
    tool: &'static str,
    args: Value,
    rest: Option<(&'static str, String, Option<Value>)>,
}

fn get(path: &str) -> Option<(&'static str, String, Option<Value>)> {
    Some(("GET", path.to_string(), None))
}

fn post(path: &str, body: Value) -> Option<(&'static str, String, Option<Value>)> {
    Some(("POST", path.to_string(), Some(body)))
}

fn bad_calls() -> Vec<Bad> {
    let long = "x".repeat(500);
    vec![
        // Bad page types.
        Bad {
            tool: "fetch_page",
            args: json!({"page": "abc"}),
            rest: get("pages/abc"),
        },
        Bad {
            tool: "fetch_page",
            args: json!({"page": "1.5"}),
            rest: get("pages/1.5"),
        },
        Bad {
            tool: "fetch_page",
            args: json!({"page": true}),
            rest: None,
        },
        Bad {
            tool: "fetch_page",
            args: json!({"page": 1.5}),
            rest: None,
        },
        // Missing argument.
        Bad {
            tool: "fetch_page",
            args: json!({}),
            rest: None,
        },
        // Unknown argument, and an oversize one (the echo is cut).
        Bad {
            tool: "fetch_page",
            args: json!({"page": "1", "pagesize": "10"}),
            rest: get("pages/1?pagesize=10"),
        },
        Bad {
            tool: "fetch_page",
            args: json!({"page": "1", long.clone(): "1"}),
            rest: get(&format!("pages/1?{long}=1")),
        },
        // Wrong page_size type.
        Bad {
            tool: "fetch_page",
            args: json!({"page": "1", "page_size": "ten"}),
            rest: get("pages/1?page_size=ten"),
        },
        // Out of range (these reach the episode and spend a request).
        Bad {
            tool: "fetch_page",
            args: json!({"page": "0"}),
            rest: get("pages/0"),
        },
        Bad {
            tool: "fetch_page",
            args: json!({"page": "1", "page_size": "0"}),
            rest: get("pages/1?page_size=0"),
        },
        // get_task_info takes no arguments (its schema says additionalProperties false).
        Bad {
            tool: "get_task_info",
            args: json!({"task_id": TASK}),
            rest: None,
        },
        // Wrong types on the other tools.
        Bad {
            tool: "submit_results",
            args: json!({"data_jsonl": 3, "run_log": "x"}),
            rest: post("submit", json!({"data_jsonl": 3, "run_log": "x"})),
        },
        Bad {
            tool: "submit_results",
            args: json!({"record_ids": "r1"}),
            rest: post("submit", json!({"record_ids": "r1"})),
        },
        Bad {
            tool: "submit_results",
            args: json!({"data": "", "extra": 1}),
            rest: post("submit", json!({"data": "", "extra": 1})),
        },
        Bad {
            tool: "append_results",
            args: json!({}),
            rest: post("append", json!({})),
        },
        Bad {
            tool: "append_results",
            args: json!({"data_jsonl": ["a"]}),
            rest: post("append", json!({"data_jsonl": ["a"]})),
        },
    ]
}

fn in_process(episode: &mut Episode, tool: &str, args: &Value) -> Value {
    let (result, malformed) = execute(
        episode,
        &ToolCall::new(tool, args.clone()),
        RewardScorer::F1,
    );
    match result {
        ToolResult::Error(e) => {
            // Unreadable arguments and unknown tools are the model's malformed calls; range
            // errors are well-formed calls the episode rejects.
            assert_eq!(
                malformed,
                e.error.starts_with("invalid arguments") || e.status == 404
            );
            e.to_json()
        }
        other => panic!("{tool} {args}: not an error: {other:?}"),
    }
}

async fn rest(
    fx: &Fixture,
    id: &str,
    (method, path, body): &(&'static str, String, Option<Value>),
) -> Value {
    let url = fx.url(&format!("/v1/episodes/{id}/{path}"));
    let r = match *method {
        "GET" => fx.http.get(url).send().await.unwrap(),
        _ => fx
            .http
            .post(url)
            .json(body.as_ref().unwrap())
            .send()
            .await
            .unwrap(),
    };
    let status = r.status().as_u16();
    let v: Value = r.json().await.unwrap();
    assert_eq!(
        v["status"], status,
        "the HTTP status is the envelope's: {v}"
    );
    v
}

async fn requests_used(fx: &Fixture, id: &str) -> Value {
    fx.get(&format!("/v1/episodes/{id}/task")).await.1["requests_used"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_bad_call_gets_the_same_envelope_and_budget_on_every_door() {
    let fx = Fixture::start(ServerConfig::default()).await;
    for (profile, name) in [
        (InterfaceProfile::Legacy, "legacy"),
        (InterfaceProfile::Strict, "strict"),
    ] {
        let options = EpisodeOptions {
            interface: profile,
            submission: SubmissionProtocol::Chunked,
            max_requests: None,
        };
        let create =
            json!({"task_id": TASK, "seed": 3, "interface": name, "submission": "chunked"});
        for bad in bad_calls() {
            let label = format!("{name} {} {}", bad.tool, bad.args);
            let mut episode = Episode::new(task(TASK).unwrap(), 3, options);
            let local = in_process(&mut episode, bad.tool, &bad.args);
            let local_used = episode.get_task_info().requests_used;

            let (mcp_id, mcp) = fx.mcp(create.clone()).await;
            let remote = mcp
                .call(bad.tool, bad.args.clone())
                .await
                .expect_err(&label);
            assert_eq!(remote, local, "MCP vs in-process: {label}");
            assert_eq!(requests_used(&fx, &mcp_id).await, local_used, "{label}");
            mcp.client.cancel().await.unwrap();

            if let Some(request) = &bad.rest {
                let rest_id = fx.create(create.clone()).await;
                let v = rest(&fx, &rest_id, request).await;
                assert_eq!(v, local, "REST vs in-process: {label}");
                assert_eq!(requests_used(&fx, &rest_id).await, local_used, "{label}");
            }

            // The envelope itself: 422, the profile's retry flag, no retry_after_s, the echo
            // cut.
            assert_eq!(local["status"], 422, "{label}: {local}");
            assert_eq!(
                local["retry"],
                profile == InterfaceProfile::Legacy,
                "{label}"
            );
            assert!(local.get("retry_after_s").is_none(), "{label}");
            assert!(
                local["error"].as_str().unwrap().len() < 200,
                "{label}: {local}"
            );
            // Only range errors reach the episode's counter.
            let range = bad.args.get("page") == Some(&json!("0"))
                || bad.args.get("page_size") == Some(&json!("0"));
            assert_eq!(local_used, u32::from(range), "{label}");
        }
    }
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_tool_is_the_same_404_envelope_in_process_and_in_mcps_error_data() {
    let fx = Fixture::start(ServerConfig::default()).await;
    // A name no episode offers, and append_results outside the chunked protocol: neither is
    // listed, so neither is callable, and the message lists the protocol's own tools.
    for (name, submission) in [
        ("download_all", SubmissionProtocol::Full),
        ("append_results", SubmissionProtocol::Full),
        ("append_results", SubmissionProtocol::Ids),
    ] {
        let options = EpisodeOptions {
            submission,
            ..EpisodeOptions::default()
        };
        let mut episode = Episode::new(task(TASK).unwrap(), 0, options);
        let local = in_process(&mut episode, name, &json!({"data_jsonl": ""}));
        assert_eq!(
            (&local["status"], &local["retry"]),
            (&json!(404), &json!(false))
        );
        assert_eq!(
            local["error"],
            format!("unknown tool `{name}` (tools: get_task_info, fetch_page, submit_results)")
        );

        let (_, mcp) = fx
            .mcp(json!({"task_id": TASK, "seed": 0, "submission": submission}))
            .await;
        let listed = mcp.client.list_all_tools().await.unwrap();
        assert!(listed.iter().all(|t| t.name != name), "{name} is listed");
        let e = mcp
            .client
            .call_tool(
                CallToolRequestParams::new(name).with_arguments(obj(json!({"data_jsonl": ""}))),
            )
            .await
            .expect_err("a protocol error");
        let rmcp::ServiceError::McpError(data) = e else {
            panic!("not an MCP error: {e:?}");
        };
        assert_eq!(
            data.data,
            Some(local.clone()),
            "{name} under {submission:?}"
        );
        assert_eq!(data.message, local["error"].as_str().unwrap());
        mcp.client.cancel().await.unwrap();
    }
    fx.shutdown().await;
}
