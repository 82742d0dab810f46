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
    let a = audit_external(&target, 0).unwrap();
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
    // The declared map gives the model every claimed decision, but nothing is measured by runs.
    assert_eq!(a.card.ownership.status, Status::NotProbed);
    assert_eq!(a.card.replay.status, Status::NotProbed);
    assert_eq!(
        a.card.licensed_claim.label(),
        "none",
        "an outcome scorer over an unprobed scaffold licenses nothing"
    );
}

#[test]
fn missing_hooks_make_cells_not_probed() {
    let target = ExternalTarget::load(&fixture("partial")).unwrap();
    assert!(target.ownership().is_none());
    assert!(target.truth("t1", 0).is_none());
    let a = audit_external(&target, 0).unwrap();
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
