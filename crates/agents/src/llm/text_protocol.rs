//! The text tool protocol, for models and servers without native tool calling: the tools are
//! described in the system prompt, the model writes `<tool_call>{"name": …, "arguments": …}
//! </tool_call>` in its reply, and results come back as `<tool_response>` user messages.
//! Parsing is lenient (code fences, `parameters` for `arguments`, arguments as a JSON string,
//! a missing closing tag when generation stopped at it), and a call that cannot be read is
//! still returned — with its raw text as arguments — so the scaffold answers it with a tool
//! error and counts it as malformed.

use serde_json::{Value, json};

use crate::llm::messages::{first_json_object, parse_arguments};
use crate::llm::prompts::ToolSpec;
use crate::policy::ToolCall;

/// Opening tag of a call.
pub const OPEN: &str = "<tool_call>";
/// Closing tag of a call (also the `stop` sequence when the model accepts one).
pub const CLOSE: &str = "</tool_call>";

/// The system prompt of the text protocol: the L2 system prompt plus the tool list and format.
pub fn system_prompt(base: &str, tools: &[ToolSpec]) -> String {
    let list: Vec<Value> = tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "parameters": t.parameters}))
        .collect();
    let list = serde_json::to_string_pretty(&list).unwrap_or_default();
    format!(
        "{base}\n\nTools (JSON Schema of each tool's arguments):\n{list}\n\nTo call a tool, write exactly one block \
         {OPEN}{{\"name\": \"TOOL\", \"arguments\": {{...}}}}{CLOSE} in your reply and stop; the result comes back \
         in a <tool_response> message. One call per reply."
    )
}

/// A tool result as the model reads it.
pub fn tool_response(name: &str, result: &Value) -> String {
    format!("<tool_response name=\"{name}\">\n{result}\n</tool_response>")
}

/// Every `<tool_call>` block of a reply, in order. A block whose JSON cannot be read becomes a
/// call named after whatever `"name"` it mentions (or `unparseable_tool_call`) with its raw
/// text as arguments.
pub fn parse_calls(content: &str) -> Vec<ToolCall> {
    let mut calls = Vec::new();
    let mut rest = content;
    while let Some(start) = rest.find(OPEN) {
        let after = &rest[start + OPEN.len()..];
        let (body, next) = match after.find(CLOSE) {
            Some(end) => (&after[..end], &after[end + CLOSE.len()..]),
            None => (after, ""),
        };
        calls.push(parse_one(body));
        rest = next;
    }
    calls
}

fn parse_one(body: &str) -> ToolCall {
    let raw = body.trim();
    if let Some(m) = first_json_object(raw) {
        let name = ["name", "tool", "function"]
            .iter()
            .find_map(|k| m.get(*k).and_then(Value::as_str))
            .map(str::to_string);
        if let Some(name) = name {
            let args = ["arguments", "parameters", "args", "input"]
                .iter()
                .find_map(|k| m.get(*k));
            return ToolCall {
                name,
                arguments: parse_arguments(args),
            };
        }
    }
    ToolCall {
        name: mentioned_name(raw).unwrap_or_else(|| "unparseable_tool_call".to_string()),
        arguments: Value::String(raw.to_string()),
    }
}

/// `"name": "x"` in text that is not valid JSON.
fn mentioned_name(raw: &str) -> Option<String> {
    let at = raw.find("\"name\"")?;
    let after = raw[at + 6..]
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix('"')?;
    let end = after.find('"')?;
    Some(after[..end].to_string()).filter(|n| !n.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_parse_with_fences_aliases_and_missing_close() {
        let calls = parse_calls(
            "Let me look.\n<tool_call>\n```json\n{\"name\": \"fetch_page\", \"parameters\": {\"page\": 2, \"page_size\": 10}}\n```\n</tool_call>\
             then <tool_call>{\"name\": \"get_task_info\", \"arguments\": \"{}\"}",
        );
        assert_eq!(
            calls,
            vec![
                ToolCall::new("fetch_page", json!({"page": 2, "page_size": 10})),
                ToolCall::new("get_task_info", json!({})),
            ]
        );
        assert!(parse_calls("no call here").is_empty());
    }

    #[test]
    fn unreadable_calls_are_kept_raw() {
        let calls = parse_calls(
            "<tool_call>{\"name\": \"fetch_page\", \"arguments\": {page: 1}}</tool_call>",
        );
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name, "fetch_page");
        assert!(calls[0].arguments.is_string());
        let calls = parse_calls("<tool_call>fetch the page please</tool_call>");
        assert_eq!(calls[0].name, "unparseable_tool_call");
        assert_eq!(calls[0].arguments, json!("fetch the page please"));
    }

    #[test]
    fn the_prompt_lists_every_tool() {
        let tools = crate::llm::prompts::tool_specs(
            benchaudit_comtrade::SubmissionProtocol::Full,
            benchaudit_comtrade::ToolText::Clarified,
        );
        let p = system_prompt("BASE", &tools);
        assert!(p.starts_with("BASE"));
        for t in &tools {
            assert!(p.contains(t.name));
        }
        assert!(p.contains(OPEN) && p.contains(CLOSE));
        assert_eq!(
            tool_response("x", &json!({"a": 1})),
            "<tool_response name=\"x\">\n{\"a\":1}\n</tool_response>"
        );
    }
}
