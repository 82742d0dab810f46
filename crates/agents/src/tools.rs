//! Executing tool calls on an episode: the single place where a model's untrusted call meets
//! the state machine. Unknown tools and unreadable arguments become tool errors the model
//! sees (and the scaffold counts), never panics.

use benchaudit_comtrade::{
    AppendArgs, ArgumentError, Episode, FetchPageArgs, Row, SubmitArgs, TaskInfoArgs, TaskSpec,
    unknown_tool,
};
use benchaudit_scoring::{RewardScorer, Scores};
use serde_json::{Value, json};

use crate::policy::{SubmitResponse, ToolCall, ToolResult};

/// Runs one call. The flag is true when the call itself was malformed (a tool the episode
/// does not offer — `append_results` outside the chunked protocol included — or arguments
/// that cannot be read); such a call gets the envelope REST and MCP give for it
/// ([`benchaudit_comtrade::argument_envelope`], [`benchaudit_comtrade::unknown_tool`]) and
/// spends no budget.
pub fn execute(episode: &mut Episode, call: &ToolCall, reward: RewardScorer) -> (ToolResult, bool) {
    let profile = episode.options().interface;
    let protocol = episode.options().submission;
    let malformed = |e: ArgumentError| (ToolResult::Error(e.envelope(profile)), true);
    if !protocol.tool_names().contains(&call.name.as_str()) {
        return (ToolResult::Error(unknown_tool(&call.name, protocol)), true);
    }
    match call.name.as_str() {
        "get_task_info" => match TaskInfoArgs::from_json(&call.arguments) {
            Ok(TaskInfoArgs) => (ToolResult::TaskInfo(episode.get_task_info()), false),
            Err(e) => malformed(e),
        },
        "fetch_page" => match FetchPageArgs::from_json(&call.arguments) {
            Ok(args) => match episode.fetch_page(args) {
                Ok(page) => (ToolResult::Page(page), false),
                Err(e) => (ToolResult::Error(e), false),
            },
            Err(e) => malformed(e),
        },
        "append_results" => match AppendArgs::from_json(&call.arguments) {
            Ok(args) => match episode.append_results(&args.data_jsonl) {
                Ok(n) => (ToolResult::Appended(n), false),
                Err(e) => (ToolResult::Error(e), false),
            },
            Err(e) => malformed(e),
        },
        "submit_results" => match SubmitArgs::from_json(&call.arguments) {
            Ok(args) => match episode.submit_results(args) {
                Ok(submission) => {
                    let scores = Scores::compute(episode.task(), episode.seed(), &submission);
                    let reward = scores.reward(reward);
                    (
                        ToolResult::Submitted(Box::new(SubmitResponse {
                            done: true,
                            reward,
                            scores,
                            submission,
                        })),
                        false,
                    )
                }
                Err(e) => (ToolResult::Error(e), false),
            },
            Err(e) => malformed(e),
        },
        other => (ToolResult::Error(unknown_tool(other, protocol)), true),
    }
}

impl ToolResult {
    /// The result as the model sees it (full rows).
    pub fn to_json(&self, task: &TaskSpec) -> Value {
        match self {
            ToolResult::TaskInfo(info) => serde_json::to_value(info).unwrap_or(Value::Null),
            ToolResult::Page(page) => page.to_json(task),
            ToolResult::Appended(n) => json!({"appended": true, "lines_held": n}),
            ToolResult::Submitted(s) => s.to_json(),
            ToolResult::Error(e) => e.to_json(),
        }
    }

    /// The result as a transcript keeps it: pages as their record ids.
    pub fn summary(&self, task: &TaskSpec) -> Value {
        match self {
            ToolResult::Page(page) => {
                let mut summary = json!({
                    "page": page.page,
                    "has_more": page.has_more,
                    "total_pages": page.total_pages,
                    "request": page.request,
                    "rows": page.rows.len(),
                });
                // Built in place: `json!` would copy every id once more.
                let ids = page.rows.iter().map(|r: &Row| Value::String(r.id(task)));
                if let Value::Object(m) = &mut summary {
                    m.insert("record_ids".into(), Value::Array(ids.collect()));
                }
                summary
            }
            other => other.to_json(task),
        }
    }
}

impl SubmitResponse {
    /// `{done, reward, scores: {f1, precision, recall, judge, judge_breakdown}, errors}` (the
    /// server's answer; the judge on 0–1).
    pub fn to_json(&self) -> Value {
        let s = &self.scores;
        json!({
            "done": self.done,
            "reward": self.reward,
            "scores": {"f1": s.f1, "precision": s.precision, "recall": s.recall, "judge": s.judge(), "judge_breakdown": s.judge_breakdown.shares()},
            "errors": s.judge_errors,
        })
    }
}
