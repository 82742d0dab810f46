//! The forged outputs and the one table that states each forgery's intended quality relative
//! to the correct answer, per kind of category. That table is what gives "criterion
//! sensitivity" a stated meaning for function calls:
//!
//! | forgery | how it is built | ast | relevance | irrelevance |
//! |---|---|---|---|---|
//! | `correct` | the possible answer's first accepted value per parameter (optional ones left out); relevance/irrelevance: the first function with every required parameter given a value of its declared type | anchor | anchor | lower |
//! | `with_optional` | `correct` plus every optional parameter the answer gives a value for | equal | n/a | n/a |
//! | `wrong_value` | one scalar parameter set to a value outside the accepted list, same type | lower | n/a | n/a |
//! | `wrong_type` | one numeric parameter written as a string (`"10"` for `10`) | lower | lower | n/a |
//! | `wrong_name` | `correct` calling a function the entry does not provide | lower | lower | lower |
//! | `missing_call` | `correct` without its last call (answers with two or more calls) | lower | n/a | n/a |
//! | `extra_call` | `correct` with its first call repeated (answers with two or more calls) | lower | n/a | n/a |
//! | `empty` | the empty string | lower | lower | equal |
//! | `refusal` | a sentence saying no provided function fits | lower | lower | anchor |
//! | `garbage` | a fixed non-call text | lower | lower | equal |
//! | `broken_syntax` | `correct` with its closing parenthesis removed | lower | lower | lower |
//! | `json_syntax` | `correct` as JSON `[{"name", "arguments"}]` instead of the category's syntax | equal | equal | lower |
//!
//! Quality is the *content* of the output for the category's construct: in an AST category the
//! right call is what counts, so the same call with its optional parameters, or in JSON, is as
//! good as the anchor; in a relevance category any call of a provided function is the anchor
//! (BFCL ships no reference call there); in an irrelevance category the construct is "make no
//! call", so every output without a call (refusal, empty, garbage) is as good as the anchor
//! and every output that attempts a call (in any syntax, broken or not) is worse. The anchor is
//! the output the others are compared with; "n/a" forgeries are not built for that kind.
//!
//! Why one long file: the forgeries of every kind and their intended order are one table;
//! keeping them together is what lets the test check the order is complete. A quarter of it is
//! tests.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::render::{Call, Types, calls_json, calls_text};
use super::{CallEntry, CategoryKind, Language};

/// The kinds of forged output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Forgery {
    /// The possible answer's call (or, without one, a schema-valid call).
    Correct,
    /// The correct call with its optional parameters given.
    WithOptional,
    /// A scalar parameter outside its accepted values.
    WrongValue,
    /// A number written as a string.
    WrongType,
    /// A function the entry does not provide.
    WrongName,
    /// One call fewer than the answer.
    MissingCall,
    /// One call more than the answer.
    ExtraCall,
    /// Nothing.
    Empty,
    /// A natural-language refusal.
    Refusal,
    /// Text that is no call at all.
    Garbage,
    /// The correct call, cut before its closing parenthesis.
    BrokenSyntax,
    /// The correct call as JSON.
    JsonSyntax,
}

impl Forgery {
    /// Every forgery, in table order.
    pub const ALL: [Forgery; 12] = [
        Forgery::Correct,
        Forgery::WithOptional,
        Forgery::WrongValue,
        Forgery::WrongType,
        Forgery::WrongName,
        Forgery::MissingCall,
        Forgery::ExtraCall,
        Forgery::Empty,
        Forgery::Refusal,
        Forgery::Garbage,
        Forgery::BrokenSyntax,
        Forgery::JsonSyntax,
    ];

    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            Forgery::Correct => "correct",
            Forgery::WithOptional => "with_optional",
            Forgery::WrongValue => "wrong_value",
            Forgery::WrongType => "wrong_type",
            Forgery::WrongName => "wrong_name",
            Forgery::MissingCall => "missing_call",
            Forgery::ExtraCall => "extra_call",
            Forgery::Empty => "empty",
            Forgery::Refusal => "refusal",
            Forgery::Garbage => "garbage",
            Forgery::BrokenSyntax => "broken_syntax",
            Forgery::JsonSyntax => "json_syntax",
        }
    }

    /// How the forgery is built (the table's second column).
    pub fn construction(self) -> &'static str {
        match self {
            Forgery::Correct => {
                "the possible answer's first accepted value per parameter, optional ones left out; without a possible answer, the first function with every required parameter given a value of its declared type"
            }
            Forgery::WithOptional => {
                "the correct call plus every optional parameter the answer gives a value for"
            }
            Forgery::WrongValue => {
                "one scalar parameter set to a value outside its accepted list, same type"
            }
            Forgery::WrongType => "one numeric parameter written as a string",
            Forgery::WrongName => "the correct call to a function the entry does not provide",
            Forgery::MissingCall => "the correct calls without the last one",
            Forgery::ExtraCall => "the correct calls with the first one repeated",
            Forgery::Empty => "the empty string",
            Forgery::Refusal => "a sentence saying no provided function fits",
            Forgery::Garbage => "a fixed text that is no call",
            Forgery::BrokenSyntax => "the correct call without its closing parenthesis",
            Forgery::JsonSyntax => {
                "the correct call as JSON objects instead of the category's syntax"
            }
        }
    }
}

/// A forgery's intended quality relative to the anchor of its category (the shared engine's).
pub use crate::battery::Quality;

/// The table: the intended quality of `forgery` in a category of `kind`; `None` = not built.
pub fn intended(kind: CategoryKind, forgery: Forgery) -> Option<Quality> {
    use Forgery::*;
    use Quality::*;
    match kind {
        CategoryKind::Ast => Some(match forgery {
            Correct => Anchor,
            WithOptional | JsonSyntax => Equal,
            _ => Lower,
        }),
        CategoryKind::Relevance => match forgery {
            Correct => Some(Anchor),
            JsonSyntax => Some(Equal),
            WrongType | WrongName | Empty | Refusal | Garbage | BrokenSyntax => Some(Lower),
            WithOptional | WrongValue | MissingCall | ExtraCall => None,
        },
        CategoryKind::Irrelevance => match forgery {
            Refusal => Some(Anchor),
            Empty | Garbage => Some(Equal),
            Correct | WrongName | BrokenSyntax | JsonSyntax => Some(Lower),
            WithOptional | WrongValue | WrongType | MissingCall | ExtraCall => None,
        },
    }
}

/// The forgery every other is compared with in a category of `kind`.
pub fn anchor(kind: CategoryKind) -> Forgery {
    match kind {
        CategoryKind::Irrelevance => Forgery::Refusal,
        _ => Forgery::Correct,
    }
}

/// The refusal every refusal forgery uses.
pub const REFUSAL: &str =
    "I'm sorry, but none of the provided functions can be used to answer this request.";

/// The garbage every garbage forgery uses: no call in any syntax.
pub const GARBAGE: &str = "}}{{ 0x7f lorem ipsum ;; ~~ dolor";

/// Suffix that turns a provided function's name into one the entry does not provide.
const UNLISTED: &str = "_unlisted";

/// A value outside every accepted value, of a token no BFCL answer uses.
const WRONG_STRING: &str = "zqxv";

/// The accepted values of one parameter in a possible answer; `""` marks "may be omitted".
fn accepted(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or(&[])
}

fn is_optional(values: &[Value]) -> bool {
    values.iter().any(|v| v.as_str() == Some(""))
}

fn first_value(values: &[Value]) -> Option<&Value> {
    values.iter().find(|v| v.as_str() != Some(""))
}

/// An accepted value as a model would write it: a dict in a possible answer maps each key to
/// its accepted values, so each key takes its first one (keys that may be omitted are left out
/// unless `with_optional`).
fn materialize(v: &Value, with_optional: bool) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter_map(|(k, acc)| {
                    let Some(values) = acc.as_array() else {
                        return Some((k.clone(), materialize(acc, with_optional)));
                    };
                    if is_optional(values) && !with_optional {
                        return None;
                    }
                    first_value(values).map(|x| (k.clone(), materialize(x, with_optional)))
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| materialize(x, with_optional)).collect()),
        _ => v.clone(),
    }
}

/// The parameters a function's schema requires.
fn required<'a>(functions: &'a [Value], function: &str) -> Vec<&'a str> {
    functions
        .iter()
        .find(|f| f.get("name").and_then(Value::as_str) == Some(function))
        .and_then(|f| f.pointer("/parameters/required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The calls of the possible answer: every parameter the answer does not mark as omittable or
/// the schema requires (and, `with_optional`, the omittable ones that have a value), each with
/// its first accepted value.
fn answer_calls(answer: &[Value], functions: &[Value], with_optional: bool) -> Option<Vec<Call>> {
    answer
        .iter()
        .map(|call| {
            let (name, params) = call.as_object()?.iter().next()?;
            let needed = required(functions, name);
            let args = params
                .as_object()?
                .iter()
                .filter_map(|(p, v)| {
                    let values = accepted(v);
                    let include =
                        with_optional || !is_optional(values) || needed.contains(&p.as_str());
                    if !include {
                        return None;
                    }
                    first_value(values).map(|x| (p.clone(), materialize(x, with_optional)))
                })
                .collect();
            Some(Call {
                name: name.clone(),
                args,
            })
        })
        .collect()
}

/// A value of a declared type, for calls built from the schema alone.
fn placeholder(schema: &Value) -> Value {
    if let Some(e) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return e.clone();
    }
    if let Some(d) = schema.get("default").filter(|d| !d.is_null()) {
        return d.clone();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("integer" | "long" | "short" | "byte") => Value::from(1),
        Some("float" | "double" | "number") => Value::from(1.5),
        Some("boolean" | "Boolean") => Value::Bool(true),
        Some("array" | "tuple" | "ArrayList" | "Array") => Value::Array(vec![
            schema
                .get("items")
                .map(placeholder)
                .unwrap_or_else(|| Value::from("example")),
        ]),
        Some("dict" | "object" | "HashMap") => Value::Object(Default::default()),
        _ => Value::from("example"),
    }
}

/// A call of the entry's first function with every required parameter.
fn schema_call(functions: &[Value]) -> Option<Call> {
    let f = functions.first()?;
    let name = f.get("name")?.as_str()?.to_string();
    let props = f
        .pointer("/parameters/properties")
        .and_then(Value::as_object);
    let required: Vec<&str> = f
        .pointer("/parameters/required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let args = required
        .iter()
        .map(|p| {
            let schema = props.and_then(|o| o.get(*p)).cloned().unwrap_or_default();
            (p.to_string(), placeholder(&schema))
        })
        .collect();
    Some(Call { name, args })
}

/// The correct calls of an entry (the anchor's content in ast and relevance categories).
fn correct_calls(entry: &CallEntry) -> Option<Vec<Call>> {
    match &entry.answer {
        Some(a) => answer_calls(a, &entry.functions, false),
        None => schema_call(&entry.functions).map(|c| vec![c]),
    }
}

/// The first argument, over the calls, for which `pick` builds a replacement.
fn replace_first(
    calls: &[Call],
    mut pick: impl FnMut(usize, &str, &Value) -> Option<Value>,
) -> Option<Vec<Call>> {
    for (ci, call) in calls.iter().enumerate() {
        for (ai, (p, v)) in call.args.iter().enumerate() {
            if let Some(new) = pick(ci, p, v) {
                let mut out = calls.to_vec();
                out[ci].args[ai].1 = new;
                return Some(out);
            }
        }
    }
    None
}

/// A same-type value outside `values`, for a scalar.
fn outside(v: &Value, values: &[Value]) -> Option<Value> {
    let candidate = match v {
        Value::Bool(b) => Value::Bool(!b),
        Value::Number(n) if n.is_i64() || n.is_u64() => {
            let max = values.iter().filter_map(Value::as_i64).max()?;
            Value::from(max.checked_add(1)?)
        }
        Value::Number(_) => {
            let max = values
                .iter()
                .filter_map(Value::as_f64)
                .fold(f64::NEG_INFINITY, f64::max);
            let x = max.floor() + 1.5;
            Value::from(x)
        }
        Value::String(s) if !s.is_empty() => Value::from(WRONG_STRING),
        _ => return None,
    };
    // Both spellings of a number count as the same value.
    let same = |a: &Value, b: &Value| match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    };
    (!values.iter().any(|x| same(x, &candidate))).then_some(candidate)
}

fn wrong_value(entry: &CallEntry, calls: &[Call]) -> Option<Vec<Call>> {
    let answer = entry.answer.as_ref()?;
    replace_first(calls, |ci, p, v| {
        let values = answer
            .get(ci)?
            .as_object()?
            .values()
            .next()?
            .get(p)
            .map(accepted)?;
        outside(v, values)
    })
}

fn wrong_type(calls: &[Call]) -> Option<Vec<Call>> {
    replace_first(calls, |_, _, v| match v {
        Value::Number(n) => Some(Value::from(n.to_string())),
        _ => None,
    })
}

fn wrong_name(entry: &CallEntry, calls: &[Call]) -> Option<Vec<Call>> {
    let mut out = calls.to_vec();
    let first = out.first_mut()?;
    let name = format!("{}{UNLISTED}", first.name);
    let provided = entry
        .functions
        .iter()
        .any(|f| f.get("name").and_then(Value::as_str) == Some(&name));
    if provided {
        return None;
    }
    first.name = name;
    Some(out)
}

/// Builds one forged output for an entry; `None` when the forgery does not apply to it
/// (not in the table for this kind, or the entry lacks what it needs: no optional parameter,
/// no scalar to corrupt, no number, fewer than two calls).
pub fn forge(
    forgery: Forgery,
    kind: CategoryKind,
    language: Language,
    entry: &CallEntry,
) -> Option<String> {
    intended(kind, forgery)?;
    let types = Types::new(&entry.functions);
    let text = |calls: &[Call]| calls_text(calls, language, types);
    let correct = || correct_calls(entry).filter(|c| !c.is_empty());
    match forgery {
        Forgery::Correct => correct().map(|c| text(&c)),
        Forgery::WithOptional => {
            let c = correct()?;
            let o = answer_calls(entry.answer.as_ref()?, &entry.functions, true)?;
            (o != c).then(|| text(&o))
        }
        Forgery::WrongValue => wrong_value(entry, &correct()?).map(|c| text(&c)),
        Forgery::WrongType => wrong_type(&correct()?).map(|c| text(&c)),
        Forgery::WrongName => wrong_name(entry, &correct()?).map(|c| text(&c)),
        Forgery::MissingCall => {
            let mut c = correct()?;
            (c.len() >= 2).then(|| {
                c.pop();
                text(&c)
            })
        }
        Forgery::ExtraCall => {
            let mut c = correct()?;
            (c.len() >= 2).then(|| {
                c.push(c[0].clone());
                text(&c)
            })
        }
        Forgery::Empty => Some(String::new()),
        Forgery::Refusal => Some(REFUSAL.into()),
        Forgery::Garbage => Some(GARBAGE.into()),
        Forgery::BrokenSyntax => {
            let t = text(&correct()?);
            // `[f(a=1), g(b=2)]` → `[f(a=1), g(b=2]`: the last call never closes.
            let cut = t.strip_suffix(")]")?;
            Some(format!("{cut}]"))
        }
        Forgery::JsonSyntax => correct().map(|c| calls_json(&c)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry() -> CallEntry {
        CallEntry {
            id: "simple_python_0".into(),
            functions: vec![json!({"name": "calculate_triangle_area", "parameters": {
                "type": "dict",
                "properties": {"base": {"type": "integer"}, "height": {"type": "integer"},
                               "unit": {"type": "string"}},
                "required": ["base", "height"]}})],
            answer: Some(vec![json!({"calculate_triangle_area": {
                "base": [10], "height": [5], "unit": ["units", ""]}})]),
        }
    }

    fn parallel() -> CallEntry {
        CallEntry {
            id: "parallel_0".into(),
            functions: vec![
                json!({"name": "spotify.play", "parameters": {"type": "dict",
                "properties": {"artist": {"type": "string"}, "duration": {"type": "integer"}},
                "required": ["artist", "duration"]}}),
            ],
            answer: Some(vec![
                json!({"spotify.play": {"artist": ["Taylor Swift"], "duration": [20]}}),
                json!({"spotify.play": {"artist": ["Maroon 5"], "duration": [15]}}),
            ]),
        }
    }

    fn f(x: Forgery, e: &CallEntry) -> Option<String> {
        forge(x, CategoryKind::Ast, Language::Python, e)
    }

    #[test]
    fn every_ast_forgery_of_a_simple_entry() {
        let e = entry();
        assert_eq!(
            f(Forgery::Correct, &e).unwrap(),
            "[calculate_triangle_area(base=10, height=5)]"
        );
        assert_eq!(
            f(Forgery::WithOptional, &e).unwrap(),
            "[calculate_triangle_area(base=10, height=5, unit=\"units\")]"
        );
        assert_eq!(
            f(Forgery::WrongValue, &e).unwrap(),
            "[calculate_triangle_area(base=11, height=5)]"
        );
        assert_eq!(
            f(Forgery::WrongType, &e).unwrap(),
            "[calculate_triangle_area(base=\"10\", height=5)]"
        );
        assert_eq!(
            f(Forgery::WrongName, &e).unwrap(),
            "[calculate_triangle_area_unlisted(base=10, height=5)]"
        );
        assert_eq!(
            f(Forgery::BrokenSyntax, &e).unwrap(),
            "[calculate_triangle_area(base=10, height=5]"
        );
        assert_eq!(
            f(Forgery::JsonSyntax, &e).unwrap(),
            r#"[{"arguments":{"base":10,"height":5},"name":"calculate_triangle_area"}]"#
        );
        assert_eq!(f(Forgery::Empty, &e).unwrap(), "");
        // One call: no missing or extra call.
        assert!(f(Forgery::MissingCall, &e).is_none());
        assert!(f(Forgery::ExtraCall, &e).is_none());
    }

    #[test]
    fn parallel_entries_get_a_missing_and_an_extra_call() {
        let e = parallel();
        assert_eq!(
            f(Forgery::MissingCall, &e).unwrap(),
            "[spotify.play(artist=\"Taylor Swift\", duration=20)]"
        );
        assert_eq!(
            f(Forgery::ExtraCall, &e).unwrap(),
            "[spotify.play(artist=\"Taylor Swift\", duration=20), spotify.play(artist=\"Maroon 5\", duration=15), spotify.play(artist=\"Taylor Swift\", duration=20)]"
        );
        // No optional parameter: nothing to add.
        assert!(f(Forgery::WithOptional, &e).is_none());
        assert_eq!(
            f(Forgery::WrongValue, &e).unwrap(),
            "[spotify.play(artist=\"zqxv\", duration=20), spotify.play(artist=\"Maroon 5\", duration=15)]"
        );
    }

    #[test]
    fn schema_required_parameters_and_dict_answers_are_written_as_a_model_would() {
        let e = CallEntry {
            id: "x".into(),
            functions: vec![json!({"name": "g", "parameters": {"properties": {
                "n": {"type": "integer"}, "fmt": {"type": "boolean"}, "body": {"type": "dict"}},
                "required": ["n", "fmt"]}})],
            answer: Some(vec![json!({"g": {"n": [450], "fmt": [true, ""],
                "body": [{"limit": [50], "mode": ["", "fast"]}]}})]),
        };
        assert_eq!(
            f(Forgery::Correct, &e).unwrap(),
            "[g(body={\"limit\": 50}, fmt=True, n=450)]"
        );
        assert_eq!(
            f(Forgery::WithOptional, &e).unwrap(),
            "[g(body={\"limit\": 50, \"mode\": \"fast\"}, fmt=True, n=450)]"
        );
    }

    #[test]
    fn a_wrong_value_is_never_an_accepted_one() {
        let values = [json!(true), json!(false)];
        assert_eq!(outside(&json!(true), &values), None);
        assert_eq!(outside(&json!(3), &[json!(3), json!(4)]), Some(json!(5)));
        // 2.0 accepted as 2: the float candidate avoids both.
        assert_eq!(outside(&json!(2.0), &[json!(2)]), Some(json!(3.5)));
        assert_eq!(outside(&json!("x"), &[json!("zqxv")]), None);
    }

    #[test]
    fn relevance_and_irrelevance_build_from_the_schema() {
        let mut e = entry();
        e.answer = None;
        let c = forge(
            Forgery::Correct,
            CategoryKind::Irrelevance,
            Language::Python,
            &e,
        );
        assert_eq!(c.unwrap(), "[calculate_triangle_area(base=1, height=1)]");
        assert!(
            forge(
                Forgery::WrongValue,
                CategoryKind::Relevance,
                Language::Python,
                &e
            )
            .is_none()
        );
        assert_eq!(anchor(CategoryKind::Irrelevance), Forgery::Refusal);
        assert_eq!(
            intended(CategoryKind::Irrelevance, Forgery::JsonSyntax),
            Some(Quality::Lower)
        );
    }

    #[test]
    fn every_kind_has_one_anchor_and_every_anchor_is_built() {
        for kind in [
            CategoryKind::Ast,
            CategoryKind::Relevance,
            CategoryKind::Irrelevance,
        ] {
            let anchors: Vec<Forgery> = Forgery::ALL
                .into_iter()
                .filter(|x| intended(kind, *x) == Some(Quality::Anchor))
                .collect();
            assert_eq!(anchors, vec![anchor(kind)], "{kind:?}");
        }
    }
}
