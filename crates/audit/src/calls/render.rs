//! Writing calls as a model would: the text a prompt-mode model emits for a list of calls, in
//! the syntax the category asks for (Python, Java or JavaScript values inside
//! `[name(param=value, …)]`), or as JSON objects (the "other syntax" forgery).

use serde_json::{Map, Value, json};

use super::Language;

/// One function call: a name and its arguments in parameter order.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The function name as the entry spells it (dots included).
    pub name: String,
    /// `(parameter, value)` pairs; values are JSON as the possible answer stores them.
    pub args: Vec<(String, Value)>,
}

/// Parameter types from an entry's function documents, used to spell Java and JavaScript
/// literals (a `long` needs `L`, an `ArrayList` needs `new ArrayList<>(…)`).
#[derive(Debug, Clone, Copy)]
pub struct Types<'a> {
    functions: &'a [Value],
}

impl<'a> Types<'a> {
    /// The types of an entry's functions.
    pub fn new(functions: &'a [Value]) -> Self {
        Types { functions }
    }

    fn param(&self, function: &str, param: &str) -> Option<&'a Value> {
        self.functions
            .iter()
            .find(|f| f.get("name").and_then(Value::as_str) == Some(function))
            .and_then(|f| f.pointer("/parameters/properties"))
            .and_then(|p| p.get(param))
    }

    /// The declared type of a parameter ("integer", "String", "ArrayList", …).
    pub fn of(&self, function: &str, param: &str) -> Option<&'a str> {
        self.param(function, param)?.get("type")?.as_str()
    }

    /// The declared item type of a collection parameter.
    pub fn items(&self, function: &str, param: &str) -> Option<&'a str> {
        self.param(function, param)?
            .get("items")?
            .get("type")?
            .as_str()
    }
}

/// The calls as prompt-mode text: `[f(a=1, b='x'), g()]`.
pub fn calls_text(calls: &[Call], language: Language, types: Types<'_>) -> String {
    let inner: Vec<String> = calls
        .iter()
        .map(|c| call_text(c, language, types))
        .collect();
    format!("[{}]", inner.join(", "))
}

/// One call in the category's syntax.
pub fn call_text(call: &Call, language: Language, types: Types<'_>) -> String {
    let args: Vec<String> = call
        .args
        .iter()
        .map(|(p, v)| {
            let value = match language {
                Language::Python => python(v),
                Language::Java => java(v, types.of(&call.name, p), types.items(&call.name, p)),
                Language::JavaScript => javascript(v),
            };
            format!("{p}={value}")
        })
        .collect();
    format!("{}({})", call.name, args.join(", "))
}

/// The calls as a JSON array of `{"name", "arguments"}` objects (the common tool-call JSON).
pub fn calls_json(calls: &[Call]) -> String {
    let v: Vec<Value> = calls
        .iter()
        .map(|c| {
            let args: Map<String, Value> = c.args.iter().cloned().collect();
            json!({"name": c.name, "arguments": args})
        })
        .collect();
    Value::Array(v).to_string()
}

/// A Python literal. Strings use JSON escapes, which Python string literals accept.
pub fn python(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(_) => v.to_string(),
        Value::Array(a) => format!("[{}]", a.iter().map(python).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), python(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A number with a decimal point (Java `double`/`float` and JavaScript floats need one to
/// read as floating point).
fn decimal(n: &serde_json::Number) -> String {
    let s = n.to_string();
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

fn quoted(s: &str) -> String {
    if s.contains(['"', '\\', '\n']) {
        Value::String(s.into()).to_string()
    } else {
        format!("\"{s}\"")
    }
}

/// The Java element type written in `new T[]{…}`.
fn java_element(t: Option<&str>) -> &'static str {
    match t {
        Some("integer") => "int",
        Some("long") => "long",
        Some("float") => "float",
        Some("double") => "double",
        Some("boolean") => "boolean",
        Some("char") => "char",
        Some("String") => "String",
        _ => "Object",
    }
}

/// A Java literal for a value of declared type `t` (element type `items`).
pub fn java(v: &Value, t: Option<&str>, items: Option<&str>) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match t {
            Some("long") => format!("{n}L"),
            Some("float") => format!("{}f", decimal(n)),
            Some("double") => decimal(n),
            _ => n.to_string(),
        },
        Value::String(s) => match t {
            Some("char") if s.chars().count() == 1 => format!("'{s}'"),
            _ => quoted(s),
        },
        Value::Array(a) => {
            let elems: Vec<String> = a.iter().map(|e| java(e, items, None)).collect();
            match t {
                Some("ArrayList") => {
                    format!("new ArrayList<>(Arrays.asList({}))", elems.join(", "))
                }
                _ => format!("new {}[]{{{}}}", java_element(items), elems.join(", ")),
            }
        }
        Value::Object(o) => {
            let puts: Vec<String> = o
                .iter()
                .map(|(k, v)| format!("put({}, {});", quoted(k), java(v, None, None)))
                .collect();
            format!("new HashMap<String, Object>() {{{{ {} }}}}", puts.join(" "))
        }
    }
}

/// A JavaScript literal.
pub fn javascript(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => quoted(s),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(javascript).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(o) => {
            format!(
                "{{{}}}",
                o.iter()
                    .map(|(k, v)| format!("{k}: {}", javascript(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn python_literals_round_trip_through_python_syntax() {
        let call = Call {
            name: "math.hypot".into(),
            args: vec![
                ("x".into(), json!(3)),
                ("y".into(), json!(4.5)),
                ("label".into(), json!("it's \"q\"")),
                ("flags".into(), json!([true, false, null])),
                ("opts".into(), json!({"k": [1, 2]})),
            ],
        };
        let t = calls_text(&[call], Language::Python, Types::new(&[]));
        assert_eq!(
            t,
            r#"[math.hypot(x=3, y=4.5, label="it's \"q\"", flags=[True, False, None], opts={"k": [1, 2]})]"#
        );
    }

    #[test]
    fn java_literals_follow_the_declared_types() {
        let f = vec![json!({"name": "F.g", "parameters": {"properties": {
            "n": {"type": "long"}, "r": {"type": "double"}, "s": {"type": "String"},
            "xs": {"type": "ArrayList", "items": {"type": "long"}},
            "a": {"type": "Array", "items": {"type": "integer"}}
        }}})];
        let call = Call {
            name: "F.g".into(),
            args: vec![
                ("n".into(), json!(42)),
                ("r".into(), json!(2)),
                ("s".into(), json!("hi")),
                ("xs".into(), json!([1, 2])),
                ("a".into(), json!([3, 4])),
            ],
        };
        assert_eq!(
            call_text(&call, Language::Java, Types::new(&f)),
            r#"F.g(n=42L, r=2.0, s="hi", xs=new ArrayList<>(Arrays.asList(1L, 2L)), a=new int[]{3, 4})"#
        );
    }

    #[test]
    fn json_syntax_carries_the_same_content() {
        let call = Call {
            name: "f".into(),
            args: vec![("a".into(), json!(1))],
        };
        assert_eq!(calls_json(&[call]), r#"[{"arguments":{"a":1},"name":"f"}]"#);
    }
}
