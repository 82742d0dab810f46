//! Inspect tasks through Inspect's own runtime (`inspect-ai` and `inspect-evals` in
//! `targets/inspect/.venv`, installed by `targets/inspect/setup.sh`). Without the venv the
//! tests say so and return, unless `BENCHAUDIT_REQUIRE_INSPECT` is set (as
//! `targets/inspect/ci.sh` sets it), when they fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../agents/tests/llm_support/mod.rs"]
mod llm_support;

use std::collections::BTreeMap;
use std::path::PathBuf;

use benchaudit_audit::answers::{self, forge::Format};
use benchaudit_audit::external::ExternalTarget;
use benchaudit_audit::{Claim, Status};

fn target_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../targets/inspect")
}

fn ready() -> bool {
    let py = target_dir().join(".venv/bin/python");
    if py.exists() {
        return true;
    }
    assert!(
        std::env::var_os("BENCHAUDIT_REQUIRE_INSPECT").is_none(),
        "BENCHAUDIT_REQUIRE_INSPECT is set but {} is missing: run targets/inspect/setup.sh",
        py.display()
    );
    eprintln!("skipped: run targets/inspect/setup.sh first");
    false
}

fn target(task: &str) -> ExternalTarget {
    ExternalTarget::load(&target_dir().join("target.toml"))
        .unwrap()
        .with_task(task.into(), serde_json::Map::new(), None)
}

#[test]
fn boolq_s_pattern_scorer_reads_a_bare_yes_and_separates_every_forgery() {
    if !ready() {
        return;
    }
    let t = target("inspect_evals/boolq");
    let a = answers::audit("boolq", &t, &t.answers_config().unwrap());
    assert!(a.failures.is_empty(), "{:?}", a.failures);
    assert_eq!(a.packages["inspect_ai"], "0.3.285");
    assert_eq!(a.samples_total, 8, "the shipped samples file");
    // The prompt asks for Yes or No and nothing else; the pattern anchors at the start.
    assert_eq!(a.format.as_ref().unwrap().chosen, Format::Bare);
    assert_eq!(
        a.card.criterion_sensitivity.status,
        Status::Pass,
        "{}",
        a.card.criterion_sensitivity.evidence
    );
    assert_eq!(
        a.card.ownership.status,
        Status::Pass,
        "{}",
        a.card.ownership.evidence
    );
    assert_eq!(a.card.replay.status, Status::Pass);
    assert_eq!(a.card.licensed_claim, Claim::ModelCapability);
    let answer_line = a.scorers[0]
        .separation
        .rates
        .iter()
        .find(|r| r.forgery == "target_as_answer_line")
        .unwrap();
    assert_eq!(
        answer_line.rejected, 8,
        "`ANSWER: Yes` is graded as wrong format"
    );
}

#[test]
fn refusals_and_unknown_tasks_are_not_probed_with_their_cause() {
    if !ready() {
        return;
    }
    for (task, says) in [
        (
            "inspect_evals/no_such_family",
            "inspect_evals has no task 'no_such_family'",
        ),
        ("inspect_evals/humaneval", "sandbox"),
        ("inspect_evals/simpleqa", "downloads https://"),
        ("inspect_evals/simpleqa_verified", "model-graded"),
    ] {
        let t = target(task);
        let a = answers::audit(task, &t, &t.answers_config().unwrap());
        let c = &a.card.criterion_sensitivity;
        assert_eq!(c.status, Status::NotProbed, "{task}: {}", c.evidence);
        assert!(c.evidence.contains(says), "{task}: {}", c.evidence);
        assert_eq!(a.card.licensed_claim, Claim::None, "{task}");
    }
}

/// `audit --model` on an Inspect task: a scripted OpenAI-compatible model answers through
/// Inspect's own provider, the task's own `multiple_choice` solver and `choice` scorer, one
/// eval per seed; the statistics are recomputed here from the samples' answer keys.
#[test]
fn a_model_through_the_task_gives_worst_case_cvar_and_pass_k_over_seeds() {
    use benchaudit_audit::answers::model_runs::ModelRunSettings;
    use benchaudit_audit::trajectories::compare::ModelEndpoint;
    use llm_support::{Reply, Server};
    use serde_json::{Value, json};

    if !ready() {
        return;
    }
    // Seed 0 answers B, seed 1 C, seed 2 B, whatever the question.
    let letter = |seed: u64| if seed == 1 { "C" } else { "B" };
    let server = Server::start(move |_, r| {
        let seed = r.body["seed"].as_u64().unwrap_or(99);
        Reply::ok(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": format!("ANSWER: {}", letter(seed))}}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 3, "total_tokens": 43}
        }))
    });
    let logs = tempfile::tempdir().unwrap();
    let t = target("inspect_evals/arc_easy");
    let mut config = t.answers_config().unwrap();
    let seeds = [0, 1, 2];
    config.model = Some(ModelRunSettings {
        models: vec![ModelEndpoint {
            name: "scripted:m".into(),
            model: "m".into(),
            base_url: server.base_url(),
            api_key_env: None,
        }],
        samples: 3,
        seeds: seeds.to_vec(),
        max_tokens: Some(16),
        logs: Some((logs.path().join("arc"), "inspect-logs/arc".into())),
    });
    let a = answers::audit("arc_easy", &t, &config);
    let [m] = a.model_runs.as_slice() else {
        panic!("one model: {:?}", a.model_runs)
    };
    assert_eq!(m.not_probed, None);
    assert_eq!(m.samples, a.probed[..3], "the first three probed samples");
    // Every request carried its trial's seed and the output bound; nine trials, one call each.
    let requests = server.requests();
    assert_eq!(requests.len(), 9);
    let mut by_seed: BTreeMap<u64, usize> = BTreeMap::new();
    for r in &requests {
        *by_seed.entry(r.body["seed"].as_u64().unwrap()).or_default() += 1;
        assert_eq!(r.body["max_tokens"], 16, "{}", r.raw);
    }
    assert_eq!(by_seed, BTreeMap::from([(0, 3), (1, 3), (2, 3)]));
    assert_eq!((m.requests, m.failed_requests), (9, 0));
    // One Inspect log per seed, where the audit folder names them.
    assert_eq!(m.logs.len(), 3, "{:?}", m.logs);
    for (seed, log) in seeds.iter().zip(&m.logs) {
        let prefix = format!("inspect-logs/arc/scripted_m/seed-{seed}/");
        assert!(log.starts_with(&prefix) && log.ends_with(".eval"), "{log}");
        let file = logs.path().join(log.strip_prefix("inspect-logs/").unwrap());
        assert!(file.is_file(), "{}", file.display());
    }
    // The expected scores from the samples' own answer keys.
    let keys: BTreeMap<String, String> =
        std::fs::read_to_string(target_dir().join("samples/arc_easy.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|v| {
                (
                    v["id"].as_str().unwrap().to_string(),
                    v["answerKey"].as_str().unwrap().to_string(),
                )
            })
            .collect();
    let [choice] = m.scorers.as_slice() else {
        panic!("one scorer: {:?}", m.scorers)
    };
    assert_eq!(choice.name, "choice");
    assert_eq!((choice.scored, choice.unscored), (9, 0));
    let mut all = Vec::new();
    let mut every = 0.0;
    for (row, id) in choice.samples.iter().zip(&m.samples) {
        let xs: Vec<f64> = seeds
            .iter()
            .map(|s| f64::from(u8::from(keys[id] == letter(*s))))
            .collect();
        assert_eq!(row.sample, *id);
        assert_eq!(row.trials.seeds, 3);
        assert_eq!(row.trials.mean, xs.iter().sum::<f64>() / 3.0, "{id}");
        assert_eq!(
            row.trials.worst,
            xs.iter().copied().fold(1.0, f64::min),
            "{id}"
        );
        // CVaR at 0.2 over three trials is the lowest one.
        assert_eq!(row.trials.cvar, row.trials.worst, "{id}");
        let passed_all = xs.iter().all(|x| *x == 1.0);
        assert_eq!(
            row.trials.pass_hat_k,
            f64::from(u8::from(passed_all)),
            "{id}"
        );
        every += f64::from(u8::from(passed_all)) / 3.0;
        all.extend(xs);
    }
    assert_eq!(choice.mean, Some(all.iter().sum::<f64>() / 9.0));
    let last = choice.pass_k.last().unwrap();
    assert_eq!(last.k, 3);
    assert!((last.pass_hat_k.estimate - every).abs() < 1e-12, "{last:?}");
    // The key-free card is untouched by the model's scores.
    assert_eq!(a.card.licensed_claim, Claim::ModelCapability);
}
