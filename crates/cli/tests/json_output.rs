//! `--json` on `run`, `ab`, `audit` and `report` prints one JSON object on stdout: the summary
//! the text form shows (issue 13), so scripts need not scrape tables.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use serde_json::Value;

fn json_of(args: &[&str], out: &std::path::Path) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_benchaudit"))
        .args(args)
        .arg("--out")
        .arg(out)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: stdout is not one JSON object: {e}"))
}

#[test]
fn run_ab_audit_and_report_print_one_json_object() {
    let dir = tempfile::tempdir().unwrap();
    let run = json_of(
        &[
            "run",
            "--policy",
            "oracle,fabricator",
            "--level",
            "L0,L2",
            "--task",
            "T3_duplicates",
            "--seeds",
            "0+2",
        ],
        &dir.path().join("r"),
    );
    let rows = run["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "{run}");
    let fab_l2 = rows
        .iter()
        .find(|r| r["policy"] == "fabricator" && r["level"] == "L2")
        .unwrap();
    assert_eq!(fab_l2["n"], 2);
    assert_eq!(fab_l2["mean_f1"], 0.0);
    assert!(
        fab_l2["mean_judge"].as_f64().unwrap() > 0.9,
        "the judge is fooled: {fab_l2}"
    );
    assert_eq!(run["infra_errors"], Value::Array(vec![]));

    let ab = json_of(
        &[
            "ab",
            "--policy",
            "always-retry",
            "--level",
            "L1",
            "--design",
            "matched-mean",
            "--seeds",
            "0..3",
        ],
        &dir.path().join("ab"),
    );
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("ab/ab.json")).unwrap())
            .unwrap();
    assert_eq!(ab, written, "ab --json prints what ab.json holds");
    assert!(
        ab["comparisons"].as_array().is_some_and(|c| c.len() == 1),
        "{ab}"
    );

    let audit = json_of(&["audit", "--seeds", "0"], &dir.path().join("audit"));
    assert_eq!(audit["passed"], true, "{audit}");
    assert_eq!(audit["seeds"], serde_json::json!([0]));
    let cards = audit["cards"].as_array().unwrap();
    assert_eq!(
        cards[0]["licensed_claim"], "self-report compliance",
        "{audit}"
    );
    assert_eq!(cards[1]["licensed_claim"], "model capability", "{audit}");
    assert_eq!(
        audit["oracle_checks"]["passed"],
        audit["oracle_checks"]["total"]
    );

    let report = json_of(
        &["report", dir.path().join("r").to_str().unwrap()],
        &dir.path().join("rep"),
    );
    assert_eq!(report["passed"], true);
    assert_eq!(
        report["summary"]["pooled"].as_array().unwrap().len(),
        4,
        "{report}"
    );
}
