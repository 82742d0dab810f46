//! What the model is told: the L2 system and task prompts, the tool schemas (every argument
//! described, mirroring the MCP server's descriptions so a model sees the same tools through
//! either door), and the one-question prompts of L0 (slot filling) and L1 (retry or skip),
//! with the lenient parsers of their answers.
//!
//! The prompts never mention the task: at L2 the model learns it from `get_task_info`, at L0
//! from the `get_task_info` JSON the harness hands over, at L1 from the fault report.

use benchaudit_comtrade::{SubmissionProtocol, TaskInfo, ToolText};
use serde_json::{Map, Value, json};

use crate::llm::messages::first_json_object;
use crate::policy::{FaultContext, FaultDecision, Slots};

/// One tool as offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Name.
    pub name: &'static str,
    /// What it does and returns.
    pub description: &'static str,
    /// JSON Schema of the arguments.
    pub parameters: Value,
}

impl ToolSpec {
    /// The `tools` entry of a chat-completions request.
    pub fn to_openai(&self) -> Value {
        json!({"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.parameters}})
    }
}

const TASK_INFO: &str = "The task: its id, description, the query to run, constraints (page_size, max_requests, \
paging_mode, rate_limit_qps, total_rows), requests used and remaining, and instructions. Costs no budget.";
const FETCH_PAGE: &str = "Fetches one page of trade records. Success: {rows, page, page_size, total_pages, total_rows, \
has_more, request}. Failure: {status, error, retry, retry_after_s?} — 429 and 500 are transient API faults, 422 an \
invalid argument, 429 with retry false means the request budget is spent. Every call spends one request of the \
budget, rejected ones included.";
const SUBMIT: &str = "Submits the cleaned records with metadata_json and run_log, once per episode, and returns \
{done, reward, scores: {f1, precision, recall, judge, judge_breakdown}, errors}. A second call is an error \
(status 409).";
const APPEND: &str = "Chunked submission protocol: sends records in pieces before the final submit_results. \
Returns {appended, lines_held}.";

const PAGE_SIZE: &str = "Rows per page you ask for (1..=1000). Echoed back; the task's own page size is what is \
served. An out-of-range value is rejected with status 422.";
const DATA_JSONL: &str = "The records, one JSON object per line (JSON Lines), one line per unique record, without \
totals rows.";
const DATA_JSONL_CHUNKED: &str = "Any records not yet sent with append_results, one JSON object per line (JSON \
Lines), without totals rows.";
const RECORD_IDS: &str =
    "The record_id of every unique record (ids protocol: instead of the records themselves).";
const METADATA: &str = "metadata.json as text: a JSON object with task_id, query, row_count, schema (the field \
names), dedup_key (the primary-key fields) and optionally request_count.";
const RUN_LOG: &str =
    "run.log as text: what you did, request by request (faults, retries, pages, completion).";
const APPEND_DATA: &str = "More records, one JSON object per line, held until submit_results.";

fn schema(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

/// The tools of an episode under `protocol`: the three tools, `append_results` when chunked,
/// and `submit_results` taking `record_ids` under the ids protocol; `page` described in the
/// wording `text` ([`ToolText::page_description`], the same text MCP shows).
pub fn tool_specs(protocol: SubmissionProtocol, text: ToolText) -> Vec<ToolSpec> {
    let page_text = text.page_description();
    let text = |d: &str| json!({"type": "string", "description": d});
    let submit = match protocol {
        SubmissionProtocol::Full => schema(
            json!({"data_jsonl": text(DATA_JSONL), "metadata_json": text(METADATA), "run_log": text(RUN_LOG)}),
            &["data_jsonl", "metadata_json", "run_log"],
        ),
        SubmissionProtocol::Ids => schema(
            json!({"record_ids": {"type": "array", "items": {"type": "string"}, "description": RECORD_IDS},
                   "metadata_json": text(METADATA), "run_log": text(RUN_LOG)}),
            &["record_ids", "metadata_json", "run_log"],
        ),
        SubmissionProtocol::Chunked => schema(
            json!({"data_jsonl": text(DATA_JSONL_CHUNKED), "metadata_json": text(METADATA), "run_log": text(RUN_LOG)}),
            &["metadata_json", "run_log"],
        ),
    };
    let mut tools = vec![
        ToolSpec {
            name: "get_task_info",
            description: TASK_INFO,
            parameters: schema(json!({}), &[]),
        },
        ToolSpec {
            name: "fetch_page",
            description: FETCH_PAGE,
            parameters: schema(
                json!({"page": {"type": "integer", "description": page_text},
                       "page_size": {"type": "integer", "description": PAGE_SIZE}}),
                &["page"],
            ),
        },
    ];
    if protocol == SubmissionProtocol::Chunked {
        tools.push(ToolSpec {
            name: "append_results",
            description: APPEND,
            parameters: schema(json!({"data_jsonl": text(APPEND_DATA)}), &["data_jsonl"]),
        });
    }
    tools.push(ToolSpec {
        name: "submit_results",
        description: SUBMIT,
        parameters: submit,
    });
    tools
}

/// The L2 system prompt (native tool calling).
pub fn system_prompt(step_limit: u32) -> String {
    format!(
        "You are an agent that completes data-extraction tasks by calling tools. You act only through the tools; \
         each tool result is returned to you. You can make at most {step_limit} tool calls. The episode ends when \
         submit_results accepts your submission, or when you reply without calling a tool."
    )
}

/// The L2 task prompt: the model learns the task itself from `get_task_info`.
pub const TASK_PROMPT: &str = "Complete the data-extraction task offered by your tools. Call get_task_info first \
to learn the task, its query, its constraints and how to submit.";

/// The L0 question: fill the templated slots from the task description.
pub fn slots_prompt(info: &TaskInfo) -> Vec<Value> {
    let info = serde_json::to_string_pretty(info).unwrap_or_default();
    vec![
        json!({"role": "system", "content": "You configure a data-extraction harness. The harness fetches, cleans and \
submits the data itself; you only fill its template. Reply with one JSON object and nothing else."}),
        json!({"role": "user", "content": format!(
            "Task (the answer of get_task_info):\n{info}\n\nFill the harness template: reply with a JSON object with \
the keys reporter, partner, flow, hs (strings: the query to run), year (integer), start_page (integer: the first \
page to fetch) and max_pages (integer: stop after this many pages, or null for no limit).")}),
    ]
}

/// The L1 question: retry or skip one transient fault.
pub fn fault_prompt(fault: &FaultContext) -> Vec<Value> {
    let report = serde_json::to_string_pretty(fault).unwrap_or_default();
    vec![
        json!({"role": "system", "content": "You supervise a data-extraction harness. The harness pages through an API, \
deduplicates and submits the records itself; when the API returns a transient fault it asks you one question: \
retry the failed page (spending one more request of the budget) or skip it (its records will be missing). \
Reply with exactly one word: retry or skip."}),
        json!({"role": "user", "content": format!("The API returned a transient fault:\n{report}\n\nRetry or skip?")}),
    ]
}

fn text_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn int_of(v: Option<&Value>) -> Option<i64> {
    benchaudit_comtrade::protocol::as_integer(v?)
}

fn slots_from(m: &Map<String, Value>) -> Slots {
    Slots {
        reporter: text_of(m.get("reporter")),
        partner: text_of(m.get("partner")),
        flow: text_of(m.get("flow")),
        hs: text_of(m.get("hs")),
        year: int_of(m.get("year")),
        start_page: int_of(m.get("start_page")),
        max_pages: int_of(m.get("max_pages")).and_then(|n| u32::try_from(n).ok()),
    }
}

/// Reads slots leniently: the first JSON object in the answer (fences and prose tolerated,
/// numbers for strings and strings for numbers accepted). `None` when the answer holds no JSON
/// object; the caller then uses empty slots and the harness falls back to the task's values.
pub fn parse_slots(answer: &str) -> Option<Slots> {
    first_json_object(answer).map(|m| slots_from(&m))
}

/// Reads an L1 answer leniently: the bare word (any case, quotes and punctuation ignored),
/// `{"decision": …}`, or prose naming exactly one of the two words. `None` when it is
/// unreadable or names both. Words are runs of letters, digits and `_`, and JSON objects in
/// the answer are not prose: an echoed fault report (`"retry_after_s": 1`) is no "retry"
/// (local-llm.md defect 1).
pub fn parse_decision(answer: &str) -> Option<FaultDecision> {
    let word = |w: &str| match w {
        "retry" => Some(FaultDecision::Retry),
        "skip" => Some(FaultDecision::Skip),
        _ => None,
    };
    let lower = answer.to_ascii_lowercase();
    let bare = lower
        .trim()
        .trim_matches(|c: char| !c.is_ascii_alphanumeric());
    if let Some(d) = word(bare) {
        return Some(d);
    }
    if let Some(m) = first_json_object(&lower)
        && let Some(d) = ["decision", "answer", "action"].iter().find_map(|k| {
            m.get(*k)
                .and_then(Value::as_str)
                .and_then(|s| word(s.trim()))
        })
    {
        return Some(d);
    }
    let prose = without_json_objects(&lower);
    let words: Vec<&str> = prose
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    let has = |w: &str| words.contains(&w);
    match (has("retry"), has("skip")) {
        (true, false) => Some(FaultDecision::Retry),
        (false, true) => Some(FaultDecision::Skip),
        _ => None,
    }
}

/// The text with every JSON object in it cut out (bounded like [`first_json_object`]).
fn without_json_objects(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    let mut starts = 0;
    while let Some(i) = text[from..].find('{').map(|i| i + from) {
        starts += 1;
        if starts > crate::llm::messages::MAX_OBJECT_STARTS {
            break;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        out.push_str(&text[from..i]);
        match stream.next() {
            Some(Ok(Value::Object(_))) => {
                out.push(' ');
                from = i + stream.byte_offset();
            }
            _ => {
                out.push('{');
                from = i + 1;
            }
        }
    }
    out.push_str(&text[from..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_specs_match_the_scaffold_tools_and_describe_every_argument() {
        for protocol in [
            SubmissionProtocol::Full,
            SubmissionProtocol::Ids,
            SubmissionProtocol::Chunked,
        ] {
            let specs = tool_specs(protocol, ToolText::Clarified);
            let mut names: Vec<&str> = specs.iter().map(|t| t.name).collect();
            let mut expected = protocol.tool_names().to_vec();
            names.sort_unstable();
            expected.sort_unstable();
            assert_eq!(names, expected, "{protocol:?}");
            for t in &specs {
                let props = t.parameters["properties"]
                    .as_object()
                    .expect("object schema");
                for (name, p) in props {
                    let d = p["description"].as_str().unwrap_or("");
                    assert!(d.len() > 20, "{}.{name} undocumented", t.name);
                }
                for r in t.parameters["required"].as_array().expect("required") {
                    assert!(
                        props.contains_key(r.as_str().unwrap_or("")),
                        "{}: {r}",
                        t.name
                    );
                }
            }
        }
        let ids = tool_specs(SubmissionProtocol::Ids, ToolText::Clarified);
        let submit = ids
            .iter()
            .find(|t| t.name == "submit_results")
            .expect("submit");
        assert!(submit.parameters["properties"].get("record_ids").is_some());
        assert!(submit.parameters["properties"].get("data_jsonl").is_none());
    }

    #[test]
    fn the_tool_text_states_the_page_base_only_when_clarified() {
        let page = |t: ToolText| {
            let specs = tool_specs(SubmissionProtocol::Full, t);
            let fetch = specs
                .iter()
                .find(|s| s.name == "fetch_page")
                .expect("fetch");
            fetch.parameters["properties"]["page"]["description"]
                .as_str()
                .unwrap_or("")
                .to_string()
        };
        let clarified = page(ToolText::Clarified);
        let ambiguous = page(ToolText::Ambiguous);
        assert!(clarified.contains("1-based") && clarified.contains("Page 0"));
        assert!(ambiguous.starts_with("Page number."), "{ambiguous}");
        for base in [
            "1-based",
            "1-indexed",
            "0-based",
            "0-indexed",
            "Page 0",
            "page 1",
        ] {
            assert!(!ambiguous.contains(base), "{base}: {ambiguous}");
        }
        // Only the page argument differs between the two wordings.
        let strip = |t: ToolText| {
            let mut v: Vec<_> = tool_specs(SubmissionProtocol::Full, t)
                .into_iter()
                .map(|s| s.to_openai())
                .collect();
            v[1]["function"]["parameters"]["properties"]["page"]["description"] = json!("");
            v
        };
        assert_eq!(strip(ToolText::Clarified), strip(ToolText::Ambiguous));
    }

    #[test]
    fn slots_parse_leniently() {
        let s = parse_slots("Here:\n```json\n{\"reporter\": 392, \"partner\": \"410\", \"flow\": \"M\", \"hs\": \"87\", \"year\": \"2020\", \"start_page\": 1, \"max_pages\": null}\n```")
            .expect("object");
        assert_eq!(s.reporter.as_deref(), Some("392"));
        assert_eq!(s.partner.as_deref(), Some("410"));
        assert_eq!(
            (s.year, s.start_page, s.max_pages),
            (Some(2020), Some(1), None)
        );
        assert_eq!(
            parse_slots("{\"max_pages\": -1}").and_then(|s| s.max_pages),
            None
        );
        assert_eq!(parse_slots("I cannot help with that."), None);
    }

    #[test]
    fn decisions_parse_leniently_and_refuse_ambiguity() {
        use FaultDecision::{Retry, Skip};
        for (answer, want) in [
            ("retry", Some(Retry)),
            ("  Skip.", Some(Skip)),
            ("\"RETRY\"", Some(Retry)),
            ("{\"decision\": \"skip\"}", Some(Skip)),
            ("I would retry the page.", Some(Retry)),
            ("retry or skip? skip!", None),
            ("wait", None),
            ("", None),
            ("retrying", None),
            // An echoed fault report is not a decision: `retry_after_s` is one word, and the
            // JSON object is not prose.
            ("{\"page\": 2, \"retry_after_s\": 1, \"status\": 429}", None),
            ("The fault: retry_after_s = 1.", None),
            ("Report {\"error\": \"retry later\"} so I skip", Some(Skip)),
        ] {
            assert_eq!(parse_decision(answer), want, "{answer:?}");
        }
    }

    #[test]
    fn prompts_do_not_leak_the_task() {
        let p = system_prompt(30) + TASK_PROMPT;
        for secret in ["T3", "392", "1-based", "page 1", "dedup"] {
            assert!(!p.contains(secret), "{secret}");
        }
        assert!(p.contains("30"));
    }
}
