//! External targets through hook commands: a complete toy benchmark with an outcome scorer,
//! and one whose hooks are partly missing (its cells must read "not probed", never "pass").
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use benchaudit_audit::external::ExternalTarget;
use benchaudit_audit::{Status, Target, audit_external};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .join("target.toml")
}

#[test]
fn an_outcome_scorer_passes_criterion_sensitivity() {
    let target = ExternalTarget::load(&fixture("toy")).unwrap();
    let a = audit_external(&target, &[0], None).unwrap();
    assert_eq!(a.sensitivity.len(), 2, "both registry tasks probed");
    assert_eq!(
        a.card.criterion_sensitivity.status,
        Status::Pass,
        "{}",
        a.card.criterion_sensitivity.evidence
    );
    // Seed 3 comes from the registry for t1.
    assert!(a.probes.iter().any(|p| p.task == "t1" && p.seed == 3));
    let correct = a
        .probes
        .iter()
        .find(|p| p.task == "t2" && p.kind.name() == "correct")
        .unwrap();
    assert_eq!(correct.target_score, Some(1.0));
    // The declared map gives the model every claimed decision, but nothing is measured.
    assert_eq!(a.card.ownership.status, Status::NotProbed);
    // A second round of hook calls reproduces every battery.
    assert_eq!(
        a.card.replay.status,
        Status::Pass,
        "{}",
        a.card.replay.evidence
    );
    assert_eq!(
        a.card.licensed_claim.label(),
        "none",
        "an outcome scorer over an unprobed scaffold licenses nothing"
    );
    let raise = a.card.to_raise_the_claim.as_deref().unwrap();
    assert!(
        raise.contains("ownership map measured by intervention"),
        "{raise}"
    );
}

#[test]
fn missing_hooks_make_cells_not_probed() {
    let target = ExternalTarget::load(&fixture("partial")).unwrap();
    assert!(target.ownership().is_none());
    assert!(target.truth("t1", 0).is_none());
    let a = audit_external(&target, &[0], None).unwrap();
    assert_eq!(
        a.card.criterion_sensitivity.status,
        Status::NotProbed,
        "{}",
        a.card.criterion_sensitivity.evidence
    );
    assert_eq!(a.card.ownership.status, Status::NotProbed);
    assert_eq!(a.card.replay.status, Status::NotProbed);
    assert!(a.probes.is_empty());
    assert_eq!(a.card.licensed_claim.label(), "none");
}

#[test]
fn broken_manifests_and_hooks_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("target.toml");
    std::fs::write(&bad, "name = 3").unwrap();
    assert!(
        ExternalTarget::load(&bad)
            .unwrap_err()
            .contains("not a target manifest")
    );
    std::fs::write(&bad, "name = \"x\"\n[hooks]\ntruth = []").unwrap();
    assert!(
        ExternalTarget::load(&bad)
            .unwrap_err()
            .contains("empty command")
    );
    std::fs::write(&bad, "name = \"x\"\n[hooks]\nregistry = [\"sh\", \"-c\", \"echo not-json\"]\ntruth = [\"sh\", \"-c\", \"exit 3\"]").unwrap();
    let t = ExternalTarget::load(&bad).unwrap();
    assert!(
        t.registry().is_none(),
        "an unreadable registry is treated as absent"
    );
    assert!(t.truth("a", 0).unwrap().unwrap_err().contains("exited"));
    assert!(ExternalTarget::load(&dir.path().join("missing.toml")).is_err());
}

/// A manifest in a fresh folder beside a copy of the toy hooks, with `extra` appended and the
/// `[hooks]` table given by `hooks`.
fn toy_with(hooks: &str, extra: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let toy = fixture("toy");
    std::fs::copy(toy.with_file_name("hooks.py"), dir.path().join("hooks.py")).unwrap();
    let manifest = dir.path().join("target.toml");
    std::fs::write(
        &manifest,
        format!(
            "name = \"toy\"\nscorer_kind = \"outcome\"\nresolution = 1e-9\n{extra}\n[hooks]\n{hooks}\n"
        ),
    )
    .unwrap();
    (dir, manifest)
}

const TOY_HOOKS: &str = r#"registry = ["python3", "hooks.py", "registry"]
truth = ["python3", "hooks.py", "truth"]
score = ["python3", "hooks.py", "score"]"#;

#[test]
fn a_failing_registry_hook_is_not_probed_with_its_cause_and_stderr_never_a_fail() {
    for (registry, cause) in [
        (
            r#"["sh", "-c", "echo registry-broke >&2; exit 3"]"#,
            "exited",
        ),
        (
            r#"["sh", "-c", "echo garbage; echo registry-broke >&2"]"#,
            "did not answer JSON",
        ),
        (
            r#"["sh", "-c", "echo '{\"tasks\": 7}'; echo registry-broke >&2"]"#,
            "does not fit the protocol",
        ),
        (
            r#"["sh", "-c", "echo '{\"nothing\": 1}'; echo registry-broke >&2"]"#,
            "no 'tasks' array",
        ),
        (r#"["/nonexistent/registry-hook"]"#, "cannot start"),
    ] {
        let hooks = format!(
            "registry = {registry}\ntruth = [\"python3\", \"hooks.py\", \"truth\"]\nscore = [\"python3\", \"hooks.py\", \"score\"]"
        );
        let (_dir, manifest) = toy_with(&hooks, "");
        let target = ExternalTarget::load(&manifest).unwrap();
        let a = audit_external(&target, &[0], None).unwrap();
        let cell = &a.card.criterion_sensitivity;
        assert_eq!(
            cell.status,
            Status::NotProbed,
            "{registry}: {}",
            cell.evidence
        );
        assert!(
            cell.evidence.starts_with("the registry hook failed: `"),
            "{}",
            cell.evidence
        );
        assert!(cell.evidence.contains(cause), "{cause}: {}", cell.evidence);
        if !registry.contains("nonexistent") {
            assert!(
                cell.evidence.contains("registry-broke"),
                "stderr tail: {}",
                cell.evidence
            );
        }
        assert_ne!(a.card.scorer_kind, benchaudit_audit::ScorerKind::Shape);
        assert_eq!(a.card.licensed_claim.label(), "none");
    }
}

#[test]
fn a_failing_score_hook_with_non_finite_numbers_is_not_probed_and_never_shape() {
    for score in [
        r#"["sh", "-c", "cat >/dev/null; echo '{\"score\": NaN}'; echo nan-score >&2"]"#,
        r#"["sh", "-c", "cat >/dev/null; echo '{\"score\": 1e999}'; echo nan-score >&2"]"#,
        r#"["sh", "-c", "cat >/dev/null; echo '{\"score\": \"high\"}'; echo nan-score >&2"]"#,
    ] {
        let hooks = format!(
            "registry = [\"python3\", \"hooks.py\", \"registry\"]\ntruth = [\"python3\", \"hooks.py\", \"truth\"]\nscore = {score}"
        );
        let (_dir, manifest) = toy_with(&hooks, "");
        let a = audit_external(&ExternalTarget::load(&manifest).unwrap(), &[0], None).unwrap();
        let cell = &a.card.criterion_sensitivity;
        assert_eq!(cell.status, Status::NotProbed, "{score}: {}", cell.evidence);
        assert!(
            cell.evidence.contains("score hook failed"),
            "{}",
            cell.evidence
        );
        assert_eq!(
            a.card.scorer_kind,
            benchaudit_audit::ScorerKind::Outcome,
            "declared, not shape"
        );
    }
}

#[test]
fn a_failing_ownership_hook_is_not_probed_with_its_cause_and_stderr() {
    for (ownership, cause) in [
        (r#"["sh", "-c", "echo owner-broke >&2; exit 1"]"#, "exited"),
        (
            r#"["sh", "-c", "echo '{\"entries\": 3}'; echo owner-broke >&2"]"#,
            "does not fit the protocol",
        ),
        (
            r#"["sh", "-c", "echo '[1,'; echo owner-broke >&2"]"#,
            "did not answer JSON",
        ),
    ] {
        let hooks = format!("{TOY_HOOKS}\nownership = {ownership}");
        let (_dir, manifest) = toy_with(&hooks, "");
        let a = audit_external(&ExternalTarget::load(&manifest).unwrap(), &[0], None).unwrap();
        let cell = &a.card.ownership;
        assert_eq!(
            cell.status,
            Status::NotProbed,
            "{ownership}: {}",
            cell.evidence
        );
        assert!(
            cell.evidence.starts_with("the ownership hook failed: `"),
            "{}",
            cell.evidence
        );
        assert!(cell.evidence.contains(cause), "{cause}: {}", cell.evidence);
        assert!(cell.evidence.contains("owner-broke"), "{}", cell.evidence);
        // The criterion cell is unaffected.
        assert_eq!(a.card.criterion_sensitivity.status, Status::Pass);
    }
}

#[test]
fn measured_scaffold_variance_reaches_model_scaffold_system_performance() {
    // The toy declares the model owns every claimed decision: by declaration alone the
    // ownership cell is not probed and nothing is licensed (above). Measured variance over
    // native scaffolds is a measurement.
    let own = "ownership = [\"python3\", \"hooks.py\", \"ownership\"]";
    let (_dir, manifest) = toy_with(
        &format!("{TOY_HOOKS}\n{own}"),
        "[scaffold_variance]\nmodel = \"m\"\nscores = { react = 0.48, tool-calling = 0.61, plan = 0.55 }\n",
    );
    let a = audit_external(&ExternalTarget::load(&manifest).unwrap(), &[0], None).unwrap();
    assert_eq!(
        a.card.ownership.status,
        Status::Fail,
        "{}",
        a.card.ownership.evidence
    );
    assert!(a.card.ownership.evidence.starts_with("measured: m scores plan 0.55, react 0.48, tool-calling 0.61 under its 3 native scaffolds (spread 0.130"), "{}", a.card.ownership.evidence);
    assert_eq!(
        a.card.licensed_claim.label(),
        "model–scaffold system performance"
    );
    assert_eq!(a.scaffold_spread, Some(0.13));

    // The same numbers from a hook.
    let hook = r#"scaffold_variance = ["sh", "-c", "echo '{\"model\": \"m\", \"scores\": {\"a\": 0.2, \"b\": 0.9}}'"]"#;
    let (_dir2, manifest) = toy_with(&format!("{TOY_HOOKS}\n{hook}"), "");
    let a = audit_external(&ExternalTarget::load(&manifest).unwrap(), &[0], None).unwrap();
    assert_eq!(
        a.card.ownership.status,
        Status::Fail,
        "{}",
        a.card.ownership.evidence
    );
    assert_eq!(
        a.card.licensed_claim.label(),
        "model–scaffold system performance"
    );

    // No spread: the scaffold does not move the score; without a map nothing is measured.
    let (_dir3, manifest) = toy_with(
        TOY_HOOKS,
        "[scaffold_variance]\nmodel = \"m\"\nscores = { a = 0.5, b = 0.5 }\n",
    );
    let a = audit_external(&ExternalTarget::load(&manifest).unwrap(), &[0], None).unwrap();
    assert_eq!(
        a.card.ownership.status,
        Status::NotProbed,
        "{}",
        a.card.ownership.evidence
    );

    // A failing variance hook is not probed with its cause; bad numbers refuse the manifest.
    let hook = r#"scaffold_variance = ["sh", "-c", "echo '{\"model\": \"m\", \"scores\": {\"a\": 0.2}}'; echo var-broke >&2"]"#;
    let (_dir4, manifest) = toy_with(&format!("{TOY_HOOKS}\n{hook}"), "");
    let a = audit_external(&ExternalTarget::load(&manifest).unwrap(), &[0], None).unwrap();
    assert_eq!(a.card.ownership.status, Status::NotProbed);
    assert!(a.card.ownership.evidence.contains("scaffold_variance hook failed: `scaffold variance needs the scores of at least two scaffolds"), "{}", a.card.ownership.evidence);
    for bad in [
        "[scaffold_variance]\nmodel = \"m\"\nscores = { a = 0.5 }\n",
        "[scaffold_variance]\nmodel = \"m\"\nscores = { a = 0.5, b = nan }\n",
        "[scaffold_variance]\nmodel = \"m\"\nscores = { a = 0.5, b = inf }\n",
    ] {
        let (_d, manifest) = toy_with(TOY_HOOKS, bad);
        let e = ExternalTarget::load(&manifest).unwrap_err();
        assert!(e.contains("scaffold variance"), "{e}");
    }
}
