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
//!   `append_results` under the chunked protocol), and the empty action `{}`, a no-op.
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
//! **The released ComtradeBench client** (`ComtradeEnv`) reads the task from the reset
//! observation's `metadata` top level (`task_id`, `description`, `query`, `constraints`,
//! `instructions`), so the metadata carries those beside `task_info` (compatibility fields);
//! it steps with an empty action (`{}`), which is a no-op here: the answer is an observation
//! repeating that metadata, nothing is spent. Its agent reads the submit answer's `score`
//! (the judge's 0–100 total) and `breakdown`, which every submit answer carries
//! ([`crate::answer::SubmitAnswer`]).
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
//! The module in three parts: this file holds the WebSocket session (one [`Env`] per socket:
//! reset, step, state, mcp) and its route; [`wire`] reads OpenEnv's messages (reset data,
//! actions) and writes its observations, with no IO; [`http`] serves the stateless HTTP routes
//! and the schema.

mod http;
pub mod wire;

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use axum::{Router, routing};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::answer::Failure;
use crate::app::{App, truncate};
use crate::gate::Gate;
use crate::store::Slot;

pub use wire::{Code, OpenEnvAction, Refusal, Reset};
use wire::{
    error_message, noop_observation, observation, refuse, reset_observation, tool_list, tool_result,
};

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
        .route("/reset", routing::post(http::reset))
        .route("/step", routing::post(http::step))
        .route("/state", routing::get(http::state))
        .route("/schema", routing::get(http::schema))
        .route("/health", routing::get(http::health))
        .route("/metadata", routing::get(http::metadata))
        .with_state(openenv)
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
    /// The reset observation's `metadata`, which the empty action repeats.
    metadata: Value,
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
        let metadata = obs["observation"]["metadata"].clone();
        self.session = Some(Session {
            slot,
            episode_id,
            task_id: reset.create.task_id,
            seed: reset.create.seed,
            steps: 0,
            done: false,
            reward: None,
            metadata,
        });
        Ok(obs)
    }

    async fn step(&mut self, data: &Value) -> Result<Value, Refusal> {
        let action = OpenEnvAction::parse(data)?;
        if let Some(s) = &mut self.session {
            s.steps += 1;
        }
        match action {
            OpenEnvAction::NoOp => Ok(noop_observation(
                self.session.as_ref().map(|s| &s.metadata),
                self.session.as_ref().is_some_and(|s| s.done),
            )),
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
                            "message": benchaudit_comtrade::unknown_tool(&name, slot.options.submission).error,
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
        let kind = match message.get("type") {
            Some(Value::String(kind)) if !kind.is_empty() => kind.as_str(),
            Some(Value::String(_)) | None | Some(Value::Null) => {
                return Some(error_message(&refuse(
                    Code::UnknownType,
                    "a message needs a `type`: reset, step, state, mcp or close",
                )));
            }
            Some(_) => {
                return Some(error_message(&refuse(
                    Code::UnknownType,
                    "`type` must be a string: reset, step, state, mcp or close",
                )));
            }
        };
        let result = match kind {
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
            Ok(Some(Err(e))) if too_large(&e) => {
                // RFC 6455's answer to a message over the limit: close 1009 (Message Too
                // Big). Nothing more is read: the reader would buffer the oversize frame.
                let reason = format!(
                    "message larger than the server's limit of {} bytes",
                    env.openenv.max_message_bytes
                );
                let frame = axum::extract::ws::CloseFrame {
                    code: axum::extract::ws::close_code::SIZE,
                    reason: reason.into(),
                };
                let _ = socket.send(Message::Close(Some(frame))).await;
                return;
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

/// Whether a receive failed on a message or frame over the size limit. The WebSocket layer's
/// error type is not exported, so its text is read: "Space limit exceeded: Message too long"
/// (pinned by the test that sends an oversize message).
fn too_large(e: &axum::Error) -> bool {
    e.to_string().contains("Space limit exceeded")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

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
