//! BFCL through its released checker (`bfcl-eval` in `targets/bfcl/.venv`, installed by
//! `targets/bfcl/setup.sh`). Without the venv the tests that need it say so and return, unless
//! `BENCHAUDIT_REQUIRE_BFCL` is set (as `targets/bfcl/ci.sh` sets it), when they fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use benchaudit_audit::calls::{self, CallsConfig, forge::Forgery};
use benchaudit_audit::external::ExternalTarget;
use benchaudit_audit::{Claim, Status};

fn target_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../targets/bfcl")
}

fn ready() -> bool {
    let py = target_dir().join(".venv/bin/python");
    if py.exists() {
        return true;
    }
    assert!(
        std::env::var_os("BENCHAUDIT_REQUIRE_BFCL").is_none(),
        "BENCHAUDIT_REQUIRE_BFCL is set but {} is missing: run targets/bfcl/setup.sh",
        py.display()
    );
    eprintln!("skipped: run targets/bfcl/setup.sh first");
    false
}

fn small(categories: &[&str], sample: usize) -> CallsConfig {
    CallsConfig {
        categories: categories.iter().map(|s| s.to_string()).collect(),
        sample: Some(sample),
        seed: 0,
        forgeries: None,
    }
}

#[test]
fn the_released_checker_separates_python_calls_and_replays() {
    if !ready() {
        return;
    }
    let t = ExternalTarget::load(&target_dir().join("target.toml")).unwrap();
    let config = small(&["simple_python", "parallel", "irrelevance"], 12);
    let a = calls::audit("BFCL", &t, &config);
    assert!(a.failures.is_empty(), "{:?}", a.failures);
    assert_eq!(a.checker["version"], "2026.3.23");
    let cat = |n: &str| a.categories.iter().find(|c| c.name == n).unwrap();
    let rate = |n: &str, f: Forgery| {
        let r = cat(n)
            .separation
            .rates
            .iter()
            .find(|r| r.forgery == f.name())
            .unwrap();
        (r.passed, r.applicable)
    };
    assert_eq!(cat("simple_python").entries_total, 400);
    assert_eq!(rate("simple_python", Forgery::Correct), (12, 12));
    assert_eq!(rate("simple_python", Forgery::WrongName), (0, 12));
    assert_eq!(rate("parallel", Forgery::MissingCall), (0, 12));
    assert_eq!(
        cat("simple_python").criterion().status,
        Status::Pass,
        "{}",
        cat("simple_python").criterion().evidence
    );
    // The prompt-mode decoder only reads Python calls: JSON is no call to it.
    assert_eq!(rate("simple_python", Forgery::JsonSyntax), (0, 12));
    assert_eq!(rate("irrelevance", Forgery::JsonSyntax), (12, 12));
    assert_eq!(cat("irrelevance").criterion().status, Status::Fail);
    assert_eq!(a.replay.cell.status, Status::Pass);
    assert_eq!(a.replay.items, a.items.len());
    let per_cat = a
        .cards
        .iter()
        .find(|c| c.target == "simple_python")
        .unwrap();
    assert_eq!(per_cat.licensed_claim, Claim::SpecificationCompliance);
    // Deterministic: a second audit serialises identically.
    let b = calls::audit("BFCL", &t, &config);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}

/// A venv without bfcl-eval: the hook exits with its import error.
fn bare_venv(dir: &Path) -> PathBuf {
    let status = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(dir.join("venv"))
        .status()
        .expect("python3 runs");
    assert!(status.success());
    dir.join("venv/bin/python")
}

fn manifest(dir: &Path, entries: &[String], score: &[String]) -> PathBuf {
    let q = |v: &[String]| {
        v.iter()
            .map(|s| format!("{s:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let text = format!(
        "name = \"BFCL (broken)\"\nscorer_kind = \"specification\"\nprobes = \"calls\"\n[calls]\ncategories = [\"simple_python\"]\nsample = 3\n[hooks]\nentries = [{}]\nscore_batch = [{}]\n",
        q(entries),
        q(score)
    );
    let path = dir.join("target.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_missing_package_is_not_probed_with_its_cause() {
    let dir = tempfile::tempdir().unwrap();
    let python = bare_venv(dir.path()).display().to_string();
    let hook = target_dir().join("hook.py").display().to_string();
    let path = manifest(
        dir.path(),
        &[python.clone(), hook.clone(), "entries".into()],
        &[python, hook, "score".into()],
    );
    let t = ExternalTarget::load(&path).unwrap();
    let a = calls::audit("BFCL", &t, &t.calls_config(None).unwrap());
    assert!(a.items.is_empty());
    for card in &a.cards {
        let c = &card.criterion_sensitivity;
        assert_eq!(c.status, Status::NotProbed);
        assert!(
            c.evidence.starts_with("the entries hook failed"),
            "{}",
            c.evidence
        );
        assert!(
            c.evidence.contains("cannot import the BFCL checker"),
            "{}",
            c.evidence
        );
        assert!(c.evidence.contains("setup.sh"), "{}", c.evidence);
        assert_eq!(card.replay.status, Status::NotProbed);
        assert_eq!(card.licensed_claim, Claim::None);
    }
}

#[test]
fn a_crashing_checker_is_not_probed_never_a_verdict() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let venv = target_dir().join(".venv/bin/python").display().to_string();
    let hook = target_dir().join("hook.py").display().to_string();
    let crash = [
        "sh".to_string(),
        "-c".into(),
        "cat >/dev/null; echo 'Traceback: checker blew up' >&2; kill -SEGV $$".into(),
    ];
    let path = manifest(dir.path(), &[venv, hook, "entries".into()], &crash);
    let t = ExternalTarget::load(&path).unwrap();
    let a = calls::audit("BFCL", &t, &t.calls_config(None).unwrap());
    let cat = &a.categories[0];
    assert_eq!(cat.criterion().status, Status::NotProbed);
    assert!(
        cat.criterion().evidence.contains("checker blew up"),
        "{}",
        cat.criterion().evidence
    );
    assert!(cat.criterion().evidence.contains("signal"));
    for card in &a.cards {
        assert_eq!(card.criterion_sensitivity.status, Status::NotProbed);
        assert_eq!(card.licensed_claim, Claim::None);
    }
}

#[test]
fn hook_paths_resolve_relative_to_the_manifest() {
    if !ready() {
        return;
    }
    // The shipped manifest names `.venv/bin/python`. Loaded by a relative path (the test runs
    // in crates/audit), the program must still be found from the manifest's folder.
    let rel = PathBuf::from("../../targets/bfcl/target.toml");
    assert!(rel.is_relative() && rel.exists());
    let t = ExternalTarget::load(&rel).unwrap();
    let a = calls::audit("BFCL", &t, &small(&["simple_javascript"], 2));
    assert!(a.failures.is_empty(), "{:?}", a.failures);
    assert_eq!(a.categories[0].entries_probed, 2);
}
