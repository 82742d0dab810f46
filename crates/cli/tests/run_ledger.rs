//! The run ledger survives what happens to real runs: SIGKILL midway, a torn last line, a second
//! writer, and a resume with a different configuration.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_benchaudit"))
}

const ARGS: [&str; 8] = [
    "--policy",
    "oracle,no-dedup,baseline",
    "--level",
    "L0,L1,L2",
    "--tasks",
    "T2_multi_page,T8_mixed_faults",
    "--seeds",
    "0..79",
];
const TOTAL: usize = 3 * 3 * 2 * 80;

fn run_into(dir: &Path) -> std::process::Output {
    bin()
        .arg("run")
        .args(ARGS)
        .arg("--out")
        .arg(dir)
        .output()
        .unwrap()
}

/// Records by key, without the timing object (the only part allowed to differ).
fn records(dir: &Path) -> BTreeMap<String, Value> {
    let text = std::fs::read_to_string(dir.join("episodes.jsonl")).unwrap();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        v.as_object_mut().unwrap().remove("timing");
        let key = v["key"].to_string();
        assert!(
            out.insert(key.clone(), v).is_none(),
            "episode {key} recorded twice"
        );
    }
    out
}

fn lines(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("episodes.jsonl"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

#[test]
fn sigkill_midway_then_resume_records_every_episode_once_and_identically() {
    let reference = tempfile::tempdir().unwrap();
    let o = run_into(reference.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let want = records(reference.path());
    assert_eq!(want.len(), TOTAL);

    let dir = tempfile::tempdir().unwrap();
    let mut child = bin()
        .arg("run")
        .args(ARGS)
        .arg("--out")
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while lines(dir.path()) < 100 && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let partial = lines(dir.path());
    assert!(
        (100..TOTAL).contains(&partial),
        "killed midway ({partial} of {TOTAL})"
    );

    let o = run_into(dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("resuming"), "{stderr}");
    assert_eq!(records(dir.path()), want);
}

#[test]
fn a_torn_last_line_is_discarded_and_the_episode_rerun() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run",
        "--policy",
        "oracle",
        "--tasks",
        "T3_duplicates",
        "--seeds",
        "0..4",
        "--out",
    ];
    assert!(
        bin()
            .args(args)
            .arg(dir.path())
            .output()
            .unwrap()
            .status
            .success()
    );
    let path = dir.path().join("episodes.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut kept: Vec<&str> = text.lines().collect();
    let last = kept.pop().unwrap();
    // Simulate a crash mid-write: the last record is half written.
    std::fs::write(
        &path,
        format!("{}\n{}", kept.join("\n"), &last[..last.len() / 2]),
    )
    .unwrap();
    let o = bin().args(args).arg(dir.path()).output().unwrap();
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("torn last line"));
    let after = std::fs::read_to_string(&path).unwrap();
    assert_eq!(after.lines().count(), 5);
    assert!(after.ends_with('\n'));
    let mut seeds: Vec<u64> = after
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["key"]["seed"]
                .as_u64()
                .unwrap()
        })
        .collect();
    seeds.sort_unstable();
    assert_eq!(seeds, [0, 1, 2, 3, 4]);
}

#[test]
fn a_second_writer_is_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path()).unwrap();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.path().join(".lock"))
        .unwrap();
    lock.try_lock().unwrap();
    let o = bin()
        .args([
            "run",
            "--policy",
            "oracle",
            "--tasks",
            "T1_single_page",
            "--seeds",
            "0",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("locked by another benchaudit process"),
        "{err}"
    );
    assert!(!dir.path().join("episodes.jsonl").exists());
}

/// `run` into `dir` with `args`: (exit code, stdout, stderr).
fn run_args(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let o = bin()
        .arg("run")
        .args(args)
        .arg("--out")
        .arg(dir)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn manifest(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

/// Issue 13: a resume accepts an equivalent command (lists in another order, seeds written
/// differently), extends a run with more seeds, policies, tasks or levels without re-running
/// what is done, runs a part of it, and refuses a real conflict naming the field and both
/// values.
#[test]
fn resume_accepts_equivalent_commands_extends_runs_and_names_real_conflicts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let first = [
        "--policy",
        "oracle,empty",
        "--level",
        "L2",
        "--task",
        "T1_single_page",
        "--seeds",
        "0..1",
    ];
    let (code, _, err) = run_args(d, &first);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(lines(d), 4);
    let before = records(d);
    assert_eq!(manifest(d)["planned"], 4);

    // Equivalent: another order, the seeds written another way.
    let (code, _, err) = run_args(
        d,
        &[
            "--policy",
            "empty,oracle",
            "--level",
            "l2",
            "--task",
            "T1_single_page",
            "--seeds",
            "1,0",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("4 episodes already recorded, 0 to run"),
        "{err}"
    );
    assert_eq!(lines(d), 4);

    // Wider: more seeds and another task; only the new episodes run.
    let wide = [
        "--policy",
        "oracle,empty",
        "--level",
        "L2",
        "--task",
        "T1_single_page,T3_duplicates",
        "--seeds",
        "0+3",
    ];
    let (code, out, err) = run_args(d, &wide);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("4 episodes already recorded, 8 to run"),
        "{err}"
    );
    assert_eq!(lines(d), 12);
    let after = records(d);
    for (k, v) in &before {
        assert_eq!(after.get(k), Some(v), "a recorded episode changed: {k}");
    }
    let m = manifest(d);
    assert_eq!(m["planned"], 12);
    assert_eq!(m["config"]["seeds"], serde_json::json!([0, 1, 2]));
    assert!(out.contains("oracle"), "{out}");

    // Narrower: the first command again runs nothing and keeps the wider manifest.
    let (code, _, err) = run_args(d, &first);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("0 to run"), "{err}");
    assert_eq!(manifest(d)["planned"], 12);

    // A real conflict: another interface. The refusal names the field and both values.
    let mut strict = wide.to_vec();
    strict.extend(["--interface", "strict"]);
    let (code, _, err) = run_args(d, &strict);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("config.options.episode.interface"), "{err}");
    assert!(
        err.contains("\"legacy\"") && err.contains("\"strict\""),
        "{err}"
    );

    // Neither wider nor narrower: a policy swapped for another.
    let (code, _, err) = run_args(
        d,
        &[
            "--policy",
            "oracle,no-dedup",
            "--task",
            "T1_single_page",
            "--seeds",
            "0..2",
        ],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("config.policies"), "{err}");
    assert!(err.contains("no-dedup") && err.contains("empty"), "{err}");

    // Widening one list while narrowing another is refused too.
    let (code, _, err) = run_args(
        d,
        &[
            "--policy",
            "oracle,empty,no-dedup",
            "--task",
            "T1_single_page",
            "--seeds",
            "0..2",
        ],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("widens policies but narrows tasks"), "{err}");
    assert_eq!(lines(d), 12, "a refused resume wrote nothing");
}

#[test]
fn run_prints_a_summary_per_policy_and_level() {
    let dir = tempfile::tempdir().unwrap();
    let o = bin()
        .args([
            "run",
            "--policy",
            "oracle,empty",
            "--level",
            "L0,L2",
            "--tasks",
            "T3_duplicates",
            "--seeds",
            "0..2",
            "--jobs",
            "2",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success());
    let out = String::from_utf8(o.stdout).unwrap();
    let rows: Vec<&str> = out.lines().collect();
    assert_eq!(rows.len(), 5, "{out}");
    assert!(
        rows[1].starts_with("empty") && rows[1].contains(" L0 ") && rows[1].contains("1.000"),
        "{out}"
    );
    assert!(
        rows[2].starts_with("empty") && rows[2].contains(" L2 ") && rows[2].contains("0.000"),
        "{out}"
    );
    assert!(
        rows[4].starts_with("oracle") && rows[4].contains("1.000"),
        "{out}"
    );
    assert!(dir.path().join("manifest.json").exists());
    assert_eq!(
        std::fs::read_dir(dir.path().join("transcripts"))
            .unwrap()
            .count(),
        12
    );
}

/// Issue 11: a complete, newline-terminated line that is not a record is corruption: the
/// resume stops naming the file and the line, and the line stays where it was.
#[test]
fn a_resume_over_a_corrupted_complete_line_exits_non_zero_and_leaves_it_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "run",
        "--policy",
        "oracle",
        "--level",
        "L1",
        "--tasks",
        "T1_single_page",
        "--seeds",
        "0..2",
        "--out",
    ];
    let o = bin().args(args).arg(dir.path()).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let path = dir.path().join("episodes.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut ls: Vec<&str> = text.lines().collect();
    ls[1] = "{\"key\": {\"policy\": \"oracle\"}, \"outcome\": \"submi";
    let damaged = ls.join("\n") + "\n";
    std::fs::write(&path, &damaged).unwrap();
    let o = bin().args(args).arg(dir.path()).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("episodes.jsonl: line 2") && err.contains("corrupt"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), damaged);
}

#[test]
fn without_a_terminal_progress_is_plain_lines_with_the_resume_hint() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let run_oracle = || {
        bin()
            .args([
                "run",
                "--policy",
                "oracle",
                "--tasks",
                "T3_duplicates",
                "--seeds",
                "0..3",
                "--out",
            ])
            .arg(&out)
            .output()
            .unwrap()
    };
    let o = run_oracle();
    assert!(o.status.success());
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.starts_with(&format!(
            "running 4 episodes into {} (Ctrl-C stops it; the same command resumes)\n",
            out.display()
        )),
        "{err}"
    );
    // No bar drawing: no carriage returns, no escape sequences.
    assert!(!err.contains('\r') && !err.contains('\u{1b}'), "{err:?}");
    // A finished run resumes to nothing and says so without a start line.
    let again = run_oracle();
    let err = String::from_utf8(again.stderr).unwrap();
    assert!(
        err.contains("4 episodes already recorded, 0 to run"),
        "{err}"
    );
    assert!(!err.contains("running "), "{err}");
}
