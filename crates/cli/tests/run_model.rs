//! `benchaudit run --model` end to end: the real binary against a scripted OpenAI-compatible
//! server on 127.0.0.1. Scripted models play at every level, a refusing provider stops the
//! run (exit 2) and the resume runs what it did not record, and the API key appears nowhere
//! under the run directory nor in the binary's output — it only ever reaches the Authorization
//! header.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../agents/tests/llm_support/mod.rs"]
mod llm_support;

use std::path::Path;
use std::process::{Command, Output};

use benchaudit_testkit::files_under;
use llm_support::{Reply, Server, solver};
use serde_json::{Value, json};

const VAR: &str = "BENCHAUDIT_RUN_MODEL_TEST_KEY";
const KEY: &str = "sk-runmodel-7a1f93c2e8b4-SECRET-VALUE";

fn benchaudit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_benchaudit"))
        .args(args)
        .env(VAR, KEY)
        .output()
        .expect("run benchaudit")
}

#[test]
fn models_run_at_every_level_and_the_key_never_reaches_the_run_directory() {
    let server = Server::start(|_, r| Reply::ok(solver(&r.body)));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let url = server.base_url();
    let args = [
        "run",
        "--model",
        "local:solver",
        "--base-url",
        &url,
        "--api-key-env",
        VAR,
        "--level",
        "L0,L1,L2",
        "--tasks",
        "T3_duplicates,T4_rate_limit_429",
        "--seeds",
        "0..1",
        "--jobs",
        "3",
        "--rpm",
        "6000",
        "--out",
        out.to_str().unwrap(),
    ];
    let o = benchaudit(&args);
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{stderr}");

    let text = std::fs::read_to_string(out.join("episodes.jsonl")).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 3 * 2 * 2);
    for r in &records {
        let (policy, level, task) = (
            r["key"]["policy"].as_str().unwrap(),
            r["key"]["level"].as_str().unwrap(),
            r["key"]["task_id"].as_str().unwrap(),
        );
        let asks_model = !(level == "L1" && task == "T3_duplicates"); // T3 has no fault to ask about
        match policy {
            "local:solver" => {
                assert_eq!(r["outcome"], "submitted", "{r}");
                assert_eq!(r["scores"]["f1"], 1.0, "{r}");
                assert_eq!(
                    r["usage"]["requests"].as_u64().unwrap() > 0,
                    asks_model,
                    "{r}"
                );
            }
            other => panic!("unexpected policy {other}"),
        }
    }
    assert!(stdout.contains("local:solver"), "{stdout}");

    // The key was used — in the header of every request — and is nowhere else.
    let reqs = server.requests();
    assert!(!reqs.is_empty());
    for q in &reqs {
        assert_eq!(
            q.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert!(!q.raw.contains(KEY));
    }
    let files = files_under(&out);
    assert!(
        files.len() > records.len(),
        "ledger, manifest and one transcript per episode: {files:?}"
    );
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let content = String::from_utf8_lossy(&bytes);
        assert!(
            !content.contains(KEY),
            "the key leaked into {}",
            f.display()
        );
        assert!(
            !content.contains("Bearer"),
            "an Authorization header leaked into {}",
            f.display()
        );
    }
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));

    // The manifest records the models' settings and the variable's name.
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let models = manifest["config"]["models"].as_array().unwrap();
    assert_eq!(models.len(), 1);
    assert_eq!(models[0]["name"], "local:solver");
    assert_eq!(models[0]["api_key_env"], VAR);
    assert_eq!(
        (
            models[0]["token_budget"].as_u64(),
            models[0]["step_limit"].as_u64()
        ),
        (Some(6000), Some(30))
    );
    // An L2 transcript holds the conversation.
    let l2 = files
        .iter()
        .find(|f| {
            f.to_string_lossy()
                .contains("local_solver__L2__T3_duplicates__0")
        })
        .expect("transcript");
    let t: Value = benchaudit_runs::ledger::transcript_file(l2).unwrap();
    assert!(t["messages"]["conversation"].as_array().unwrap().len() > 4);

    // Resuming runs nothing and asks the provider nothing.
    let before = server.requests().len();
    let o = benchaudit(&args);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("0 to run"));
    assert_eq!(server.requests().len(), before);
}

/// Issue 11: a provider refusal (401) is fatal. The refused episode is not recorded, no
/// further episode starts (one worker: the provider is asked exactly once), the command prints
/// the refusal and exits 2, and a resume once the provider accepts runs exactly what is
/// missing, each episode once.
#[test]
fn a_provider_refusal_stops_the_run_with_exit_2_and_the_resume_runs_the_rest() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let refusing = Arc::new(AtomicBool::new(true));
    let flag = Arc::clone(&refusing);
    let server = Server::start(move |_, r| {
        if flag.load(Ordering::SeqCst) {
            // A provider that echoes the key it was sent (some local servers do).
            Reply::status(
                401,
                json!({"error": {"message": format!("invalid key {KEY}")}}),
            )
        } else {
            Reply::ok(solver(&r.body))
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let url = server.base_url();
    let args = [
        "run",
        "--model",
        "local:refuser",
        "--base-url",
        &url,
        "--api-key-env",
        VAR,
        "--level",
        "L1,L2",
        "--tasks",
        "T4_rate_limit_429",
        "--seeds",
        "0..2",
        "--jobs",
        "1",
        "--rpm",
        "6000",
        "--out",
        out.to_str().unwrap(),
    ];
    let o = benchaudit(&args);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    );
    assert_eq!(o.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("the provider refused a request, so the run stopped")
            && stderr.contains("HTTP 401"),
        "{stderr}"
    );
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));
    assert_eq!(
        server.requests().len(),
        1,
        "no episode starts after the refusal"
    );
    let ledger = std::fs::read_to_string(out.join("episodes.jsonl")).unwrap_or_default();
    assert!(
        ledger.is_empty(),
        "the refused episode is not recorded: {ledger}"
    );
    for f in files_under(&out) {
        let content = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).to_string();
        assert!(
            !content.contains(KEY),
            "the key leaked into {}",
            f.display()
        );
    }

    // The provider accepts again: the resume runs every episode, once.
    refusing.store(false, Ordering::SeqCst);
    let o = benchaudit(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(out.join("episodes.jsonl")).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2 * 3);
    let keys: std::collections::BTreeSet<String> =
        records.iter().map(|r| r["key"].to_string()).collect();
    assert_eq!(keys.len(), records.len(), "each episode once");
    assert!(
        records.iter().all(|r| r["outcome"] == "submitted"),
        "{text}"
    );
}

/// Issue 11: an `infra_error` episode is not finished. The run prints its summary and exits
/// non-zero (3) while one remains; the resume retries it, appends the retry under the same key
/// and keeps the failed attempt's transcript. (Slow: the provider's six attempts back off.)
#[test]
fn an_infra_error_is_retried_on_resume_and_the_run_exits_non_zero_while_one_remains() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let failing = Arc::new(AtomicBool::new(true));
    let flag = Arc::clone(&failing);
    let server = Server::start(move |_, r| {
        if flag.load(Ordering::SeqCst) {
            Reply::status(503, json!({"error": {"message": "overloaded"}}))
        } else {
            Reply::ok(solver(&r.body))
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let url = server.base_url();
    let args = [
        "run",
        "--model",
        "local:solver",
        "--base-url",
        &url,
        "--api-key-env",
        VAR,
        "--level",
        "L0",
        "--tasks",
        "T1_single_page",
        "--seeds",
        "0",
        "--out",
        out.to_str().unwrap(),
    ];
    let o = benchaudit(&args);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    );
    assert_eq!(o.status.code(), Some(3), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("local:solver"),
        "the summary is printed: {stdout}"
    );
    assert!(
        stderr.contains("error: the one episode run ended in infra_error"),
        "{stderr}"
    );
    failing.store(false, Ordering::SeqCst);
    let o = benchaudit(&args);
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("1 of them retried after an infra_error"),
        "{stderr}"
    );
    let text = std::fs::read_to_string(out.join("episodes.jsonl")).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2, "the attempt and its retry: {text}");
    assert_eq!(records[0]["key"], records[1]["key"]);
    assert_eq!(records[0]["outcome"], "infra_error");
    assert_eq!(records[1]["outcome"], "submitted");
    let names: Vec<String> = files_under(&out.join("transcripts"))
        .iter()
        .filter_map(|f| f.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names.iter().any(|n| n.ends_with(".attempt-1.json.zst")),
        "{names:?}"
    );
    // Finished now: the same command runs nothing and exits 0.
    let o = benchaudit(&args);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("0 to run"));
}

#[test]
fn model_setup_errors_are_usage_errors_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let out = out.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        // Issue 13: an unreachable endpoint fails fast, in one line, before the run starts.
        (
            &["--model", "local:x", "--base-url", "http://127.0.0.1:9/v1"],
            "preflight: local:x: cannot reach http://127.0.0.1:9/v1/models: connection refused (nothing is listening at that address and port); is the local server running? scripts/local-llm/start.sh",
        ),
        (
            &[
                "--model",
                "local:x",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--api-key-env",
                "BENCHAUDIT_SURELY_UNSET_VAR_Q7",
            ],
            "BENCHAUDIT_SURELY_UNSET_VAR_Q7",
        ),
        (&["--model", "mystery:x"], "--base-url"),
        (&["--model", "gpt-4o"], "PROVIDER:NAME"),
        (
            &["--policy", "oracle", "--base-url", "http://127.0.0.1:9/v1"],
            "--model",
        ),
    ];
    for (extra, needle) in cases {
        let mut args = vec![
            "run",
            "--tasks",
            "T1_single_page",
            "--seeds",
            "0",
            "--out",
            out,
        ];
        args.extend_from_slice(extra);
        let o = benchaudit(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{extra:?}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(!Path::new(out).join("episodes.jsonl").exists());
    }
}

#[test]
fn audit_adds_models_beside_the_rule_players() {
    let server = Server::start(|_, r| Reply::ok(solver(&r.body)));
    let dir = tempfile::tempdir().unwrap();
    let url = server.base_url();
    let o = benchaudit(&[
        "audit",
        "--seeds",
        "1",
        "--out",
        dir.path().to_str().unwrap(),
        "--model",
        "local:solver",
        "--base-url",
        &url,
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let audit: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("audit.json")).unwrap()).unwrap();
    let players: Vec<&str> = audit["comtrade"]["players"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(players.contains(&"local:solver"), "{players:?}");
    let row = audit["comtrade"]["joint"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["player"] == "local:solver")
        .unwrap()
        .clone();
    assert_eq!(
        row["l2_truth"], 1.0,
        "the scripted solver solves T3 at L2: {row}"
    );
    assert_eq!(row["l0_truth"], 1.0);
    assert!(
        stdout.contains("oracle checks: 11/11 pass"),
        "a model that ties at L0 keeps every L0 payload identical: {stdout}"
    );
    assert!(!server.requests().is_empty());
    // Issue 11: the model gets its own non-degeneracy verdict on the card (the solver always
    // retries at L1: skip chosen 0 of n) and is replayed from its recorded responses.
    let cards: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("card.json")).unwrap()).unwrap();
    let l1 = cards["cards"][1]["non_degeneracy"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["level"] == "L1" && v["player"] == "local:solver")
        .unwrap()
        .clone();
    assert_eq!(l1["verdict"]["status"], "fail", "{l1}");
    assert!(
        l1["verdict"]["evidence"]
            .as_str()
            .unwrap()
            .contains("retry: skip chosen 0 of"),
        "{l1}"
    );
    let replay = &audit["comtrade"]["replay"];
    assert_eq!(replay["model_episodes"], 18, "{replay}");
    assert_eq!(
        replay["mismatches"].as_array().unwrap().len(),
        0,
        "{replay}"
    );
    let md = std::fs::read_to_string(dir.path().join("card.md")).unwrap();
    assert!(
        md.contains("| non-degeneracy at L1: local:solver |"),
        "{md}"
    );
}

#[test]
fn a_sharded_model_audit_merges_into_the_same_card_without_calling_the_model_again() {
    let server = Server::start(|_, r| Reply::ok(solver(&r.body)));
    let dir = tempfile::tempdir().unwrap();
    let url = server.base_url();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let audit = |extra: &[&str]| {
        let mut args = vec![
            "audit",
            "--seeds",
            "0..1",
            "--model",
            "local:solver",
            "--base-url",
            &url,
        ];
        args.extend_from_slice(extra);
        let o = benchaudit(&args);
        assert!(
            o.status.success(),
            "{args:?}\n{}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        o
    };
    let (direct, s0, s1, merged, card) = (
        path("direct"),
        path("s0"),
        path("s1"),
        path("merged"),
        path("card"),
    );
    audit(&["--out", &direct]);
    let single = server.requests().len();
    for (i, s) in [&s0, &s1].into_iter().enumerate() {
        let shard = format!("{i}/2");
        let o = audit(&["--ledger", s, "--shard", &shard, "--out", &card]);
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("benchaudit merge"),
            "a shard says how to join it"
        );
    }
    assert!(!dir.path().join("card").exists(), "a shard writes no card");
    let sharded = server.requests().len() - single;
    assert!(sharded > 0, "the shards play the model's episodes");
    let o = benchaudit(&["merge", &s0, &s1, "--out", &merged]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = server.requests().len();
    audit(&["--ledger", &merged, "--out", &card]);
    assert_eq!(
        server.requests().len(),
        before,
        "the audit reads the merged episodes back instead of calling the model"
    );
    for file in ["card.json", "card.md"] {
        let a = std::fs::read_to_string(dir.path().join("direct").join(file)).unwrap();
        let b = std::fs::read_to_string(dir.path().join("card").join(file)).unwrap();
        assert_eq!(a, b, "{file} of the sharded audit equals the direct one's");
    }
    let read = |d: &str| -> Value {
        serde_json::from_slice(&std::fs::read(dir.path().join(d).join("audit.json")).unwrap())
            .unwrap()
    };
    assert_eq!(
        read("direct")["comtrade"],
        read("card")["comtrade"],
        "every stage's evidence is the same"
    );
    // The direct audit plays each model episode once: the 2×2 reads the pool's episodes.
    assert_eq!(
        single, sharded,
        "as many model requests as the shards made together"
    );
}

#[test]
fn the_tool_text_flag_reaches_the_model_and_the_manifest_and_a_resume_under_another_is_refused() {
    use benchaudit_comtrade::ToolText;
    let server = Server::start(|_, r| Reply::ok(solver(&r.body)));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let url = server.base_url();
    let args = |text: &'static str| {
        vec![
            "run".to_string(),
            "--model".into(),
            "local:solver".into(),
            "--base-url".into(),
            url.clone(),
            "--level".into(),
            "L2".into(),
            "--tasks".into(),
            "T2_multi_page".into(),
            "--seeds".into(),
            "0".into(),
            "--tool-text".into(),
            text.into(),
            "--out".into(),
            out.to_str().unwrap().into(),
        ]
    };
    let run = |text: &'static str| {
        let a = args(text);
        benchaudit(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let o = run("ambiguous");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Every request offered fetch_page with the ambiguous page text, no base stated.
    let requests = server.requests();
    assert!(!requests.is_empty());
    for r in &requests {
        let fetch = r.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == "fetch_page")
            .unwrap();
        assert_eq!(
            fetch["function"]["parameters"]["properties"]["page"]["description"],
            ToolText::Ambiguous.page_description()
        );
    }
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["config"]["tool_text"], "ambiguous", "{manifest}");
    assert_eq!(manifest["config"]["models"][0]["tool_text"], "ambiguous");
    // The default wording is another run: refused before anything runs, naming the field.
    let o = run("clarified");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("tool_text"), "{stderr}");
    assert_eq!(
        server.requests().len(),
        requests.len(),
        "nothing more was asked"
    );
}

#[test]
fn a_typo_in_target_stops_the_audit_before_any_model_request_or_episode() {
    let server = Server::start(|_, r| Reply::ok(solver(&r.body)));
    let url = server.base_url();
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../audit/tests/fixtures");
    let out = dir.path().join("out");
    let ledger = dir.path().join("ledger");
    let unknown_field = dir.path().join("bad.toml");
    std::fs::write(&unknown_field, "name = \"x\"\nscorer_kid = \"outcome\"\n").unwrap();
    let unspawnable = dir.path().join("missing/target.toml");
    std::fs::create_dir_all(unspawnable.parent().unwrap()).unwrap();
    std::fs::write(
        &unspawnable,
        "name = \"y\"\n[hooks]\nscore = [\"./no-such-hook\", \"score\"]\n",
    )
    .unwrap();
    for (target, says) in [
        ("tyo", "targets/tyo/target.toml"),
        (unknown_field.to_str().unwrap(), "scorer_kid"),
        (unspawnable.to_str().unwrap(), "hook `score` cannot start"),
        ("inspect:no/such_tasks.py@t", "no task file"),
    ] {
        let toy = fixtures.join("toy/target.toml");
        let o = benchaudit(&[
            "audit",
            "--seeds",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--model",
            "local:solver",
            "--base-url",
            &url,
            "--ledger",
            ledger.to_str().unwrap(),
            "--target",
            toy.to_str().unwrap(),
            "--target",
            target,
        ]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{target}: {stderr}");
        assert!(stderr.contains(says), "{target}: {stderr}");
        assert!(
            server.requests().is_empty(),
            "{target}: the model was asked before the target was validated"
        );
        assert!(!ledger.exists(), "{target}: an episode was recorded");
        assert!(!out.join("card.md").exists());
    }
}
