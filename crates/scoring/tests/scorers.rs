//! Ground-truth F1 on constructed submissions, and robustness of both scorers to any input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use benchaudit_comtrade::{Generator, Row, Submission, Totals, record::write_jsonl, task};
use benchaudit_scoring::{JudgeContext, Scores, f1, judge, lite};
use proptest::prelude::*;

const T: &str = "T3_duplicates";

fn truth_rows(seed: u64) -> Vec<Row> {
    Generator::new(task(T).unwrap(), seed)
        .truth()
        .map(Row::Record)
        .collect()
}

fn jsonl(rows: &[Row]) -> String {
    let mut s = String::new();
    write_jsonl(task(T).unwrap(), rows, &mut s);
    s
}

fn scores(data: String) -> Scores {
    Scores::compute(task(T).unwrap(), 4, &Submission::new(data, "{}", ""))
}

/// The judge on 0–1 is the released reward's `round(total / 100, 4)` wherever it is given: the
/// score and the reward under `reward = "judge"`.
#[test]
fn the_judge_on_zero_to_one_has_four_decimals() {
    use benchaudit_scoring::{RewardScorer, judge_share};
    let t = task("T1_single_page").unwrap();
    // Only data_jsonl: the missing-file rule's 10 × 1/3 points.
    let only_data = Submission {
        data_jsonl: Some(jsonl(&truth_rows(1))),
        ..Submission::default()
    };
    let s = Scores::compute(t, 1, &only_data);
    assert_eq!(s.judge_total, 10.0 * (1.0 / 3.0));
    assert_eq!((s.judge(), s.reward(RewardScorer::Judge)), (0.0333, 0.0333));
    // Totals in 0.1-point steps: k / 1000 exactly as a decimal, never 0.37799999999999995.
    for k in 0..=1000_u32 {
        let total: f64 = format!("{:.1}", f64::from(k) / 10.0).parse().unwrap();
        let share = judge_share(total);
        // k / 1000 is the double nearest the decimal, whose shortest text is that decimal.
        assert_eq!(share, f64::from(k) / 1000.0, "{k}");
        assert!(share.to_string().len() <= "0.999".len(), "{share}");
    }
}

#[test]
fn the_correct_set_scores_one() {
    let s = scores(jsonl(&truth_rows(4)));
    assert_eq!(
        (s.f1, s.precision, s.recall, s.true_unique, s.submitted),
        (1.0, 1.0, 1.0, 25, 25)
    );
}

#[test]
fn empty_scores_zero() {
    let s = scores(String::new());
    assert_eq!((s.f1, s.precision, s.recall), (0.0, 0.0, 0.0));
}

#[test]
fn the_truth_of_another_seed_is_fabricated() {
    let s = scores(jsonl(&truth_rows(5)));
    assert_eq!(s.f1, 0.0);
    let fabricated = jsonl(&truth_rows(4)).replace("T3_duplicates-0", "FAB-0");
    assert_eq!(scores(fabricated).f1, 0.0);
}

#[test]
fn duplicates_and_totals_cut_precision_not_recall() {
    let mut rows = truth_rows(4);
    rows.extend(truth_rows(4).into_iter().take(5));
    let s = scores(jsonl(&rows));
    assert_eq!(s.recall, 1.0);
    assert_eq!(s.precision, 25.0 / 30.0);
    let mut rows = truth_rows(4);
    rows.push(Row::Totals(Totals {
        page: 1,
        trade_value: 1,
        net_weight: 1,
        qty: 1,
    }));
    let s = scores(jsonl(&rows));
    assert_eq!((s.recall, s.precision), (1.0, 25.0 / 26.0));
}

#[test]
fn a_corrupted_value_makes_that_record_false() {
    let mut rows = truth_rows(4);
    if let Row::Record(r) = &mut rows[3] {
        r.qty += 1;
    }
    let s = scores(jsonl(&rows));
    assert_eq!(
        (s.true_unique, s.recall, s.precision),
        (24, 24.0 / 25.0, 24.0 / 25.0)
    );
    // A string where a number belongs is not the canonical value; 5.0 for 5 is.
    let text = jsonl(&truth_rows(4));
    let first = text.lines().next().unwrap();
    let g = Generator::new(task(T).unwrap(), 4).record(0).unwrap();
    let as_string = first.replace(
        &format!("\"qty\":{}", g.qty),
        &format!("\"qty\":\"{}\"", g.qty),
    );
    assert_eq!(scores(as_string).true_unique, 0);
    let as_float = first.replace(
        &format!("\"qty\":{}", g.qty),
        &format!("\"qty\":{}.0", g.qty),
    );
    assert_eq!(scores(as_float).true_unique, 1);
    assert_eq!(
        scores(format!("{first}\nnot json\n[1]\n")).precision,
        1.0 / 3.0
    );
}

fn arb_text() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,64}",
        prop::collection::vec(
            prop_oneof![
                Just("{\"record_id\": \"T3_duplicates-000001\", \"year\": 2020}".to_string()),
                Just("{\"year\": [1], \"qty\": {\"a\": null}, \"tradeValue\": -1e308}".to_string()),
                Just("[1, 2]".to_string()),
                Just("{".to_string()),
                Just("{\"a\":1,\"a\":\"x\"}".to_string()),
                ".{0,20}",
            ],
            0..8
        )
        .prop_map(|v| v.join("\n")),
    ]
}

fn arb_metadata() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,40}",
        Just("{\"schema\": 5}".to_string()),
        Just("{\"schema\": \"abc\", \"dedup_key\": [[1], 2, null]}".to_string()),
        Just("{\"query\": null, \"row_count\": true}".to_string()),
        Just("{\"totals_handling\": {\"enabled\": 1, \"rows_dropped\": \"x\"}}".to_string()),
        Just("{\"execution_time_seconds\": \"slow\", \"request_count\": 1e400}".to_string()),
        Just("{\"task_id\": [1], \"dedup_key\": [\"a\", \"b\", \"c\"]}".to_string()),
        Just("[1,2]".to_string()),
        (any::<i64>(), ".{0,8}").prop_map(|(n, s)| format!("{{\"row_count\": {n}, \"schema\": [\"{s}\"], \"dedup_key\": [\"year\", \"qty\", \"{s}\"], \"request_count\": {n}}}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn no_submission_or_metadata_panics(data in proptest::option::of(arb_text()), meta in proptest::option::of(arb_metadata()), log in proptest::option::of(".{0,40}"), id in 0usize..11, seed in 0u64..4) {
        let t = &benchaudit_comtrade::tasks()[id];
        let sub = Submission { data_jsonl: data, metadata_json: meta, run_log: log, undecodable: Vec::new() };
        let s = Scores::compute(t, seed, &sub);
        prop_assert!((0.0..=1.0).contains(&s.f1));
        prop_assert!((0.0..=100.0).contains(&s.judge_total));
        let j = judge::judge(&JudgeContext::for_task(t), &sub);
        prop_assert_eq!(j.total, s.judge_total);
        // The lines read once for both scorers, or kept and read by each, score alike.
        let lines = lite::parse_lines(sub.data_jsonl.as_deref().unwrap_or(""));
        let kept = judge::judge_lines(&JudgeContext::for_task(t), &sub, &lines);
        prop_assert_eq!(&kept.breakdown, &s.judge_breakdown);
        prop_assert_eq!(&kept.errors, &s.judge_errors);
        let f = f1::f1_of_lines(&Generator::new(t, seed), &lines);
        prop_assert_eq!((f.f1, f.submitted, f.distinct_ids, f.totals_rows), (s.f1, s.submitted, s.distinct_ids, s.totals_rows));
    }
}

fn values(data: &str) -> Vec<serde_json::Value> {
    data.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The record-set F1 (the audit's probes, external truths) is the generator F1's semantics on
/// any canonical set: both agree bit for bit on the same records.
#[test]
fn record_set_f1_agrees_with_the_generator_f1() {
    let truth_text = jsonl(&truth_rows(4));
    let truth = values(&truth_text);
    let mut shapes: Vec<String> = vec![truth_text.clone(), String::new()];
    // Duplicates, a half set, a corrupted value, a fabricated id, 5.0 for 5.
    let lines: Vec<&str> = truth_text.lines().collect();
    shapes.push([truth_text.as_str(), lines[0], "\n", lines[3], "\n"].concat());
    shapes.push(lines[..lines.len() / 2].join("\n"));
    let mut corrupted = truth.clone();
    corrupted[2]["qty"] = serde_json::json!(corrupted[2]["qty"].as_u64().unwrap() + 1);
    corrupted[5]["record_id"] = serde_json::json!("FAB-000001");
    let q = corrupted[7]["qty"].as_u64().unwrap();
    corrupted[7]["qty"] = serde_json::json!(q as f64);
    shapes.push(
        corrupted
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
    );
    for data in shapes {
        let want = scores(data.clone());
        let have = benchaudit_scoring::f1::record_set_f1(&truth, &values(&data));
        assert_eq!(
            (
                have.f1,
                have.precision,
                have.recall,
                have.true_unique,
                have.submitted
            ),
            (
                want.f1,
                want.precision,
                want.recall,
                want.true_unique,
                want.submitted
            ),
            "{data}"
        );
        assert_eq!(have.distinct_ids, want.distinct_ids);
    }
}
