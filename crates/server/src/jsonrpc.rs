//! JSON-RPC checks in front of the MCP SDK, shared by MCP over HTTP and over stdio, so a
//! malformed message is answered as JSON-RPC 2.0 says (never dropped, never plain text):
//!
//! * not JSON → −32700 parse error (id null);
//! * JSON but not a message (not an object, a batch, `jsonrpc` ≠ "2.0", a method that is not
//!   a string, an id that is neither a string nor a number) → −32600 invalid request;
//! * `tools/call` whose `name` is missing or not a string, or whose `arguments` is not an
//!   object → −32602 invalid params (the SDK would answer −32601, as if the method were
//!   unknown).
//!
//! * a message that passes these checks but that the SDK's own types refuse (JSON nested past
//!   serde_json's 128 levels, params of another shape) → −32600 with its id ([`parse`]).
//!
//! Over HTTP the −32700 and −32600 come with status 400, −32602 with 200 (a well-formed request
//! answered with an error). [`check`] scans the message once without building it (large
//! arguments are skipped, not copied); [`parse`], which both transports use, then parses it as
//! the SDK will, so no message reaches the SDK only to be refused there.

use std::fmt;
use std::marker::PhantomData;

use rmcp::model::ClientJsonRpcMessage;
use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Value, json};

use crate::answer::{MAX_ERROR_BYTES, cap};

/// JSON-RPC's parse error.
pub const PARSE_ERROR: i32 = -32700;
/// JSON-RPC's invalid request.
pub const INVALID_REQUEST: i32 = -32600;
/// JSON-RPC's invalid params.
pub const INVALID_PARAMS: i32 = -32602;

/// Longest string id echoed back; a longer one is itself an invalid request.
pub const MAX_ID_BYTES: usize = 256;

/// A message refused before the SDK saw it, and the error response owed for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    /// The request's id when it could be read, else null.
    pub id: Value,
    /// The JSON-RPC error code.
    pub code: i32,
    /// What was wrong (bounded).
    pub message: String,
}

impl Rejection {
    /// A rejection whose message is cut to [`MAX_ERROR_BYTES`].
    pub fn new(id: Value, code: i32, message: impl Into<String>) -> Self {
        Rejection {
            id,
            code,
            message: cap(&message.into(), MAX_ERROR_BYTES),
        }
    }

    /// The HTTP status that carries this error: 400 for a message that is not a valid
    /// request, 200 for a valid request answered with an error.
    pub fn http_status(&self) -> u16 {
        if self.code == INVALID_PARAMS {
            200
        } else {
            400
        }
    }

    /// The error response.
    pub fn to_json(&self) -> Value {
        json!({"jsonrpc": "2.0", "id": self.id, "error": {"code": self.code, "message": self.message}})
    }
}

/// The JSON type of a value, read without keeping the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool => "a boolean",
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Array => "an array",
            Kind::Object => "an object",
        }
    }
}

/// A visitor that records the kind of anything and skips its content.
struct KindVisitor;

impl<'de> Visitor<'de> for KindVisitor {
    type Value = Kind;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Kind, E> {
        Ok(Kind::Bool)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Kind, E> {
        Ok(Kind::Number)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Kind, E> {
        Ok(Kind::Number)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Kind, E> {
        Ok(Kind::Number)
    }
    fn visit_str<E>(self, _: &str) -> Result<Kind, E> {
        Ok(Kind::String)
    }
    fn visit_unit<E>(self) -> Result<Kind, E> {
        Ok(Kind::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Kind, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Kind::Array)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Kind, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Kind::Object)
    }
}

struct AnyKind(Kind);

impl<'de> Deserialize<'de> for AnyKind {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(KindVisitor).map(AnyKind)
    }
}

/// A small value (id, method, jsonrpc, name) kept when it is a string or a number; anything
/// else is recorded by kind only.
#[derive(Debug, Clone, PartialEq)]
enum Small {
    Str(String),
    Num(serde_json::Number),
    Other(Kind),
}

impl<'de> Deserialize<'de> for Small {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Small;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Small, E> {
                Ok(Small::Other(Kind::Bool))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Small, E> {
                Ok(Small::Num(n.into()))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Small, E> {
                Ok(Small::Num(n.into()))
            }
            fn visit_f64<E>(self, n: f64) -> Result<Small, E> {
                Ok(serde_json::Number::from_f64(n).map_or(Small::Other(Kind::Number), Small::Num))
            }
            fn visit_str<E>(self, s: &str) -> Result<Small, E> {
                Ok(Small::Str(s.to_string()))
            }
            fn visit_unit<E>(self) -> Result<Small, E> {
                Ok(Small::Other(Kind::Null))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Small, A::Error> {
                KindVisitor.visit_seq(seq).map(Small::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Small, A::Error> {
                KindVisitor.visit_map(map).map(Small::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// A type read from a JSON object, or standing for another value by its kind.
trait FromObject: Sized {
    fn from_kind(kind: Kind) -> Self;
    fn from_map<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
}

/// Visits an object with `T::from_map`, anything else with `T::from_kind`.
struct ObjectVisitor<T>(PhantomData<T>);

impl<'de, T: FromObject> Visitor<'de> for ObjectVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::from_map(map)
    }
    fn visit_bool<E>(self, _: bool) -> Result<T, E> {
        Ok(T::from_kind(Kind::Bool))
    }
    fn visit_i64<E>(self, _: i64) -> Result<T, E> {
        Ok(T::from_kind(Kind::Number))
    }
    fn visit_u64<E>(self, _: u64) -> Result<T, E> {
        Ok(T::from_kind(Kind::Number))
    }
    fn visit_f64<E>(self, _: f64) -> Result<T, E> {
        Ok(T::from_kind(Kind::Number))
    }
    fn visit_str<E>(self, _: &str) -> Result<T, E> {
        Ok(T::from_kind(Kind::String))
    }
    fn visit_unit<E>(self) -> Result<T, E> {
        Ok(T::from_kind(Kind::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        KindVisitor.visit_seq(seq).map(T::from_kind)
    }
}

/// `params`: its kind, and for an object its `name` and the kind of its `arguments`.
#[derive(Debug, Default)]
struct Params {
    kind: Option<Kind>,
    name: Option<Small>,
    arguments: Option<Kind>,
}

impl FromObject for Params {
    fn from_kind(kind: Kind) -> Self {
        Params {
            kind: Some(kind),
            ..Params::default()
        }
    }
    fn from_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut p = Params::from_kind(Kind::Object);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "name" => p.name = Some(map.next_value()?),
                "arguments" => p.arguments = Some(map.next_value::<AnyKind>()?.0),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(p)
    }
}

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjectVisitor(PhantomData))
    }
}

/// The top of a message.
#[derive(Debug, Default)]
struct Top {
    kind: Option<Kind>,
    jsonrpc: Option<Small>,
    id: Option<Small>,
    method: Option<Small>,
    params: Option<Params>,
    result: bool,
    error: bool,
}

impl FromObject for Top {
    fn from_kind(kind: Kind) -> Self {
        Top {
            kind: Some(kind),
            ..Top::default()
        }
    }
    fn from_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut t = Top::from_kind(Kind::Object);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "jsonrpc" => t.jsonrpc = Some(map.next_value()?),
                "id" => t.id = Some(map.next_value()?),
                "method" => t.method = Some(map.next_value()?),
                "params" => t.params = Some(map.next_value()?),
                other => {
                    map.next_value::<IgnoredAny>()?;
                    t.result |= other == "result";
                    t.error |= other == "error";
                }
            }
        }
        Ok(t)
    }
}

impl<'de> Deserialize<'de> for Top {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjectVisitor(PhantomData))
    }
}

/// Checks a message's shape (see the module docs). `Ok` means the SDK may have it.
pub fn check(bytes: &[u8]) -> Result<(), Rejection> {
    let top: Top = serde_json::from_slice(bytes)
        .map_err(|e| Rejection::new(Value::Null, PARSE_ERROR, format!("Parse error: {e}")))?;
    let invalid = |id: &Value, why: String| Rejection::new(id.clone(), INVALID_REQUEST, why);
    match top.kind {
        Some(Kind::Object) => {}
        Some(Kind::Array) => {
            return Err(invalid(
                &Value::Null,
                "Invalid Request: batches (JSON arrays) are not supported; send one message per request".into(),
            ));
        }
        other => {
            return Err(invalid(
                &Value::Null,
                format!(
                    "Invalid Request: a JSON-RPC message is an object, got {}",
                    other.map_or("nothing", Kind::name)
                ),
            ));
        }
    }
    let id = match &top.id {
        None => Value::Null,
        Some(Small::Num(n)) => Value::Number(n.clone()),
        Some(Small::Str(s)) if s.len() <= MAX_ID_BYTES => Value::String(s.clone()),
        Some(Small::Str(_)) => {
            return Err(invalid(
                &Value::Null,
                format!("Invalid Request: id longer than {MAX_ID_BYTES} bytes"),
            ));
        }
        Some(Small::Other(k)) => {
            return Err(invalid(
                &Value::Null,
                format!(
                    "Invalid Request: id must be a string or a number, got {}",
                    k.name()
                ),
            ));
        }
    };
    if top.jsonrpc != Some(Small::Str("2.0".into())) {
        return Err(invalid(
            &id,
            "Invalid Request: `jsonrpc` must be \"2.0\"".into(),
        ));
    }
    match &top.method {
        Some(Small::Str(method)) => {
            if method == "tools/call" && top.id.is_some() {
                check_tool_call(&id, top.params.as_ref())?;
            }
            Ok(())
        }
        Some(_) => Err(invalid(
            &id,
            "Invalid Request: `method` must be a string".into(),
        )),
        None if top.id.is_some() && (top.result ^ top.error) => Ok(()),
        None => Err(invalid(
            &id,
            "Invalid Request: a message needs a `method` (request, notification) or an `id` with `result` or `error` (response)".into(),
        )),
    }
}

fn check_tool_call(id: &Value, params: Option<&Params>) -> Result<(), Rejection> {
    let bad = |why: String| Rejection::new(id.clone(), INVALID_PARAMS, why);
    let Some(params) = params.filter(|p| p.kind == Some(Kind::Object)) else {
        return Err(bad(format!(
            "Invalid params: tools/call needs params, an object with `name`; got {}",
            params.and_then(|p| p.kind).map_or("none", Kind::name)
        )));
    };
    match &params.name {
        Some(Small::Str(_)) => {}
        None => {
            return Err(bad(
                "Invalid params: tools/call needs `name`, the tool's name".into(),
            ));
        }
        Some(Small::Num(_)) => {
            return Err(bad(
                "Invalid params: tools/call `name` must be a string, got a number".into(),
            ));
        }
        Some(Small::Other(k)) => {
            return Err(bad(format!(
                "Invalid params: tools/call `name` must be a string, got {}",
                k.name()
            )));
        }
    }
    match params.arguments {
        None | Some(Kind::Object | Kind::Null) => Ok(()),
        Some(k) => Err(bad(format!(
            "Invalid params: tools/call `arguments` must be an object, got {}",
            k.name()
        ))),
    }
}

/// Checks, then parses for the SDK: a message the SDK's own types refuse is an invalid
/// request (with its id).
pub fn parse(bytes: &[u8]) -> Result<ClientJsonRpcMessage, Rejection> {
    check(bytes)?;
    serde_json::from_slice(bytes).map_err(|e| {
        let id = serde_json::from_slice::<Top>(bytes)
            .ok()
            .and_then(|t| match t.id {
                Some(Small::Num(n)) => Some(Value::Number(n)),
                Some(Small::Str(s)) => Some(Value::String(s)),
                _ => None,
            })
            .unwrap_or(Value::Null);
        Rejection::new(id, INVALID_REQUEST, format!("Invalid Request: {e}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(text: &str) -> Option<(i32, Value)> {
        check(text.as_bytes()).err().map(|r| (r.code, r.id))
    }

    #[test]
    fn malformed_messages_get_the_right_code_and_id() {
        for (text, want) in [
            ("{bad", Some((PARSE_ERROR, Value::Null))),
            ("", Some((PARSE_ERROR, Value::Null))),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"x"} trailing"#,
                Some((PARSE_ERROR, Value::Null)),
            ),
            ("[1,2]", Some((INVALID_REQUEST, Value::Null))),
            (r#""str""#, Some((INVALID_REQUEST, Value::Null))),
            (
                r#"{"jsonrpc":"1.0","id":1,"method":"tools/list"}"#,
                Some((INVALID_REQUEST, json!(1))),
            ),
            (
                r#"{"id":"a","method":"tools/list"}"#,
                Some((INVALID_REQUEST, json!("a"))),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
                Some((INVALID_REQUEST, json!(1))),
            ),
            (
                r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#,
                Some((INVALID_REQUEST, Value::Null)),
            ),
            (
                r#"{"jsonrpc":"2.0","id":7}"#,
                Some((INVALID_REQUEST, json!(7))),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
                Some((INVALID_PARAMS, json!(1))),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}"#,
                Some((INVALID_PARAMS, json!(1))),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
                Some((INVALID_PARAMS, json!(1))),
            ),
            (
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5}}"#,
                Some((INVALID_PARAMS, json!(2))),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"z","method":"tools/call","params":{"name":"fetch_page","arguments":[1]}}"#,
                Some((INVALID_PARAMS, json!("z"))),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fetch_page","arguments":{"page":1}}}"#,
                None,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_task_info"}}"#,
                None,
            ),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                None,
            ),
            (r#"{"jsonrpc":"2.0","id":3,"result":{}}"#, None),
        ] {
            assert_eq!(code(text), want, "{text}");
        }
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#,
            "x".repeat(MAX_ID_BYTES + 1)
        );
        assert_eq!(code(&long), Some((INVALID_REQUEST, Value::Null)));
    }

    #[test]
    fn rejections_are_json_rpc_errors_with_bounded_messages() {
        let huge = format!("{{\"{}\": ", "k".repeat(1 << 20));
        let r = check(huge.as_bytes()).expect_err("not JSON");
        assert!(
            r.message.len() <= MAX_ERROR_BYTES + 3,
            "{}",
            r.message.len()
        );
        assert_eq!(r.http_status(), 400);
        let v = r.to_json();
        assert_eq!(
            (
                v["jsonrpc"].clone(),
                v["id"].clone(),
                v["error"]["code"].clone()
            ),
            (json!("2.0"), Value::Null, json!(PARSE_ERROR))
        );
        let ok = parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        assert!(ok.is_ok(), "{ok:?}");
    }
}
