//! pass@k / pass^k and cost through the library, against values computed by hand on a small
//! ledger: the numbers in stats.json, their rows in report.md, the figure, and "unknown" for a
//! model without a price (never 0).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use benchaudit_report::cost::PriceTable;
use benchaudit_report::model::Metric;
use benchaudit_report::{Options, write_run_report};
use benchaudit_testkit::{read_json, record, template_record, write_ledger};
use serde_json::{Value, json};

const A: &str = "openai:gpt-4o";
const B: &str = "ollama:llama3.1:8b";
const C: &str = "openai:gpt-4o-mini";

/// One episode of `policy` without a stress arm, with token usage.
fn episode(t: &Value, policy: &str, task: &str, seed: u64, f1: f64, tokens: (u64, u64)) -> Value {
    let mut r = record(t, policy, task, seed, "none", f1);
    r["key"]["arm"] = Value::Null;
    r["key"]["options_hash"] = json!("00000000000000aa");
    r["usage"] = json!({"prompt_tokens": tokens.0, "completion_tokens": tokens.1, "requests": 3});
    r
}

/// A: T3 seeds score 1, 1, 0.5, 1 (3 of 4 at F1 = 1) and T9 1, 0.9, 0.9, 0.9 (1 of 4), 1000
/// prompt + 500 completion tokens each. B (local, unpriced) and C (priced, dearer and worse
/// than A) score 0.5 everywhere.
fn ledger(dir: &Path) {
    let t = template_record();
    let mut lines = Vec::new();
    let scores = [
        ("T3_duplicates", [1.0, 1.0, 0.5, 1.0]),
        ("T9_clean_ab", [1.0, 0.9, 0.9, 0.9]),
    ];
    for (task, values) in scores {
        for (seed, v) in values.iter().enumerate() {
            let seed = seed as u64;
            lines.push(episode(&t, A, task, seed, *v, (1000, 500)));
            lines.push(episode(&t, B, task, seed, 0.5, (100, 100)));
            lines.push(episode(&t, C, task, seed, 0.5, (100_000, 0)));
        }
    }
    write_ledger(dir, &lines);
}

fn row<'a>(section: &'a Value, policy: &str) -> &'a Value {
    section["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["policy"] == policy)
        .unwrap_or_else(|| panic!("no row for {policy}"))
}

fn close(a: &Value, b: f64) {
    let a = a.as_f64().unwrap_or_else(|| panic!("{a} is not a number"));
    assert!((a - b).abs() < 1e-12, "{a} != {b}");
}

#[test]
fn pass_k_and_cost_match_hand_computed_values() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    ledger(&run);
    let out = tmp.path().join("report");
    let written = write_run_report(&run, &out, &Options::new(Metric::F1)).unwrap();
    assert!(written.passed(), "{}", written.guard_markdown);
    let stats = read_json(&out.join("stats.json"));

    // pass@k = mean over tasks of 1 − C(n−c, k)/C(n, k); pass^k of C(c, k)/C(n, k); n = 4,
    // c = 3 (T3) and 1 (T9) at F1 ≥ 1.
    let p = &stats["pass_k"];
    close(&p["threshold"], 1.0);
    let a = &row(p, A)["curve"];
    assert_eq!(a["max_k"], 4);
    let hand = [
        (1, 0.5, 0.5),
        (2, 0.75, 0.25),
        (3, 0.875, 0.125),
        (4, 1.0, 0.0),
    ];
    for (i, (k, at, hat)) in hand.iter().enumerate() {
        let q = &a["pooled"][i];
        assert_eq!(q["k"], *k);
        close(&q["pass_at_k"]["estimate"], *at);
        close(&q["pass_hat_k"]["estimate"], *hat);
        let (lo, hi) = (
            q["pass_hat_k"]["lo"].as_f64().unwrap(),
            q["pass_hat_k"]["hi"].as_f64().unwrap(),
        );
        assert!(
            lo <= *hat && *hat <= hi,
            "k = {k}: CI [{lo}, {hi}] misses {hat}"
        );
    }
    // Per task: T3 pass^2 = C(3,2)/C(4,2) = 0.5; T9 pass@3 = 1 − C(3,3)/C(4,3) = 0.75.
    assert_eq!(
        (
            a["tasks"][0]["n"].clone(),
            a["tasks"][0]["successes"].clone()
        ),
        (json!(4), json!(3))
    );
    close(&a["tasks"][0]["points"][1]["pass_hat_k"], 0.5);
    close(&a["tasks"][1]["points"][2]["pass_at_k"], 0.75);
    // B never reaches F1 = 1: both curves are 0 at every k.
    for q in row(p, B)["curve"]["pooled"].as_array().unwrap() {
        close(&q["pass_at_k"]["estimate"], 0.0);
    }

    // Cost: A = 8 × (1000 × $2.5 + 500 × $10) per million = $0.06, per episode $0.0075, per
    // solved (4 at F1 = 1) $0.015. B has no price: unknown, not 0. C = 8 × 100000 × $0.15 per
    // million = $0.12, dearer and worse than A: off the front.
    let c = &stats["cost"];
    let ra = row(c, A);
    assert_eq!(
        (ra["input_tokens"].clone(), ra["output_tokens"].clone()),
        (json!(8000), json!(4000))
    );
    assert_eq!(
        (ra["episodes"].clone(), ra["solved"].clone()),
        (json!(8), json!(4))
    );
    close(&ra["total_usd"], 0.06);
    close(&ra["per_episode_usd"], 0.0075);
    close(&ra["per_solved_usd"], 0.015);
    assert_eq!(ra["price"]["date"], "2026-11-20");
    assert_eq!(ra["pareto"], true);
    let rb = row(c, B);
    assert!(rb["total_usd"].is_null() && rb["per_episode_usd"].is_null() && rb["price"].is_null());
    assert_eq!(rb["pareto"], false);
    let rc = row(c, C);
    close(&rc["total_usd"], 0.12);
    assert_eq!(rc["pareto"], false);
    assert_eq!(c["unknown"], 1);

    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("## pass@k and pass^k") && md.contains("## Cost"),
        "{md}"
    );
    assert!(md.contains("| 2 | 0.750 |"), "the k = 2 row of A: {md}");
    assert!(
        md.contains("$0.00750") && md.contains("$0.0150"),
        "A's dollars: {md}"
    );
    let b_line = md
        .lines()
        .find(|l| l.contains("| ollama:llama3.1:8b |") && l.contains("unknown"))
        .expect("B's cost row");
    assert!(
        !b_line.contains("$0"),
        "an unknown price is not free: {b_line}"
    );
    assert!(out.join("figures/passk.svg").is_file() && out.join("figures/passk.png").is_file());
    // The scatter draws the priced conditions and names the unpriced one in its caption.
    let svg = std::fs::read_to_string(out.join("figures/cost.svg")).unwrap();
    assert!(
        svg.contains("cost unknown, not drawn: ollama:llama3.1:8b"),
        "{svg}"
    );
    assert!(out.join("figures/cost.png").is_file());
    let ids: Vec<&str> = stats["figures"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["id"].as_str())
        .collect();
    assert!(ids.contains(&"passk") && ids.contains(&"cost"), "{ids:?}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("pass^k") && html.contains("unknown"));
}

#[test]
fn the_threshold_and_a_user_price_file_change_the_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    ledger(&run);
    let prices = tmp.path().join("prices.json");
    std::fs::write(
        &prices,
        r#"{"schema":"benchaudit.prices/1","currency":"USD","prices":[{"provider":"ollama","model":"llama3.1:8b","input_per_mtok":0.0,"output_per_mtok":0.0,"date":"2026-12-01","source":"our own GPU, electricity not counted"}]}"#,
    )
    .unwrap();
    let mut opts = Options::new(Metric::F1);
    opts.pass_threshold = 0.9;
    opts.prices = PriceTable::load(Some(&prices)).unwrap();
    let out = tmp.path().join("report");
    let written = write_run_report(&run, &out, &opts).unwrap();
    assert!(written.passed(), "{}", written.guard_markdown);
    let stats = read_json(&out.join("stats.json"));
    // At F1 ≥ 0.9, T3 has 3 of 4 and T9 4 of 4: pass^2 = (0.5 + 1) / 2.
    let a = &row(&stats["pass_k"], A)["curve"];
    close(&a["pooled"][1]["pass_hat_k"]["estimate"], 0.75);
    let c = &stats["cost"];
    // B is now priced (free, by the user's word) and cheapest: on the front with A.
    let rb = row(c, B);
    close(&rb["total_usd"], 0.0);
    assert_eq!(
        (rb["pareto"].clone(), row(c, A)["pareto"].clone()),
        (json!(true), json!(true))
    );
    assert_eq!(c["unknown"], 0);
    assert_eq!(row(c, A)["solved"], 7);
    assert!(c["price_file"].as_str().unwrap().ends_with("prices.json"));
}
