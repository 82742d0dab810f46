//! L2 retry/skip accounting (issue 11): a retry is a later fetch of the same page after a
//! fault, whatever calls come between and however the page number is written ("2", 2, 2.0);
//! only moving on to another page or submitting is a skip. A scripted policy drives a faulting
//! task through the real scaffold and episode.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use benchaudit_agents::{
    Action, AgentCounts, EpisodeSpec, EpisodeStart, FaultContext, FaultDecision, Level, Policy,
    PolicyError, RunOptions, Slots, Step, ToolCall, ToolResult, run_episode,
};
use benchaudit_comtrade::{TaskInfo, task};
use serde_json::{Value, json};

/// After a fault: optionally an interlude call, then the follow-up chosen by `after_fault`.
struct Scripted {
    /// How the faulted page is written when fetched again (or another page / a submit).
    after_fault: fn(i64) -> Vec<ToolCall>,
    queue: Vec<ToolCall>,
    faults: usize,
}

impl Scripted {
    fn new(after_fault: fn(i64) -> Vec<ToolCall>) -> Self {
        Scripted {
            after_fault,
            queue: Vec::new(),
            faults: 0,
        }
    }
}

fn fetch(page: Value) -> ToolCall {
    ToolCall::new("fetch_page", json!({"page": page}))
}

impl Policy for Scripted {
    fn name(&self) -> String {
        "scripted".into()
    }
    fn begin_episode(&mut self, _start: &EpisodeStart) {}
    fn fill_slots(&mut self, _info: &TaskInfo) -> Result<Option<Slots>, PolicyError> {
        Ok(None)
    }
    fn on_fault(&mut self, _f: &FaultContext) -> Result<Option<FaultDecision>, PolicyError> {
        Ok(None)
    }
    fn next_action(&mut self, history: &[Step]) -> Result<Action, PolicyError> {
        if !self.queue.is_empty() {
            return Ok(Action::Call(self.queue.remove(0)));
        }
        let Some(last) = history.last() else {
            return Ok(Action::Call(fetch(json!(1))));
        };
        // The last page fetched successfully, to know where to go next.
        let page_of = |c: &ToolCall| {
            benchaudit_comtrade::FetchPageArgs::from_json(&c.arguments)
                .ok()
                .map(|a| a.page)
        };
        match &last.result {
            ToolResult::Error(e) if e.retry && last.call.name == "fetch_page" => {
                self.faults += 1;
                let p = page_of(&last.call).unwrap();
                self.queue = (self.after_fault)(p);
                Ok(Action::Call(self.queue.remove(0)))
            }
            ToolResult::Page(page) if page.has_more => {
                Ok(Action::Call(fetch(json!(page.page + 1))))
            }
            _ => Ok(Action::Call(ToolCall::new(
                "submit_results",
                json!({"data_jsonl": "", "metadata_json": "{}", "run_log": ""}),
            ))),
        }
    }
    fn step_limit(&self, _task: &benchaudit_comtrade::TaskSpec) -> u32 {
        200
    }
}

fn counts(after_fault: fn(i64) -> Vec<ToolCall>) -> AgentCounts {
    let spec = EpisodeSpec {
        task: task("T4_rate_limit_429").unwrap(),
        seed: 0,
        level: Level::L2,
        options: RunOptions::default(),
    };
    let run = run_episode(&spec, &mut Scripted::new(after_fault));
    let c = run.record.counts;
    assert!(c.faults_seen >= 1, "the task faults: {c:?}");
    c
}

#[test]
fn a_refetch_after_other_calls_is_a_retry() {
    let c = counts(|p| {
        vec![
            ToolCall::new("get_task_info", json!({})),
            ToolCall::new("no_such_tool", json!({})),
            fetch(json!(p)),
        ]
    });
    assert_eq!((c.retries, c.skips), (c.faults_seen, 0), "{c:?}");
    assert_eq!(c.malformed_calls, c.faults_seen);
}

#[test]
fn the_page_number_is_read_as_the_episode_reads_it() {
    for write in [
        (|p| vec![fetch(json!(p.to_string()))]) as fn(i64) -> Vec<ToolCall>,
        |p| vec![fetch(json!(p as f64))],
        |p| vec![fetch(json!(format!(" {p} ")))],
    ] {
        let c = counts(write);
        assert_eq!((c.retries, c.skips), (c.faults_seen, 0), "{c:?}");
    }
}

#[test]
fn moving_on_or_submitting_is_a_skip() {
    let c = counts(|p| {
        vec![
            ToolCall::new("get_task_info", json!({})),
            fetch(json!(p + 1)),
        ]
    });
    assert_eq!((c.retries, c.skips), (0, c.faults_seen), "{c:?}");
    let c = counts(|_| {
        vec![ToolCall::new(
            "submit_results",
            json!({"data_jsonl": "", "metadata_json": "{}", "run_log": ""}),
        )]
    });
    assert_eq!((c.retries, c.skips), (0, 1), "{c:?}");
}
