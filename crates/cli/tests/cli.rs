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

/// Issue 40: a short task id is accepted where it is unique; where two tasks share it, the
/// error names the full ids.
#[test]
fn short_task_ids_are_accepted_where_unique() {
    let short = run(&["truth", "--task", "T3", "--seed", "7"]);
    let full = run(&["truth", "--task", "T3_duplicates", "--seed", "7"]);
    assert!(
        short.status.success(),
        "{}",
        String::from_utf8_lossy(&short.stderr)
    );
    assert_eq!(short.stdout, full.stdout);
    let o = run(&["truth", "--task", "T9", "--seed", "7"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "error: invalid value 'T9' for '--task <TASK>': task `T9` is ambiguous: give the full id, T9_adaptive_adversary or T9_clean_ab\n"
    );
}

/// Issue 40: a negative seed is answered about seeds, not with clap's "unexpected argument".
#[test]
fn a_negative_seed_gets_a_seeds_message() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    for (args, flag) in [
        (
            vec!["truth", "--task", "T3", "--seed", "-1"],
            "--seed <SEED>",
        ),
        (
            vec!["run", "--seeds", "-3", "--out", out.to_str().unwrap()],
            "--seeds <SEEDS>",
        ),
        (
            vec!["audit", "--seeds", "-2", "--out", out.to_str().unwrap()],
            "--seeds <SEEDS>",
        ),
        (vec!["mcp", "--task", "T3", "--seed", "-5"], "--seed <SEED>"),
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(flag), "{args:?}: {err}");
        assert!(
            err.contains("is negative: a seed is a whole number from 0"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert!(!out.exists(), "nothing is written for a refused flag");
}

/// Issue 40: `report --tau` is a threshold on a 0–1 metric, so outside (0, 1] it is refused.
#[test]
fn report_tau_outside_zero_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let out = out.to_str().unwrap();
    let o = run(&[
        "run", "--policy", "oracle", "--level", "L2", "--task", "T3", "--seeds", "0", "--out", out,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // One episode: the banner says so in the singular.
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("running 1 episode into "),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for tau in ["0", "1.5", "-0.5", "0.9,2"] {
        let o = run(&["report", out, "--tau", tau]);
        assert_eq!(o.status.code(), Some(2), "--tau {tau}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("τ must be in (0, 1]"), "--tau {tau}: {err}");
    }
    let o = run(&[
        "report",
        out,
        "--tau",
        "1,0.5",
        "--out",
        dir.path().join("rep").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Issue 40: `serve --addr` without a port is answered with the form expected, and a port
/// already taken is reported once, not its cause twice.
#[test]
fn serve_addr_messages_show_the_form_and_state_the_cause_once() {
    let o = run(&["serve", "--addr", "localhost"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "error: invalid value 'localhost' for '--addr <ADDR>': `localhost` is not an IP address and port: write e.g. 127.0.0.1:8080 or [::1]:8080\n"
    );
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let o = run(&["serve", "--addr", &addr]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with(&format!("error: cannot listen on {addr}: ")),
        "{err}"
    );
    let cause = err.trim_end().rsplit(": ").next().unwrap();
    assert_eq!(
        err.matches(cause).count(),
        1,
        "the cause is repeated: {err}"
    );
    drop(taken);
}

/// Issue 40: every integer range in the help is written one way, as clap's own refusals write
/// it (`1..=1024`), and `--metric`'s short help names all four metrics.
#[test]
fn help_writes_ranges_one_way_and_lists_every_metric() {
    let worded = regex::Regex::new(r"\b\d[\d ]* to \d").unwrap();
    let subcommands = [
        "tasks", "policies", "truth", "score", "run", "merge", "audit", "guard", "ab", "prereg",
        "report", "serve", "mcp", "export", "import",
    ];
    let mut ranges = 0;
    for sub in subcommands {
        let help = stdout(&run(&["help", sub]));
        assert!(!help.is_empty(), "{sub}");
        for line in help.lines() {
            assert!(
                !worded.is_match(line),
                "`{sub}` writes a range in words: {line}"
            );
        }
        ranges += help.matches("..=").count();
    }
    assert!(ranges >= 15, "{ranges} ranges written as A..=B");
    for sub in ["report", "ab"] {
        let short = stdout(&run(&[sub, "-h"]));
        // The description (clap may wrap it over several lines, by the terminal's width),
        // before clap's own "[default: …] [possible values: …]".
        let text: Vec<&str> = short
            .lines()
            .skip_while(|l| !l.contains("--metric <METRIC>"))
            .skip(1)
            .take_while(|l| !l.trim_start().starts_with('-'))
            .map(str::trim)
            .collect();
        let text = text.join(" ");
        let text = &text[..text.find(" [").unwrap_or(text.len())];
        for m in ["f1 (", "judge (", "coverage (", "reward ("] {
            assert!(
                text.contains(m),
                "`{sub} -h` --metric does not describe {m}: {text}"
            );
        }
    }
}
