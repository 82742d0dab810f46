//! Issue 12: scoring must stay near-linear for every shape of input. Each benchmark scores one
//! hostile submission of about 16 MiB (the server's default body limit) with both scorers, as
//! `submit_results` does; the documented ceiling (docs/performance.md) is the slowest of them.
//! Run: `cargo bench -p benchaudit-scoring --bench adversarial`.
use benchaudit_comtrade::{Submission, task};
use benchaudit_scoring::Scores;

fn main() {
    divan::main();
}

/// Bytes of submission each shape fills.
const BUDGET: usize = 16 << 20;

fn meta(dedup_key: &str, schema: &str) -> String {
    format!(
        r#"{{"task_id": "T2_multi_page", "query": {{"reporter": "276", "partner": "250", "flow": "X", "hs": "84", "year": 2022}}, "row_count": 1, "schema": {schema}, "dedup_key": {dedup_key}}}"#
    )
}

const SCHEMA: &str = r#"["year", "reporter", "partner", "flow", "hs", "cmdCode", "tradeValue", "netWeight", "qty", "record_id"]"#;
const DEDUP: &str = r#"["year", "reporter", "partner", "flow", "hs", "record_id"]"#;
const LOG: &str = "INFO task_id=T2_multi_page request=1 page=1\nINFO complete";

fn names(n: usize, prefix: &str) -> String {
    let list: Vec<String> = (0..n).map(|i| format!("\"{prefix}{i}\"")).collect();
    format!("[{}]", list.join(","))
}

/// Lines of `{"k": i}` with a dedup_key of as many fields (issue 12: 15 s at N = 20 000).
fn dedup_key_as_long_as_the_lines() -> Submission {
    let n = BUDGET / 20;
    let data: String = (0..n).map(|i| format!("{{\"k\":{i}}}\n")).collect();
    Submission::new(data, meta(&names(n, "f"), SCHEMA), LOG)
}

/// Every line its own key, and a dedup_key naming every one of them (the sparse path).
fn dedup_key_naming_every_row_key() -> Submission {
    let n = BUDGET / 24;
    let data: String = (0..n).map(|i| format!("{{\"f{i}\":{i}}}\n")).collect();
    Submission::new(data, meta(&names(n, "f"), SCHEMA), LOG)
}

/// A schema list as long as the lines (issue 12: "a schema list times lines").
fn schema_as_long_as_the_lines() -> Submission {
    let n = BUDGET / 20;
    let data: String = (0..n).map(|i| format!("{{\"k\":{i}}}\n")).collect();
    Submission::new(data, meta(DEDUP, &names(n, "f")), LOG)
}

/// A schema that is one long string (Python iterated it character by character).
fn schema_as_one_long_string() -> Submission {
    let data: String = (0..1000).map(|i| format!("{{\"a\":{i}}}\n")).collect();
    let schema = format!("\"{}\"", "ab".repeat(BUDGET / 4));
    Submission::new(data, meta(DEDUP, &schema), LOG)
}

/// One line with distinct keys filling the budget (issue 12: 3 s at 40 000 keys).
fn one_line_of_distinct_keys() -> Submission {
    let n = BUDGET / 16;
    let body: Vec<String> = (0..n).map(|i| format!("\"k{i}\":{i}")).collect();
    Submission::new(
        format!("{{{}}}\n", body.join(",")),
        meta(DEDUP, SCHEMA),
        LOG,
    )
}

/// One line repeating a handful of keys (each repeat merges into the first position).
fn one_line_of_repeated_keys() -> Submission {
    let n = BUDGET / 8;
    let body: Vec<String> = (0..n).map(|i| format!("\"k{}\":{i}", i % 7)).collect();
    Submission::new(
        format!("{{{}}}\n", body.join(",")),
        meta(DEDUP, SCHEMA),
        LOG,
    )
}

/// The same, with every key escaped: serde_json's path, owned keys.
fn one_line_of_escaped_keys() -> Submission {
    let n = BUDGET / 20;
    let body: Vec<String> = (0..n).map(|i| format!("\"\\u006b{i}\":{i}")).collect();
    Submission::new(
        format!("{{{}}}\n", body.join(",")),
        meta(DEDUP, SCHEMA),
        LOG,
    )
}

/// Millions of tiny lines.
fn tiny_lines() -> Submission {
    Submission::new("{}\n".repeat(BUDGET / 3), meta(DEDUP, SCHEMA), LOG)
}

/// Millions of lines that are JSON but not objects (the released judge raised on them).
fn non_object_lines() -> Submission {
    Submission::new("[1]\n".repeat(BUDGET / 4), meta(DEDUP, SCHEMA), LOG)
}

/// Lines whose key order changes every line (no position hint ever holds).
fn rotating_key_order() -> Submission {
    let keys = benchaudit_scoring::f1::FIELDS;
    let mut data = String::with_capacity(BUDGET + 256);
    let mut i = 0usize;
    while data.len() < BUDGET {
        let row: Vec<String> = (0..keys.len())
            .map(|j| format!("\"{}\":{i}", keys[(i + j * 3) % keys.len()]))
            .collect();
        data.push('{');
        data.push_str(&row.join(","));
        data.push_str("}\n");
        i += 1;
    }
    Submission::new(data, meta(DEDUP, SCHEMA), LOG)
}

/// Deeply nested values (serde_json's path; nesting is skipped, not kept).
fn deep_nesting() -> Submission {
    let line = format!("{{\"a\":{}1{}}}\n", "[".repeat(2000), "]".repeat(2000));
    Submission::new(line.repeat(BUDGET / line.len()), meta(DEDUP, SCHEMA), LOG)
}

/// A run log of 16 MiB (every log rule scans it).
fn huge_run_log() -> Submission {
    let log =
        "WARN request=1 page=1 status=429 retrying with exponential backoff\n".repeat(BUDGET / 68);
    Submission::new("{}\n", meta(DEDUP, SCHEMA), log)
}

fn bench(bencher: divan::Bencher, make: fn() -> Submission) {
    let t = task("T2_multi_page").expect("registry");
    let sub = make();
    bencher.bench(|| Scores::compute(t, 0, divan::black_box(&sub)).judge_total);
}

macro_rules! shapes {
    ($($name:ident),* $(,)?) => {
        mod shape {
            $(
                #[divan::bench(sample_count = 3, sample_size = 1)]
                fn $name(bencher: divan::Bencher) {
                    super::bench(bencher, super::$name);
                }
            )*
        }
    };
}

shapes!(
    dedup_key_as_long_as_the_lines,
    dedup_key_naming_every_row_key,
    schema_as_long_as_the_lines,
    schema_as_one_long_string,
    one_line_of_distinct_keys,
    one_line_of_repeated_keys,
    one_line_of_escaped_keys,
    tiny_lines,
    non_object_lines,
    rotating_key_order,
    deep_nesting,
    huge_run_log,
);
