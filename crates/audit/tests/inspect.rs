//! Inspect tasks through Inspect's own runtime (`inspect-ai` and `inspect-evals` in
//! `targets/inspect/.venv`, installed by `targets/inspect/setup.sh`). Without the venv the
//! tests say so and return, unless `BENCHAUDIT_REQUIRE_INSPECT` is set (as
//! `targets/inspect/ci.sh` sets it), when they fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

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
