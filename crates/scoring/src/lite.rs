//! A light, allocation-frugal reading of data.jsonl lines, shared by both scorers: each line is
//! parsed once into its top-level keys and scalar values (nested arrays and objects keep only
//! their kind), which is all either scorer looks at.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A top-level value of a row, with the JSON type the legacy judge distinguishes.
#[derive(Debug, Clone, PartialEq)]
pub enum LiteValue<'a> {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A number written without fraction or exponent.
    Int(i128),
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
            LiteValue::Int(_) => "int",
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
            LiteValue::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// Whether a JSON number equals an unsigned integer (int and float notation alike; bools
    /// are not numbers here).
    pub fn equals_uint(&self, v: u64) -> bool {
        match self {
            LiteValue::Int(i) => *i == i128::from(v),
            LiteValue::Float(f) => *f == v as f64 && v < (1 << 53),
            _ => false,
        }
    }

    /// Whether a JSON number equals a signed integer (int and float notation alike).
    pub fn equals_int(&self, v: i64) -> bool {
        match self {
            LiteValue::Int(i) => *i == i128::from(v),
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

/// One parsed line of data.jsonl.
#[derive(Debug, Clone, PartialEq)]
pub enum Line<'a> {
    /// A JSON object: its top-level entries in first-seen order (a repeated key keeps its
    /// first position and last value, as Python's `json.loads` does).
    Object(Vec<(Cow<'a, str>, LiteValue<'a>)>),
    /// Valid JSON that is not an object (an array, a number …).
    NonObject,
    /// Not JSON at all.
    Invalid,
}

impl<'a> Line<'a> {
    /// Parses one (trimmed, non-empty) line.
    pub fn parse(text: &'a str) -> Self {
        match serde_json::from_str::<LiteObject<'a>>(text) {
            Ok(LiteObject(entries)) => Line::Object(entries),
            Err(_) => match serde_json::from_str::<IgnoredAny>(text) {
                Ok(_) => Line::NonObject,
                Err(_) => Line::Invalid,
            },
        }
    }

    /// The value at `key` of an object line.
    pub fn get(&self, key: &str) -> Option<&LiteValue<'a>> {
        match self {
            Line::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Like [`Line::get`], trying position `*hint` first and remembering where the key was:
    /// rows of one submission nearly always share their key order, so lookups become O(1).
    pub fn get_hinted(&self, key: &str, hint: &mut usize) -> Option<&LiteValue<'a>> {
        let Line::Object(entries) = self else {
            return None;
        };
        if let Some((k, v)) = entries.get(*hint)
            && k == key
        {
            return Some(v);
        }
        let at = entries.iter().position(|(k, _)| k == key)?;
        *hint = at;
        Some(&entries[at].1)
    }
}

/// Position hints for a fixed list of keys, one per key (see [`Line::get_hinted`]).
#[derive(Debug, Clone)]
pub struct Hints(Vec<usize>);

impl Hints {
    /// Hints for `n` keys, starting at their list positions.
    pub fn new(n: usize) -> Self {
        Hints((0..n).collect())
    }

    /// The value of key number `i` (named `key`) in `line`.
    pub fn get<'l, 'a>(
        &mut self,
        line: &'l Line<'a>,
        i: usize,
        key: &str,
    ) -> Option<&'l LiteValue<'a>> {
        match self.0.get_mut(i) {
            Some(hint) => line.get_hinted(key, hint),
            None => line.get(key),
        }
    }
}

/// Parses every non-empty line of a submission's data once.
pub fn parse_lines(data: &str) -> Vec<Line<'_>> {
    data.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(Line::parse)
        .collect()
}

struct LiteObject<'a>(Vec<(Cow<'a, str>, LiteValue<'a>)>);

impl<'de> Deserialize<'de> for LiteObject<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LiteObject<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries: Vec<(Cow<'de, str>, LiteValue<'de>)> = Vec::with_capacity(12);
                // A 64-bit signature of the keys seen (length and first byte) rules out a
                // repeated key without comparing strings in the common case.
                let mut seen = 0u64;
                while let Some(CowStr(key)) = map.next_key::<CowStr<'de>>()? {
                    let value = map.next_value::<LiteValueDe<'de>>()?.0;
                    let bit = 1u64
                        << ((key.len() * 7
                            + usize::from(key.as_bytes().first().copied().unwrap_or(0)))
                            % 64);
                    let slot = if seen & bit != 0 {
                        entries.iter_mut().find(|(k, _)| *k == key)
                    } else {
                        None
                    };
                    seen |= bit;
                    match slot {
                        Some(slot) => slot.1 = value,
                        None => entries.push((key, value)),
                    }
                }
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
                Ok(LiteValueDe(LiteValue::Int(i128::from(v))))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(LiteValueDe(LiteValue::Int(i128::from(v))))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_types() {
        let line = Line::parse(
            r#"{"a": 1, "b": 1.0, "c": "x\"y", "d": [1], "e": {"k": 2}, "f": null, "g": true, "a": 2}"#,
        );
        assert_eq!(line.get("a"), Some(&LiteValue::Int(2)));
        assert_eq!(line.get("b").map(LiteValue::type_name), Some("float"));
        assert_eq!(line.get("c").and_then(LiteValue::as_str), Some("x\"y"));
        assert_eq!(line.get("d"), Some(&LiteValue::List));
        assert_eq!(line.get("e"), Some(&LiteValue::Dict));
        assert_eq!(line.get("f"), Some(&LiteValue::Null));
        if let Line::Object(entries) = &line {
            assert_eq!(entries.len(), 7);
            assert_eq!(entries[0].0, "a");
        }
        assert_eq!(Line::parse("[1, 2]"), Line::NonObject);
        assert_eq!(Line::parse("5"), Line::NonObject);
        assert_eq!(Line::parse("{nope"), Line::Invalid);
        assert_eq!(Line::parse("{} {}"), Line::Invalid);
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(LiteValue::Float(5.0).equals_uint(5));
        assert!(LiteValue::Int(5).equals_uint(5));
        assert!(!LiteValue::Bool(true).equals_uint(1));
        assert!(LiteValue::Float(-3.0).equals_int(-3));
    }
}
