//! `benchaudit mcp` driven by the official MCP client over stdio: the tool list, an oracle
//! episode scored F1 1, and tool errors as tool results.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value, json};
use tokio::process::Command;

type Client = RunningService<RoleClient, ()>;

async fn spawn(args: &[&str]) -> Client {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_benchaudit"));
    cmd.arg("mcp").args(args);
    let transport = TokioChildProcess::new(cmd).expect("spawn benchaudit mcp");
    ().serve(transport).await.expect("MCP handshake over stdio")
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

/// Ok(structured content) or Err(structured content of an isError result).
async fn call(client: &Client, name: &'static str, arguments: Value) -> Result<Value, Value> {
    let r = client
        .call_tool(CallToolRequestParams::new(name).with_arguments(args(arguments)))
        .await
        .expect("tool call");
    let content = r.structured_content.expect("structured content");
    if r.is_error == Some(true) {
        Err(content)
    } else {
        Ok(content)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oracle_episode_over_stdio_scores_f1_one() {
    let client = spawn(&["--task", "T8_mixed_faults", "--seed", "3"]).await;
    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(names, ["fetch_page", "get_task_info", "submit_results"]);
    for t in &tools {
        let props = t
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for (arg, schema) in &props {
            assert!(
                schema.get("description").and_then(Value::as_str).is_some(),
                "{}.{arg} undocumented",
                t.name
            );
        }
    }
    let info = call(&client, "get_task_info", json!({})).await.unwrap();
    assert_eq!(info["task_id"], "T8_mixed_faults");
    let total_rows = info["constraints"]["total_rows"].as_u64().unwrap() as usize;
    let page_size = info["constraints"]["page_size"].as_u64().unwrap() as usize;
    let mut records: BTreeMap<String, Value> = BTreeMap::new();
    let mut faults = 0;
    let mut log = Vec::new();
    for page in 1..=total_rows.div_ceil(page_size) {
        loop {
            match call(&client, "fetch_page", json!({"page": page})).await {
                Ok(body) => {
                    for row in body["rows"].as_array().unwrap() {
                        if row.get("is_total") != Some(&Value::Bool(true)) {
                            records.insert(
                                row["record_id"].as_str().unwrap().to_string(),
                                row.clone(),
                            );
                        }
                    }
                    log.push(format!("page={page} request={} ok", body["request"]));
                    break;
                }
                Err(e) => {
                    assert_eq!(
                        (e["status"].clone(), e["retry"].clone()),
                        (json!(429), json!(true)),
                        "{e}"
                    );
                    faults += 1;
                    log.push(format!("page={page} 429 retrying with exponential backoff"));
                }
            }
        }
    }
    assert_eq!(faults, 2, "T8 plans two 429s");
    assert_eq!(records.len(), total_rows);
    let data: String = records.values().map(|r| format!("{r}\n")).collect();
    let metadata = json!({"task_id": "T8_mixed_faults", "query": info["query"], "row_count": records.len(),
        "schema": ["year", "reporter", "partner", "flow", "hs", "cmdCode", "tradeValue", "netWeight", "qty", "record_id"],
        "dedup_key": ["year", "reporter", "partner", "flow", "hs", "record_id"]});
    let answer = call(&client, "submit_results", json!({"data_jsonl": data, "metadata_json": metadata.to_string(), "run_log": log.join("\n")}))
        .await
        .unwrap();
    assert_eq!(answer["done"], true);
    assert_eq!(answer["scores"]["f1"], 1.0, "{answer}");
    assert_eq!(answer["reward"], 1.0);
    let again = call(&client, "submit_results", json!({"data_jsonl": ""}))
        .await
        .unwrap_err();
    assert_eq!(again["status"], 409);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_options_reach_the_episode() {
    let client = spawn(&[
        "--task",
        "T2_multi_page",
        "--seed",
        "1",
        "--interface",
        "strict",
        "--submission",
        "chunked",
        "--reward",
        "judge",
    ])
    .await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(
        tools.iter().any(|t| t.name == "append_results"),
        "chunked episodes list append_results"
    );
    let e = call(&client, "fetch_page", json!({"page": 0}))
        .await
        .unwrap_err();
    assert_eq!(
        (e["status"].clone(), e["retry"].clone()),
        (json!(422), json!(false)),
        "strict interface"
    );
    assert_eq!(
        call(&client, "append_results", json!({"data_jsonl": "{}"}))
            .await
            .unwrap()["records_held"],
        1
    );
    let answer = call(
        &client,
        "submit_results",
        json!({"metadata_json": "{}", "run_log": "x"}),
    )
    .await
    .unwrap();
    let judge = answer["scores"]["judge"].as_f64().unwrap();
    assert_eq!(
        answer["reward"].as_f64().unwrap(),
        judge,
        "judge is the primary scorer: {answer}"
    );
    client.cancel().await.unwrap();
}

#[test]
fn malformed_lines_get_error_replies_and_a_log_line_on_stderr() {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::process::Stdio;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_benchaudit"))
        .args([
            "mcp",
            "--task",
            "T1_single_page",
            "--seed",
            "1",
            "--max-line-bytes",
            "2048",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn benchaudit mcp");
    let mut stdin = child.stdin.take().unwrap();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let oversized = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","pad":"{}"}}"#,
        "x".repeat(4000)
    );
    for line in [
        init,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "{\"jsonrpc\": 2.0, oops",
        &oversized,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#,
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut replies: Vec<Value> = Vec::new();
    for _ in 0..5 {
        replies.push(serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap());
    }
    drop(stdin);
    // Replies to different requests may come in any order (JSON-RPC matches them by id).
    let mut got: Vec<String> = replies
        .iter()
        .map(|r| format!("{} {}", r["id"], r["error"]["code"]))
        .collect();
    got.sort();
    assert_eq!(
        got,
        ["1 null", "4 -32602", "5 null", "null -32600", "null -32700"],
        "{replies:?}"
    );
    assert!(child.wait().unwrap().success());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(
        stderr.contains("WARN") && stderr.contains("longer than 2048 bytes"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// `benchaudit mcp` on a T2 episode with a quota no test exhausts, its pipes held by the test.
fn spawn_piped() -> std::process::Child {
    use std::process::Stdio;
    std::process::Command::new(env!("CARGO_BIN_EXE_benchaudit"))
        .args([
            "mcp",
            "--task",
            "T2_multi_page",
            "--seed",
            "1",
            "--quota",
            "1000000",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn benchaudit mcp")
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// A fetch_page request whose id is padded to `PAD` characters, so each line is long and the
/// pipes hold few of them.
fn fetch_line(i: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":"{i:0>PAD$}","method":"tools/call","params":{{"name":"fetch_page","arguments":{{"page":1}}}}}}"#
    )
}

const PAD: usize = 250;

#[test]
fn a_client_that_does_not_read_stops_the_server_reading_and_still_gets_every_answer() {
    use benchaudit_server::stdio::MAX_PENDING_ANSWERS;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Duration;
    const N: usize = 3000;
    let mut child = spawn_piped();
    let mut stdin = child.stdin.take().unwrap();
    let written = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (written, done) = (Arc::clone(&written), Arc::clone(&done));
        std::thread::spawn(move || {
            writeln!(stdin, "{INIT}").unwrap();
            writeln!(
                stdin,
                r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
            )
            .unwrap();
            for i in 0..N {
                writeln!(stdin, "{}", fetch_line(i)).unwrap();
                stdin.flush().unwrap();
                written.fetch_add(1, Ordering::SeqCst);
            }
            done.store(true, Ordering::SeqCst);
            // stdin is closed here: the end of input must not cut the answers short.
        })
    };
    // The client reads nothing until its writes stop making progress (blocked on a full
    // pipe) or are all done.
    let (mut last, mut still) = (usize::MAX, 0);
    while !done.load(Ordering::SeqCst) && still < 20 {
        std::thread::sleep(Duration::from_millis(100));
        let now = written.load(Ordering::SeqCst);
        if now == last {
            still += 1;
        } else {
            (last, still) = (now, 0);
        }
    }
    let before_reading = written.load(Ordering::SeqCst);
    // What the server may have taken while its answers could not be written: the requests it
    // admits (MAX_PENDING_ANSWERS), the lines in its read buffer (64 KiB) and in the stdin pipe
    // (64 KiB), and the answers the stdout pipe holds (64 KiB of answers over 1 KiB each).
    let line = fetch_line(0).len() + 1;
    let bound = MAX_PENDING_ANSWERS + 2 * (64 << 10) / line + 64 + 2;
    assert!(
        before_reading <= bound,
        "the server kept reading while its answers waited: {before_reading} of {N} requests taken (bound {bound})"
    );
    if done.load(Ordering::SeqCst) {
        // Only without backpressure: outlast the SDK's 5 s drain so that dropped answers show.
        std::thread::sleep(Duration::from_secs(6));
    }
    let mut ids = std::collections::BTreeMap::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let answer: Value = serde_json::from_str(&line.unwrap()).unwrap();
        assert!(answer.get("error").is_none(), "{answer}");
        *ids.entry(answer["id"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
    }
    writer.join().unwrap();
    assert_eq!(ids.len(), N + 1, "every request answered");
    assert!(ids.values().all(|&n| n == 1), "each answered once");
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "{status}: {stderr}");
    assert!(!stderr.contains("timed out"), "{stderr}");
}

#[test]
fn a_request_reusing_the_id_of_one_in_flight_is_answered_with_an_error() {
    use std::io::Write;
    let mut child = spawn_piped();
    let mut input = format!("{INIT}\n");
    for _ in 0..20 {
        input.push_str(r#"{"jsonrpc":"2.0","id":"twice","method":"tools/call","params":{"name":"fetch_page","arguments":{"page":1}}}"#);
        input.push('\n');
    }
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let twice: Vec<&Value> = answers.iter().filter(|a| a["id"] == "twice").collect();
    let ids: Vec<&Value> = answers.iter().map(|a| &a["id"]).collect();
    assert_eq!(twice.len(), 20, "every line has its answer: {ids:?}");
    for a in twice {
        assert!(
            a.get("result").is_some() || a["error"]["code"] == -32600,
            "a page, or an invalid request naming the id in use: {a}"
        );
    }
}

#[test]
fn answers_that_cannot_be_written_make_the_exit_non_zero_with_a_count() {
    use std::io::Write;
    let mut child = spawn_piped();
    drop(child.stdout.take()); // the client is gone: every write fails
    let mut stdin = child.stdin.take().unwrap();
    let _ = writeln!(stdin, "{INIT}");
    for i in 0..100 {
        // The server may stop reading once its output has failed.
        if writeln!(stdin, r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#).is_err() {
            break;
        }
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let count: usize = stderr
        .split("MCP over stdio: ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of unanswered lines: {stderr}"));
    assert!(count >= 1, "{stderr}");
    assert!(stderr.contains("were not answered"), "{stderr}");
}
