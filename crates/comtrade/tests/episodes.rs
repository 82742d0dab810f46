//! What an agent can observe of each fault family, pinned generator values, and determinism.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};

use benchaudit_comtrade::{
    Episode, EpisodeOptions, FetchPageArgs, Generator, InterfaceProfile, PageResponse, Record, Row,
    SubmissionProtocol, SubmitArgs, ToolError, task,
};
use proptest::prelude::*;
use serde_json::json;

fn ep(id: &str, seed: u64) -> Episode {
    Episode::new(task(id).unwrap(), seed, EpisodeOptions::default())
}

fn fetch(e: &mut Episode, page: i64) -> Result<PageResponse, ToolError> {
    e.fetch_page(FetchPageArgs {
        page,
        page_size: None,
    })
}

fn indices(rows: &[Row]) -> Vec<u32> {
    rows.iter()
        .filter_map(|r| {
            if let Row::Record(x) = r {
                Some(x.index)
            } else {
                None
            }
        })
        .collect()
}

#[test]
fn golden_records() {
    // A dependency upgrade must not change a single value (SPEC §2.2).
    let cases: [(&str, u64, u32, [u64; 3]); 7] = [
        ("T1_single_page", 0, 0, [735868, 7522, 9005]),
        ("T1_single_page", 0, 799, [81421, 22875, 7531]),
        ("T2_multi_page", 0, 0, [831362, 13042, 3532]),
        ("T2_multi_page", 1, 1234, [937423, 35412, 443]),
        ("T3_duplicates", 7, 24, [117280, 49082, 3112]),
        ("T6_page_drift", 42, 5, [574738, 5040, 5496]),
        ("T7_totals_trap", 3, 100, [665942, 47792, 6883]),
    ];
    for (id, seed, i, [tv, nw, q]) in cases {
        let g = Generator::new(task(id).unwrap(), seed);
        let r = g.record(i).unwrap();
        assert_eq!(
            g.truth().nth(i as usize),
            Some(r),
            "random access equals the sequential pass"
        );
        assert_eq!(
            r,
            Record {
                index: i,
                trade_value: tv,
                net_weight: nw,
                qty: q
            },
            "{id} seed {seed} record {i}"
        );
    }
    let line = serde_json::to_string(&benchaudit_comtrade::RowJson {
        task: task("T2_multi_page").unwrap(),
        row: &Row::Record(
            Generator::new(task("T2_multi_page").unwrap(), 0)
                .record(0)
                .unwrap(),
        ),
    })
    .unwrap();
    assert_eq!(
        line,
        r#"{"year":2022,"reporter":"276","partner":"250","flow":"X","hs":"84","cmdCode":"84","tradeValue":831362,"netWeight":13042,"qty":3532,"record_id":"T2_multi_page-000000"}"#
    );
}

#[test]
fn golden_injections() {
    let plans: [(&str, u64, &[u32], u16); 3] = [
        ("T4_rate_limit_429", 0, &[3], 429),
        ("T5_server_error_500", 1, &[1], 500),
        ("T8_mixed_faults", 2, &[1, 4], 429),
    ];
    for (id, seed, ordinals, status) in plans {
        let e = ep(id, seed);
        assert_eq!(
            (e.fault_plan().ordinals.as_slice(), e.fault_plan().status),
            (ordinals, status),
            "{id}"
        );
    }
    let mut e = ep("T3_duplicates", 0);
    let pages: Vec<Vec<u32>> = (1..=3)
        .map(|p| indices(&fetch(&mut e, p).unwrap().rows))
        .collect();
    assert_eq!(pages[0], [4, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert_eq!(pages[1], [10, 11, 12, 13, 14, 15, 16, 17, 18, 18, 19, 8]);
    assert_eq!(pages[2], [20, 20, 21, 22, 23, 19, 24]);
    let mut e = ep("T6_page_drift", 0);
    assert_eq!(
        indices(&fetch(&mut e, 1).unwrap().rows),
        [16, 20, 0, 18, 30, 29, 1, 12, 25, 11, 4, 15]
    );
}

fn transcript(id: &str, seed: u64) -> String {
    let t = task(id).unwrap();
    let mut e = ep(id, seed);
    let mut out = String::new();
    for p in 1..=i64::from(t.total_pages()) + 1 {
        let v = match fetch(&mut e, p) {
            Ok(r) => r.to_json(t),
            Err(err) => err.to_json(),
        };
        out.push_str(&v.to_string());
    }
    out
}

#[test]
fn same_task_and_seed_give_byte_identical_pages_and_another_seed_differs() {
    for t in benchaudit_comtrade::tasks() {
        assert_eq!(
            transcript(t.task_id, 11),
            transcript(t.task_id, 11),
            "{}",
            t.task_id
        );
        assert_ne!(
            transcript(t.task_id, 11),
            transcript(t.task_id, 12),
            "{}",
            t.task_id
        );
    }
}

#[test]
fn t3_serves_duplicates_on_every_page_and_never_drops_canonical_rows() {
    let t = task("T3_duplicates").unwrap();
    for seed in 0..50 {
        let mut e = ep("T3_duplicates", seed);
        let mut held = BTreeSet::new();
        for p in 1..=3 {
            let rows = indices(&fetch(&mut e, p).unwrap().rows);
            let unique: BTreeSet<u32> = rows.iter().copied().collect();
            assert!(
                rows.len() > unique.len(),
                "seed {seed} page {p}: own duplicates on every page"
            );
            let start = (p as u32 - 1) * t.page_size;
            for i in start..(start + t.page_size).min(t.total_rows) {
                assert!(
                    unique.contains(&i),
                    "seed {seed} page {p} lost canonical row {i}"
                );
            }
            assert!(
                rows.len() as u32 > (start + t.page_size).min(t.total_rows) - start,
                "seed {seed} page {p}: extra rows"
            );
            held.extend(unique);
        }
        assert_eq!(held.len(), 25);
        assert!(
            e.counts().duplicates_served >= 5,
            "each page gets own copies, later pages cross-page copies too"
        );
    }
}

/// Retries every fault until the page is served; returns the statuses met.
fn retrying_pass(e: &mut Episode) -> (Vec<u16>, BTreeSet<u32>) {
    let pages = e.task().total_pages();
    let mut faults = Vec::new();
    let mut held = BTreeSet::new();
    for p in 1..=i64::from(pages) {
        loop {
            match fetch(e, p) {
                Ok(r) => {
                    held.extend(indices(&r.rows));
                    break;
                }
                Err(err) => {
                    assert!(err.retry, "transient faults invite a retry");
                    faults.push(err.status);
                }
            }
        }
    }
    (faults, held)
}

#[test]
fn t4_t5_t8_serve_exactly_the_planned_faults_and_a_retry_succeeds() {
    for (id, status, k) in [
        ("T4_rate_limit_429", 429, 1),
        ("T5_server_error_500", 500, 1),
        ("T8_mixed_faults", 429, 2),
    ] {
        for seed in 0..100 {
            let mut e = ep(id, seed);
            let plan = e.fault_plan().clone();
            let (faults, held) = retrying_pass(&mut e);
            assert_eq!(faults, vec![status; k], "{id} seed {seed}");
            assert_eq!(held.len() as u32, e.task().total_rows, "{id} seed {seed}");
            assert_eq!(e.counts().valid_requests, e.task().total_pages() + k as u32);
            assert_eq!(plan.ordinals.len(), k);
        }
    }
    let err = {
        let mut e = ep("T4_rate_limit_429", 0); // planned at ordinal 3
        fetch(&mut e, 1).unwrap();
        fetch(&mut e, 2).unwrap();
        fetch(&mut e, 3).unwrap_err()
    };
    assert_eq!(
        (err.status, err.retry, err.retry_after_s),
        (429, true, Some(1))
    );
}

#[test]
fn t6_single_pass_misses_records_on_most_seeds_and_refetching_recovers_all() {
    let t = task("T6_page_drift").unwrap();
    let mut misses = 0;
    for seed in 0..100 {
        let mut e = ep("T6_page_drift", seed);
        let mut held = BTreeSet::new();
        for p in 1..=3 {
            held.extend(indices(&fetch(&mut e, p).unwrap().rows));
        }
        if held.len() < 36 {
            misses += 1;
        }
        let mut p = 0;
        while held.len() < 36 {
            p = p % 3 + 1;
            held.extend(indices(&fetch(&mut e, p).unwrap().rows));
        }
        assert!(
            e.counts().requests <= t.max_requests,
            "seed {seed} recovered within budget"
        );
    }
    assert!(
        misses > 90,
        "a single pass misses records on most seeds ({misses}/100)"
    );
}

#[test]
fn t7_one_totals_row_per_page_whose_sums_match_its_page() {
    let t = task("T7_totals_trap").unwrap();
    let mut e = ep("T7_totals_trap", 5);
    for p in 1..=3 {
        let json = fetch(&mut e, p).unwrap().to_json(t);
        let rows = json["rows"].as_array().unwrap();
        let totals: Vec<_> = rows
            .iter()
            .filter(|r| r["is_total"] == json!(true))
            .collect();
        assert_eq!(totals.len(), 1);
        assert_eq!(
            rows[0]["isTotal"],
            json!(true),
            "the totals row opens the page"
        );
        assert_eq!(
            (
                rows[0]["partner"].as_str(),
                rows[0]["hs"].as_str(),
                rows[0]["cmdCode"].as_str()
            ),
            (Some("WLD"), Some("TOTAL"), Some("TOTAL"))
        );
        assert_eq!(
            rows[0]["record_id"],
            json!(format!("T7_totals_trap-TOTAL-{p:04}"))
        );
        for field in ["tradeValue", "netWeight", "qty"] {
            let sum: u64 = rows[1..].iter().map(|r| r[field].as_u64().unwrap()).sum();
            assert_eq!(rows[0][field].as_u64(), Some(sum), "page {p} {field}");
        }
        assert_eq!(rows.len(), 251);
    }
}

#[test]
fn t8_serves_faults_and_duplicates() {
    let mut e = ep("T8_mixed_faults", 9);
    let (faults, held) = retrying_pass(&mut e);
    assert_eq!(faults, [429, 429]);
    assert_eq!(held.len(), 60);
    assert!(e.counts().duplicates_served >= 3);
}

#[test]
fn budget_exhaustion_answers_429_without_retry_or_data() {
    let t = task("T10_constrained_budget").unwrap();
    let mut e = ep("T10_constrained_budget", 0);
    for _ in 0..t.max_requests {
        fetch(&mut e, 1).unwrap();
    }
    for _ in 0..3 {
        let err = fetch(&mut e, 2).unwrap_err();
        assert_eq!(
            (err.status, err.retry, err.error.as_str()),
            (429, false, "request budget exhausted")
        );
    }
    assert_eq!(e.get_task_info().requests_remaining, 0);
    let quota = Episode::new(
        t,
        0,
        EpisodeOptions {
            max_requests: Some(2),
            ..EpisodeOptions::default()
        },
    );
    assert_eq!(quota.get_task_info().constraints.max_requests, 2);
}

#[test]
fn page_zero_is_422_retryable_under_legacy_only() {
    for (interface, retry) in [
        (InterfaceProfile::Legacy, true),
        (InterfaceProfile::Strict, false),
    ] {
        let mut e = Episode::new(
            task("T3_duplicates").unwrap(),
            0,
            EpisodeOptions {
                interface,
                ..EpisodeOptions::default()
            },
        );
        let err = fetch(&mut e, 0).unwrap_err();
        assert_eq!((err.status, err.retry), (422, retry), "{interface:?}");
        let err = e
            .fetch_page(FetchPageArgs {
                page: 1,
                page_size: Some(0),
            })
            .unwrap_err();
        assert_eq!((err.status, err.retry), (422, retry));
        assert_eq!(e.counts().requests, 2, "rejected calls spend budget");
        assert_eq!(e.counts().valid_requests, 0);
    }
}

#[test]
fn a_second_submit_is_refused() {
    let mut e = ep("T1_single_page", 0);
    e.submit_results(SubmitArgs {
        data_jsonl: Some(String::new()),
        ..SubmitArgs::default()
    })
    .unwrap();
    let err = e.submit_results(SubmitArgs::default()).unwrap_err();
    assert_eq!(err.status, 409);
    assert!(e.is_submitted());
}

#[test]
fn ids_resolve_only_served_rows() {
    let t = task("T7_totals_trap").unwrap();
    let mut e = Episode::new(
        t,
        1,
        EpisodeOptions {
            submission: SubmissionProtocol::Ids,
            ..EpisodeOptions::default()
        },
    );
    fetch(&mut e, 1).unwrap();
    let ids = vec![
        "T7_totals_trap-000003".to_string(),
        "T7_totals_trap-000600".to_string(),
        "T7_totals_trap-TOTAL-0001".to_string(),
        "T7_totals_trap-TOTAL-0002".to_string(),
    ];
    let sub = e
        .submit_results(SubmitArgs {
            record_ids: Some(ids),
            ..SubmitArgs::default()
        })
        .unwrap();
    let lines: Vec<serde_json::Value> = sub
        .data_jsonl
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(
        lines[0]["tradeValue"].as_u64(),
        Some(Generator::new(t, 1).record(3).unwrap().trade_value)
    );
    assert_eq!(
        lines[1],
        json!({"record_id": "T7_totals_trap-000600"}),
        "never served: fabricated"
    );
    assert_eq!(
        lines[2]["is_total"],
        json!(true),
        "a served totals row resolves to itself"
    );
    assert_eq!(lines[3], json!({"record_id": "T7_totals_trap-TOTAL-0002"}));
}

#[test]
fn chunked_submission_concatenates_chunks() {
    let t = task("T3_duplicates").unwrap();
    let mut e = Episode::new(
        t,
        1,
        EpisodeOptions {
            submission: SubmissionProtocol::Chunked,
            ..EpisodeOptions::default()
        },
    );
    assert_eq!(e.append_results("a\nb").unwrap(), 2);
    assert_eq!(e.append_results("c\n").unwrap(), 3);
    let sub = e
        .submit_results(SubmitArgs {
            data_jsonl: Some("d".into()),
            ..SubmitArgs::default()
        })
        .unwrap();
    assert_eq!(sub.data_jsonl.as_deref(), Some("a\nb\nc\nd"));
    assert_eq!(e.append_results("e").unwrap_err().status, 409);
    let mut full = ep("T3_duplicates", 1);
    assert_eq!(full.append_results("a").unwrap_err().status, 400);
}

fn arb_json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f)
            .map_or(serde_json::Value::Null, serde_json::Value::Number)),
        ".{0,12}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("page".to_string()),
                    Just("page_size".to_string()),
                    Just("data_jsonl".to_string()),
                    Just("record_ids".to_string()),
                    Just("metadata_json".to_string()),
                    ".{0,6}"
                ],
                inner,
                0..4
            )
            .prop_map(|m: BTreeMap<String, serde_json::Value>| {
                serde_json::Value::Object(m.into_iter().collect())
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn no_tool_argument_panics(args in arb_json(), page in any::<i64>(), size in proptest::option::of(any::<i64>()), id in 0usize..11, seed in any::<u64>()) {
        let t = &benchaudit_comtrade::tasks()[id];
        for submission in [SubmissionProtocol::Full, SubmissionProtocol::Ids, SubmissionProtocol::Chunked] {
            let mut e = Episode::new(t, seed, EpisodeOptions { submission, ..EpisodeOptions::default() });
            let _ = e.fetch_page(FetchPageArgs { page, page_size: size });
            if let Ok(a) = FetchPageArgs::from_json(&args) {
                let _ = e.fetch_page(a);
            }
            if let Ok(a) = SubmitArgs::from_json(&args) {
                let _ = e.append_results(a.data_jsonl.as_deref().unwrap_or(""));
                let _ = e.submit_results(a);
            }
            let _ = e.get_task_info();
        }
    }
}
