//! The numbers and strings of a JSON document, and the rounding rules a prose number is
//! accepted by.

use std::collections::HashSet;

use serde_json::Value;

use super::scan::trim_token;
use super::{NumberKind, ProseNumber};

/// Relative slack of every comparison, for binary floating point.
const RELATIVE_SLACK: f64 = 1e-9;

/// The numbers and strings of a JSON document, prepared for matching.
pub(super) struct JsonIndex {
    /// Finite numbers, sorted.
    pub(super) numbers: Vec<f64>,
    /// Whole strings and their whitespace-separated, trimmed pieces.
    pub(super) strings: HashSet<String>,
    /// Every string at least [`super::QUOTED_PIECE_MIN`] characters long, for quoted pieces.
    long: Vec<String>,
    /// Every shorter string whole (an id quoted in a code span must be one).
    short: HashSet<String>,
}

impl JsonIndex {
    pub(super) fn new(value: &Value) -> Self {
        let mut numbers = Vec::new();
        let mut strings = HashSet::new();
        let mut long = Vec::new();
        let mut short = HashSet::new();
        let mut stack = vec![value];
        while let Some(v) = stack.pop() {
            match v {
                Value::Number(n) => {
                    if let Some(x) = n.as_f64().filter(|x| x.is_finite()) {
                        numbers.push(x);
                    }
                }
                Value::String(s) => {
                    if s.chars().count() >= super::QUOTED_PIECE_MIN {
                        long.push(s.clone());
                    } else {
                        short.insert(s.clone());
                    }
                    strings.insert(s.clone());
                    for piece in s.split_whitespace() {
                        strings.insert(trim_token(piece).to_string());
                    }
                }
                Value::Array(items) => stack.extend(items.iter()),
                Value::Object(map) => stack.extend(map.values()),
                Value::Null | Value::Bool(_) => {}
            }
        }
        numbers.sort_by(f64::total_cmp);
        numbers.dedup();
        long.sort();
        long.dedup();
        Self {
            numbers,
            strings,
            long,
            short,
        }
    }

    /// Whether `text` is a whole JSON string.
    pub(super) fn is_whole_string(&self, text: &str) -> bool {
        self.short.contains(text) || self.long.binary_search_by(|s| s.as_str().cmp(text)).is_ok()
    }

    /// Whether `piece` occurs inside some long JSON string.
    pub(super) fn contains_piece(&self, piece: &str) -> bool {
        self.long.iter().any(|s| s.contains(piece))
    }

    /// The index of one number: what a figure tagged with the path of `x` is checked against.
    pub(super) fn of_number(x: f64) -> Self {
        Self {
            numbers: if x.is_finite() { vec![x] } else { Vec::new() },
            strings: HashSet::new(),
            long: Vec::new(),
            short: HashSet::new(),
        }
    }

    /// Whether some JSON number lies in `[lo, hi]`, optionally requiring it to be integral.
    fn any_in(&self, lo: f64, hi: f64, integral: bool) -> bool {
        let start = self.numbers.partition_point(|&x| x < lo);
        self.numbers[start..]
            .iter()
            .take_while(|&&x| x <= hi)
            .any(|&x| !integral || x.fract() == 0.0)
    }

    fn rounds_to(&self, p: f64, unit: f64, scale: f64) -> bool {
        let half = 0.5 * unit * (1.0 + RELATIVE_SLACK) + 4.0 * f64::EPSILON * p.abs();
        self.any_in((p - half) / scale, (p + half) / scale, false)
    }

    pub(super) fn accepts(&self, n: &ProseNumber) -> bool {
        let Some(p) = n.value.filter(|p| p.is_finite()) else {
            return matches!(n.kind, NumberKind::Date | NumberKind::Version)
                && self.strings.contains(&n.text);
        };
        match n.kind {
            NumberKind::Integer => self.any_in(p, p, true),
            NumberKind::Decimal | NumberKind::Scientific => self.rounds_to(p, n.unit, 1.0),
            NumberKind::Percent => {
                let as_fraction = self.rounds_to(p, n.unit, 100.0);
                let in_percent_units = if n.unit >= 1.0 && p.fract() == 0.0 {
                    self.any_in(p, p, true)
                } else {
                    self.rounds_to(p, n.unit, 1.0)
                };
                as_fraction || in_percent_units
            }
            NumberKind::Date | NumberKind::Version => false,
        }
    }
}

/// The JSON value at a tagged path, as far as a figure can be checked against it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum AtPath {
    /// A number (as `f64`).
    Number(f64),
    /// A string.
    String(String),
    /// Anything else: no figure is accepted there.
    Other,
}

impl AtPath {
    /// Whether this value accounts for `n` (the rules of `at_path` in the module).
    pub(super) fn accepts(&self, n: &ProseNumber) -> bool {
        match self {
            AtPath::Number(x) => JsonIndex::of_number(*x).accepts(n),
            AtPath::String(s) => *s == n.text,
            AtPath::Other => false,
        }
    }
}

/// `token` as a JSON pointer reference token (RFC 6901: `~` → `~0`, `/` → `~1`).
fn escape_token(token: &str, out: &mut String) {
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

/// A pointer in the one spelling [`JsonIndex::read`] builds its paths in: each token
/// unescaped as `serde_json::Value::pointer` reads it, then escaped again. `None` for a text
/// that is no pointer (it resolves to nothing).
pub(super) fn canonical_pointer(pointer: &str) -> Option<String> {
    if pointer.is_empty() {
        return Some(String::new());
    }
    let rest = pointer.strip_prefix('/')?;
    let mut out = String::with_capacity(pointer.len());
    for token in rest.split('/') {
        out.push('/');
        escape_token(&token.replace("~1", "/").replace("~0", "~"), &mut out);
    }
    Some(out)
}

/// Where [`JsonIndex::read`] reads the JSON: text in memory, or a file read in one buffered
/// pass (never held whole).
#[derive(Debug, Clone, Copy)]
pub(super) enum JsonSource<'a> {
    /// JSON text.
    Text(&'a [u8]),
    /// A JSON file.
    File(&'a std::path::Path),
}

/// What [`JsonIndex::read`] needs from the prose: the tokens that may be verbatim JSON strings
/// and the tagged paths (canonical).
pub(super) struct Wanted<'a> {
    pub(super) tokens: &'a HashSet<&'a str>,
    pub(super) paths: &'a HashSet<String>,
    /// Code span contents: quoted when some JSON string equals one.
    pub(super) spans: &'a HashSet<&'a str>,
    /// Code span contents long enough to be quoted as a piece of a JSON string.
    pub(super) pieces: &'a [&'a str],
}

/// What [`JsonIndex::read`] found for the prose besides the index.
pub(super) struct Found {
    /// The value at each wanted path the document has.
    pub(super) at_paths: std::collections::HashMap<String, AtPath>,
    /// The code span contents the document holds as a whole string or inside one.
    pub(super) quoted_spans: HashSet<String>,
}

/// Builds a [`JsonIndex`] while the JSON is parsed, never holding the document as a tree.
struct Builder<'a> {
    wanted: &'a Wanted<'a>,
    /// Finds every wanted piece inside a string in one pass over it.
    pieces: Option<aho_corasick::AhoCorasick>,
    quoted_spans: HashSet<String>,
    numbers: Vec<f64>,
    /// Length of `numbers` after its last sort and dedup.
    deduped: usize,
    strings: HashSet<String>,
    at_paths: std::collections::HashMap<String, AtPath>,
    /// The pointer of the value being read.
    path: String,
}

impl Builder<'_> {
    fn number(&mut self, x: f64) {
        if x.is_finite() {
            self.numbers.push(x);
            // Sorted and deduplicated whenever it doubles: repeated numbers cost nothing, and
            // the vector never exceeds twice its distinct numbers.
            if self.numbers.len() >= 2 * self.deduped.max(1 << 16) {
                self.numbers.sort_by(f64::total_cmp);
                self.numbers.dedup();
                self.deduped = self.numbers.len();
            }
        }
        self.at(AtPath::Number(x));
    }

    fn string(&mut self, s: &str) {
        if self.wanted.spans.contains(s) {
            self.quoted_spans.insert(s.to_string());
        }
        if let Some(pieces) = &self.pieces {
            for m in pieces.find_overlapping_iter(s) {
                if let Some(piece) = self.wanted.pieces.get(m.pattern().as_usize()) {
                    self.quoted_spans.insert((*piece).to_string());
                }
            }
        }
        let tokens = self.wanted.tokens;
        if tokens.contains(s) {
            self.strings.insert(s.to_string());
        }
        for piece in s.split_whitespace() {
            let piece = trim_token(piece);
            if tokens.contains(piece) {
                self.strings.insert(piece.to_string());
            }
        }
        if self.wanted.paths.contains(&self.path) {
            self.at_paths
                .insert(self.path.clone(), AtPath::String(s.to_string()));
        }
    }

    fn at(&mut self, value: AtPath) {
        if self.wanted.paths.contains(&self.path) {
            self.at_paths.insert(self.path.clone(), value);
        }
    }
}

/// One value of the document, read into the builder.
struct Node<'b, 'a>(&'b mut Builder<'a>);

impl<'de> serde::de::DeserializeSeed<'de> for Node<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Node<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        self.0.at(AtPath::Other);
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        self.0.at(AtPath::Other);
        Ok(())
    }
    #[allow(clippy::cast_precision_loss)] // as `Value::as_f64` reads it
    fn visit_u64<E>(self, n: u64) -> Result<(), E> {
        self.0.number(n as f64);
        Ok(())
    }
    #[allow(clippy::cast_precision_loss)]
    fn visit_i64<E>(self, n: i64) -> Result<(), E> {
        self.0.number(n as f64);
        Ok(())
    }
    fn visit_f64<E>(self, n: f64) -> Result<(), E> {
        self.0.number(n);
        Ok(())
    }
    fn visit_str<E>(self, s: &str) -> Result<(), E> {
        self.0.string(s);
        Ok(())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.0.at(AtPath::Other);
        let mut i = 0usize;
        loop {
            let len = self.0.path.len();
            self.0.path.push('/');
            self.0.path.push_str(&i.to_string());
            let more = seq.next_element_seed(Node(&mut *self.0))?;
            self.0.path.truncate(len);
            if more.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.0.at(AtPath::Other);
        while let Some(key) = map.next_key::<std::borrow::Cow<'_, str>>()? {
            let len = self.0.path.len();
            self.0.path.push('/');
            escape_token(&key, &mut self.0.path);
            map.next_value_seed(Node(&mut *self.0))?;
            self.0.path.truncate(len);
        }
        Ok(())
    }
}

impl JsonIndex {
    /// The index of the JSON text `bytes`, read in one pass without building the document:
    /// its numbers, the wanted tokens it holds as strings (or pieces of strings), and the
    /// values at the wanted paths. Memory: the numbers (at most twice the distinct ones), the
    /// path being read, and what the prose asked for — not a tree of the document.
    pub(super) fn read(
        source: JsonSource<'_>,
        wanted: &Wanted<'_>,
    ) -> Result<(JsonIndex, Found), serde_json::Error> {
        match source {
            JsonSource::Text(bytes) => {
                Self::read_from(&mut serde_json::Deserializer::from_slice(bytes), wanted)
            }
            JsonSource::File(path) => {
                let file = std::fs::File::open(path).map_err(serde_json::Error::io)?;
                let reader = std::io::BufReader::with_capacity(1 << 16, file);
                Self::read_from(&mut serde_json::Deserializer::from_reader(reader), wanted)
            }
        }
    }

    fn read_from<'de, R: serde_json::de::Read<'de>>(
        de: &mut serde_json::Deserializer<R>,
        wanted: &Wanted<'_>,
    ) -> Result<(JsonIndex, Found), serde_json::Error> {
        // Linear in each string, however many pieces are wanted (a piece searched for with
        // `contains` in every string would cost pieces × document).
        let pieces = (!wanted.pieces.is_empty())
            .then(|| aho_corasick::AhoCorasick::new(wanted.pieces).ok())
            .flatten();
        let mut builder = Builder {
            wanted,
            pieces,
            quoted_spans: HashSet::new(),
            numbers: Vec::new(),
            deduped: 0,
            strings: HashSet::new(),
            at_paths: std::collections::HashMap::new(),
            path: String::new(),
        };
        serde::de::DeserializeSeed::deserialize(Node(&mut builder), &mut *de)?;
        de.end()?;
        let mut numbers = builder.numbers;
        numbers.sort_by(f64::total_cmp);
        numbers.dedup();
        Ok((
            JsonIndex {
                numbers,
                strings: builder.strings,
                // Code spans were looked for while reading (`Found::quoted_spans`).
                long: Vec::new(),
                short: HashSet::new(),
            },
            Found {
                at_paths: builder.at_paths,
                quoted_spans: builder.quoted_spans,
            },
        ))
    }
}
