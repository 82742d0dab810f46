//! `ab` and `report` agree on the same run directory (issue 11): the same default metric, the
//! same arm labels (quota and slack, not an options hash), and a paired row for every arm of a
//! sweep with the numbers `ab` found; and a 12-arm sweep's figures stay within the bounded
//! width (issue 13).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use benchaudit_testkit::{Benchaudit, p, read_json, same};

const BIN: Benchaudit = Benchaudit(env!("CARGO_BIN_EXE_benchaudit"));

#[test]
fn report_on_an_ab_sweep_pairs_every_arm_as_ab_does() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("sweep");
    // Twelve slacks: 12 settings × 2 arms, the sweep issue 13 measured at 9 220 px.
    let slacks: Vec<String> = (0..12).map(|s| s.to_string()).collect();
    BIN.ok(&[
        "ab",
        "--policy",
        "always-retry,always-skip",
        "--level",
        "L1",
        "--design",
        "quota",
        "--squeeze",
        "3",
        "--slack-sweep",
        &slacks.join(","),
        "--seeds",
        "0..5",
        "--out",
        p(&run),
    ]);
    let ab = read_json(&run.join("ab.json"));
    let comparisons = ab["comparisons"].as_array().unwrap();
    assert_eq!(comparisons.len(), 24);

    // No --metric: report reads the metric ab tested (coverage at L1), into report/coverage.
    let o = BIN.ok(&["report", p(&run)]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("number guard passed"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = run.join("report").join("coverage");
    let stats = read_json(&out.join("stats.json"));
    assert_eq!(ab["metric"], "coverage");
    assert_eq!(stats["settings"]["metric"], ab["metric"]);

    // Arms are labelled by quota and slack, never by an options hash.
    let labels: Vec<&str> = stats["pooled"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels.len(), 48, "{labels:?}");
    assert!(labels.iter().all(|l| !l.contains('#')), "{labels:?}");
    assert!(
        labels.contains(&"always-retry [escalating; quota 8, slack 0]"),
        "{labels:?}"
    );

    // One paired row per (agent, setting), with ab's numbers, Holm over the same family.
    let section = &stats["ab"];
    assert_eq!(section["skipped"].as_array().unwrap().len(), 0, "{section}");
    let rows = section["rows"].as_array().unwrap();
    assert_eq!(rows.len(), comparisons.len());
    for c in comparisons {
        let (agent, quota, slack) = (
            c["agent"].as_str().unwrap(),
            c["quota"].as_u64(),
            c["slack"].as_i64(),
        );
        let row = rows
            .iter()
            .find(|r| {
                r["policy"] == agent
                    && r["setting"]["quota"].as_u64() == quota
                    && r["setting"]["slack"].as_i64() == slack
            })
            .unwrap_or_else(|| panic!("no paired row for {agent} quota {quota:?} slack {slack:?}"));
        let label = row["label"].as_str().unwrap();
        assert!(
            label.contains(&format!(
                "quota {}, slack {}",
                quota.unwrap(),
                slack.unwrap()
            )),
            "{label}"
        );
        let st = &c["stats"];
        same(&row["delta"], st["mean_delta"].as_f64().unwrap(), "Δ");
        same(
            &row["delta_ci"]["lo"],
            st["delta_ci"]["lo"].as_f64().unwrap(),
            "CI lo",
        );
        same(
            &row["delta_ci"]["hi"],
            st["delta_ci"]["hi"].as_f64().unwrap(),
            "CI hi",
        );
        same(&row["p_holm"], c["p_holm"].as_f64().unwrap(), "Holm p");
        assert_eq!(row["n"], st["n"]);
    }
    // The table and the forest plot of the paired differences are in the report.
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## A/B: constant vs escalating stress"), "{md}");
    let figures = stats["figures"].as_array().unwrap();
    let forest = figures.iter().find(|f| f["id"] == "forest").unwrap();
    assert!(out.join(forest["png"].as_str().unwrap()).is_file());

    // Issue 13: every figure of the 12-arm sweep stays within 1 600 px, PNG and SVG alike.
    for f in figures {
        let png = image::open(out.join(f["png"].as_str().unwrap())).unwrap();
        assert!(
            png.width() <= 1600,
            "{} is {} px wide",
            f["png"],
            png.width()
        );
        assert_eq!(u64::from(png.height()), f["height"].as_u64().unwrap());
        let svg = std::fs::read_to_string(out.join(f["svg"].as_str().unwrap())).unwrap();
        assert!(
            svg.contains(&format!("width=\"{}\"", png.width())),
            "{}",
            f["svg"]
        );
    }
    let widest = figures
        .iter()
        .map(|f| f["width"].as_u64().unwrap())
        .max()
        .unwrap();
    assert!(widest <= 1600, "{widest}");
}
