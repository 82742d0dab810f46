//! Provider faults over real HTTP: 429 with Retry-After, 500, timeouts, connection resets and
//! garbled bodies are retried and never reach the model; a provider that keeps failing or
//! refuses the request makes the episode `infra_error`; the key goes into the Authorization
//! header and nowhere else.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod llm_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use benchaudit_agents::llm::{
    ApiKey, ChatClient, ClientConfig, LlmAgent, ModelConfig, ModelId, ModelOverrides, RetryPolicy,
};
use benchaudit_agents::{EpisodeRun, EpisodeSpec, Level, Outcome, RunOptions, run_episode};
use benchaudit_comtrade::task;
use llm_support::{Reply, Server, solver};
use serde_json::json;

const KEY: &str = "sk-test-4f9c2b7e1d0a-DO-NOT-LEAK";

fn retry(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        max_retry_after: Duration::from_secs(5),
    }
}

fn agent_with(server: &Server, attempts: u32, timeout: Duration) -> LlmAgent {
    let id = ModelId::parse("local:scripted").unwrap();
    let config = ModelConfig::new(&id, &server.base_url(), &ModelOverrides::default()).unwrap();
    let mut cc = ClientConfig::new(&server.base_url(), Some(ApiKey::new(KEY)));
    cc.retry = retry(attempts);
    cc.request_timeout = timeout;
    // These tests time the client out on purpose: no local-inference allowance.
    cc.local_inference = false;
    LlmAgent::new(config, Arc::new(ChatClient::new(cc).unwrap()))
}

fn agent(server: &Server, attempts: u32) -> LlmAgent {
    agent_with(server, attempts, Duration::from_secs(10))
}

fn run(agent: &LlmAgent, level: Level) -> EpisodeRun {
    let spec = EpisodeSpec {
        task: task("T3_duplicates").unwrap(),
        seed: 0,
        level,
        options: RunOptions::default(),
    };
    run_episode(&spec, &mut agent.policy())
}

fn no_key_anywhere(run: &EpisodeRun) {
    let record = serde_json::to_string(&run.record).unwrap();
    let transcript = serde_json::to_string(&run.transcript).unwrap();
    assert!(!record.contains(KEY) && !transcript.contains(KEY));
    assert!(!record.contains("Bearer") && !transcript.contains("Bearer"));
}

#[test]
fn a_429_with_retry_after_and_a_500_are_retried_and_the_episode_completes() {
    let server = Server::start(|i, r| match i {
        0 => Reply::status(429, json!({"error": {"message": "rate limited"}}))
            .with_header("retry-after", "1"),
        1 => Reply::status(500, json!({"error": {"message": "internal"}})),
        _ => Reply::ok(solver(&r.body)),
    });
    let a = agent(&server, 4);
    let started = Instant::now();
    let r = run(&a, Level::L2);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After honoured: {:?}",
        started.elapsed()
    );
    assert_eq!(r.record.outcome, Outcome::Submitted, "{:?}", r.record.error);
    assert_eq!(r.record.scores.as_ref().unwrap().f1, 1.0);
    // Faults are not model decisions: the model made one request per tool call, the server saw
    // two more, and the first three requests were the identical first turn.
    let reqs = server.requests();
    assert_eq!(r.record.usage.requests, r.record.counts.tool_calls);
    assert_eq!(reqs.len() as u32, r.record.usage.requests + 2);
    assert_eq!(reqs[0].body, reqs[2].body);
    assert_eq!(
        r.record.counts.faults_seen, 0,
        "provider faults are not environment faults"
    );
    let t = r.transcript.messages.as_ref().unwrap();
    assert_eq!(t["provider_faults"], 2);
    let faults = t["requests"][0]["provider_faults"].as_array().unwrap();
    assert!(faults[0]["fault"].as_str().unwrap().starts_with("HTTP 429"));
    assert!(faults[0]["waited_ms"].as_u64().unwrap() >= 1000);
    assert!(faults[1]["fault"].as_str().unwrap().starts_with("HTTP 500"));
    // The key went in the header, and only there.
    assert!(
        reqs.iter()
            .all(|q| q.header("authorization") == Some(&format!("Bearer {KEY}")[..]))
    );
    assert!(reqs.iter().all(|q| !q.raw.contains(KEY)));
    no_key_anywhere(&r);
}

#[test]
fn a_provider_that_keeps_failing_makes_an_infra_error() {
    let server = Server::start(|_, _| {
        Reply::status(
            503,
            json!({"error": {"message": format!("overloaded, key {KEY}")}}),
        )
    });
    let a = agent(&server, 3);
    for level in [Level::L0, Level::L2] {
        let r = run(&a, level);
        assert_eq!(r.record.outcome, Outcome::InfraError, "{level}");
        assert!(r.record.scores.is_none() && r.record.reward.is_none());
        let err = r.record.error.clone().unwrap();
        assert!(
            err.contains("3 attempts") && err.contains("HTTP 503"),
            "{err}"
        );
        assert!(
            err.contains("<redacted>"),
            "the echoed key was scrubbed: {err}"
        );
        assert_eq!(r.record.usage.requests, 0);
        no_key_anywhere(&r);
    }
    assert_eq!(server.requests().len(), 6);
}

#[test]
fn a_refused_request_is_an_infra_error_at_once() {
    let server = Server::start(|_, _| {
        Reply::status(
            401,
            json!({"error": {"message": format!("Incorrect API key provided: {KEY}")}}),
        )
    });
    let a = agent(&server, 6);
    let r = run(&a, Level::L2);
    assert_eq!(r.record.outcome, Outcome::InfraError);
    assert_eq!(
        server.requests().len(),
        1,
        "4xx other than 429 is not retried"
    );
    let err = r.record.error.clone().unwrap();
    assert!(
        err.contains("HTTP 401") && err.contains("Incorrect API key provided"),
        "{err}"
    );
    no_key_anywhere(&r);
}

#[test]
fn a_timeout_is_retried() {
    let server = Server::start(|i, r| {
        let reply = Reply::ok(solver(&r.body));
        if i == 0 {
            Reply::Delay(Duration::from_millis(1500), Box::new(reply))
        } else {
            reply
        }
    });
    let a = agent_with(&server, 3, Duration::from_millis(300));
    let r = run(&a, Level::L2);
    assert_eq!(r.record.outcome, Outcome::Submitted, "{:?}", r.record.error);
    let t = r.transcript.messages.unwrap();
    assert!(
        t["requests"][0]["provider_faults"][0]["fault"]
            .as_str()
            .unwrap()
            .starts_with("timeout"),
        "{t}"
    );
}

#[test]
fn a_timeout_on_every_attempt_is_an_infra_error() {
    let server = Server::start(|_, r| {
        Reply::Delay(
            Duration::from_millis(800),
            Box::new(Reply::ok(solver(&r.body))),
        )
    });
    let a = agent_with(&server, 2, Duration::from_millis(150));
    let started = Instant::now();
    let r = run(&a, Level::L2);
    assert_eq!(r.record.outcome, Outcome::InfraError);
    assert!(
        r.record
            .error
            .as_deref()
            .unwrap()
            .contains("2 attempts, last: timeout"),
        "{:?}",
        r.record.error
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "bounded: {:?}",
        started.elapsed()
    );
}

#[test]
fn connection_resets_and_garbled_bodies_are_retried() {
    let server = Server::start(|i, r| match i {
        0 => Reply::Close,
        1 => Reply::Json {
            status: 200,
            headers: vec![],
            body: "{\"choices\": [".into(),
        },
        2 => Reply::ok(json!({"error": {"message": "upstream hiccup"}})),
        3 => Reply::ok(json!({"choices": []})),
        _ => Reply::ok(solver(&r.body)),
    });
    let a = agent(&server, 5);
    let r = run(&a, Level::L2);
    assert_eq!(r.record.outcome, Outcome::Submitted, "{:?}", r.record.error);
    let t = r.transcript.messages.unwrap();
    let faults: Vec<String> = t["requests"][0]["provider_faults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["fault"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(faults.len(), 4, "{faults:?}");
    assert!(
        faults[1].contains("unreadable body")
            && faults[2].contains("upstream hiccup")
            && faults[3].contains("without choices"),
        "{faults:?}"
    );
}
