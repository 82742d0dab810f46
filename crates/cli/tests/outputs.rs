//! Output folders behave (issue 13): `report --metric M` writes a folder per metric, no command
//! writes into a folder another command owns, a report on an incomplete or running ledger says
//! so with recorded/planned, and written files are 0644.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_benchaudit"))
}

fn run(args: &[&str], out: &Path) -> Output {
    bin().args(args).arg(out).output().unwrap()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const RUN: [&str; 9] = [
    "run",
    "--policy",
    "oracle,empty",
    "--task",
    "T3_duplicates",
    "--seeds",
    "0..3",
    "--jobs",
    "1",
];

#[test]
fn reports_go_to_a_folder_per_metric_and_no_command_writes_into_anothers_folder() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path().join("run");
    let mut args = RUN.to_vec();
    args.push("--out");
    let o = run(&args, &r);
    assert!(o.status.success(), "{}", err(&o));

    let o = run(&["report"], &r);
    assert!(o.status.success(), "{}", err(&o));
    let f1 = r.join("report/f1/stats.json");
    let before = std::fs::read(&f1).unwrap();
    let o = run(&["report", "--metric", "judge"], &r);
    assert!(o.status.success(), "{}", err(&o));
    assert!(r.join("report/judge/stats.json").is_file());
    assert_eq!(
        std::fs::read(&f1).unwrap(),
        before,
        "the F1 report was overwritten"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for file in [
            "report/f1/stats.json",
            "report/f1/report.html",
            "manifest.json",
        ] {
            let mode = std::fs::metadata(r.join(file))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o644, "{file}");
        }
    }

    // audit into a run ledger, a report into it, a run into an audit's or a stranger's folder.
    let o = bin()
        .args(["audit", "--seeds", "0", "--out"])
        .arg(&r)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("holds a run ledger (manifest.json is there)"),
        "{}",
        err(&o)
    );
    let o = bin()
        .arg("report")
        .arg(&r)
        .arg("--out")
        .arg(&r)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("not a report"), "{}", err(&o));
    let audit_like = dir.path().join("audit");
    std::fs::create_dir(&audit_like).unwrap();
    std::fs::write(audit_like.join("card.json"), "{}").unwrap();
    let o = run(&args, &audit_like);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("holds an audit's output"), "{}", err(&o));
    let stranger = dir.path().join("thesis");
    std::fs::create_dir(&stranger).unwrap();
    std::fs::write(stranger.join("chapter1.tex"), "").unwrap();
    let o = run(&args, &stranger);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("chapter1.tex"), "{}", err(&o));
    assert_eq!(
        std::fs::read_dir(&stranger).unwrap().count(),
        1,
        "nothing written"
    );
}

#[test]
fn a_report_on_an_incomplete_or_running_ledger_says_recorded_of_planned() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path().join("run");
    let mut args = RUN.to_vec();
    args.push("--out");
    assert!(run(&args, &r).status.success());
    // Keep 3 of the 8 records, as a run stopped early leaves them.
    let text = std::fs::read_to_string(r.join("episodes.jsonl")).unwrap();
    let kept: String = text.lines().take(3).map(|l| format!("{l}\n")).collect();
    std::fs::write(r.join("episodes.jsonl"), kept).unwrap();
    let o = bin().arg("report").arg(&r).arg("--json").output().unwrap();
    assert!(o.status.success(), "{}", err(&o));
    assert!(
        err(&o).contains("is incomplete: 3 of 8 planned episodes are recorded"),
        "{}",
        err(&o)
    );
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        json["notes"][0].as_str().unwrap().contains("3 of 8"),
        "{json}"
    );

    // While another process holds the ledger's lock, the report says it is still being written.
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(r.join(".lock"))
        .unwrap();
    lock.lock().unwrap();
    let o = bin().arg("report").arg(&r).output().unwrap();
    assert!(o.status.success(), "{}", err(&o));
    assert!(
        err(&o).contains("still being written by another benchaudit process: this report shows what is recorded so far (episodes recorded: 3 of 8 planned)"),
        "{}",
        err(&o)
    );
    drop(lock);
}

#[test]
fn tasks_are_listed_in_natural_order() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path().join("run");
    let o = bin()
        .args([
            "run",
            "--policy",
            "oracle",
            "--task",
            "T10_constrained_budget,T2_multi_page,T9_clean_ab",
            "--seeds",
            "0",
            "--out",
        ])
        .arg(&r)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    assert!(run(&["report"], &r).status.success());
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(r.join("report/f1/stats.json")).unwrap())
            .unwrap();
    let want = ["T2_multi_page", "T9_clean_ab", "T10_constrained_budget"];
    assert_eq!(stats["tasks"], serde_json::json!(want));
    let cells: Vec<&str> = stats["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["task_id"].as_str().unwrap())
        .collect();
    assert_eq!(cells, want);
}
