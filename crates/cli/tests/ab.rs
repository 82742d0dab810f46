//! The A/B designs calibrated with rule policies (paper A.3), and pre-registration.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

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

fn ab_with(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_benchaudit"))
        .args(["ab", "--level", "L1", "--out"])
        .arg(dir)
        .args(args)
        .output()
        .unwrap()
}

fn ab_json(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("ab.json")).unwrap()).unwrap()
}

/// Issue 11: these runs were refused on a fresh directory ("holds a run with a different
/// configuration") because a matched level did not survive its trip through the manifest.
/// Each runs fresh, then resumes with nothing to run.
#[test]
fn ab_with_21_and_30_seeds_runs_on_fresh_directories_and_resumes() {
    let cases: [&[&str]; 4] = [
        &["--policy", "always-retry", "--seeds", "0..20"],
        &[
            "--policy",
            "always-retry",
            "--seeds",
            "0..20",
            "--calibration-seeds",
            "0..20",
        ],
        &[
            "--policy",
            "always-retry",
            "--seeds",
            "0..29",
            "--calibration-seeds",
            "0..29",
        ],
        &[
            "--policy",
            "baseline",
            "--seeds",
            "0..4",
            "--calibration-seeds",
            "0..4",
        ],
    ];
    for case in cases {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec!["--design", "matched-mean"];
        args.extend_from_slice(case);
        let o = ab_with(dir.path(), &args);
        assert!(
            o.status.success(),
            "{case:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let o = ab_with(dir.path(), &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.success() && err.contains("0 to run"),
            "{case:?}: {err}"
        );
    }
}

/// The constant arm's level comes from the declared calibration seeds, so extending a run's
/// seeds leaves it as it was; the manifest and ab.json record the calibration.
#[test]
fn extending_the_seeds_leaves_the_constant_level_unchanged() {
    let level = |seeds: &str| {
        let dir = tempfile::tempdir().unwrap();
        let o = ab_with(
            dir.path(),
            &[
                "--policy",
                "always-retry",
                "--design",
                "matched-mean",
                "--seeds",
                seeds,
            ],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let manifest: Value =
            serde_json::from_slice(&std::fs::read(dir.path().join("manifest.json")).unwrap())
                .unwrap();
        let calibration: Vec<u64> = (0..20).collect();
        assert_eq!(manifest["config"]["calibration_seeds"], json!(calibration));
        let v = ab_json(dir.path());
        assert_eq!(v["calibration_seeds"], json!(calibration));
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(out.contains("calibration seeds 0..19"), "{out}");
        v["matched_level"].as_f64().unwrap()
    };
    let (ten, thirty) = (level("0..9"), level("0..29"));
    assert_eq!(ten, thirty);
}

/// Under quota and squeeze the arms can miss their intended intensity: the achieved
/// intensities are reported per arm, and a mismatch is flagged, not hidden.
#[test]
fn the_intensity_match_is_checked_under_quota_and_squeeze() {
    let dir = tempfile::tempdir().unwrap();
    let o = ab_with(
        dir.path(),
        &[
            "--policy",
            "always-retry",
            "--design",
            "quota",
            "--squeeze",
            "3",
            "--slack-sweep",
            "0",
            "--seeds",
            "0..9",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c = &comparisons(dir.path())[0];
    let check = &c["intensity"];
    assert_eq!(check["escalating"], c["mean_intensity"][0]);
    assert_eq!(check["constant"], c["mean_intensity"][1]);
    assert_eq!(check["matched"], json!(false), "{check}");
    assert!(!check["off_ramp_seeds"].as_array().unwrap().is_empty());
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(out.contains("intensity not matched"), "{out}");
}

/// Issue 11: the frozen file covers the statistics too. Freezing prints values (not debug
/// text); a run with another `--stats-seed` or B is a disclosed deviation and its verdict says
/// so; a comparison outside the frozen Holm family is exploratory.
#[test]
fn a_frozen_preregistration_rerun_with_another_stats_seed_reports_a_deviation() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("experiment.toml");
    std::fs::write(
        &spec,
        SPEC.replace(
            "[agents]",
            "[statistics]\nseed = 0\nresamples = 500\n\n[agents]",
        ),
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_benchaudit"))
        .args(["prereg", "freeze"])
        .arg(&spec)
        .output()
        .unwrap();
    let frozen = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for want in [
        "predicted Δ (constant − escalating): positive",
        "quota 8, squeeze 3",
        "statistics: seed 0, bootstrap resamples 500, alpha 0.05",
        "tool text clarified",
        "calibration seeds 0..19",
        "Holm family (1): always-retry at quota 8",
    ] {
        assert!(frozen.contains(want), "{want}: {frozen}");
    }
    assert!(
        !frozen.contains("Some(") && !frozen.contains("Positive"),
        "{frozen}"
    );
    let prereg = spec.to_str().unwrap();
    let base = [
        "--design",
        "quota",
        "--quota",
        "8",
        "--squeeze",
        "3",
        "--seeds",
        "0..19",
        "--resamples",
        "500",
        "--prereg",
        prereg,
    ];
    let run = |extra: &[&str], name: &str| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let o = ab_with(&dir.path().join(name), &args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let clean = run(&["--policy", "always-retry"], "clean");
    assert!(
        clean.contains("no deviation from the frozen design"),
        "{clean}"
    );
    let seeded = run(&["--policy", "always-retry", "--stats-seed", "7"], "seeded");
    assert!(
        seeded.contains("DISCLOSED DEVIATIONS from the frozen design (1)")
            && seeded.contains("statistics seed: frozen 0, run 7")
            && seeded.contains("reached with 1 disclosed deviation"),
        "{seeded}"
    );
    // The tool text is chosen by --tool-text, not hard-wired: another wording than the
    // frozen one is a disclosed deviation too, and the manifest records it.
    let worded = run(
        &["--policy", "always-retry", "--tool-text", "ambiguous"],
        "worded",
    );
    assert!(
        worded.contains("DISCLOSED DEVIATIONS from the frozen design (1)")
            && worded.contains("tool text: frozen clarified, run ambiguous")
            && worded.contains("reached with 1 disclosed deviation"),
        "{worded}"
    );
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("worded/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["config"]["tool_text"], "ambiguous", "{manifest}");
    // A second agent is outside the frozen family: exploratory, no decision, and the family
    // keeps its frozen size.
    let wider = run(&["--policy", "always-retry,always-skip"], "wider");
    assert!(
        wider.contains("always-skip (quota 8): exploratory")
            && wider.contains("Holm over the pre-registered family of 1 comparisons")
            && wider.contains("agents: frozen always-retry, run always-retry, always-skip"),
        "{wider}"
    );
}
