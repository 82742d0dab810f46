//! Canonical records and the rows an episode serves.
//!
//! Record `i` of `(task, seed)` reads stream 0 of the task key from 32-bit word position `8·i`
//! and draws, in this order, `tradeValue = below(1_000_000)`, `netWeight = below(50_000)`,
//! `qty = below(10_000)` (three u64 draws use six of its eight words; a rejection redraw, odds
//! below 10⁻¹³, reads on). The other fields come from the task's query;
//! `record_id = "{task_id}-{i:06}"`. Contiguous records are generated in one sequential pass.
//!
//! How a row is written as JSON, byte for byte as serde_json writes it but without it on the
//! serving path, is [`render`]'s; this file generates the records and names them.

mod render;

use render::padded;
pub use render::{RowJson, RowWriter, write_jsonl};

use crate::rng::{RECORD_STREAM, RECORD_WORDS, Stream, below_first, task_key};
use crate::task::TaskSpec;

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
}
