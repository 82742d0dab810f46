//! OpenEnv's stateless HTTP routes, as `openenv-core` serves them: each request meets a fresh
//! environment (`/reset` shows an episode's first observation, `/step` answers `list_tools`),
//! and `/schema`, `/health`, `/metadata` describe the environment. Episodes are played over
//! `/ws`.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use benchaudit_comtrade::Episode;
use serde_json::{Value, json};

use super::OpenEnv;
use super::wire::{
    Code, OpenEnvAction, Refusal, Reset, noop_observation, observation, refuse, reset_observation,
    tool_list,
};
use crate::answer::Failure;

/// Reads an optional JSON object body (empty means `{}`).
fn json_object(headers: &HeaderMap, body: &Bytes) -> Result<Value, Failure> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(json!({}));
    }
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !is_json {
        return Err(Failure::new(
            415,
            "a request body needs Content-Type: application/json",
        ));
    }
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| Failure::new(400, format!("malformed JSON: {e}")))?;
    if !v.is_object() {
        return Err(Failure::new(422, "the body must be a JSON object"));
    }
    Ok(v)
}

fn refusal_response(r: &Refusal) -> Response {
    (
        StatusCode::UNPROCESSABLE_ENTITY,
        Json(json!({"detail": r.message, "code": r.code.as_str()})),
    )
        .into_response()
}

/// `POST /reset`: the first observation of the episode the request names (stateless, as in
/// OpenEnv: nothing is kept; play episodes over `/ws`).
pub(super) async fn reset(headers: HeaderMap, body: Bytes) -> Response {
    let data = match json_object(&headers, &body) {
        Ok(v) => v,
        Err(f) => return f.into_response(),
    };
    let reset = match Reset::parse(&data, super::draw_seed) {
        Ok(r) => r,
        Err(r) => return refusal_response(&r),
    };
    let Ok(task) = reset.create.task() else {
        return refusal_response(&refuse(Code::ValidationError, "unknown task"));
    };
    let info = Episode::new(task, reset.create.seed, reset.create.options()).get_task_info();
    let info = serde_json::to_value(info).unwrap_or(Value::Null);
    let id = reset.episode_id.clone().unwrap_or_default();
    Json(reset_observation(&info, &reset, &id)).into_response()
}

/// `POST /step` (`{"action": …}`): stateless as in OpenEnv, so `list_tools` is answered and
/// a tool call is told to use `/ws`.
pub(super) async fn step(
    State(openenv): State<Arc<OpenEnv>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let data = match json_object(&headers, &body) {
        Ok(v) => v,
        Err(f) => return f.into_response(),
    };
    let Some(action) = data.get("action") else {
        return refusal_response(&refuse(Code::ValidationError, "step needs `action`"));
    };
    match OpenEnvAction::parse(action) {
        Err(r) => refusal_response(&r),
        Ok(OpenEnvAction::NoOp) => Json(noop_observation(None, false)).into_response(),
        Ok(OpenEnvAction::ListTools) => {
            Json(observation(
                json!({"tools": tool_list(None, openenv.app.tool_text)}),
                None,
                false,
            ))
            .into_response()
        }
        Ok(OpenEnvAction::CallTool { name, .. }) => Json(observation(
            json!({
                "tool_name": name,
                "result": null,
                "error": {
                    "error_type": "execution_error",
                    "message": "HTTP /step meets a fresh environment on every request (as in OpenEnv): play an episode over the /ws session, or with POST /v1/episodes",
                },
            }),
            None,
            false,
        ))
        .into_response(),
    }
}

pub(super) async fn state() -> Json<Value> {
    Json(json!({"episode_id": null, "step_count": 0}))
}

pub(super) async fn health() -> Json<Value> {
    Json(json!({"status": "healthy"}))
}

pub(super) async fn metadata() -> Json<Value> {
    Json(json!({
        "name": "benchaudit-comtrade",
        "description": "ComtradeBench (benchaudit): fetch every record of a paginated trade-data API that injects faults, \
                        clean them (deduplicate, drop totals rows) and submit once; reward = ground-truth F1 (or the legacy judge).",
        "readme_content": null,
        "version": env!("CARGO_PKG_VERSION"),
        "author": "benchaudit",
        "documentation_url": null,
    }))
}

/// `GET /schema`: JSON schemas of the actions, observations and state.
pub(super) async fn schema() -> Json<Value> {
    let metadata = json!({"type": "object", "description": "Additional metadata"});
    Json(json!({
        "action": {
            "title": "Action",
            "oneOf": [
                {"title": "NoOpAction", "type": "object", "additionalProperties": false,
                 "description": "the empty action (the released ComtradeBench client's): does nothing",
                 "properties": {"metadata": metadata}},
                {"title": "ListToolsAction", "type": "object", "additionalProperties": false,
                 "properties": {"type": {"const": "list_tools"}, "metadata": metadata},
                 "required": ["type"]},
                {"title": "CallToolAction", "type": "object", "additionalProperties": false,
                 "properties": {"type": {"const": "call_tool"}, "metadata": metadata,
                                "tool_name": {"type": "string", "enum": crate::app::TOOL_NAMES},
                                "arguments": {"type": "object"}},
                 "required": ["type", "tool_name"]},
            ],
        },
        "observation": {
            "title": "Observation",
            "type": "object",
            "properties": {
                "done": {"type": "boolean", "description": "true once submit_results was accepted"},
                "reward": {"type": ["number", "null"], "description": "the episode's reward on the accepted submit (F1, or judge / 100), else null"},
                "tools": {"type": "array", "description": "list_tools: name, description, input_schema"},
                "tool_name": {"type": "string"},
                "result": {"type": ["object", "null"], "description": "call_tool: content, structured_content, data, is_error"},
                "error": {"type": ["object", "null"], "description": "call_tool that could not be routed: error_type, message"},
                "task_info": {"type": "object", "description": "reset: get_task_info of the episode"},
                "seed": {"type": "integer"},
                "task_id": {"type": "string"},
                "episode_id": {"type": "string"},
                "metadata": {"type": "object", "description": "reset: the facts above and the released ComtradeBench client's task fields (task_id, description, query, constraints, instructions); the empty action repeats it"},
            },
        },
        "state": {
            "title": "State",
            "type": "object",
            "properties": {
                "episode_id": {"type": ["string", "null"]},
                "step_count": {"type": "integer", "minimum": 0},
                "task_id": {"type": "string"},
                "seed": {"type": "integer"},
                "done": {"type": "boolean"},
                "reward": {"type": ["number", "null"]},
            },
        },
    }))
}
