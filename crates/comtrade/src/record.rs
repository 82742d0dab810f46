//! Canonical records and the rows an episode serves.
//!
//! Record `i` of `(task, seed)` reads stream 0 of the task key from 32-bit word position `8·i`
//! and draws, in this order, `tradeValue = below(1_000_000)`, `netWeight = below(50_000)`,
//! `qty = below(10_000)` (three u64 draws use six of its eight words; a rejection redraw, odds
//! below 10⁻¹³, reads on). The other fields come from the task's query;
//! `record_id = "{task_id}-{i:06}"`. Contiguous records are generated in one sequential pass.

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::rng::{RECORD_STREAM, RECORD_WORDS, Stream, task_key};
use crate::task::TaskSpec;

/// The value fields of one canonical record (the rest is the task's query).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Record {
    /// Position in the canonical set; the record id is derived from it.
    pub index: u32,
    /// Trade value, in [0, 1 000 000).
    pub trade_value: u64,
    /// Net weight, in [0, 50 000).
    pub net_weight: u64,
    /// Quantity, in [0, 10 000).
    pub qty: u64,
}

/// The canonical-record generator of one (task, seed): O(1) access to any record.
#[derive(Debug, Clone)]
pub struct Generator {
    task: &'static TaskSpec,
    key: [u8; 32],
}

impl Generator {
    /// The generator of `(task, seed)`.
    pub fn new(task: &'static TaskSpec, seed: u64) -> Self {
        Generator {
            task,
            key: task_key(task.task_id, seed),
        }
    }

    /// The task this generator serves.
    pub fn task(&self) -> &'static TaskSpec {
        self.task
    }

    /// The key every stream of this (task, seed) derives from.
    pub(crate) fn key(&self) -> &[u8; 32] {
        &self.key
    }

    /// Canonical record `index`, or `None` past the end of the set.
    pub fn record(&self, index: u32) -> Option<Record> {
        self.records(index..index.saturating_add(1)).next()
    }

    /// Canonical records `range` (clipped to the set), generated in one sequential pass.
    pub fn records(&self, range: std::ops::Range<u32>) -> impl Iterator<Item = Record> + '_ {
        let end = range.end.min(self.task.total_rows);
        let mut s = Stream::new(&self.key, RECORD_STREAM);
        (range.start..end).map(move |index| {
            s.seek_word(RECORD_WORDS * u128::from(index));
            let trade_value = s.below(1_000_000);
            let net_weight = s.below(50_000);
            let qty = s.below(10_000);
            Record {
                index,
                trade_value,
                net_weight,
                qty,
            }
        })
    }

    /// The ground truth G: every canonical record in order.
    pub fn truth(&self) -> impl Iterator<Item = Record> + '_ {
        self.records(0..self.task.total_rows)
    }

    /// Parses a canonical record id of this task (`"{task_id}-{i:06}"`, i < total_rows).
    pub fn index_of(&self, record_id: &str) -> Option<u32> {
        parse_record_id(self.task, record_id)
    }
}

/// Parses `"{task_id}-{i:06}"` for a task; anything else (other task, wrong padding, out of
/// range) is not a canonical id.
pub fn parse_record_id(task: &TaskSpec, record_id: &str) -> Option<u32> {
    let digits = record_id.strip_prefix(task.task_id)?.strip_prefix('-')?;
    if digits.len() != 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let index: u32 = digits.parse().ok()?;
    (index < task.total_rows).then_some(index)
}

/// The canonical record id of record `index`.
pub fn record_id(task: &TaskSpec, index: u32) -> String {
    format!("{}-{:06}", task.task_id, index)
}

/// The id of the totals row served on `page`.
pub fn totals_id(task: &TaskSpec, page: u32) -> String {
    format!("{}-TOTAL-{:04}", task.task_id, page)
}

/// Sums of a page's value fields, carried by its totals row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Totals {
    /// Page the totals row summarises.
    pub page: u32,
    /// Sum of the page's tradeValue.
    pub trade_value: u64,
    /// Sum of the page's netWeight.
    pub net_weight: u64,
    /// Sum of the page's qty.
    pub qty: u64,
}

impl Totals {
    /// Sums the records of a page.
    pub fn of(page: u32, records: impl IntoIterator<Item = Record>) -> Self {
        records.into_iter().fold(
            Totals {
                page,
                ..Totals::default()
            },
            |mut t, r| {
                t.trade_value += r.trade_value;
                t.net_weight += r.net_weight;
                t.qty += r.qty;
                t
            },
        )
    }
}

/// One served row: a (possibly corrupted) record or a totals row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    /// A record; canonical unless an adversary corrupted its values.
    Record(Record),
    /// The totals trap's summary row.
    Totals(Totals),
}

impl Row {
    /// The row's record id as served.
    pub fn id(&self, task: &TaskSpec) -> String {
        match self {
            Row::Record(r) => record_id(task, r.index),
            Row::Totals(t) => totals_id(task, t.page),
        }
    }

    /// The row as JSON, in the released field order.
    pub fn to_json(&self, task: &'static TaskSpec) -> serde_json::Value {
        serde_json::to_value(RowJson { task, row: self }).unwrap_or(serde_json::Value::Null)
    }
}

/// Serialises a row the way the API serves it (and the way a correct agent re-emits it).
#[derive(Debug, Clone, Copy)]
pub struct RowJson<'a> {
    /// Task supplying the query fields and the id prefix.
    pub task: &'a TaskSpec,
    /// The row.
    pub row: &'a Row,
}

impl Serialize for RowJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let q = &self.task.query;
        let totals = matches!(self.row, Row::Totals(_));
        let mut map = serializer.serialize_map(Some(if totals { 12 } else { 10 }))?;
        map.serialize_entry("year", &q.year)?;
        map.serialize_entry("reporter", q.reporter)?;
        match self.row {
            Row::Record(r) => {
                map.serialize_entry("partner", q.partner)?;
                map.serialize_entry("flow", q.flow)?;
                map.serialize_entry("hs", q.hs)?;
                map.serialize_entry("cmdCode", q.hs)?;
                map.serialize_entry("tradeValue", &r.trade_value)?;
                map.serialize_entry("netWeight", &r.net_weight)?;
                map.serialize_entry("qty", &r.qty)?;
                map.serialize_entry("record_id", &record_id(self.task, r.index))?;
            }
            Row::Totals(t) => {
                map.serialize_entry("partner", "WLD")?;
                map.serialize_entry("flow", q.flow)?;
                map.serialize_entry("hs", "TOTAL")?;
                map.serialize_entry("cmdCode", "TOTAL")?;
                map.serialize_entry("tradeValue", &t.trade_value)?;
                map.serialize_entry("netWeight", &t.net_weight)?;
                map.serialize_entry("qty", &t.qty)?;
                map.serialize_entry("record_id", &totals_id(self.task, t.page))?;
                map.serialize_entry("is_total", &true)?;
                map.serialize_entry("isTotal", &true)?;
            }
        }
        map.end()
    }
}

/// Writes rows as JSON Lines (one object per line, each line ending in `\n`).
pub fn write_jsonl<'a>(task: &TaskSpec, rows: impl IntoIterator<Item = &'a Row>, out: &mut String) {
    let mut buf = std::mem::take(out).into_bytes();
    for row in rows {
        // Serialising plain integers and strings cannot fail; a failed row is left out.
        if serde_json::to_writer(&mut buf, &RowJson { task, row }).is_ok() {
            buf.push(b'\n');
        }
    }
    // serde_json writes UTF-8 only.
    *out = String::from_utf8(buf)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::task;

    #[test]
    fn record_ids_round_trip_and_reject_impostors() {
        let t = task("T3_duplicates").expect("registry");
        assert_eq!(record_id(t, 7), "T3_duplicates-000007");
        assert_eq!(parse_record_id(t, "T3_duplicates-000007"), Some(7));
        for bad in [
            "T3_duplicates-7",
            "T3_duplicates-000025",
            "T3_duplicates-00000x",
            "FAB-000001",
            "T3_duplicates-+00001",
            "T3_duplicates-TOTAL-0001",
        ] {
            assert_eq!(parse_record_id(t, bad), None, "{bad}");
        }
    }

    #[test]
    fn totals_row_has_released_shape() {
        let t = task("T7_totals_trap").expect("registry");
        let row = Row::Totals(Totals {
            page: 2,
            trade_value: 10,
            net_weight: 20,
            qty: 30,
        });
        let json = serde_json::to_string(&RowJson { task: t, row: &row }).expect("json");
        assert_eq!(
            json,
            r#"{"year":2017,"reporter":"826","partner":"WLD","flow":"M","hs":"TOTAL","cmdCode":"TOTAL","tradeValue":10,"netWeight":20,"qty":30,"record_id":"T7_totals_trap-TOTAL-0002","is_total":true,"isTotal":true}"#
        );
    }
}
