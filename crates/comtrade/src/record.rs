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

/// Records whose words [`Generator::records`] reads from the stream at once (four ChaCha
/// blocks, what the generator computes in one go).
const BATCH: usize = 8;

/// The value fields of one canonical record (the rest is the task's query).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
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

    /// Canonical records at `indices`, in their order, those past the end of the set left out:
    /// what `record` would give for each, with the stream set up once. Indices that lie close
    /// together (a shuffled page of a small set) are read as the one run that spans them,
    /// which costs fewer block computations than seeking to each; scattered ones are sought.
    pub fn records_at(&self, indices: &[u32]) -> Vec<Record> {
        let total = self.task.total_rows;
        let valid = || indices.iter().copied().filter(move |&i| i < total);
        let Some((lo, hi, count)) = valid().fold(None, |span, i| match span {
            None => Some((i, i, 1)),
            Some((lo, hi, n)) => Some((lo.min(i), hi.max(i), n + 1)),
        }) else {
            return Vec::new();
        };
        // A record is 32 bytes of a 256-byte block computation: reading a run of up to four
        // records per wanted one costs no more blocks than one seek (one computation) each.
        if (hi - lo) as usize / 4 < count {
            let run: Vec<Record> = self.records(lo..hi + 1).collect();
            return valid().map(|i| run[(i - lo) as usize]).collect();
        }
        let mut stream = Stream::new(&self.key, RECORD_STREAM);
        let mut words = [0u8; 4 * RECORD_WORDS as usize];
        valid()
            .map(|i| {
                stream.seek_word(RECORD_WORDS * u128::from(i));
                stream.fill(&mut words);
                decode(i, &words, &mut stream)
            })
            .collect()
    }

    /// Canonical records `range` (clipped to the set), generated in one sequential pass (see
    /// [`Records`]).
    pub fn records(&self, range: std::ops::Range<u32>) -> Records {
        let end = range.end.min(self.task.total_rows);
        Records {
            stream: Stream::new(&self.key, RECORD_STREAM),
            next: range.start.min(end),
            end,
            batch: [Record::default(); BATCH],
            held: 0,
            at: 0,
        }
    }

    /// The ground truth G: every canonical record in order.
    pub fn truth(&self) -> Records {
        self.records(0..self.task.total_rows)
    }

    /// Parses a canonical record id of this task (`"{task_id}-{i:06}"`, i < total_rows).
    pub fn index_of(&self, record_id: &str) -> Option<u32> {
        parse_record_id(self.task, record_id)
    }
}

/// Contiguous canonical records, generated a batch at a time: the words of [`BATCH`] records
/// are read from the stream at once and each record decodes its eight (four draws, the fourth
/// unused). A record whose draws need a rejection redraw (odds below 10⁻¹³) is drawn again
/// word by word from its first word; the batch's other records keep their words.
pub struct Records {
    stream: Stream,
    /// Index of the first record not yet in `batch`.
    next: u32,
    end: u32,
    batch: [Record; BATCH],
    /// Records of `batch` filled.
    held: usize,
    /// Records of `batch` handed out.
    at: usize,
}

impl Records {
    /// Decodes the next batch.
    fn refill(&mut self) {
        const WORDS: usize = 4 * RECORD_WORDS as usize;
        let n = ((self.end - self.next) as usize).min(BATCH);
        let mut words = [0u8; WORDS * BATCH];
        self.stream.seek_word(RECORD_WORDS * u128::from(self.next));
        self.stream.fill(&mut words[..WORDS * n]);
        for (k, (record, words)) in self.batch[..n]
            .iter_mut()
            .zip(words.chunks_exact(WORDS))
            .enumerate()
        {
            *record = decode(self.next + k as u32, words, &mut self.stream);
        }
        self.next += n as u32;
        self.held = n;
        self.at = 0;
    }
}

/// Record `index` from its eight words; when they do not decide it, drawn again from `stream`
/// at the record's first word.
#[inline(always)]
fn decode(index: u32, words: &[u8], stream: &mut Stream) -> Record {
    let draw = |j: usize| {
        let mut x = [0u8; 8];
        x.copy_from_slice(&words[8 * j..8 * j + 8]);
        u64::from_le_bytes(x)
    };
    let (trade_value, net_weight, qty) = match (
        below_first(draw(0), 1_000_000),
        below_first(draw(1), 50_000),
        below_first(draw(2), 10_000),
    ) {
        (Some(t), Some(n), Some(q)) => (t, n, q),
        _ => {
            stream.seek_word(RECORD_WORDS * u128::from(index));
            (
                stream.below(1_000_000),
                stream.below(50_000),
                stream.below(10_000),
            )
        }
    };
    Record {
        index,
        trade_value,
        net_weight,
        qty,
    }
}

impl Iterator for Records {
    type Item = Record;

    #[inline]
    fn next(&mut self) -> Option<Record> {
        if self.at == self.held {
            if self.next == self.end {
                return None;
            }
            self.refill();
        }
        let record = self.batch[self.at];
        self.at += 1;
        Some(record)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.held - self.at) + (self.end - self.next) as usize;
        (left, Some(left))
    }
}

impl ExactSizeIterator for Records {}

/// Parses `"{task_id}-{i:06}"` for a task; anything else (other task, wrong padding, out of
/// range) is not a canonical id.
pub fn parse_record_id(task: &TaskSpec, record_id: &str) -> Option<u32> {
    let (prefix, digits) = record_id.as_bytes().split_at_checked(task.task_id.len())?;
    let [b'-', digits @ ..] = digits else {
        return None;
    };
    if digits.len() != 6 || !same_bytes(prefix, task.task_id.as_bytes()) {
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

/// Whether two byte strings are equal, without a call to `bcmp` for short ones: record ids,
/// and the scorers' keys, are compared once or more a submitted line, nearly all in 16 bytes
/// or fewer.
#[inline(always)]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    fn word<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
        let mut w = [0u8; N];
        w.copy_from_slice(&s[at..at + N]);
        w
    }
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        // Two overlapping loads cover lengths 8..=16, and 4..=7.
        8..=16 => word::<8>(a, 0) == word::<8>(b, 0) && word::<8>(a, n - 8) == word::<8>(b, n - 8),
        4..=7 => word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, n - 4) == word::<4>(b, n - 4),
        0..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        _ => a == b,
    }
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
///
/// Rows are rendered into a stack buffer and appended to the output a few kilobytes at a
/// time. The shared parts are kept in fixed-size blocks ([`HEAD_BLOCK`], [`ID_BLOCK`] bytes)
/// and copied whole, the bytes past their length being overwritten by what follows: a copy of
/// constant size compiles to a few vector moves, where a copy of a runtime length is a call to
/// `memcpy`, and a T1 page (800 rows) made ten of those per row. A task whose parts do not
/// fit the blocks is written part by part instead (same bytes).
#[derive(Debug, Clone)]
pub struct RowWriter<'a> {
    task: &'a TaskSpec,
    /// `{"year":…,"reporter":…,…,"cmdCode":…,"tradeValue":`
    record_head: String,
    /// `{"year":…,"reporter":…,"partner":"WLD",…,"cmdCode":"TOTAL","tradeValue":`
    totals_head: String,
    /// `,"record_id":"{task_id}-`
    id_head: String,
    /// The same three parts as fixed-size blocks, when they fit.
    blocks: Option<Blocks>,
}

/// Bytes of the block a row head is copied as.
const HEAD_BLOCK: usize = 128;
/// Bytes of the block the id head is copied as.
const ID_BLOCK: usize = 64;
/// Bytes a row rendered from blocks can need: the head block, three 20-digit integers with
/// their keys, the id block, `TOTAL-` and a 10-digit page, and the totals' tail.
const ROW_MAX: usize = HEAD_BLOCK + 3 * 20 + 13 + 7 + ID_BLOCK + 6 + 10 + 34;
/// Stack buffer a bulk write renders rows into before appending them to the output (small,
/// since it is zeroed on every call: a ten-row page is 2 KB).
const CHUNK: usize = 4096;
/// `00`, `01`, … `99`: two decimal digits at a time.
const DIGIT_PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// [`RowWriter`]'s shared parts as blocks copied whole.
#[derive(Debug, Clone)]
struct Blocks {
    record_head: Block<HEAD_BLOCK>,
    totals_head: Block<HEAD_BLOCK>,
    id_head: Block<ID_BLOCK>,
}

/// A part of at most `N` bytes kept in `N` bytes (the first `len` of them meaningful).
#[derive(Debug, Clone)]
struct Block<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> Block<N> {
    /// `s` as a block, if it fits.
    fn of(s: &str) -> Option<Self> {
        let mut bytes = [0u8; N];
        bytes.get_mut(..s.len())?.copy_from_slice(s.as_bytes());
        Some(Block {
            bytes,
            len: s.len(),
        })
    }

    /// Copies the whole block to `out[at..]` and returns the end of its meaningful bytes.
    #[inline(always)]
    fn put(&self, out: &mut [u8], at: usize) -> usize {
        out[at..at + N].copy_from_slice(&self.bytes);
        at + self.len
    }
}

/// Copies `s` to `out[at..]`; `s` is a constant, so the copy is too.
#[inline(always)]
fn put_const<const N: usize>(out: &mut [u8], at: usize, s: &[u8; N]) -> usize {
    out[at..at + N].copy_from_slice(s);
    at + N
}

/// Writes `v` in decimal, zero-padded to at least `width` digits, at `out[at..]`, and returns
/// the end (`{v:0width$}`, `width` 0 for plain `{v}`). Below 10⁸ (every generated value,
/// every index in practice) the digits are made eight at once and stored as one word, the
/// bytes past the end being overwritten by what follows.
#[inline(always)]
fn put_decimal(out: &mut [u8], at: usize, mut v: u64, width: usize) -> usize {
    if let Ok(small) = u32::try_from(v)
        && small < 100_000_000
        && width <= 8
    {
        let digits = eight_digits(small);
        // Leading zero digits sit in the low bytes (the first digit is the lowest byte).
        let zeros = (digits.trailing_zeros() / 8) as usize;
        let len = (8 - zeros).max(width).max(1);
        let ascii = (digits + 0x3030_3030_3030_3030) >> (8 * (8 - len));
        out[at..at + 8].copy_from_slice(&ascii.to_le_bytes());
        return at + len;
    }
    let len = v.checked_ilog10().map_or(1, |l| l as usize + 1).max(width);
    let digits = &mut out[at..at + len];
    // Every position gets a digit, so positions past v's own digits get zeros.
    let mut i = len;
    while i >= 2 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        digits[i - 2..i].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
        i -= 2;
    }
    if i == 1 {
        digits[0] = b'0' + (v % 10) as u8;
    }
    at + len
}

/// The eight decimal digits of `v < 10⁸` (leading zeros included) as byte values 0–9, the
/// first digit in the lowest byte, computed in parallel lanes: `v` splits into two 4-digit
/// halves (32-bit lanes), each into two 2-digit quarters (16-bit lanes), each into two digits
/// (8-bit lanes). `n·5243 >> 19 = n / 100` for `n < 10⁴` and `n·103 >> 10 = n / 10` for
/// `n < 100`; no lane's product reaches the next lane.
#[inline(always)]
fn eight_digits(v: u32) -> u64 {
    let halves = u64::from(v / 10_000) | (u64::from(v % 10_000) << 32);
    let hundreds = ((halves * 5243) >> 19) & 0x0000_007F_0000_007F;
    let quarters = hundreds | ((halves - hundreds * 100) << 16);
    let tens = ((quarters * 103) >> 10) & 0x000F_000F_000F_000F;
    tens | ((quarters - tens * 10) << 8)
}

/// Where rows are written: bytes for the wire, or a `String` (JSON Lines).
pub trait Sink {
    /// Appends `s`.
    fn put(&mut self, s: &str);
    /// Appends whole rows rendered as bytes (UTF-8, since every part came from a `str`).
    fn put_rows(&mut self, rows: &[u8]);
}

impl Sink for Vec<u8> {
    fn put(&mut self, s: &str) {
        self.extend_from_slice(s.as_bytes());
    }

    fn put_rows(&mut self, rows: &[u8]) {
        self.extend_from_slice(rows);
    }
}

impl Sink for String {
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }

    fn put_rows(&mut self, rows: &[u8]) {
        // The rows are whole `str` parts and ASCII digits, so the check passes (the lossy
        // reading, a slower scan, is never needed).
        match std::str::from_utf8(rows) {
            Ok(text) => self.push_str(text),
            Err(_) => self.push_str(&String::from_utf8_lossy(rows)),
        }
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

/// The six digits of the last record id a bulk write wrote, so that the id of the next record
/// up is one increment of the last digit (nine times in ten) rather than a conversion.
#[derive(Debug, Clone, Copy)]
struct LastId {
    /// The index whose digits are one up from `digits`; `u32::MAX` (never six digits) at first.
    next: u32,
    /// ASCII of `{next - 1:06}` in the low six bytes, first digit lowest.
    digits: u64,
}

impl LastId {
    const NONE: LastId = LastId {
        next: u32::MAX,
        digits: 0,
    };

    /// Writes `{index:06}` at `out[at..]` (with eight bytes of room) and returns its end.
    #[inline(always)]
    fn put(&mut self, out: &mut [u8], at: usize, index: u32) -> usize {
        const LAST_DIGIT: u32 = 40;
        if index >= 1_000_000 {
            *self = LastId::NONE;
            return put_decimal(out, at, u64::from(index), 6);
        }
        let digits = if index == self.next && (self.digits >> LAST_DIGIT) as u8 != b'9' {
            self.digits + (1 << LAST_DIGIT)
        } else {
            // `{index:08}` without its two leading zeros.
            (eight_digits(index) + 0x3030_3030_3030_3030) >> 16
        };
        *self = LastId {
            next: index + 1,
            digits,
        };
        out[at..at + 8].copy_from_slice(&digits.to_le_bytes());
        at + 6
    }
}

impl Blocks {
    /// Writes `row` at `out[at..]`, which has [`ROW_MAX`] bytes of room, and returns its end;
    /// `last` carries the id digits from row to row.
    #[inline(always)]
    fn render(&self, row: &Row, out: &mut [u8], at: usize, last: &mut LastId) -> usize {
        let (head, values) = match row {
            Row::Record(r) => (&self.record_head, [r.trade_value, r.net_weight, r.qty]),
            Row::Totals(t) => (&self.totals_head, [t.trade_value, t.net_weight, t.qty]),
        };
        let out = &mut out[at..at + ROW_MAX];
        let mut p = head.put(out, 0);
        p = put_decimal(out, p, values[0], 0);
        p = put_const(out, p, b",\"netWeight\":");
        p = put_decimal(out, p, values[1], 0);
        p = put_const(out, p, b",\"qty\":");
        p = put_decimal(out, p, values[2], 0);
        p = self.id_head.put(out, p);
        p = match row {
            Row::Record(r) => {
                p = last.put(out, p, r.index);
                put_const(out, p, b"\"}")
            }
            Row::Totals(t) => {
                p = put_const(out, p, b"TOTAL-");
                p = put_decimal(out, p, u64::from(t.page), 4);
                put_const(out, p, b"\",\"is_total\":true,\"isTotal\":true}")
            }
        };
        at + p
    }
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
        let (record_head, totals_head) = (head(q.partner, q.hs), head("WLD", "TOTAL"));
        let blocks = (|| {
            Some(Blocks {
                record_head: Block::of(&record_head)?,
                totals_head: Block::of(&totals_head)?,
                id_head: Block::of(&id_head)?,
            })
        })();
        RowWriter {
            task,
            record_head,
            totals_head,
            id_head,
            blocks,
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
        match &self.blocks {
            Some(blocks) => {
                let mut buf = [0u8; ROW_MAX];
                let mut last = LastId::NONE;
                let end = blocks.render(row, &mut buf, 0, &mut last);
                out.put_rows(&buf[..end]);
            }
            None => self.write_parts(row, out),
        }
    }

    /// Appends `rows` as JSON objects with `separator` (an ASCII byte) between them (none
    /// before the first or after the last): `,` for a JSON array's items, `\n` for JSON Lines.
    pub fn write_rows<'r>(
        &self,
        rows: impl IntoIterator<Item = &'r Row>,
        separator: u8,
        out: &mut impl Sink,
    ) {
        let Some(blocks) = &self.blocks else {
            for (i, row) in rows.into_iter().enumerate() {
                if i > 0 {
                    out.put_rows(&[separator]);
                }
                self.write_parts(row, out);
            }
            return;
        };
        let mut chunk = [0u8; CHUNK];
        let mut end = 0;
        let mut last = LastId::NONE;
        for (i, row) in rows.into_iter().enumerate() {
            if end + 1 + ROW_MAX > CHUNK {
                out.put_rows(&chunk[..end]);
                end = 0;
            }
            if i > 0 {
                chunk[end] = separator;
                end += 1;
            }
            end = blocks.render(row, &mut chunk, end, &mut last);
        }
        out.put_rows(&chunk[..end]);
    }

    /// [`RowWriter::write`] part by part, for parts that do not fit the blocks.
    fn write_parts(&self, row: &Row, out: &mut impl Sink) {
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
    let mut rows = rows.into_iter().peekable();
    if rows.peek().is_some() {
        RowWriter::for_task(task).write_rows(rows, b'\n', out);
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
        /// `records_at` gives what `record` gives for each index, in order and without those
        /// past the end: for runs read whole (close indices) and sought ones (scattered).
        #[test]
        fn records_at_is_record_for_each(
            task_no in 0usize..11,
            seed in 0u64..4,
            indices in proptest::collection::vec(
                proptest::prop_oneof![0u32..40, 0u32..3_000, proptest::prelude::any::<u32>()],
                0..30,
            ),
        ) {
            let g = Generator::new(&crate::task::tasks()[task_no], seed);
            let want: Vec<Record> = indices.iter().filter_map(|&i| g.record(i)).collect();
            proptest::prop_assert_eq!(g.records_at(&indices), want);
        }
    }

    proptest::proptest! {
        /// `same_bytes` is `==` for every length it treats apart (0..=3, 4..=7, 8..=16, more),
        /// on equal strings and on strings one byte apart anywhere.
        #[test]
        fn same_bytes_is_equality(
            a in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
            at in proptest::prelude::any::<proptest::sample::Index>(),
            flip in 1u8..=255,
            longer in proptest::prelude::any::<bool>(),
        ) {
            proptest::prop_assert!(same_bytes(&a, &a.clone()));
            let mut b = a.clone();
            if let Some(byte) = (!b.is_empty()).then(|| &mut b[at.index(a.len())]) {
                *byte ^= flip;
                proptest::prop_assert!(!same_bytes(&a, &b));
            }
            if longer {
                b = a.clone();
                b.push(0);
                proptest::prop_assert!(!same_bytes(&a, &b));
            }
        }
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

    /// T2 with its query's reporter (and its task id) stretched to `pad` characters of `fill`,
    /// so the row heads (or the id head) land at, under or over their block's size.
    fn stretched(hs_pad: usize, id_pad: usize, fill: char) -> &'static TaskSpec {
        let base = task("T2_multi_page").expect("registry");
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        let mut t = base.clone();
        t.query.reporter = leak(std::iter::repeat_n(fill, hs_pad).collect());
        t.task_id = leak(format!(
            "T2{}",
            std::iter::repeat_n(fill, id_pad).collect::<String>()
        ));
        Box::leak(Box::new(t))
    }

    proptest::proptest! {
        /// A batch of rows is the serde_json bytes of each, joined by the separator, for heads
        /// that fit their blocks exactly, by one byte too many (the part-by-part path), and
        /// with escapes and multi-byte characters in them; across the stack chunk's flushes.
        #[test]
        fn write_rows_joins_serde_json_bytes(
            hs_pad in proptest::prop_oneof![0usize..4, 20usize..40],
            id_pad in proptest::prop_oneof![0usize..4, 30usize..70],
            fill in proptest::prop_oneof![proptest::strategy::Just('9'), proptest::strategy::Just('"'), proptest::strategy::Just('é'), proptest::strategy::Just('\u{1}')],
            rows in proptest::collection::vec(
                (proptest::prelude::any::<bool>(), proptest::prelude::any::<u32>(), proptest::prelude::any::<[u64; 3]>()),
                0..300,
            ),
            separator in proptest::prop_oneof![proptest::strategy::Just(b','), proptest::strategy::Just(b'\n')],
            run_from in proptest::option::of(proptest::prop_oneof![0u32..2_000, 999_700u32..1_000_100, u32::MAX - 400..u32::MAX]),
        ) {
            let t = stretched(hs_pad, id_pad, fill);
            let rows: Vec<Row> = rows
                .into_iter()
                .enumerate()
                // A run of consecutive indices (ids written by increment), or any indices.
                .map(|(i, (totals, index, v))| (totals, run_from.map_or(index, |from| from.wrapping_add(i as u32)), v))
                .map(|(totals, index, v)| if totals {
                    Row::Totals(Totals { page: index, trade_value: v[0], net_weight: v[1], qty: v[2] })
                } else {
                    Row::Record(Record { index, trade_value: v[0], net_weight: v[1], qty: v[2] })
                })
                .collect();
            let want = rows
                .iter()
                .map(|r| serde_line(t, r))
                .collect::<Vec<_>>()
                .join(&char::from(separator).to_string());
            let want = format!("kept{want}");
            let writer = RowWriter::new(t);
            let mut bytes = b"kept".to_vec();
            writer.write_rows(&rows, separator, &mut bytes);
            proptest::prop_assert_eq!(String::from_utf8(bytes).expect("utf-8"), want.clone());
            let mut text = String::from("kept");
            writer.write_rows(&rows, separator, &mut text);
            proptest::prop_assert_eq!(text, want);
        }
    }

    #[test]
    fn heads_take_the_block_path_up_to_the_block_size_and_not_past_it() {
        // The shortest reporter whose longer head no longer fits, and the id head likewise.
        let head_len = |t: &TaskSpec| {
            let w = RowWriter::new(t);
            w.record_head.len().max(w.totals_head.len())
        };
        let base = head_len(stretched(0, 0, '9'));
        let fits = stretched(HEAD_BLOCK - base, 0, '9');
        assert_eq!(head_len(fits), HEAD_BLOCK);
        assert!(RowWriter::new(fits).blocks.is_some());
        assert!(
            RowWriter::new(stretched(HEAD_BLOCK - base + 1, 0, '9'))
                .blocks
                .is_none()
        );
        let id_len = |t: &TaskSpec| RowWriter::new(t).id_head.len();
        let base = id_len(stretched(0, 0, '9'));
        assert!(
            RowWriter::new(stretched(0, ID_BLOCK - base, '9'))
                .blocks
                .is_some()
        );
        assert!(
            RowWriter::new(stretched(0, ID_BLOCK - base + 1, '9'))
                .blocks
                .is_none()
        );
        // Every registry task takes the block path.
        assert!(
            crate::task::tasks()
                .iter()
                .all(|t| RowWriter::new(t).blocks.is_some())
        );
    }

    proptest::proptest! {
        /// Both ways of writing a decimal give `format!`'s digits, padded or not, and leave the
        /// bytes before them alone.
        #[test]
        fn put_decimal_is_format(
            v in proptest::prop_oneof![0u64..1000, 0u64..100_000_000, proptest::prelude::any::<u64>()],
            width in proptest::prop_oneof![proptest::strategy::Just(0usize), 1usize..12],
        ) {
            let mut out = [b'x'; 40];
            let end = put_decimal(&mut out, 3, v, width);
            proptest::prop_assert_eq!(&out[..3], b"xxx");
            proptest::prop_assert_eq!(std::str::from_utf8(&out[3..end]).expect("ascii"), format!("{v:0width$}"));
        }
    }

    #[test]
    fn eight_digits_at_every_length_and_edge() {
        for v in [
            0u32, 1, 9, 10, 99, 100, 999, 1000, 9999, 10_000, 10_001, 99_999_999, 12_345_678,
            90_000_009,
        ] {
            let digits: Vec<u8> = eight_digits(v)
                .to_le_bytes()
                .iter()
                .map(|d| d + b'0')
                .collect();
            assert_eq!(String::from_utf8(digits).expect("ascii"), format!("{v:08}"));
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
    fn undecided_words_are_drawn_again_from_the_records_own_position() {
        // Zero words never decide a draw (the low half of 0·n is under n), so each of these
        // takes the redraw path, from wherever the stream stands: the result is the record as
        // described, and a batch after the redraw still starts where it should.
        let t = task("T2_multi_page").expect("registry");
        let g = Generator::new(t, 5);
        let mut stream = Stream::new(g.key(), RECORD_STREAM);
        for index in [0, 1, 700, 2_344, 17] {
            assert_eq!(
                decode(index, &[0u8; 32], &mut stream),
                reference_record(&g, index)
            );
        }
        let mut records = g.records(9..30);
        records.stream = stream;
        let want: Vec<Record> = (9..30).map(|i| reference_record(&g, i)).collect();
        assert_eq!(records.collect::<Vec<_>>(), want);
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
