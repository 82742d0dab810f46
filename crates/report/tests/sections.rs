//! The sections of a report that the ledger's shape selects, through the library: constant
//! and escalating arms (A/B table, forest plot), dose arms (degradation curves), an infra
//! error (counted, named, excluded), and several levels (scaffolding spectrum, the 2×2).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;

use benchaudit_agents::{Level, RuleKind};
use benchaudit_comtrade::task;
use benchaudit_report::model::Metric;
use benchaudit_report::{Options, write_run_report};
use benchaudit_runs::{Plan, Player, execute};
use benchaudit_testkit::{read_json, record, same, template_record, write_ledger};
use serde_json::{Value, json};

/// Writes the default report (F1) of `run_dir` into `out`; it must pass the number guard.
fn report(run_dir: &Path, out: &Path) {
    let written = write_run_report(run_dir, out, &Options::new(Metric::F1)).unwrap();
    assert!(written.passed(), "{}", written.guard_markdown);
}

#[test]
fn stress_arms_get_a_forest_plot_and_degradation_curves() {
    let tmp = tempfile::tempdir().unwrap();
    let t = template_record();
    let mut lines = Vec::new();
    let mut constant: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    let mut escalating: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    // Model-like names with digits: quoted data for the guard, not figures.
    for (pi, policy) in ["gpt-4o-mini", "llama-3.3-70b"].iter().enumerate() {
        for task in ["T9_clean_ab", "T3_duplicates"] {
            for seed in 0..12u64 {
                // Deterministic, varied scores; the escalating arm loses more for policy 0.
                let c = 1.0 - ((seed * 7 + pi as u64 * 3) % 10) as f64 / 40.0;
                let e = c - ((seed * 5 + 1) % 4) as f64 / (20.0 + 20.0 * pi as f64);
                lines.push(record(&t, policy, task, seed, "constant@0.4321", c));
                lines.push(record(&t, policy, task, seed, "escalating", e));
                constant
                    .entry((policy.to_string(), task.to_string()))
                    .or_default()
                    .push(c);
                escalating
                    .entry((policy.to_string(), task.to_string()))
                    .or_default()
                    .push(e);
                for (k, dose) in ["0.0000", "0.5000", "1.0000"].iter().enumerate() {
                    let v = (1.0 - 0.3 * k as f64 * ((seed % 3) as f64 + 1.0) / 3.0).max(0.0);
                    lines.push(record(
                        &t,
                        &format!("{policy}-sweep"),
                        task,
                        seed,
                        &format!("constant@{dose}"),
                        v,
                    ));
                }
            }
        }
    }
    let mut failed = record(&t, "gpt-4o-mini", "T9_clean_ab", 99, "escalating", 0.0);
    failed["outcome"] = json!("infra_error");
    failed["scores"] = Value::Null;
    failed["error"] = json!("HTTP 503 after 3 retries");
    lines.push(failed);
    let run_dir = tmp.path().join("arms");
    write_ledger(&run_dir, &lines);
    let out = tmp.path().join("report");
    report(&run_dir, &out);
    let stats = read_json(&out.join("stats.json"));

    assert_eq!(stats["episodes"]["infra_errors"], 1);
    assert_eq!(stats["excluded"][0]["reason"], "infra_error");
    let ab = &stats["ab"];
    assert_eq!(
        (ab["a"].as_str(), ab["b"].as_str(), ab["delta"].as_str()),
        (Some("constant"), Some("escalating"), Some("a - b"))
    );
    assert_eq!(ab["pairs"], 48);
    assert_eq!(
        ab["skipped"].as_array().unwrap().len(),
        0,
        "dose sweeps are not A/B designs"
    );
    for row in ab["rows"].as_array().unwrap() {
        let key = (
            row["policy"].as_str().unwrap().to_string(),
            row["task_id"].as_str().unwrap().to_string(),
        );
        let deltas: Vec<f64> = constant[&key]
            .iter()
            .zip(&escalating[&key])
            .map(|(c, e)| c - e)
            .collect();
        let mut sum = 0.0;
        for d in &deltas {
            sum += d;
        }
        same(&row["delta"], sum / deltas.len() as f64, "A/B delta");
        assert!(
            row["delta"].as_f64().unwrap() > 0.0,
            "an escalation penalty is positive"
        );
    }
    let curves = stats["degradation"].as_array().unwrap();
    assert_eq!(curves.len(), 2);
    for c in curves {
        let doses: Vec<f64> = c["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["dose"].as_f64().unwrap())
            .collect();
        assert_eq!(doses, [0.0, 0.5, 1.0]);
        let first = &c["points"][0];
        let last = &c["points"][2];
        assert_eq!(c["gap"]["static_mean"], first["mean"]);
        assert_eq!(c["gap"]["hardest_worst"], last["worst"]);
        assert_eq!(c["seeds"].as_array().unwrap().len(), 36);
    }
    let ids: Vec<&str> = stats["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"forest") && ids.contains(&"degradation"),
        "{ids:?}"
    );
    for f in stats["figures"].as_array().unwrap() {
        let png = image::open(out.join(f["png"].as_str().unwrap())).unwrap();
        assert_eq!(u64::from(png.width()), f["width"].as_u64().unwrap());
    }
    // The infra error's message stays in the JSON; the report names the episode, not the text.
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("## Infra errors")
            && md.contains("`T9_clean_ab` seed 99")
            && !md.contains("HTTP 503")
    );
}

#[test]
fn several_levels_get_the_scaffolding_spectrum_and_the_joint_panel() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("levels");
    let plan = Plan::new(
        [RuleKind::Oracle, RuleKind::Empty, RuleKind::Fabricator]
            .map(Player::rule)
            .to_vec(),
        Level::ALL.to_vec(),
        vec![task("T3_duplicates").unwrap()],
        vec![0, 1, 2],
    );
    execute(&run_dir, plan.config(), &plan, 2, &mut |_| {}).unwrap();
    let out = tmp.path().join("report");
    report(&run_dir, &out);
    let stats = read_json(&out.join("stats.json"));
    let ids: Vec<&str> = stats["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    for id in [
        "spectrum_L0",
        "spectrum_L1",
        "spectrum_L2",
        "scaffolding",
        "joint",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    let joint = &stats["joint"];
    // At L0 the harness does the work: every policy pair submits the same bytes.
    assert_eq!(joint["l0_pairs"], 9);
    assert_eq!(joint["l0_identical"], 9);
    assert_eq!(joint["spread"]["l0_truth"], 0.0);
    assert_eq!(joint["spread"]["l2_truth"], 1.0);
    // The audit's 2×2 computation, rows best first in the repaired cell.
    let rows = joint["rows"].as_array().unwrap();
    let players: Vec<&str> = rows.iter().map(|r| r["player"].as_str().unwrap()).collect();
    assert_eq!(players, ["oracle", "empty", "fabricator"]);
    assert!(rows.iter().all(|r| r["n"] == 3));
    let gaps = stats["level_shortfalls"].as_array().unwrap();
    let oracle = gaps
        .iter()
        .find(|g| g["policy"] == "oracle" && g["task_id"].is_null())
        .unwrap();
    assert_eq!(
        (
            oracle["scaffolded_level"].as_str(),
            oracle["unscaffolded_level"].as_str()
        ),
        (Some("L0"), Some("L2"))
    );
    let empty = gaps
        .iter()
        .find(|g| g["policy"] == "empty" && g["task_id"].is_null())
        .unwrap();
    assert_eq!(
        empty["shortfall"]["shortfall"], 1.0,
        "empty: mean 1 at L0, worst 0 at L2"
    );
}

#[test]
fn pooled_intervals_resample_seeds_within_each_task_and_say_so() {
    // Two tasks of constant, different scores: resampling seeds within each task keeps the
    // pooled mean at exactly 0.5 (a zero-width interval), resampling the 24 values as one bag
    // does not. The report's pooled CI is the stratified one, and its text names the method.
    let tmp = tempfile::tempdir().unwrap();
    let t = template_record();
    let mut lines = Vec::new();
    for seed in 0..12u64 {
        lines.push(record(
            &t,
            "mixed",
            "T3_duplicates",
            seed,
            "constant@0.5000",
            0.0,
        ));
        lines.push(record(
            &t,
            "mixed",
            "T9_clean_ab",
            seed,
            "constant@0.5000",
            1.0,
        ));
        lines.push(record(
            &t,
            "mixed",
            "T3_duplicates",
            seed,
            "escalating",
            0.0,
        ));
        lines.push(record(
            &t,
            "mixed",
            "T9_clean_ab",
            seed,
            "escalating",
            (seed % 2) as f64,
        ));
    }
    let run_dir = tmp.path().join("strata");
    write_ledger(&run_dir, &lines);
    let out = tmp.path().join("report");
    report(&run_dir, &out);
    let stats = read_json(&out.join("stats.json"));
    let constant = stats["pooled"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["arm"] == "constant@0.5000")
        .unwrap();
    let ci = &constant["summary"]["mean_ci"];
    assert_eq!(
        (ci["lo"].as_f64(), ci["hi"].as_f64()),
        (Some(0.5), Some(0.5))
    );
    let bag: Vec<f64> = [vec![0.0; 12], vec![1.0; 12]].concat();
    let naive = benchaudit_stats::bootstrap_mean_ci(&bag, &Default::default()).unwrap();
    assert!(
        naive.lo < 0.5 && naive.hi > 0.5,
        "the one-bag interval is wider"
    );
    // The pooled paired row's interval is stratified too: Δ is 0 on T3 and 1 − (seed mod 2)
    // on T9, and its CI is the stratified bootstrap of those differences.
    let pooled = &stats["ab"]["pooled"][0];
    let strata = vec![
        vec![0.0; 12],
        (0..12).map(|s| 1.0 - (s % 2) as f64).collect::<Vec<_>>(),
    ];
    let expected =
        benchaudit_stats::stratified_bootstrap_mean_ci(&strata, &Default::default()).unwrap();
    same(&pooled["delta_ci"]["lo"], expected.lo, "stratified Δ CI lo");
    same(&pooled["delta_ci"]["hi"], expected.hi, "stratified Δ CI hi");
    let naive = benchaudit_stats::bootstrap_mean_ci(&strata.concat(), &Default::default()).unwrap();
    assert!((naive.lo, naive.hi) != (expected.lo, expected.hi));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("Pooled rows' CIs are stratified bootstrap intervals"),
        "{md}"
    );
    assert!(md.contains("pooled rows: stratified bootstrap, pairs resampled within each task"));
}

#[test]
fn only_the_spec_quantity_is_called_the_reliability_gap() {
    // A row's own mean − worst is the worst-case shortfall; "reliability gap" names only a
    // dose curve's static mean (dose 0) minus its worst case at the hardest dose (SPEC §7).
    let tmp = tempfile::tempdir().unwrap();
    let t = template_record();
    let mut lines = Vec::new();
    for seed in 0..6u64 {
        for (k, dose) in ["0.0000", "0.5000", "1.0000"].iter().enumerate() {
            let v = 1.0 - 0.2 * k as f64 - 0.1 * (seed % 2) as f64;
            lines.push(record(
                &t,
                "static",
                "T3_duplicates",
                seed,
                &format!("constant@{dose}"),
                v,
            ));
            if k > 0 {
                lines.push(record(
                    &t,
                    "no-static",
                    "T3_duplicates",
                    seed,
                    &format!("constant@{dose}"),
                    v,
                ));
            }
        }
    }
    let run_dir = tmp.path().join("doses");
    write_ledger(&run_dir, &lines);
    let out = tmp.path().join("report");
    report(&run_dir, &out);
    let stats = read_json(&out.join("stats.json"));
    for row in stats["cells"]
        .as_array()
        .unwrap()
        .iter()
        .chain(stats["pooled"].as_array().unwrap())
    {
        assert!(row.get("gap").is_none(), "{row}");
        let s = &row["shortfall"];
        same(
            &s["shortfall"],
            s["mean"].as_f64().unwrap() - s["worst"].as_f64().unwrap(),
            "mean − worst",
        );
        same(
            &s["mean"],
            row["summary"]["mean"].as_f64().unwrap(),
            "own mean",
        );
        same(
            &s["worst"],
            row["summary"]["worst"].as_f64().unwrap(),
            "own worst",
        );
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("| shortfall |") && !md.contains("| gap |"),
        "{md}"
    );
    let heads: Vec<&str> = md.lines().filter(|l| l.starts_with("### ")).collect();
    assert!(
        heads
            .iter()
            .any(|h| h.starts_with("### static L2 (reliability gap ")),
        "{heads:?}"
    );
    assert!(
        heads
            .iter()
            .any(|h| h.starts_with("### no-static L2 (shortfall from the lowest dose ")),
        "{heads:?}"
    );
    // The one SPEC quantity: static mean at dose 0 minus worst at the hardest dose.
    let curve = stats["degradation"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["policy"] == "static")
        .unwrap();
    same(
        &curve["gap"]["gap"],
        1.0 - 0.05 - (1.0 - 0.4 - 0.1),
        "SPEC gap",
    );
}
