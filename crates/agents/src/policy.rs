//! The `Policy` abstraction: "the model". One implementation answers a scaffold's requests at
//! every level — slot values at L0, retry-or-skip at L1, the next tool call at L2 — so the same
//! model (or rule policy) can be run at every level and only the ownership changes.

use benchaudit_comtrade::{
    EpisodeOptions, PageResponse, Submission, TaskInfo, TaskSpec, ToolError,
};
use benchaudit_scoring::Scores;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::level::Level;

/// What a policy learns when an episode starts. LLM policies read only what a model may see
/// (the level and protocol shape their prompt and tools); rule policies may use the rest.
#[derive(Debug, Clone, Copy)]
pub struct EpisodeStart {
    /// The task (rule policies only; an LLM sees `get_task_info`).
    pub task: &'static TaskSpec,
    /// The level the scaffold runs at.
    pub level: Level,
    /// Interface and submission protocol.
    pub options: EpisodeOptions,
}

/// L0 templated slots: which query to run and when to stop paging. The harness validates them
/// against the task and falls back to the task's values.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Slots {
    /// Reporter code to query.
    pub reporter: Option<String>,
    /// Partner code to query.
    pub partner: Option<String>,
    /// Flow to query.
    pub flow: Option<String>,
    /// HS code to query.
    pub hs: Option<String>,
    /// Year to query.
    pub year: Option<i64>,
    /// First page to fetch.
    pub start_page: Option<i64>,
    /// Stop after this many pages (the harness stops at `has_more: false` regardless).
    pub max_pages: Option<u32>,
}

/// What an L1 policy is told about a fault before it decides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FaultContext {
    /// Task id.
    pub task_id: &'static str,
    /// Page that faulted.
    pub page: u32,
    /// Status (429, 500).
    pub status: u16,
    /// The API's message.
    pub error: String,
    /// Suggested wait.
    pub retry_after_s: Option<u32>,
    /// How many times this page has faulted so far in this episode (1 on the first fault).
    pub attempt: u32,
    /// Requests left in the budget (or quota).
    pub requests_remaining: u32,
    /// Pages still to fetch, this one included.
    pub pages_remaining: u32,
}

/// The L1 decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FaultDecision {
    /// Call again.
    Retry,
    /// Give the page up.
    Skip,
}

/// A tool call as a model emits it: a name and untrusted JSON arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Tool name (`get_task_info`, `fetch_page`, `append_results`, `submit_results`).
    pub name: String,
    /// Arguments as sent (validated by the scaffold, never trusted).
    pub arguments: Value,
}

impl ToolCall {
    /// A call by name with arguments.
    pub fn new(name: &str, arguments: Value) -> Self {
        ToolCall {
            name: name.to_string(),
            arguments,
        }
    }
}

/// The answer of the submit tool (SPEC §2.3).
#[derive(Debug, Clone, PartialEq)]
pub struct SubmitResponse {
    /// Always true once accepted.
    pub done: bool,
    /// The episode's primary score.
    pub reward: f64,
    /// Both scorers.
    pub scores: Scores,
    /// The files as the scorers read them (after `ids` resolution / chunk assembly).
    pub submission: Submission,
}

/// What a tool call returned, typed (rendered to JSON for models and transcripts).
#[derive(Debug, Clone, PartialEq)]
pub enum ToolResult {
    /// `get_task_info`.
    TaskInfo(TaskInfo),
    /// `fetch_page` success.
    Page(PageResponse),
    /// `append_results`: lines held so far.
    Appended(usize),
    /// `submit_results` accepted.
    Submitted(Box<SubmitResponse>),
    /// Any tool error: faults, 422, budget, malformed calls.
    Error(ToolError),
}

/// One executed call.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// What the policy asked for.
    pub call: ToolCall,
    /// What it got.
    pub result: ToolResult,
}

/// An L2 policy's move.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Call a tool.
    Call(ToolCall),
    /// End the episode without (further) calls.
    Stop {
        /// Why, in the policy's words.
        reason: String,
    },
    /// The reply held what looks like a tool call in an envelope the tool protocol does not
    /// read (bare or fenced JSON naming a tool instead of a native call; another tag than
    /// `<tool_call>`). Counted as a malformed call; the episode ends as without a call.
    Unreadable {
        /// What was seen, in short.
        reason: String,
    },
}

/// Output-token accounting of an episode (zero for rule policies). Sums saturate: a provider
/// reporting absurd counts cannot overflow them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Prompt tokens billed.
    pub prompt_tokens: u64,
    /// Completion tokens billed.
    pub completion_tokens: u64,
    /// Model requests made.
    pub requests: u32,
}

/// Why a policy could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// The provider could not be reached or kept failing: not a model decision.
    #[error("infrastructure error: {0}")]
    Infra(String),
    /// The per-episode output-token budget is spent.
    #[error("output-token budget exhausted")]
    TokenBudget,
    /// The conversation no longer fits the model's context window: a model outcome.
    #[error("context window exceeded: {0}")]
    ContextOverflow(String),
    /// The provider refused the request itself (401/403, unknown model, invalid tool schema …):
    /// every later episode would fail the same way, so the run must stop
    /// ([`crate::EpisodeRun::fatal`]).
    #[error("the provider refused the request: {0}")]
    Fatal(String),
}

/// "The model": answers a scaffold's requests at any level.
pub trait Policy: Send {
    /// The name the ledger records (`oracle`, `openai:gpt-4o`, …).
    fn name(&self) -> String;

    /// Called once before an episode.
    fn begin_episode(&mut self, start: &EpisodeStart);

    /// L0: fill the templated slots. `None`: the answer could not be read (the harness counts a
    /// malformed decision and uses the task's values).
    fn fill_slots(&mut self, info: &TaskInfo) -> Result<Option<Slots>, PolicyError>;

    /// L1: retry or skip a transient fault. `None`: the answer could not be read (the harness
    /// counts a malformed decision and imputes one, never crediting it to the policy).
    fn on_fault(&mut self, fault: &FaultContext) -> Result<Option<FaultDecision>, PolicyError>;

    /// L2: the next move, given every step so far.
    fn next_action(&mut self, history: &[Step]) -> Result<Action, PolicyError>;

    /// L2 step limit this policy runs under (LLMs: 30; rule policies: enough for the budget).
    fn step_limit(&self, task: &TaskSpec) -> u32 {
        task.max_requests + 10
    }

    /// Tokens used so far in this episode.
    fn usage(&self) -> TokenUsage {
        TokenUsage::default()
    }

    /// The policy's own log of the episode (an LLM's messages), for the transcript.
    fn transcript(&self) -> Option<serde_json::Value> {
        None
    }
}
