//! The tools as servers list them (MCP `tools/list`, OpenEnv `list_tools`): names per
//! submission protocol, descriptions, and the JSON Schemas of their arguments.
//!
//! The schemas state exactly what [`crate::protocol`]'s parsers read, leniency included, so a
//! client that validates against them and the server agree on every argument:
//!
//! * integers (`page`, `page_size`) may also be written as decimal strings (`"2"`), as the
//!   released FastAPI service read them ([`crate::protocol::as_integer`]); the schema says so
//!   with an `anyOf` branch `{"type": "string", "pattern": …}`;
//! * `metadata_json` may be the metadata value itself rather than its text;
//! * `submit_results` takes the paper's names `data` and `metadata` as aliases;
//! * `get_task_info` takes no arguments, and an unknown one is refused like any other tool's.
//!
//! What a schema admits and the episode still refuses is a range, not a type: `page` < 1,
//! `page_size` outside 1..=1000, integers beyond 64 bits (422, docs/servers.md). Every schema
//! sticks to keywords that validators compile with their default options: one `type` per
//! branch (`anyOf` for alternatives, as Ajv's strict mode asks), no `format`.

use serde_json::{Value, json};

use crate::protocol::{SubmissionProtocol, TOOL_NAMES, ToolText};

/// One tool of an episode as a server lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    /// The tool's name.
    pub name: &'static str,
    /// What it does and what it returns.
    pub description: &'static str,
    /// JSON Schema (draft 2020-12) of its arguments object.
    pub input_schema: Value,
}

impl SubmissionProtocol {
    /// The tools an episode under this protocol offers, in the order servers list them:
    /// `append_results` only under `chunked`. A call naming any other tool is an unknown tool.
    pub fn tool_names(self) -> &'static [&'static str] {
        match self {
            SubmissionProtocol::Chunked => &TOOL_NAMES,
            SubmissionProtocol::Full | SubmissionProtocol::Ids => &TOOL_NAMES[..3],
        }
    }
}

/// The JSON Schema dialect every tool schema declares.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// The whitespace [`crate::protocol::as_integer`] trims around an integer written as a string.
pub const INTEGER_TEXT_PATTERN: &str = "^[ \\t\\n\\f\\r]*[+-]?[0-9]+[ \\t\\n\\f\\r]*$";

const TASK_INFO: &str = "The task: its id, description, the query to run, constraints (page_size, max_requests, \
paging_mode, rate_limit_qps, total_rows), requests used and remaining, and instructions. Takes no arguments and \
costs no budget.";
const FETCH_PAGE: &str = "Fetches one page of trade records. Success: {rows, page, page_size, total_pages, \
total_rows, has_more, request}. Failure (an error result): {status, error, retry, retry_after_s?} — 429 and 500 are \
transient API faults, 422 an invalid argument, 429 with retry false means the request budget is spent. Every call \
spends one request of the budget, rejected ones included.";
const SUBMIT: &str = "Submits the cleaned records with metadata_json and run_log, once per episode, and returns \
{done, reward, scores: {f1, precision, recall, judge, judge_breakdown}, errors, score, breakdown}. A second call is \
an error (status 409).";
const APPEND: &str = "Chunked submission protocol: sends records in pieces before the final submit_results. \
Returns {appended, records_held}.";

const PAGE_SIZE: &str = "Rows per page you ask for (1..=1000). Echoed back; the task's own page size is what is \
served. An out-of-range value is rejected with status 422.";
const DATA_JSONL: &str = "The records, one JSON object per line (JSON Lines), one line per unique record, without \
totals rows. Under the chunked protocol: any records not yet sent with append_results.";
const DATA: &str =
    "Another name for data_jsonl (the paper's); data_jsonl wins when both are given.";
const RECORD_IDS: &str =
    "Under the ids protocol only: the record_id of every unique record, instead of data_jsonl.";
const METADATA_JSON: &str = "metadata.json: a JSON object with task_id, query, row_count, schema (the field names), \
dedup_key (the primary-key fields) and optionally request_count, as text or as the value itself.";
const METADATA: &str = "Another name for metadata_json (the paper's), read the same way; metadata_json wins when both are given.";
const RUN_LOG: &str =
    "run.log as text: what you did, request by request (faults, retries, pages, completion).";
const APPEND_DATA: &str = "More records, one JSON object per line, held until submit_results.";

/// `{"type": kind}`.
fn of(kind: &str) -> Value {
    json!({"type": kind})
}

/// An integer, or a decimal string that [`crate::protocol::as_integer`] reads as one.
fn integer_like() -> Vec<Value> {
    vec![
        of("integer"),
        json!({"type": "string", "pattern": INTEGER_TEXT_PATTERN}),
    ]
}

/// A property: alternatives in `anyOf` (one `type` each), described.
fn prop(description: &str, mut kinds: Vec<Value>) -> Value {
    match kinds.len() {
        1 => {
            let mut one = kinds.remove(0);
            one["description"] = description.into();
            one
        }
        // An empty list would constrain nothing; no property is written that way.
        _ => json!({"description": description, "anyOf": kinds}),
    }
}

fn object(properties: Value, required: &[&str]) -> Value {
    let mut schema = json!({
        "$schema": DIALECT,
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// The schema of `name`'s arguments; `page` described in wording `text`.
fn input_schema(name: &str, text: ToolText) -> Value {
    match name {
        "get_task_info" => object(json!({}), &[]),
        "fetch_page" => {
            let mut size = integer_like();
            size.push(of("null"));
            object(
                json!({
                    "page": prop(text.page_description(), integer_like()),
                    "page_size": prop(PAGE_SIZE, size),
                }),
                &["page"],
            )
        }
        "submit_results" => {
            let text_or_null = || vec![of("string"), of("null")];
            // The metadata as text, or the value itself (an array too: its text is kept).
            let metadata = || vec![of("string"), of("object"), of("array"), of("null")];
            let ids = json!({"type": "array", "items": {"type": "string"}});
            object(
                json!({
                    "data_jsonl": prop(DATA_JSONL, text_or_null()),
                    "data": prop(DATA, text_or_null()),
                    "record_ids": prop(RECORD_IDS, vec![ids, of("null")]),
                    "metadata_json": prop(METADATA_JSON, metadata()),
                    "metadata": prop(METADATA, metadata()),
                    "run_log": prop(RUN_LOG, text_or_null()),
                }),
                &[],
            )
        }
        _ => object(
            json!({"data_jsonl": prop(APPEND_DATA, vec![of("string")])}),
            &["data_jsonl"],
        ),
    }
}

/// The tools an episode under `protocol` offers ([`SubmissionProtocol::tool_names`]; the three
/// of every protocol when none is known), `fetch_page`'s `page` described in wording `text`.
pub fn tool_defs(protocol: Option<SubmissionProtocol>, text: ToolText) -> Vec<ToolDef> {
    protocol
        .unwrap_or_default()
        .tool_names()
        .iter()
        .map(|&name| ToolDef {
            name,
            description: match name {
                "get_task_info" => TASK_INFO,
                "fetch_page" => FETCH_PAGE,
                "submit_results" => SUBMIT,
                _ => APPEND,
            },
            input_schema: input_schema(name, text),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{AppendArgs, FetchPageArgs, SubmitArgs, TaskInfoArgs, as_integer};

    fn defs() -> Vec<ToolDef> {
        tool_defs(Some(SubmissionProtocol::Chunked), ToolText::Clarified)
    }

    /// Reads `args` with the parser of `tool`.
    fn parses(tool: &str, args: &Value) -> bool {
        match tool {
            "get_task_info" => TaskInfoArgs::from_json(args).is_ok(),
            "fetch_page" => FetchPageArgs::from_json(args).is_ok(),
            "submit_results" => SubmitArgs::from_json(args).is_ok(),
            _ => AppendArgs::from_json(args).is_ok(),
        }
    }

    #[test]
    fn each_protocol_lists_its_tools() {
        let names = |p| {
            tool_defs(Some(p), ToolText::Clarified)
                .iter()
                .map(|d| d.name)
                .collect::<Vec<_>>()
        };
        let three = ["get_task_info", "fetch_page", "submit_results"];
        assert_eq!(names(SubmissionProtocol::Full), three);
        assert_eq!(names(SubmissionProtocol::Ids), three);
        assert_eq!(
            names(SubmissionProtocol::Chunked),
            [&three[..], &["append_results"]].concat()
        );
        assert_eq!(tool_defs(None, ToolText::Clarified).len(), 3);
    }

    #[test]
    fn the_properties_are_what_the_parsers_read() {
        for d in defs() {
            let s = &d.input_schema;
            assert_eq!(
                (&s["$schema"], &s["type"], &s["additionalProperties"]),
                (&json!(DIALECT), &json!("object"), &json!(false)),
                "{}",
                d.name
            );
            let props = s["properties"].as_object().expect("properties");
            for (key, p) in props {
                assert!(
                    p["description"]
                        .as_str()
                        .is_some_and(|t| t.len() > 20 && !t.contains('\n')),
                    "{}.{key}: {p}",
                    d.name
                );
                // No `format` anywhere (Ajv refuses unknown formats), and no union `type`.
                let text = p.to_string();
                assert!(!text.contains("\"format\""), "{}.{key}: {text}", d.name);
                assert!(!p["type"].is_array(), "{}.{key}: {text}", d.name);
            }
            // A property the schema names is one the parser takes; any other is refused.
            let sample = |key: &str| match key {
                "page" | "page_size" => json!(1),
                "record_ids" => json!(["x"]),
                _ => json!("x"),
            };
            for key in props.keys() {
                let mut args = json!({key: sample(key)});
                if d.name == "fetch_page" && key != "page" {
                    args["page"] = json!(1);
                }
                assert!(parses(d.name, &args), "{}: {args}", d.name);
            }
            let mut extra = json!({"not_an_argument": 1});
            for r in s["required"].as_array().into_iter().flatten() {
                let key = r.as_str().expect("name");
                extra[key] = sample(key);
                // A required argument is required by the parser too.
                let mut without = extra.clone();
                without.as_object_mut().expect("object").remove(key);
                without
                    .as_object_mut()
                    .expect("object")
                    .remove("not_an_argument");
                assert!(!parses(d.name, &without), "{}: {without}", d.name);
            }
            assert!(!parses(d.name, &extra), "{}: {extra}", d.name);
        }
    }

    #[test]
    fn integer_text_is_what_as_integer_reads() {
        // The pattern's whitespace and sign are the parser's: a string matches the pattern
        // exactly when as_integer reads it (for numbers that fit in 64 bits).
        let pattern_matches = |s: &str| {
            let t = s.trim_matches(|c: char| " \t\n\u{c}\r".contains(c));
            let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
        };
        assert_eq!(
            INTEGER_TEXT_PATTERN, "^[ \\t\\n\\f\\r]*[+-]?[0-9]+[ \\t\\n\\f\\r]*$",
            "the pattern_matches mirror above follows this text"
        );
        for s in [
            "2",
            " 2 ",
            "\t-3\n",
            "+4",
            "007",
            "\r\n5\u{c}",
            "",
            " ",
            "+",
            "-",
            "2.0",
            "1e3",
            "0x10",
            "2 3",
            "\u{a0}2",
            "2\u{85}",
            "\u{3000}2",
            "\u{b}2",
            "٣",
            "+-2",
            "--2",
            "abc",
        ] {
            assert_eq!(as_integer(&json!(s)).is_some(), pattern_matches(s), "{s:?}");
        }
    }
}
