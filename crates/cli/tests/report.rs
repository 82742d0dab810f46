//! `benchaudit report` end to end: a real run of the rule stand-ins, the report's numbers
//! recomputed from episodes.jsonl, the files and figures checked, the number guard applied to
//! the documents (and to a doctored copy), reproducibility, run comparison, and the exit codes
//! for bad input. The sections a ledger's shape selects (A/B arms, doses, levels, the 2×2) are
//! tested through the library in `crates/report/tests/sections.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use benchaudit_audit::guard;
use benchaudit_testkit::{
    Benchaudit, check_pooled_summary, check_summary, f1_by_cell, p, read_json, recompute, same,
};
use serde_json::Value;

const BIN: Benchaudit = Benchaudit(env!("CARGO_BIN_EXE_benchaudit"));

const POLICIES: &str =
    "oracle,no-dedup,keeps-totals,skips-faults,single-pass,page-zero,fabricator,empty";
const TASKS: &str = "T3_duplicates,T4_rate_limit_429,T5_server_error_500,T6_page_drift,T7_totals_trap,T8_mixed_faults";

fn run(args: &[&str]) -> std::process::Output {
    BIN.run(args)
}

fn ok(args: &[&str]) -> std::process::Output {
    BIN.ok(args)
}

/// `s` without the number guard's path tags (`<!-- ba:… -->`).
fn strip_tags(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("<!-- ba:") {
        out.push_str(&rest[..i]);
        rest = rest[i..].split_once("-->").map_or("", |(_, r)| r);
    }
    out.push_str(rest);
    out
}

fn fmt3(x: f64) -> String {
    format!("{x:.3}")
}

#[test]
fn report_of_the_rule_stand_ins_matches_the_ledger() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("l2-rules");
    ok(&[
        "run",
        "--policy",
        POLICIES,
        "--level",
        "L2",
        "--tasks",
        TASKS,
        "--seeds",
        "0..9",
        "--out",
        p(&run_dir),
        "--jobs",
        "2",
    ]);
    let out = tmp.path().join("report");
    let o = ok(&["report", p(&run_dir), "--out", p(&out)]);
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert!(
        stdout.contains("| oracle | L2 | 6 | 60 | 1.000 |"),
        "{stdout}"
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("number guard passed"));

    let stats = read_json(&out.join("stats.json"));
    assert_eq!(stats["schema"], "benchaudit.report/1");
    assert_eq!(stats["settings"]["metric"], "f1");
    assert_eq!(stats["episodes"]["total"], 480);
    assert_eq!(stats["episodes"]["used"], 480);
    assert_eq!(stats["episodes"]["infra_errors"], 0);

    // Every per-task cell and every pooled row, recomputed from episodes.jsonl.
    let ledger = f1_by_cell(&run_dir);
    let cells = stats["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 48);
    for ((policy, level, task), seeds) in &ledger {
        let cell = cells
            .iter()
            .find(|c| {
                c["policy"] == policy.as_str()
                    && c["level"] == level.as_str()
                    && c["task_id"] == task.as_str()
            })
            .unwrap_or_else(|| panic!("no cell for {policy} {level} {task}"));
        let values: Vec<f64> = seeds.values().copied().collect();
        check_summary(&format!("{policy} {task}"), &cell["summary"], &values);
        let recorded: Vec<(u64, f64)> = cell["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| (v["seed"].as_u64().unwrap(), v["value"].as_f64().unwrap()))
            .collect();
        assert_eq!(
            recorded,
            seeds.iter().map(|(s, v)| (*s, *v)).collect::<Vec<_>>()
        );
        let (mean, worst, _, _) = recompute(&values);
        same(
            &cell["shortfall"]["shortfall"],
            mean - worst,
            "shortfall = mean − worst",
        );
    }
    let pooled = stats["pooled"].as_array().unwrap();
    assert_eq!(pooled.len(), 8);
    let tagged_md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let md = strip_tags(&tagged_md);
    for row in pooled {
        let policy = row["policy"].as_str().unwrap();
        let values: Vec<f64> = ledger
            .iter()
            .filter(|((pol, _, _), _)| pol == policy)
            .flat_map(|(_, s)| s.values().copied())
            .collect();
        assert_eq!(values.len(), 60);
        let strata: Vec<Vec<f64>> = ledger
            .iter()
            .filter(|((pol, _, _), _)| pol == policy)
            .map(|(_, s)| s.values().copied().collect())
            .collect();
        check_pooled_summary(policy, &row["summary"], &strata);
        // The quartiles of the spectrum box: type 7 interpolation.
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let q = |pr: f64| {
            let h = 59.0 * pr;
            let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
            sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
        };
        assert!((row["five"]["q1"].as_f64().unwrap() - q(0.25)).abs() < 1e-12);
        assert!((row["five"]["median"].as_f64().unwrap() - q(0.5)).abs() < 1e-12);
        assert!((row["five"]["q3"].as_f64().unwrap() - q(0.75)).abs() < 1e-12);
        // The Markdown prints the recomputed numbers, three decimals.
        let (mean, worst, cvar, rel) = recompute(&values);
        let s = &row["summary"];
        let line = format!(
            "| {policy} | L2 | 6 | 60 | {} | [{}, {}] | {} | {} | {} | {} | {} |",
            fmt3(mean),
            fmt3(s["mean_ci"]["lo"].as_f64().unwrap()),
            fmt3(s["mean_ci"]["hi"].as_f64().unwrap()),
            fmt3(worst),
            fmt3(cvar),
            fmt3(rel[0]),
            fmt3(rel[1]),
            fmt3(mean - worst)
        );
        assert!(md.contains(&line), "missing pooled row {line}\n{md}");
    }
    // The paper's reading of these stand-ins: the oracle is perfect, empty and fabricated
    // submissions score zero on ground truth, while the judge floors and ties them.
    let mean_of = |policy: &str| {
        pooled.iter().find(|r| r["policy"] == policy).unwrap()["summary"]["mean"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(mean_of("oracle"), 1.0);
    assert_eq!(mean_of("fabricator"), 0.0);
    assert_eq!(mean_of("empty"), 0.0);
    let judge_of = |policy: &str| {
        stats["scorers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["policy"] == policy)
            .unwrap()["judge_mean"]
            .as_f64()
            .unwrap()
    };
    assert!(judge_of("fabricator") > 0.9 && judge_of("empty") > 0.5);

    // Files: documents, and every listed figure as an SVG and a PNG of the listed size.
    for f in ["stats.json", "report.md", "report.html", "guard.json"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let figures = stats["figures"].as_array().unwrap();
    let ids: Vec<&str> = figures.iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["spectrum_L2", "heatmap_L2", "scorers_L2", "passk"]);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for f in figures {
        let svg = std::fs::read_to_string(out.join(f["svg"].as_str().unwrap())).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("<text"),
            "{}",
            f["svg"]
        );
        assert!(
            html.contains(svg.trim()),
            "report.html inlines {}",
            f["svg"]
        );
        let png = image::open(out.join(f["png"].as_str().unwrap())).unwrap();
        assert_eq!(
            (u64::from(png.width()), u64::from(png.height())),
            (f["width"].as_u64().unwrap(), f["height"].as_u64().unwrap())
        );
        let dark = png
            .to_rgb8()
            .pixels()
            .filter(|px| px.0.iter().all(|&c| c < 80))
            .count();
        assert!(dark > 500, "{} has almost no ink", f["png"]);
        assert!(md.contains(&format!("]({})", f["svg"].as_str().unwrap())));
    }
    assert!(
        !html.contains("<link") && !html.contains("src=\"http") && !html.contains("<script"),
        "self-contained"
    );

    // The guard passes on both documents; a doctored copy with an invented figure fails.
    assert!(
        guard::check(&md, &stats).passed(),
        "{}",
        guard::check(&md, &stats)
    );
    assert!(guard::check_html(&html, &stats).passed());
    let original = fmt3(mean_of("no-dedup"));
    let invented = (1..1000)
        .map(|k| format!("0.{k:03}"))
        .find(|c| !guard::check(c, &stats).passed())
        .expect("some three-decimal figure is absent from stats.json");
    let doctored = md.replacen(
        &format!("| no-dedup | L2 | 6 | 60 | {original} |"),
        &format!("| no-dedup | L2 | 6 | 60 | {invented} |"),
        1,
    );
    assert_ne!(doctored, md);
    let verdict = guard::check(&doctored, &stats);
    assert_eq!(verdict.violations.len(), 1, "{verdict}");
    assert_eq!(verdict.violations[0].number.text, invented);
    let doctored_html = html.replacen(
        &format!("<td class=\"r\">{original}<!-- ba:"),
        &format!("<td class=\"r\">{invented}<!-- ba:"),
        1,
    );
    assert_ne!(doctored_html, html);
    assert!(!guard::check_html(&doctored_html, &stats).passed());
    // A tagged figure is checked at its path: no-dedup's mean replaced by the oracle's 1.000,
    // a number stats.json holds (so membership alone accepts it), fails at its tagged path.
    assert!(guard::check(&tagged_md, &stats).passed());
    let row = tagged_md
        .lines()
        .find(|l| l.starts_with("| no-dedup | L2 |"))
        .unwrap();
    let swapped = format!("| {original}<!-- ba:");
    assert!(row.contains(&swapped), "{row}");
    let doctored = tagged_md.replacen(row, &row.replacen(&swapped, "| 1.000<!-- ba:", 1), 1);
    assert!(guard::check(&strip_tags(&doctored), &stats).passed());
    let verdict = guard::check(&doctored, &stats);
    assert_eq!(verdict.violations.len(), 1, "{verdict}");
    assert_eq!(verdict.violations[0].number.text, "1.000");
    assert!(
        verdict.violations[0]
            .path
            .as_deref()
            .is_some_and(|p| p.starts_with("/pooled/") && p.ends_with("/summary/mean")),
        "{verdict}"
    );

    // Reproducible: the same command writes the same bytes; another seed moves only CIs.
    let again = tmp.path().join("again");
    ok(&["report", p(&run_dir), "--out", p(&again)]);
    for f in [
        "stats.json",
        "report.md",
        "report.html",
        "figures/spectrum_L2.svg",
        "figures/spectrum_L2.png",
    ] {
        assert_eq!(
            std::fs::read(out.join(f)).unwrap(),
            std::fs::read(again.join(f)).unwrap(),
            "{f} differs between runs"
        );
    }
    let seeded = tmp.path().join("seed1");
    ok(&["report", p(&run_dir), "--out", p(&seeded), "--seed", "1"]);
    let other = read_json(&seeded.join("stats.json"));
    let rows = |s: &Value| {
        s["pooled"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["summary"].clone())
            .collect::<Vec<_>>()
    };
    let (a, b) = (rows(&stats), rows(&other));
    assert!(
        a.iter()
            .zip(&b)
            .all(|(x, y)| x["mean"] == y["mean"] && x["worst"] == y["worst"])
    );
    assert!(
        a.iter()
            .zip(&b)
            .any(|(x, y)| x["mean_ci"]["lo"] != y["mean_ci"]["lo"]),
        "the seed must reach the bootstrap"
    );

    // Default output directory and the judge metric.
    ok(&["report", p(&run_dir), "--metric", "judge"]);
    let judge = read_json(&run_dir.join("report/judge/stats.json"));
    assert_eq!(judge["settings"]["metric"], "judge");
    let fabricator = judge["pooled"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["policy"] == "fabricator")
        .unwrap();
    assert!(
        (fabricator["summary"]["mean"].as_f64().unwrap() - judge_of("fabricator")).abs() < 1e-12
    );

    // Paired comparison by seed: a second run of two policies on two tasks, Δ = B − A.
    let run_b = tmp.path().join("strict");
    ok(&[
        "run",
        "--policy",
        "oracle,page-zero",
        "--level",
        "L2",
        "--tasks",
        "T3_duplicates,T6_page_drift",
        "--seeds",
        "0..9",
        "--interface",
        "strict",
        "--out",
        p(&run_b),
    ]);
    let cmp_out = tmp.path().join("compare");
    ok(&[
        "report",
        "--compare",
        p(&run_dir),
        p(&run_b),
        "--out",
        p(&cmp_out),
    ]);
    let cmp = read_json(&cmp_out.join("stats.json"));
    assert_eq!(cmp["kind"], "compare");
    let c = &cmp["comparison"];
    assert_eq!(
        (
            c["delta"].as_str(),
            c["pairs"].as_u64(),
            c["unpaired_a"].as_u64(),
            c["unpaired_b"].as_u64()
        ),
        (Some("b - a"), Some(40), Some(440), Some(0))
    );
    let ledger_b = f1_by_cell(&run_b);
    for row in c["rows"].as_array().unwrap() {
        let key = (
            row["policy"].as_str().unwrap().to_string(),
            "L2".to_string(),
            row["task_id"].as_str().unwrap().to_string(),
        );
        let (xa, xb) = (&ledger[&key], &ledger_b[&key]);
        let deltas: Vec<f64> = xa.iter().map(|(s, a)| xb[s] - a).collect();
        let mut sum = 0.0;
        for d in &deltas {
            sum += d;
        }
        assert_eq!(row["n"], 10);
        same(&row["delta"], sum / 10.0, &format!("{key:?}"));
        assert_eq!(
            row["positive"].as_u64().unwrap() as usize,
            deltas.iter().filter(|d| **d > 0.0).count()
        );
        assert!(row["p_holm"].as_f64().unwrap() >= row["p_value"].as_f64().unwrap());
    }
    assert_eq!(c["pooled"].as_array().unwrap().len(), 2);
    assert!(cmp_out.join("figures/forest.png").is_file());
    let cmp_md = std::fs::read_to_string(cmp_out.join("report.md")).unwrap();
    assert!(guard::check(&cmp_md, &cmp).passed());
}

#[test]
fn bad_input_exits_2_with_a_message() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nope");
    let o = run(&["report", p(&missing)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a directory"));

    let empty_dir = tmp.path().join("empty");
    std::fs::create_dir_all(&empty_dir).unwrap();
    let o = run(&["report", p(&empty_dir)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no episodes.jsonl"));

    let run_dir = tmp.path().join("run");
    ok(&[
        "run",
        "--policy",
        "oracle",
        "--level",
        "L2",
        "--tasks",
        "T3_duplicates",
        "--seeds",
        "0..1",
        "--out",
        p(&run_dir),
    ]);
    let o = run(&["report", p(&run_dir), "--metric", "coverage"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("coverage is recorded at L0 and L1 only"));
    for bad in [
        ["--alpha", "0"],
        ["--alpha", "1.5"],
        ["--tau", "nan"],
        ["--resamples", "0"],
    ] {
        let o = run(&["report", p(&run_dir), bad[0], bad[1]]);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
    }
    let o = run(&["report"]);
    assert_eq!(o.status.code(), Some(2));

    // A torn last line is skipped with a note; corruption in the middle is an error.
    let ledger = run_dir.join("episodes.jsonl");
    let text = std::fs::read_to_string(&ledger).unwrap();
    std::fs::write(&ledger, format!("{text}{{\"key\": {{\"pol")).unwrap();
    let o = ok(&["report", p(&run_dir), "--out", p(&tmp.path().join("torn"))]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("torn"));
    assert_eq!(
        read_json(&tmp.path().join("torn/stats.json"))["source"]["torn_last_line"],
        true
    );
    std::fs::write(&ledger, format!("not json\n{text}")).unwrap();
    let o = run(&["report", p(&run_dir)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("corrupt"));
    // The same episode twice.
    let first = text.lines().next().unwrap();
    std::fs::write(&ledger, format!("{text}{first}\n")).unwrap();
    let o = run(&["report", p(&run_dir)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("appears twice"));

    // Nothing to pair.
    let other = tmp.path().join("other");
    ok(&[
        "run",
        "--policy",
        "empty",
        "--level",
        "L2",
        "--tasks",
        "T4_rate_limit_429",
        "--seeds",
        "0",
        "--out",
        p(&other),
    ]);
    std::fs::write(&ledger, &text).unwrap();
    let o = run(&["report", "--compare", p(&run_dir), p(&other)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no episode"));
}

/// Replaces line 1 of the run's ledger with `edit` applied to it.
fn doctor_first_line(run_dir: &std::path::Path, text: &str, edit: &dyn Fn(&mut Value)) {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut first: Value = serde_json::from_str(&lines[0]).unwrap();
    edit(&mut first);
    lines[0] = first.to_string();
    std::fs::write(run_dir.join("episodes.jsonl"), lines.join("\n") + "\n").unwrap();
}

#[test]
fn records_outside_the_plan_or_the_scorers_range_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("run");
    ok(&[
        "run",
        "--policy",
        "oracle,empty",
        "--level",
        "L2",
        "--tasks",
        "T3_duplicates",
        "--seeds",
        "0..1",
        "--out",
        p(&run_dir),
    ]);
    let text = std::fs::read_to_string(run_dir.join("episodes.jsonl")).unwrap();
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "a foreign policy",
            Box::new(|r| r["key"]["policy"] = "fabricator".into()),
            "policy \"fabricator\" is not in the run's plan",
        ),
        (
            "a policy name with ../",
            Box::new(|r| r["key"]["policy"] = "../../etc/oracle".into()),
            "policy \"../../etc/oracle\" is not in the run's plan",
        ),
        (
            "a policy name with NUL",
            Box::new(|r| r["key"]["policy"] = "oracle\u{0}".into()),
            "policy \"oracle\\0\" is not in the run's plan",
        ),
        (
            "a foreign seed",
            Box::new(|r| r["key"]["seed"] = 7.into()),
            "seed 7 is not in the run's plan",
        ),
        (
            "a foreign task",
            Box::new(|r| r["key"]["task_id"] = "T4_rate_limit_429".into()),
            "task \"T4_rate_limit_429\" is not in the run's plan",
        ),
        (
            "a foreign level",
            Box::new(|r| r["key"]["level"] = "L0".into()),
            "level L0 is not in the run's plan",
        ),
        (
            "foreign options",
            Box::new(|r| r["key"]["options_hash"] = "0123456789abcdef".into()),
            "options hash \"0123456789abcdef\" is not in the run's plan",
        ),
        (
            "an F1 of -5",
            Box::new(|r| r["scores"]["f1"] = (-5.0).into()),
            "scores.f1 -5.0 is outside [0, 1]",
        ),
        (
            "a judge total of 1e300",
            Box::new(|r| r["scores"]["judge_total"] = 1e300.into()),
            "scores.judge_total 1e300 is outside [0, 100]",
        ),
        (
            "a reward of 1e300",
            Box::new(|r| r["reward"] = 1e300.into()),
            "reward 1e300 is outside [0, 1]",
        ),
        (
            "a coverage of 2",
            Box::new(|r| r["coverage"] = 2.0.into()),
            "coverage 2.0 is outside [0, 1]",
        ),
    ];
    for (what, edit, message) in &cases {
        doctor_first_line(&run_dir, &text, edit.as_ref());
        let o = run(&["report", p(&run_dir), "--out", p(&tmp.path().join("r"))]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{what}: {stderr}");
        assert!(stderr.contains(message), "{what}: {stderr}");
        assert!(stderr.contains("line 1"), "{what}: {stderr}");
    }
    std::fs::write(run_dir.join("episodes.jsonl"), &text).unwrap();

    // Another tool's manifest is refused; another version's or registry's is read and flagged.
    let manifest_path = run_dir.join("manifest.json");
    let manifest = read_json(&manifest_path);
    let write_manifest = |field: &str, value: &str| {
        let mut m = manifest.clone();
        m[field] = value.into();
        std::fs::write(&manifest_path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    };
    write_manifest("tool", "otherbench");
    let o = run(&["report", p(&run_dir), "--out", p(&tmp.path().join("r"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a benchaudit run directory"));
    for (field, value, note) in [
        (
            "version",
            "0.0.1",
            "recorded by benchaudit 0.0.1, this is benchaudit",
        ),
        ("registry_sha256", "00ff", "recorded on task registry 00ff"),
    ] {
        write_manifest(field, value);
        let out = tmp.path().join(field);
        let o = ok(&["report", p(&run_dir), "--out", p(&out)]);
        assert!(String::from_utf8_lossy(&o.stderr).contains(note), "{field}");
        let o = ok(&["report", p(&run_dir), "--out", p(&out), "--json"]);
        let json: Value = serde_json::from_slice(&o.stdout).unwrap();
        let notes = json["notes"].as_array().unwrap();
        assert!(
            notes.iter().any(|n| n.as_str().unwrap().contains(note)),
            "{field}: {notes:?}"
        );
    }
}

#[test]
fn a_newline_in_a_policy_name_keeps_report_md_tables_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let run_dir = tmp.path().join("foreign");
    let template = benchaudit_testkit::template_record();
    let records: Vec<Value> = (0..3)
        .flat_map(|seed| {
            [
                benchaudit_testkit::record(&template, "two\nlines", "T3_duplicates", seed, "", 1.0),
                benchaudit_testkit::record(&template, "plain", "T3_duplicates", seed, "", 0.5),
            ]
        })
        .collect();
    benchaudit_testkit::write_ledger(&run_dir, &records);
    let out = tmp.path().join("report");
    ok(&["report", p(&run_dir), "--out", p(&out)]);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("two\\nlines"), "{md}");
    // Every line that continues a table is a table row.
    let lines: Vec<&str> = md.lines().collect();
    for pair in lines.windows(2) {
        if pair[0].starts_with('|') && !pair[1].is_empty() {
            assert!(pair[1].starts_with('|'), "a table broken at {pair:?}");
        }
    }
    assert!(!md.contains("\ntwo"), "{md}");
}
