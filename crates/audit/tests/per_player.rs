//! Issue 11, the audit: non-degeneracy judged per player (the card's L1 row shows the oracle's
//! degenerate skip channel; each model gets its own verdict), replay of every player with
//! models replayed from their recorded provider responses, and the model-capability claim
//! licensed only on the tasks the solvability stage finds solvable within the output budget.
//! The models are scripted OpenAI-compatible servers on 127.0.0.1 (the agents crate's test
//! support), so nothing here needs a key.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../agents/tests/llm_support/mod.rs"]
mod llm_support;

use std::time::Duration;

use benchaudit_agents::llm::{AgentOptions, LlmAgent, RetryPolicy, build_agents};
use benchaudit_agents::{EpisodeSpec, Level, RunOptions, run_episode};
use benchaudit_audit::replay::{self, RecordedEpisode};
use benchaudit_audit::{
    AuditConfig, Claim, ComtradeAudit, ComtradeTarget, Configuration, Status, audit_comtrade,
};
use benchaudit_comtrade::task;
use benchaudit_runs::Player;
use llm_support::{Ask, Recorded, Reply, Server, classify, solver, text_reply};
use serde_json::Value;

fn targets() -> [ComtradeTarget; 2] {
    [
        ComtradeTarget::new(Configuration::AsShipped),
        ComtradeTarget::new(Configuration::Repaired),
    ]
}

fn agent(server: &Server, model: &str) -> LlmAgent {
    let mut o = AgentOptions {
        retry: RetryPolicy {
            max_attempts: 2,
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(20),
            max_retry_after: Duration::from_secs(1),
        },
        ..AgentOptions::default()
    };
    o.overrides.base_url = Some(server.base_url());
    build_agents(&[format!("local:{model}")], &o)
        .unwrap()
        .remove(0)
}

/// The solver, except that at L1 it skips every fault of T4 (and retries elsewhere): its own
/// retry channel varies, and skipping costs rows.
fn choosy(req: &Value) -> Value {
    if matches!(classify(req), Ask::Fault) {
        let asked = req.to_string();
        return text_reply(
            if asked.contains("T4_rate_limit_429") {
                "skip"
            } else {
                "retry"
            },
            1,
        );
    }
    solver(req)
}

fn scripted(model: fn(&Value) -> Value) -> Server {
    Server::start(move |_, r: &Recorded| Reply::ok(model(&r.body)))
}

fn verdict<'a>(a: &'a ComtradeAudit, card: usize, level: &str, player: &str) -> &'a Status {
    &a.cards[card]
        .non_degeneracy
        .iter()
        .find(|v| v.level == level && v.player == player)
        .unwrap_or_else(|| panic!("no {level} row for {player}"))
        .verdict
        .status
}

fn evidence(a: &ComtradeAudit, card: usize, level: &str, player: &str) -> String {
    a.cards[card]
        .non_degeneracy
        .iter()
        .find(|v| v.level == level && v.player == player)
        .unwrap()
        .verdict
        .evidence
        .clone()
}

#[test]
fn the_l1_row_judges_the_oracles_skip_channel_degenerate_and_verdicts_stay() {
    let a = audit_comtrade(&AuditConfig::key_free(2, 2), &targets()).unwrap();
    // The shipped verdicts are unchanged.
    assert_eq!(a.cards[0].licensed_claim, Claim::SelfReportCompliance);
    assert_eq!(a.cards[1].licensed_claim, Claim::ModelCapability);
    assert!(a.checks.iter().all(|c| c.pass), "{:#?}", a.checks);

    // Per player: the oracle never skips at L1, so its own retry channel is degenerate.
    let oracle_l1 = a
        .channels
        .iter()
        .find(|c| c.level == "L1" && c.player == "oracle")
        .unwrap();
    let retry = oracle_l1
        .channels
        .iter()
        .find(|c| c.decision == "retry")
        .unwrap();
    assert!(retry.episodes > 0 && retry.deviant == 0 && !retry.non_degenerate);
    // Pooled with skips-faults (built to skip) the same channel looked non-degenerate: that
    // pool is now only the calibration, never a player's verdict.
    let pooled = a.calibration.iter().find(|(l, _)| l == "L1").unwrap();
    assert!(
        pooled
            .1
            .iter()
            .any(|c| c.decision == "retry" && c.non_degenerate)
    );

    // The calibration pairs each decision's stand-in with the oracle only: at L2 the retry
    // channel's "not deviant" group is the oracle's (and the stand-in's) retried faults, not
    // the empty or fabricated submissions of stand-ins deviating elsewhere.
    let l2 = a.calibration.iter().find(|(l, _)| l == "L2").unwrap();
    let retry2 = l2.1.iter().find(|c| c.decision == "retry").unwrap();
    assert_eq!(retry2.mean_y.1, Some(1.0), "{retry2:?}");
    assert!(retry2.non_degenerate && retry2.mean_y.0 < Some(1.0));

    // Both cards carry the L1 row beside the scored level.
    for card in 0..2 {
        assert_eq!(*verdict(&a, card, "L1", "oracle"), Status::Fail);
        let e = evidence(&a, card, "L1", "oracle");
        assert!(
            e.contains(&format!("retry: skip chosen 0 of {}", retry.episodes)),
            "{e}"
        );
    }
    // As shipped, L0 leaves the model no claimed decision: nothing to judge.
    assert_eq!(*verdict(&a, 0, "L0", "oracle"), Status::NotProbed);
    // The oracle is deterministic and right on every decision: at L2 too its own choices never
    // vary (shown, not hidden; the ownership cell rests on the calibration).
    assert_eq!(*verdict(&a, 1, "L2", "oracle"), Status::Fail);
    assert_eq!(a.cards[1].ownership.status, Status::Pass);
    assert!(
        a.cards[1]
            .ownership
            .evidence
            .contains("outcome-sensitive in calibration")
    );
    // No stand-in is judged.
    assert!(
        a.cards
            .iter()
            .flat_map(|c| &c.non_degeneracy)
            .all(|v| v.player == "oracle")
    );
}

#[test]
fn model_capability_is_licensed_only_on_tasks_solvable_within_the_output_budget() {
    let a = audit_comtrade(&AuditConfig::key_free(1, 2), &targets()).unwrap();
    let scope = a.cards[1]
        .claim_scope
        .as_ref()
        .expect("repaired card names its tasks");
    let bound: Vec<&str> = a
        .re_emission
        .iter()
        .filter(|r| r.scale_bound)
        .map(|r| r.task.as_str())
        .collect();
    // The stage's own finding (full re-emission above both output budgets): T1 and T2 as
    // well as the paper's T7.
    assert_eq!(bound, ["T1_single_page", "T2_multi_page", "T7_totals_trap"]);
    let excluded: Vec<&str> = scope.excluded.iter().map(|e| e.task.as_str()).collect();
    assert_eq!(excluded, bound);
    assert!(scope.excluded.iter().all(|e| e.reason == "scale-bound"));
    assert!(!scope.holds_on.iter().any(|t| bound.contains(&t.as_str())));
    assert_eq!(scope.holds_on.len(), a.re_emission.len() - bound.len());
    let label = scope.label();
    assert!(
        label.ends_with("; T1, T2, T7 excluded: scale-bound"),
        "{label}"
    );
    // Two tasks share the short id T9: both are written in full.
    assert!(label.starts_with("on T3, "), "{label}");
    assert!(
        label.contains("T9_adaptive_adversary") && label.contains("T9_clean_ab"),
        "{label}"
    );
    // A claim that is not model capability is not scoped.
    assert!(a.cards[0].claim_scope.is_none());
    // The reliability spectrum (the headline aggregate) pools only the solvable execution
    // tasks: five of the six, one seed each.
    assert!(!a.solvable_tasks.iter().any(|t| t == "T7_totals_trap"));
    let oracle_l2 = a
        .reliability
        .iter()
        .find(|r| r.player == "oracle" && r.level == "L2")
        .unwrap();
    assert_eq!(oracle_l2.summary.n, 5);
}

#[test]
fn each_model_gets_its_own_verdict_and_is_replayed_from_its_recorded_responses() {
    let retries = scripted(solver);
    let choosy_server = scripted(choosy);
    let mut config = AuditConfig::key_free(1, 2);
    let always_retry = agent(&retries, "always-retry-model");
    let choosy_agent = agent(&choosy_server, "choosy-model");
    let (retry_name, choosy_name) = (always_retry.name(), choosy_agent.name());
    config.players.push(Player::model(always_retry));
    config.players.push(Player::model(choosy_agent));
    let a = audit_comtrade(&config, &targets()).unwrap();

    // The model that always retries at L1: "skip chosen 0 of n", exactly the paper's finding.
    assert_eq!(*verdict(&a, 1, "L1", &retry_name), Status::Fail);
    assert!(evidence(&a, 1, "L1", &retry_name).contains("retry: skip chosen 0 of"));
    // The model that skips on T4 and retries elsewhere: its own channel varies and moves F1.
    assert_eq!(
        *verdict(&a, 1, "L1", &choosy_name),
        Status::Pass,
        "{}",
        evidence(&a, 1, "L1", &choosy_name)
    );
    // The lattice verdicts stay the configuration's.
    assert_eq!(a.cards[1].licensed_claim, Claim::ModelCapability);

    // Replay covers every player: all rule players of the plan and both models, the models
    // from their recorded provider responses (no second call to the model).
    for p in [
        "oracle",
        "no-dedup",
        "skips-faults",
        retry_name.as_str(),
        choosy_name.as_str(),
    ] {
        assert!(a.replay.players.iter().any(|q| q == p), "{p} not replayed");
    }
    // 2 models × 3 levels × 6 execution tasks × 1 seed.
    assert_eq!(a.replay.model_episodes, 36);
    assert!(a.replay.mismatches.is_empty(), "{:?}", a.replay.mismatches);
    assert_eq!(a.replay.episodes, a.replay.rule_episodes + 36);
    assert!(
        a.cards[1]
            .replay
            .evidence
            .contains("36 model episodes replayed")
    );
}

#[test]
fn a_model_replay_that_does_not_reproduce_its_record_is_a_mismatch() {
    let server = scripted(solver);
    let agent = agent(&server, "solver");
    let spec = EpisodeSpec {
        task: task("T3_duplicates").unwrap(),
        seed: 0,
        level: Level::L2,
        options: RunOptions::default(),
    };
    let run = run_episode(&spec, &mut agent.policy());
    let recorded = RecordedEpisode {
        config: agent.config().clone(),
        spec,
        record: run.record.clone(),
        log: run.transcript.messages.clone(),
    };
    let asked_before = server.requests().len();
    let same = replay::run(
        Vec::new(),
        &[Level::L2],
        &[],
        &[],
        1,
        std::slice::from_ref(&recorded),
    )
    .unwrap();
    assert_eq!((same.model_episodes, same.mismatches.len()), (1, 0));
    assert_eq!(
        server.requests().len(),
        asked_before,
        "replay must not call the model"
    );

    // The last recorded response lost: the replayed episode cannot submit, so its record
    // differs and replay fails.
    let mut cut = recorded;
    let log = cut.log.as_mut().unwrap();
    log["requests"].as_array_mut().unwrap().pop();
    let r = replay::run(Vec::new(), &[Level::L2], &[], &[], 1, &[cut]).unwrap();
    assert_eq!(r.mismatches.len(), 1, "{r:?}");
    assert_eq!(replay::cell(&r).status, Status::Fail);
}
