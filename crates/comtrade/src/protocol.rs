//! The wire shapes of the three tools: options, argument parsing (untrusted JSON in, a typed
//! value or a 422 envelope out) and the response envelopes.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::record::{Row, RowJson, RowWriter};
use crate::task::TaskSpec;

/// How argument errors are flagged: `legacy` copies the released API (422 with `retry: true`,
/// the same envelope as a transient fault: the trap behind paper C.6); `strict` says `false`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum InterfaceProfile {
    /// Faithful to the released benchmark.
    #[default]
    Legacy,
    /// Argument errors are not retryable.
    Strict,
}

/// The wording of `fetch_page`'s `page` argument a model is shown (paper C.6). `clarified`
/// (the default) states the base: pages are 1-indexed and page 0 is rejected. `ambiguous`
/// says only "Page number", leaving the base to the model. The paper's own harness text is
/// not published (docs/decisions.md), so neither is called "released".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum ToolText {
    /// The base stated: "Page number, 1-based. Page 0 or below is rejected …".
    #[default]
    Clarified,
    /// No base stated: "Page number. …".
    Ambiguous,
}

impl ToolText {
    /// Both wordings, the default first.
    pub const ALL: [ToolText; 2] = [ToolText::Clarified, ToolText::Ambiguous];

    /// The command-line, manifest and pre-registration name.
    pub fn name(self) -> &'static str {
        match self {
            ToolText::Clarified => "clarified",
            ToolText::Ambiguous => "ambiguous",
        }
    }

    /// Looks a wording up by name.
    pub fn parse(name: &str) -> Option<ToolText> {
        ToolText::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The description of `fetch_page`'s `page` argument: the one text every door (in-process
    /// LLM tools, MCP) shows.
    pub fn page_description(self) -> &'static str {
        match self {
            ToolText::Clarified => {
                "Page number, 1-based. Page 0 or below is rejected with status 422 and still spends one request \
of the budget; a page past the end returns no rows and has_more false."
            }
            ToolText::Ambiguous => {
                "Page number. An invalid page is rejected with status 422 and still spends one request of the \
budget; a page past the end returns no rows and has_more false."
            }
        }
    }
}

impl std::fmt::Display for ToolText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How the agent hands its records back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum SubmissionProtocol {
    /// Re-emit every record in one `submit_results` call (the paper's L2).
    #[default]
    Full,
    /// Submit record ids only; ids resolve against rows actually served to this episode.
    Ids,
    /// `append_results` chunks before the final `submit_results`.
    Chunked,
}

/// Everything about an episode that is not (task, seed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Hash)]
#[serde(default, deny_unknown_fields)]
pub struct EpisodeOptions {
    /// Argument-error envelope.
    pub interface: InterfaceProfile,
    /// Submission protocol.
    pub submission: SubmissionProtocol,
    /// Overrides the task's request budget (a quota); `None` keeps `max_requests`.
    pub max_requests: Option<u32>,
}

/// A tool failure as the agent sees it: `{status, error, retry, retry_after_s?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolError {
    /// HTTP-style status (422, 429, 500, 409 …).
    pub status: u16,
    /// Human-readable reason.
    pub error: String,
    /// Whether the API invites a retry.
    pub retry: bool,
    /// Suggested wait before retrying, in seconds.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub retry_after_s: Option<u32>,
}

impl ToolError {
    /// A non-retryable error with a status.
    pub fn fatal(status: u16, error: impl Into<String>) -> Self {
        ToolError {
            status,
            error: error.into(),
            retry: false,
            retry_after_s: None,
        }
    }

    /// The envelope as a JSON object.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status, self.error)
    }
}

impl std::error::Error for ToolError {}

/// Every tool an episode can offer (`append_results` only under the chunked protocol).
pub const TOOL_NAMES: [&str; 4] = [
    "get_task_info",
    "fetch_page",
    "submit_results",
    "append_results",
];

/// Longest piece of the caller's input an error message quotes, in bytes.
pub const MAX_ECHO_BYTES: usize = 64;

/// `s` cut to at most [`MAX_ECHO_BYTES`] at a character boundary, `…` marking a cut.
pub fn echo(s: &str) -> String {
    if s.len() <= MAX_ECHO_BYTES {
        return s.to_string();
    }
    let mut end = MAX_ECHO_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// The tool-argument error envelope, the one every door returns (in-process tools, REST,
/// MCP; docs/server.md "Errors"): status 422, the reason, and the interface profile's retry
/// flag — `true` under `legacy` (the released API's trap, paper C.6), `false` under `strict`.
/// Range errors the episode finds (page 0, page_size 0) and arguments that cannot be read at
/// all (a missing `page`, a string where an integer belongs, an unknown argument) get the
/// same envelope; only the first spend a request of the budget (docs/decisions.md).
pub fn argument_envelope(profile: InterfaceProfile, error: impl Into<String>) -> ToolError {
    ToolError {
        status: 422,
        error: error.into(),
        retry: profile == InterfaceProfile::Legacy,
        retry_after_s: None,
    }
}

/// The envelope of a call naming no tool of an episode under `protocol` (`append_results`
/// outside `chunked` included): status 404, `retry: false`, the name quoted (cut to
/// [`MAX_ECHO_BYTES`]) and the protocol's tools listed. MCP carries it as its protocol
/// error's `data`.
pub fn unknown_tool(name: &str, protocol: SubmissionProtocol) -> ToolError {
    ToolError::fatal(
        404,
        format!(
            "unknown tool `{}` (tools: {})",
            echo(name),
            protocol.tool_names().join(", ")
        ),
    )
}

/// Arguments of `get_task_info`: none. An empty object (or no arguments at all) is the only
/// valid call; an unknown argument is refused as every tool refuses one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskInfoArgs;

impl TaskInfoArgs {
    /// Reads `{}` (or null) from untrusted JSON.
    pub fn from_json(args: &Value) -> Result<Self, ArgumentError> {
        if args.is_null() {
            return Ok(TaskInfoArgs);
        }
        reject_unknown(object(args)?, &[]).map(|()| TaskInfoArgs)
    }
}

/// Arguments of `fetch_page`, validated only for type here; ranges are the episode's business
/// because the answer (422 and its retry flag) depends on the interface profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchPageArgs {
    /// Requested page (1-based when valid).
    pub page: i64,
    /// Requested page size; the task's size is served regardless.
    pub page_size: Option<i64>,
}

/// Why tool arguments could not be read at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid arguments: {0}")]
pub struct ArgumentError(pub String);

impl ArgumentError {
    /// The error as the tool-argument envelope ([`argument_envelope`]) under `profile`.
    pub fn envelope(&self, profile: InterfaceProfile) -> ToolError {
        argument_envelope(profile, self.to_string())
    }
}

/// A JSON value read as an integer the way the tools read page numbers: `2`, `2.0`, `"2"` and
/// `" +2 "` are all 2 (lenient like the released FastAPI service); anything else is `None`.
/// The L0 slot reader uses it too, so "the same number written differently" means one thing.
pub fn as_integer(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| f as i64)
        }),
        // Lenient like the released FastAPI service: "2" is page 2. The whitespace trimmed is
        // ASCII's, so the tool schemas can state exactly what is read
        // ([`crate::schema::INTEGER_TEXT_PATTERN`]).
        Value::String(s) => s
            .trim_matches(|c: char| c.is_ascii_whitespace())
            .parse()
            .ok(),
        _ => None,
    }
}

fn object(args: &Value) -> Result<&Map<String, Value>, ArgumentError> {
    match args {
        Value::Object(m) => Ok(m),
        Value::Null => Err(ArgumentError(
            "expected an object of arguments, got null".into(),
        )),
        other => Err(ArgumentError(format!(
            "expected an object of arguments, got {}",
            type_name(other)
        ))),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn reject_unknown(m: &Map<String, Value>, known: &[&str]) -> Result<(), ArgumentError> {
    match m.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) if known.is_empty() => Err(ArgumentError(format!(
            "unknown argument `{}` (this tool takes no arguments)",
            echo(k)
        ))),
        Some(k) => Err(ArgumentError(format!(
            "unknown argument `{}` (expected {})",
            echo(k),
            known.join(", ")
        ))),
        None => Ok(()),
    }
}

impl FetchPageArgs {
    /// Reads `{page, page_size?}` from untrusted JSON.
    pub fn from_json(args: &Value) -> Result<Self, ArgumentError> {
        let m = object(args)?;
        reject_unknown(m, &["page", "page_size"])?;
        let page = match m.get("page") {
            None => return Err(ArgumentError("missing argument `page`".into())),
            Some(v) => as_integer(v).ok_or_else(|| {
                ArgumentError(format!("`page` must be an integer, got {}", type_name(v)))
            })?,
        };
        let page_size = match m.get("page_size") {
            None | Some(Value::Null) => None,
            Some(v) => Some(as_integer(v).ok_or_else(|| {
                ArgumentError(format!(
                    "`page_size` must be an integer, got {}",
                    type_name(v)
                ))
            })?),
        };
        Ok(FetchPageArgs { page, page_size })
    }
}

/// Arguments of `submit_results` (and, with only `data_jsonl`, of `append_results`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SubmitArgs {
    /// Records as JSON Lines (`full` and `chunked`).
    pub data_jsonl: Option<String>,
    /// Record ids (`ids` protocol).
    pub record_ids: Option<Vec<String>>,
    /// The metadata.json text.
    pub metadata_json: Option<String>,
    /// The run.log text.
    pub run_log: Option<String>,
}

fn opt_text(m: &Map<String, Value>, key: &str) -> Result<Option<String>, ArgumentError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        // Agents often pass the metadata object itself: keep its JSON text.
        Some(v @ (Value::Object(_) | Value::Array(_)))
            if key == "metadata_json" || key == "metadata" =>
        {
            Ok(Some(v.to_string()))
        }
        Some(v) => Err(ArgumentError(format!(
            "`{key}` must be a string, got {}",
            type_name(v)
        ))),
    }
}

impl SubmitArgs {
    /// Reads submission arguments from untrusted JSON. `data` and `metadata` are accepted as
    /// aliases (the paper writes `submit_results(data, metadata, run_log)`).
    pub fn from_json(args: &Value) -> Result<Self, ArgumentError> {
        let m = object(args)?;
        reject_unknown(
            m,
            &[
                "data_jsonl",
                "data",
                "record_ids",
                "metadata_json",
                "metadata",
                "run_log",
            ],
        )?;
        let alias = |a: &str, b: &str| -> Result<Option<String>, ArgumentError> {
            Ok(opt_text(m, a)?.or(opt_text(m, b)?))
        };
        let metadata = alias("metadata_json", "metadata")?;
        let record_ids = match m.get("record_ids") {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .map(|v| match v {
                        Value::String(s) => Ok(s.clone()),
                        other => Err(ArgumentError(format!(
                            "`record_ids` must hold strings, found {}",
                            type_name(other)
                        ))),
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Some(v) => {
                return Err(ArgumentError(format!(
                    "`record_ids` must be an array, got {}",
                    type_name(v)
                )));
            }
        };
        Ok(SubmitArgs {
            data_jsonl: alias("data_jsonl", "data")?,
            record_ids,
            metadata_json: metadata,
            run_log: opt_text(m, "run_log")?,
        })
    }
}

/// Arguments of `append_results`: exactly `data_jsonl`, a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppendArgs {
    /// More records as JSON Lines.
    pub data_jsonl: String,
}

impl AppendArgs {
    /// Reads `{data_jsonl}` from untrusted JSON.
    pub fn from_json(args: &Value) -> Result<Self, ArgumentError> {
        let m = object(args)?;
        reject_unknown(m, &["data_jsonl"])?;
        match m.get("data_jsonl") {
            None => Err(ArgumentError("missing argument `data_jsonl`".into())),
            Some(Value::String(s)) => Ok(AppendArgs {
                data_jsonl: s.clone(),
            }),
            Some(v) => Err(ArgumentError(format!(
                "`data_jsonl` must be a string, got {}",
                type_name(v)
            ))),
        }
    }
}

/// A successful `fetch_page` answer.
#[derive(Debug, Clone, PartialEq)]
pub struct PageResponse {
    /// Rows as served, faults included.
    pub rows: Vec<Row>,
    /// Page requested.
    pub page: i64,
    /// Page size echoed back (the argument, or the task's size when absent).
    pub page_size: i64,
    /// Number of non-empty pages.
    pub total_pages: u32,
    /// Size of the canonical set.
    pub total_rows: u32,
    /// Whether a later page holds rows.
    pub has_more: bool,
    /// Requests used so far, this one included.
    pub request: u32,
}

impl PageResponse {
    /// The answer's JSON bytes as the REST API sends them: `{"rows":[…],"page":…,
    /// "page_size":…,"total_pages":…,"total_rows":…,"has_more":…,"request":…}` in that order,
    /// the same bytes serde_json writes for these fields, the rows written by [`RowWriter`].
    pub fn write_json(&self, task: &TaskSpec, out: &mut Vec<u8>) {
        let writer = RowWriter::for_task(task);
        out.reserve(self.rows.len() * writer.typical_row_len() + 160);
        out.extend_from_slice(b"{\"rows\":[");
        writer.write_rows(&self.rows, b',', out);
        let mut num = itoa::Buffer::new();
        out.extend_from_slice(b"],\"page\":");
        out.extend_from_slice(num.format(self.page).as_bytes());
        out.extend_from_slice(b",\"page_size\":");
        out.extend_from_slice(num.format(self.page_size).as_bytes());
        out.extend_from_slice(b",\"total_pages\":");
        out.extend_from_slice(num.format(self.total_pages).as_bytes());
        out.extend_from_slice(b",\"total_rows\":");
        out.extend_from_slice(num.format(self.total_rows).as_bytes());
        out.extend_from_slice(if self.has_more {
            b",\"has_more\":true,\"request\":"
        } else {
            b",\"has_more\":false,\"request\":"
        });
        out.extend_from_slice(num.format(self.request).as_bytes());
        out.push(b'}');
    }

    /// [`PageResponse::write_json`]'s bytes as a JSON string (quoted and escaped as serde_json
    /// escapes a string): the text copy of the page MCP carries, written from escaped parts
    /// rather than by escaping the written page.
    pub fn write_json_string(&self, task: &TaskSpec, out: &mut Vec<u8>) {
        let writer = RowWriter::for_task(task);
        out.reserve(self.rows.len() * (writer.typical_row_len() + 24) + 200);
        out.extend_from_slice(br#""{\"rows\":["#);
        writer.write_rows_escaped(&self.rows, b',', out);
        let mut num = itoa::Buffer::new();
        out.extend_from_slice(br#"],\"page\":"#);
        out.extend_from_slice(num.format(self.page).as_bytes());
        out.extend_from_slice(br#",\"page_size\":"#);
        out.extend_from_slice(num.format(self.page_size).as_bytes());
        out.extend_from_slice(br#",\"total_pages\":"#);
        out.extend_from_slice(num.format(self.total_pages).as_bytes());
        out.extend_from_slice(br#",\"total_rows\":"#);
        out.extend_from_slice(num.format(self.total_rows).as_bytes());
        out.extend_from_slice(if self.has_more {
            br#",\"has_more\":true,\"request\":"#
        } else {
            br#",\"has_more\":false,\"request\":"#
        });
        out.extend_from_slice(num.format(self.request).as_bytes());
        out.extend_from_slice(br#"}""#);
    }

    /// The answer as the released JSON object.
    pub fn to_json(&self, task: &TaskSpec) -> Value {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|row| serde_json::to_value(RowJson { task, row }).unwrap_or(Value::Null))
            .collect();
        serde_json::json!({
            "rows": rows,
            "page": self.page,
            "page_size": self.page_size,
            "total_pages": self.total_pages,
            "total_rows": self.total_rows,
            "has_more": self.has_more,
            "request": self.request,
        })
    }
}

/// `get_task_info`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskInfo {
    /// Task id.
    pub task_id: &'static str,
    /// What the task asks.
    pub description: &'static str,
    /// The query to run and report.
    pub query: crate::task::Query,
    /// Paging and budget constraints.
    pub constraints: Constraints,
    /// Requests spent so far.
    pub requests_used: u32,
    /// Requests left in the budget.
    pub requests_remaining: u32,
    /// What to submit and how.
    pub instructions: String,
}

/// The constraints block of `get_task_info`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Constraints {
    /// Rows per page.
    pub page_size: u32,
    /// Request budget (or quota) of this episode.
    pub max_requests: u32,
    /// Released paging description.
    pub paging_mode: crate::task::PagingMode,
    /// Advisory rate limit.
    pub rate_limit_qps: u32,
    /// Size of the canonical set.
    pub total_rows: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fetch_args_are_lenient_on_numbers_and_strict_on_shape() {
        assert_eq!(
            FetchPageArgs::from_json(&json!({"page": 2})),
            Ok(FetchPageArgs {
                page: 2,
                page_size: None
            })
        );
        assert_eq!(
            FetchPageArgs::from_json(&json!({"page": "3", "page_size": 10.0}))
                .map(|a| (a.page, a.page_size)),
            Ok((3, Some(10)))
        );
        assert!(FetchPageArgs::from_json(&json!({"page": 1.5})).is_err());
        assert!(FetchPageArgs::from_json(&json!({"page": [1]})).is_err());
        assert!(FetchPageArgs::from_json(&json!({})).is_err());
        assert!(FetchPageArgs::from_json(&json!({"page": 1, "pg": 2})).is_err());
        assert!(FetchPageArgs::from_json(&json!("page")).is_err());
    }

    #[test]
    fn task_info_takes_no_arguments() {
        assert!(TaskInfoArgs::from_json(&json!({})).is_ok());
        assert!(TaskInfoArgs::from_json(&Value::Null).is_ok());
        assert_eq!(
            TaskInfoArgs::from_json(&json!({"task_id": "T1_single_page"}))
                .map_err(|e| e.to_string()),
            Err(
                "invalid arguments: unknown argument `task_id` (this tool takes no arguments)"
                    .into()
            )
        );
        assert!(TaskInfoArgs::from_json(&json!([])).is_err());
    }

    #[test]
    fn integers_as_text_trim_ascii_whitespace_only() {
        assert_eq!(as_integer(&json!(" \t+7\r\n")), Some(7));
        assert_eq!(as_integer(&json!("-2")), Some(-2));
        assert_eq!(as_integer(&json!("\u{a0}7")), None);
        assert_eq!(as_integer(&json!("\u{b}7")), None);
        assert_eq!(as_integer(&json!("7.0")), None);
    }

    #[test]
    fn unknown_tools_list_the_protocols_tools() {
        let full = unknown_tool("append_results", SubmissionProtocol::Full);
        assert_eq!((full.status, full.retry), (404, false));
        assert_eq!(
            full.error,
            "unknown tool `append_results` (tools: get_task_info, fetch_page, submit_results)"
        );
        let chunked = unknown_tool("nope", SubmissionProtocol::Chunked);
        assert!(
            chunked.error.ends_with("submit_results, append_results)"),
            "{}",
            chunked.error
        );
    }

    #[test]
    fn page_bytes_hold_the_page_json() {
        use crate::{Episode, task::tasks};
        for t in tasks() {
            let mut ep = Episode::new(t, 5, EpisodeOptions::default());
            for page in 1..=i64::from(t.total_pages()) + 1 {
                let Ok(p) = ep.fetch_page(FetchPageArgs {
                    page,
                    page_size: Some(7),
                }) else {
                    continue;
                };
                let mut bytes = Vec::new();
                p.write_json(t, &mut bytes);
                let mut string = Vec::new();
                p.write_json_string(t, &mut string);
                let want = serde_json::to_vec(&String::from_utf8(bytes.clone()).expect("utf-8"))
                    .expect("json");
                assert_eq!(string, want, "{} page {page} as a string", t.task_id);
                let parsed: Value = serde_json::from_slice(&bytes).expect("valid JSON");
                assert_eq!(parsed, p.to_json(t), "{} page {page}", t.task_id);
                let text = String::from_utf8(bytes).expect("utf-8");
                assert!(
                    text.starts_with("{\"rows\":[")
                        && text.ends_with(&format!(",\"request\":{}}}", p.request))
                );
            }
        }
    }

    #[test]
    fn submit_args_accept_aliases_and_metadata_objects() {
        let a = SubmitArgs::from_json(
            &json!({"data": "x\n", "metadata": {"row_count": 1}, "run_log": "ok"}),
        )
        .expect("args");
        assert_eq!(a.data_jsonl.as_deref(), Some("x\n"));
        assert_eq!(a.metadata_json.as_deref(), Some(r#"{"row_count":1}"#));
        assert!(SubmitArgs::from_json(&json!({"record_ids": [1]})).is_err());
        // The alias takes what metadata_json takes: text, or the value itself.
        assert!(SubmitArgs::from_json(&json!({"metadata": 5})).is_err());
        assert_eq!(
            SubmitArgs::from_json(&json!({"metadata_json": "{}", "metadata": {"a": 1}}))
                .map(|a| a.metadata_json),
            Ok(Some("{}".into()))
        );
        assert!(SubmitArgs::from_json(&json!({"run_log": 5})).is_err());
    }
}
