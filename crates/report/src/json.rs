//! JSON written streamed, byte for byte as `serde_json::to_string_pretty(&serde_json::to_value(x))`
//! writes it: every object's keys sorted, as the value tree sorts them.
//!
//! Why: `stats.json` has always been printed from a `serde_json::Value` tree, whose objects are
//! sorted maps. At 1 000 seeds the tree of a report's statistics is several times the 23 MB of
//! its text; writing the text straight from the typed structs keeps neither.
//!
//! How the keys get sorted without a tree: a value's `Serialize` is called more than once. A
//! first pass ([`Probe`]) learns what the value is (a scalar, a sequence, or an object and its
//! keys in the order the value gives them); an object is then written one field at a time in
//! sorted order, each by a pass that writes only that field ([`Emit`] with a selected index).
//! A field that is itself an object repeats this one level down, so each scalar is written once
//! and the extra work is one call per field and pass (the square of an object's field count,
//! its entries when a map's keys are not already sorted). Scalars and map keys are converted by
//! serde_json's own value serializer, so numbers, strings and keys are exactly what the tree
//! would hold. A `Serialize` impl must give the same output each time it is called (true of
//! plain data; stats.json's types are).

use std::borrow::Cow;
use std::io::Write;

use serde::Serialize;
use serde::ser::{self, Impossible, SerializeMap as _};
use serde_json::{Error, Map, Value};

type Result<T, E = Error> = std::result::Result<T, E>;

/// An object key: a struct's field name as is, a map's key converted.
type Key = Cow<'static, str>;

/// Writes `value` to `writer` as `serde_json::to_string_pretty(&serde_json::to_value(value)?)`
/// would (no trailing newline).
///
/// # Errors
/// What `serde_json::to_value` would fail with (e.g. a map key that is not a string), or the
/// writer's error.
pub fn to_writer_sorted_pretty<W: Write + ?Sized, T: Serialize + ?Sized>(
    writer: &mut W,
    value: &T,
) -> Result<()> {
    let mut out = Out { w: writer };
    out.value(value, 0)
}

/// [`to_writer_sorted_pretty`] into a string.
///
/// # Errors
/// As [`to_writer_sorted_pretty`].
pub fn to_string_sorted_pretty<T: Serialize + ?Sized>(value: &T) -> Result<String> {
    let mut bytes = Vec::new();
    to_writer_sorted_pretty(&mut bytes, value)?;
    String::from_utf8(bytes).map_err(<Error as ser::Error>::custom)
}

/// The fields `names` of the object `value` serialises to, each as `serde_json::to_value`
/// converts it (absent names are left out): what `to_value(value)?.get(name)` gives, without
/// building the other fields.
///
/// # Errors
/// `value` is not an object, or a field cannot be converted.
pub fn fields_to_values<T: Serialize + ?Sized>(
    value: &T,
    names: &[&str],
) -> Result<Map<String, Value>> {
    let mut found = Map::new();
    value.serialize(Pick {
        names,
        found: &mut found,
    })?;
    Ok(found)
}

struct Out<'w, W: ?Sized> {
    w: &'w mut W,
}

impl<W: Write + ?Sized> Out<'_, W> {
    fn raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.w.write_all(bytes).map_err(Error::io)
    }

    fn indent(&mut self, depth: usize) -> Result<()> {
        for _ in 0..depth {
            self.raw(b"  ")?;
        }
        Ok(())
    }

    /// Before an element or a key: a newline (after a comma unless it is the first), then the
    /// indentation of `depth`.
    fn separator(&mut self, first: bool, depth: usize) -> Result<()> {
        self.raw(if first { b"\n" } else { b",\n" })?;
        self.indent(depth)
    }

    /// After the last element or entry: the closing bracket, on its own line when the
    /// container held something.
    fn close(&mut self, any: bool, depth: usize, bracket: &[u8]) -> Result<()> {
        if any {
            self.raw(b"\n")?;
            self.indent(depth)?;
        }
        self.raw(bracket)
    }

    fn scalar(&mut self, v: &Value) -> Result<()> {
        serde_json::to_writer(&mut *self.w, v)
    }

    fn key(&mut self, key: &str) -> Result<()> {
        serde_json::to_writer(&mut *self.w, key)?;
        self.raw(b": ")
    }

    /// Writes `v`, whose first line continues the current one, at nesting `depth`.
    fn value<T: Serialize + ?Sized>(&mut self, v: &T, depth: usize) -> Result<()> {
        match v.serialize(Probe)? {
            Shape::Scalar(s) => self.scalar(&s),
            // Bytes: an array of numbers, written as any other array.
            Shape::Array(items) => {
                self.raw(b"[")?;
                for (i, item) in items.iter().enumerate() {
                    self.separator(i == 0, depth + 1)?;
                    self.scalar(item)?;
                }
                self.close(!items.is_empty(), depth, b"]")
            }
            Shape::Seq => {
                self.raw(b"[")?;
                let mut state = SeqState { any: false };
                v.serialize(Emit {
                    out: self,
                    depth,
                    pass: Pass::Seq(&mut state),
                })?;
                self.close(state.any, depth, b"]")
            }
            Shape::Object(keys) => {
                self.raw(b"{")?;
                self.entries(v, &keys, depth, Level::Outer)?;
                self.close(!keys.is_empty(), depth, b"}")
            }
            Shape::Variant(name, body) => {
                // `{"Variant": body}`, as serde_json's value tree holds an enum's non-unit variant.
                self.raw(b"{")?;
                self.separator(true, depth + 1)?;
                self.key(name)?;
                match body {
                    Body::Newtype => v.serialize(Emit {
                        out: self,
                        depth: depth + 1,
                        pass: Pass::Newtype,
                    })?,
                    Body::Tuple => {
                        self.raw(b"[")?;
                        let mut state = SeqState { any: false };
                        v.serialize(Emit {
                            out: self,
                            depth: depth + 1,
                            pass: Pass::Seq(&mut state),
                        })?;
                        self.close(state.any, depth + 1, b"]")?;
                    }
                    Body::Struct(keys) => {
                        self.raw(b"{")?;
                        self.entries(v, &keys, depth + 1, Level::Variant)?;
                        self.close(!keys.is_empty(), depth + 1, b"}")?;
                    }
                }
                self.close(true, depth, b"}")
            }
        }
    }

    /// The entries of the object `v` (its keys in the order it gives them: `keys`) in sorted
    /// key order, a repeated key written once with its last value (as a map keeps it).
    fn entries<T: Serialize + ?Sized>(
        &mut self,
        v: &T,
        keys: &[Key],
        depth: usize,
        level: Level,
    ) -> Result<()> {
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_by(|&a, &b| keys[a].cmp(&keys[b]).then(a.cmp(&b)));
        // Of equal keys, the last one given.
        let mut chosen: Vec<usize> = Vec::with_capacity(order.len());
        for i in order {
            match chosen.last_mut() {
                Some(last) if keys[*last] == keys[i] => *last = i,
                _ => chosen.push(i),
            }
        }
        let in_order =
            chosen.iter().enumerate().all(|(a, &b)| a == b) && chosen.len() == keys.len();
        let mut state = EntryState {
            first: true,
            index: 0,
        };
        if in_order {
            v.serialize(Emit {
                out: self,
                depth,
                pass: Pass::Entries {
                    level,
                    select: None,
                    keys,
                    state: &mut state,
                },
            })?;
        } else {
            for i in chosen {
                state.index = 0;
                v.serialize(Emit {
                    out: self,
                    depth,
                    pass: Pass::Entries {
                        level,
                        select: Some(i),
                        keys,
                        state: &mut state,
                    },
                })?;
            }
        }
        Ok(())
    }
}

/// Whether entries are a plain object's or a struct variant's (`{"V": {…}}`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Outer,
    Variant,
}

/// What a value serialises to, as far as writing it needs.
enum Shape {
    /// A scalar (null, bool, number, string), converted as serde_json's value tree holds it.
    Scalar(Value),
    /// Bytes, as the array of numbers the value tree holds.
    Array(Vec<Value>),
    /// A sequence, tuple or tuple struct.
    Seq,
    /// A map or struct and its keys, in the order given.
    Object(Vec<Key>),
    /// A newtype, tuple or struct variant.
    Variant(&'static str, Body),
}

enum Body {
    Newtype,
    Tuple,
    Struct(Vec<Key>),
}

/// The value tree's scalar for a serialisation that the value serializer ends at once.
fn scalar(convert: impl FnOnce(serde_json::value::Serializer) -> Result<Value>) -> Result<Shape> {
    convert(serde_json::value::Serializer).map(Shape::Scalar)
}

/// A map key as the value tree holds it (a string, an integer or bool as text, …).
fn key_string<K: Serialize + ?Sized>(key: &K) -> Result<String> {
    if let Ok(s) = key.serialize(StrKey) {
        return Ok(s);
    }
    struct One<'a, K: ?Sized>(&'a K);
    impl<K: Serialize + ?Sized> Serialize for One<'_, K> {
        fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut m = s.serialize_map(Some(1))?;
            m.serialize_entry(self.0, &())?;
            m.end()
        }
    }
    match serde_json::to_value(One(key))? {
        Value::Object(m) => m
            .into_iter()
            .next()
            .map(|(k, _)| k)
            .ok_or_else(|| <Error as ser::Error>::custom("a map key that converts to no key")),
        _ => Err(<Error as ser::Error>::custom(
            "a map key that converts to no key",
        )),
    }
}

/// The first pass: what a value is.
struct Probe;

/// Collects an object's keys.
struct ProbeObject {
    keys: Vec<Key>,
    variant: Option<&'static str>,
}

impl ser::Serializer for Probe {
    type Ok = Shape;
    type Error = Error;
    type SerializeSeq = ProbeSeq;
    type SerializeTuple = ProbeSeq;
    type SerializeTupleStruct = ProbeSeq;
    type SerializeTupleVariant = ProbeSeq;
    type SerializeMap = ProbeObject;
    type SerializeStruct = ProbeObject;
    type SerializeStructVariant = ProbeObject;

    fn serialize_bool(self, v: bool) -> Result<Shape> {
        scalar(|s| ser::Serializer::serialize_bool(s, v))
    }
    fn serialize_i8(self, v: i8) -> Result<Shape> {
        scalar(|s| ser::Serializer::serialize_i8(s, v))
    }
    fn serialize_i16(self, v: i16) -> Result<Shape> {
        scalar(|s| ser::Serializer::serialize_i16(s, v))
    }
    fn serialize_i32(self, v: i32) -> Result<Shape> {
        scalar(|s| ser::Serializer::serialize_i32(s, v))
    }
    fn serialize_i64(self, v: i64) -> Result<Shape> {
        scalar(|s| ser::Serializer::serialize_i64(s, v))
    }
    fn serialize_i128(self, v: i128) -> Result<Shape> {
        scalar(|s| ser::Serializer::serialize_i128(s, v))
    }
    fn serialize_u8(self, v: u8) -> Result<Shape> {
        scalar(|s| ser::Serializer::serialize_u8(s, v))
    }
    fn serialize_u16(self, v: u16) -> Result<Shape> {
        scalar(|s| ser::Serializer::serialize_u16(s, v))
    }
    fn serialize_u32(self, v: u32) -> Result<Shape> {
        scalar(|s| ser::Serializer::serialize_u32(s, v))
    }
    fn serialize_u64(self, v: u64) -> Result<Shape> {
        scalar(|s| ser::Serializer::serialize_u64(s, v))
    }
    fn serialize_u128(self, v: u128) -> Result<Shape> {
        scalar(|s| ser::Serializer::serialize_u128(s, v))
    }
    fn serialize_f32(self, v: f32) -> Result<Shape> {
        scalar(|s| ser::Serializer::serialize_f32(s, v))
    }
    fn serialize_f64(self, v: f64) -> Result<Shape> {
        scalar(|s| ser::Serializer::serialize_f64(s, v))
    }
    fn serialize_char(self, v: char) -> Result<Shape> {
        scalar(|s| ser::Serializer::serialize_char(s, v))
    }
    fn serialize_str(self, v: &str) -> Result<Shape> {
        scalar(|s| ser::Serializer::serialize_str(s, v))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Shape> {
        match ser::Serializer::serialize_bytes(serde_json::value::Serializer, v)? {
            Value::Array(items) => Ok(Shape::Array(items)),
            other => Ok(Shape::Scalar(other)),
        }
    }
    fn serialize_none(self) -> Result<Shape> {
        scalar(ser::Serializer::serialize_none)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Shape> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Shape> {
        scalar(ser::Serializer::serialize_unit)
    }
    fn serialize_unit_struct(self, name: &'static str) -> Result<Shape> {
        scalar(|s| ser::Serializer::serialize_unit_struct(s, name))
    }
    fn serialize_unit_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
    ) -> Result<Shape> {
        scalar(|s| ser::Serializer::serialize_unit_variant(s, name, index, variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Shape> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _value: &T,
    ) -> Result<Shape> {
        Ok(Shape::Variant(variant, Body::Newtype))
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<ProbeSeq> {
        Ok(ProbeSeq { variant: None })
    }
    fn serialize_tuple(self, _len: usize) -> Result<ProbeSeq> {
        Ok(ProbeSeq { variant: None })
    }
    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<ProbeSeq> {
        Ok(ProbeSeq { variant: None })
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<ProbeSeq> {
        Ok(ProbeSeq {
            variant: Some(variant),
        })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<ProbeObject> {
        Ok(ProbeObject {
            keys: Vec::new(),
            variant: None,
        })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<ProbeObject> {
        Ok(ProbeObject {
            keys: Vec::with_capacity(len),
            variant: None,
        })
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<ProbeObject> {
        Ok(ProbeObject {
            keys: Vec::with_capacity(len),
            variant: Some(variant),
        })
    }
}

struct ProbeSeq {
    variant: Option<&'static str>,
}

impl ProbeSeq {
    fn shape(self) -> Shape {
        match self.variant {
            Some(v) => Shape::Variant(v, Body::Tuple),
            None => Shape::Seq,
        }
    }
}

macro_rules! probe_seq {
    ($($trait:ident :: $method:ident),*) => {$(
        impl ser::$trait for ProbeSeq {
            type Ok = Shape;
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, _value: &T) -> Result<()> {
                Ok(())
            }
            fn end(self) -> Result<Shape> {
                Ok(self.shape())
            }
        }
    )*};
}
probe_seq!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ProbeObject {
    fn shape(self) -> Shape {
        match self.variant {
            Some(v) => Shape::Variant(v, Body::Struct(self.keys)),
            None => Shape::Object(self.keys),
        }
    }
}

impl ser::SerializeMap for ProbeObject {
    type Ok = Shape;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.keys.push(Cow::Owned(key_string(key)?));
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, _value: &T) -> Result<()> {
        Ok(())
    }
    fn end(self) -> Result<Shape> {
        Ok(self.shape())
    }
}

impl ser::SerializeStruct for ProbeObject {
    type Ok = Shape;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, _v: &T) -> Result<()> {
        self.keys.push(Cow::Borrowed(key));
        Ok(())
    }
    fn end(self) -> Result<Shape> {
        Ok(self.shape())
    }
}

impl ser::SerializeStructVariant for ProbeObject {
    type Ok = Shape;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<()> {
        ser::SerializeStruct::serialize_field(self, key, v)
    }
    fn end(self) -> Result<Shape> {
        ser::SerializeStruct::end(self)
    }
}

struct SeqState {
    any: bool,
}

struct EntryState {
    /// No entry written yet.
    first: bool,
    /// Entries seen in this pass.
    index: usize,
}

/// What an emitting pass writes.
enum Pass<'s> {
    /// Every element of a sequence (or of a tuple variant's fields).
    Seq(&'s mut SeqState),
    /// The value inside a newtype variant.
    Newtype,
    /// An object's entries: all of them (`select` None, keys already sorted) or the one at
    /// `select`.
    Entries {
        level: Level,
        select: Option<usize>,
        keys: &'s [Key],
        state: &'s mut EntryState,
    },
}

/// A writing pass over a value whose [`Shape`] is known.
struct Emit<'o, 'w, 's, W: ?Sized> {
    out: &'o mut Out<'w, W>,
    depth: usize,
    pass: Pass<'s>,
}

fn unexpected() -> Error {
    <Error as ser::Error>::custom(
        "a value serialised differently on a second call (stats.json needs a pure Serialize)",
    )
}

/// The state of an [`Emit`] pass inside a compound.
struct EmitCompound<'o, 'w, 's, W: ?Sized> {
    out: &'o mut Out<'w, W>,
    depth: usize,
    pass: Pass<'s>,
    /// The key of the entry whose value comes next is the selected one.
    selected: bool,
}

impl<W: Write + ?Sized> EmitCompound<'_, '_, '_, W> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let Pass::Seq(state) = &mut self.pass else {
            return Err(unexpected());
        };
        let first = !state.any;
        state.any = true;
        self.out.separator(first, self.depth + 1)?;
        self.out.value(value, self.depth + 1)
    }

    fn entry_key(&mut self) -> Result<()> {
        let Pass::Entries { select, state, .. } = &mut self.pass else {
            return Err(unexpected());
        };
        self.selected = select.is_none_or(|s| s == state.index);
        state.index += 1;
        Ok(())
    }

    fn entry_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        if !std::mem::take(&mut self.selected) {
            return Ok(());
        }
        let Pass::Entries { keys, state, .. } = &mut self.pass else {
            return Err(unexpected());
        };
        let key = keys.get(state.index - 1).ok_or_else(unexpected)?;
        let first = std::mem::replace(&mut state.first, false);
        self.out.separator(first, self.depth + 1)?;
        self.out.key(key)?;
        self.out.value(value, self.depth + 1)
    }

    fn entries_at(&self, want: Level) -> Result<()> {
        match self.pass {
            Pass::Entries { level, .. } if level == want => Ok(()),
            _ => Err(unexpected()),
        }
    }
}

impl<'o, 'w, 's, W: Write + ?Sized> Emit<'o, 'w, 's, W> {
    fn compound(self) -> EmitCompound<'o, 'w, 's, W> {
        EmitCompound {
            out: self.out,
            depth: self.depth,
            pass: self.pass,
            selected: false,
        }
    }
}

impl<'o, 'w, 's, W: Write + ?Sized> ser::Serializer for Emit<'o, 'w, 's, W> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = EmitCompound<'o, 'w, 's, W>;
    type SerializeTuple = EmitCompound<'o, 'w, 's, W>;
    type SerializeTupleStruct = EmitCompound<'o, 'w, 's, W>;
    type SerializeTupleVariant = EmitCompound<'o, 'w, 's, W>;
    type SerializeMap = EmitCompound<'o, 'w, 's, W>;
    type SerializeStruct = EmitCompound<'o, 'w, 's, W>;
    type SerializeStructVariant = EmitCompound<'o, 'w, 's, W>;

    fn serialize_bool(self, _v: bool) -> Result<()> {
        Err(unexpected())
    }
    fn serialize_i8(self, _v: i8) -> Result<()> {
        Err(unexpected())
    }
    fn serialize_i16(self, _v: i16) -> Result<()> {
        Err(unexpected())
    }
    fn serialize_i32(self, _v: i32) -> Result<()> {
        Err(unexpected())
    }
    fn serialize_i64(self, _v: i64) -> Result<()> {
        Err(unexpected())
    }
    fn serialize_u8(self, _v: u8) -> Result<()> {
        Err(unexpected())
    }
    fn serialize_u16(self, _v: u16) -> Result<()> {
        Err(unexpected())
    }
    fn serialize_u32(self, _v: u32) -> Result<()> {
        Err(unexpected())
    }
    fn serialize_u64(self, _v: u64) -> Result<()> {
        Err(unexpected())
    }
    fn serialize_f32(self, _v: f32) -> Result<()> {
        Err(unexpected())
    }
    fn serialize_f64(self, _v: f64) -> Result<()> {
        Err(unexpected())
    }
    fn serialize_char(self, _v: char) -> Result<()> {
        Err(unexpected())
    }
    fn serialize_str(self, _v: &str) -> Result<()> {
        Err(unexpected())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<()> {
        Err(unexpected())
    }
    fn serialize_none(self) -> Result<()> {
        Err(unexpected())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<()> {
        Err(unexpected())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        Err(unexpected())
    }
    fn serialize_unit_variant(self, _n: &'static str, _i: u32, _v: &'static str) -> Result<()> {
        Err(unexpected())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        value: &T,
    ) -> Result<()> {
        match self.pass {
            Pass::Newtype => self.out.value(value, self.depth),
            _ => Err(unexpected()),
        }
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq> {
        match self.pass {
            Pass::Seq(_) => Ok(self.compound()),
            _ => Err(unexpected()),
        }
    }
    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Self::SerializeSeq> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeSeq> {
        self.serialize_seq(Some(len))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap> {
        let c = self.compound();
        c.entries_at(Level::Outer)?;
        Ok(c)
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Self::SerializeMap> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeMap> {
        let c = self.compound();
        c.entries_at(Level::Variant)?;
        Ok(c)
    }
}

macro_rules! emit_seq {
    ($($trait:ident :: $method:ident),*) => {$(
        impl<W: Write + ?Sized> ser::$trait for EmitCompound<'_, '_, '_, W> {
            type Ok = ();
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
                self.element(value)
            }
            fn end(self) -> Result<()> {
                Ok(())
            }
        }
    )*};
}
emit_seq!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl<W: Write + ?Sized> ser::SerializeMap for EmitCompound<'_, '_, '_, W> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, _key: &T) -> Result<()> {
        self.entry_key()
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.entry_value(value)
    }
    fn end(self) -> Result<()> {
        Ok(())
    }
}

impl<W: Write + ?Sized> ser::SerializeStruct for EmitCompound<'_, '_, '_, W> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, _key: &'static str, v: &T) -> Result<()> {
        self.entry_key()?;
        self.entry_value(v)
    }
    fn end(self) -> Result<()> {
        Ok(())
    }
}

impl<W: Write + ?Sized> ser::SerializeStructVariant for EmitCompound<'_, '_, '_, W> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<()> {
        ser::SerializeStruct::serialize_field(self, key, v)
    }
    fn end(self) -> Result<()> {
        ser::SerializeStruct::end(self)
    }
}

/// A map key that is a string, taken as is (the common case, without a value tree).
struct StrKey;

impl ser::Serializer for StrKey {
    type Ok = String;
    type Error = Error;
    type SerializeSeq = Impossible<String, Error>;
    type SerializeTuple = Impossible<String, Error>;
    type SerializeTupleStruct = Impossible<String, Error>;
    type SerializeTupleVariant = Impossible<String, Error>;
    type SerializeMap = Impossible<String, Error>;
    type SerializeStruct = Impossible<String, Error>;
    type SerializeStructVariant = Impossible<String, Error>;

    fn serialize_str(self, v: &str) -> Result<String> {
        Ok(v.to_string())
    }
    fn serialize_bool(self, _v: bool) -> Result<String> {
        Err(not_str())
    }
    fn serialize_i8(self, _v: i8) -> Result<String> {
        Err(not_str())
    }
    fn serialize_i16(self, _v: i16) -> Result<String> {
        Err(not_str())
    }
    fn serialize_i32(self, _v: i32) -> Result<String> {
        Err(not_str())
    }
    fn serialize_i64(self, _v: i64) -> Result<String> {
        Err(not_str())
    }
    fn serialize_u8(self, _v: u8) -> Result<String> {
        Err(not_str())
    }
    fn serialize_u16(self, _v: u16) -> Result<String> {
        Err(not_str())
    }
    fn serialize_u32(self, _v: u32) -> Result<String> {
        Err(not_str())
    }
    fn serialize_u64(self, _v: u64) -> Result<String> {
        Err(not_str())
    }
    fn serialize_f32(self, _v: f32) -> Result<String> {
        Err(not_str())
    }
    fn serialize_f64(self, _v: f64) -> Result<String> {
        Err(not_str())
    }
    fn serialize_char(self, _v: char) -> Result<String> {
        Err(not_str())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<String> {
        Err(not_str())
    }
    fn serialize_none(self) -> Result<String> {
        Err(not_str())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<String> {
        Err(not_str())
    }
    fn serialize_unit(self) -> Result<String> {
        Err(not_str())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<String> {
        Err(not_str())
    }
    fn serialize_unit_variant(self, _n: &'static str, _i: u32, _v: &'static str) -> Result<String> {
        Err(not_str())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _value: &T,
    ) -> Result<String> {
        Err(not_str())
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<String> {
        Err(not_str())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(not_str())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple> {
        Err(not_str())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        Err(not_str())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(not_str())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap> {
        Err(not_str())
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct> {
        Err(not_str())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(not_str())
    }
}

fn not_str() -> Error {
    <Error as ser::Error>::custom("not a string key")
}

/// Takes the wanted fields of an object as value trees ([`fields_to_values`]).
struct Pick<'a> {
    names: &'a [&'a str],
    found: &'a mut Map<String, Value>,
}

struct PickEntries<'a> {
    names: &'a [&'a str],
    found: &'a mut Map<String, Value>,
    key: Option<String>,
}

impl PickEntries<'_> {
    fn field<T: Serialize + ?Sized>(&mut self, key: String, value: &T) -> Result<()> {
        if self.names.contains(&key.as_str()) {
            self.found.insert(key, serde_json::to_value(value)?);
        }
        Ok(())
    }
}

fn not_object() -> Error {
    <Error as ser::Error>::custom("the statistics do not serialise to a JSON object")
}

impl<'a> ser::Serializer for Pick<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = PickEntries<'a>;
    type SerializeStruct = PickEntries<'a>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_map(self, _len: Option<usize>) -> Result<PickEntries<'a>> {
        Ok(PickEntries {
            names: self.names,
            found: self.found,
            key: None,
        })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<PickEntries<'a>> {
        self.serialize_map(Some(len))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }
    fn serialize_bool(self, _v: bool) -> Result<()> {
        Err(not_object())
    }
    fn serialize_i8(self, _v: i8) -> Result<()> {
        Err(not_object())
    }
    fn serialize_i16(self, _v: i16) -> Result<()> {
        Err(not_object())
    }
    fn serialize_i32(self, _v: i32) -> Result<()> {
        Err(not_object())
    }
    fn serialize_i64(self, _v: i64) -> Result<()> {
        Err(not_object())
    }
    fn serialize_u8(self, _v: u8) -> Result<()> {
        Err(not_object())
    }
    fn serialize_u16(self, _v: u16) -> Result<()> {
        Err(not_object())
    }
    fn serialize_u32(self, _v: u32) -> Result<()> {
        Err(not_object())
    }
    fn serialize_u64(self, _v: u64) -> Result<()> {
        Err(not_object())
    }
    fn serialize_f32(self, _v: f32) -> Result<()> {
        Err(not_object())
    }
    fn serialize_f64(self, _v: f64) -> Result<()> {
        Err(not_object())
    }
    fn serialize_char(self, _v: char) -> Result<()> {
        Err(not_object())
    }
    fn serialize_str(self, _v: &str) -> Result<()> {
        Err(not_object())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<()> {
        Err(not_object())
    }
    fn serialize_none(self) -> Result<()> {
        Err(not_object())
    }
    fn serialize_unit(self) -> Result<()> {
        Err(not_object())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        Err(not_object())
    }
    fn serialize_unit_variant(self, _n: &'static str, _i: u32, _v: &'static str) -> Result<()> {
        Err(not_object())
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<()> {
        Err(not_object())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(not_object())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple> {
        Err(not_object())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        Err(not_object())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(not_object())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(not_object())
    }
}

impl ser::SerializeMap for PickEntries<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.key = Some(key_string(key)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let key = self.key.take().ok_or_else(unexpected)?;
        self.field(key, value)
    }
    fn end(self) -> Result<()> {
        Ok(())
    }
}

impl ser::SerializeStruct for PickEntries<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<()> {
        self.field(key.to_string(), v)
    }
    fn end(self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;
    use serde::ser::{
        SerializeSeq, SerializeStruct, SerializeStructVariant, SerializeTupleVariant,
    };

    /// What the tree path writes (or fails with).
    fn via_tree<T: Serialize + ?Sized>(value: &T) -> Option<String> {
        let v = serde_json::to_value(value).ok()?;
        serde_json::to_string_pretty(&v).ok()
    }

    fn streamed<T: Serialize + ?Sized>(value: &T) -> Option<String> {
        to_string_sorted_pretty(value).ok()
    }

    const NAMES: [&str; 6] = ["zeta", "alpha", "mid", "Alpha", "a_b", "é"];

    /// Any shape serde can give, with keys in any order and repeated.
    #[derive(Debug, Clone)]
    enum Tree {
        Unit,
        Bool(bool),
        I(i64),
        U(u64),
        F(f64),
        F32(f32),
        Str(String),
        Bytes(Vec<u8>),
        Opt(Option<Box<Tree>>),
        Seq(Vec<Tree>),
        Tuple(Vec<Tree>),
        Map(Vec<(String, Tree)>),
        IntMap(Vec<(i64, Tree)>),
        Struct(Vec<(usize, Tree)>),
        UnitV(usize),
        NewtypeV(usize, Box<Tree>),
        TupleV(usize, Vec<Tree>),
        StructV(usize, Vec<(usize, Tree)>),
    }

    impl Serialize for Tree {
        fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            match self {
                Tree::Unit => s.serialize_unit(),
                Tree::Bool(b) => s.serialize_bool(*b),
                Tree::I(i) => s.serialize_i64(*i),
                Tree::U(u) => s.serialize_u64(*u),
                Tree::F(f) => s.serialize_f64(*f),
                Tree::F32(f) => s.serialize_f32(*f),
                Tree::Str(t) => s.serialize_str(t),
                Tree::Bytes(b) => s.serialize_bytes(b),
                Tree::Opt(None) => s.serialize_none(),
                Tree::Opt(Some(t)) => s.serialize_some(t.as_ref()),
                Tree::Seq(items) => {
                    let mut seq = s.serialize_seq(Some(items.len()))?;
                    for i in items {
                        seq.serialize_element(i)?;
                    }
                    seq.end()
                }
                Tree::Tuple(items) => {
                    use ser::SerializeTuple;
                    let mut t = s.serialize_tuple(items.len())?;
                    for i in items {
                        t.serialize_element(i)?;
                    }
                    t.end()
                }
                Tree::Map(entries) => {
                    let mut m = s.serialize_map(None)?;
                    for (k, v) in entries {
                        m.serialize_entry(k, v)?;
                    }
                    m.end()
                }
                Tree::IntMap(entries) => {
                    let mut m = s.serialize_map(Some(entries.len()))?;
                    for (k, v) in entries {
                        m.serialize_entry(k, v)?;
                    }
                    m.end()
                }
                Tree::Struct(fields) => {
                    let mut st = s.serialize_struct("S", fields.len())?;
                    for (k, v) in fields {
                        st.serialize_field(NAMES[*k], v)?;
                    }
                    st.end()
                }
                Tree::UnitV(i) => s.serialize_unit_variant("E", 0, NAMES[*i]),
                Tree::NewtypeV(i, t) => s.serialize_newtype_variant("E", 1, NAMES[*i], t.as_ref()),
                Tree::TupleV(i, items) => {
                    let mut t = s.serialize_tuple_variant("E", 2, NAMES[*i], items.len())?;
                    for x in items {
                        t.serialize_field(x)?;
                    }
                    t.end()
                }
                Tree::StructV(i, fields) => {
                    let mut st = s.serialize_struct_variant("E", 3, NAMES[*i], fields.len())?;
                    for (k, v) in fields {
                        st.serialize_field(NAMES[*k], v)?;
                    }
                    st.end()
                }
            }
        }
    }

    fn tree() -> impl Strategy<Value = Tree> {
        let key = prop_oneof![
            Just(String::new()),
            "[a-c]{1,2}",
            Just("\"quote\\\n\u{1}".to_string()),
            Just("é".to_string()),
        ];
        let leaf = prop_oneof![
            Just(Tree::Unit),
            any::<bool>().prop_map(Tree::Bool),
            any::<i64>().prop_map(Tree::I),
            any::<u64>().prop_map(Tree::U),
            any::<f64>().prop_map(Tree::F),
            prop_oneof![
                Just(f64::NAN),
                Just(f64::INFINITY),
                Just(-0.0),
                Just(1e-300),
                Just(0.1)
            ]
            .prop_map(Tree::F),
            any::<f32>().prop_map(Tree::F32),
            "\\PC{0,6}".prop_map(Tree::Str),
            prop::collection::vec(any::<u8>(), 0..4).prop_map(Tree::Bytes),
            (0..NAMES.len()).prop_map(Tree::UnitV),
        ];
        leaf.prop_recursive(4, 48, 5, move |inner| {
            prop_oneof![
                prop::option::of(inner.clone().prop_map(Box::new)).prop_map(Tree::Opt),
                prop::collection::vec(inner.clone(), 0..4).prop_map(Tree::Seq),
                prop::collection::vec(inner.clone(), 0..3).prop_map(Tree::Tuple),
                prop::collection::vec((key.clone(), inner.clone()), 0..5).prop_map(Tree::Map),
                prop::collection::vec((-3i64..20, inner.clone()), 0..4).prop_map(Tree::IntMap),
                prop::collection::vec((0..NAMES.len(), inner.clone()), 0..5).prop_map(Tree::Struct),
                ((0..NAMES.len()), inner.clone().prop_map(Box::new))
                    .prop_map(|(i, t)| Tree::NewtypeV(i, t)),
                ((0..NAMES.len()), prop::collection::vec(inner.clone(), 0..3))
                    .prop_map(|(i, t)| Tree::TupleV(i, t)),
                (
                    (0..NAMES.len()),
                    prop::collection::vec((0..NAMES.len(), inner), 0..4)
                )
                    .prop_map(|(i, f)| Tree::StructV(i, f)),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn streamed_text_is_the_value_trees_pretty_text(t in tree()) {
            prop_assert_eq!(streamed(&t), via_tree(&t));
        }
    }

    #[derive(Serialize)]
    struct Inner {
        zulu: u8,
        alpha: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        skipped: Option<u8>,
    }

    #[derive(Serialize)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        Plain,
        Wrapped(f64),
        Pair(u8, Vec<u8>),
        Named { z: u8, a: Vec<Inner> },
    }

    #[derive(Serialize)]
    struct Outer {
        values: Vec<f64>,
        #[serde(flatten)]
        inner: Inner,
        kinds: Vec<Kind>,
        empty: Vec<u8>,
        map: std::collections::BTreeMap<u32, Vec<Kind>>,
        hash: std::collections::HashMap<String, i8>,
        nothing: (),
        b: bool,
    }

    #[test]
    fn typed_structs_with_flatten_enums_and_maps_stream_as_their_tree_prints() {
        let inner = || Inner {
            zulu: 3,
            alpha: Some("a\"b\u{E000}".into()),
            skipped: None,
        };
        let outer = Outer {
            values: vec![0.1, f64::NAN, 1e21, -0.0, 5.0],
            inner: inner(),
            kinds: vec![
                Kind::Plain,
                Kind::Wrapped(2.5),
                Kind::Pair(1, vec![]),
                Kind::Named {
                    z: 1,
                    a: vec![inner(), inner()],
                },
            ],
            empty: Vec::new(),
            map: [(10, vec![Kind::Plain]), (9, vec![])].into_iter().collect(),
            hash: [("b".to_string(), -1), ("a".to_string(), 2)]
                .into_iter()
                .collect(),
            nothing: (),
            b: true,
        };
        assert_eq!(streamed(&outer), via_tree(&outer));
        assert!(via_tree(&outer).is_some());
        let picked = fields_to_values(&outer, &["zulu", "kinds", "absent"]).unwrap();
        let tree = serde_json::to_value(&outer).unwrap();
        assert_eq!(picked.len(), 2);
        assert_eq!(picked["zulu"], tree["zulu"]);
        assert_eq!(picked["kinds"], tree["kinds"]);
    }

    #[test]
    fn what_the_tree_refuses_is_refused() {
        let bad: std::collections::BTreeMap<Vec<u8>, u8> = [(vec![1], 1)].into_iter().collect();
        assert!(via_tree(&bad).is_none());
        assert!(streamed(&bad).is_none());
        assert!(fields_to_values(&5, &["x"]).is_err());
    }
}
