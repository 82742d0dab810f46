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

/// The largest token count one response may claim (2^40, about a trillion): anything above is
/// a provider bug (a value near `u64::MAX` has been seen in the wild), not a measurement, and is
/// treated as not reported.
pub const MAX_PLAUSIBLE_TOKENS: u64 = 1 << 40;

/// Reads a usage object (`prompt_tokens`/`completion_tokens`, or `input_tokens`/`output_tokens`).
/// `None` when the provider reported no plausible completion count (the caller then
/// estimates); an implausible prompt count reads as 0.
pub fn parse_usage(usage: Option<&Value>) -> Option<Usage> {
    let u = usage?.as_object()?;
    let plausible = |n: u64| (n <= MAX_PLAUSIBLE_TOKENS).then_some(n);
    let completion = count(u.get("completion_tokens"))
        .or_else(|| count(u.get("output_tokens")))
        .and_then(plausible)?;
    let prompt = count(u.get("prompt_tokens"))
        .or_else(|| count(u.get("input_tokens")))
        .and_then(plausible)
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

/// Tool calls written in text rather than in the protocol's envelope: every JSON object in the
/// text (bounded by [`MAX_OBJECT_STARTS`]) that names one of `tools` under `name`, `tool` or
/// `function` (a string, or an object with a `name`), possibly wrapped as `{"tool_call": {…}}`
/// (llama.cpp's generic format), with its arguments under `arguments`, `parameters`, `args` or
/// `input`. Qwen models served without a tool template write `{"name": "fetch_page",
/// "arguments": {…}}` as plain content (local-llm.md defect 5).
pub fn calls_in_text(text: &str, tools: &[&str]) -> Vec<(String, Value)> {
    let mut calls = Vec::new();
    let mut from = 0;
    for _ in 0..MAX_OBJECT_STARTS {
        let Some(i) = text[from..].find('{').map(|i| i + from) else {
            break;
        };
        let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(Value::Object(m))) => {
                if let Some(call) = named_call(&m, tools, 0) {
                    calls.push(call);
                }
                from = i + stream.byte_offset();
            }
            _ => from = i + 1,
        }
    }
    calls
}

fn named_call(m: &Map<String, Value>, tools: &[&str], depth: u8) -> Option<(String, Value)> {
    if depth > 2 {
        return None;
    }
    for wrapper in ["tool_call", "function_call", "call"] {
        if let Some(Value::Object(inner)) = m.get(wrapper)
            && let Some(c) = named_call(inner, tools, depth + 1)
        {
            return Some(c);
        }
    }
    let name = ["name", "tool", "function", "tool_name"]
        .iter()
        .find_map(|k| match m.get(*k)? {
            Value::String(s) => Some(s.clone()),
            Value::Object(f) => f.get("name").and_then(Value::as_str).map(str::to_string),
            _ => None,
        })?;
    if !tools.contains(&name.as_str()) {
        return None;
    }
    let args = ["arguments", "parameters", "args", "input"]
        .iter()
        .find_map(|k| m.get(*k))
        .or_else(|| {
            ["function"]
                .iter()
                .find_map(|k| m.get(*k)?.get("arguments"))
        });
    Some((name, parse_arguments(args)))
}

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
    fn absurd_usage_is_rejected_not_summed() {
        // A provider sending u64::MAX must not overflow an episode's sums.
        let u = json!({"prompt_tokens": u64::MAX, "completion_tokens": 5});
        assert_eq!(
            parse_usage(Some(&u)),
            Some(Usage {
                prompt_tokens: 0,
                completion_tokens: 5
            })
        );
        let u = json!({"prompt_tokens": 3, "completion_tokens": u64::MAX - 1});
        assert_eq!(parse_usage(Some(&u)), None);
        let u = json!({"prompt_tokens": 3, "completion_tokens": 1e300});
        assert_eq!(parse_usage(Some(&u)), None);
    }

    #[test]
    fn calls_in_the_wrong_envelope_are_found_only_for_offered_tools() {
        let tools = ["get_task_info", "fetch_page"];
        let text = "I will call it:\n```json\n{\"name\": \"fetch_page\", \"arguments\": {\"page\": 1}}\n```\nthen {\"tool_call\": {\"name\": \"get_task_info\", \"arguments\": {}}} and {\"name\": \"rm_rf\"}";
        assert_eq!(
            calls_in_text(text, &tools),
            vec![
                ("fetch_page".to_string(), json!({"page": 1})),
                ("get_task_info".to_string(), json!({})),
            ]
        );
        assert!(calls_in_text("{\"page\": 1} no names here", &tools).is_empty());
        // Nested objects inside a found call are not read again as calls of their own.
        let nested = "{\"name\": \"fetch_page\", \"arguments\": {\"name\": \"get_task_info\"}}";
        assert_eq!(calls_in_text(nested, &tools).len(), 1);
    }

    #[test]
    fn first_object_skips_prose_and_fences() {
        let m =
            first_json_object("Sure! ```json\n{\"a\": {\"b\": 1}} ``` trailing {x").expect("found");
        assert_eq!(Value::Object(m), json!({"a": {"b": 1}}));
        assert!(first_json_object("{not json} nothing").is_none());
    }
}
