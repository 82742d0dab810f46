//! Issue 12: the number guard must be linear in its input for every shape. Each benchmark
//! checks one document of `n` numbers (or `n` digits' worth of text) against a JSON document;
//! the figures are in docs/performance.md.
//! Run: `cargo bench -p benchaudit-audit --bench guard`.
use benchaudit_audit::guard;
use serde_json::{Value, json};
use std::fmt::Write;

fn main() {
    divan::main();
}

/// Numbers per document.
const SIZES: [usize; 3] = [20_000, 200_000, 2_000_000];

fn numbers_line(n: usize) -> String {
    let mut s = String::with_capacity(n * 10);
    for i in 0..n {
        let _ = write!(s, "{}.5 ", i % 100_000);
    }
    s
}

fn all_numbers(n: usize) -> Value {
    Value::Array((0..n.min(100_000)).map(|i| json!(i as f64 + 0.5)).collect())
}

/// One line of `n` numbers none of which is in the JSON: a violation each (issue 12: 2.2 s
/// at 20 000, 2 million did not finish).
#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn one_line_unmatched(bencher: divan::Bencher, n: usize) {
    let prose = numbers_line(n);
    let against = json!({"x": 1});
    bencher.bench(|| guard::check(divan::black_box(&prose), &against));
}

/// One line of `n` numbers, every one of them in the JSON (a JSON of 100 000 numbers).
#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn one_line_matched(bencher: divan::Bencher, n: usize) {
    let prose = numbers_line(n);
    let against = all_numbers(n);
    bencher.bench(|| guard::check(divan::black_box(&prose), &against));
}

/// `n` lines of one unmatched number each.
#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn many_lines_unmatched(bencher: divan::Bencher, n: usize) {
    let mut prose = String::with_capacity(n * 16);
    for i in 0..n {
        let _ = writeln!(prose, "row {i}: 0.{i}");
    }
    let against = json!({"x": 1});
    bencher.bench(|| guard::check(divan::black_box(&prose), &against));
}

/// A JSON of `n` numbers and `n` strings, against a short text.
#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn huge_json(bencher: divan::Bencher, n: usize) {
    let against = json!({
        "numbers": (0..n).map(|i| i as f64 * 0.001).collect::<Vec<_>>(),
        "names": (0..n).map(|i| format!("run-{i} at v0.{i}.1")).collect::<Vec<_>>(),
    });
    let prose = "mean 0.887 over 60 runs (run-17, v0.17.1), 98.7%\n".repeat(100);
    bencher.bench(|| guard::check(divan::black_box(&prose), &against));
}

/// Digit runs: one run of `8·n` digits, then runs split by thousands separators, points
/// (a version), `e` (an identifier) and `-` (a date-like chain).
#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn long_digit_runs(bencher: divan::Bencher, n: usize) {
    let mut prose = "7".repeat(8 * n);
    prose.push_str(" 1");
    prose.push_str(&",234".repeat(n));
    prose.push_str(" 1");
    prose.push_str(&".2".repeat(n));
    prose.push_str(" 1");
    prose.push_str(&"e1".repeat(n));
    prose.push_str(" 1234");
    prose.push_str(&"-12".repeat(n));
    let against = json!({"x": 1});
    bencher.bench(|| guard::check(divan::black_box(&prose), &against));
}

/// Tokens that equal JSON strings (the verbatim exemption), `n` of them on one line.
#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn verbatim_tokens(bencher: divan::Bencher, n: usize) {
    let mut prose = String::with_capacity(n * 12);
    for i in 0..n {
        let _ = write!(prose, "`gpt-{}o` ", i % 1000);
    }
    let against = json!({"models": (0..1000).map(|i| format!("gpt-{i}o")).collect::<Vec<_>>()});
    bencher.bench(|| guard::check(divan::black_box(&prose), &against));
}

/// An HTML page of one line: `n` table cells, unmatched, inside markup and an inline SVG.
#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn html_one_line(bencher: divan::Bencher, n: usize) {
    let mut html = String::from("<html><body><svg><text>0.4</text></svg><table><tr>");
    for i in 0..n {
        let _ = write!(html, "<td class=\"c{i}\">{}&minus;0.5</td>", i % 1000);
    }
    html.push_str("</tr></table></body></html>");
    let against = json!({"x": 1});
    bencher.bench(|| guard::check_html(divan::black_box(&html), &against));
}
