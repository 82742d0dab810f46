//! Canonical records and the rows an episode serves.
//!
//! Record `i` of `(task, seed)` reads stream 0 of the task key from 32-bit word position `8·i`
//! and draws, in this order, `tradeValue = below(1_000_000)`, `netWeight = below(50_000)`,
//! `qty = below(10_000)` (three u64 draws use six of its eight words; a rejection redraw, odds
//! below 10⁻¹³, reads on). The other fields come from the task's query;
//! `record_id = "{task_id}-{i:06}"`. Contiguous records are generated in one sequential pass.

use std::borrow::Cow;
use std::sync::OnceLock;

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::rng::{RECORD_STREAM, RECORD_WORDS, Stream, below_first, task_key};
use crate::task::{TaskSpec, tasks};

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

    /// Canonical records `range` (clipped to the set), generated in one sequential pass: each
    /// record reads its eight words at once, so the stream is already at the next record's
    /// first word; a record whose draws need a rejection redraw is drawn again word by word.
    pub fn records(&self, range: std::ops::Range<u32>) -> impl Iterator<Item = Record> + '_ {
        let end = range.end.min(self.task.total_rows);
        let mut s = Stream::new(&self.key, RECORD_STREAM);
        // Whether the stream stands at the first word of the next record.
        let mut aligned = false;
        (range.start..end).map(move |index| {
            let first_word = RECORD_WORDS * u128::from(index);
            if !aligned {
                s.seek_word(first_word);
            }
            let mut words = [0u8; 4 * RECORD_WORDS as usize];
            s.fill(&mut words);
            let draw = |k: usize| {
                let mut x = [0u8; 8];
                x.copy_from_slice(&words[8 * k..8 * k + 8]);
                u64::from_le_bytes(x)
            };
            let fast = (
                below_first(draw(0), 1_000_000),
                below_first(draw(1), 50_000),
                below_first(draw(2), 10_000),
            );
            let (trade_value, net_weight, qty) = match fast {
                (Some(t), Some(n), Some(q)) => {
                    aligned = true;
                    (t, n, q)
                }
                _ => {
                    s.seek_word(first_word);
                    aligned = false;
                    (s.below(1_000_000), s.below(50_000), s.below(10_000))
                }
            };
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
    let (prefix, digits) = record_id.as_bytes().split_at_checked(task.task_id.len())?;
    let [b'-', digits @ ..] = digits else {
        return None;
    };
    if prefix != task.task_id.as_bytes() || digits.len() != 6 {
        return None;
    }
    // Six digits never overflow.
    let mut index = 0u32;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        index = index * 10 + u32::from(d - b'0');
    }
    (index < task.total_rows).then_some(index)
}

/// The canonical record id of record `index`.
pub fn record_id(task: &TaskSpec, index: u32) -> String {
    let mut id = String::with_capacity(task.task_id.len() + 8);
    id.push_str(task.task_id);
    id.push('-');
    padded(&mut id, index, 6);
    id
}

/// The id of the totals row served on `page`.
pub fn totals_id(task: &TaskSpec, page: u32) -> String {
    let mut id = String::with_capacity(task.task_id.len() + 12);
    id.push_str(task.task_id);
    id.push_str("-TOTAL-");
    padded(&mut id, page, 4);
    id
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

/// Writes rows in exactly the bytes `serde_json` gives [`RowJson`], without going through
/// serde: everything a task's rows share (key names, the query values, the id prefix) is
/// rendered once — by serde_json, so escaping stays serde_json's — and each row is then a copy
/// of that head, three integers and the zero-padded index.
#[derive(Debug, Clone)]
pub struct RowWriter<'a> {
    task: &'a TaskSpec,
    /// `{"year":…,"reporter":…,…,"cmdCode":…,"tradeValue":`
    record_head: String,
    /// `{"year":…,"reporter":…,"partner":"WLD",…,"cmdCode":"TOTAL","tradeValue":`
    totals_head: String,
    /// `,"record_id":"{task_id}-`
    id_head: String,
}

/// Where rows are written: bytes for the wire, or a `String` (JSON Lines), which then needs no
/// UTF-8 check because only `str`s go in.
pub trait Sink {
    /// Appends `s`.
    fn put(&mut self, s: &str);
}

impl Sink for Vec<u8> {
    fn put(&mut self, s: &str) {
        self.extend_from_slice(s.as_bytes());
    }
}

impl Sink for String {
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }
}

/// Appends a JSON string the way serde_json writes it.
fn json_str(out: &mut String, s: &str) {
    // A `str` always serialises.
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

/// Appends `n` in decimal, zero-padded to `width` digits (`{n:0width$}`).
fn padded(out: &mut impl Sink, n: u32, width: usize) {
    const ZEROS: &str = "0000000000";
    let mut buf = itoa::Buffer::new();
    let digits = buf.format(n);
    out.put(&ZEROS[..width.saturating_sub(digits.len()).min(ZEROS.len())]);
    out.put(digits);
}

impl<'a> RowWriter<'a> {
    /// The writer of `task`'s rows.
    pub fn new(task: &'a TaskSpec) -> Self {
        let q = &task.query;
        let head = |partner: &str, hs: &str| {
            let mut h = String::with_capacity(128);
            h.push_str("{\"year\":");
            h.push_str(itoa::Buffer::new().format(q.year));
            for (key, value) in [
                ("reporter", q.reporter),
                ("partner", partner),
                ("flow", q.flow),
                ("hs", hs),
                ("cmdCode", hs),
            ] {
                h.push(',');
                json_str(&mut h, key);
                h.push(':');
                json_str(&mut h, value);
            }
            h.push_str(",\"tradeValue\":");
            h
        };
        let mut id_head = String::from(",\"record_id\":");
        json_str(&mut id_head, task.task_id);
        // Reopen the string after the task id: `"T2_multi_page` + `-`.
        id_head.pop();
        id_head.push('-');
        RowWriter {
            task,
            record_head: head(q.partner, q.hs),
            totals_head: head("WLD", "TOTAL"),
            id_head,
        }
    }

    /// The writer of `task`, rendered once per process for the registry's tasks (a page of
    /// ten rows would otherwise spend a fair share of its time rendering the heads).
    pub fn for_task(task: &'a TaskSpec) -> Cow<'a, RowWriter<'a>> {
        static REGISTRY: OnceLock<Vec<RowWriter<'static>>> = OnceLock::new();
        let registry = REGISTRY.get_or_init(|| tasks().iter().map(RowWriter::new).collect());
        match registry.iter().find(|w| std::ptr::eq(w.task, task)) {
            Some(writer) => Cow::Borrowed(writer),
            None => Cow::Owned(RowWriter::new(task)),
        }
    }

    /// The task whose rows this writer writes.
    pub fn task(&self) -> &'a TaskSpec {
        self.task
    }

    /// Appends one row as a JSON object (no newline).
    pub fn write(&self, row: &Row, out: &mut impl Sink) {
        let mut num = itoa::Buffer::new();
        let (head, values) = match row {
            Row::Record(r) => (&self.record_head, [r.trade_value, r.net_weight, r.qty]),
            Row::Totals(t) => (&self.totals_head, [t.trade_value, t.net_weight, t.qty]),
        };
        out.put(head);
        out.put(num.format(values[0]));
        out.put(",\"netWeight\":");
        out.put(num.format(values[1]));
        out.put(",\"qty\":");
        out.put(num.format(values[2]));
        out.put(&self.id_head);
        match row {
            Row::Record(r) => {
                padded(out, r.index, 6);
                out.put("\"}");
            }
            Row::Totals(t) => {
                out.put("TOTAL-");
                padded(out, t.page, 4);
                out.put("\",\"is_total\":true,\"isTotal\":true}");
            }
        }
    }

    /// Bytes a record row takes with values of the registry's ranges (to size buffers).
    pub fn typical_row_len(&self) -> usize {
        self.record_head.len() + self.id_head.len() + 48
    }
}

/// Writes rows as JSON Lines (one object per line, each line ending in `\n`).
pub fn write_jsonl<'a>(task: &TaskSpec, rows: impl IntoIterator<Item = &'a Row>, out: &mut String) {
    let writer = RowWriter::for_task(task);
    for row in rows {
        writer.write(row, out);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::task;

    #[test]
    fn record_ids_round_trip_and_reject_impostors() {
        let t = task("T3_duplicates").expect("registry");
        assert_eq!(record_id(t, 7), "T3_duplicates-000007");
        assert_eq!(record_id(t, 1_234_567), "T3_duplicates-1234567");
        assert_eq!(totals_id(t, 3), "T3_duplicates-TOTAL-0003");
        assert_eq!(totals_id(t, 123_456), "T3_duplicates-TOTAL-123456");
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

    fn serde_line(t: &TaskSpec, row: &Row) -> String {
        serde_json::to_string(&RowJson { task: t, row }).expect("json")
    }

    proptest::proptest! {
        /// The hand-written writer gives serde_json's bytes for every task and any values,
        /// ids past six digits and pages past four included.
        #[test]
        fn row_writer_writes_serde_json_bytes(
            task_no in 0usize..11,
            index in proptest::prop_oneof![0u32..3000, proptest::prelude::any::<u32>()],
            values in proptest::prelude::any::<[u64; 3]>(),
            small in 0u64..1_000_000,
            totals in proptest::prelude::any::<bool>(),
        ) {
            let t = &crate::task::tasks()[task_no];
            let row = if totals {
                Row::Totals(Totals { page: index, trade_value: values[0], net_weight: values[1], qty: small })
            } else {
                Row::Record(Record { index, trade_value: small, net_weight: values[1], qty: values[2] })
            };
            let mut out = Vec::new();
            RowWriter::new(t).write(&row, &mut out);
            proptest::prop_assert_eq!(String::from_utf8(out).expect("utf-8"), serde_line(t, &row));
        }
    }

    /// Record `index` drawn word by word as the generator card describes it.
    fn reference_record(g: &Generator, index: u32) -> Record {
        let mut s = Stream::new(g.key(), RECORD_STREAM);
        s.seek_word(RECORD_WORDS * u128::from(index));
        Record {
            index,
            trade_value: s.below(1_000_000),
            net_weight: s.below(50_000),
            qty: s.below(10_000),
        }
    }

    #[test]
    fn bulk_generation_equals_the_described_draws() {
        for t in crate::task::tasks() {
            for seed in [0, 1, 99, u64::MAX] {
                let g = Generator::new(t, seed);
                let from = t.total_rows / 3;
                let bulk: Vec<Record> = g.records(from..t.total_rows).collect();
                let one_by_one: Vec<Record> = (from..t.total_rows)
                    .map(|i| reference_record(&g, i))
                    .collect();
                assert_eq!(bulk, one_by_one, "{} seed {seed}", t.task_id);
            }
        }
    }

    #[test]
    fn jsonl_is_one_serde_line_per_row() {
        let t = task("T7_totals_trap").expect("registry");
        let mut rows: Vec<Row> = Generator::new(t, 3).truth().map(Row::Record).collect();
        rows.insert(
            0,
            Row::Totals(Totals::of(1, Generator::new(t, 3).records(0..250))),
        );
        let mut out = String::from("kept\n");
        write_jsonl(t, &rows, &mut out);
        let want: String = rows.iter().map(|r| serde_line(t, r) + "\n").collect();
        assert_eq!(out, format!("kept\n{want}"));
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
