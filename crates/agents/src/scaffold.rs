//! The three scaffolds. L0 and L1 share the production harness (retry with backoff, dedup by
//! primary key, drop totals, page to completion, assemble metadata and log, submit); they
//! differ only in who answers the fault question. L2 hands the model the tools.

use benchaudit_comtrade::{Episode, FetchPageArgs, SubmissionProtocol, TaskSpec, ToolError};
use benchaudit_scoring::{Scores, coverage::coverage};
use serde_json::{Value, json};

use crate::collector::{Collector, Report, metadata_json, payload_sha256};
use crate::level::Level;
use crate::policy::{
    Action, EpisodeStart, FaultContext, FaultDecision, Policy, PolicyError, Slots, Step, ToolCall,
    ToolResult,
};
use crate::record::{AgentCounts, EpisodeRecord, EpisodeSpec, Outcome, Timing};
use crate::tools::execute;
use crate::transcript::{Event, Transcript};

/// Retries the L0 harness allows per page before it gives the page up.
pub const HARNESS_MAX_RETRIES: u32 = 5;

/// What the L1 harness does with an answer it cannot read: it gives the page up. The decision
/// is recorded as imputed (`imputed_decisions`), not as the model's skip.
pub const IMPUTED_L1_DECISION: FaultDecision = FaultDecision::Skip;

/// Records per `append_results` call when a scaffold submits under `chunked`.
pub const CHUNK_ROWS: usize = 200;

/// A finished episode: its ledger record and its transcript.
#[derive(Debug, Clone)]
pub struct EpisodeRun {
    /// What the ledger stores (timing left at zero: the caller measures it).
    pub record: EpisodeRecord,
    /// What happened, step by step.
    pub transcript: Transcript,
    /// Set when the provider refused a request outright (401/403, unknown model, invalid tool
    /// schema: [`PolicyError::Fatal`]). No later episode can succeed, so the runner must stop:
    /// not record this episode (the record says `infra_error`, so a resume runs it again),
    /// start no further episodes, and exit with this message.
    pub fatal: Option<String>,
}

/// Runs one episode of `spec` with `policy` at the spec's level.
pub fn run_episode(spec: &EpisodeSpec, policy: &mut dyn Policy) -> EpisodeRun {
    let key = spec.key(policy.name());
    let mut episode = match spec.options.stress {
        None => Episode::new(spec.task, spec.seed, spec.options.episode),
        Some(stress) => {
            match Episode::with_stress(spec.task, spec.seed, spec.options.episode, stress) {
                Ok(e) => e,
                // An invalid arm is a configuration error: recorded, never run, never scored.
                Err(e) => {
                    return EpisodeRun {
                        record: EpisodeRecord::failed(
                            key,
                            format!("invalid stress configuration: {e}"),
                        ),
                        transcript: Transcript::default(),
                        fatal: None,
                    };
                }
            }
        }
    };
    policy.begin_episode(&EpisodeStart {
        task: spec.task,
        level: spec.level,
        options: spec.options.episode,
    });
    let mut transcript = Transcript::default();
    let seat = Seat(&mut episode, spec, &mut *policy, &mut transcript);
    let result = match spec.level {
        Level::L0 | Level::L1 => harness(seat),
        Level::L2 => slim(seat),
    };
    transcript.messages = policy.transcript();
    let served = episode.counts();
    let mut counts = result.counts;
    counts.requests = served.requests;
    counts.duplicates_served = served.duplicates_served;
    counts.totals_served = served.totals_served;
    counts.quota_deaths = u32::from(served.budget_exhausted > 0);
    let (scores, reward, payload) = match (&result.outcome, result.submitted) {
        (Outcome::InfraError, _) => (None, None, None),
        (_, Some(sub)) => {
            let s = sub.scores.clone();
            (
                Some(s),
                Some(sub.reward),
                Some(payload_sha256(&sub.submission)),
            )
        }
        (_, None) => {
            // No submission: the missing files are what gets scored.
            let s = Scores::compute(
                spec.task,
                spec.seed,
                &benchaudit_comtrade::Submission::default(),
            );
            let r = s.reward(spec.options.reward);
            (Some(s), Some(r), None)
        }
    };
    let record = EpisodeRecord {
        key,
        outcome: result.outcome,
        reward,
        scores,
        coverage: result.coverage,
        counts,
        payload_sha256: payload,
        usage: policy.usage(),
        error: result.error,
        mean_intensity: episode.stress_trace().and_then(|t| t.mean_intensity()),
        timing: Timing::default(),
    };
    EpisodeRun {
        record,
        transcript,
        fatal: result.fatal,
    }
}

/// What a scaffold drives: the episode, its spec, the policy, and the transcript it writes.
struct Seat<'a>(
    &'a mut Episode,
    &'a EpisodeSpec,
    &'a mut dyn Policy,
    &'a mut Transcript,
);

struct ScaffoldResult {
    outcome: Outcome,
    submitted: Option<crate::policy::SubmitResponse>,
    coverage: Option<f64>,
    counts: AgentCounts,
    error: Option<String>,
    fatal: Option<String>,
}

impl ScaffoldResult {
    /// An episode that ended with the policy's `outcome` and nothing submitted.
    fn ended(outcome: Outcome, counts: AgentCounts) -> Self {
        ScaffoldResult {
            outcome,
            submitted: None,
            coverage: None,
            counts,
            error: None,
            fatal: None,
        }
    }

    fn failed(err: PolicyError, counts: AgentCounts) -> Self {
        let (outcome, fatal) = match &err {
            PolicyError::Infra(_) => (Outcome::InfraError, None),
            PolicyError::TokenBudget => (Outcome::TokenBudget, None),
            PolicyError::ContextOverflow(_) => (Outcome::ContextOverflow, None),
            PolicyError::Fatal(_) => (Outcome::InfraError, Some(err.to_string())),
        };
        ScaffoldResult {
            error: Some(err.to_string()),
            fatal,
            ..ScaffoldResult::ended(outcome, counts)
        }
    }
}

/// The L0 slot check: every slot must agree with the task, or the harness uses the task's value.
fn validate_slots(task: &TaskSpec, slots: &Slots) -> Vec<String> {
    let q = &task.query;
    let mut replaced = Vec::new();
    let mut check = |name: &str, ok: bool| {
        if !ok {
            replaced.push(name.to_string());
        }
    };
    check(
        "reporter",
        slots.reporter.as_deref().is_none_or(|v| v == q.reporter),
    );
    check(
        "partner",
        slots.partner.as_deref().is_none_or(|v| v == q.partner),
    );
    check("flow", slots.flow.as_deref().is_none_or(|v| v == q.flow));
    check("hs", slots.hs.as_deref().is_none_or(|v| v == q.hs));
    check("year", slots.year.is_none_or(|v| v == q.year));
    check("start_page", slots.start_page.is_none_or(|v| v == 1));
    check(
        "max_pages",
        slots.max_pages.is_none_or(|v| v >= task.total_pages()),
    );
    replaced
}

fn harness(Seat(episode, spec, policy, tr): Seat<'_>) -> ScaffoldResult {
    let task = spec.task;
    let mut counts = AgentCounts::default();
    if spec.level == Level::L0 {
        let info = episode.get_task_info();
        match policy.fill_slots(&info) {
            Ok(answer) => {
                // An unreadable answer leaves every slot empty: the harness uses the task's
                // values, a decision it makes in the model's place.
                let imputed = answer.is_none();
                if imputed {
                    counts.unreadable_answer_imputed();
                }
                let slots = answer.unwrap_or_default();
                let replaced = validate_slots(task, &slots);
                counts.slots_replaced = u32::try_from(replaced.len()).unwrap_or(u32::MAX);
                tr.events.push(Event::Slots {
                    slots,
                    replaced,
                    imputed,
                });
            }
            Err(e) => return ScaffoldResult::failed(e, counts),
        }
    }
    let mut collector = Collector::new(task, true, true);
    let mut log = vec![format!(
        "INFO task_id={} level={} harness=production",
        task.task_id, spec.level
    )];
    let mut faults_on_page = vec![0u32; task.total_pages() as usize + 1];
    let mut complete = true;
    let mut page = 1u32;
    'pages: loop {
        let call = ToolCall::new(
            "fetch_page",
            json!({"page": page, "page_size": task.page_size}),
        );
        tr.call(&call);
        counts.tool_calls += 1;
        match episode.fetch_page(FetchPageArgs {
            page: i64::from(page),
            page_size: Some(i64::from(task.page_size)),
        }) {
            Ok(resp) => {
                let new = collector.accept(&resp.rows);
                log.push(format!(
                    "INFO request={} page={page} rows={} new={new}",
                    resp.request,
                    resp.rows.len()
                ));
                tr.result("fetch_page", ToolResult::Page(resp.clone()).summary(task));
                if !resp.has_more {
                    break 'pages;
                }
                page += 1;
            }
            Err(err) => {
                tr.result("fetch_page", err.to_json());
                let request = episode.counts().requests;
                if !(err.retry && matches!(err.status, 429 | 500)) {
                    log.push(format!(
                        "ERROR request={request} page={page} status={} {}; stopping",
                        err.status, err.error
                    ));
                    complete = false;
                    break 'pages;
                }
                counts.faults_seen += 1;
                let slot = faults_on_page.get_mut(page as usize);
                let attempt = slot.map_or(1, |n| {
                    *n += 1;
                    *n
                });
                // (decision, whether the harness imputed it after an unreadable answer)
                let (decision, imputed) = match spec.level {
                    Level::L0 => {
                        if attempt <= HARNESS_MAX_RETRIES {
                            (FaultDecision::Retry, false)
                        } else {
                            (FaultDecision::Skip, false)
                        }
                    }
                    _ => {
                        let fault = FaultContext {
                            task_id: task.task_id,
                            page,
                            status: err.status,
                            error: err.error.clone(),
                            retry_after_s: err.retry_after_s,
                            attempt,
                            requests_remaining: episode.requests_remaining(),
                            pages_remaining: task.total_pages().saturating_sub(page) + 1,
                        };
                        match policy.on_fault(&fault) {
                            Ok(answer) => {
                                // Unreadable: the page is given up. Imputing a retry would
                                // credit the model with a recovery it did not choose.
                                let imputed = answer.is_none();
                                if imputed {
                                    counts.unreadable_answer_imputed();
                                }
                                let d = answer.unwrap_or(IMPUTED_L1_DECISION);
                                tr.events.push(Event::Decision {
                                    fault,
                                    decision: d,
                                    imputed,
                                });
                                (d, imputed)
                            }
                            Err(e) => return ScaffoldResult::failed(e, counts),
                        }
                    }
                };
                let whose = if imputed {
                    " (imputed: the answer was unreadable)"
                } else {
                    ""
                };
                match decision {
                    FaultDecision::Retry => {
                        counts.retries += 1;
                        log.push(format!(
                            "WARN request={request} page={page} status={} {}; retrying with exponential backoff (attempt {attempt}, max_retries={HARNESS_MAX_RETRIES})",
                            err.status, err.error
                        ));
                    }
                    FaultDecision::Skip => {
                        if !imputed {
                            counts.skips += 1;
                        }
                        complete = false;
                        log.push(format!(
                            "WARN request={request} page={page} status={} {}; skipping page{whose}",
                            err.status, err.error
                        ));
                        if page >= task.total_pages() {
                            break 'pages;
                        }
                        page += 1;
                    }
                }
            }
        }
    }
    let report = Report {
        row_count: collector.kept().len(),
        requests: episode.counts().requests,
        retries: counts.retries,
        skips: counts.skips,
        duplicates_dropped: collector.duplicates_dropped(),
        totals_dropped: collector.totals_dropped(),
        complete,
    };
    log.push(format!(
        "INFO complete={complete} rows={} requests={} duplicates_dropped={} totals_dropped={}",
        report.row_count, report.requests, report.duplicates_dropped, report.totals_dropped
    ));
    let cov = coverage(episode.generator(), collector.held_indices());
    let submitted = submit_collected(
        episode,
        spec,
        &collector,
        &report,
        &log.join("\n"),
        tr,
        &mut counts,
    );
    let outcome = if submitted.is_some() {
        Outcome::Submitted
    } else {
        Outcome::NoSubmission
    };
    ScaffoldResult {
        submitted,
        coverage: Some(cov),
        ..ScaffoldResult::ended(outcome, counts)
    }
}

/// Submits what a collector holds under the episode's protocol (harness side).
fn submit_collected(
    episode: &mut Episode,
    spec: &EpisodeSpec,
    collector: &Collector,
    report: &Report,
    log: &str,
    tr: &mut Transcript,
    counts: &mut AgentCounts,
) -> Option<crate::policy::SubmitResponse> {
    let metadata = metadata_json(spec.task, report);
    let calls = submission_calls(
        spec.options.episode.submission,
        collector.data_jsonl(),
        collector.ids(),
        metadata,
        log.to_string(),
    );
    let mut last = None;
    for call in calls {
        tr.call(&call);
        counts.tool_calls += 1;
        let (result, _) = execute(episode, &call, spec.options.reward);
        tr.result(&call.name, result.summary(spec.task));
        last = Some(result);
    }
    match last {
        Some(ToolResult::Submitted(s)) => Some(*s),
        _ => None,
    }
}

/// The calls that hand `data` back under a protocol: one submit, ids, or chunks then submit.
pub fn submission_calls(
    protocol: SubmissionProtocol,
    data_jsonl: String,
    ids: Vec<String>,
    metadata_json: String,
    run_log: String,
) -> Vec<ToolCall> {
    // The arguments are built by moving the strings in: `json!` would copy each of them (the
    // data is the whole payload).
    let args = |first: Option<(&str, Value)>| {
        let mut m = serde_json::Map::new();
        if let Some((key, value)) = first {
            m.insert(key.to_string(), value);
        }
        m.insert("metadata_json".into(), Value::String(metadata_json));
        m.insert("run_log".into(), Value::String(run_log));
        Value::Object(m)
    };
    match protocol {
        SubmissionProtocol::Full => vec![ToolCall::new(
            "submit_results",
            args(Some(("data_jsonl", Value::String(data_jsonl)))),
        )],
        SubmissionProtocol::Ids => vec![ToolCall::new(
            "submit_results",
            args(Some((
                "record_ids",
                Value::Array(ids.into_iter().map(Value::String).collect()),
            ))),
        )],
        SubmissionProtocol::Chunked => {
            let lines: Vec<&str> = data_jsonl.lines().collect();
            let mut calls: Vec<ToolCall> = lines
                .chunks(CHUNK_ROWS)
                .map(|c| ToolCall::new("append_results", json!({"data_jsonl": c.join("\n")})))
                .collect();
            calls.push(ToolCall::new("submit_results", args(None)));
            calls
        }
    }
}

/// The page a `fetch_page` call asks for, read as the episode reads it ("2", 2 and 2.0 are all
/// page 2); `None` for any other call or unreadable arguments.
fn fetched_page(call: &ToolCall) -> Option<i64> {
    (call.name == "fetch_page")
        .then(|| FetchPageArgs::from_json(&call.arguments).ok())
        .flatten()
        .map(|a| a.page)
}

/// L2 retry/skip accounting (SPEC §4.1): after a transient fault on page p, the first later call
/// that fetches p is a retry, whatever calls came between; fetching another page or submitting
/// is a skip; a fault still pending when the episode ends otherwise is neither (the model made
/// no decision about it).
#[derive(Debug, Default)]
struct FaultTracker {
    pending: Option<i64>,
}

impl FaultTracker {
    fn on_call(&mut self, call: &ToolCall, counts: &mut AgentCounts) {
        let Some(faulted) = self.pending else { return };
        match fetched_page(call) {
            Some(p) if p == faulted => counts.retries += 1,
            Some(_) => counts.skips += 1,
            None if call.name == "submit_results" => counts.skips += 1,
            None => return,
        }
        self.pending = None;
    }

    fn on_result(&mut self, call: &ToolCall, result: &ToolResult, counts: &mut AgentCounts) {
        if let ToolResult::Error(ToolError {
            status: 429 | 500,
            retry: true,
            ..
        }) = result
            && let Some(page) = fetched_page(call)
        {
            counts.faults_seen += 1;
            self.pending = Some(page);
        }
    }
}

fn slim(Seat(episode, spec, policy, tr): Seat<'_>) -> ScaffoldResult {
    let task = spec.task;
    let mut counts = AgentCounts::default();
    let mut history: Vec<Step> = Vec::new();
    let limit = policy.step_limit(task);
    let mut faults = FaultTracker::default();
    for _ in 0..limit {
        let action = match policy.next_action(&history) {
            Ok(a) => a,
            Err(e) => return ScaffoldResult::failed(e, counts),
        };
        let call = match action {
            Action::Call(call) => call,
            Action::Stop { reason } => {
                tr.note(format!("policy stopped: {reason}"));
                return ScaffoldResult::ended(Outcome::NoSubmission, counts);
            }
            Action::Unreadable { reason } => {
                counts.malformed_calls += 1;
                tr.note(format!("unreadable tool call, episode ended: {reason}"));
                return ScaffoldResult::ended(Outcome::NoSubmission, counts);
            }
        };
        tr.call(&call);
        counts.tool_calls += 1;
        faults.on_call(&call, &mut counts);
        let (result, malformed) = execute(episode, &call, spec.options.reward);
        if malformed {
            counts.malformed_calls += 1;
        }
        faults.on_result(&call, &result, &mut counts);
        tr.result(&call.name, result.summary(task));
        match result {
            ToolResult::Submitted(s) => {
                return ScaffoldResult {
                    submitted: Some(*s),
                    ..ScaffoldResult::ended(Outcome::Submitted, counts)
                };
            }
            result => history.push(Step { call, result }),
        }
    }
    tr.note(format!(
        "step limit of {limit} reached without a submission"
    ));
    ScaffoldResult::ended(Outcome::StepLimit, counts)
}
