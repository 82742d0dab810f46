//!
//! Why one long file: it is a faithful port of one released scorer, six dimensions that read
//! the same parsed submission, kept in the released order so it can be read against the
//! original; a split by dimension would scatter the shared parsing state.
// Over 600 lines: one faithful port of one released rubric; split, its six dimensions would scatter.
//! The legacy six-dimension judge, ported faithfully from the released benchmark's rubric
//! (SPEC §3) — defects included, because the judge is the object of study: it grades the
//! shape of a submission and the agent's self-report, never the values against ground truth.
//!
//! Where the released scorer raised an exception, the environment scored the episode 0; the
//! port reports that as `raised` with total 0.

use std::borrow::Cow;

use benchaudit_comtrade::{Submission, TaskSpec};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::SipMap;
use crate::lite::{Entry, Hints, Layout, Line, LineReader, Lines, LiteValue, PerLayout, same};
use crate::python::{self, KeyAtom};

/// What the judge reads of a task: the expected query, the expected row count and the fault
/// mode (the efficiency baseline comes from the submission's own metadata.task_id).
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeContext {
    /// Expected query values for reporter, partner, flow, hs, year (JSON: codes are strings).
    pub query: Vec<(String, Value)>,
    /// `constraints.total_rows`.
    pub total_rows: i64,
    /// `fault_injection.mode`.
    pub mode: String,
    /// The query year, for the data-quality range check.
    pub year: Value,
}

const QUERY_KEYS: [&str; 5] = ["reporter", "partner", "flow", "hs", "year"];

impl JudgeContext {
    /// The context of a registry task.
    pub fn for_task(task: &TaskSpec) -> Self {
        let q = &task.query;
        let query = vec![
            ("reporter".to_string(), Value::from(q.reporter)),
            ("partner".to_string(), Value::from(q.partner)),
            ("flow".to_string(), Value::from(q.flow)),
            ("hs".to_string(), Value::from(q.hs)),
            ("year".to_string(), Value::from(q.year)),
        ];
        JudgeContext {
            query,
            total_rows: i64::from(task.total_rows),
            mode: task.fault.mode().to_string(),
            year: Value::from(q.year),
        }
    }

    /// The context from a task object as the released task list wrote it
    /// (`{task_id, query, constraints, fault_injection}`).
    pub fn from_released_task(task: &Value) -> Option<Self> {
        let q = task.get("query")?.as_object()?;
        let query = QUERY_KEYS
            .iter()
            .map(|k| (k.to_string(), q.get(*k).cloned().unwrap_or(Value::Null)))
            .collect();
        Some(JudgeContext {
            query,
            total_rows: task.get("constraints")?.get("total_rows")?.as_i64()?,
            mode: task
                .get("fault_injection")?
                .get("mode")?
                .as_str()?
                .to_string(),
            year: q.get("year").cloned().unwrap_or(Value::Null),
        })
    }
}

/// Points per dimension (unrounded, as the released scorer reported them).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, serde::Deserialize)]
pub struct Breakdown {
    /// Out of 30.
    pub correctness: f64,
    /// Out of 15.
    pub completeness: f64,
    /// Out of 15.
    pub robustness: f64,
    /// Out of 15.
    pub efficiency: f64,
    /// Out of 15.
    pub data_quality: f64,
    /// Out of 10.
    pub observability: f64,
}

impl Breakdown {
    /// The six summed in rubric order.
    pub fn sum(&self) -> f64 {
        self.correctness
            + self.completeness
            + self.robustness
            + self.efficiency
            + self.data_quality
            + self.observability
    }
}

/// The judge's verdict on one submission.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeOutcome {
    /// Total out of 100 (rounded to one decimal, except under the missing-file rule).
    pub total: f64,
    /// Per-dimension points; all zero when the released scorer raised.
    pub breakdown: Breakdown,
    /// Where the released scorer raised: the Python exception it would have thrown and why.
    pub errors: Vec<String>,
}

impl JudgeOutcome {
    /// The judge's total / 100, unrounded: what the audit's probes compare, at the scorer's
    /// resolution ([`crate::LegacyJudge`]). Answers and records carry it rounded as the
    /// released environment rounds its reward ([`crate::judge_share`]); rounding here would move
    /// the card's exact-resolution ties (docs/decisions.md, issue 39).
    pub fn reward(&self) -> f64 {
        self.total / crate::JUDGE_POINTS
    }

    fn raised(kind: &str, why: impl Into<String>) -> Self {
        JudgeOutcome {
            total: 0.0,
            breakdown: Breakdown::default(),
            errors: vec![format!("{kind}: {}", why.into())],
        }
    }
}

/// An exception of the released scorer.
struct Raise(&'static str, String);

/// Scores a submission, reading its data lines one at a time.
pub fn judge(ctx: &JudgeContext, submission: &Submission) -> JudgeOutcome {
    let metadata = match prepare(submission) {
        Ok(metadata) => metadata,
        Err(outcome) => return outcome,
    };
    let data = submission.data_jsonl.as_deref().unwrap_or("");
    let mut rows = JudgeRows::new(ctx, &metadata, data);
    LineReader::new(data).for_each(|layout, line| rows.add(layout, line));
    conclude(ctx, submission, &metadata, rows)
}

/// Scores a submission whose data lines are already parsed.
pub fn judge_lines(ctx: &JudgeContext, submission: &Submission, lines: &Lines<'_>) -> JudgeOutcome {
    let metadata = match prepare(submission) {
        Ok(metadata) => metadata,
        Err(outcome) => return outcome,
    };
    let mut rows = JudgeRows::new(
        ctx,
        &metadata,
        submission.data_jsonl.as_deref().unwrap_or(""),
    );
    for (layout, line) in lines.iter_layouts() {
        rows.add(layout, &line);
    }
    conclude(ctx, submission, &metadata, rows)
}

/// The metadata object the released judge read, once the checks made before any row passed.
pub(crate) struct Metadata(Map<String, Value>);

/// What the released judge decided before reading a row: the verdict where a file is missing
/// or the metadata is not a JSON object, else the metadata.
pub(crate) fn prepare(submission: &Submission) -> Result<Metadata, JudgeOutcome> {
    let present = [
        &submission.data_jsonl,
        &submission.metadata_json,
        &submission.run_log,
    ]
    .iter()
    .filter(|f| f.is_some())
    .count();
    if present < 3 {
        let completeness = 10.0 * (present as f64 / 3.0);
        return Err(JudgeOutcome {
            total: completeness,
            breakdown: Breakdown {
                completeness,
                ..Breakdown::default()
            },
            errors: Vec::new(),
        });
    }
    if let Some(file) = submission.undecodable.iter().find(|f| **f == "data.jsonl") {
        return Err(JudgeOutcome::raised(
            "UnicodeDecodeError",
            format!("{file} is not UTF-8"),
        ));
    }
    let metadata: Value = match submission
        .metadata_json
        .as_deref()
        .map(serde_json::from_str)
    {
        Some(Ok(v)) if submission.undecodable.is_empty() => v,
        _ => {
            return Err(JudgeOutcome {
                total: 0.0,
                breakdown: Breakdown::default(),
                errors: vec!["metadata.json is not valid JSON".into()],
            });
        }
    };
    match metadata {
        Value::Object(map) => Ok(Metadata(map)),
        _ => Err(JudgeOutcome::raised(
            "AttributeError",
            "metadata.json is JSON but not an object",
        )),
    }
}

/// The verdict once every row has been read.
pub(crate) fn conclude(
    ctx: &JudgeContext,
    submission: &Submission,
    metadata: &Metadata,
    rows: JudgeRows<'_, '_>,
) -> JudgeOutcome {
    let log = submission.run_log.as_deref().unwrap_or("");
    match score(ctx, &metadata.0, log, rows) {
        Ok(breakdown) => JudgeOutcome {
            total: python::round1(breakdown.sum()),
            breakdown,
            errors: Vec::new(),
        },
        Err(Raise(kind, why)) => JudgeOutcome::raised(kind, why),
    }
}

/// What the judge reads of the rows, a row at a time: the count, the distinct dedup keys and
/// the data-quality tallies. Nothing of a row is kept but a key's bytes and the keys' types.
pub(crate) struct JudgeRows<'m, 'a> {
    lines: usize,
    /// Present when `dedup_key` is a list of three or more (the released judge read it then).
    dedup: Option<DedupTally<'m>>,
    /// Where a row made the dedup check raise: the verdict is a raise then, so later rows are
    /// not read.
    raised: Option<Raise>,
    quality: QualityTally<'m, 'a>,
}

impl<'m, 'a> JudgeRows<'m, 'a> {
    /// Tallies for the metadata's dedup key and schema; the data's size sizes the key arena.
    pub(crate) fn new(ctx: &JudgeContext, metadata: &'m Metadata, data: &str) -> Self {
        let meta = &metadata.0;
        let dedup = match meta.get("dedup_key") {
            Some(Value::Array(fields)) if fields.len() >= 3 => {
                // A record row is some 150 to 200 bytes: room for the keys of rows of 128.
                Some(DedupTally::new(DedupFields::of(fields), data.len() / 128))
            }
            _ => None,
        };
        JudgeRows {
            lines: 0,
            dedup,
            raised: None,
            quality: QualityTally::new(schema_of(meta), &ctx.year),
        }
    }

    /// Reads one line.
    #[inline(always)]
    pub(crate) fn add(&mut self, layout: Layout, line: &Line<'_, 'a>) {
        let n = self.lines;
        self.lines += 1;
        if self.raised.is_some() {
            return;
        }
        if let Some(dedup) = &mut self.dedup
            && let Err(raise) = dedup.add(n, layout, line)
        {
            self.raised = Some(raise);
            return;
        }
        self.quality.add(layout, line);
    }
}

fn score(
    ctx: &JudgeContext,
    meta: &Map<String, Value>,
    log: &str,
    mut rows: JudgeRows<'_, '_>,
) -> Result<Breakdown, Raise> {
    let schema = schema_of(meta);
    let completeness = ["task_id", "query", "row_count", "schema", "dedup_key"]
        .iter()
        .filter(|k| meta.contains_key(**k))
        .count() as f64
        * 3.0;
    let correctness = correctness(ctx, meta, schema, &mut rows)?;
    let robustness = robustness(&ctx.mode, log);
    let mut efficiency = efficiency(meta, log)?;
    let data_quality = data_quality(rows.quality, rows.lines)?;
    let mut observability = observability(meta, log);
    if completeness < 15.0 {
        efficiency = 0.0;
    }
    if correctness < 21.0 {
        efficiency *= 0.5;
        observability *= 0.5;
    }
    Ok(Breakdown {
        correctness,
        completeness,
        robustness,
        efficiency,
        data_quality,
        observability,
    })
}

/// `metadata.get("schema") or []`.
fn schema_of(meta: &Map<String, Value>) -> &Value {
    static EMPTY: Value = Value::Array(Vec::new());
    match meta.get("schema") {
        Some(v) if python::truthy(v) => v,
        _ => &EMPTY,
    }
}

fn correctness(
    ctx: &JudgeContext,
    meta: &Map<String, Value>,
    schema: &Value,
    rows: &mut JudgeRows<'_, '_>,
) -> Result<f64, Raise> {
    let lines = rows.lines;
    let actual = lines as f64;
    let expected = ctx.total_rows as f64;
    let declared = meta.get("row_count");
    let declared_matches = declared.is_some_and(|d| python::eq(d, &Value::from(lines)));
    let mut points = 0.0;
    // a. row accuracy
    if expected <= 0.0 {
        if declared_matches {
            points += 12.0;
        }
    } else {
        let acc = (1.0 - (actual - expected).abs() / expected.max(1.0)).clamp(0.0, 1.0);
        points += 12.0 * acc;
    }
    // b. schema
    if let Value::Array(items) = schema {
        points += 4.0 * (items.len() as f64 / 9.0).min(1.0);
    }
    // c. query
    let query = match meta.get("query") {
        None => None,
        Some(Value::Object(q)) => Some(q),
        Some(_) => {
            return Err(Raise(
                "AttributeError",
                "metadata.query is not an object".into(),
            ));
        }
    };
    let matches = ctx
        .query
        .iter()
        .filter(|(k, expected)| {
            expected.is_null()
                || query
                    .and_then(|q| q.get(k))
                    .is_some_and(|got| python::eq(got, expected))
        })
        .count();
    points += 4.0 * matches as f64 / 5.0;
    // d. dedup (read from the rows when `dedup_key` is a list of three or more)
    if let Some(dedup) = &rows.dedup {
        if let Some(raise) = rows.raised.take() {
            return Err(raise);
        }
        points += if lines == 0 {
            6.0
        } else {
            6.0 * dedup.keys.len() as f64 / lines as f64
        };
    }
    // e. declared consistency
    if declared_matches {
        points += 4.0;
    }
    // f. totals handling
    if ctx.mode == "totals_trap" {
        let empty = Map::new();
        let handling = match meta.get("totals_handling") {
            None => &empty,
            Some(Value::Object(h)) => h,
            Some(_) => {
                return Err(Raise(
                    "AttributeError",
                    "metadata.totals_handling is not an object".into(),
                ));
            }
        };
        if !handling.get("enabled").is_some_and(python::truthy) {
            points -= 4.0;
        } else {
            let dropped = handling
                .get("rows_dropped")
                .cloned()
                .unwrap_or(Value::from(0));
            match python::less_than(&dropped, 1.0) {
                Some(true) => points -= 2.0,
                Some(false) => {}
                None => {
                    return Err(Raise(
                        "TypeError",
                        "totals_handling.rows_dropped is not a number".into(),
                    ));
                }
            }
        }
    }
    Ok(points.clamp(0.0, 30.0))
}

/// Key lists up to this many distinct fields are read field by field with position hints;
/// longer ones by walking each row's own entries, so the cost stays linear in the rows.
const DENSE_FIELDS: usize = 16;

/// `metadata.dedup_key` as Python's `tuple(row.get(k) for k in dedup_key)` sees it: only the
/// distinct string fields matter (a repeated field repeats a position; a number, bool or null
/// is never a key of a JSON object, so its position is always `None`), and a list or object
/// entry makes `row.get` raise.
struct DedupFields<'m> {
    /// Distinct string fields, first occurrence first.
    names: Vec<&'m str>,
    /// Field → its position in `names`.
    index: SipMap<&'m str, u32>,
    /// Whether an entry is a list or an object (unhashable).
    unhashable: bool,
}

impl<'m> DedupFields<'m> {
    fn of(fields: &'m [Value]) -> Self {
        let mut names = Vec::new();
        let mut index = SipMap::with_capacity_and_hasher(fields.len(), Default::default());
        let mut unhashable = false;
        for f in fields {
            match f {
                Value::String(name) => {
                    if let std::collections::hash_map::Entry::Vacant(slot) =
                        index.entry(name.as_str())
                    {
                        slot.insert(names.len() as u32);
                        names.push(name.as_str());
                    }
                }
                Value::Array(_) | Value::Object(_) => unhashable = true,
                _ => {}
            }
        }
        DedupFields {
            names,
            index,
            unhashable,
        }
    }
}

/// The distinct dedup keys among the rows read so far, or where the released scorer raised.
/// A key is kept as its non-`None` positions (`(field, atom)` in field order): two tuples are
/// equal exactly when these lists are, and the list is never longer than the row. Keys are
/// encoded into one arena and hashed once; [`DistinctKeys`] compares them on a hash match.
struct DedupTally<'m> {
    fields: DedupFields<'m>,
    keys: DistinctKeys,
    hints: Hints,
    /// The row's key fields as (field, entry position), in field order.
    plan: PerLayout<Vec<(u32, usize)>>,
}

impl<'m> DedupTally<'m> {
    /// Room for about `rows` keys.
    fn new(fields: DedupFields<'m>, rows: usize) -> Self {
        // About 20 bytes an atom (a 13-byte head and a short string).
        let keys = DistinctKeys::with_capacity(rows, 20 * fields.names.len().min(16));
        let hints = Hints::new(fields.names.len());
        DedupTally {
            fields,
            keys,
            hints,
            plan: PerLayout::default(),
        }
    }

    /// Reads line `n` (from 0).
    fn add(&mut self, n: usize, layout: Layout, line: &Line<'_, '_>) -> Result<(), Raise> {
        let unhashable = |n: usize| {
            Raise(
                "TypeError",
                format!("unhashable dedup key on data.jsonl line {}", n + 1),
            )
        };
        let entries: &[Entry<'_>] = match line {
            Line::Other(_) if !line.is_json() => {
                return Err(Raise(
                    "JSONDecodeError",
                    format!("data.jsonl line {} is not JSON", n + 1),
                ));
            }
            Line::Other(_) => {
                return Err(Raise(
                    "AttributeError",
                    format!("data.jsonl line {} is not an object", n + 1),
                ));
            }
            Line::Object(entries) => entries,
        };
        let fields = &self.fields;
        if fields.unhashable {
            return Err(unhashable(n));
        }
        let hints = &mut self.hints;
        let plan = self.plan.get(layout, |plan| {
            plan.clear();
            if fields.names.len() <= DENSE_FIELDS {
                for (i, name) in fields.names.iter().enumerate() {
                    if let Some(at) = hints.position(entries, i, name) {
                        plan.push((i as u32, at));
                    }
                }
            } else {
                // Walk the row's own entries: linear in the row whatever the key list's length.
                for (at, (k, _)) in entries.iter().enumerate() {
                    if let Some(&i) = fields.index.get(k.as_ref()) {
                        plan.push((i, at));
                    }
                }
                // A row's keys are unique, so its fields are too.
                plan.sort_unstable_by_key(|&(i, _)| i);
            }
        });
        let key = self.keys.start();
        for &(i, at) in plan {
            match KeyAtom::of(entries.get(at).map(|(_, v)| v), n) {
                None => return Err(unhashable(n)),
                Some(KeyAtom::None) => {}
                Some(atom) => atom.encode(i, key),
            }
        }
        self.keys.finish();
        Ok(())
    }
}

/// The number of distinct dedup keys among `lines`, or where the released scorer raised.
#[cfg(test)]
fn distinct_keys(lines: &Lines<'_>, fields: DedupFields<'_>) -> Result<usize, Raise> {
    let mut tally = DedupTally::new(fields, lines.len());
    for (n, (layout, line)) in lines.iter_layouts().enumerate() {
        tally.add(n, layout, &line)?;
    }
    Ok(tally.keys.len())
}

/// A set of dedup keys without an allocation per key: every key is kept as its encoding
/// ([`KeyAtom::encode`], one-to-one, so two keys are equal exactly when their bytes are) in one
/// arena, each distinct key is found by the SipHash of its bytes (see [`crate::Sip`]; keys
/// whose hashes collide are chained and compared byte for byte), and a key seen before is
/// dropped from the arena.
struct DistinctKeys {
    bytes: Vec<u8>,
    /// Where the key being built starts in `bytes`.
    open: usize,
    /// Hash → the last distinct key with that hash (an index into `keys`).
    heads: rustc_hash::FxHashMap<u64, u32>,
    /// Distinct keys: their range of `bytes` and the previous key with the same hash.
    keys: Vec<(usize, usize, Option<u32>)>,
    /// The previous line's key (runs of one key, empty keys above all, skip the hash).
    last: Option<(usize, usize)>,
}

impl DistinctKeys {
    fn with_capacity(keys: usize, bytes_per_key: usize) -> Self {
        DistinctKeys {
            bytes: Vec::with_capacity(keys * bytes_per_key),
            open: 0,
            // Keyed by SipHash values (see `crate::Sip`): Fx over them adds no weakness.
            heads: rustc_hash::FxHashMap::with_capacity_and_hasher(keys, Default::default()),
            keys: Vec::with_capacity(keys),
            last: None,
        }
    }

    /// Opens a key: encode its atoms onto the returned arena in field order, then `finish`.
    fn start(&mut self) -> &mut Vec<u8> {
        self.open = self.bytes.len();
        &mut self.bytes
    }

    /// Closes the open key: kept if new, dropped if seen before.
    fn finish(&mut self) {
        use std::hash::{BuildHasher, Hasher};
        let (open, end) = (self.open, self.bytes.len());
        let key = &self.bytes[open..end];
        if let Some((a, b)) = self.last
            && same_key(&self.bytes[a..b], key)
        {
            self.bytes.truncate(open);
            return;
        }
        let mut h = crate::Sip::default().build_hasher();
        h.write(key);
        let next = self.keys.len() as u32;
        // One probe of the map: a new hash is inserted where the lookup ended.
        let previous = match self.heads.entry(h.finish()) {
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(next);
                None
            }
            std::collections::hash_map::Entry::Occupied(mut slot) => {
                let mut at = Some(*slot.get());
                while let Some(k) = at {
                    let (a, b, previous) = self.keys[k as usize];
                    if same_key(&self.bytes[a..b], key) {
                        self.bytes.truncate(open);
                        self.last = Some((a, b));
                        return;
                    }
                    at = previous;
                }
                Some(slot.insert(next))
            }
        };
        self.keys.push((open, end, previous));
        self.last = Some((open, end));
    }

    fn len(&self) -> usize {
        self.keys.len()
    }
}

/// Whether two encoded keys are equal, their last eight bytes first: keys of distinct rows
/// mostly differ in their last field (an id) and share the leading ones (the query's).
#[inline(always)]
fn same_key(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a[a.len().saturating_sub(8)..] == b[b.len().saturating_sub(8)..] && a == b
}

fn ladder(a: bool, retry: bool, c: bool) -> f64 {
    if a && retry && c {
        15.0
    } else if a && retry {
        12.0
    } else if retry {
        8.0
    } else {
        0.0
    }
}

fn robustness(mode: &str, log: &str) -> f64 {
    let lower = log.to_lowercase();
    let has = |needles: &[&str]| needles.iter().any(|n| lower.contains(n));
    match mode {
        "rate_limit" => ladder(
            has(&["429"]),
            has(&["retry status", "retrying", "backoff"]),
            has(&["exponential", "backoff"]),
        ),
        "server_error" => ladder(
            has(&["500"]),
            has(&["retry status", "retrying"]),
            has(&["max", "limit"]),
        ),
        _ => {
            let trimmed = log.trim();
            let lines = trimmed.split('\n').count();
            if lines >= 5 {
                15.0
            } else if lines >= 3 {
                12.0
            } else if trimmed.chars().count() > 10 {
                8.0
            } else {
                0.0
            }
        }
    }
}

/// The efficiency baseline the released scorer keyed on metadata.task_id.
fn baseline(task_id: Option<&Value>) -> f64 {
    let id = task_id.and_then(Value::as_str).unwrap_or("");
    match id {
        "T1_single_page" => 1.0,
        "T2_multi_page" => 5.0,
        "T3_duplicates" => 3.0,
        "T4_rate_limit_429" => 4.0,
        "T5_server_error_500" => 4.0,
        "T6_page_drift" => 3.0,
        "T7_totals_trap" => 8.0,
        "T8_mixed_faults" => 6.0,
        "T9_adaptive_adversary" => 8.0,
        "T10_constrained_budget" => 8.0,
        _ => 5.0,
    }
}

fn max_request_in_log(log: &str) -> f64 {
    let mut best: f64 = 0.0;
    let mut rest = log;
    while let Some(at) = rest.find("request=") {
        rest = &rest[at + "request=".len()..];
        let digits: &str = &rest[..rest.bytes().take_while(u8::is_ascii_digit).count()];
        if let Ok(n) = digits.parse::<f64>() {
            best = best.max(n);
        }
    }
    best
}

fn efficiency(meta: &Map<String, Value>, log: &str) -> Result<f64, Raise> {
    if let Some(Value::Array(_) | Value::Object(_)) = meta.get("task_id") {
        return Err(Raise("TypeError", "unhashable metadata.task_id".into()));
    }
    let declared = meta
        .get("request_count")
        .and_then(python::as_py_int)
        .filter(|n| *n > 0);
    let requests = match declared {
        Some(n) => n as f64,
        None => max_request_in_log(log),
    };
    let base = baseline(meta.get("task_id"));
    let mut points = if requests == 0.0 || requests <= base {
        12.0
    } else {
        12.0 * (1.0 - ((requests - base) / base.max(1.0)).min(1.0))
    };
    let slow = match meta.get("execution_time_seconds") {
        None => false,
        Some(v) => python::greater_than(v, 45.0)
            .ok_or_else(|| Raise("TypeError", "execution_time_seconds is not a number".into()))?,
    };
    if !slow {
        points += 3.0;
    }
    Ok(points.min(15.0))
}

/// The schema as `sum(1 for c in schema if c in row)` reads it: Python iterated a list's
/// items, a string's characters, an object's keys. Up to [`DENSE_FIELDS`] entries are looked
/// up one by one with position hints; a longer schema becomes a count per distinct key, and a
/// row counts the entries it holds by walking its own keys — linear in the rows whatever the
/// schema's length.
enum SchemaEntries<'m> {
    /// Each entry; `None` for one that is never a key (a number, bool or null).
    Few(Vec<Option<Cow<'m, str>>>),
    /// Entries by key with their multiplicity, and how many there are in all.
    Many(SipMap<Cow<'m, str>, usize>, usize),
}

impl<'m> SchemaEntries<'m> {
    /// `Err` where Python raised (an unhashable entry, a schema that is not iterable).
    fn of(schema: &'m Value) -> Result<Self, Raise> {
        let keys: Box<dyn Iterator<Item = Result<Option<Cow<'m, str>>, Raise>> + 'm> = match schema
        {
            Value::Array(items) => Box::new(items.iter().map(|v| match v {
                Value::String(s) => Ok(Some(Cow::Borrowed(s.as_str()))),
                Value::Array(_) | Value::Object(_) => {
                    Err(Raise("TypeError", "unhashable schema entry".into()))
                }
                _ => Ok(None),
            })),
            Value::String(s) => Box::new(s.chars().map(|c| Ok(Some(Cow::Owned(c.to_string()))))),
            Value::Object(o) => Box::new(o.keys().map(|k| Ok(Some(Cow::Borrowed(k.as_str()))))),
            _ => return Err(Raise("TypeError", "metadata.schema is not iterable".into())),
        };
        let few = match schema {
            Value::Array(items) => items.len() <= DENSE_FIELDS,
            Value::String(s) => s.len() <= DENSE_FIELDS,
            Value::Object(o) => o.len() <= DENSE_FIELDS,
            _ => true,
        };
        if few {
            return Ok(SchemaEntries::Few(keys.collect::<Result<_, _>>()?));
        }
        let mut counts = SipMap::with_capacity_and_hasher(keys.size_hint().0, Default::default());
        let mut len = 0;
        for key in keys {
            len += 1;
            if let Some(key) = key? {
                *counts.entry(key).or_insert(0) += 1;
            }
        }
        Ok(SchemaEntries::Many(counts, len))
    }

    fn len(&self) -> usize {
        match self {
            SchemaEntries::Few(entries) => entries.len(),
            SchemaEntries::Many(_, len) => *len,
        }
    }

    /// How many schema entries are keys of a row.
    fn present(&self, entries: &[Entry<'_>], hints: &mut Hints) -> usize {
        match self {
            SchemaEntries::Few(names) => names
                .iter()
                .enumerate()
                .filter(|(i, e)| {
                    e.as_deref()
                        .is_some_and(|k| hints.position(entries, *i, k).is_some())
                })
                .count(),
            SchemaEntries::Many(counts, _) => entries
                .iter()
                .map(|(k, _)| counts.get(k.as_ref()).copied().unwrap_or(0))
                .sum(),
        }
    }
}

/// The judge's three data-quality checks, a row at a time; what each learns of a row's keys
/// (how many schema entries it holds, each key's type slot, which keys are range checked) is
/// kept for the rows of the same layout.
struct QualityTally<'m, 'a> {
    schema: &'m Value,
    /// The schema's entries, read at the first object row: Python only looked at the schema
    /// for dict rows. `Err` where reading them raised (the rows are not read further then).
    entries: Option<Result<SchemaEntries<'m>, Raise>>,
    hints: Hints,
    present: PerLayout<usize>,
    valid_rows: usize,
    types: TypeTally<'a>,
    ranges: RangeTally,
}

impl<'m, 'a> QualityTally<'m, 'a> {
    fn new(schema: &'m Value, year: &Value) -> Self {
        QualityTally {
            schema,
            entries: None,
            hints: Hints::new(0),
            present: PerLayout::default(),
            valid_rows: 0,
            types: TypeTally::default(),
            ranges: RangeTally::new(year),
        }
    }

    fn add(&mut self, layout: Layout, line: &Line<'_, 'a>) {
        let Line::Object(entries) = *line else { return };
        let schema_entries = match &mut self.entries {
            Some(Ok(e)) => e,
            Some(Err(_)) => return,
            None => {
                let read = if python::truthy(self.schema) {
                    SchemaEntries::of(self.schema)
                } else {
                    Ok(SchemaEntries::Few(Vec::new()))
                };
                match self.entries.insert(read) {
                    Ok(e) => {
                        self.hints = Hints::new(e.len().min(DENSE_FIELDS));
                        e
                    }
                    Err(_) => return,
                }
            }
        };
        let len = schema_entries.len();
        let hints = &mut self.hints;
        let present = *self.present.get(layout, |p| {
            *p = schema_entries.present(entries, hints);
        });
        if len == 0 || present as f64 >= len as f64 / 2.0 {
            self.valid_rows += 1;
        }
        self.types.add(layout, entries);
        self.ranges.add(layout, entries);
    }
}

/// The data-quality points once `lines` rows have been read.
fn data_quality(quality: QualityTally<'_, '_>, lines: usize) -> Result<f64, Raise> {
    if let Some(Err(raise)) = quality.entries {
        return Err(raise);
    }
    let content = if lines == 0 {
        0.0
    } else {
        quality.valid_rows as f64 / lines as f64
    };
    Ok((5.0 * (content + quality.types.share() + quality.ranges.share())).min(15.0))
}

/// The judge's type check: the share of keys whose non-null values all have one JSON type
/// (0 without keys).
#[derive(Default)]
struct TypeTally<'a> {
    /// Every key seen, first seen first, with the JSON types of its values (one bit each).
    types: Vec<(Cow<'a, str>, u8)>,
    /// Key → its slot in `types`; built only when a row strays from the first object row's
    /// key order (the first row's keys are unique and all new, so they need no lookup).
    positions: Option<SipMap<Cow<'a, str>, usize>>,
    /// Whether a row with keys has been seen.
    started: bool,
    /// The slot of each of a row's entries.
    slots: PerLayout<Vec<usize>>,
}

impl<'a> TypeTally<'a> {
    fn add(&mut self, layout: Layout, entries: &[Entry<'a>]) {
        if entries.is_empty() {
            return;
        }
        let TypeTally {
            types,
            positions,
            started,
            slots,
        } = self;
        let slots = slots.get(layout, |slots| {
            slots.clear();
            for (j, (k, _)) in entries.iter().enumerate() {
                let slot = match types.get(j) {
                    // Rows nearly always share key order: the same position is tried first.
                    Some((key, _)) if same(key, k) => j,
                    _ if !*started => {
                        types.push((k.clone(), 0));
                        types.len() - 1
                    }
                    _ => {
                        let index = positions.get_or_insert_with(|| {
                            types
                                .iter()
                                .enumerate()
                                .map(|(i, (key, _))| (key.clone(), i))
                                .collect()
                        });
                        match index.entry(k.clone()) {
                            std::collections::hash_map::Entry::Occupied(at) => *at.get(),
                            std::collections::hash_map::Entry::Vacant(slot) => {
                                slot.insert(types.len());
                                types.push((k.clone(), 0));
                                types.len() - 1
                            }
                        }
                    }
                };
                slots.push(slot);
            }
            *started = true;
        });
        for (&slot, (_, v)) in slots.iter().zip(entries) {
            let bit = match v {
                LiteValue::Null => 0,
                LiteValue::Bool(_) => 1,
                LiteValue::Int(_) | LiteValue::UInt(_) => 2,
                LiteValue::Float(_) => 4,
                LiteValue::Str(_) => 8,
                LiteValue::List => 16,
                LiteValue::Dict => 32,
            };
            types[slot].1 |= bit;
        }
    }

    fn share(&self) -> f64 {
        if self.types.is_empty() {
            0.0
        } else {
            self.types
                .iter()
                .filter(|(_, bits)| bits.count_ones() <= 1)
                .count() as f64
                / self.types.len() as f64
        }
    }
}

/// The judge's range checks on year, value and quantity keys: the share that hold (1 when
/// no key is checked).
struct RangeTally {
    /// The task's year, when it is a number.
    year: Option<f64>,
    checks: f64,
    valid: f64,
    /// The checked entries of a row: (position, check), in row order.
    checked: PerLayout<Vec<(usize, RangeCheck)>>,
}

impl RangeTally {
    fn new(year: &Value) -> Self {
        RangeTally {
            year: match year {
                Value::Number(n) => n.as_f64(),
                _ => None,
            },
            checks: 0.0,
            valid: 0.0,
            checked: PerLayout::default(),
        }
    }

    fn add(&mut self, layout: Layout, entries: &[Entry<'_>]) {
        let checked = self.checked.get(layout, |checked| {
            checked.clear();
            // Keys are unique within a parsed row: each checked key once.
            checked.extend(
                entries
                    .iter()
                    .enumerate()
                    .filter_map(|(at, (k, _))| Some((at, range_check(k)?))),
            );
        });
        for &(at, check) in checked {
            let Some((_, v)) = entries.get(at) else {
                continue;
            };
            self.checks += 1.0;
            match check {
                RangeCheck::Year => {
                    if let Some(y) = v.py_number()
                        && (1900.0..=2100.0).contains(&y)
                    {
                        self.valid += 1.0;
                        if self.year.is_some_and(|t| t == y) {
                            self.checks += 0.5;
                            self.valid += 0.5;
                        }
                    }
                }
                RangeCheck::Value => {
                    if v.py_number().is_some_and(|x| x >= 0.0) {
                        self.valid += 1.0;
                    }
                }
                RangeCheck::Quantity => {
                    if matches!(v, LiteValue::Null) || v.py_number().is_some_and(|x| x >= 0.0) {
                        self.valid += 1.0;
                    }
                }
            }
        }
    }

    fn share(&self) -> f64 {
        if self.checks == 0.0 {
            1.0
        } else {
            self.valid / self.checks
        }
    }
}

/// The keys the released judge range-checked.
#[derive(Debug, Clone, Copy)]
enum RangeCheck {
    /// `year`.
    Year,
    /// `value`, `trade_value`, `tradeValue`, `primaryValue`.
    Value,
    /// `qty`, `quantity`, `netWgt`.
    Quantity,
}

/// Which range check a key gets: told apart by length and first byte (unique among the
/// eight names), then confirmed byte for byte.
#[inline(always)]
fn range_check(key: &str) -> Option<RangeCheck> {
    let (name, check) = match (key.len(), key.as_bytes().first()?) {
        (4, b'y') => ("year", RangeCheck::Year),
        (5, b'v') => ("value", RangeCheck::Value),
        (11, b't') => ("trade_value", RangeCheck::Value),
        (10, b't') => ("tradeValue", RangeCheck::Value),
        (12, b'p') => ("primaryValue", RangeCheck::Value),
        (3, b'q') => ("qty", RangeCheck::Quantity),
        (8, b'q') => ("quantity", RangeCheck::Quantity),
        (6, b'n') => ("netWgt", RangeCheck::Quantity),
        _ => return None,
    };
    same(key, name).then_some(check)
}

fn observability(meta: &Map<String, Value>, log: &str) -> f64 {
    let log = log.to_lowercase();
    // `str(metadata)` as JSON, as `Value::to_string` writes an object (string keys: never fails).
    let meta_text = serde_json::to_string(meta)
        .unwrap_or_default()
        .to_lowercase();
    let found = ["task_id", "page", "request", "complete"]
        .iter()
        .filter(|w| log.contains(*w) || meta_text.contains(*w))
        .count();
    let traceable = 6.0 * found as f64 / 4.0;
    let levels_present = ["info", "warn", "error"]
        .iter()
        .filter(|w| log.contains(*w))
        .count();
    let levels = (0.67 * levels_present as f64).min(2.0);
    let stop_words = [
        "complete", "finish", "done", "success", "fail", "error", "stop",
    ];
    let stop = if stop_words.iter().any(|w| log.contains(w))
        || meta.contains_key("stop_reason")
        || meta.contains_key("pagination_stats")
    {
        2.0
    } else {
        0.0
    };
    (traceable + levels + stop).min(10.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lite::parse_lines;
    use proptest::prelude::*;

    proptest! {
        /// The position hints and the lazily built index give what a plain map of every key's
        /// types gives, whatever the rows' key orders.
        #[test]
        fn type_consistency_is_per_key_types(
            rows in proptest::collection::vec(
                proptest::collection::vec(("[a-e]", 0usize..4), 0..6),
                0..8,
            ),
        ) {
            let values = ["null", "1", "1.5", "\"s\""];
            let data: Vec<String> = rows
                .iter()
                .map(|row| {
                    let body: Vec<String> =
                        row.iter().map(|(k, v)| format!("\"{k}\":{}", values[*v])).collect();
                    format!("{{{}}}", body.join(","))
                })
                .collect();
            let data = data.join("\n");
            let lines = parse_lines(&data);
            let mut naive: std::collections::BTreeMap<&str, std::collections::BTreeSet<&str>> =
                Default::default();
            for line in lines.iter() {
                for (k, v) in line.entries() {
                    let kinds = naive.entry(k.as_ref()).or_default();
                    if *v != LiteValue::Null {
                        kinds.insert(v.type_name());
                    }
                }
            }
            let want = if naive.is_empty() {
                0.0
            } else {
                naive.values().filter(|t| t.len() <= 1).count() as f64 / naive.len() as f64
            };
            let mut tally = TypeTally::default();
            for (layout, line) in lines.iter_layouts() {
                tally.add(layout, line.entries());
            }
            prop_assert_eq!(tally.share(), want);
        }
    }

    /// A row of a few keys from a small pool, in any order, with values of every kind the
    /// judge tells apart: rows often repeat a layout, and often do not.
    fn arb_row() -> impl Strategy<Value = String> {
        let keys = prop::sample::select(vec![
            "year",
            "reporter",
            "partner",
            "flow",
            "hs",
            "record_id",
            "tradeValue",
            "qty",
            "value",
            "netWgt",
            "extra",
        ]);
        let value = prop::sample::select(vec![
            "null",
            "true",
            "1",
            "-3",
            "1.0",
            "2.5",
            "2021",
            "\"a\"",
            "\"b\"",
            "[1]",
            "{}",
            "1e400",
            "\"\\u00e9\"",
        ]);
        proptest::collection::vec((keys, value), 0..7).prop_map(|entries| {
            let body: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("\"{k}\":{v}"))
                .collect();
            format!("{{{}}}", body.join(","))
        })
    }

    proptest! {
        /// Work kept per shared layout changes no verdict: judging with every row's key
        /// positions worked out afresh gives the same outcome, whatever the rows' layouts, and
        /// so does judging the lines as they are read, one at a time.
        #[test]
        fn layout_sharing_changes_no_verdict(
            // Rows drawn from a few templates, so layouts repeat, run and alternate.
            templates in proptest::collection::vec(arb_row(), 1..4),
            picks in proptest::collection::vec((0usize..4, any::<bool>()), 0..12),
            other in arb_row(),
            dedup in prop::sample::subsequence(
                vec!["year", "reporter", "partner", "flow", "hs", "record_id", "qty", "extra"], 0..8),
            long_dedup in any::<bool>(),
            schema in prop::sample::subsequence(
                vec!["year", "reporter", "partner", "flow", "hs", "record_id", "qty", "value", "extra"], 0..9),
            long_schema in any::<bool>(),
        ) {
            let data: Vec<String> = picks
                .iter()
                .map(|(i, fresh)| if *fresh { other.clone() } else { templates[i % templates.len()].clone() })
                .collect();
            let data = data.join("\n");
            // Past DENSE_FIELDS entries, the key list and schema take their long paths.
            let widen = |list: &[&str], long: bool| -> Vec<String> {
                let mut v: Vec<String> = list.iter().map(|s| s.to_string()).collect();
                if long {
                    v.extend((0..DENSE_FIELDS).map(|i| format!("pad{i}")));
                }
                v
            };
            let meta = serde_json::json!({
                "task_id": "T2_multi_page",
                "query": {"reporter": "842"},
                "row_count": picks.len(),
                "schema": widen(&schema, long_schema),
                "dedup_key": widen(&dedup, long_dedup),
            })
            .to_string();
            let sub = Submission {
                data_jsonl: Some(data.clone()),
                metadata_json: Some(meta),
                run_log: Some("info: page 1 request=1 complete".into()),
                undecodable: Vec::new(),
            };
            let ctx = JudgeContext {
                query: vec![("reporter".into(), Value::from("842"))],
                total_rows: 5,
                mode: "duplicates".into(),
                year: Value::from(2021),
            };
            let shared = parse_lines(&data);
            let unshared = parse_lines(&data).unshared();
            let verdict = judge_lines(&ctx, &sub, &shared);
            prop_assert_eq!(&verdict, &judge_lines(&ctx, &sub, &unshared));
            // Read a line at a time, as scoring does.
            prop_assert_eq!(&verdict, &judge(&ctx, &sub));
        }
    }

    proptest! {
        /// Counting keys by their encoded bytes counts what Python's set of tuples counts:
        /// values Python calls equal (1, 1.0, true; a float beyond i64 and its integer) collapse,
        /// all others stay apart, in any field order, with fields repeated or missing.
        #[test]
        fn distinct_keys_are_distinct_tuples(
            rows in proptest::collection::vec(
                proptest::collection::vec((0usize..3, 0usize..14), 0..4),
                0..10,
            ),
            key in proptest::collection::vec(0usize..4, 0..5),
        ) {
            let names = ["a", "b", "c", "d"];
            let values = [
                "1", "1.0", "true", "0", "false", "-0.0", "2.5", "\"1\"", "\"\"", "null",
                "18446744073709551615", "1.8446744073709552e19", "1e20", "100000000000000000000",
            ];
            let data: Vec<String> = rows
                .iter()
                .map(|row| {
                    let body: Vec<String> =
                        row.iter().map(|(k, v)| format!("\"{}\":{}", names[*k], values[*v])).collect();
                    format!("{{{}}}", body.join(","))
                })
                .collect();
            let data = data.join("\n");
            let lines = parse_lines(&data);
            let key: Vec<Value> = key.iter().map(|i| Value::from(names[*i])).collect();
            let fields = DedupFields::of(&key);
            let naive: std::collections::HashSet<Vec<Option<KeyAtom<'_>>>> = lines
                .iter()
                .enumerate()
                .map(|(n, line)| {
                    key.iter()
                        .map(|name| KeyAtom::of(line.get(name.as_str().unwrap_or("")), n))
                        .collect()
                })
                .collect();
            prop_assert_eq!(distinct_keys(&lines, fields).ok(), Some(naive.len()));
        }
    }

    #[test]
    fn robustness_ladders() {
        assert_eq!(
            robustness("rate_limit", "got 429, retrying with exponential backoff"),
            15.0
        );
        assert_eq!(robustness("rate_limit", "429 retrying"), 12.0);
        assert_eq!(robustness("server_error", "retrying"), 8.0);
        assert_eq!(robustness("server_error", "500 retry status max"), 15.0);
        assert_eq!(robustness("duplicates", "a\nb\nc\nd\ne"), 15.0);
        assert_eq!(robustness("duplicates", "a\nb\nc"), 12.0);
        assert_eq!(robustness("duplicates", "one long line"), 8.0);
        assert_eq!(robustness("duplicates", "  short  "), 0.0);
    }

    #[test]
    fn request_count_from_log() {
        assert_eq!(
            max_request_in_log("request=3 x request=12 request=7 request="),
            12.0
        );
        assert_eq!(max_request_in_log("nothing"), 0.0);
    }
}
