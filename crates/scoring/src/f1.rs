//! Ground-truth F1: the criterion-valid scorer. A submitted line is a true record iff its
//! record_id is canonical for the (task, seed) and every canonical field equals the canonical
//! value (extra fields ignored; numbers compare by value, so 5 and 5.0 are equal; a string is
//! never equal to a number). Duplicates, totals rows, fabricated and corrupted rows count in
//! |S| but not in |U|.

use benchaudit_comtrade::{Generator, Record};
use serde::Serialize;

use crate::lite::{Hints, Line, LiteValue};

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
const FIELDS: [&str; 10] = [
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

/// Whether a parsed line is exactly canonical record `r` of the generator's task.
pub fn matches_record(
    generator: &Generator,
    line: &Line<'_>,
    r: &Record,
    hints: &mut Hints,
) -> bool {
    let q = &generator.task().query;
    let mut field = |i: usize| hints.get(line, i, FIELDS[i]).cloned();
    let s =
        |v: Option<LiteValue<'_>>, want: &str| v.as_ref().and_then(LiteValue::as_str) == Some(want);
    let u = |v: Option<LiteValue<'_>>, want: u64| v.is_some_and(|v| v.equals_uint(want));
    field(0).is_some_and(|v| v.equals_int(q.year))
        && s(field(1), q.reporter)
        && s(field(2), q.partner)
        && s(field(3), q.flow)
        && s(field(4), q.hs)
        && s(field(5), q.hs)
        && u(field(6), r.trade_value)
        && u(field(7), r.net_weight)
        && u(field(8), r.qty)
}

/// The canonical index of a line if it is a true record; `truth` is G in order.
pub fn true_index(
    generator: &Generator,
    truth: &[Record],
    line: &Line<'_>,
    hints: &mut Hints,
) -> Option<u32> {
    let id = hints.get(line, 9, FIELDS[9])?.as_str()?;
    let index = generator.index_of(id)?;
    let record = truth.get(index as usize)?;
    matches_record(generator, line, record, hints).then_some(index)
}

/// Scores parsed lines against the generator's ground truth.
pub fn f1_of_lines(generator: &Generator, lines: &[Line<'_>]) -> F1Score {
    let total = generator.task().total_rows;
    // One sequential pass over G is far cheaper than seeking to each submitted record.
    let truth: Vec<Record> = if lines.is_empty() {
        Vec::new()
    } else {
        generator.truth().collect()
    };
    let mut seen = vec![false; total as usize];
    let mut unique = 0u32;
    let mut hints = Hints::new(FIELDS.len());
    let mut ids: rustc_hash::FxHashSet<&str> =
        rustc_hash::FxHashSet::with_capacity_and_hasher(lines.len(), Default::default());
    let mut totals_rows = 0u32;
    for line in lines {
        if let Some(id) = hints.get(line, 9, FIELDS[9]).and_then(LiteValue::as_str) {
            ids.insert(id);
            if id.contains("-TOTAL-") {
                totals_rows += 1;
                continue;
            }
        }
        if ["is_total", "isTotal"]
            .iter()
            .any(|k| line.get(k) == Some(&LiteValue::Bool(true)))
        {
            totals_rows += 1;
        }
        if let Some(i) = true_index(generator, &truth, line, &mut hints)
            && !std::mem::replace(&mut seen[i as usize], true)
        {
            unique += 1;
        }
    }
    F1Score::from_counts(
        unique,
        lines.len() as u32,
        total,
        ids.len() as u32,
        totals_rows,
    )
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
