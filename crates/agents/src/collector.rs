//! Collecting served rows into a payload: the shared mechanics of the harness (L0/L1) and the
//! rule policies (L2). Which cleaning steps run is a parameter — that is the decision.

use benchaudit_comtrade::{Row, RowJson, TaskSpec, record::write_jsonl};
use serde_json::json;
use sha2::{Digest, Sha256};

use benchaudit_comtrade::Submission;

/// Rows kept so far, with the cleaning the owner of each decision chose.
#[derive(Debug, Clone)]
pub struct Collector {
    task: &'static TaskSpec,
    dedup: bool,
    drop_totals: bool,
    seen: Vec<bool>,
    kept: Vec<Row>,
    unique: u32,
    duplicates_dropped: u32,
    totals_dropped: u32,
}

impl Collector {
    /// A collector that deduplicates by primary key and/or drops totals rows.
    pub fn new(task: &'static TaskSpec, dedup: bool, drop_totals: bool) -> Self {
        Collector {
            task,
            dedup,
            drop_totals,
            seen: vec![false; task.total_rows as usize],
            kept: Vec::new(),
            unique: 0,
            duplicates_dropped: 0,
            totals_dropped: 0,
        }
    }

    /// Takes a page's rows; returns how many new canonical records it held.
    pub fn accept(&mut self, rows: &[Row]) -> u32 {
        let before = self.unique;
        for row in rows {
            match row {
                Row::Totals(_) if self.drop_totals => self.totals_dropped += 1,
                Row::Totals(_) => self.kept.push(*row),
                Row::Record(r) => {
                    let first = self
                        .seen
                        .get_mut(r.index as usize)
                        .is_some_and(|s| !std::mem::replace(s, true));
                    if first {
                        self.unique += 1;
                    }
                    if first || !self.dedup {
                        self.kept.push(*row);
                    } else {
                        self.duplicates_dropped += 1;
                    }
                }
            }
        }
        self.unique - before
    }

    /// Distinct canonical records held.
    pub fn unique(&self) -> u32 {
        self.unique
    }

    /// Canonical indices held (for coverage).
    pub fn held_indices(&self) -> impl Iterator<Item = u32> + '_ {
        self.seen
            .iter()
            .enumerate()
            .filter(|(_, s)| **s)
            .map(|(i, _)| i as u32)
    }

    /// Rows kept, in arrival order.
    pub fn kept(&self) -> &[Row] {
        &self.kept
    }

    /// Duplicates removed.
    pub fn duplicates_dropped(&self) -> u32 {
        self.duplicates_dropped
    }

    /// Totals rows removed.
    pub fn totals_dropped(&self) -> u32 {
        self.totals_dropped
    }

    /// The kept rows as JSON Lines.
    pub fn data_jsonl(&self) -> String {
        let mut out = String::with_capacity(self.kept.len() * 180);
        write_jsonl(self.task, &self.kept, &mut out);
        out
    }

    /// The kept rows with invented ids (the fabricator stand-in): right shape, wrong records.
    pub fn fabricated_jsonl(&self) -> String {
        let mut out = String::with_capacity(self.kept.len() * 180);
        for (i, row) in self.kept.iter().enumerate() {
            if let Ok(mut v) = serde_json::to_value(RowJson {
                task: self.task,
                row,
            }) {
                v["record_id"] = json!(format!("FAB-{i:06}"));
                out.push_str(&v.to_string());
                out.push('\n');
            }
        }
        out
    }

    /// The kept rows' ids (the `ids` protocol).
    pub fn ids(&self) -> Vec<String> {
        self.kept.iter().map(|r| r.id(self.task)).collect()
    }
}

/// What the self-report says about an episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Report {
    /// Rows submitted.
    pub row_count: usize,
    /// Requests spent.
    pub requests: u32,
    /// Retries made.
    pub retries: u32,
    /// Pages given up.
    pub skips: u32,
    /// Duplicates removed.
    pub duplicates_dropped: u32,
    /// Totals rows removed.
    pub totals_dropped: u32,
    /// Whether every page was fetched.
    pub complete: bool,
}

/// metadata.json in the shape the released benchmark asked for.
pub fn metadata_json(task: &TaskSpec, report: &Report) -> String {
    let q = &task.query;
    json!({
        "task_id": task.task_id,
        "query": {"reporter": q.reporter, "partner": q.partner, "flow": q.flow, "hs": q.hs, "year": q.year},
        "row_count": report.row_count,
        "schema": benchaudit_scoring::f1::FIELDS,
        "dedup_key": ["year", "reporter", "partner", "flow", "hs", "record_id"],
        "request_count": report.requests,
        "request_stats": {"retries_total": report.retries, "skips_total": report.skips},
        "totals_handling": {"enabled": true, "rows_dropped": report.totals_dropped},
        "pagination_stats": {"complete": report.complete, "duplicates_dropped": report.duplicates_dropped},
    })
    .to_string()
}

/// The SHA-256 of a submission's three files (missing and empty files differ).
pub fn payload_sha256(s: &Submission) -> String {
    let mut h = Sha256::new();
    for (name, file) in [
        ("data.jsonl", &s.data_jsonl),
        ("metadata.json", &s.metadata_json),
        ("run.log", &s.run_log),
    ] {
        h.update(name.as_bytes());
        match file {
            Some(text) => {
                h.update([1u8]);
                h.update((text.len() as u64).to_le_bytes());
                h.update(text.as_bytes());
            }
            None => h.update([0u8]),
        }
    }
    crate::digest::hex(&h.finalize())
}
