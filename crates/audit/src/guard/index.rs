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
