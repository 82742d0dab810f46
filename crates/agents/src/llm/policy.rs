//! [`LlmPolicy`]: a model behind an OpenAI-compatible API playing "the model" at every level.
//! L2: the scaffold's history becomes the conversation (assistant tool calls, then one tool
//! message per executed call, rendered by [`ToolResult::to_json`] exactly as the API answers),
//! and each reply's tool calls become the next actions. L1: one question per fault. L0: one
//! request to fill the slots. Every request spends from the episode's output-token budget;
//! provider faults are the client's business and surface only as `infra_error`.
//!
//! Why one long file: the three levels' conversations share the message log, the token budget
//! and the tool-call readers (native, text protocol, lenient); splitting by level would copy
//! those.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use benchaudit_comtrade::{SubmissionProtocol, TaskInfo, TaskSpec};
use serde_json::{Map, Value, json};

use crate::level::Level;
use crate::llm::client::ServerInfo;
use crate::llm::client::{ChatClient, ClientConfig, ClientError, RateLimiter, RetryPolicy};
use crate::llm::config::{ConfigError, ModelConfig, ModelId, ModelOverrides, ToolProtocol};
use crate::llm::messages::{
    ChatResponse, ResponseMessage, arguments_text, calls_in_text, message, parse_arguments,
    parse_usage,
};
use crate::llm::prompts::{self, ToolSpec};
use crate::llm::secret::scrub_json;
use crate::llm::text_protocol;
use crate::policy::{
    Action, EpisodeStart, FaultContext, FaultDecision, Policy, PolicyError, Slots, Step,
    TokenUsage, ToolCall,
};

/// A configured model with its (shared) client: what `benchaudit run --model` holds, and the
/// factory of one fresh [`LlmPolicy`] per episode. Cloning shares the client and its limiter.
#[derive(Debug, Clone)]
pub struct LlmAgent {
    config: Arc<ModelConfig>,
    client: Arc<ChatClient>,
}

impl LlmAgent {
    /// A model reached through `client`.
    pub fn new(config: ModelConfig, client: Arc<ChatClient>) -> Self {
        LlmAgent {
            config: Arc::new(config),
            client,
        }
    }

    /// `provider:model`, the ledger name.
    pub fn name(&self) -> String {
        self.config.name.clone()
    }

    /// The configuration (no key), for the run manifest.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// The client (shared with every agent of the same endpoint and key).
    pub fn client(&self) -> &Arc<ChatClient> {
        &self.client
    }

    /// Looks at the server once before a run ([`ChatClient::preflight`]) and records what it
    /// learnt in this agent's configuration, which the run manifest stores. An unreachable,
    /// refusing or misconfigured endpoint is an error here, in one line naming the model.
    pub fn preflight(&mut self) -> Result<&ServerInfo, AgentError> {
        let info = self.client.preflight().map_err(|e| AgentError::Preflight {
            model: self.config.name.clone(),
            endpoint: self.client.endpoint().to_string(),
            hint: match &e {
                ClientError::Unreachable { .. } if self.config.provider == "local" => LOCAL_HINT,
                _ => "",
            },
            error: e,
        })?;
        let config = Arc::make_mut(&mut self.config);
        Ok(config.server.insert(info))
    }

    /// A fresh policy for one episode.
    pub fn policy(&self) -> LlmPolicy {
        LlmPolicy::new(Arc::clone(&self.config), Arc::clone(&self.client))
    }
}

/// Options shared by every model of a run (`benchaudit run`'s flags).
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// Per-model overrides (`--base-url`, `--api-key-env`, budget, step limit, text protocol).
    pub overrides: ModelOverrides,
    /// Requests per minute per provider endpoint and key (`--rpm`).
    pub rpm: Option<u32>,
    /// Whole-request timeout.
    pub request_timeout: Duration,
    /// Provider-fault retry schedule.
    pub retry: RetryPolicy,
}

impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions {
            overrides: ModelOverrides::default(),
            rpm: None,
            request_timeout: Duration::from_secs(300),
            retry: RetryPolicy::default(),
        }
    }
}

/// Why `--model` could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// Bad model, provider, URL or key variable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The HTTP client could not be built.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The preflight request failed: nothing has run. The error names the URL it called.
    #[error("{model}: {error}{hint}")]
    Preflight {
        /// `provider:model`.
        model: String,
        /// Where the chat requests would go.
        endpoint: String,
        /// What the server answered, or why it could not be reached.
        error: ClientError,
        /// What to do about it, when there is something to say (empty otherwise).
        hint: &'static str,
    },
}

/// Said when a `local:` model's server cannot be reached: the server it expects is the one the
/// repository's script starts.
const LOCAL_HINT: &str = "; is the local server running? scripts/local-llm/start.sh starts \
     llama.cpp's server there (docs/models.md); --base-url names another server";

/// Preflights every agent ([`LlmAgent::preflight`]), one request set per endpoint: agents that
/// share a client share what it learnt.
pub fn preflight_agents(agents: &mut [LlmAgent]) -> Result<(), AgentError> {
    let mut seen: Vec<(Arc<ChatClient>, ServerInfo)> = Vec::new();
    for agent in agents.iter_mut() {
        if let Some((_, info)) = seen.iter().find(|(c, _)| Arc::ptr_eq(c, &agent.client)) {
            Arc::make_mut(&mut agent.config).server = Some(info.clone());
            continue;
        }
        let info = agent.preflight()?.clone();
        seen.push((Arc::clone(&agent.client), info));
    }
    Ok(())
}

/// Builds the agents of `--model A,B,…`. Models on the same endpoint with the same key share one
/// client, so `--rpm` limits the provider as a whole however many models and `--jobs` use it.
pub fn build_agents(
    models: &[String],
    options: &AgentOptions,
) -> Result<Vec<LlmAgent>, AgentError> {
    // One client per (base URL, key variable).
    type Shared = ((String, Option<String>), Arc<ChatClient>);
    let mut clients: Vec<Shared> = Vec::new();
    let mut agents = Vec::new();
    for spec in models {
        let id = ModelId::parse(spec)?;
        let (config, key) = ModelConfig::resolve(&id, &options.overrides)?;
        let share = (config.base_url.clone(), config.api_key_env.clone());
        let client = match clients.iter().find(|(k, _)| *k == share) {
            Some((_, c)) => Arc::clone(c),
            None => {
                let mut cc = ClientConfig::new(&config.base_url, key);
                cc.request_timeout = options.request_timeout;
                cc.retry = options.retry;
                cc.limiter = options.rpm.map(|r| Arc::new(RateLimiter::per_minute(r)));
                let c = Arc::new(ChatClient::new(cc)?);
                clients.push((share, Arc::clone(&c)));
                c
            }
        };
        agents.push(LlmAgent::new(config, client));
    }
    Ok(agents)
}

/// A call handed to the scaffold, with the id its result must answer.
#[derive(Debug, Clone)]
struct Issued {
    id: String,
    call: ToolCall,
}

/// What the policy knows about the running episode: the level and the protocol shape its prompt
/// and tools. The task is kept only to render tool results exactly as the API does; it never
/// reaches a prompt.
#[derive(Debug, Clone, Copy)]
struct EpisodeState {
    render_task: &'static TaskSpec,
    level: Level,
    protocol: SubmissionProtocol,
}

/// Which question a request asked.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Slots,
    Fault,
    Turn,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Slots => "l0_slots",
            Kind::Fault => "l1_fault",
            Kind::Turn => "l2_turn",
        }
    }
}

/// The LLM as a [`Policy`] (one per episode; see [`LlmAgent::policy`]).
#[derive(Debug)]
pub struct LlmPolicy {
    config: Arc<ModelConfig>,
    client: Arc<ChatClient>,
    episode: Option<EpisodeState>,
    tools: Vec<ToolSpec>,
    conversation: Vec<Value>,
    issued: Vec<Issued>,
    queue: VecDeque<Issued>,
    consumed: usize,
    usage: TokenUsage,
    usage_estimated: bool,
    requests: Vec<Value>,
    provider_faults: usize,
    malformed_answers: u32,
    end: Option<String>,
}

/// Completion tokens of a reply whose provider reported none: ~4 bytes per token.
fn estimate_tokens(msg: &ResponseMessage) -> u64 {
    let mut bytes = msg.text().len();
    for c in msg.tool_calls.iter().flatten() {
        bytes += c.function.name.as_deref().map_or(0, str::len);
        bytes += arguments_text(c.function.arguments.as_ref()).len();
    }
    (bytes as u64).div_ceil(4)
}

impl LlmPolicy {
    /// A policy for `config` over `client`.
    pub fn new(config: Arc<ModelConfig>, client: Arc<ChatClient>) -> Self {
        LlmPolicy {
            config,
            client,
            episode: None,
            tools: Vec::new(),
            conversation: Vec::new(),
            issued: Vec::new(),
            queue: VecDeque::new(),
            consumed: 0,
            usage: TokenUsage::default(),
            usage_estimated: false,
            requests: Vec::new(),
            provider_faults: 0,
            malformed_answers: 0,
            end: None,
        }
    }

    /// Malformed L0/L1 answers so far (unreadable slots JSON, an L1 answer that is neither
    /// retry nor skip). L2 malformed tool calls are counted by the scaffold.
    pub fn malformed_answers(&self) -> u32 {
        self.malformed_answers
    }

    fn text_mode(&self) -> bool {
        self.config.tool_protocol == ToolProtocol::Text
    }

    fn remaining(&self) -> u64 {
        self.config
            .token_budget
            .saturating_sub(self.usage.completion_tokens)
    }

    fn fail(&mut self, err: PolicyError) -> PolicyError {
        self.end = Some(err.to_string());
        err
    }

    /// One request: the budget left (capped for the one-word and one-object questions of L0
    /// and L1) becomes the output limit; quirks decide the fields.
    fn ask(
        &mut self,
        kind: Kind,
        messages: &[Value],
        with_tools: bool,
    ) -> Result<(ResponseMessage, Option<String>), PolicyError> {
        let remaining = self.remaining();
        if remaining == 0 {
            return Err(self.fail(PolicyError::TokenBudget));
        }
        let q = self.config.quirks;
        let limit = match kind {
            Kind::Slots => remaining.min(q.answer_cap(true)),
            Kind::Fault => remaining.min(q.answer_cap(false)),
            Kind::Turn => remaining,
        };
        let mut body = Map::new();
        body.insert("model".into(), json!(self.config.model));
        body.insert("messages".into(), Value::Array(messages.to_vec()));
        body.insert(q.token_param.field().into(), json!(limit));
        if q.temperature_zero {
            body.insert("temperature".into(), json!(0));
        }
        if with_tools && !self.text_mode() {
            body.insert(
                "tools".into(),
                Value::Array(self.tools.iter().map(ToolSpec::to_openai).collect()),
            );
            if let Some(choice) = &self.config.tool_choice {
                body.insert("tool_choice".into(), json!(choice));
            }
        }
        if with_tools && self.text_mode() && q.stop {
            body.insert("stop".into(), json!([text_protocol::CLOSE]));
        }
        let body = Value::Object(body);
        let mut params = body.clone();
        if let Some(p) = params.as_object_mut() {
            p.remove("messages");
            p.remove("tools");
        }
        let mut log = json!({"kind": kind.name(), "params": params});
        if matches!(kind, Kind::Turn) {
            log["messages_sent"] = json!(messages.len());
        } else {
            log["messages"] = Value::Array(messages.to_vec());
        }
        let completion = match self.client.complete(&body) {
            Ok(c) => c,
            Err(e) => {
                if let ClientError::Exhausted { faults, .. } = &e {
                    self.provider_faults += faults.len();
                    log["provider_faults"] = json!(faults);
                }
                log["error"] = json!(e.to_string());
                self.requests.push(log);
                let name = &self.config.name;
                let err = match &e {
                    ClientError::ContextOverflow { .. } => {
                        PolicyError::ContextOverflow(format!("{name}: {e}"))
                    }
                    ClientError::Rejected { .. } | ClientError::Setup(_) => {
                        PolicyError::Fatal(format!("{name}: {e}"))
                    }
                    ClientError::Exhausted { .. } | ClientError::Unreachable { .. } => {
                        PolicyError::Infra(format!("{name}: {e}"))
                    }
                };
                return Err(self.fail(err));
            }
        };
        self.provider_faults += completion.faults.len();
        log["provider_faults"] = json!(completion.faults);
        log["latency_ms"] = json!(completion.latency.as_secs_f64() * 1000.0);
        let parsed: Result<ChatResponse, _> = serde_json::from_value(completion.body.clone());
        log["response"] = completion.body;
        let choice = match parsed.map(|r| (r.choices.into_iter().next(), r.usage)) {
            Ok((Some(c), usage)) => (c, usage),
            Ok((None, _)) | Err(_) => {
                log["error"] = json!("unreadable response");
                self.requests.push(log);
                return Err(self.fail(PolicyError::Infra(format!(
                    "{}: the provider's response has no readable choice",
                    self.config.name
                ))));
            }
        };
        let (choice, usage) = choice;
        let (prompt, completion_tokens, estimated) = match parse_usage(usage.as_ref()) {
            Some(u) => (u.prompt_tokens, u.completion_tokens, false),
            None => (0, estimate_tokens(&choice.message), true),
        };
        self.usage.prompt_tokens = self.usage.prompt_tokens.saturating_add(prompt);
        self.usage.completion_tokens = self
            .usage
            .completion_tokens
            .saturating_add(completion_tokens);
        self.usage.requests = self.usage.requests.saturating_add(1);
        self.usage_estimated |= estimated;
        log["usage"] = json!({"prompt_tokens": prompt, "completion_tokens": completion_tokens, "estimated": estimated,
            "episode_completion_tokens": self.usage.completion_tokens});
        log["finish_reason"] = json!(choice.finish_reason);
        let overflow = (!estimated && choice.finish_reason.as_deref() == Some("length"))
            .then(|| self.context_ran_out(prompt, completion_tokens, limit))
            .flatten();
        if let Some(why) = overflow {
            log["context_overflow"] = json!(why);
            self.requests.push(log);
            return Err(self.fail(PolicyError::ContextOverflow(format!(
                "{}: {why}",
                self.config.name
            ))));
        }
        self.requests.push(log);
        Ok((choice.message, choice.finish_reason))
    }

    /// Whether a reply that ended with `finish_reason: "length"` was cut by the context window
    /// rather than by the output limit: llama.cpp's server answers 200 and "length" when the
    /// conversation fills the context mid-generation (local-llm.md defect 2). With the
    /// server's context size known (preflight), the reply filled it; otherwise the reply
    /// stopped short of the limit the request set.
    fn context_ran_out(&self, prompt: u64, completion: u64, limit: u64) -> Option<String> {
        let n_ctx = self.config.server.as_ref().and_then(|s| s.n_ctx);
        let full = match n_ctx {
            Some(n) => prompt.saturating_add(completion) >= n,
            None => completion < limit,
        };
        full.then(|| {
            format!(
                "the reply stopped after {completion} of {limit} output tokens with finish_reason \"length\": the context window{} is full ({prompt} prompt tokens)",
                n_ctx.map(|n| format!(" of {n} tokens")).unwrap_or_default()
            )
        })
    }

    /// Appends the results of steps the scaffold executed since the last turn.
    fn absorb(&mut self, history: &[Step]) {
        let Some(ep) = self.episode else { return };
        let text_mode = self.text_mode();
        for (i, step) in history.iter().enumerate().skip(self.consumed) {
            let result = step.result.to_json(ep.render_task);
            if text_mode {
                let block = text_protocol::tool_response(&step.call.name, &result);
                // Results of one reply share one user message (strict chat templates reject
                // consecutive user turns).
                match self.conversation.last_mut() {
                    Some(last) if last.get("tool_results").is_some() => {
                        let content = last["content"].as_str().unwrap_or("").to_string();
                        last["content"] = json!(format!("{content}\n{block}"));
                    }
                    _ => self
                        .conversation
                        .push(json!({"role": "user", "content": block, "tool_results": true})),
                }
            } else {
                let id = self
                    .issued
                    .get(i)
                    .map_or_else(|| format!("call_{i}"), |c| c.id.clone());
                self.conversation.push(
                    json!({"role": "tool", "tool_call_id": id, "content": result.to_string()}),
                );
            }
        }
        self.consumed = self.consumed.max(history.len());
    }

    /// The conversation as sent: our bookkeeping marker removed.
    fn wire_messages(&self) -> Vec<Value> {
        self.conversation
            .iter()
            .map(|m| {
                let mut m = m.clone();
                if let Some(o) = m.as_object_mut() {
                    o.remove("tool_results");
                }
                m
            })
            .collect()
    }

    fn next_issued(&mut self) -> Option<Action> {
        let next = self.queue.pop_front()?;
        let action = Action::Call(next.call.clone());
        self.issued.push(next);
        Some(action)
    }
}

impl Policy for LlmPolicy {
    fn name(&self) -> String {
        self.config.name.clone()
    }

    fn begin_episode(&mut self, start: &EpisodeStart) {
        // Only the level and the submission protocol shape what the model is told.
        let protocol = start.options.submission;
        *self = LlmPolicy::new(Arc::clone(&self.config), Arc::clone(&self.client));
        self.episode = Some(EpisodeState {
            render_task: start.task,
            level: start.level,
            protocol,
        });
        self.tools = prompts::tool_specs(protocol, self.config.tool_text);
        let system = prompts::system_prompt(self.config.step_limit);
        let system = if self.text_mode() {
            text_protocol::system_prompt(&system, &self.tools)
        } else {
            system
        };
        self.conversation = vec![
            message("system", &system),
            message("user", prompts::TASK_PROMPT),
        ];
    }

    fn fill_slots(&mut self, info: &TaskInfo) -> Result<Option<Slots>, PolicyError> {
        let messages = prompts::slots_prompt(info);
        let (reply, _) = self.ask(Kind::Slots, &messages, false)?;
        let slots = prompts::parse_slots(&reply.text());
        if slots.is_none() {
            self.malformed_answers += 1;
        }
        if let Some(last) = self.requests.last_mut() {
            last["parsed"] = json!(slots);
        }
        // Unreadable: the harness counts it and falls back to the task's values.
        Ok(slots)
    }

    fn on_fault(&mut self, fault: &FaultContext) -> Result<Option<FaultDecision>, PolicyError> {
        let messages = prompts::fault_prompt(fault);
        let (reply, _) = self.ask(Kind::Fault, &messages, false)?;
        let decision = prompts::parse_decision(&reply.text());
        if let Some(last) = self.requests.last_mut() {
            last["parsed"] = json!(decision);
        }
        if decision.is_none() {
            self.malformed_answers += 1;
        }
        // Unreadable: the harness counts it and imputes a decision that is not the model's.
        Ok(decision)
    }

    fn next_action(&mut self, history: &[Step]) -> Result<Action, PolicyError> {
        if self.episode.is_none() {
            return Ok(Action::Stop {
                reason: "begin_episode was not called".into(),
            });
        }
        self.absorb(history);
        if let Some(action) = self.next_issued() {
            return Ok(action);
        }
        let messages = self.wire_messages();
        let (reply, finish) = self.ask(Kind::Turn, &messages, true)?;
        let text = reply.text();
        let turn = self.issued.len() + self.queue.len();
        let mut calls: Vec<Issued> = if self.text_mode() {
            text_protocol::parse_calls(&text)
                .into_iter()
                .enumerate()
                .map(|(i, call)| Issued {
                    id: format!("text_call_{}", turn + i),
                    call,
                })
                .collect()
        } else {
            reply
                .tool_calls
                .iter()
                .flatten()
                .enumerate()
                .map(|(i, c)| Issued {
                    id: c
                        .id
                        .clone()
                        .filter(|id| !id.is_empty())
                        .unwrap_or_else(|| format!("call_{}", turn + i)),
                    call: ToolCall {
                        name: c.function.name.clone().unwrap_or_default(),
                        arguments: parse_arguments(c.function.arguments.as_ref()),
                    },
                })
                .collect()
        };
        // A call in the wrong envelope: bare or fenced JSON naming an offered tool (native), or
        // another tag than <tool_call> (text). Counted as malformed unless the lenient reading
        // is on, which executes it (recorded in the manifest: it changes what is measured).
        let mut recovered = false;
        if calls.is_empty() {
            let names: Vec<&str> = self.tools.iter().map(|t| t.name).collect();
            let found = calls_in_text(&text, &names);
            if !found.is_empty() && !self.config.lenient_calls {
                self.conversation.push(message("assistant", &text));
                let why = format!(
                    "the reply holds {} call(s) of {} outside the {} envelope",
                    found.len(),
                    found
                        .iter()
                        .map(|(n, _)| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    if self.text_mode() {
                        "<tool_call>"
                    } else {
                        "native tool-call"
                    }
                );
                self.end = Some(why.clone());
                if let Some(last) = self.requests.last_mut() {
                    last["unreadable_calls"] = json!(found.len());
                }
                return Ok(Action::Unreadable { reason: why });
            }
            recovered = !found.is_empty();
            calls = found
                .into_iter()
                .enumerate()
                .map(|(i, (name, arguments))| Issued {
                    id: format!("lenient_call_{}", turn + i),
                    call: ToolCall { name, arguments },
                })
                .collect();
            if recovered && let Some(last) = self.requests.last_mut() {
                last["lenient_calls"] = json!(calls.len());
            }
        }
        // The assistant turn as the model will see it next time.
        if recovered && !self.text_mode() {
            let tool_calls: Vec<Value> = calls
                .iter()
                .map(|c| {
                    json!({"id": c.id, "type": "function", "function": {
                        "name": c.call.name, "arguments": c.call.arguments.to_string()}})
                })
                .collect();
            self.conversation
                .push(json!({"role": "assistant", "content": text, "tool_calls": tool_calls}));
        } else if self.text_mode() {
            let mut content = text.clone();
            if content.rfind(text_protocol::OPEN) > content.rfind(text_protocol::CLOSE) {
                content.push_str(text_protocol::CLOSE); // generation stopped at the stop sequence
            }
            self.conversation.push(message("assistant", &content));
        } else if calls.is_empty() {
            self.conversation.push(message("assistant", &text));
        } else {
            let tool_calls: Vec<Value> = reply
                .tool_calls
                .iter()
                .flatten()
                .zip(&calls)
                .map(|(c, issued)| {
                    json!({"id": issued.id, "type": "function", "function": {
                        "name": issued.call.name, "arguments": arguments_text(c.function.arguments.as_ref())}})
                })
                .collect();
            let content = if text.is_empty() {
                Value::Null
            } else {
                json!(text)
            };
            self.conversation
                .push(json!({"role": "assistant", "content": content, "tool_calls": tool_calls}));
        }
        if calls.is_empty() {
            if self.remaining() == 0 {
                return Err(self.fail(PolicyError::TokenBudget));
            }
            let why = match finish.as_deref() {
                Some("length") => {
                    "the reply was cut off by the output limit without a tool call".to_string()
                }
                _ if text.trim().is_empty() => "the model replied without a tool call".to_string(),
                _ => format!("the model replied without a tool call: {}", text.trim()),
            };
            self.end = Some(why.clone());
            return Ok(Action::Stop { reason: why });
        }
        self.queue.extend(calls);
        Ok(self.next_issued().unwrap_or(Action::Stop {
            reason: "no call".into(),
        }))
    }

    fn step_limit(&self, _task: &TaskSpec) -> u32 {
        self.config.step_limit
    }

    fn usage(&self) -> TokenUsage {
        self.usage
    }

    fn transcript(&self) -> Option<Value> {
        let ep = self.episode?;
        let mut t = json!({
            "model": self.config.name,
            "endpoint": self.client.endpoint(),
            "settings": {
                "config": *self.config,
                "retry": self.client.retry_policy(),
            },
            "level": ep.level,
            "protocol": ep.protocol,
            "requests": self.requests,
            "usage": {
                "prompt_tokens": self.usage.prompt_tokens,
                "completion_tokens": self.usage.completion_tokens,
                "requests": self.usage.requests,
                "estimated": self.usage_estimated,
                "token_budget": self.config.token_budget,
            },
            "provider_faults": self.provider_faults,
            "malformed_answers": self.malformed_answers,
            "end": self.end,
        });
        if ep.level == Level::L2 {
            t["tools"] = Value::Array(self.tools.iter().map(ToolSpec::to_openai).collect());
            t["conversation"] = Value::Array(self.wire_messages());
        }
        Some(scrub_json(self.client.key(), t))
    }
}
