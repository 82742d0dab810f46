//! The binary end to end: tasks, truth, score (with the T2 judge probe of the vectors).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_benchaudit"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run benchaudit")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

fn probe_case(kind: &str) -> Value {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/judge/judge_cases.jsonl");
    let text = std::fs::read_to_string(path).expect("testdata/judge in the repository");
    let name = format!("probe/T2_multi_page/{kind}");
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|c| c["name"] == name.as_str())
        .expect("probe case")
}

fn write_dir(dir: &Path, data: &str, case: &Value) {
    std::fs::write(dir.join("data.jsonl"), data).unwrap();
    std::fs::write(
        dir.join("metadata.json"),
        case["files"]["metadata.json"].as_str().unwrap(),
    )
    .unwrap();
    std::fs::write(
        dir.join("run.log"),
        case["files"]["run.log"].as_str().unwrap(),
    )
    .unwrap();
}

fn score_json(dir: &Path) -> Value {
    let o = run(&[
        "score",
        "--task",
        "T2_multi_page",
        "--seed",
        "0",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_str(&stdout(&o)).expect("one JSON object")
}

#[test]
fn score_reproduces_the_judge_probe_while_f1_separates() {
    let truth = stdout(&run(&["truth", "--task", "T2_multi_page", "--seed", "0"]));
    assert_eq!(truth.lines().count(), 2345);
    let cases = [
        ("correct", truth.clone(), 98.7, 1.0),
        (
            "fabricated",
            probe_case("fabricated")["files"]["data.jsonl"]
                .as_str()
                .unwrap()
                .to_string(),
            98.7,
            0.0,
        ),
        ("empty", String::new(), 64.8, 0.0),
    ];
    for (kind, data, judge_total, f1) in cases {
        let dir = tempfile::tempdir().unwrap();
        write_dir(dir.path(), &data, &probe_case(kind));
        let v = score_json(dir.path());
        // One scale everywhere: the judge on 0–1 (the released total / 100).
        let judge = v["judge"]["score"].as_f64().unwrap();
        assert!((judge - judge_total / 100.0).abs() < 1e-12, "{kind}: {v}");
        assert_eq!(
            v["judge"]["released_total"].as_f64(),
            Some(judge_total),
            "{kind}: {v}"
        );
        assert_eq!(v["f1"].as_f64(), Some(f1), "{kind}: {v}");
        assert_eq!(v["task_id"], "T2_multi_page");
        for key in [
            "correctness",
            "completeness",
            "robustness",
            "efficiency",
            "data_quality",
            "observability",
        ] {
            assert!(v["judge"]["breakdown"][key].is_number(), "{key}");
        }
        assert!(v["judge"]["errors"].as_array().unwrap().is_empty());
        assert!(v["precision"].is_number() && v["recall"].is_number());
    }
}

#[test]
fn missing_files_are_scored_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("run.log"), "INFO start\n").unwrap();
    let v = score_json(dir.path());
    assert_eq!(
        v["judge"]["breakdown"]["completeness"].as_f64(),
        Some(10.0 * (1.0 / 3.0) / 100.0),
        "the released 10 × present/3, evaluated as 10 × (present/3), on the 0–1 scale"
    );
    assert_eq!(v["f1"].as_f64(), Some(0.0));
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec![
            "score",
            "--task",
            "T99",
            "--seed",
            "0",
            dir.path().to_str().unwrap(),
        ],
        vec![
            "score",
            "--task",
            "T2_multi_page",
            "--seed",
            "0",
            "/nonexistent/submission",
        ],
        vec!["truth", "--task", "nope", "--seed", "1"],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.starts_with("error: "), "{err}");
    }
}

#[test]
fn tasks_lists_the_registry_and_the_card() {
    let o = run(&["tasks", "--json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 11);
    assert_eq!(v[5]["query"]["hs"], "09");
    let table = stdout(&run(&["tasks"]));
    assert_eq!(table.lines().count(), 12);
    let card = stdout(&run(&["tasks", "--card"]));
    assert!(card.starts_with("# ComtradeBench generator card"));
    assert!(
        card.contains("## Determinism algorithm") && card.contains("Page drift (T6, seeds 0..999)")
    );
}
