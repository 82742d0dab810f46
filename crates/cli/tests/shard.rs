//! `run --shard I/N`, `ab --shard I/N` and `merge` through the binary (issue 19): the merged
//! run is the single-process run for every reader (the ledger after canonical ordering, the
//! report, the Inspect export, the A/B analysis), and a missing shard is reported with its
//! command, exit 3.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;

use benchaudit_testkit::{Benchaudit, files_under, p, text};
use serde_json::Value;

const BIN: Benchaudit = Benchaudit(env!("CARGO_BIN_EXE_benchaudit"));
const RUN: [&str; 7] = [
    "run",
    "--policy",
    "oracle,no-dedup,baseline",
    "--level",
    "L1,L2",
    "--seeds",
    "0..4",
];

/// Lines without `timing`, sorted by key: the canonical order, as text.
fn canonical_lines(dir: &Path) -> Vec<String> {
    let mut lines: Vec<(String, String)> = std::fs::read_to_string(dir.join("episodes.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("timing");
            let k = &v["key"];
            // The derived order of EpisodeKey: policy, level, task, seed, arm, options hash.
            let sort = format!(
                "{}\u{0}{}\u{0}{}\u{0}{:020}\u{0}{}\u{0}{}",
                k["policy"].as_str().unwrap(),
                k["level"].as_str().unwrap(),
                k["task_id"].as_str().unwrap(),
                k["seed"].as_u64().unwrap(),
                k["arm"].as_str().unwrap_or(""),
                k["options_hash"].as_str().unwrap()
            );
            (sort, serde_json::to_string(&v).unwrap())
        })
        .collect();
    lines.sort();
    lines.into_iter().map(|(_, l)| l).collect()
}

fn merged_lines_in_file_order(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("episodes.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("timing");
            serde_json::to_string(&v).unwrap()
        })
        .collect()
}

/// Every file under `dir` by relative path, with `from` in its text replaced by `to`.
fn tree(dir: &Path, from: &str, to: &str) -> BTreeMap<String, String> {
    files_under(dir)
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "json" || e == "md"))
        .map(|f| {
            let rel = f.strip_prefix(dir).unwrap().display().to_string();
            (rel, std::fs::read_to_string(&f).unwrap().replace(from, to))
        })
        .collect()
}

#[test]
fn run_in_three_shards_then_merge_reads_as_the_single_process_run() {
    let root = tempfile::tempdir().unwrap();
    let d = |n: &str| root.path().join(n);
    BIN.ok(&[RUN.as_slice(), &["--out", p(&d("single"))]].concat());
    let mut sizes = Vec::new();
    for i in 0..3 {
        let shard = format!("{i}/3");
        let out = d(&format!("shard-{i}"));
        let o = BIN.ok(&[
            RUN.as_slice(),
            &["--shard", &shard, "--jobs", "2", "--out", p(&out)],
        ]
        .concat());
        assert!(
            text(&o.stderr).contains(&format!("shard {shard} recorded in")),
            "{}",
            text(&o.stderr)
        );
        sizes.push(canonical_lines(&out).len());
    }
    assert_eq!(sizes.iter().sum::<usize>(), 3 * 2 * 11 * 5);

    // A missing shard: exit 3, its command, nothing written.
    let o = BIN.run(&[
        "merge",
        p(&d("shard-0")),
        p(&d("shard-2")),
        "--out",
        p(&d("merged")),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("shard 1/3: missing; run it with:"), "{err}");
    assert!(
        err.contains(&format!("--shard 1/3 --jobs 2 --out {}", p(&d("shard-1")))),
        "{err}"
    );
    assert!(!d("merged").exists());

    let o = BIN.ok(&[
        "merge",
        p(&d("shard-2")),
        p(&d("shard-0")),
        p(&d("shard-1")),
        "--out",
        p(&d("merged")),
    ]);
    let out = text(&o.stdout);
    assert!(out.starts_with("merged 3 shards of plan "), "{out}");
    assert!(out.contains(": 330 episodes, 330 transcripts"), "{out}");

    // The ledger: byte for byte the single-process one in canonical order, timing aside.
    assert_eq!(
        merged_lines_in_file_order(&d("merged")),
        canonical_lines(&d("single"))
    );
    // The summary `run` prints is the same table.
    let single_summary = BIN.ok(&[RUN.as_slice(), &["--out", p(&d("single"))]].concat());
    assert!(out.ends_with(&text(&single_summary.stdout)), "{out}");

    // report and export read it as the single-process run.
    for (run, report, logs) in [
        ("single", "report-single", "logs-single"),
        ("merged", "report-merged", "logs-merged"),
    ] {
        BIN.ok(&["report", p(&d(run)), "--out", p(&d(report))]);
        BIN.ok(&[
            "export",
            "--format",
            "inspect",
            p(&d(run)),
            "--out",
            p(&d(logs)),
        ]);
    }
    let single = p(&d("single")).to_string();
    let merged = p(&d("merged")).to_string();
    assert_eq!(
        tree(&d("report-merged"), &merged, &single),
        tree(&d("report-single"), &single, &single)
    );
    let names = |dir: &Path| -> Vec<String> {
        files_under(dir)
            .iter()
            .map(|f| f.strip_prefix(dir).unwrap().display().to_string())
            .collect()
    };
    assert_eq!(names(&d("logs-merged")), names(&d("logs-single")));
    assert!(!names(&d("logs-merged")).is_empty());

    // The unsharded command on the merged directory runs nothing.
    let o = BIN.ok(&[RUN.as_slice(), &["--out", &merged]].concat());
    assert!(
        text(&o.stderr).contains("330 episodes already recorded, 0 to run"),
        "{}",
        text(&o.stderr)
    );

    // A shard directory refuses another shard spec, naming the field.
    let o = BIN.run(
        &[
            RUN.as_slice(),
            &["--shard", "2/3", "--out", p(&d("shard-0"))],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("shard: recorded 0/3, now 2/3"),
        "{}",
        text(&o.stderr)
    );
    // Shards are numbered from 0.
    let o = BIN.run(&[RUN.as_slice(), &["--shard", "3/3", "--out", p(&d("x"))]].concat());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("numbered 0 to 2"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn ab_in_shards_then_merge_analyses_as_the_unsharded_design() {
    let root = tempfile::tempdir().unwrap();
    let d = |n: &str| root.path().join(n);
    let ab = [
        "ab",
        "--policy",
        "always-retry,always-skip",
        "--level",
        "L1",
        "--seeds",
        "0..9",
    ];
    BIN.ok(&[ab.as_slice(), &["--out", p(&d("single"))]].concat());
    for i in 0..2 {
        let shard = format!("{i}/2");
        let o = BIN.ok(&[
            ab.as_slice(),
            &["--shard", &shard, "--out", p(&d(&format!("shard-{i}")))],
        ]
        .concat());
        assert!(
            !d(&format!("shard-{i}")).join("ab.json").exists(),
            "a shard is not analysed"
        );
        assert!(
            text(&o.stderr).contains("this command without --shard"),
            "{}",
            text(&o.stderr)
        );
    }
    BIN.ok(&[
        "merge",
        p(&d("shard-0")),
        p(&d("shard-1")),
        "--out",
        p(&d("merged")),
    ]);
    let o = BIN.ok(&[ab.as_slice(), &["--out", p(&d("merged"))]].concat());
    assert!(text(&o.stderr).contains("0 to run"), "{}", text(&o.stderr));
    let read = |dir: &str| -> Value {
        serde_json::from_slice(&std::fs::read(d(dir).join("ab.json")).unwrap()).unwrap()
    };
    assert_eq!(read("merged"), read("single"));
}
