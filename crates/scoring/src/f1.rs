//! Ground-truth F1: the criterion-valid scorer. A submitted line is a true record iff its
//! record_id is canonical for the (task, seed) and every canonical field equals the canonical
//! value (extra fields ignored; numbers compare by value, so 5 and 5.0 are equal; a string is
//! never equal to a number). Duplicates, totals rows, fabricated and corrupted rows count in
//! |S| but not in |U|.

use std::borrow::Cow;

use benchaudit_comtrade::{Generator, Record};
use serde::Serialize;

use crate::SipSet;
use crate::lite::{Entry, Layout, Line, LineReader, Lines, LiteValue, PerLayout, same};

/// Precision, recall and F1 of a submission against G.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct F1Score {
    /// |U| / |S|, 0 when nothing was submitted.
    pub precision: f64,
    /// |U| / |G|.
    pub recall: f64,
    /// 2RP / (R + P), 0 when R + P = 0.
    pub f1: f64,
    /// |S|: non-empty lines submitted.
    pub submitted: u32,
    /// |U|: distinct true records.
    pub true_unique: u32,
    /// Distinct `record_id` strings among the lines (duplicates kept = submitted > this).
    pub distinct_ids: u32,
    /// Lines that are totals rows (`is_total`/`isTotal` true or a `-TOTAL-` id).
    pub totals_rows: u32,
}

/// The canonical fields in served order; `record_id` last.
pub const FIELDS: [&str; 10] = [
    "year",
    "reporter",
    "partner",
    "flow",
    "hs",
    "cmdCode",
    "tradeValue",
    "netWeight",
    "qty",
    "record_id",
];

/// The canonical field a key names: told apart by length and first byte (unique among the
/// ten), then confirmed byte for byte.
#[inline(always)]
fn field_of(key: &str) -> Option<usize> {
    let i = match (key.len(), key.as_bytes().first()?) {
        (4, b'y') => 0,
        (8, b'r') => 1,
        (7, b'p') => 2,
        (4, b'f') => 3,
        (2, b'h') => 4,
        (7, b'c') => 5,
        (10, b't') => 6,
        (9, b'n') => 7,
        (3, b'q') => 8,
        (9, b'r') => 9,
        _ => return None,
    };
    same(key, FIELDS[i]).then_some(i)
}

/// What a row holds of the canonical fields (in [`FIELDS`] order), and whether it is flagged
/// a totals row (`is_total` or `isTotal` true): one row on its own, its field positions found
/// and then read (`f1_of_lines` finds them once per shared layout instead).
pub fn canonical_fields<'l>(line: &Line<'l, '_>) -> ([Option<&'l LiteValue<'l>>; 10], bool) {
    let entries = line.entries();
    Positions::of(entries).read(entries)
}

/// Where a row's canonical fields (in [`FIELDS`] order) and its totals flags (`is_total`,
/// `isTotal`) sit among its entries: the same for every row of one shared [`Layout`].
#[derive(Debug, Clone, Copy, Default)]
struct Positions {
    fields: [Option<usize>; 10],
    flags: [Option<usize>; 2],
    /// The ten fields are the row's first ten entries, in [`FIELDS`] order, and the row has
    /// no totals flag: a row as served. Its fields are then read at fixed positions.
    served: bool,
}

impl Positions {
    /// One pass over the entries' keys.
    fn of(entries: &[Entry<'_>]) -> Self {
        let mut p = Positions {
            fields: [None; 10],
            flags: [None; 2],
            served: false,
        };
        for (at, (k, _)) in entries.iter().enumerate() {
            match field_of(k) {
                Some(i) => p.fields[i] = Some(at),
                // Keys are unique within a row; a key not starting with `i` is ruled out cheaply.
                None if k.as_bytes().first() == Some(&b'i') => {
                    if k == "is_total" {
                        p.flags[0] = Some(at);
                    } else if k == "isTotal" {
                        p.flags[1] = Some(at);
                    }
                }
                None => {}
            }
        }
        p.served = p.flags == [None; 2] && (0..10).all(|i| p.fields[i] == Some(i));
        p
    }

    /// The row's canonical fields, and whether a totals flag is `true`.
    #[inline(always)]
    fn read<'l, 'a>(&self, entries: &'l [Entry<'a>]) -> ([Option<&'l LiteValue<'a>>; 10], bool) {
        let value = |at: Option<usize>| at.and_then(|at| entries.get(at)).map(|(_, v)| v);
        let flagged_total = self
            .flags
            .iter()
            .any(|&at| value(at) == Some(&LiteValue::Bool(true)));
        (self.fields.map(value), flagged_total)
    }
}

/// Whether a row's canonical fields are exactly canonical record `r` of the generator's task.
pub fn matches_record(
    generator: &Generator,
    fields: &[Option<&LiteValue<'_>>; 10],
    r: &Record,
) -> bool {
    is_record(generator, |i| fields[i], r)
}

/// [`matches_record`] with field `i` (in [`FIELDS`] order) read by `field`: inlined into the
/// tally, where a row as served has its fields at fixed positions.
#[inline(always)]
fn is_record<'v, 'a: 'v>(
    generator: &Generator,
    field: impl Fn(usize) -> Option<&'v LiteValue<'a>>,
    r: &Record,
) -> bool {
    let q = &generator.task().query;
    let s = |i: usize, want: &str| {
        field(i)
            .and_then(LiteValue::as_str)
            .is_some_and(|v| same(v, want))
    };
    let u = |i: usize, want: u64| field(i).is_some_and(|v| v.equals_uint(want));
    field(0).is_some_and(|v| v.equals_int(q.year))
        && s(1, q.reporter)
        && s(2, q.partner)
        && s(3, q.flow)
        && s(4, q.hs)
        && s(5, q.hs)
        && u(6, r.trade_value)
        && u(7, r.net_weight)
        && u(8, r.qty)
}

/// Scores parsed lines against the generator's ground truth.
pub fn f1_of_lines(generator: &Generator, lines: &Lines<'_>) -> F1Score {
    let mut tally = F1Tally::new(generator);
    for (layout, line) in lines.iter_layouts() {
        tally.add(layout, &line);
    }
    tally.finish()
}

/// Scores a submission's data lines, read one at a time, against the generator's ground truth.
pub fn f1_of_data(generator: &Generator, data: &str) -> F1Score {
    let mut tally = F1Tally::new(generator);
    LineReader::new(data).for_each(|layout, line| tally.add(layout, line));
    tally.finish()
}

/// F1's counts over the lines seen so far, a line at a time (see [`f1_of_lines`]): nothing of
/// a line is kept but the text of a non-canonical record id.
pub(crate) struct F1Tally<'g, 'a> {
    generator: &'g Generator,
    /// G in index order, read at the first line: one sequential pass over G is far cheaper
    /// than seeking to each submitted record.
    truth: Vec<Record>,
    submitted: u32,
    seen: Vec<bool>,
    unique: u32,
    /// Distinct ids: canonical ones (one id per index) by index, the others by text.
    canonical_ids: Vec<bool>,
    canonical_distinct: u32,
    other_ids: SipSet<Cow<'a, str>>,
    totals_rows: u32,
    /// Rows nearly always share one layout: their field positions are found once.
    known: PerLayout<Positions>,
}

impl<'g, 'a> F1Tally<'g, 'a> {
    pub(crate) fn new(generator: &'g Generator) -> Self {
        F1Tally {
            generator,
            truth: Vec::new(),
            submitted: 0,
            seen: Vec::new(),
            unique: 0,
            canonical_ids: Vec::new(),
            canonical_distinct: 0,
            other_ids: SipSet::default(),
            totals_rows: 0,
            known: PerLayout::default(),
        }
    }

    /// Counts one submitted line.
    #[inline(always)]
    pub(crate) fn add(&mut self, layout: Layout, line: &Line<'_, 'a>) {
        let generator = self.generator;
        if self.submitted == 0 {
            let total = generator.task().total_rows as usize;
            self.truth = generator.truth().collect();
            self.seen = vec![false; total];
            self.canonical_ids = vec![false; total];
        }
        self.submitted += 1;
        let entries = line.entries();
        // Borrowed, not copied: the positions are 200 bytes.
        let positions = self.known.get(layout, |p| *p = Positions::of(entries));
        if positions.served
            && let Some(row) = entries.first_chunk::<10>()
        {
            self.count(|i| Some(&row[i].1), false);
        } else {
            let (fields, flagged_total) = positions.read(entries);
            self.count(|i| fields[i], flagged_total);
        }
    }

    /// Counts a line whose canonical field `i` (in [`FIELDS`] order) `field` reads.
    #[inline(always)]
    fn count<'l>(&mut self, field: impl Fn(usize) -> Option<&'l LiteValue<'a>>, flagged_total: bool)
    where
        'a: 'l,
    {
        let generator = self.generator;
        let id = field(9);
        let index = id
            .and_then(LiteValue::as_str)
            .and_then(|id| generator.index_of(id));
        if let Some(i) = index {
            if !std::mem::replace(&mut self.canonical_ids[i as usize], true) {
                self.canonical_distinct += 1;
            }
        } else if let Some(LiteValue::Str(text)) = id {
            // The id's own `Cow`: borrowed from the data, owned only where serde_json
            // unescaped it.
            if !self.other_ids.contains(text.as_ref()) {
                self.other_ids.insert(text.clone());
            }
            if text.contains("-TOTAL-") {
                self.totals_rows += 1;
                return;
            }
        }
        if flagged_total {
            self.totals_rows += 1;
        }
        if let Some(i) = index
            && self
                .truth
                .get(i as usize)
                .is_some_and(|r| is_record(generator, &field, r))
            && !std::mem::replace(&mut self.seen[i as usize], true)
        {
            self.unique += 1;
        }
    }

    pub(crate) fn finish(self) -> F1Score {
        F1Score::from_counts(
            self.unique,
            self.submitted,
            self.generator.task().total_rows,
            self.canonical_distinct + self.other_ids.len() as u32,
            self.totals_rows,
        )
    }
}

impl F1Score {
    /// The one F1 formula: precision |U| / |S| (0 when nothing was submitted), recall
    /// |U| / |G| (0 when G is empty), F1 = 2RP / (R + P) (0 when R + P = 0).
    pub fn from_counts(
        true_unique: u32,
        submitted: u32,
        truth: u32,
        distinct_ids: u32,
        totals_rows: u32,
    ) -> Self {
        let recall = f64::from(true_unique) / f64::from(truth.max(1));
        let precision = if submitted == 0 {
            0.0
        } else {
            f64::from(true_unique) / f64::from(submitted)
        };
        let f1 = if recall + precision == 0.0 {
            0.0
        } else {
            2.0 * recall * precision / (recall + precision)
        };
        F1Score {
            precision,
            recall,
            f1,
            submitted,
            true_unique,
            distinct_ids,
            totals_rows,
        }
    }
}

/// Ground-truth F1 of any record set against a canonical one, for truths that are not a
/// ComtradeBench generator (an external target's truth hook, the audit's forged probes).
///
/// A record's key is its `record_id` (any JSON value) or, without one, the whole record. A
/// submitted record is true iff a canonical record has its key and every canonical field of
/// that record equals the submitted value (extra fields ignored; numbers compare by value, so
/// 5 and 5.0 are equal; a string never equals a number). Distinct true keys make |U|; every
/// submitted record counts in |S|. `distinct_ids` counts distinct keys; `totals_rows` the
/// records flagged `is_total`/`isTotal` true or whose `record_id` holds `-TOTAL-`.
pub fn record_set_f1(truth: &[serde_json::Value], records: &[serde_json::Value]) -> F1Score {
    use serde_json::Value;
    fn key(r: &Value) -> String {
        r.get("record_id")
            .map_or_else(|| r.to_string(), Value::to_string)
    }
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
            _ => a == b,
        }
    }
    let canonical: rustc_hash::FxHashMap<String, &Value> =
        truth.iter().map(|r| (key(r), r)).collect();
    let mut hit = rustc_hash::FxHashSet::default();
    let mut keys = rustc_hash::FxHashSet::default();
    let mut totals_rows = 0u32;
    for r in records {
        let k = key(r);
        let total_id = r
            .get("record_id")
            .and_then(Value::as_str)
            .is_some_and(|id| id.contains("-TOTAL-"));
        let flagged = ["is_total", "isTotal"]
            .iter()
            .any(|f| r.get(f) == Some(&Value::Bool(true)));
        if total_id || flagged {
            totals_rows += 1;
        }
        if let Some(c) = canonical.get(&k)
            && c.as_object()
                .is_some_and(|o| o.iter().all(|(f, v)| r.get(f).is_some_and(|w| same(v, w))))
        {
            hit.insert(k.clone());
        }
        keys.insert(k);
    }
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    F1Score::from_counts(
        count(hit.len()),
        count(records.len()),
        count(truth.len()),
        count(keys.len()),
        totals_rows,
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use benchaudit_comtrade::{Row, record::write_jsonl, task};
    use proptest::prelude::*;

    /// F1 by its definition, each row's fields found by [`canonical_fields`] alone.
    fn reference(generator: &Generator, lines: &Lines<'_>) -> F1Score {
        let truth: Vec<Record> = generator.truth().collect();
        let mut hit = std::collections::BTreeSet::new();
        let mut ids = std::collections::BTreeSet::new();
        let mut totals_rows = 0u32;
        for line in lines.iter() {
            let (fields, flagged) = canonical_fields(&line);
            let id = fields[9].and_then(LiteValue::as_str);
            if let Some(id) = id {
                ids.insert(id.to_string());
            }
            if flagged
                || id.is_some_and(|id| generator.index_of(id).is_none() && id.contains("-TOTAL-"))
            {
                totals_rows += 1;
                if id.is_some_and(|id| id.contains("-TOTAL-")) {
                    continue;
                }
            }
            if let Some(i) = id.and_then(|id| generator.index_of(id))
                && matches_record(generator, &fields, &truth[i as usize])
            {
                hit.insert(i);
            }
        }
        F1Score::from_counts(
            hit.len() as u32,
            lines.len() as u32,
            generator.task().total_rows,
            ids.len() as u32,
            totals_rows,
        )
    }

    proptest! {
        /// Rows whose key order, key set and values change from row to row (so that rows
        /// share a layout, stray from it and come back): F1 with positions found once per
        /// layout equals F1 with every row's fields found afresh.
        #[test]
        fn layouts_do_not_change_f1(
            rows in proptest::collection::vec(
                (0usize..4, 0u32..36, any::<bool>(), 0usize..6),
                0..40,
            ),
        ) {
            let t = task("T6_page_drift").unwrap();
            let g = Generator::new(t, 3);
            let records: Vec<Row> = g.truth().map(Row::Record).collect();
            let mut canonical = String::new();
            write_jsonl(t, &records, &mut canonical);
            let canonical: Vec<&str> = canonical.lines().collect();
            let mut data = String::new();
            for (shape, index, flag, value) in rows {
                let line = canonical[index as usize % canonical.len()];
                let line = match shape {
                    // As served.
                    0 => line.to_string(),
                    // A totals flag first: the keys move one position.
                    1 => line.replacen('{', &format!("{{\"is_total\":{flag},"), 1),
                    // A key dropped.
                    2 => line.replacen("\"flow\":", "\"flux\":", 1),
                    // A value changed (the layout still as served), or flagged at the end.
                    _ => match value {
                        0 => line.replacen("\"year\":", "\"year\":1", 1),
                        1 => line.replacen('}', &format!(",\"isTotal\":{flag}}}"), 1),
                        2 => line.replacen("\"partner\":\"", "\"partner\":\"9", 1),
                        3 => line.replacen("\"record_id\":\"", "\"record_id\":\"x", 1),
                        4 => line.replacen("-0", "-TOTAL-0", 1),
                        _ => line.replacen("\"qty\":", "\"qty\":7", 1),
                    },
                };
                data.push_str(&line);
                data.push('\n');
            }
            let lines = crate::lite::parse_lines(&data);
            let want = reference(&g, &lines);
            prop_assert_eq!(f1_of_lines(&g, &lines), want);
            // Read a line at a time, as scoring does.
            prop_assert_eq!(f1_of_data(&g, &data), want);
        }
    }
}
