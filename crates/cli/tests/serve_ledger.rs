//! `serve --ledger DIR` (issue 13): an episode played over REST by someone else's client is
//! recorded into a run ledger that `report` reads like any run; a key the ledger holds is
//! refused at creation, not lost at submission.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_benchaudit"))
}

/// One HTTP/1.1 request with `Connection: close`: (status, body).
fn http(addr: &str, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let mut stream = TcpStream::connect(addr).unwrap();
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status: u16 = response[9..12].parse().unwrap();
    let (_, body) = response.split_once("\r\n\r\n").unwrap();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

/// `serve --ledger LEDGER` on a free port: the child and the address it said it listens on.
fn serve(ledger: &std::path::Path) -> (std::process::Child, String) {
    let mut server = bin()
        .args(["serve", "--addr", "127.0.0.1:0", "--ledger"])
        .arg(ledger)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("the server said where it listens")
            .unwrap();
        if let Some(rest) = line.split("serving on http://").nth(1) {
            break rest.split_whitespace().next().unwrap().to_string();
        }
    };
    (server, addr)
}

#[test]
fn an_episode_played_over_rest_is_recorded_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("served");
    let (mut server, addr) = serve(&ledger);
    let create = json!({"task_id": "T3_duplicates", "seed": 7, "agent": "my-agent"});
    let (status, created) = http(&addr, "POST", "/v1/episodes", Some(&create));
    assert_eq!(status, 201, "{created}");
    let id = created["episode_id"].as_str().unwrap().to_string();
    let truth = bin()
        .args(["truth", "--task", "T3_duplicates", "--seed", "7"])
        .output()
        .unwrap();
    let submit = json!({
        "data_jsonl": String::from_utf8(truth.stdout).unwrap(),
        "metadata_json": {"task_id": "T3_duplicates", "row_count": 25},
        "run_log": "pages 1-3, duplicates removed",
    });
    let (status, answer) = http(
        &addr,
        "POST",
        &format!("/v1/episodes/{id}/submit"),
        Some(&submit),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["reward"], 1.0);

    // The same agent on the same episode again: refused before it is played.
    let (status, refused) = http(&addr, "POST", "/v1/episodes", Some(&create));
    assert_eq!(status, 409, "{refused}");
    assert!(refused.to_string().contains("already holds"), "{refused}");
    // A bad agent name is a 422.
    let bad = json!({"task_id": "T3_duplicates", "seed": 8, "agent": "a b/../c"});
    assert_eq!(http(&addr, "POST", "/v1/episodes", Some(&bad)).0, 422);
    // Another agent on it is fine (and left unsubmitted: nothing is recorded for it).
    let other = json!({"task_id": "T3_duplicates", "seed": 7});
    assert_eq!(http(&addr, "POST", "/v1/episodes", Some(&other)).0, 201);
    server.kill().unwrap();
    server.wait().unwrap();

    let text = std::fs::read_to_string(ledger.join("episodes.jsonl")).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 1, "{text}");
    let r = &records[0];
    assert_eq!(r["key"]["policy"], "my-agent");
    assert_eq!(r["key"]["level"], "L2");
    assert_eq!(r["key"]["task_id"], "T3_duplicates");
    assert_eq!(r["outcome"], "submitted");
    assert_eq!(r["scores"]["f1"], 1.0);
    assert!(r["payload_sha256"].as_str().is_some_and(|h| h.len() == 64));

    let out = dir.path().join("report");
    let o = bin()
        .arg("report")
        .arg(&ledger)
        .arg("--out")
        .arg(&out)
        .arg("--json")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    let pooled = &summary["summary"]["pooled"][0];
    assert_eq!(pooled["policy"], "my-agent", "{summary}");
    assert_eq!(pooled["summary"]["n"], 1, "{summary}");
    assert_eq!(pooled["summary"]["mean"], 1.0, "{summary}");

    // A second server on the same ledger resumes it (the recorded key is still refused).
    let (mut again, addr) = serve(&ledger);
    assert_eq!(http(&addr, "POST", "/v1/episodes", Some(&create)).0, 409);
    again.kill().unwrap();
    again.wait().unwrap();
}

#[test]
fn a_server_that_cannot_listen_creates_no_ledger() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("served");
    let out = bin()
        .args(["serve", "--addr", &addr, "--ledger"])
        .arg(&ledger)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot listen on"), "{stderr}");
    assert!(
        !ledger.exists(),
        "the ledger was created before the bind failed"
    );
    drop(taken);
}
