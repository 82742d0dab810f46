//! OpenEnv's messages without IO: reset data and actions read from untrusted JSON, and the
//! observations, tool results and errors written back (the shapes `openenv-core` 0.3.0's
//! clients parse, plus the released ComtradeBench client's compatibility fields).

use benchaudit_comtrade::{SubmissionProtocol, ToolText};
use serde_json::{Map, Value, json};

use crate::app::{CreateEpisode, truncate};

/// OpenEnv's error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// The message is not JSON.
    InvalidJson,
    /// `type` names no message kind.
    UnknownType,
    /// The message or its action has the wrong shape.
    ValidationError,
    /// The message is well formed but cannot be carried out now.
    ExecutionError,
}

impl Code {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Code::InvalidJson => "INVALID_JSON",
            Code::UnknownType => "UNKNOWN_TYPE",
            Code::ValidationError => "VALIDATION_ERROR",
            Code::ExecutionError => "EXECUTION_ERROR",
        }
    }
}

/// A refused message: its code and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// OpenEnv's code.
    pub code: Code,
    /// What to change.
    pub message: String,
}

pub(super) fn refuse(code: Code, message: impl Into<String>) -> Refusal {
    Refusal {
        code,
        message: crate::answer::cap(&message.into(), crate::answer::MAX_ERROR_BYTES),
    }
}

/// A reset as OpenEnv sends it (`ResetRequest`: `seed` ≥ 0, `episode_id` ≤ 255 characters,
/// extra keys allowed), with this environment's keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reset {
    /// The episode to open.
    pub create: CreateEpisode,
    /// The client's name for it (echoed in `state`), if given.
    pub episode_id: Option<String>,
    /// Whether the seed was drawn (none given).
    pub seed_drawn: bool,
}

impl Reset {
    /// Reads reset `data`; `draw` supplies a seed when none is given.
    pub fn parse(data: &Value, draw: impl FnOnce() -> u64) -> Result<Reset, Refusal> {
        let empty = Map::new();
        let data = match data {
            Value::Object(m) => m,
            Value::Null => &empty,
            _ => {
                return Err(refuse(
                    Code::ValidationError,
                    "reset data must be a JSON object",
                ));
            }
        };
        let bad = |what: &str| refuse(Code::ValidationError, format!("reset: {what}"));
        let (seed, seed_drawn) = match data.get("seed") {
            None | Some(Value::Null) => (draw(), true),
            Some(v) => (
                v.as_u64()
                    .ok_or_else(|| bad("seed must be a whole number ≥ 0"))?,
                false,
            ),
        };
        let episode_id = match data.get("episode_id") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.chars().count() <= 255 => Some(s.clone()),
            Some(_) => return Err(bad("episode_id must be a string of at most 255 characters")),
        };
        let tasks = benchaudit_comtrade::tasks();
        let task_id = match data.get("task_id") {
            None | Some(Value::Null) => {
                // `tasks()` is the non-empty registry; the index is in range.
                let i = usize::try_from(seed % tasks.len().max(1) as u64).unwrap_or(0);
                tasks.get(i).map_or("", |t| t.task_id).to_string()
            }
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err(bad("task_id must be a string")),
        };
        // The episode options, read by the same rules as `POST /v1/episodes`' body.
        let mut body = json!({"task_id": task_id, "seed": seed});
        for key in ["interface", "submission", "max_requests", "reward"] {
            if let Some(v) = data.get(key).filter(|v| !v.is_null()) {
                body[key] = v.clone();
            }
        }
        let create: CreateEpisode =
            serde_json::from_value(body).map_err(|e| bad(&e.to_string()))?;
        create
            .task()
            .map_err(|f| refuse(Code::ValidationError, f.envelope.error))?;
        Ok(Reset {
            create,
            episode_id,
            seed_drawn,
        })
    }
}

/// An action of `step` (OpenEnv's `ListToolsAction` / `CallToolAction`, which forbid extra
/// fields besides `metadata`, and the empty action of the released ComtradeBench client).
#[derive(Debug, Clone, PartialEq)]
pub enum OpenEnvAction {
    /// `{}` (or only `metadata`): the released client's `ComtradeAction`, which carries no
    /// data. Nothing is done; the answer repeats the episode's reset metadata.
    NoOp,
    /// `{"type": "list_tools"}`.
    ListTools,
    /// `{"type": "call_tool", "tool_name", "arguments"}`.
    CallTool {
        /// The tool.
        name: String,
        /// Its arguments.
        arguments: Map<String, Value>,
    },
}

impl OpenEnvAction {
    /// Reads a step's `data`.
    pub fn parse(data: &Value) -> Result<OpenEnvAction, Refusal> {
        let Value::Object(m) = data else {
            return Err(refuse(
                Code::ValidationError,
                "an action must be a JSON object",
            ));
        };
        let kind = m.get("type").and_then(Value::as_str);
        let allowed: &[&str] = match kind {
            Some("list_tools") => &["type", "metadata"],
            Some("call_tool") => &["type", "metadata", "tool_name", "arguments"],
            Some(other) => {
                return Err(refuse(
                    Code::ValidationError,
                    format!(
                        "unknown action type `{}`: this environment takes list_tools and call_tool",
                        truncate(other)
                    ),
                ));
            }
            None if !m.contains_key("type") && m.keys().all(|k| k == "metadata") => &["metadata"],
            None => {
                return Err(refuse(
                    Code::ValidationError,
                    "the action has no `type` (list_tools or call_tool; the empty action {} does nothing)",
                ));
            }
        };
        if let Some(extra) = m.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(refuse(
                Code::ValidationError,
                format!("unknown action field `{}`", truncate(extra)),
            ));
        }
        if m.get("metadata").is_some_and(|v| !v.is_object()) {
            return Err(refuse(
                Code::ValidationError,
                "action metadata must be an object",
            ));
        }
        match kind {
            None => return Ok(OpenEnvAction::NoOp),
            Some("list_tools") => return Ok(OpenEnvAction::ListTools),
            _ => {}
        }
        let name = m
            .get("tool_name")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                refuse(
                    Code::ValidationError,
                    "call_tool needs `tool_name`, a string",
                )
            })?
            .to_string();
        let arguments = match m.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) => a.clone(),
            Some(_) => {
                return Err(refuse(
                    Code::ValidationError,
                    "call_tool `arguments` must be an object",
                ));
            }
        };
        Ok(OpenEnvAction::CallTool { name, arguments })
    }
}

/// The tools of an episode under `protocol`, as OpenEnv lists them (`input_schema`): the
/// names, descriptions and schemas MCP lists ([`benchaudit_comtrade::tool_defs`]).
pub(super) fn tool_list(protocol: Option<SubmissionProtocol>, text: ToolText) -> Value {
    benchaudit_comtrade::tool_defs(protocol, text)
        .into_iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
        .collect()
}

/// An observation as OpenEnv serialises it.
pub(super) fn observation(observation: Value, reward: Option<f64>, done: bool) -> Value {
    json!({"observation": observation, "reward": reward, "done": done})
}

/// A tool's answer in the shape of an MCP `CallToolResult` as OpenEnv's MCP environments
/// return it (`data` is what `MCPToolClient.call_tool` hands back).
pub(super) fn tool_result(name: &str, outcome: Result<&Value, &Value>) -> Value {
    let (value, is_error) = match outcome {
        Ok(v) => (v, false),
        Err(v) => (v, true),
    };
    json!({
        "tool_name": name,
        "result": {
            "content": [{"type": "text", "text": value.to_string()}],
            "structured_content": value,
            "data": value,
            "is_error": is_error,
        },
        "error": null,
    })
}

/// The task fields the released ComtradeBench client (`ComtradeEnv`) reads from the top level
/// of a reset observation's `metadata` (besides `task_id`), copied there from `task_info`.
pub const RELEASED_METADATA_FIELDS: [&str; 4] =
    ["description", "query", "constraints", "instructions"];

/// The first observation of an episode: the task, the seed and the client's episode id; its
/// `metadata` holds the same facts and the released client's fields
/// ([`RELEASED_METADATA_FIELDS`]).
pub(super) fn reset_observation(task_info: &Value, reset: &Reset, episode_id: &str) -> Value {
    let c = &reset.create;
    let facts = json!({
        "episode_id": episode_id,
        "task_id": c.task_id,
        "seed": c.seed,
        "seed_drawn": reset.seed_drawn,
        "options": c.options(),
        "reward_scorer": c.reward,
        "task_info": task_info,
    });
    // `metadata` too: OpenEnv's MCP clients read a reset observation's `metadata` only.
    let mut metadata = facts.clone();
    for key in RELEASED_METADATA_FIELDS {
        metadata[key] = task_info.get(key).cloned().unwrap_or(Value::Null);
    }
    let mut obs = facts;
    obs["metadata"] = metadata;
    observation(obs, None, false)
}

/// The answer to the empty action: nothing done, the episode's reset `metadata` (empty
/// before any reset) repeated so a client that reads every observation's metadata keeps it.
pub(super) fn noop_observation(metadata: Option<&Value>, done: bool) -> Value {
    observation(
        json!({
            "metadata": metadata.cloned().unwrap_or_else(|| json!({})),
            "message": "the empty action does nothing: act with list_tools and call_tool",
        }),
        None,
        done,
    )
}

pub(super) fn error_message(r: &Refusal) -> Value {
    json!({"type": "error", "data": {"message": r.message, "code": r.code.as_str()}})
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use benchaudit_scoring::RewardScorer;

    #[test]
    fn reset_is_exact_and_checked() {
        let r = Reset::parse(
            &json!({"seed": 7, "task_id": "T3_duplicates", "episode_id": "g1", "reward": "judge"}),
            || 99,
        )
        .unwrap();
        assert_eq!(
            (
                r.create.seed,
                r.create.task_id.as_str(),
                r.episode_id.as_deref(),
                r.seed_drawn
            ),
            (7, "T3_duplicates", Some("g1"), false)
        );
        assert_eq!(r.create.reward, RewardScorer::Judge);
        // Without a task the seed picks it; without a seed one is drawn and reported.
        let tasks = benchaudit_comtrade::tasks();
        let r = Reset::parse(&json!({"seed": 13}), || 0).unwrap();
        assert_eq!(r.create.task_id, tasks[13 % tasks.len()].task_id);
        let r = Reset::parse(&json!({}), || 42).unwrap();
        assert_eq!((r.create.seed, r.seed_drawn), (42, true));
        // Unknown keys are ignored, as OpenEnv ignores what reset does not take.
        assert!(Reset::parse(&json!({"seed": 1, "temperature": 3}), || 0).is_ok());
        for bad in [
            json!({"seed": -1}),
            json!({"seed": 1.5}),
            json!({"seed": "1"}),
            json!({"seed": 1, "task_id": "T99"}),
            json!({"seed": 1, "episode_id": "x".repeat(256)}),
            json!({"seed": 1, "reward": "mean"}),
            json!({"seed": 1, "max_requests": -3}),
            json!([1]),
        ] {
            let e = Reset::parse(&bad, || 0).unwrap_err();
            assert_eq!(e.code, Code::ValidationError, "{bad}");
        }
    }

    #[test]
    fn actions_are_openenv_mcp_actions() {
        assert_eq!(
            OpenEnvAction::parse(&json!({"type": "list_tools"})).unwrap(),
            OpenEnvAction::ListTools
        );
        assert_eq!(
            OpenEnvAction::parse(&json!({"type": "call_tool", "tool_name": "fetch_page", "arguments": {"page": 1}, "metadata": {}})).unwrap(),
            OpenEnvAction::CallTool { name: "fetch_page".into(), arguments: json!({"page": 1}).as_object().cloned().unwrap() }
        );
        for bad in [
            json!({"type": "call_tool"}),
            json!({"type": "call_tool", "tool_name": 3}),
            json!({"type": "call_tool", "tool_name": "x", "arguments": [1]}),
            json!({"type": "list_tools", "extra": 1}),
            json!({"type": "dance"}),
            json!({"tool_name": "fetch_page"}),
            json!({"type": null}),
            json!({"metadata": 3}),
            json!("list_tools"),
        ] {
            assert_eq!(
                OpenEnvAction::parse(&bad).unwrap_err().code,
                Code::ValidationError,
                "{bad}"
            );
        }
    }

    #[test]
    fn the_empty_action_is_a_no_op() {
        for empty in [json!({}), json!({"metadata": {"note": "x"}})] {
            assert_eq!(OpenEnvAction::parse(&empty).unwrap(), OpenEnvAction::NoOp);
        }
        let metadata = json!({"task_id": "T1_single_page"});
        let obs = noop_observation(Some(&metadata), true);
        assert_eq!(
            (
                &obs["observation"]["metadata"],
                &obs["reward"],
                &obs["done"]
            ),
            (&metadata, &Value::Null, &json!(true))
        );
        assert_eq!(
            noop_observation(None, false)["observation"]["metadata"],
            json!({})
        );
    }

    /// What the released ComtradeBench client (`ComtradeEnv`, not on PyPI) reads, pinned by
    /// name: the task's fields at the top level of the reset observation's `metadata`.
    #[test]
    fn the_released_clients_reset_fields_are_at_the_metadata_top_level() {
        let t = benchaudit_comtrade::task("T7_totals_trap").unwrap();
        let info = benchaudit_comtrade::Episode::new(t, 4, Default::default()).get_task_info();
        let info = serde_json::to_value(info).unwrap();
        let reset = Reset::parse(&json!({"seed": 4, "task_id": t.task_id}), || 0).unwrap();
        let obs = reset_observation(&info, &reset, "e1");
        let meta = &obs["observation"]["metadata"];
        assert_eq!(meta["task_id"], "T7_totals_trap");
        for key in ["description", "query", "constraints", "instructions"] {
            assert!(RELEASED_METADATA_FIELDS.contains(&key));
            assert_eq!(meta[key], info[key], "{key}");
        }
        assert!(meta["description"].as_str().is_some_and(|d| !d.is_empty()));
        assert!(meta["instructions"].as_str().is_some_and(|d| !d.is_empty()));
        assert_eq!(meta["query"]["reporter"], info["query"]["reporter"]);
        assert_eq!(meta["constraints"]["page_size"], t.page_size);
        // The OpenEnv facts stay where openenv-core's clients read them.
        assert_eq!(meta["task_info"], info);
        assert_eq!(obs["observation"]["task_info"], info);
        assert_eq!(
            (&obs["reward"], &obs["done"]),
            (&Value::Null, &json!(false))
        );
    }
}
