//! Lenient wire types for OpenAI-compatible chat completions. Providers disagree on the details
//! (crates.md: finish_reason "eos"/"abort"/"", missing id/object/index, float `created`, usage
//! without total_tokens, tool calls without "type", arguments as an object instead of a string),
//! so every field is optional or defaulted and arguments are kept as raw JSON. Requests are
//! built as JSON values so only the fields a model accepts are ever sent.

use serde::Deserialize;
use serde_json::{Map, Value, json};

/// A chat completion as any compatible server sends it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ChatResponse {
    /// Completion choices; only the first is used (we never ask for n > 1).
    pub choices: Vec<Choice>,
    /// Token accounting, in whatever shape the provider uses.
    pub usage: Option<Value>,
    /// An error object some servers return with HTTP 200.
    pub error: Option<Value>,
}

/// One choice.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Choice {
    /// The assistant's message.
    pub message: ResponseMessage,
    /// `stop`, `tool_calls`, `length`, `eos`, … or nothing.
    pub finish_reason: Option<String>,
}

/// The assistant's message.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ResponseMessage {
    /// Text: a string, an array of content parts, or null.
    pub content: Option<Value>,
    /// Native tool calls.
    pub tool_calls: Option<Vec<ResponseToolCall>>,
}

/// A native tool call.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ResponseToolCall {
    /// Call id (synthesised when missing).
    pub id: Option<String>,
    /// The function.
    pub function: ResponseFunction,
}

/// The function of a tool call.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ResponseFunction {
    /// Tool name.
    pub name: Option<String>,
    /// A JSON string (OpenAI) or an object (some servers).
    pub arguments: Option<Value>,
}

impl ResponseMessage {
    /// The text content, with content-part arrays concatenated.
    pub fn text(&self) -> String {
        match &self.content {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| match p {
                    Value::String(s) => Some(s.as_str()),
                    Value::Object(o) => o.get("text").and_then(Value::as_str),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(""),
            _ => String::new(),
        }
    }
}

/// Prompt and completion tokens of one response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens (reasoning tokens included where the provider counts them there).
    pub completion_tokens: u64,
}

fn count(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite() && *f >= 0.0)
                .map(|f| f.round() as u64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Reads a usage object (`prompt_tokens`/`completion_tokens`, or `input_tokens`/`output_tokens`).
/// `None` when the provider reported no completion count.
pub fn parse_usage(usage: Option<&Value>) -> Option<Usage> {
    let u = usage?.as_object()?;
    let completion = count(u.get("completion_tokens")).or_else(|| count(u.get("output_tokens")))?;
    let prompt = count(u.get("prompt_tokens"))
        .or_else(|| count(u.get("input_tokens")))
        .unwrap_or(0);
    Some(Usage {
        prompt_tokens: prompt,
        completion_tokens: completion,
    })
}

/// Reads tool-call arguments: an object is taken as is, a JSON string is parsed, an empty
/// string is `{}` (no-argument tools), anything unreadable is kept as the raw string so the
/// scaffold rejects it as malformed and counts it.
pub fn parse_arguments(raw: Option<&Value>) -> Value {
    match raw {
        None | Some(Value::Null) => json!({}),
        Some(Value::String(s)) if s.trim().is_empty() => json!({}),
        Some(Value::String(s)) => {
            serde_json::from_str::<Value>(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        Some(other) => other.clone(),
    }
}

/// Arguments as the string an assistant message must carry when sent back.
pub fn arguments_text(raw: Option<&Value>) -> String {
    match raw {
        None | Some(Value::Null) => "{}".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// A `{"role", "content"}` message.
pub fn message(role: &str, content: &str) -> Value {
    json!({"role": role, "content": content})
}

/// Opening braces tried by [`first_json_object`] before it gives up (bounds the work on long,
/// brace-heavy replies that hold no object).
pub const MAX_OBJECT_STARTS: usize = 256;

/// The first JSON object in free text (code fences and prose around it tolerated).
pub fn first_json_object(text: &str) -> Option<Map<String, Value>> {
    for (i, _) in text.match_indices('{').take(MAX_OBJECT_STARTS) {
        let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        if let Some(Ok(Value::Object(m))) = stream.next() {
            return Some(m);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_responses_from_other_providers_parse() {
        // No id/object/index, float created, finish_reason "eos", arguments as an object,
        // a tool call without "type", usage without total_tokens.
        let body = json!({
            "created": 1.7e9,
            "choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
                {"function": {"name": "fetch_page", "arguments": {"page": 1}}}
            ]}, "finish_reason": "eos"}],
            "usage": {"prompt_tokens": 10.0, "completion_tokens": 7},
            "service_tier": "on_demand"
        });
        let r: ChatResponse = serde_json::from_value(body).expect("lenient");
        let c = &r.choices[0];
        assert_eq!(c.finish_reason.as_deref(), Some("eos"));
        let call = &c.message.tool_calls.as_ref().expect("calls")[0];
        assert_eq!(
            parse_arguments(call.function.arguments.as_ref()),
            json!({"page": 1})
        );
        assert_eq!(
            arguments_text(call.function.arguments.as_ref()),
            r#"{"page":1}"#
        );
        assert_eq!(
            parse_usage(r.usage.as_ref()),
            Some(Usage {
                prompt_tokens: 10,
                completion_tokens: 7
            })
        );
    }

    #[test]
    fn content_parts_and_alternative_usage_names() {
        let m: ResponseMessage = serde_json::from_value(
            json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
        )
        .expect("parts");
        assert_eq!(m.text(), "ab");
        assert_eq!(
            parse_usage(Some(&json!({"input_tokens": 3, "output_tokens": "4"}))),
            Some(Usage {
                prompt_tokens: 3,
                completion_tokens: 4
            })
        );
        assert_eq!(parse_usage(Some(&json!({"prompt_tokens": 3}))), None);
        assert_eq!(parse_usage(None), None);
    }

    #[test]
    fn unreadable_arguments_stay_raw_so_they_are_counted() {
        assert_eq!(
            parse_arguments(Some(&json!("{\"page\": 1"))),
            json!("{\"page\": 1")
        );
        assert_eq!(parse_arguments(Some(&json!("  "))), json!({}));
        assert_eq!(parse_arguments(None), json!({}));
        assert_eq!(
            parse_arguments(Some(&json!("{\"page\":2}"))),
            json!({"page": 2})
        );
    }

    #[test]
    fn first_object_skips_prose_and_fences() {
        let m =
            first_json_object("Sure! ```json\n{\"a\": {\"b\": 1}} ``` trailing {x").expect("found");
        assert_eq!(Value::Object(m), json!({"a": {"b": 1}}));
        assert!(first_json_object("{not json} nothing").is_none());
    }
}
