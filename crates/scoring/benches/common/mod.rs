//! The submission the SPEC §11 scoring targets are measured on, shared by the scorer benches
//! and the callgrind workloads (`crates/agents/benches/hotpaths.rs` includes this file).
use benchaudit_comtrade::{Generator, Row, Submission, record::write_jsonl, task};

/// The correct T2_multi_page submission of seed 0: every canonical record once, in order, with
/// the metadata and run log a clean five-page run writes.
pub fn correct_t2() -> Submission {
    let t = task("T2_multi_page").expect("registry");
    let rows: Vec<Row> = Generator::new(t, 0).truth().map(Row::Record).collect();
    let mut data = String::new();
    write_jsonl(t, &rows, &mut data);
    let metadata = r#"{"task_id": "T2_multi_page", "query": {"reporter": "276", "partner": "250", "flow": "X", "hs": "84", "year": 2022}, "row_count": 2345, "schema": ["year", "reporter", "partner", "flow", "hs", "cmdCode", "tradeValue", "netWeight", "qty", "record_id"], "dedup_key": ["year", "reporter", "partner", "flow", "hs", "record_id"], "request_count": 5, "request_stats": {"retries_total": 0}}"#;
    let log = "INFO task_id=T2_multi_page\nINFO request=1 page=1\nINFO request=2 page=2\nINFO request=3 page=3\nINFO request=4 page=4\nINFO request=5 page=5\nINFO complete=true";
    Submission::new(data, metadata, log)
}
