//! The guard's rules, one test per rule of the module documentation.

#![allow(clippy::unwrap_used)]
use super::index::{JsonIndex, JsonSource, Wanted};
use super::*;
use proptest::prelude::*;
use serde_json::json;

fn values(text: &str) -> Vec<(String, Option<f64>, NumberKind)> {
    extract_numbers(text)
        .into_iter()
        .map(|n| (n.text, n.value, n.kind))
        .collect()
}

fn texts(text: &str) -> Vec<String> {
    extract_numbers(text).into_iter().map(|n| n.text).collect()
}

#[test]
fn extracts_every_written_form() {
    use NumberKind::*;
    assert_eq!(
        values("n = 60, mean 0.887, 98.7% and -0.25, 2,345 rows, 1.5e-3 and 2E+4."),
        vec![
            ("60".into(), Some(60.0), Integer),
            ("0.887".into(), Some(0.887), Decimal),
            ("98.7%".into(), Some(98.7), Percent),
            ("-0.25".into(), Some(-0.25), Decimal),
            ("2,345".into(), Some(2345.0), Integer),
            ("1.5e-3".into(), Some(0.0015), Scientific),
            ("2E+4".into(), Some(20000.0), Scientific),
        ]
    );
    assert_eq!(values("Δ = −0.125")[0].1, Some(-0.125));
    assert_eq!(values("CI [+0.002, +0.023]")[0].1, Some(0.002));
    assert_eq!(values("from .5 up")[0].1, Some(0.5));
    assert_eq!(values("95 % CI")[0], ("95 %".into(), Some(95.0), Percent));
}

#[test]
fn identifiers_are_not_numbers() {
    assert!(texts("L2 T3_duplicates F1 sha256 stats.json v0.1.0 x86_64 515eb529 2x2").is_empty());
    // Digits after an identifier and a separator are numbers again.
    assert_eq!(texts("CVaR@0.2 and Reliability@0.9"), vec!["0.2", "0.9"]);
    assert_eq!(texts("run-2"), vec!["2"]);
    // Unit suffixes keep the number.
    assert_eq!(texts("10ms 3rd 2x"), vec!["10ms", "3rd", "2x"]);
    // Markdown emphasis and code spans do not hide numbers.
    assert_eq!(
        texts("_0.887_ **0.5** `0.25` __init__"),
        vec!["0.887", "0.5", "0.25"]
    );
}

#[test]
fn ranges_hyphens_and_dots() {
    assert_eq!(texts("5-10"), vec!["5", "10"]);
    assert_eq!(texts("0.30–0.40"), vec!["0.30", "0.40"]);
    assert_eq!(values("[-0.30, +0.40]")[0].1, Some(-0.30));
    assert_eq!(texts("seeds 0..9"), vec!["0", "9"]);
    assert_eq!(texts("It was 60."), vec!["60"]);
    assert_eq!(values("released 2026-06-17")[0].2, NumberKind::Date);
    assert_eq!(values("version 0.1.0")[0].2, NumberKind::Version);
    // A list written without spaces reads as a grouped number; documented.
    assert_eq!(values("100,200")[0].1, Some(100_200.0));
    assert_eq!(texts("0,123"), vec!["0", "123"]);
}

#[test]
fn list_markers_follow_commonmark() {
    let md =
        "# Title\n\n1. first 0.5\n2. second\n3) third\n\nText ends\n2. continues the paragraph\n";
    let (masked, count) = mask_list_markers(md);
    assert_eq!(count, 3);
    assert_eq!(texts(&masked), vec!["0.5", "2"]);
    // Only 1. interrupts a paragraph.
    let (_, count) = mask_list_markers("Text\n1. item\n");
    assert_eq!(count, 1);
    // Numbers in headings are checked.
    assert_eq!(texts("## 2 Results"), vec!["2"]);
}

#[test]
fn normalisation_accepts_equal_formattings() {
    let j = json!({"judge": 0.987, "rows": 2345, "pct": 98.7, "level": 0.95});
    for prose in [
        "0.987", "0.9870", "0.99", "98.7%", "99%", "2,345", "2345", "2.345e3", "98.7", "95% CI",
        "9.87e-1",
    ] {
        let r = check(prose, &j);
        assert!(r.passed(), "{prose}: {r}");
        assert_eq!(r.checked, 1, "{prose}");
    }
    for prose in [
        "0.986", "0.98", "2,346", "2344", "98.6%", "-0.987", "1", "94%",
    ] {
        assert!(!check(prose, &j).passed(), "{prose} should be rejected");
    }
}

#[test]
fn integers_must_be_exact() {
    let j = json!({"mean": 2.6, "n": 60});
    assert!(check("n = 60", &j).passed());
    assert!(!check("3 runs", &j).passed());
    // With a decimal the rounding rule applies.
    assert!(
        check(
            "mean 2.6 (about 3.0? no: 2.60)",
            &json!({"m": 2.6, "x": 3.0})
        )
        .passed()
    );
}

#[test]
fn exact_ties_accept_either_neighbour() {
    // 0.8875 is not exactly representable; either rounding is a correct rounding.
    let j = json!({"x": 0.8875});
    assert!(check("0.887", &j).passed());
    assert!(check("0.888", &j).passed());
    assert!(!check("0.886", &j).passed());
    assert!(!check("0.889", &j).passed());
}

#[test]
fn signs_must_agree() {
    let j = json!({"delta": -0.398});
    assert!(check("drop of -0.398", &j).passed());
    assert!(check("drop of −0.398", &j).passed());
    assert!(!check("drop of 0.398", &j).passed());
    assert!(!check("drop of +0.398", &j).passed());
    // -0.000 is zero.
    assert!(check("-0.000", &json!({"d": 0.0001})).passed());
}

#[test]
fn verbatim_strings_cover_compound_tokens_only() {
    let j = json!({"run_dir": "runs/2026-06-17", "version": "0.1.0", "seeds": "0..9",
                    "note": "retried 3 times"});
    assert!(check("Run `runs/2026-06-17` (benchaudit 0.1.0), seeds 0..9.", &j).passed());
    // A plain number inside a JSON string does not license the number.
    assert!(!check("retried 3 times", &j).passed());
    // Model names are quoted data when the JSON names them, numbers otherwise.
    let models = json!({"policies": ["gpt-4o", "Qwen2.5-7B", "llama-3.3-70b", "4o"]});
    assert!(check("| gpt-4o | Qwen2.5-7B, llama-3.3-70b and 4o |", &models).passed());
    assert!(!check("gpt-5 and 4o-mini", &models).passed());
    // A date or version not in the JSON is rejected.
    assert!(!check("released 2026-06-18", &j).passed());
    assert!(!check("benchaudit 0.2.0", &j).passed());
}

#[test]
fn html_checks_rendered_text_only() {
    let j = json!({"mean": 0.887, "n": 60});
    let html = "<!doctype html><html><head><style>td { width: 12px; }</style>\
        <script>var x = 42;</script></head><body>\
        <p title=\"77\">mean <b>0.887</b> over n&nbsp;=&nbsp;60</p>\
        <svg width=\"300\"><text x=\"5\">0.4</text><svg><text>0.6</text></svg></svg>\
        <!-- 99 --><p>&#8722;0.887</p></body></html>";
    let text = html_to_text(html);
    assert!(!text.contains("42") && !text.contains("0.4") && !text.contains("0.6"));
    let r = check_html(html, &j);
    assert_eq!(r.checked, 3, "{text}");
    assert_eq!(r.violations.len(), 1, "{r}");
    assert_eq!(r.violations[0].number.value, Some(-0.887));
}

#[test]
fn a_doctored_report_is_rejected_with_its_position() {
    let j = json!({"rows": [{"policy": "oracle", "mean": 1.0, "worst": 1.0, "n": 60},
                            {"policy": "no-dedup", "mean": 0.8875, "worst": 0.6, "n": 60}],
                   "config": {"alpha": 0.2, "taus": [0.9, 0.5], "resamples": 2000, "level": 0.95}});
    let report = "## Pooled (CVaR@0.2, B = 2000, 95% CI)\n\n\
        | policy | n | mean | worst |\n|---|---|---|---|\n\
        | oracle | 60 | 1.000 | 1.000 |\n| no-dedup | 60 | 0.887 | 0.600 |\n";
    assert!(check(report, &j).passed(), "{}", check(report, &j));
    let doctored = report.replace("0.600", "0.700");
    let r = check(&doctored, &j);
    assert!(!r.passed());
    assert_eq!(r.violations.len(), 1);
    let v = &r.violations[0];
    let column = doctored.lines().nth(5).unwrap().find("0.700").unwrap() + 1;
    assert_eq!(
        (v.number.text.as_str(), v.number.line, v.number.column),
        ("0.700", 6, column)
    );
    assert!(v.context.contains("no-dedup"));
    // An invented sentence.
    let invented = format!("{report}\nThe oracle solved 59 of 60 episodes.\n");
    let r = check(&invented, &j);
    assert_eq!(r.violations.len(), 1);
    assert_eq!(r.violations[0].number.text, "59");
}

#[test]
fn malformed_inputs_do_not_panic() {
    let j = json!({"a": [1, 2.5, null, "x"], "b": {"c": -3}});
    for s in [
        "",
        "-",
        "+.",
        "..5",
        "1e",
        "1e+",
        "1e99999",
        "9".repeat(400).as_str(),
        "&#xFFFFFFFF;",
        "&#;",
        "<svg",
        "<!--",
        "1,",
        "1,00",
        "%",
        "-%",
        "é1",
        "1é",
    ] {
        let _ = check(s, &j);
        let _ = check_html(s, &j);
    }
    // An overflowing literal is a number the JSON cannot hold.
    assert!(!check("1e999", &j).passed());
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<f64>()
            .prop_map(|x| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)),
        any::<i64>().prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
        Just(Value::Null),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,4}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn never_panics(prose in "\\PC{0,200}", json in json_value()) {
        let r = check(&prose, &json);
        prop_assert!(r.violations.len() <= r.checked);
        let _ = check_html(&prose, &json);
        let _ = extract_numbers(&prose);
    }

    #[test]
    fn never_panics_on_number_soup(prose in "[-+−0-9.,%eE <>&#;x/a-z\n]{0,120}", json in json_value()) {
        let _ = check(&prose, &json);
        let _ = check_html(&prose, &json);
    }

    #[test]
    fn formatted_json_numbers_pass(x in -1e6f64..1e6, decimals in 0usize..7) {
        let j = json!({ "x": x });
        let prose = format!("value {:.*} here", decimals.max(1), x);
        let r = check(&prose, &j);
        prop_assert!(r.passed(), "{prose}: {r}");
        let pct = format!("{:.*}%", decimals, x * 100.0);
        prop_assert!(check(&pct, &j).passed(), "{pct}");
    }

    #[test]
    fn numbers_far_from_the_json_fail(x in -1e3f64..1e3, decimals in 1usize..6) {
        let j = json!({ "x": x });
        let unit = 10f64.powi(-(decimals as i32));
        let off = format!("{:.*}", decimals, x + 3.0 * unit);
        prop_assert!(!check(&off, &j).passed(), "{off} vs {x}");
    }
}

/// The context rule as first written: a fresh walk of the line for every violation.
fn naive_context(text: &str, line: usize, column: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let chars: Vec<char> = lines
        .get(line.saturating_sub(1))
        .copied()
        .unwrap_or("")
        .chars()
        .collect();
    let start = column.saturating_sub(40);
    let end = (start + 80).min(chars.len());
    let start = start.min(end);
    chars[start..end]
        .iter()
        .collect::<String>()
        .trim()
        .to_string()
}

/// The naive position rule: line and 1-based column, in chars, of every char.
fn naive_position(text: &str, char_index: usize) -> (usize, usize) {
    let before: Vec<char> = text.chars().take(char_index).collect();
    let line = 1 + before.iter().filter(|&&c| c == '\n').count();
    let column = 1 + before.iter().rev().take_while(|&&c| c != '\n').count();
    (line, column)
}

#[test]
fn two_million_numbers_on_one_line_finish() {
    // Issue 12: 20 000 numbers on one line took 2.2 s (a context walk from the start of the
    // line per violation), 2 million did not finish. Linear, this takes about a second in a
    // debug build.
    let n = 2_000_000;
    let mut prose = String::with_capacity(n * 9);
    for i in 0..n {
        prose.push_str(&(i % 1000).to_string());
        prose.push_str(".5 ");
    }
    let r = check(&prose, &json!({"x": 0.5}));
    assert_eq!(r.checked, n);
    assert_eq!(r.violation_count(), n - n / 1000, "only 0.5 is in the JSON");
    // The listed ones are the first: i = 1..=999, then i = 1001.
    let last = r.violations.last().unwrap();
    assert_eq!(last.number.text, "1.5");
    let column = prose.find("999.5 0.5 1.5").unwrap() + "999.5 0.5 ".len() + 1;
    assert_eq!((last.number.line, last.number.column), (1, column));
    assert_eq!(last.context, naive_context(&prose, 1, last.number.column));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Positions and contexts from the forward cursors equal the per-number walks.
    #[test]
    fn positions_and_contexts_match_the_naive_walks(
        prose in "([0-9]{1,3}(\\.[0-9])? |[a-zé ]{0,50}|\n|\r\n|−){0,60}"
    ) {
        let r = check(&prose, &json!({}));
        let chars: Vec<char> = prose.chars().collect();
        for v in &r.violations {
            let (line, column) = (v.number.line, v.number.column);
            // The number's first char sits at that line and column.
            let index = (0..=chars.len())
                .find(|&i| naive_position(&prose, i) == (line, column))
                .unwrap();
            prop_assert!(prose.chars().skip(index).collect::<String>().starts_with(&v.number.text));
            prop_assert_eq!(&v.context, &naive_context(&prose, line, column));
        }
    }
}

#[test]
fn a_tagged_figure_is_checked_at_its_path() {
    let json = json!({"rows": [{"mean": 0.5, "n": 60}, {"mean": 0.887, "label": "gpt-4o-é"}]});
    // At its own path, at the printed precision.
    for ok in [
        "mean 0.887<!-- ba:/rows/1/mean -->",
        "mean 0.89<!-- ba:/rows/1/mean --> and 0.5<!-- ba:/rows/0/mean -->",
        "n = 60<!-- ba:/rows/0/n -->",
    ] {
        let r = check(ok, &json);
        assert!(r.passed(), "{ok}: {r}");
        assert!(r.tagged >= 1);
    }
    // The number exists elsewhere in the JSON, but not at its path: a violation, named.
    let r = check("mean 0.887<!-- ba:/rows/0/mean -->", &json);
    assert_eq!(r.violations.len(), 1, "{r}");
    assert_eq!(r.violations[0].number.text, "0.887");
    assert_eq!(r.violations[0].path.as_deref(), Some("/rows/0/mean"));
    assert!(r.to_string().contains("tagged path /rows/0/mean"), "{r}");
    // Untagged, membership anywhere still accepts it (prose written by hand).
    assert!(check("mean 0.887", &json).passed());
    // A path that does not resolve, or a value of the wrong kind, is a violation.
    assert!(!check("0.887<!-- ba:/rows/7/mean -->", &json).passed());
    assert!(!check("7<!-- ba:/rows/1/label -->", &json).passed());
    // An integer is exact at its path too: 60 is not 0.5.
    assert!(!check("60<!-- ba:/rows/0/mean -->", &json).passed());
    // The tag is not a figure itself, and a tag not directly after a number is ignored.
    assert_eq!(check("0.5<!-- ba:/rows/0/mean -->", &json).checked, 1);
    assert!(check("0.887 <!-- ba:/rows/0/mean -->", &json).passed());
    // Columns stay right after multibyte characters and masked verbatim strings.
    let r = check("“gpt-4o-é” Δ 0.887<!-- ba:/rows/0/mean -->", &json);
    assert_eq!(r.violations.len(), 1, "{r}");
    // HTML: the tag comment is kept for the check, other comments are dropped.
    let page = "<table><tr><td>0.887<!-- ba:/rows/1/mean --></td><!-- 0.123 --></tr></table>";
    assert!(check_html(page, &json).passed());
    let page = "<td>0.887<!-- ba:/rows/0/mean --></td>";
    let r = check_html(page, &json);
    assert_eq!(r.violations[0].path.as_deref(), Some("/rows/0/mean"));
}

#[test]
fn two_million_tagged_numbers_finish() {
    // Tags are one more forward pass: linear like the rest.
    let n = 2_000_000;
    let mut prose = String::with_capacity(n * 30);
    for i in 0..n {
        let path = if i % 2 == 0 { "/a" } else { "/b" };
        prose.push_str(&format!("0.5<!-- ba:{path} --> "));
    }
    let r = check(&prose, &json!({"a": 0.5, "b": 0.25}));
    assert_eq!((r.checked, r.tagged), (n, n));
    assert_eq!(r.violation_count(), n / 2, "0.5 is at /a, not at /b");
}

#[test]
fn a_flood_of_invented_figures_is_counted_not_listed() {
    // 'x 1.5 ' repeated used to keep a violation (context included) per figure: about 60
    // times the text in memory. Now the report lists the first MAX_LISTED_VIOLATIONS and
    // counts the rest, whatever the text holds.
    let n = 200_000;
    let prose = "x 1.5 ".repeat(n);
    let r = check(&prose, &json!({}));
    assert_eq!(r.checked, n);
    assert_eq!(r.violations.len(), MAX_LISTED_VIOLATIONS);
    assert_eq!(r.unlisted, n - MAX_LISTED_VIOLATIONS);
    assert_eq!(r.violation_count(), n);
    assert!(!r.passed());
    assert_eq!(r.violations[999].number.column, 999 * 6 + 3);
    let context = &r.violations[999].context;
    assert!(
        context.starts_with("x 1.5") && context.len() <= 80,
        "{context:?}"
    );
    let html = check_html(&format!("<p>{prose}</p>"), &json!({}));
    assert_eq!(html.violations.len(), MAX_LISTED_VIOLATIONS);
    assert_eq!(html.violation_count(), n);
    assert!(
        r.to_string()
            .contains(&format!("and {} more not listed", n - 1000))
    );
}

#[test]
fn contexts_are_found_past_many_lines_and_across_long_ones() {
    let prose = format!(
        "{}7 and 8\n{}{}9",
        "\n".repeat(100_000),
        "é ".repeat(50),
        "\r\n"
    );
    let r = check(&prose, &json!({}));
    let found: Vec<(usize, usize, &str)> = r
        .violations
        .iter()
        .map(|v| (v.number.line, v.number.column, v.context.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (100_001, 1, "7 and 8"),
            (100_001, 7, "7 and 8"),
            (100_003, 1, "9"),
        ]
    );
}

#[test]
fn positions_count_characters_after_multibyte_text() {
    let numbers = extract_numbers("ΔF1 −0.25 at τ=0.9, 98.7 % of 2,345 — «3»");
    let got: Vec<(&str, usize)> = numbers
        .iter()
        .map(|n| (n.text.as_str(), n.column))
        .collect();
    assert_eq!(
        got,
        [
            ("−0.25", 5),
            ("0.9", 16),
            ("98.7 %", 21),
            ("2,345", 31),
            ("3", 40)
        ]
    );
    assert_eq!(numbers[0].value, Some(-0.25));
    assert_eq!(numbers[3].value, Some(2345.0));
}

/// What `benchaudit guard` runs: the JSON read in one pass, never as a tree.
fn check_streamed(prose: &str, json: &Value, html: bool) -> GuardReport {
    let text = serde_json::to_vec(json).unwrap();
    let streamed = check_json_text(prose.to_string(), JsonSource::Text(&text), html).unwrap();
    // Read from a file, in buffered passes, the verdict is the same.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stats.json");
    std::fs::write(&file, serde_json::to_vec_pretty(json).unwrap()).unwrap();
    let from_file = if html {
        check_html_against_file(prose, &file)
    } else {
        check_against_file(prose, &file)
    };
    assert_eq!(from_file.unwrap(), streamed, "{prose}");
    streamed
}

#[test]
fn the_streamed_json_gives_the_verdict_of_the_parsed_one() {
    let json = json!({
        "model": "gpt-4o", "dir": "runs/2026-06-17", "v": "0.1.0",
        "rows": [{"mean": 0.887, "label": "7", "n": 12}, {"mean": 0.5, "~/k": 3}],
        "": {"": 0.25}, "log": "retried 3 times; Qwen2.5-7B 2x2",
    });
    for prose in [
        "gpt-4o in runs/2026-06-17 (v0.1.0): mean 0.887, 0.89 and 12 runs; Qwen2.5-7B on 2x2",
        "0.887<!-- ba:/rows/0/mean --> 0.887<!-- ba:/rows/1/mean --> 7<!-- ba:/rows/0/label -->",
        "3<!-- ba:/rows/1/~0~1k --> 3<!-- ba:/rows/01/~0~1k --> 0.25<!-- ba:// --> 1<!-- ba:x -->",
        "12<!-- ba:/rows --> 12<!-- ba: --> 3 times, 2.0.1 and 2026-06-17 and 4o",
        "1. item 0.5\n2. item 13\n\n<b>0.887</b> &#8722;0.5",
        "`retried 3 times; Qwen2.5-7B 2x2` and `retried 3 times` and `gpt-4o` and `7` and `3 times;`",
        "`ied 3 times; Qwen2.5` `ied 3 times; Qwen2.5-7B 2x2 and more` 3",
    ] {
        assert_eq!(
            check_streamed(prose, &json, false),
            check(prose, &json),
            "{prose}"
        );
        assert_eq!(
            check_streamed(prose, &json, true),
            check_html(prose, &json),
            "{prose}"
        );
    }
    let bad = check_json_text("1".into(), JsonSource::Text(b"{\"a\": 1} trailing"), false);
    assert!(bad.is_err());
    assert!(check_json_text("1".into(), JsonSource::Text(b"[1e999]"), false).is_err());
    let missing = std::path::Path::new("/nonexistent/stats.json");
    assert!(check_against_file("1", missing).is_err());
}

#[test]
fn the_streamed_index_keeps_only_what_the_prose_asks_for() {
    // 200 000 distinct strings and a million copies of one number: the index keeps the one
    // string the prose holds and the one number, not the document.
    let strings: Vec<Value> = (0..200_000).map(|i| json!(format!("id-{i}"))).collect();
    let json = serde_json::to_vec(&json!({"s": strings, "n": vec![0.5; 1_000_000]})).unwrap();
    let tokens: std::collections::HashSet<&str> = ["id-7", "id-x1"].into_iter().collect();
    let paths = std::collections::HashSet::from(["/s/3".to_string()]);
    let spans: std::collections::HashSet<&str> = ["id-9", "id-x"].into_iter().collect();
    let pieces = ["id-199999", "no such piece here"];
    let (index, found) = JsonIndex::read(
        JsonSource::Text(&json),
        &Wanted {
            tokens: &tokens,
            paths: &paths,
            spans: &spans,
            pieces: &pieces,
        },
    )
    .unwrap();
    assert_eq!(index.numbers, [0.5]);
    assert_eq!(index.strings.len(), 1);
    assert!(index.strings.contains("id-7"));
    assert_eq!(found.at_paths.len(), 1);
    let mut quoted: Vec<&str> = found.quoted_spans.iter().map(String::as_str).collect();
    quoted.sort_unstable();
    assert_eq!(quoted, ["id-199999", "id-9"]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn streaming_and_parsing_agree(
        words in prop::collection::vec(prop_oneof![
            "[-+−0-9.,%eE ]{1,8}",
            "\\PC{0,6}",
            Just("<!-- ba:/a/0 -->".to_string()),
            Just("<!-- ba:/b -->".to_string()),
            Just("\n".to_string()),
            Just("x-1".to_string()),
            Just("`".to_string()),
            Just("`retried 3 times; Qwen2.5-7B`".to_string()),
        ], 0..30),
        json in json_value(),
    ) {
        let prose = words.concat();
        let doc = json!({"a": [json.clone()], "b": json, "log": "x retried 3 times; Qwen2.5-7B 2x2"});
        prop_assert_eq!(check_streamed(&prose, &doc, false), check(&prose, &doc));
        prop_assert_eq!(check_streamed(&prose, &doc, true), check_html(&prose, &doc));
    }
}

#[test]
fn code_spans_quoting_json_strings_are_data_not_figures() {
    let doc = json!({
        "cells": ["the score hook failed: exit status 3; its stderr ends: File \"hook.py\", line 42, in main"],
        "ids": ["17"],
        "n": 5
    });
    // A piece of a long string (a hook's stderr quoted in a cell) and a whole string (an id).
    let ok = "Hook: `File \"hook.py\", line 42, in main`; sample `17`; 5 items.";
    let r = check(ok, &doc);
    assert!(r.passed(), "{:?}", r.violations);
    assert_eq!(r.verbatim, 2);
    // The same numbers outside code, or in a span the JSON does not hold, are figures.
    for bad in [
        "Hook: File \"hook.py\", line 42, in main.",
        "sample `18`",
        "`line 43, in main of hook.py`",
        "`42`",
    ] {
        let r = check(bad, &doc);
        assert!(!r.passed(), "{bad}: {r:?}");
    }
    // HTML: a code element is a code span.
    let html = "<p>Hook: <code>File &quot;hook.py&quot;, line 42, in main</code>; 5 items.</p>";
    assert!(check_html(html, &doc).passed());
    assert!(!check_html("<p>line 42</p>", &doc).passed());
}

/// A quoted code span glued to a token splits it when masked; the streamed check must look for
/// the pieces as the parsed one does (found by `streaming_and_parsing_agree`).
#[test]
fn a_span_glued_to_a_token_is_checked_alike_streamed_and_parsed() {
    let prose = "````retried 3 times; Qwen2.5-7B```retried 3 times; Qwen2.5-7B`%";
    let doc = json!({"a": [0.0], "b": 0.0, "log": "x retried 3 times; Qwen2.5-7B 2x2"});
    let parsed = check(prose, &doc);
    assert_eq!(parsed.verbatim, 2);
    assert_eq!(check_streamed(prose, &doc, false), parsed);
}
