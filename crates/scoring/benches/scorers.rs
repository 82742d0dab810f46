//! SPEC §11: the judge on the correct T2_multi_page submission (≤ 1 ms) and F1 on it.
use benchaudit_comtrade::{Generator, Row, Submission, TaskSpec, record::write_jsonl, task};
use benchaudit_scoring::{JudgeContext, Scores, f1, judge};

mod common;
use common::correct_t2;

fn main() {
    divan::main();
}

#[divan::bench]
fn judge_t2_correct(bencher: divan::Bencher) {
    let t = task("T2_multi_page").expect("registry");
    let sub = correct_t2();
    let ctx = JudgeContext::for_task(t);
    bencher.bench(|| judge::judge(&ctx, divan::black_box(&sub)).total);
}

#[divan::bench]
fn f1_t2_correct(bencher: divan::Bencher) {
    let t = task("T2_multi_page").expect("registry");
    let sub = correct_t2();
    let g = Generator::new(t, 0);
    bencher.bench(|| {
        f1::f1_of_data(
            &g,
            divan::black_box(sub.data_jsonl.as_deref().unwrap_or("")),
        )
        .f1
    });
}

#[divan::bench]
fn both_scorers_t2_correct(bencher: divan::Bencher) {
    let t = task("T2_multi_page").expect("registry");
    let sub = correct_t2();
    bencher.bench(|| Scores::compute(t, 0, divan::black_box(&sub)).f1);
}

/// T2_multi_page with another record count (same id prefix, query, fault).
fn resized(total_rows: u32) -> &'static TaskSpec {
    let base = task("T2_multi_page").expect("registry");
    Box::leak(Box::new(TaskSpec {
        total_rows,
        ..base.clone()
    }))
}

/// Both scorers on the correct submission by its number of records: how the cost grows.
#[divan::bench(args = [100, 1_000, 2_345, 5_000, 10_000, 20_000, 50_000])]
fn both_scorers_by_rows(bencher: divan::Bencher, rows: u32) {
    let t = resized(rows);
    let records: Vec<Row> = Generator::new(t, 0).truth().map(Row::Record).collect();
    let mut data = String::new();
    write_jsonl(t, &records, &mut data);
    let metadata = format!(
        r#"{{"task_id": "T2_multi_page", "query": {{"reporter": "276", "partner": "250", "flow": "X", "hs": "84", "year": 2022}}, "row_count": {rows}, "schema": ["year", "reporter", "partner", "flow", "hs", "cmdCode", "tradeValue", "netWeight", "qty", "record_id"], "dedup_key": ["year", "reporter", "partner", "flow", "hs", "record_id"], "request_count": 5}}"#
    );
    let sub = Submission::new(
        data,
        metadata,
        "INFO task_id=T2_multi_page request=5 complete",
    );
    bencher.bench(|| Scores::compute(t, 0, divan::black_box(&sub)).f1);
}
