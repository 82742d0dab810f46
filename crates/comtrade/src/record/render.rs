//! Rows as JSON: [`RowJson`] (serde, the reference), [`RowWriter`] (the same bytes written by
//! hand for the serving path: a pre-rendered head per task, integers eight digits at a time,
//! consecutive ids by increment) and [`write_jsonl`].
//!
//! The writer is held to serde_json's bytes by the property tests below, for every task and any
//! values; the golden tests pin the bytes served.

use std::borrow::Cow;
use std::sync::OnceLock;

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::{Row, record_id, totals_id};
use crate::task::{TaskSpec, tasks};

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
    /// The three parts escaped for a JSON string, as blocks, when they fit: rows written as
    /// the text of a string (MCP's text copy of a page) without a second, escaping pass.
    escaped: Option<Blocks>,
}

/// Bytes of the block a row head is copied as.
const HEAD_BLOCK: usize = 128;
/// Bytes of the block the id head is copied as.
const ID_BLOCK: usize = 64;
/// Bytes a row rendered from blocks can need: the head block, three 20-digit integers with
/// their keys, the id block, `TOTAL-` and a 10-digit page, and the totals' tail (each key and
/// tail as long as its escaped form).
const ROW_MAX: usize = HEAD_BLOCK + 3 * 20 + 15 + 9 + ID_BLOCK + 6 + 10 + 40;
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
pub(super) fn padded(out: &mut impl Sink, n: u32, width: usize) {
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
    /// `last` carries the id digits from row to row. With `ESC` the blocks are the escaped
    /// parts and the row is written as the text of a JSON string (every `"` as `\"`).
    #[inline(always)]
    fn render<const ESC: bool>(
        &self,
        row: &Row,
        out: &mut [u8],
        at: usize,
        last: &mut LastId,
    ) -> usize {
        let (head, values) = match row {
            Row::Record(r) => (&self.record_head, [r.trade_value, r.net_weight, r.qty]),
            Row::Totals(t) => (&self.totals_head, [t.trade_value, t.net_weight, t.qty]),
        };
        let out = &mut out[at..at + ROW_MAX];
        let mut p = head.put(out, 0);
        p = put_decimal(out, p, values[0], 0);
        p = if ESC {
            put_const(out, p, br#",\"netWeight\":"#)
        } else {
            put_const(out, p, b",\"netWeight\":")
        };
        p = put_decimal(out, p, values[1], 0);
        p = if ESC {
            put_const(out, p, br#",\"qty\":"#)
        } else {
            put_const(out, p, b",\"qty\":")
        };
        p = put_decimal(out, p, values[2], 0);
        p = self.id_head.put(out, p);
        p = match row {
            Row::Record(r) => {
                p = last.put(out, p, r.index);
                if ESC {
                    put_const(out, p, br#"\"}"#)
                } else {
                    put_const(out, p, b"\"}")
                }
            }
            Row::Totals(t) => {
                p = put_const(out, p, b"TOTAL-");
                p = put_decimal(out, p, u64::from(t.page), 4);
                if ESC {
                    put_const(out, p, br#"\",\"is_total\":true,\"isTotal\":true}"#)
                } else {
                    put_const(out, p, b"\",\"is_total\":true,\"isTotal\":true}")
                }
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
        let blocks = |record_head: &str, totals_head: &str, id_head: &str| {
            Some(Blocks {
                record_head: Block::of(record_head)?,
                totals_head: Block::of(totals_head)?,
                id_head: Block::of(id_head)?,
            })
        };
        let escaped = blocks(
            &escaped(&record_head),
            &escaped(&totals_head),
            &escaped(&id_head),
        );
        RowWriter {
            task,
            blocks: blocks(&record_head, &totals_head, &id_head),
            escaped,
            record_head,
            totals_head,
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
        match &self.blocks {
            Some(blocks) => {
                let mut buf = [0u8; ROW_MAX];
                let mut last = LastId::NONE;
                let end = blocks.render::<false>(row, &mut buf, 0, &mut last);
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
        write_blocks::<false>(blocks, rows, separator, out);
    }

    /// [`RowWriter::write_rows`] as the text of a JSON string: the same bytes escaped as
    /// serde_json escapes a string (no quotes around them).
    ///
    /// Exists for MCP, which carries a page twice, once as a JSON string: a page of JSON has
    /// a quote every five or six bytes, so escaping the written page costs several times
    /// writing it, where writing from escaped parts costs the same.
    pub fn write_rows_escaped<'r>(
        &self,
        rows: impl IntoIterator<Item = &'r Row>,
        separator: u8,
        out: &mut impl Sink,
    ) {
        let plain_separator = separator >= 0x20 && separator != b'"' && separator != b'\\';
        match &self.escaped {
            Some(blocks) if plain_separator => write_blocks::<true>(blocks, rows, separator, out),
            _ => {
                let mut plain = String::new();
                self.write_rows(rows, separator, &mut plain);
                out.put(&escaped(&plain));
            }
        }
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

/// Writes `rows` from `blocks` (escaped ones with `ESC`) a few kilobytes at a time.
#[inline(always)]
fn write_blocks<'r, const ESC: bool>(
    blocks: &Blocks,
    rows: impl IntoIterator<Item = &'r Row>,
    separator: u8,
    out: &mut impl Sink,
) {
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
        end = blocks.render::<ESC>(row, &mut chunk, end, &mut last);
    }
    out.put_rows(&chunk[..end]);
}

/// `s` escaped as serde_json escapes a string, without the quotes around it.
fn escaped(s: &str) -> String {
    // A `str` always serialises, as a quoted string.
    let quoted = serde_json::to_string(s).unwrap_or_default();
    quoted
        .get(1..quoted.len().saturating_sub(1))
        .unwrap_or_default()
        .to_string()
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
    use crate::record::{Generator, Record, Totals};
    use crate::task::task;

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
            proptest::prop_assert_eq!(text, want.clone());
            // The same rows as the text of a JSON string (escaped parts, or the fallback).
            let quoted = serde_json::to_string(&want["kept".len()..]).expect("json");
            let mut esc = b"\"".to_vec();
            writer.write_rows_escaped(&rows, separator, &mut esc);
            esc.push(b'"');
            proptest::prop_assert_eq!(String::from_utf8(esc).expect("utf-8"), quoted);
        }
    }

    #[test]
    fn every_registry_task_writes_escaped_rows_from_blocks() {
        for t in tasks() {
            assert!(RowWriter::new(t).escaped.is_some(), "{}", t.task_id);
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
