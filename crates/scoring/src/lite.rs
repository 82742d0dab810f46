//! A light, allocation-frugal reading of data.jsonl lines, shared by both scorers: each line is
//! parsed once into its top-level keys and scalar values (nested arrays and objects keep only
//! their kind), which is all either scorer looks at.
//!
//! Lines are read one at a time ([`LineReader`]) into one buffer reused from line to line, so
//! scoring a submission costs a handful of allocations, not one per line, and holds one row,
//! not every row; [`Lines`] keeps them all for a caller that needs them again. A flat
//! object — string keys and values without escapes, integers of up to 18 digits, `true`,
//! `false`, `null` — is read by a byte scanner; any other line (escapes, floats, nesting,
//! anything malformed) goes through serde_json, which decides. The scanner accepts only what serde_json accepts and yields what it yields (a
//! property test pins this), so the fast path changes speed, never a score.
//!
//! Why one long file: the fast scanner and the fallback it must agree with are one contract;
//! splitting them would put the two halves of one invariant in two places. About a quarter of
//! it is the tests that pin that agreement.

use std::borrow::Cow;
use std::fmt;

use benchaudit_comtrade::record::same_bytes;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A top-level value of a row, with the JSON type the legacy judge distinguishes.
#[derive(Debug, Clone, PartialEq)]
pub enum LiteValue<'a> {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A number written without fraction or exponent, within `i64`.
    Int(i64),
    /// A number written without fraction or exponent, above `i64::MAX` (up to `u64::MAX`;
    /// serde_json reads larger ones as floats).
    UInt(u64),
    /// A number written with a fraction or exponent (or too large for an integer).
    Float(f64),
    /// A string.
    Str(Cow<'a, str>),
    /// An array (contents not kept).
    List,
    /// An object (contents not kept).
    Dict,
}

impl LiteValue<'_> {
    /// Python's `type(v).__name__` for the judge's type-consistency check.
    pub fn type_name(&self) -> &'static str {
        match self {
            LiteValue::Null => "NoneType",
            LiteValue::Bool(_) => "bool",
            LiteValue::Int(_) | LiteValue::UInt(_) => "int",
            LiteValue::Float(_) => "float",
            LiteValue::Str(_) => "str",
            LiteValue::List => "list",
            LiteValue::Dict => "dict",
        }
    }

    /// The value as a number the way Python's `isinstance(v, (int, float))` sees it (bools
    /// included, as `bool` subclasses `int`).
    pub fn py_number(&self) -> Option<f64> {
        match self {
            LiteValue::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
            LiteValue::Int(i) => Some(*i as f64),
            LiteValue::UInt(u) => Some(*u as f64),
            LiteValue::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// Whether a JSON number equals an unsigned integer (int and float notation alike; bools
    /// are not numbers here).
    #[inline(always)]
    pub fn equals_uint(&self, v: u64) -> bool {
        match self {
            LiteValue::Int(i) => u64::try_from(*i) == Ok(v),
            LiteValue::UInt(u) => *u == v,
            LiteValue::Float(f) => *f == v as f64 && v < (1 << 53),
            _ => false,
        }
    }

    /// Whether a JSON number equals a signed integer (int and float notation alike).
    #[inline(always)]
    pub fn equals_int(&self, v: i64) -> bool {
        match self {
            LiteValue::Int(i) => *i == v,
            LiteValue::Float(f) => *f == v as f64 && v.unsigned_abs() < (1 << 53),
            _ => false,
        }
    }

    /// The string, if the value is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            LiteValue::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// One top-level entry of an object line.
pub type Entry<'a> = (Cow<'a, str>, LiteValue<'a>);

/// One parsed line of data.jsonl, borrowed from its [`Lines`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Line<'l, 'a> {
    /// A JSON object: its top-level entries in first-seen order (a repeated key keeps its
    /// first position and last value, as Python's `json.loads` does); keys are unique.
    Object(&'l [Entry<'a>]),
    /// Anything else: valid JSON that is not an object (an array, a number …) or not JSON at
    /// all. Which of the two is decided only when asked ([`Line::is_json`]): the scorers
    /// treat both alike, and only the judge's first such line needs to know.
    Other(&'a str),
}

impl<'l, 'a> Line<'l, 'a> {
    /// Whether the line is JSON at all (an object always is).
    pub fn is_json(&self) -> bool {
        match self {
            Line::Object(_) => true,
            Line::Other(text) => serde_json::from_str::<IgnoredAny>(text).is_ok(),
        }
    }

    /// The entries of an object line (none for the others).
    pub fn entries(&self) -> &'l [Entry<'a>] {
        match self {
            Line::Object(entries) => entries,
            _ => &[],
        }
    }

    /// The value at `key` of an object line.
    pub fn get(&self, key: &str) -> Option<&'l LiteValue<'a>> {
        self.entries()
            .iter()
            .find(|(k, _)| same(k, key))
            .map(|(_, v)| v)
    }
}

/// Whether two keys are equal, without a call to `memcmp` for short ones: keys are compared
/// millions of times per submission and are nearly all shorter than 16 bytes.
#[inline(always)]
pub fn same(a: &str, b: &str) -> bool {
    same_bytes(a.as_bytes(), b.as_bytes())
}

/// Where each of a fixed list of keys sits in a row, each search starting at the position the
/// key had in the row searched before: rows of one submission nearly always share their key
/// order, so a row whose layout is new still costs one comparison a key.
#[derive(Debug, Clone)]
pub struct Hints(Vec<usize>);

impl Hints {
    /// Hints for `n` keys, starting at their list positions.
    pub fn new(n: usize) -> Self {
        Hints((0..n).collect())
    }

    /// The position of key number `i` (named `key`) among `entries` (keys past the hinted
    /// ones are searched without a hint).
    #[inline]
    pub fn position(&mut self, entries: &[Entry<'_>], i: usize, key: &str) -> Option<usize> {
        let hint = self.0.get(i).copied().unwrap_or(0);
        if let Some((k, _)) = entries.get(hint)
            && same(k, key)
        {
            return Some(hint);
        }
        let at = entries.iter().position(|(k, _)| same(k, key))?;
        if let Some(h) = self.0.get_mut(i) {
            *h = at;
        }
        Some(at)
    }
}

/// What a scorer worked out from one row's keys (where its fields sit), kept while the
/// following rows share the row's [`Layout`] and worked out again when one does not: rows
/// nearly always share one layout, so per-key work is done once, not once a row.
#[derive(Debug, Clone, Default)]
pub struct PerLayout<T> {
    layout: Option<Layout>,
    plan: T,
}

impl<T> PerLayout<T> {
    /// The plan for a row of `layout`: the kept one if the previous row shared its layout,
    /// else the one `make` writes (given the old plan to overwrite, so its buffers are reused).
    #[inline(always)]
    pub fn get(&mut self, layout: Layout, make: impl FnOnce(&mut T)) -> &T {
        if self.layout != Some(layout) || !layout.is_shared() {
            make(&mut self.plan);
            self.layout = Some(layout);
        }
        &self.plan
    }
}

/// Where a line's entries sit (in a [`LineReader`]'s buffer or a [`Lines`] arena), or what
/// the line is instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind<'a> {
    Object {
        start: usize,
        end: usize,
        layout: Layout,
    },
    Other(&'a str),
}

impl<'a> Kind<'a> {
    fn layout(self) -> Layout {
        match self {
            Kind::Object { layout, .. } => layout,
            Kind::Other(_) => Layout::NONE,
        }
    }

    /// The line, its entries found in `entries`.
    fn view<'l>(self, entries: &'l [Entry<'a>]) -> Line<'l, 'a> {
        match self {
            Kind::Object { start, end, .. } => Line::Object(&entries[start..end]),
            Kind::Other(text) => Line::Other(text),
        }
    }
}

/// Which object lines share their keys: two lines of one submission with the same shared
/// layout ([`Layout::is_shared`]) have the same keys at the same entry positions, so what a
/// scorer learnt of one line's positions holds for the other. Lines read by the scanner with
/// the previous scanned line's key sequence share its layout; lines read by serde_json, and
/// lines that are not objects, share none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout(u32);

impl Layout {
    /// The layout of a line that shares none.
    const NONE: Layout = Layout(u32::MAX);

    /// Whether other lines may share this layout.
    pub fn is_shared(self) -> bool {
        self != Layout::NONE
    }
}

/// Reads the non-empty (after trimming) lines of a submission's data one at a time, each
/// line's entries in one buffer reused from line to line: the scorers read a line while it
/// is in cache and keep nothing of it but their tallies, so scoring a submission holds one
/// row, not every row.
///
/// One pass: a line that is a flat object between JSON whitespace is scanned where it stands,
/// newline included, which is what trimming it and scanning it would read; any other line is
/// cut at its newline, trimmed (Unicode whitespace, as `str::trim` does) and read alone.
#[derive(Debug)]
pub struct LineReader<'a> {
    data: &'a str,
    /// Where the next line starts.
    at: usize,
    /// The current line's entries from 0; past them, placeholders the scanner writes into.
    entries: Vec<Entry<'a>>,
    /// Slots of the last line the scanner read, the slots it expects next.
    template: Template<'a>,
    /// The layout of lines whose key sequence is `template` (bumped whenever it changes).
    layout: u32,
    /// Whether the buffer holds entries serde_json read, the only ones that can own text.
    owned: bool,
}

impl<'a> LineReader<'a> {
    /// A reader at the start of `data`.
    pub fn new(data: &'a str) -> Self {
        LineReader {
            data,
            at: 0,
            entries: Vec::new(),
            template: Template::default(),
            layout: 0,
            owned: false,
        }
    }

    /// The next non-empty line and its [`Layout`] (borrowed until the next call).
    pub fn next_line(&mut self) -> Option<(Layout, Line<'_, 'a>)> {
        let kind = self.advance()?;
        Some((kind.layout(), kind.view(&self.entries)))
    }

    /// Calls `f` on every remaining line and its [`Layout`].
    pub fn for_each(mut self, mut f: impl FnMut(Layout, &Line<'_, 'a>)) {
        while let Some((layout, line)) = self.next_line() {
            f(layout, &line);
        }
    }

    /// Reads the next non-empty line into the buffer.
    fn advance(&mut self) -> Option<Kind<'a>> {
        if self.owned {
            // The scanner overwrites entries without dropping them: owned text goes first.
            self.entries.clear();
            self.owned = false;
        }
        let data = self.data;
        let b = data.as_bytes();
        while self.at < b.len() {
            let first = skip_ws(b, self.at);
            if b.get(first) == Some(&b'\n') {
                self.at = first + 1;
                continue;
            }
            if b.get(first) == Some(&b'{')
                && let Some((end, after)) = self.scan(data, first)
            {
                let next = skip_ws(b, after);
                if next == b.len() || b[next] == b'\n' {
                    self.at = next + 1;
                    return Some(Kind::Object {
                        start: 0,
                        end,
                        layout: Layout(self.layout),
                    });
                }
                // Not the end of the line: the template says nothing of the layout to come.
                self.new_layout();
            }
            let line_end = data[self.at..].find('\n').map_or(b.len(), |n| self.at + n);
            let text = data[self.at..line_end].trim();
            self.at = line_end + 1;
            if !text.is_empty() {
                return Some(self.read(text));
            }
        }
        None
    }

    /// Reads one trimmed, non-empty line into the buffer.
    fn read(&mut self, text: &'a str) -> Kind<'a> {
        let scanned = match text.as_bytes().first() {
            Some(b'{') => self.scan(text, 0).filter(|&(_, after)| {
                let whole = skip_ws(text.as_bytes(), after) == text.len();
                if !whole {
                    self.new_layout();
                }
                whole
            }),
            _ => None,
        };
        match scanned {
            Some((end, _)) => Kind::Object {
                start: 0,
                end,
                layout: Layout(self.layout),
            },
            None => self.read_slow(text),
        }
    }

    /// The template changed (or may have): later lines share no layout with earlier ones. At
    /// `u32::MAX` (beyond any input below 8 GiB) every later line shares none.
    fn new_layout(&mut self) {
        self.layout = self.layout.saturating_add(1);
    }

    /// [`scan_flat_object`] into the buffer, keeping `layout` the template's: bumped when the
    /// line's key sequence is not the template's (on failure too, as the template may then
    /// hold part of a line that shares no layout).
    #[inline(always)]
    fn scan(&mut self, text: &'a str, from: usize) -> Option<(usize, usize)> {
        let scanned = scan_flat_object(text, from, &mut self.entries, &mut self.template);
        match scanned {
            Some((end, after, true)) => Some((end, after)),
            Some((end, after, false)) => {
                self.new_layout();
                Some((end, after))
            }
            None => {
                self.new_layout();
                // A line that failed part-way may have left a repeated key in the template.
                self.template.unique = false;
                None
            }
        }
    }

    /// A line the scanner leaves to serde_json.
    #[cold]
    #[inline(never)]
    fn read_slow(&mut self, text: &'a str) -> Kind<'a> {
        self.entries.clear();
        // Only text starting with `{` can be an object.
        if text.as_bytes().first() == Some(&b'{')
            && let Ok(LiteObject(entries)) = serde_json::from_str::<LiteObject<'a>>(text)
        {
            self.entries.extend(entries);
            self.owned = true;
            return Kind::Object {
                start: 0,
                end: self.entries.len(),
                layout: Layout::NONE,
            };
        }
        Kind::Other(text)
    }
}

/// Every non-empty line of a submission's data, read by a [`LineReader`] and kept, their
/// entries in one arena: for a caller that needs the lines more than once or out of order.
#[derive(Debug, Clone, Default)]
pub struct Lines<'a> {
    entries: Vec<Entry<'a>>,
    kinds: Vec<Kind<'a>>,
}

impl<'a> Lines<'a> {
    /// Reads and keeps every non-empty line of `data`.
    pub fn parse(data: &'a str) -> Self {
        let mut reader = LineReader::new(data);
        let mut lines = Lines::default();
        while let Some(kind) = reader.advance() {
            lines.keep(&reader, kind);
        }
        lines
    }

    /// Appends the reader's current line.
    fn keep(&mut self, reader: &LineReader<'a>, kind: Kind<'a>) {
        let kind = match kind {
            Kind::Object { start, end, layout } => {
                let at = self.entries.len();
                self.entries.extend_from_slice(&reader.entries[start..end]);
                Kind::Object {
                    start: at,
                    end: self.entries.len(),
                    layout,
                }
            }
            other => other,
        };
        self.kinds.push(kind);
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Whether there are no lines.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Line `i`.
    pub fn get(&self, i: usize) -> Option<Line<'_, 'a>> {
        self.kinds.get(i).map(|k| k.view(&self.entries))
    }

    /// The lines in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Line<'_, 'a>> + '_ {
        self.kinds.iter().map(|k| k.view(&self.entries))
    }

    /// The lines in order, each with its [`Layout`].
    pub fn iter_layouts(&self) -> impl ExactSizeIterator<Item = (Layout, Line<'_, 'a>)> + '_ {
        self.kinds
            .iter()
            .map(|k| (k.layout(), k.view(&self.entries)))
    }
}

/// Reads and keeps every non-empty line of a submission's data.
pub fn parse_lines(data: &str) -> Lines<'_> {
    Lines::parse(data)
}

/// Objects with more entries than this index their keys in a hash map, so a line with
/// thousands of keys costs linear time, not quadratic.
const INDEX_AFTER: usize = 32;

/// Adds the entries of one object, merging a repeated key into its first position with the
/// last value, as Python's `json.loads` does. Entries are written into slots of `entries`
/// (grown in steps with placeholders, cut back by `finish`): an entry handed to `Vec::push`
/// by reference is copied through the stack with store-forwarding stalls that cost more than
/// scanning the line.
struct ObjectBuilder {
    /// The object's entries are `entries[..used]`.
    used: usize,
    /// A 64-bit signature of the keys seen (length and first byte): rules out a repeat
    /// without comparing strings in the common case.
    seen: u64,
    /// Positions by key, once the object is large.
    index: Option<KeyIndex>,
    /// Whether a key was repeated (merged into its first position).
    repeated: bool,
}

/// Positions of an object's keys by their SipHash (see [`crate::Sip`]): keys are never copied;
/// keys with equal hashes are chained and told apart by comparing them.
struct KeyIndex {
    /// Hash → the last position holding a key with that hash.
    heads: rustc_hash::FxHashMap<u64, usize>,
    /// Position → the previous position with the same hash.
    chain: Vec<Option<usize>>,
}

fn sip(key: &str) -> u64 {
    use std::hash::BuildHasher;
    crate::Sip::default().hash_one(key)
}

impl KeyIndex {
    /// The index of `entries`, whose keys are distinct.
    fn new(entries: &[Entry<'_>]) -> Self {
        let mut index = KeyIndex {
            // Keyed by SipHash values (see `crate::Sip`): Fx over them adds no weakness.
            heads: rustc_hash::FxHashMap::default(),
            chain: Vec::new(),
        };
        for (k, _) in entries {
            index.add(sip(k));
        }
        index
    }

    /// The position of `key` among the indexed entries (or `None`), and its hash.
    fn find(&self, entries: &[Entry<'_>], key: &str) -> (Option<usize>, u64) {
        let hash = sip(key);
        let mut at = self.heads.get(&hash).copied();
        while let Some(pos) = at {
            if same(&entries[pos].0, key) {
                return (Some(pos), hash);
            }
            at = self.chain[pos];
        }
        (None, hash)
    }

    /// Indexes the next position (the number indexed so far).
    fn add(&mut self, hash: u64) {
        let pos = self.chain.len();
        let previous = self.heads.insert(hash, pos);
        self.chain.push(previous);
    }
}

/// A key's bit in [`ObjectBuilder::seen`], from its length and first byte.
#[inline(always)]
fn signature(key: &str) -> u64 {
    let first = usize::from(key.as_bytes().first().copied().unwrap_or(0));
    1u64 << ((key.len() * 7 + first) & 63)
}

/// What unused slots hold.
const PLACEHOLDER: Entry<'static> = (Cow::Borrowed(""), LiteValue::Null);

impl ObjectBuilder {
    /// An object whose entries start at `entries[0]`.
    fn new() -> Self {
        ObjectBuilder {
            used: 0,
            seen: 0,
            index: None,
            repeated: false,
        }
    }

    /// Adds `key: value`. A key whose signature bit is new is new: the common case costs a
    /// few instructions and a store.
    #[inline(always)]
    fn insert<'a>(
        &mut self,
        entries: &mut Vec<Entry<'a>>,
        key: Cow<'a, str>,
        value: LiteValue<'a>,
    ) {
        let bit = signature(&key);
        if self.index.is_none() && self.seen & bit == 0 && self.used < INDEX_AFTER {
            self.seen |= bit;
            self.put(entries, key, value);
        } else {
            self.insert_slow(entries, key, value, bit);
        }
    }

    #[inline(always)]
    fn put<'a>(&mut self, entries: &mut Vec<Entry<'a>>, key: Cow<'a, str>, value: LiteValue<'a>) {
        if self.used == entries.len() {
            grow(entries, self.used + 1);
        }
        // Slots past an object's end hold placeholders or what a scan that failed wrote, all
        // borrowed: nothing to drop, so the old entry is not read back to check.
        std::mem::forget(std::mem::replace(&mut entries[self.used], (key, value)));
        self.used += 1;
    }

    #[cold]
    #[inline(never)]
    fn insert_slow<'a>(
        &mut self,
        entries: &mut Vec<Entry<'a>>,
        key: Cow<'a, str>,
        value: LiteValue<'a>,
        bit: u64,
    ) {
        if self.index.is_none() && self.used >= INDEX_AFTER {
            self.index = Some(KeyIndex::new(&entries[..self.used]));
        }
        if let Some(index) = &self.index {
            match index.find(entries, &key) {
                (Some(at), _) => {
                    entries[at].1 = value;
                    self.repeated = true;
                }
                (None, hash) => {
                    self.put(entries, key, value);
                    if let Some(index) = &mut self.index {
                        index.add(hash);
                    }
                }
            }
            return;
        }
        let repeat = if self.seen & bit != 0 {
            entries[..self.used].iter().position(|(k, _)| *k == key)
        } else {
            None
        };
        self.seen |= bit;
        match repeat {
            Some(at) => {
                entries[at].1 = value;
                self.repeated = true;
            }
            None => self.put(entries, key, value),
        }
    }

    /// Signs the keys added by [`ObjectBuilder::put`] alone (which leaves `seen` as it was),
    /// so that `insert` finds a repeat of them.
    fn sign_all(&mut self, entries: &[Entry<'_>]) {
        for (key, _) in &entries[..self.used] {
            self.seen |= signature(key);
        }
    }

    /// Counts `n` entries written in place (by a line that follows a template of distinct keys).
    fn wrote(&mut self, n: usize) {
        self.used = n;
    }

    /// Where the object's entries end (`entries[..end]`; later slots are placeholders).
    fn finish(self) -> usize {
        self.used
    }
}

#[cold]
#[inline(never)]
fn grow(entries: &mut Vec<Entry<'_>>, at_least: usize) {
    // Constant placeholders, no clone: 64 at a time, a few rows' worth.
    entries.resize_with(at_least.max(entries.len() + 64), || PLACEHOLDER);
}

/// JSON whitespace within a line, as serde_json skips it: a line holds no newline, so a
/// newline here ends the line (and, inside an object, the fast path).
#[inline(always)]
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

/// The first byte at or after `j` that ends a plain string: a quote, a backslash or a control
/// character (or `b.len()`). Eight bytes at a time: a byte of `w` is flagged when it equals
/// `"`, equals `\`, or is below 0x20; the lowest flagged byte is always a true match.
#[inline(always)]
fn string_end(b: &[u8], mut j: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    while let Some(chunk) = b.get(j..j + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let flagged = zero(w ^ (ONES * u64::from(b'"')))
            | zero(w ^ (ONES * u64::from(b'\\')))
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGH);
        if flagged != 0 {
            return j + (flagged.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    while let Some(&c) = b.get(j)
        && c != b'"'
        && c != b'\\'
        && c >= 0x20
    {
        j += 1;
    }
    j
}

/// A string at `i` (its opening quote) without escapes or control characters: the text
/// between the quotes and the index after the closing one.
#[inline(always)]
fn plain_str(text: &str, i: usize) -> Option<(&str, usize)> {
    let b = text.as_bytes();
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let start = i + 1;
    let end = string_end(b, start);
    // The end of the text, a backslash or a control character is left to serde_json.
    if b.get(end) != Some(&b'"') {
        return None;
    }
    // A quote is ASCII, so `end` is a char boundary.
    Some((text.get(start..end)?, end + 1))
}

/// An integer at `i` that serde_json reads as an integer (`u64` or negative `i64`): at most
/// 18 digits, no fraction or exponent, and not `-0` (which serde_json reads as a float).
#[inline(always)]
fn plain_int(b: &[u8], i: usize) -> Option<(i64, usize)> {
    let negative = b.get(i) == Some(&b'-');
    let from = i + usize::from(negative);
    let mut end = from;
    let mut n: i64 = 0;
    while let Some(&d) = b.get(end)
        && d.is_ascii_digit()
    {
        if end - from == 18 {
            return None;
        }
        n = n * 10 + i64::from(d - b'0');
        end += 1;
    }
    let digits = end - from;
    if digits == 0 || (b[from] == b'0' && (digits > 1 || negative)) {
        return None;
    }
    if let Some(b'.' | b'e' | b'E') = b.get(end) {
        return None;
    }
    Some((if negative { -n } else { n }, end))
}

/// A value the scanner reads at `i` (a plain string, `true`, `false`, `null` or a plain
/// integer) and the index after it.
#[inline(always)]
fn plain_value(text: &str, i: usize) -> Option<(LiteValue<'_>, usize)> {
    let b = text.as_bytes();
    match b.get(i) {
        Some(b'"') => {
            plain_str(text, i).map(|(s, after)| (LiteValue::Str(Cow::Borrowed(s)), after))
        }
        Some(b't') if b[i..].starts_with(b"true") => Some((LiteValue::Bool(true), i + 4)),
        Some(b'f') if b[i..].starts_with(b"false") => Some((LiteValue::Bool(false), i + 5)),
        Some(b'n') if b[i..].starts_with(b"null") => Some((LiteValue::Null, i + 4)),
        Some(b'-' | b'0'..=b'9') => plain_int(b, i).map(|(n, after)| (LiteValue::Int(n), after)),
        _ => None,
    }
}

/// The slots of the last line the scanner read, the slots it expects next.
#[derive(Debug, Clone, Default)]
struct Template<'a> {
    slots: Vec<Slot<'a>>,
    /// Whether the slots' keys are distinct: a line that follows them then holds no repeated
    /// key among them, and its entries are written without a check for one.
    unique: bool,
}

/// One position of the scanner's template: the text from the end of the previous value (or
/// from the `{`) to the start of this value — separator, key, colon and whitespace — and the
/// key it holds.
#[derive(Debug, Clone, Copy)]
struct Slot<'a> {
    gap: &'a [u8],
    key: &'a str,
}

/// Reads the flat object (see the module doc) at `text[from]` into `entries` from
/// `entries[0]`: where its entries end, the index after its `}`, and whether its key
/// sequence was `template`'s. `None` means "not this fast path" — serde_json decides.
/// `template` holds the slots of the last line read here, and is updated to this line's.
///
/// Rows of one submission share their separators and keys, so while the text matches the
/// template a whole `, "key": ` gap is checked as one byte comparison: the same bytes read
/// the same way, and a gap is always followed by the byte that ended it before (a value's
/// first byte, never whitespace), or the value read after it fails and serde_json decides.
#[inline(never)]
fn scan_flat_object<'a>(
    text: &'a str,
    from: usize,
    entries: &mut Vec<Entry<'a>>,
    template: &mut Template<'a>,
) -> Option<(usize, usize, bool)> {
    let b = text.as_bytes();
    let mut object = ObjectBuilder::new();
    if b.get(from) != Some(&b'{') {
        return None;
    }
    // Slots of the template this line has followed so far.
    let mut j = 0;
    // Where the current gap starts: the `{`, then the end of each value.
    let mut gap_start = from;
    let mut i = skip_ws(b, from + 1);
    if b.get(i) == Some(&b'}') {
        let matched = template.slots.is_empty();
        template.slots.clear();
        template.unique = true;
        return Some((object.finish(), i + 1, matched));
    }
    // While the line follows the template: each slot is one gap comparison and one value.
    let n = template.slots.len();
    if template.unique {
        // Distinct keys: slot `j`'s entry is the object's `j`-th, written in place, with room
        // for every slot made once (no repeat check, no growth check a slot).
        if entries.len() < n {
            grow(entries, n);
        }
        for (slot, entry) in template.slots.iter().zip(&mut entries[..n]) {
            let Some((value, after)) = follow(text, gap_start, slot)? else {
                break;
            };
            // The old entry is a borrowed placeholder or a failed scan's: nothing to drop.
            std::mem::forget(std::mem::replace(entry, (Cow::Borrowed(slot.key), value)));
            j += 1;
            gap_start = after;
        }
        object.wrote(j);
        if j > 0 {
            i = gap_start;
        }
        if j == n && n > 0 {
            match template_end(b, i)? {
                Ok(after) => return Some((object.finish(), after, true)),
                Err(key) => i = key,
            }
        }
    }
    // A template that may repeat a key: each entry goes through the repeat check. (A loop
    // beside the one above, not in an `else`: so laid out, `f1_t2` counts 1.5% fewer
    // instructions.)
    while let Some(slot) = template.slots.get(j).filter(|_| !template.unique) {
        let Some((value, after)) = follow(text, gap_start, slot)? else {
            break;
        };
        object.insert(entries, Cow::Borrowed(slot.key), value);
        j += 1;
        i = after;
        gap_start = after;
        // Before the template's last slot the separator belongs to the next gap.
        if j == n {
            match template_end(b, i)? {
                Ok(after) => return Some((object.finish(), after, true)),
                Err(key) => i = key,
            }
        }
    }
    // The line differs from the template at slot `j` (or has more slots): the template keeps
    // the slots the line followed and takes this line's from here on.
    template.slots.truncate(j);
    if template.unique {
        object.sign_all(entries);
    }
    scan_rest(text, i, gap_start, entries, object, template)
}

/// What follows the template's last value at `i`: `Ok` with the index after the object's `}`
/// (the line ends where the template did), `Err` with the index of the next key after a `,`
/// (the line has more slots), `None` for anything else.
#[inline(always)]
fn template_end(b: &[u8], i: usize) -> Option<Result<usize, usize>> {
    let i = skip_ws(b, i);
    match b.get(i) {
        Some(b'}') => Some(Ok(i + 1)),
        Some(b',') => Some(Err(skip_ws(b, i + 1))),
        _ => None,
    }
}

/// The line at `gap_start` following `slot`: its value and the index after it; `Some(None)`
/// where the line leaves the template here (another gap, or whitespace before the value); `None`
/// where the value is not one the scanner reads.
///
/// A gap ending in `"key":` is also the start of `"key": 1`, so the prediction holds only when
/// the value follows at once: a line spaced differently from the template is read by
/// [`scan_rest`] (which rewrites the template) instead of failing at the whitespace and going
/// to serde_json.
#[inline(always)]
fn follow<'a>(
    text: &'a str,
    gap_start: usize,
    slot: &Slot<'a>,
) -> Option<Option<(LiteValue<'a>, usize)>> {
    let b = text.as_bytes();
    let value_at = gap_start + slot.gap.len();
    match b.get(gap_start..value_at) {
        Some(got)
            if same_bytes(got, slot.gap)
                && !matches!(b.get(value_at), Some(b' ' | b'\t' | b'\r')) => {}
        _ => return Some(None),
    }
    plain_value(text, value_at).map(Some)
}

/// The rest of [`scan_flat_object`] once the line has left its template (the first line of a
/// submission, or a line whose keys or spacing change): every key is read and its slot
/// appended to `template`. `i` stands past a `{` or `,` at a key, or at `gap_start` right
/// after a value whose separator is still to be read.
#[cold]
#[inline(never)]
fn scan_rest<'a>(
    text: &'a str,
    mut i: usize,
    mut gap_start: usize,
    entries: &mut Vec<Entry<'a>>,
    mut object: ObjectBuilder,
    template: &mut Template<'a>,
) -> Option<(usize, usize, bool)> {
    let b = text.as_bytes();
    if i == gap_start {
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            // Fewer keys than the template.
            Some(b'}') => return Some(finish_line(object, template, i + 1)),
            _ => return None,
        }
    }
    loop {
        // `i` stands at the key (after `{` or `,` and whitespace).
        let (key, after) = plain_str(text, i)?;
        i = skip_ws(b, after);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        template.slots.push(Slot {
            gap: b.get(gap_start..i)?,
            key,
        });
        let (value, after) = plain_value(text, i)?;
        i = after;
        object.insert(entries, Cow::Borrowed(key), value);
        gap_start = i;
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => return Some(finish_line(object, template, i + 1)),
            _ => return None,
        }
    }
}

/// The end of a line [`scan_rest`] read: the template now holds exactly its key sequence.
fn finish_line(
    object: ObjectBuilder,
    template: &mut Template<'_>,
    after: usize,
) -> (usize, usize, bool) {
    template.unique = !object.repeated;
    (object.finish(), after, false)
}

struct LiteObject<'a>(Vec<Entry<'a>>);

impl<'de> Deserialize<'de> for LiteObject<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LiteObject<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries: Vec<Entry<'de>> = Vec::with_capacity(12);
                let mut object = ObjectBuilder::new();
                while let Some(CowStr(key)) = map.next_key::<CowStr<'de>>()? {
                    let value = map.next_value::<LiteValueDe<'de>>()?.0;
                    object.insert(&mut entries, key, value);
                }
                let end = object.finish();
                entries.truncate(end);
                Ok(LiteObject(entries))
            }
        }
        d.deserialize_map(V)
    }
}

/// A string that borrows from the input when it holds no escapes (serde's own `Cow<str>`
/// always allocates).
struct CowStr<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for CowStr<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CowStr<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(CowStr(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(CowStr(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(CowStr(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

struct LiteValueDe<'a>(LiteValue<'a>);

impl<'de> Deserialize<'de> for LiteValueDe<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LiteValueDe<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(LiteValueDe(LiteValue::Null))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(LiteValueDe(LiteValue::Bool(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(LiteValueDe(LiteValue::Int(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(LiteValueDe(match i64::try_from(v) {
                    Ok(i) => LiteValue::Int(i),
                    Err(_) => LiteValue::UInt(v),
                }))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(LiteValueDe(LiteValue::Float(v)))
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(LiteValueDe(LiteValue::Str(Cow::Borrowed(v))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(LiteValueDe(LiteValue::Str(Cow::Owned(v.to_owned()))))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(LiteValueDe(LiteValue::Str(Cow::Owned(v))))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(LiteValueDe(LiteValue::List))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LiteValueDe(LiteValue::Dict))
            }
        }
        d.deserialize_any(V)
    }
}

impl Lines<'_> {
    /// The same lines with no layout shared, so a scorer works every row's key positions out
    /// afresh: what layout sharing must not change is tested against this.
    #[cfg(test)]
    pub(crate) fn unshared(mut self) -> Self {
        for kind in &mut self.kinds {
            if let Kind::Object { layout, .. } = kind {
                *layout = Layout::NONE;
            }
        }
        self
    }
}

/// The reference reading of one line: serde_json alone, as before the scanner existed. The
/// property tests hold the scanner to it.
#[cfg(test)]
fn serde_only(text: &str) -> Result<Vec<Entry<'_>>, bool> {
    match serde_json::from_str::<LiteObject<'_>>(text) {
        Ok(LiteObject(entries)) => Ok(entries),
        Err(_) => Err(serde_json::from_str::<IgnoredAny>(text).is_ok()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One trimmed line read alone (newlines inside it included).
    fn one(text: &str) -> Lines<'_> {
        let mut reader = LineReader::new("");
        let kind = reader.read(text);
        let mut lines = Lines::default();
        lines.keep(&reader, kind);
        lines
    }

    #[test]
    fn kinds_and_types() {
        let text = r#"{"a": 1, "b": 1.0, "c": "x\"y", "d": [1], "e": {"k": 2}, "f": null, "g": true, "a": 2}"#;
        let lines = one(text);
        let line = lines.get(0).expect("one line");
        assert_eq!(line.get("a"), Some(&LiteValue::Int(2)));
        assert_eq!(line.get("b").map(LiteValue::type_name), Some("float"));
        assert_eq!(line.get("c").and_then(LiteValue::as_str), Some("x\"y"));
        assert_eq!(line.get("d"), Some(&LiteValue::List));
        assert_eq!(line.get("e"), Some(&LiteValue::Dict));
        assert_eq!(line.get("f"), Some(&LiteValue::Null));
        assert_eq!(line.entries().len(), 7);
        assert_eq!(line.entries()[0].0, "a");
        for (text, json) in [
            ("[1, 2]", true),
            ("5", true),
            ("{nope", false),
            ("{} {}", false),
        ] {
            let lines = one(text);
            let line = lines.get(0).expect("one line");
            assert_eq!((line, line.is_json()), (Line::Other(text), json));
        }
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(LiteValue::Float(5.0).equals_uint(5));
        assert!(LiteValue::Int(5).equals_uint(5));
        assert!(!LiteValue::Bool(true).equals_uint(1));
        assert!(LiteValue::Float(-3.0).equals_int(-3));
    }

    /// Each line read by the arena equals serde_json's reading of it alone.
    fn agrees_with_serde(text: &str) {
        let lines = one(text);
        let got = lines.get(0).expect("one line");
        match serde_only(text) {
            Ok(entries) => assert_eq!(got, Line::Object(&entries), "{text:?}"),
            Err(json) => assert_eq!((got, got.is_json()), (Line::Other(text), json), "{text:?}"),
        }
    }

    /// Rows written alike are read by the scanner's template loop and share one layout, whether
    /// the template's keys are distinct or repeat (the scorers' per-layout work relies on it; a
    /// slip that sends such rows to serde_json changes no reading, only this).
    #[test]
    fn rows_written_alike_share_one_layout() {
        for data in [
            "{\"a\":1,\"b\":\"x\"}\n{\"a\":2,\"b\":\"y\"}\n{\"a\":3,\"b\":\"z\"}",
            "{\"a\":1,\"a\":2}\n{\"a\":3,\"a\":4}\n{\"a\":5,\"a\":6}",
            "{\"a\": 1, \"b\": null}\n{\"a\": 2, \"b\": true}",
        ] {
            let layouts: Vec<Layout> = Lines::parse(data).iter_layouts().map(|(l, _)| l).collect();
            assert!(
                layouts.iter().all(|l| l.is_shared() && *l == layouts[0]),
                "{data:?}: {layouts:?}"
            );
        }
    }

    /// Integers of every length up to 20 digits, with and without sign and leading zeros, each
    /// followed by every kind of byte that may end it (or by the end of the text), read as
    /// serde_json reads them (up to 18 digits the scanner's, beyond that serde_json's).
    #[test]
    fn integers_of_every_length_agree_with_serde() {
        let mut numbers = vec!["0".to_string(), "00".to_string(), "07".to_string()];
        for len in 1..=20u32 {
            let all_nines = "9".repeat(len as usize);
            let one_then_zeros = format!("1{}", "0".repeat(len as usize - 1));
            let mixed: String = (0..len)
                .map(|d| char::from(b'1' + (d * 7 % 9) as u8))
                .collect();
            numbers.extend([all_nines, one_then_zeros, mixed]);
        }
        for number in &numbers {
            for sign in ["", "-"] {
                for end in [
                    "}",
                    ",\"b\":1}",
                    " }",
                    ".5}",
                    "e2}",
                    "E2}",
                    "x}",
                    ":}",
                    "/}",
                    "é}",
                    "\u{ff}}",
                ] {
                    agrees_with_serde(&format!("{{\"a\":{sign}{number}{end}"));
                }
                // The number last in the text (no closing brace), and the object followed by
                // trailing whitespace.
                agrees_with_serde(&format!("{{\"a\":{sign}{number}"));
                agrees_with_serde(&format!("{{\"a\":{sign}{number}}}        "));
            }
        }
    }

    #[test]
    fn scanner_edge_cases_agree_with_serde() {
        for text in [
            "{}",
            "{ }",
            "{\"a\":1}",
            "{\"a\" : 1 , \"b\" :\t\"x\" }",
            "{\"a\":-0}",
            "{\"a\":0}",
            "{\"a\":00}",
            "{\"a\":-}",
            "{\"a\":01}",
            "{\"a\":1.5}",
            "{\"a\":1e3}",
            "{\"a\":1E3}",
            "{\"a\":123456789012345678}",
            "{\"a\":1234567890123456789}",
            "{\"a\":-1234567890123456789}",
            "{\"a\":18446744073709551615}",
            "{\"a\":18446744073709551616}",
            "{\"a\":1e400}",
            "{\"a\":tru}",
            "{\"a\":truex}",
            "{\"a\":true,}",
            "{\"a\":nul}",
            "{\"a\":\"x\ty\"}",
            "{\"a\":\"\\u00e9\"}",
            "{\"\\u0061\":1,\"a\":2}",
            "{\"a\":1,\"a\":\"two\",\"b\":3}",
            "{\"a\":1}x",
            "{\"a\":1}}",
            "{\"a\" 1}",
            "{1:1}",
            "{\"a\":[1,{\"b\":2}],\"c\":{}}",
            "{\"é\":\"ü\"}",
            "{\"a\":\"unterminated}",
            "{\"a\":1",
            "{",
            "{,}",
            "{\"a\":1,}",
        ] {
            agrees_with_serde(text);
        }
    }

    #[test]
    fn wide_lines_merge_repeats_in_linear_time() {
        let mut text = String::from("{");
        for i in 0..5000 {
            text.push_str(&format!("\"k{i}\":{i},"));
        }
        text.push_str("\"k7\":\"last\"}");
        let lines = one(&text);
        let line = lines.get(0).expect("one line");
        assert_eq!(line.entries().len(), 5000);
        assert_eq!(line.entries()[7].1, LiteValue::Str(Cow::Borrowed("last")));
        agrees_with_serde(&text);
        // The same through serde_json's path (an escape sends the line there).
        let escaped = text.replacen("\"k0\"", "\"k\\u0030\"", 1);
        agrees_with_serde(&escaped);
        assert_eq!(
            one(&escaped).get(0).expect("one line").entries().len(),
            5000
        );
    }

    fn arb_token() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("{".to_string()),
            Just("}".to_string()),
            Just(",".to_string()),
            Just(":".to_string()),
            Just(" ".to_string()),
            Just("\t".to_string()),
            Just("\"".to_string()),
            Just("\\".to_string()),
            Just("true".to_string()),
            Just("null".to_string()),
            Just("-".to_string()),
            Just(".".to_string()),
            Just("e".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            "[0-9]{1,20}",
            "\"[a-zA-Z_é]{0,4}\"",
            "\"[a-z\\\\\"]{0,3}\"",
        ]
    }

    /// Every line of `data` read by `Lines::parse` equals serde_json's reading of the trimmed
    /// line alone (the one-pass scan must cut and trim lines exactly as split + trim does).
    fn parse_agrees_with_serde(data: &str) {
        let lines = Lines::parse(data);
        let texts: Vec<&str> = data
            .split('\n')
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(lines.len(), texts.len(), "{data:?}");
        // Lines sharing a layout have the same keys at the same positions.
        let shared: Vec<(Layout, Vec<&str>)> = lines
            .iter_layouts()
            .filter(|(layout, _)| layout.is_shared())
            .map(|(layout, line)| {
                (
                    layout,
                    line.entries().iter().map(|(k, _)| k.as_ref()).collect(),
                )
            })
            .collect();
        for (layout, keys) in &shared {
            for (other, other_keys) in &shared {
                if layout == other {
                    assert_eq!(keys, other_keys, "{data:?}");
                }
            }
        }
        for (got, text) in lines.iter().zip(&texts) {
            match serde_only(text) {
                Ok(entries) => assert_eq!(got, Line::Object(&entries), "{text:?} in {data:?}"),
                Err(json) => assert_eq!(
                    (got, got.is_json()),
                    (Line::Other(text), json),
                    "{text:?} in {data:?}"
                ),
            }
        }
    }

    #[test]
    fn one_pass_cuts_lines_as_split_and_trim_do() {
        parse_agrees_with_serde("");
        parse_agrees_with_serde("\n\n \t\r\n");
        parse_agrees_with_serde(
            "{\"a\":1}\n{\"a\":2,\"b\":[1]}\r\n  {\"b\":3} \t\n{\"a\":1,\n\"b\":2}\n",
        );
        parse_agrees_with_serde(
            "{\"a\":1}\u{a0}\n\u{2028}{\"a\":1}\n{\"a\":1} x\n{\"a\":\"x\ny\"}",
        );
        parse_agrees_with_serde(
            "{\"k\":1}\n{\"k\":\"s\",\"j\":2}\n{\"j\":3,\"k\":4}\n{\"k\":5}\n{}\n{\"k\":6}",
        );
        // A line that follows a template of distinct keys, then goes on to repeat one of them;
        // a template with a repeated key, followed, and followed in part.
        parse_agrees_with_serde(
            "{\"a\":1,\"b\":2}\n{\"a\":1,\"b\":2,\"a\":3}\n{\"a\":1,\"b\":2,\"a\":3}\n{\"a\":4}\n{\"a\":5,\"a\":6}",
        );
    }

    proptest! {
        /// Lines of objects, token soup and whitespace joined by newlines.
        #[test]
        fn one_pass_parse_agrees_with_serde(
            lines in proptest::collection::vec(prop_oneof![
                proptest::collection::vec(arb_token(), 0..10).prop_map(|t| format!("{{{}", t.concat())),
                ("[ \t\r]{0,2}", "[a-c]{1,2}", 0u32..100, "[ \t\r\u{a0}]{0,2}")
                    .prop_map(|(l, k, v, r)| format!("{l}{{\"{k}\":{v},\"x\":\"{k}\"}}{r}")),
                Just(String::new()),
                "[ \t\u{a0}]{1,3}",
            ], 0..8),
        ) {
            parse_agrees_with_serde(&lines.join("\n"));
        }

        /// Rows whose keys come from a pool of three, so rows share, extend and cut each other's
        /// key sequences and repeat keys within a row, and some rows leave the scanner part-way:
        /// a repeat is merged wherever it falls.
        #[test]
        fn repeated_keys_across_layouts_agree_with_serde(
            rows in proptest::collection::vec(
                proptest::collection::vec((0usize..3, 0usize..4), 0..6),
                1..10,
            ),
        ) {
            // The last two values are not the scanner's: a line fails part-way into serde_json.
            let values = ["0", "1", "[1]", "1.5"];
            let data: Vec<String> = rows
                .iter()
                .map(|row| {
                    let body: Vec<String> = row
                        .iter()
                        .map(|(k, v)| format!("\"{}\":{}", ["a", "b", "c"][*k], values[*v]))
                        .collect();
                    format!("{{{}}}", body.join(","))
                })
                .collect();
            parse_agrees_with_serde(&data.join("\n"));
        }

        /// Rows sharing a layout whose values repeat, grow, shrink or change kind from row to
        /// row: the key predictions must never change what a row reads as.
        #[test]
        fn repeating_layouts_agree_with_serde(
            rows in proptest::collection::vec(
                (
                    proptest::collection::vec(prop_oneof![
                        Just("2022".to_string()),
                        Just("20221".to_string()),
                        Just("202".to_string()),
                        Just("2022.5".to_string()),
                        Just("2022e1".to_string()),
                        Just("-2022".to_string()),
                        Just("\"276\"".to_string()),
                        Just("\"2765\"".to_string()),
                        Just("\"27\\u0036\"".to_string()),
                        Just("true".to_string()),
                        Just("truex".to_string()),
                        Just("null".to_string()),
                        Just("[1]".to_string()),
                    ], 3),
                    prop_oneof![Just(":"), Just(": "), Just(" :"), Just(":  ")],
                    prop_oneof![Just(","), Just(", "), Just(" ,")],
                ),
                1..12,
            ),
        ) {
            let keys = ["year", "reporter", "qty"];
            let data: Vec<String> = rows
                .iter()
                .map(|(values, colon, comma)| {
                    let body: Vec<String> = keys
                        .iter()
                        .zip(values)
                        .map(|(k, v)| format!("\"{k}\"{colon}{v}"))
                        .collect();
                    format!("{{{}}}", body.join(comma))
                })
                .collect();
            parse_agrees_with_serde(&data.join("\n"));
        }

        /// Well-formed flat objects, with every kind of value the scanner reads and the
        /// spacing Python's json.dumps and serde_json write.
        #[test]
        fn flat_objects_agree_with_serde(
            entries in proptest::collection::vec(("[a-z]{0,3}", prop_oneof![
                any::<i64>().prop_map(|n| n.to_string()),
                any::<u64>().prop_map(|n| n.to_string()),
                "[a-z ]{0,5}".prop_map(|s| format!("\"{s}\"")),
                Just("true".to_string()),
                Just("false".to_string()),
                Just("null".to_string()),
                any::<f64>().prop_map(|f| f.to_string()),
            ]), 0..12),
            spaced in any::<bool>(),
        ) {
            let (colon, comma) = if spaced { (": ", ", ") } else { (":", ",") };
            let body: Vec<String> = entries.iter().map(|(k, v)| format!("\"{k}\"{colon}{v}")).collect();
            agrees_with_serde(&format!("{{{}}}", body.join(comma)));
        }

        /// Short integers, with leading zeros and a sign, followed by any byte.
        #[test]
        fn short_integers_agree_with_serde(
            n in 0u64..100_000_000,
            negative in any::<bool>(),
            zeros in 0usize..3,
            after in any::<char>(),
            tail in "[ -~]{0,9}",
        ) {
            let sign = if negative { "-" } else { "" };
            let zeros = "0".repeat(zeros);
            agrees_with_serde(&format!("{{\"a\":{sign}{zeros}{n}{after}{tail}"));
            agrees_with_serde(&format!("{{\"a\":{sign}{zeros}{n},\"b\":{n}}}"));
        }

        /// Arbitrary token soup starting with `{`: whatever serde_json decides, the arena
        /// decides the same.
        #[test]
        fn token_soup_agrees_with_serde(tokens in proptest::collection::vec(arb_token(), 0..16)) {
            agrees_with_serde(&format!("{{{}", tokens.concat()));
        }
    }
}
