//! The OpenEnv environment protocol (as `openenv-core` 0.3.0 implements it), so RL trainers
//! and OpenEnv clients (`MCPToolClient`, `GenericEnvClient`) play ComtradeBench episodes
//! unchanged.
//!
//! * `GET /ws` — the session protocol: one WebSocket, one environment. Client messages are
//!   `{"type": "reset", "data": {seed, episode_id, task_id, …}}`, `{"type": "step", "data":
//!   ACTION}`, `{"type": "state"}`, `{"type": "mcp", "data": JSON-RPC}` and `{"type":
//!   "close"}`; the server answers `{"type": "observation", "data": {observation, reward,
//!   done}}`, `{"type": "state", "data": …}`, `{"type": "mcp", "data": …}` or `{"type":
//!   "error", "data": {message, code}}` with OpenEnv's codes (`INVALID_JSON`, `UNKNOWN_TYPE`,
//!   `VALIDATION_ERROR`, `EXECUTION_ERROR`).
//! * Actions are OpenEnv's MCP actions: `{"type": "list_tools"}` and `{"type": "call_tool",
//!   "tool_name", "arguments"}` over the episode's tools (the three of SPEC §2, and
//!   `append_results` under the chunked protocol).
//! * `POST /reset`, `POST /step`, `GET /state` — OpenEnv's stateless HTTP routes (each
//!   request meets a fresh environment, as in `openenv-core`): `/reset` shows the first
//!   observation of an episode, `/step` answers `list_tools`; episodes are played over `/ws`
//!   (or the REST and MCP APIs). `GET /schema`, `GET /health`, `GET /metadata` describe the
//!   environment.
//!
//! **Reset is exact.** An episode is a pure function of (task, seed, options), so the same
//! `seed` (and `task_id`) always gives the same episode: a GRPO group of rollouts from one
//! seed sees one environment. Without `task_id` the task is the seed's: `tasks[seed mod 10]`,
//! so a list of seeds alone spans every task; without `seed` one is drawn and reported in the
//! observation, so the episode can be replayed. `episode_id` is the client's name for the
//! episode and is echoed in `state`. Options (`interface`, `submission`, `max_requests`,
//! `reward`) are those of `POST /v1/episodes`; unknown reset keys are ignored, as OpenEnv's
//! own server ignores keys its environment's `reset` does not take.
//!
//! **Rewards.** Every observation has `reward: null` except the one answering an accepted
//! `submit_results`, which has `done: true` and the episode's reward: ground-truth F1, or the
//! legacy judge's total / 100 when the reset asked for `"reward": "judge"`. A tool's own
//! failure (a 429, a bad page, a second submit) is the tool's result with `is_error: true`,
//! as OpenEnv's `CallToolObservation` prescribes; `error` is kept for calls that could not be
//! routed (an unknown tool).
//!
//! Bounds: a message is at most the server's body limit; a session that moves no frame for the
//! connection idle timeout is closed; the `Origin` of a browser must be an allowed host (a web
//! page cannot drive a local server through the user's browser); an episode lives in the
//! app's store (under its cap, and closed with its socket).
//!
//! Why one long file: it is one protocol (the OpenEnv wire format: reset, step, state, the
//! WebSocket session and its schema), mapped onto the app's one tool path; the JSON schemas it
//! serves are most of its length.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router, routing};
use benchaudit_comtrade::{Episode, SubmissionProtocol};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::answer::Failure;
use crate::app::{App, CreateEpisode, truncate};
use crate::gate::Gate;
use crate::store::Slot;

/// What the OpenEnv routes share.
#[derive(Debug)]
pub struct OpenEnv {
    app: Arc<App>,
    /// Largest WebSocket message (the server's body limit).
    max_message_bytes: usize,
    /// A session that moves no frame for this long is closed.
    idle_timeout: Duration,
    /// Hosts a browser `Origin` may name.
    origins: Gate,
    /// Ends every session at shutdown.
    cancel: CancellationToken,
}

impl OpenEnv {
    /// The OpenEnv front end of `app`.
    pub fn new(
        app: Arc<App>,
        allowed_hosts: &[String],
        max_message_bytes: usize,
        idle_timeout: Duration,
        cancel: CancellationToken,
    ) -> Self {
        OpenEnv {
            app,
            max_message_bytes,
            idle_timeout,
            origins: Gate::new(allowed_hosts, max_message_bytes, idle_timeout),
            cancel,
        }
    }
}

/// The OpenEnv routes.
pub fn routes(openenv: Arc<OpenEnv>) -> Router {
    Router::new()
        .route("/ws", routing::get(ws_route))
        .route("/reset", routing::post(http_reset))
        .route("/step", routing::post(http_step))
        .route("/state", routing::get(http_state))
        .route("/schema", routing::get(schema))
        .route("/health", routing::get(health))
        .route("/metadata", routing::get(metadata))
        .with_state(openenv)
}

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
    fn as_str(self) -> &'static str {
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

fn refuse(code: Code, message: impl Into<String>) -> Refusal {
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
/// fields besides `metadata`).
#[derive(Debug, Clone, PartialEq)]
pub enum OpenEnvAction {
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
        let allowed: &[&str] = match m.get("type").and_then(Value::as_str) {
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
            None => {
                return Err(refuse(
                    Code::ValidationError,
                    "the action has no `type` (list_tools or call_tool)",
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
        if m.get("type").and_then(Value::as_str) == Some("list_tools") {
            return Ok(OpenEnvAction::ListTools);
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

/// The tools of an episode under `protocol`, as OpenEnv lists them (`input_schema`).
fn tool_list(protocol: Option<SubmissionProtocol>, text: benchaudit_comtrade::ToolText) -> Value {
    let tools: Vec<Value> = crate::mcp::tools(protocol, text)
        .into_iter()
        .map(|t| {
            json!({
                "name": t.name,
                "description": t.description.as_deref().unwrap_or(""),
                "input_schema": Value::Object(t.input_schema.as_ref().clone()),
            })
        })
        .collect();
    Value::Array(tools)
}

/// An observation as OpenEnv serialises it.
fn observation(observation: Value, reward: Option<f64>, done: bool) -> Value {
    json!({"observation": observation, "reward": reward, "done": done})
}

/// A tool's answer in the shape of an MCP `CallToolResult` as OpenEnv's MCP environments
/// return it (`data` is what `MCPToolClient.call_tool` hands back).
fn tool_result(name: &str, outcome: Result<&Value, &Value>) -> Value {
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

/// The first observation of an episode: the task, the seed and the client's episode id.
fn reset_observation(task_info: &Value, reset: &Reset, episode_id: &str) -> Value {
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
    let mut obs = facts.clone();
    obs["metadata"] = facts;
    observation(obs, None, false)
}

/// A session's episode.
#[derive(Debug)]
struct Session {
    slot: Arc<Slot>,
    /// The client's name for the episode, or the store's id.
    episode_id: String,
    task_id: String,
    seed: u64,
    steps: u64,
    done: bool,
    reward: Option<f64>,
}

/// One WebSocket environment.
struct Env {
    openenv: Arc<OpenEnv>,
    session: Option<Session>,
}

impl Drop for Env {
    fn drop(&mut self) {
        if let Some(s) = self.session.take() {
            self.openenv.app.store.close(s.slot.id);
        }
    }
}

/// A seed from the OS generator (uuid v4), for resets without one.
fn draw_seed() -> u64 {
    let bytes = uuid::Uuid::new_v4().into_bytes();
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[..8]);
    // Kept below 2^53 so a JSON client reading it as a float replays it exactly.
    u64::from_le_bytes(b) >> 11
}

impl Env {
    async fn reset(&mut self, data: &Value) -> Result<Value, Refusal> {
        let reset = Reset::parse(data, draw_seed)?;
        let slot = self
            .openenv
            .app
            .create(&reset.create)
            .map_err(|f| refuse(Code::ValidationError, f.envelope.error))?;
        if let Some(old) = self.session.take() {
            self.openenv.app.store.close(old.slot.id);
        }
        let episode_id = reset
            .episode_id
            .clone()
            .unwrap_or_else(|| slot.id.to_string());
        let info =
            serde_json::to_value(self.openenv.app.task_info(&slot).await).unwrap_or(Value::Null);
        let obs = reset_observation(&info, &reset, &episode_id);
        self.session = Some(Session {
            slot,
            episode_id,
            task_id: reset.create.task_id,
            seed: reset.create.seed,
            steps: 0,
            done: false,
            reward: None,
        });
        Ok(obs)
    }

    async fn step(&mut self, data: &Value) -> Result<Value, Refusal> {
        let action = OpenEnvAction::parse(data)?;
        if let Some(s) = &mut self.session {
            s.steps += 1;
        }
        match action {
            OpenEnvAction::ListTools => {
                let protocol = self.session.as_ref().map(|s| s.slot.options.submission);
                let obs = json!({"tools": tool_list(protocol, self.openenv.app.tool_text)});
                Ok(observation(
                    obs,
                    None,
                    self.session.as_ref().is_some_and(|s| s.done),
                ))
            }
            OpenEnvAction::CallTool { name, arguments } => {
                let Some(session) = &mut self.session else {
                    return Err(refuse(
                        Code::ExecutionError,
                        "no episode yet: send reset (with seed and task_id) before calling a tool",
                    ));
                };
                let app = Arc::clone(&self.openenv.app);
                let slot = Arc::clone(&session.slot);
                let outcome = match app.lookup_id(slot.id) {
                    Err(failure) => Some(Err(failure)),
                    Ok(slot) => app.call_tool(slot, &name, arguments).await,
                };
                let Some(outcome) = outcome else {
                    let obs = json!({
                        "tool_name": name,
                        "result": null,
                        "error": {
                            "error_type": "tool_not_found",
                            "message": benchaudit_comtrade::unknown_tool(&name).error,
                        },
                    });
                    return Ok(observation(obs, None, session.done));
                };
                let mut reward = None;
                let obs = match &outcome {
                    Ok(value) => {
                        if name == "submit_results" {
                            reward = value.get("reward").and_then(Value::as_f64);
                            session.done = true;
                            session.reward = reward;
                        }
                        tool_result(&name, Ok(value))
                    }
                    Err(failure) => tool_result(&name, Err(&failure.to_json())),
                };
                Ok(observation(obs, reward, session.done))
            }
        }
    }

    async fn state(&self) -> Value {
        match &self.session {
            None => json!({"episode_id": null, "step_count": 0}),
            Some(s) => {
                let status = match self.openenv.app.lookup_id(s.slot.id) {
                    Ok(slot) => self.openenv.app.status(&slot).await,
                    Err(f) => f.to_json(),
                };
                json!({
                    "episode_id": s.episode_id,
                    "step_count": s.steps,
                    "task_id": s.task_id,
                    "seed": s.seed,
                    "done": s.done,
                    "reward": s.reward,
                    "requests_used": status.get("requests_used"),
                    "requests_remaining": status.get("requests_remaining"),
                    "server_episode_id": s.slot.id.to_string(),
                })
            }
        }
    }

    /// `{"type": "mcp"}`: JSON-RPC `tools/list` and `tools/call` on the session's episode.
    async fn mcp(&mut self, data: &Value) -> Value {
        let id = data.get("id").cloned().unwrap_or(Value::Null);
        let error = |code: i64, message: &str| json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
        if data.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return error(-32600, "Invalid Request: jsonrpc must be \"2.0\"");
        }
        let params = data.get("params").cloned().unwrap_or_else(|| json!({}));
        match data.get("method").and_then(Value::as_str) {
            Some("tools/list") => {
                let protocol = self.session.as_ref().map(|s| s.slot.options.submission);
                json!({"jsonrpc": "2.0", "id": id, "result": {"tools": tool_list(protocol, self.openenv.app.tool_text)}})
            }
            Some("tools/call") => {
                let name = params.get("name").and_then(Value::as_str).unwrap_or("");
                let arguments = params
                    .get("arguments")
                    .cloned()
                    .unwrap_or_else(|| json!({}));
                let action =
                    json!({"type": "call_tool", "tool_name": name, "arguments": arguments});
                match self.step(&action).await {
                    Err(r) => error(-32602, &r.message),
                    Ok(obs) => {
                        let o = &obs["observation"];
                        if let Some(message) = o.pointer("/error/message").and_then(Value::as_str) {
                            return error(-32602, message);
                        }
                        let r = &o["result"];
                        json!({"jsonrpc": "2.0", "id": id, "result": {
                            "content": r["content"],
                            "structuredContent": r["structured_content"],
                            "isError": r["is_error"],
                        }})
                    }
                }
            }
            _ => error(-32601, "Method not found (tools/list, tools/call)"),
        }
    }

    /// Answers one text message; `None` ends the session (`close`).
    async fn answer(&mut self, text: &str) -> Option<Value> {
        let message: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                return Some(error_message(&refuse(
                    Code::InvalidJson,
                    format!("Invalid JSON: {e}"),
                )));
            }
        };
        let data = message.get("data").cloned().unwrap_or(Value::Null);
        let result = match message.get("type").and_then(Value::as_str).unwrap_or("") {
            "reset" => self
                .reset(&data)
                .await
                .map(|d| json!({"type": "observation", "data": d})),
            "step" => self
                .step(&data)
                .await
                .map(|d| json!({"type": "observation", "data": d})),
            "state" => Ok(json!({"type": "state", "data": self.state().await})),
            "mcp" => Ok(json!({"type": "mcp", "data": self.mcp(&data).await})),
            "close" => return None,
            other => Err(refuse(
                Code::UnknownType,
                format!("Unknown message type: {}", truncate(other)),
            )),
        };
        Some(result.unwrap_or_else(|r| error_message(&r)))
    }
}

fn error_message(r: &Refusal) -> Value {
    json!({"type": "error", "data": {"message": r.message, "code": r.code.as_str()}})
}

/// Whether a browser `Origin` names this server (loopback or an allowed host). Clients that
/// are not browsers send none.
fn origin_allowed(gate: &Gate, headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let authority = origin
        .split_once("://")
        .map_or(origin, |(_, rest)| rest)
        .trim_end_matches('/');
    gate.host_allowed(authority)
}

async fn ws_route(
    State(openenv): State<Arc<OpenEnv>>,
    headers: HeaderMap,
    upgrade: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Response {
    if !origin_allowed(&openenv.origins, &headers) {
        return Failure::new(
            403,
            "this Origin is not allowed: /ws answers pages served from loopback names and the hosts given with --allow-host",
        )
        .into_response();
    }
    let upgrade = match upgrade {
        Ok(u) => u,
        Err(rejection) => {
            return Failure::new(
                rejection.status().as_u16(),
                format!(
                    "/ws is OpenEnv's WebSocket session: {}",
                    rejection.body_text()
                ),
            )
            .into_response();
        }
    };
    let max = openenv.max_message_bytes;
    upgrade
        .max_message_size(max)
        .max_frame_size(max)
        .on_upgrade(move |socket| session(socket, openenv))
}

/// Serves one WebSocket session until the client closes it, it idles past the timeout, or the
/// server shuts down; its episode leaves the store with it.
async fn session(mut socket: WebSocket, openenv: Arc<OpenEnv>) {
    crate::metrics::inc(&openenv.app.metrics.openenv_sessions);
    let idle = openenv.idle_timeout;
    let cancel = openenv.cancel.clone();
    let mut env = Env {
        openenv,
        session: None,
    };
    loop {
        let next = tokio::select! {
            () = cancel.cancelled() => break,
            next = tokio::time::timeout(idle, socket.recv()) => next,
        };
        let message = match next {
            Err(_) => {
                tracing::debug!("OpenEnv session idle past the idle timeout; closing it");
                break;
            }
            Ok(None | Some(Err(_))) => break,
            Ok(Some(Ok(m))) => m,
        };
        let reply = match message {
            Message::Text(text) => match env.answer(text.as_str()).await {
                Some(reply) => reply,
                None => break,
            },
            Message::Binary(_) => error_message(&refuse(
                Code::InvalidJson,
                "send messages as text frames holding JSON",
            )),
            Message::Close(_) => break,
            // Pings are answered by the WebSocket layer; both kinds keep the session alive.
            Message::Ping(_) | Message::Pong(_) => continue,
        };
        if socket
            .send(Message::Text(reply.to_string().into()))
            .await
            .is_err()
        {
            break;
        }
    }
    let _ = socket.send(Message::Close(None)).await;
}

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
async fn http_reset(headers: HeaderMap, body: Bytes) -> Response {
    let data = match json_object(&headers, &body) {
        Ok(v) => v,
        Err(f) => return f.into_response(),
    };
    let reset = match Reset::parse(&data, draw_seed) {
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
async fn http_step(
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

async fn http_state() -> Json<Value> {
    Json(json!({"episode_id": null, "step_count": 0}))
}

async fn health() -> Json<Value> {
    Json(json!({"status": "healthy"}))
}

async fn metadata() -> Json<Value> {
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
async fn schema() -> Json<Value> {
    let metadata = json!({"type": "object", "description": "Additional metadata"});
    Json(json!({
        "action": {
            "title": "Action",
            "oneOf": [
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
    fn browser_origins_must_name_this_server() {
        let gate = Gate::new(&["lab.test".into()], 1024, Duration::from_secs(1));
        let with = |o: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::ORIGIN, o.parse().unwrap());
            origin_allowed(&gate, &h)
        };
        assert!(origin_allowed(&gate, &HeaderMap::new()));
        assert!(
            with("http://localhost:8000") && with("http://127.0.0.1") && with("https://lab.test")
        );
        assert!(!with("https://evil.test") && !with("null") && !with("http://localhost.evil.test"));
    }
}
