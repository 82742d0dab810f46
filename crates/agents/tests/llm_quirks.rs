//! Request shapes and episode limits: provider quirks decide the fields (paper A.7), the
//! output-token budget is sent as the remaining budget and ends the episode as `token_budget`,
//! the step limit ends it as `step_limit`, and models on one endpoint share a client (and so
//! one requests-per-minute limiter).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod llm_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use benchaudit_agents::llm::{AgentOptions, LlmAgent, build_agents};
use benchaudit_agents::{EpisodeRun, EpisodeSpec, Level, Outcome, RunOptions, run_episode};
use benchaudit_comtrade::task;
use llm_support::{Reply, Server, call_reply, solver, text_reply};
use serde_json::{Value, json};

fn agents(
    server: &Server,
    models: &[&str],
    tweak: impl FnOnce(&mut AgentOptions),
) -> Vec<LlmAgent> {
    let mut o = AgentOptions::default();
    o.overrides.base_url = Some(server.base_url());
    o.retry.base_delay = Duration::from_millis(5);
    tweak(&mut o);
    let specs: Vec<String> = models.iter().map(|m| format!("local:{m}")).collect();
    build_agents(&specs, &o).unwrap()
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

fn model_requests(server: &Server, model: &str) -> Vec<Value> {
    server
        .requests()
        .into_iter()
        .map(|r| r.body)
        .filter(|b| b["model"] == model)
        .collect()
}

#[test]
fn gpt5_requests_carry_max_completion_tokens_and_no_temperature_others_temperature_zero() {
    let server = Server::start(|_, r| Reply::ok(solver(&r.body)));
    let all = agents(
        &server,
        &["gpt-5", "o3-mini", "llama-3.3-70b", "claude-fable-5"],
        |_| {},
    );
    for a in &all {
        for level in [Level::L0, Level::L2] {
            assert_eq!(
                run(a, "T3_duplicates", level).record.outcome,
                Outcome::Submitted
            );
        }
    }
    for model in ["gpt-5", "o3-mini"] {
        let reqs = model_requests(&server, model);
        assert!(reqs.len() > 2);
        // The L0 question is capped (reasoning models think first: 4 096); the first L2 turn
        // asks for the whole reasoning-class budget.
        assert_eq!(reqs[0]["max_completion_tokens"], 4_096);
        let first_turn = reqs.iter().find(|b| b.get("tools").is_some()).unwrap();
        assert_eq!(first_turn["max_completion_tokens"], 12_000);
        for b in &reqs {
            assert!(
                b.get("max_completion_tokens").is_some_and(Value::is_u64),
                "{b}"
            );
            assert!(
                b.get("max_tokens").is_none()
                    && b.get("temperature").is_none()
                    && b.get("stop").is_none(),
                "{b}"
            );
        }
    }
    let llama = model_requests(&server, "llama-3.3-70b");
    assert_eq!(llama[0]["max_tokens"], 512, "the L0 cap of ordinary models");
    for b in &llama {
        assert_eq!(b["temperature"], 0, "{b}");
        assert!(
            b.get("max_tokens").is_some_and(Value::is_u64)
                && b.get("max_completion_tokens").is_none()
        );
    }
    // Rejects temperature, takes max_tokens, reasoning-class budget.
    let fable = model_requests(&server, "claude-fable-5");
    assert_eq!(fable[0]["max_tokens"], 4_096);
    assert!(fable.iter().all(|b| b.get("temperature").is_none()));
    // The output limit is the budget left: it falls by the completion tokens spent.
    // The L0 question (30 tokens) belonged to another episode; each L2 turn costs 20.
    let limits: Vec<u64> = llama
        .iter()
        .filter(|b| b.get("tools").is_some())
        .map(|b| b["max_tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(limits[..2], [6_000, 5_980]);
    assert!(limits.windows(2).all(|w| w[0] - w[1] == 20), "{limits:?}");
}

#[test]
fn the_text_protocol_sends_stop_only_to_models_that_accept_it() {
    let server = Server::start(|_, r| Reply::ok(solver(&r.body)));
    let all = agents(&server, &["gpt-5-mini", "qwen2.5-7b"], |o| {
        o.overrides.text_protocol = true
    });
    for a in &all {
        assert_eq!(
            run(a, "T3_duplicates", Level::L2).record.scores.unwrap().f1,
            1.0
        );
    }
    assert!(
        model_requests(&server, "gpt-5-mini")
            .iter()
            .all(|b| b.get("stop").is_none() && b.get("temperature").is_none())
    );
    assert!(
        model_requests(&server, "qwen2.5-7b")
            .iter()
            .all(|b| b["stop"] == json!(["</tool_call>"]))
    );
}

#[test]
fn the_token_budget_ends_the_episode_with_outcome_token_budget() {
    // Every reply costs 4 000 completion tokens against a 6 000 budget.
    let server = Server::start(|_, r| {
        let mut v = solver(&r.body);
        v["usage"]["completion_tokens"] = json!(4_000);
        Reply::ok(v)
    });
    let a = agents(&server, &["big-talker"], |_| {}).remove(0);
    let r = run(&a, "T3_duplicates", Level::L2);
    assert_eq!(r.record.outcome, Outcome::TokenBudget);
    assert_eq!(
        r.record.usage.completion_tokens, 8_000,
        "provider overshoot is recorded as billed"
    );
    assert_eq!(r.record.usage.requests, 2);
    assert_eq!(r.record.counts.tool_calls, 2, "both replies were acted on");
    let sent: Vec<u64> = server
        .requests()
        .iter()
        .map(|q| q.body["max_tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(sent, [6_000, 2_000]);
    assert_eq!(
        r.record.error.as_deref(),
        Some("output-token budget exhausted")
    );
    assert_eq!(
        r.record.scores.as_ref().unwrap().f1,
        0.0,
        "no submission is scored as empty"
    );
    let t = r.transcript.messages.unwrap();
    assert_eq!(t["usage"]["token_budget"], 6_000);
    assert_eq!(t["end"], "output-token budget exhausted");
}

#[test]
fn a_cut_off_reply_at_the_budget_is_token_budget_and_missing_usage_is_estimated() {
    // No usage reported: 400 bytes of text ≈ 100 tokens, and the budget is 100.
    let server = Server::start(|_, _| {
        let mut v = text_reply(&"x".repeat(400), 0);
        v.as_object_mut().unwrap().remove("usage");
        v["choices"][0]["finish_reason"] = json!("length");
        Reply::ok(v)
    });
    let a = agents(&server, &["rambler"], |o| {
        o.overrides.token_budget = Some(100)
    })
    .remove(0);
    let r = run(&a, "T3_duplicates", Level::L2);
    assert_eq!(r.record.outcome, Outcome::TokenBudget);
    assert_eq!(r.record.usage.completion_tokens, 100);
    let t = r.transcript.messages.unwrap();
    assert_eq!(t["usage"]["estimated"], true);
    // The budget also binds L0 and L1 questions.
    let r = run(&a, "T3_duplicates", Level::L0);
    assert_eq!(r.record.outcome, Outcome::Submitted, "one question fits");
    assert_eq!(server.requests().last().unwrap().body["max_tokens"], 100);
}

#[test]
fn the_step_limit_ends_the_episode_with_outcome_step_limit() {
    let server =
        Server::start(|_, r| Reply::ok(call_reply(&r.body, &[("get_task_info", json!({}))], 10)));
    let a = agents(&server, &["looper"], |_| {}).remove(0);
    let r = run(&a, "T3_duplicates", Level::L2);
    assert_eq!(r.record.outcome, Outcome::StepLimit);
    assert_eq!(r.record.counts.tool_calls, 30);
    assert_eq!(server.requests().len(), 30);
    assert!(
        server.requests()[0].body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("at most 30 tool calls")
    );
    let short = agents(&server, &["looper"], |o| o.overrides.step_limit = Some(4)).remove(0);
    let r = run(&short, "T3_duplicates", Level::L2);
    assert_eq!(
        (r.record.outcome, r.record.counts.tool_calls),
        (Outcome::StepLimit, 4)
    );
}

#[test]
fn models_on_one_endpoint_share_one_client_and_its_rate_limit() {
    let server = Server::start(|_, _| Reply::ok(text_reply("retry", 1)));
    let all = agents(&server, &["a", "b"], |o| o.rpm = Some(600)); // 100 ms apart
    assert!(Arc::ptr_eq(all[0].client(), all[1].client()));
    // Four L1 questions from two models in two threads: at least 300 ms for four slots.
    let started = Instant::now();
    std::thread::scope(|s| {
        for a in &all {
            s.spawn(move || {
                for id in ["T4_rate_limit_429", "T5_server_error_500"] {
                    assert_eq!(run(a, id, Level::L1).record.counts.retries, 1);
                }
            });
        }
    });
    assert_eq!(server.requests().len(), 4);
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(all[0].config().name, "local:a");
}
