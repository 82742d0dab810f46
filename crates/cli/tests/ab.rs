//! The A/B designs calibrated with rule policies (paper A.3), and pre-registration.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn ab(dir: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_benchaudit"))
        .args(["ab", "--level", "L1", "--seeds", "0..19", "--out"])
        .arg(dir)
        .args(extra)
        .output()
        .unwrap()
}

fn comparisons(dir: &Path) -> Vec<Value> {
    let v: Value = serde_json::from_slice(&std::fs::read(dir.join("ab.json")).unwrap()).unwrap();
    v["comparisons"].as_array().unwrap().clone()
}

#[test]
fn free_retries_give_no_escalation_penalty_and_never_skip() {
    let dir = tempfile::tempdir().unwrap();
    let o = ab(
        dir.path(),
        &["--policy", "always-retry", "--design", "matched-mean"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c = &comparisons(dir.path())[0];
    assert_eq!(c["escalating"], c["constant"], "Δ = 0 on every pair");
    assert_eq!(c["skips"], serde_json::json!([0, 0]));
    let (e, k) = (
        c["mean_intensity"][0].as_f64().unwrap(),
        c["mean_intensity"][1].as_f64().unwrap(),
    );
    assert!((e - k).abs() < 1e-12, "matched mean intensities {e} vs {k}");
    assert!((k - c["constant_level"].as_f64().unwrap()).abs() < 1e-12);
}

#[test]
fn zero_slack_penalises_always_retry_and_slack_four_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let o = ab(
        dir.path(),
        &[
            "--policy",
            "always-retry,always-skip",
            "--design",
            "quota",
            "--squeeze",
            "3",
            "--slack-sweep",
            "0,4",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cs = comparisons(dir.path());
    let find = |agent: &str, slack: i64| {
        cs.iter()
            .find(|c| c["agent"] == agent && c["slack"] == slack)
            .unwrap()
            .clone()
    };
    let zero = find("always-retry", 0);
    assert_eq!(zero["quota"], 8);
    assert!(
        zero["stats"]["delta_ci"]["lo"].as_f64().unwrap() > 0.0,
        "CI excludes 0: {}",
        zero["stats"]["delta_ci"]
    );
    let four = find("always-retry", 4);
    assert!(
        four["stats"]["sign_flip"]["p_value"].as_f64().unwrap() >= 0.05,
        "slack 4 is not significant"
    );
    let skip = find("always-skip", 0);
    let mean = |v: &Value| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .sum::<f64>()
            / 20.0
    };
    assert!(
        mean(&skip["escalating"]) < 0.95 && mean(&skip["constant"]) < 0.95,
        "always-skip depresses coverage in both arms"
    );
    assert!(
        cs.iter().all(|c| c["p_holm"].as_f64().unwrap()
            >= c["stats"]["sign_flip"]["p_value"].as_f64().unwrap())
    );
}

const SPEC: &str = r#"name = "B2 calibration"
hypothesis = "an enforced quota with a squeeze penalises the escalating arm"
predicted = "positive"

[design]
kind = "quota"
task = "T9_clean_ab"
level = "L1"
seeds = "0..19"
metric = "coverage"
quota = 8
squeeze = 3

[agents]
policies = ["always-retry"]
"#;

#[test]
fn a_frozen_preregistration_is_applied_and_a_tampered_one_refused() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("experiment.toml");
    std::fs::write(&spec, SPEC).unwrap();
    let bin = env!("CARGO_BIN_EXE_benchaudit");
    let o = Command::new(bin)
        .args(["prereg", "freeze"])
        .arg(&spec)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run_dir = dir.path().join("run");
    let prereg = spec.to_str().unwrap();
    let o = ab(
        &run_dir,
        &[
            "--policy",
            "always-retry",
            "--design",
            "quota",
            "--quota",
            "8",
            "--squeeze",
            "3",
            "--prereg",
            prereg,
        ],
    );
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("no deviation from the frozen design"), "{out}");
    assert!(out.contains("CONFIRMED"), "{out}");
    // A deviation is run and disclosed, not hidden.
    let o = ab(
        &dir.path().join("run2"),
        &[
            "--policy",
            "always-retry",
            "--design",
            "quota",
            "--quota",
            "9",
            "--squeeze",
            "3",
            "--prereg",
            prereg,
        ],
    );
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains("DISCLOSED DEVIATIONS") && out.contains("quota: frozen 8, run 9"),
        "{out}"
    );
    // Editing the frozen file is refused.
    std::fs::write(&spec, SPEC.replace("quota = 8", "quota = 12")).unwrap();
    let o = ab(
        &dir.path().join("run3"),
        &[
            "--policy",
            "always-retry",
            "--design",
            "quota",
            "--quota",
            "12",
            "--prereg",
            prereg,
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("changed after it was frozen"));
}
