//! The LLM policy at L0, L1 and L2 against scripted models over real HTTP on 127.0.0.1: a
//! model that solves T3 gets F1 1, the page-zero model of paper C.6 gets F1 0 with its repeated
//! call in the transcript, both submit byte-identical payloads at L0, and at L1 the harness asks
//! retry-or-skip and obeys.
//!
//! Why one file over 600 lines: the three levels are played against the same scripted model
//! server (`llm_support`) with the same transcript checks, and the L0 payloads of two models
//! are compared with each other; one binary links them once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod llm_support;

use std::time::Duration;

use benchaudit_agents::llm::{AgentOptions, LlmAgent, RetryPolicy, build_agents};
use benchaudit_agents::transcript::Event;
use benchaudit_agents::{EpisodeRun, EpisodeSpec, Level, Outcome, RunOptions, run_episode};
use benchaudit_comtrade::{EpisodeOptions, SubmissionProtocol, task};
use llm_support::{
    Ask, Recorded, Reply, Server, call_reply, classify, page_zero, solver, text_reply,
};
use serde_json::{Value, json};

fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 4,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        max_retry_after: Duration::from_secs(5),
    }
}

fn agent(server: &Server, model: &str, text_protocol: bool) -> LlmAgent {
    let mut o = AgentOptions {
        retry: fast_retry(),
        ..AgentOptions::default()
    };
    o.overrides.base_url = Some(server.base_url());
    o.overrides.text_protocol = text_protocol;
    build_agents(&[format!("local:{model}")], &o)
        .unwrap()
        .remove(0)
}

fn scripted(model: fn(&Value) -> Value) -> Server {
    Server::start(move |_, r: &Recorded| Reply::ok(model(&r.body)))
}

fn run(
    agent: &LlmAgent,
    id: &str,
    seed: u64,
    level: Level,
    submission: SubmissionProtocol,
) -> EpisodeRun {
    let options = RunOptions {
        episode: EpisodeOptions {
            submission,
            ..EpisodeOptions::default()
        },
        ..RunOptions::default()
    };
    run_episode(
        &EpisodeSpec {
            task: task(id).unwrap(),
            seed,
            level,
            options,
        },
        &mut agent.policy(),
    )
}

fn f1(run: &EpisodeRun) -> f64 {
    run.record.scores.as_ref().expect("scored").f1
}

fn calls(run: &EpisodeRun) -> Vec<(String, Value)> {
    run.transcript
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Call { name, arguments } => Some((name.clone(), arguments.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn a_solving_model_gets_f1_one_on_t3_at_l2() {
    let server = scripted(solver);
    let a = agent(&server, "solver", false);
    for seed in [0, 1, 2] {
        let r = run(
            &a,
            "T3_duplicates",
            seed,
            Level::L2,
            SubmissionProtocol::Full,
        );
        assert_eq!(
            r.record.outcome,
            Outcome::Submitted,
            "seed {seed}: {:?}",
            r.record.error
        );
        assert_eq!(f1(&r), 1.0, "seed {seed}");
        assert_eq!(r.record.key.policy, "local:solver");
        assert_eq!(r.record.counts.malformed_calls, 0);
        // One model request per tool call; token usage is the sum of the scripted usage.
        let n = r.record.counts.tool_calls;
        assert_eq!(r.record.usage.requests, n);
        assert_eq!(
            r.record.usage.completion_tokens,
            u64::from(n - 1) * 20 + 200
        );
        assert_eq!(r.record.usage.prompt_tokens, u64::from(n) * 100);
    }
    // Every request offered the three tools, and every conversation started with the system
    // and task prompts, then grew by one assistant turn and one tool result per step.
    let reqs = server.requests();
    for r in &reqs {
        let names: Vec<&str> = r.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["get_task_info", "fetch_page", "submit_results"]);
        let msgs = r.body["messages"].as_array().unwrap();
        assert_eq!(
            (msgs[0]["role"].as_str(), msgs[1]["role"].as_str()),
            (Some("system"), Some("user"))
        );
        assert_eq!(
            msgs.len() % 2,
            0,
            "pairs of assistant call + tool result after the prompts"
        );
    }
    // The full conversation is in the transcript, up to the submission call (whose result the
    // scaffold's events hold: the episode ends when it is accepted).
    let r = run(&a, "T3_duplicates", 0, Level::L2, SubmissionProtocol::Full);
    let t = r.transcript.messages.as_ref().expect("LLM transcript");
    assert_eq!(t["model"], "local:solver");
    let conv = t["conversation"].as_array().unwrap();
    let last = conv.last().unwrap();
    assert_eq!(last["tool_calls"][0]["function"]["name"], "submit_results");
    let tool_results = conv.iter().filter(|m| m["role"] == "tool").count() as u32;
    assert_eq!(tool_results + 1, r.record.counts.tool_calls);
    assert!(
        matches!(r.transcript.events.last(), Some(Event::Result { name, .. }) if name == "submit_results")
    );
    assert_eq!(
        t["requests"].as_array().unwrap().len() as u32,
        r.record.counts.tool_calls
    );
    assert_eq!(
        t["usage"]["completion_tokens"].as_u64(),
        Some(r.record.usage.completion_tokens)
    );
}

#[test]
fn the_text_protocol_solves_t3_without_native_tools() {
    let server = scripted(solver);
    let a = agent(&server, "solver", true);
    let r = run(&a, "T3_duplicates", 4, Level::L2, SubmissionProtocol::Full);
    assert_eq!(r.record.outcome, Outcome::Submitted, "{:?}", r.record.error);
    assert_eq!(f1(&r), 1.0);
    for req in server.requests() {
        assert_eq!(classify(&req.body), Ask::Text);
        assert!(req.body.get("tools").is_none());
        assert_eq!(req.body["stop"], json!(["</tool_call>"]));
        // Strict chat templates: roles alternate after the system prompt.
        let roles: Vec<&str> = req.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        for pair in roles[1..].windows(2) {
            assert_ne!(pair[0], pair[1], "{roles:?}");
        }
    }
}

#[test]
fn the_page_zero_model_ends_with_f1_zero_and_its_transcript_shows_the_repeat() {
    let server = scripted(page_zero);
    let a = agent(&server, "page-zero", false);
    let r = run(&a, "T3_duplicates", 0, Level::L2, SubmissionProtocol::Full);
    assert_eq!(r.record.outcome, Outcome::Submitted);
    assert_eq!(f1(&r), 0.0);
    let c = calls(&r);
    let zero = json!({"page": 0, "page_size": 10});
    assert_eq!(
        c[0],
        ("fetch_page".to_string(), zero.clone()),
        "opens with fetch_page(0)"
    );
    let repeats = c
        .iter()
        .filter(|(n, a)| n == "fetch_page" && *a == zero)
        .count();
    assert_eq!(repeats, llm_support::PAGE_ZERO_REPEATS);
    // The model saw the legacy 422 with retry: true each time, in its own conversation.
    let conv = r.transcript.messages.as_ref().unwrap()["conversation"]
        .as_array()
        .unwrap()
        .clone();
    let rejections: Vec<Value> = conv
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(rejections.len(), llm_support::PAGE_ZERO_REPEATS);
    assert!(
        rejections
            .iter()
            .all(|v| v["status"] == 422 && v["retry"] == true),
        "{rejections:?}"
    );
    assert_eq!(
        r.record.counts.requests,
        llm_support::PAGE_ZERO_REPEATS as u32
    );
}

#[test]
fn at_l0_both_models_submit_byte_identical_payloads() {
    let (s1, s2) = (scripted(solver), scripted(page_zero));
    let (good, bad) = (agent(&s1, "solver", false), agent(&s2, "page-zero", false));
    for seed in [0, 7] {
        let a = run(
            &good,
            "T3_duplicates",
            seed,
            Level::L0,
            SubmissionProtocol::Full,
        );
        let b = run(
            &bad,
            "T3_duplicates",
            seed,
            Level::L0,
            SubmissionProtocol::Full,
        );
        assert_eq!(a.record.outcome, Outcome::Submitted);
        assert!(a.record.payload_sha256.is_some());
        assert_eq!(
            a.record.payload_sha256, b.record.payload_sha256,
            "seed {seed}"
        );
        assert_eq!((f1(&a), f1(&b)), (1.0, 1.0));
        // The slots differed; the harness replaced the page-zero model's.
        let replaced = |r: &EpisodeRun| {
            r.transcript.events.iter().find_map(|e| match e {
                Event::Slots { replaced, .. } => Some(replaced.clone()),
                _ => None,
            })
        };
        assert_eq!(replaced(&a), Some(vec![]));
        assert_eq!(
            replaced(&b),
            Some(vec!["start_page".to_string(), "max_pages".to_string()])
        );
        assert_eq!(a.record.usage.requests, 1);
    }
    // One slot request per episode, no tools offered, the task info inside.
    for r in s1.requests().iter().chain(s2.requests().iter()) {
        assert_eq!(classify(&r.body), Ask::Slots);
        assert!(
            r.body["messages"][1]["content"]
                .as_str()
                .unwrap()
                .contains("T3_duplicates")
        );
    }
}

#[test]
fn at_l1_the_harness_asks_retry_or_skip_and_obeys() {
    let (s1, s2) = (scripted(solver), scripted(page_zero)); // "retry" and "Skip."
    let (retrier, skipper) = (agent(&s1, "retrier", false), agent(&s2, "skipper", false));
    for id in ["T4_rate_limit_429", "T5_server_error_500"] {
        let a = run(&retrier, id, 0, Level::L1, SubmissionProtocol::Full);
        let b = run(&skipper, id, 0, Level::L1, SubmissionProtocol::Full);
        let decisions = |r: &EpisodeRun| {
            r.transcript
                .events
                .iter()
                .filter_map(|e| match e {
                    Event::Decision { decision, .. } => Some(*decision),
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        use benchaudit_agents::FaultDecision::{Retry, Skip};
        assert_eq!(decisions(&a), vec![Retry], "{id}");
        assert_eq!(decisions(&b), vec![Skip], "{id}");
        assert_eq!((a.record.counts.retries, a.record.counts.skips), (1, 0));
        assert_eq!((b.record.counts.retries, b.record.counts.skips), (0, 1));
        assert_eq!(a.record.coverage, Some(1.0));
        assert!(
            b.record.coverage.unwrap() < 1.0,
            "{id}: skipping loses the page"
        );
        assert_eq!(a.record.usage.requests, 1, "one question per fault");
    }
    // The question carried the fault report.
    let asked = &s1.requests()[0].body;
    assert_eq!(classify(asked), Ask::Fault);
    let q = asked["messages"][1]["content"].as_str().unwrap();
    assert!(
        q.contains("\"status\": 429") && q.contains("\"attempt\": 1"),
        "{q}"
    );
    assert!(asked.get("tools").is_none());
}

#[test]
fn an_unreadable_l1_answer_is_counted_and_imputed_never_credited_to_the_model() {
    // Issue 11 (L1): the answer is counted in the episode's counts, the harness's decision is
    // recorded as imputed, and neither `retries` nor `skips` (the model's own decisions) moves.
    let server = Server::start(|_, r| {
        Reply::ok(text_reply(
            if classify(&r.body) == Ask::Fault {
                "hmm, maybe"
            } else {
                ""
            },
            3,
        ))
    });
    let a = agent(&server, "mumbler", false);
    let r = run(
        &a,
        "T4_rate_limit_429",
        0,
        Level::L1,
        SubmissionProtocol::Full,
    );
    let c = r.record.counts;
    assert_eq!(
        (c.faults_seen, c.malformed_decisions, c.imputed_decisions),
        (1, 1, 1)
    );
    assert_eq!(
        (c.retries, c.skips),
        (0, 0),
        "nothing credited to the model"
    );
    // The imputed decision is not a recovery: the page is lost, and coverage shows it.
    assert!(r.record.coverage.unwrap() < 1.0, "{:?}", r.record.coverage);
    let decision = r
        .transcript
        .events
        .iter()
        .find_map(|e| match e {
            benchaudit_agents::transcript::Event::Decision {
                decision, imputed, ..
            } => Some((*decision, *imputed)),
            _ => None,
        })
        .unwrap();
    assert_eq!(decision, (benchaudit_agents::FaultDecision::Skip, true));
    let t = r.transcript.messages.unwrap();
    assert_eq!(t["malformed_answers"], 1);
    assert_eq!(t["requests"][0]["parsed"], Value::Null);
}

#[test]
fn unreadable_l0_slots_fall_back_to_the_task_and_are_counted_in_the_record() {
    let server = Server::start(|_, _| Reply::ok(text_reply("I am not sure what you mean.", 9)));
    let a = agent(&server, "confused", false);
    let r = run(&a, "T3_duplicates", 0, Level::L0, SubmissionProtocol::Full);
    assert_eq!(f1(&r), 1.0);
    // local-llm.md defect 6: a garbage L0 answer must not look like a perfect one in the ledger.
    let c = r.record.counts;
    assert_eq!((c.malformed_decisions, c.imputed_decisions), (1, 1));
    assert_eq!(r.transcript.messages.unwrap()["malformed_answers"], 1);
}

#[test]
fn malformed_tool_calls_go_back_to_the_model_as_tool_errors_and_are_counted() {
    // First turn: an unreadable argument string and an unknown tool in one reply; then solve.
    let server = Server::start(|i, r| {
        if i == 0 {
            let body = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
                {"id": "bad1", "type": "function", "function": {"name": "fetch_page", "arguments": "{\"page\": 1"}},
                {"id": "bad2", "type": "function", "function": {"name": "download_all", "arguments": "{}"}}
            ]}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 5, "completion_tokens": 5}});
            return Reply::ok(body);
        }
        let msgs = r.body["messages"].as_array().unwrap();
        if i == 1 {
            // Both calls answered, by id, with the tool-error envelope every door gives
            // (unreadable arguments 422 with the legacy retry flag, an unknown tool 404),
            // before the next turn.
            let tool: Vec<&Value> = msgs.iter().filter(|m| m["role"] == "tool").collect();
            assert_eq!(tool.len(), 2);
            assert_eq!(
                (
                    tool[0]["tool_call_id"].as_str(),
                    tool[1]["tool_call_id"].as_str()
                ),
                (Some("bad1"), Some("bad2"))
            );
            let envelope = |t: &Value| -> Value {
                serde_json::from_str(t["content"].as_str().unwrap()).unwrap()
            };
            let (bad1, bad2) = (envelope(tool[0]), envelope(tool[1]));
            assert_eq!(
                (&bad1["status"], &bad1["retry"]),
                (&json!(422), &json!(true)),
                "{bad1}"
            );
            assert_eq!(
                (&bad2["status"], &bad2["retry"]),
                (&json!(404), &json!(false)),
                "{bad2}"
            );
            assert!(
                tool[1]["content"]
                    .as_str()
                    .unwrap()
                    .contains("unknown tool")
            );
            // The arguments go back as the model sent them.
            assert_eq!(
                msgs[2]["tool_calls"][0]["function"]["arguments"],
                "{\"page\": 1"
            );
        }
        // From here on, the solver (it ignores calls it did not make: it reads only results).
        let mut body = r.body.clone();
        let keep: Vec<Value> = msgs
            .iter()
            .filter(|m| {
                let bad_call = m["role"] == "assistant" && m["tool_calls"][0]["id"] == "bad1";
                let bad_result = m["role"] == "tool"
                    && m["tool_call_id"]
                        .as_str()
                        .is_some_and(|id| id.starts_with("bad"));
                !(bad_call || bad_result)
            })
            .cloned()
            .collect();
        body["messages"] = Value::Array(keep);
        Reply::ok(solver(&body))
    });
    let a = agent(&server, "sloppy", false);
    let r = run(&a, "T3_duplicates", 0, Level::L2, SubmissionProtocol::Full);
    assert_eq!(r.record.counts.malformed_calls, 2);
    assert_eq!(r.record.outcome, Outcome::Submitted);
    assert_eq!(f1(&r), 1.0);
    // Two calls from one reply: one model request for both.
    assert_eq!(r.record.usage.requests + 1, r.record.counts.tool_calls);
}

#[test]
fn parallel_tool_calls_are_all_executed_and_answered_in_order() {
    let server = Server::start(|i, r| {
        if i == 0 {
            return Reply::ok(call_reply(
                &r.body,
                &[
                    ("get_task_info", json!({})),
                    ("fetch_page", json!({"page": 1, "page_size": 10})),
                ],
                10,
            ));
        }
        let msgs = r.body["messages"].as_array().unwrap();
        if i == 1 {
            let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
            assert_eq!(roles, ["system", "user", "assistant", "tool", "tool"]);
            let ids: Vec<&str> = msgs[2]["tool_calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["id"].as_str().unwrap())
                .collect();
            assert_eq!(msgs[3]["tool_call_id"].as_str(), Some(ids[0]));
            assert_eq!(msgs[4]["tool_call_id"].as_str(), Some(ids[1]));
            assert!(msgs[4]["content"].as_str().unwrap().contains("\"rows\""));
        }
        Reply::ok(solver(&r.body))
    });
    let a = agent(&server, "parallel", false);
    let r = run(&a, "T3_duplicates", 0, Level::L2, SubmissionProtocol::Full);
    assert_eq!(f1(&r), 1.0, "{:?}", r.record.error);
    assert!(server.requests().len() >= 2);
}

#[test]
fn a_reply_without_a_tool_call_ends_the_episode_without_submission() {
    let server =
        Server::start(|_, _| Reply::ok(text_reply("I cannot access the data, sorry.", 12)));
    let a = agent(&server, "quitter", false);
    let r = run(&a, "T3_duplicates", 0, Level::L2, SubmissionProtocol::Full);
    assert_eq!(r.record.outcome, Outcome::NoSubmission);
    assert_eq!(f1(&r), 0.0);
    assert_eq!(r.record.counts.tool_calls, 0);
    let t = r.transcript.messages.unwrap();
    assert!(
        t["end"]
            .as_str()
            .unwrap()
            .contains("I cannot access the data")
    );
}

#[test]
fn chunked_and_ids_protocols_offer_their_tools() {
    let server = Server::start(|_, _| Reply::ok(text_reply("done", 1)));
    let a = agent(&server, "x", false);
    let _ = run(
        &a,
        "T3_duplicates",
        0,
        Level::L2,
        SubmissionProtocol::Chunked,
    );
    let _ = run(&a, "T3_duplicates", 0, Level::L2, SubmissionProtocol::Ids);
    let reqs = server.requests();
    let names = |r: &Recorded| -> Vec<String> {
        r.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(&reqs[0]),
        [
            "get_task_info",
            "fetch_page",
            "append_results",
            "submit_results"
        ]
    );
    assert_eq!(
        names(&reqs[1]),
        ["get_task_info", "fetch_page", "submit_results"]
    );
    let submit = &reqs[1].body["tools"][2]["function"]["parameters"];
    assert!(submit["properties"]["record_ids"].is_object());
}

/// The reply shape Qwen2.5 models sent through llama-server without a tool template
/// (local-llm.md: the call as plain content, bare or fenced JSON, no `<tool_call>` tags).
fn bare_json_call(req: &Value) -> Value {
    if llm_support::seen(req).is_empty() {
        text_reply(
            "```json\n{\"name\": \"get_task_info\", \"arguments\": {}}\n```",
            12,
        )
    } else {
        solver(req)
    }
}

#[test]
fn a_call_in_the_wrong_envelope_is_counted_as_malformed() {
    let server = Server::start(|_, r| Reply::ok(bare_json_call(&r.body)));
    let a = agent(&server, "qwen-shaped", false);
    let r = run(&a, "T3_duplicates", 0, Level::L2, SubmissionProtocol::Full);
    assert_eq!(r.record.outcome, Outcome::NoSubmission);
    assert_eq!(
        r.record.counts.malformed_calls, 1,
        "not silently 'no tool call'"
    );
    assert_eq!(r.record.counts.tool_calls, 0);
}

#[test]
fn the_lenient_reading_executes_a_wrong_envelope_call_and_says_so() {
    let server = Server::start(|_, r| Reply::ok(bare_json_call(&r.body)));
    let mut o = AgentOptions {
        retry: fast_retry(),
        ..AgentOptions::default()
    };
    o.overrides.base_url = Some(server.base_url());
    o.overrides.lenient_calls = true;
    let a = build_agents(&["local:qwen-shaped".to_string()], &o)
        .unwrap()
        .remove(0);
    assert!(serde_json::to_value(a.config()).unwrap()["lenient_calls"] == true);
    let r = run(&a, "T3_duplicates", 0, Level::L2, SubmissionProtocol::Full);
    assert_eq!(r.record.outcome, Outcome::Submitted);
    assert_eq!(f1(&r), 1.0);
    assert_eq!(calls(&r)[0].0, "get_task_info");
    let t = r.transcript.messages.unwrap();
    assert_eq!(t["requests"][0]["lenient_calls"], 1);
}

#[test]
fn absurd_usage_from_a_provider_saturates_instead_of_overflowing() {
    // Issue 12: a provider may send prompt_tokens near u64::MAX.
    let server = Server::start(|_, r| {
        let mut reply = solver(&r.body);
        reply["usage"]["prompt_tokens"] = json!(u64::MAX);
        Reply::ok(reply)
    });
    let a = agent(&server, "absurd", false);
    let r = run(&a, "T3_duplicates", 0, Level::L2, SubmissionProtocol::Full);
    assert_eq!(r.record.outcome, Outcome::Submitted);
    // Rejected as implausible (read as 0), so the sum stays a measurement.
    assert_eq!(r.record.usage.prompt_tokens, 0);
    assert!(r.record.usage.completion_tokens > 0);
}

#[test]
fn tool_choice_is_sent_only_when_asked_for() {
    let server = Server::start(|_, r| Reply::ok(solver(&r.body)));
    let a = agent(&server, "plain", false);
    run(&a, "T3_duplicates", 0, Level::L2, SubmissionProtocol::Full);
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.body.get("tool_choice").is_none())
    );
    let server = Server::start(|_, r| Reply::ok(solver(&r.body)));
    let mut o = AgentOptions {
        retry: fast_retry(),
        ..AgentOptions::default()
    };
    o.overrides.base_url = Some(server.base_url());
    o.overrides.tool_choice = Some("auto".into());
    let a = build_agents(&["local:cpp-python".to_string()], &o)
        .unwrap()
        .remove(0);
    run(&a, "T3_duplicates", 0, Level::L2, SubmissionProtocol::Full);
    let reqs = server.requests();
    assert!(
        reqs.iter().all(|r| r.body["tool_choice"] == "auto"),
        "native L2 turns"
    );
}
