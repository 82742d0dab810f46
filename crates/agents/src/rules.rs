//! Rule policies: "models" without an LLM whose decisions are known. The oracle is always right;
//! the released baseline and the B2 calibration rules (always-retry, always-skip, quota-aware)
//! reproduce paper A.3; each stand-in gets exactly one decision wrong, which is what makes the
//! key-free audit possible.

use benchaudit_comtrade::{SubmissionProtocol, TaskInfo, TaskSpec, ToolError};
use serde_json::json;

use crate::collector::{Collector, Report, metadata_json};
use crate::level::Decision;
use crate::policy::{
    Action, EpisodeStart, FaultContext, FaultDecision, Policy, PolicyError, Slots, Step, ToolCall,
    ToolResult,
};
use crate::scaffold::submission_calls;

/// How a rule policy answers a transient fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryRule {
    /// Retry until served (the budget is the only bound).
    Always,
    /// Never retry.
    Never,
    /// Retry once per page, then give it up (the released baseline).
    OncePerPage,
    /// Retry only while the budget covers the pages still to fetch plus this retry.
    QuotaAware,
}

/// The built-in rule policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuleKind {
    /// Always right.
    Oracle,
    /// The released rule-based baseline.
    Baseline,
    /// B2 calibration: retry every fault.
    AlwaysRetry,
    /// B2 calibration: skip every fault.
    AlwaysSkip,
    /// B2 calibration: retry while the quota allows.
    QuotaAware,
    /// Stand-in: keeps duplicates.
    NoDedup,
    /// Stand-in: keeps totals rows.
    KeepsTotals,
    /// Stand-in: gives up every faulted page.
    SkipsFaults,
    /// Stand-in: one pass, ignores drift.
    SinglePass,
    /// Stand-in: opens with fetch_page(0), repeats it, submits nothing (paper C.6).
    PageZero,
    /// Stand-in: submits records with invented ids.
    Fabricator,
    /// Stand-in: submits an empty record set.
    Empty,
    /// Interface probe (paper C.6): opens with fetch_page(0) and follows the `retry` flag of
    /// every rejection literally: `retry: true` re-issues the identical call (and, after
    /// [`PAGE_ZERO_REPEATS`] rejections, gives up and submits nothing, as page-zero does);
    /// `retry: false` varies the argument to page 1 and goes on as the oracle.
    RetryLiteral,
}

impl RuleKind {
    /// Every rule policy, in a stable order: the oracle, the baseline, the three fault-answer
    /// variants, every stand-in ([`RuleKind::STAND_INS`], in their order), then
    /// `retry-literal`.
    pub const ALL: [RuleKind; 13] = {
        let head = [
            RuleKind::Oracle,
            RuleKind::Baseline,
            RuleKind::AlwaysRetry,
            RuleKind::AlwaysSkip,
            RuleKind::QuotaAware,
        ];
        let mut all = [RuleKind::RetryLiteral; 13];
        let mut i = 0;
        while i < all.len() - 1 {
            all[i] = if i < head.len() {
                head[i]
            } else {
                RuleKind::STAND_INS[i - head.len()]
            };
            i += 1;
        }
        all
    };

    /// The stand-ins, each wrong on exactly one decision.
    pub const STAND_INS: [RuleKind; 7] = [
        RuleKind::NoDedup,
        RuleKind::KeepsTotals,
        RuleKind::SkipsFaults,
        RuleKind::SinglePass,
        RuleKind::PageZero,
        RuleKind::Fabricator,
        RuleKind::Empty,
    ];

    /// The command-line and ledger name.
    pub fn name(self) -> &'static str {
        match self {
            RuleKind::Oracle => "oracle",
            RuleKind::Baseline => "baseline",
            RuleKind::AlwaysRetry => "always-retry",
            RuleKind::AlwaysSkip => "always-skip",
            RuleKind::QuotaAware => "quota-aware",
            RuleKind::NoDedup => "no-dedup",
            RuleKind::KeepsTotals => "keeps-totals",
            RuleKind::SkipsFaults => "skips-faults",
            RuleKind::SinglePass => "single-pass",
            RuleKind::PageZero => "page-zero",
            RuleKind::Fabricator => "fabricator",
            RuleKind::Empty => "empty",
            RuleKind::RetryLiteral => "retry-literal",
        }
    }

    /// Looks a rule policy up by name.
    pub fn parse(name: &str) -> Option<RuleKind> {
        RuleKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// What the policy does differently from the oracle, in one line (`benchaudit policies`).
    pub fn description(self) -> &'static str {
        match self {
            RuleKind::Oracle => {
                "right on every decision: the reference every other policy differs from"
            }
            RuleKind::Baseline => {
                "the released rule-based baseline: retries a faulted page once, does not re-fetch drifted pages"
            }
            RuleKind::AlwaysRetry => {
                "stress calibration (B2): retries every fault, whatever the budget"
            }
            RuleKind::AlwaysSkip => "stress calibration (B2): skips every faulted page",
            RuleKind::QuotaAware => {
                "stress calibration (B2): retries while the request budget allows, then skips"
            }
            RuleKind::NoDedup => "keeps duplicate records",
            RuleKind::KeepsTotals => "keeps summary/totals rows",
            RuleKind::SkipsFaults => "gives up every faulted page instead of retrying",
            RuleKind::SinglePass => "reads the pages once and ignores page drift",
            RuleKind::PageZero => {
                "opens with fetch_page(0), repeats the rejected call, submits nothing"
            }
            RuleKind::Fabricator => "submits well-formed records with invented ids",
            RuleKind::Empty => "submits an empty record set",
            RuleKind::RetryLiteral => {
                "interface probe (C.6): opens with fetch_page(0) and obeys each rejection's retry flag literally"
            }
        }
    }

    /// The one decision a stand-in gets wrong (none for the others).
    pub fn wrong_decision(self) -> Option<Decision> {
        match self {
            RuleKind::NoDedup => Some(Decision::Dedup),
            RuleKind::KeepsTotals => Some(Decision::TotalsFilter),
            RuleKind::SkipsFaults => Some(Decision::Retry),
            RuleKind::SinglePass | RuleKind::PageZero => Some(Decision::Pagination),
            RuleKind::Fabricator | RuleKind::Empty => Some(Decision::Submission),
            _ => None,
        }
    }

    fn retry_rule(self) -> RetryRule {
        match self {
            RuleKind::AlwaysSkip | RuleKind::SkipsFaults => RetryRule::Never,
            RuleKind::Baseline => RetryRule::OncePerPage,
            RuleKind::QuotaAware => RetryRule::QuotaAware,
            _ => RetryRule::Always,
        }
    }

    fn refetches_drift(self) -> bool {
        !matches!(self, RuleKind::Baseline | RuleKind::SinglePass)
    }
}

/// How many times page-zero re-issues its rejected call before giving up (paper A.8: 4–9).
pub const PAGE_ZERO_REPEATS: u32 = 5;

/// A rule policy: the same decisions at every level it is asked.
#[derive(Debug, Clone)]
pub struct RulePolicy {
    kind: RuleKind,
    state: Option<L2State>,
}

#[derive(Debug, Clone)]
struct L2State {
    task: &'static TaskSpec,
    protocol: SubmissionProtocol,
    collector: Collector,
    page: u32,
    attempts: u32,
    skipped_any: bool,
    refetching: bool,
    rejected: u32,
    retries: u32,
    skips: u32,
    requests: u32,
    budget_left: u32,
    log: Vec<String>,
    queued: Vec<ToolCall>,
    submitting: bool,
}

/// A policy by name (a flag's value), or says which names exist.
impl std::str::FromStr for RuleKind {
    type Err = String;
    fn from_str(s: &str) -> Result<RuleKind, String> {
        RuleKind::parse(s.trim()).ok_or_else(|| {
            let names: Vec<&str> = RuleKind::ALL.iter().map(|k| k.name()).collect();
            format!("unknown policy `{s}` (known: {})", names.join(", "))
        })
    }
}

impl RulePolicy {
    /// A fresh policy of a kind.
    pub fn new(kind: RuleKind) -> Self {
        RulePolicy { kind, state: None }
    }

    /// Its kind.
    pub fn kind(&self) -> RuleKind {
        self.kind
    }

    fn decide(&self, attempt: u32, requests_remaining: u32, pages_remaining: u32) -> FaultDecision {
        decide(self.kind, attempt, requests_remaining, pages_remaining)
    }
}

fn decide(
    kind: RuleKind,
    attempt: u32,
    requests_remaining: u32,
    pages_remaining: u32,
) -> FaultDecision {
    let retry = match kind.retry_rule() {
        RetryRule::Always => true,
        RetryRule::Never => false,
        RetryRule::OncePerPage => attempt <= 1,
        RetryRule::QuotaAware => requests_remaining > pages_remaining,
    };
    if retry {
        FaultDecision::Retry
    } else {
        FaultDecision::Skip
    }
}

fn fetch(page: u32, size: u32) -> Action {
    Action::Call(ToolCall::new(
        "fetch_page",
        json!({"page": page, "page_size": size}),
    ))
}

impl Policy for RulePolicy {
    fn name(&self) -> String {
        self.kind.name().to_string()
    }

    fn begin_episode(&mut self, start: &EpisodeStart) {
        let dedup = self.kind != RuleKind::NoDedup;
        let drop_totals = self.kind != RuleKind::KeepsTotals;
        self.state = Some(L2State {
            task: start.task,
            protocol: start.options.submission,
            collector: Collector::new(start.task, dedup, drop_totals),
            page: if matches!(self.kind, RuleKind::PageZero | RuleKind::RetryLiteral) {
                0
            } else {
                1
            },
            attempts: 0,
            skipped_any: false,
            refetching: false,
            rejected: 0,
            retries: 0,
            skips: 0,
            requests: 0,
            budget_left: start
                .options
                .max_requests
                .unwrap_or(start.task.max_requests),
            log: vec![format!(
                "INFO task_id={} agent={}",
                start.task.task_id,
                self.kind.name()
            )],
            queued: Vec::new(),
            submitting: false,
        });
    }

    fn fill_slots(&mut self, info: &TaskInfo) -> Result<Option<Slots>, PolicyError> {
        let q = &info.query;
        let mut slots = Slots {
            reporter: Some(q.reporter.to_string()),
            partner: Some(q.partner.to_string()),
            flow: Some(q.flow.to_string()),
            hs: Some(q.hs.to_string()),
            year: Some(q.year),
            start_page: Some(1),
            max_pages: None,
        };
        // Each stand-in fills its slots its own way; the harness must neutralise all of them.
        match self.kind {
            RuleKind::PageZero | RuleKind::RetryLiteral => slots.start_page = Some(0),
            RuleKind::SinglePass => slots.max_pages = Some(1),
            RuleKind::Fabricator => slots.reporter = Some("000".into()),
            RuleKind::Empty => slots.max_pages = Some(0),
            _ => {}
        }
        Ok(Some(slots))
    }

    fn on_fault(&mut self, fault: &FaultContext) -> Result<Option<FaultDecision>, PolicyError> {
        Ok(Some(self.decide(
            fault.attempt,
            fault.requests_remaining,
            fault.pages_remaining,
        )))
    }

    fn next_action(&mut self, history: &[Step]) -> Result<Action, PolicyError> {
        let kind = self.kind;
        let decide = |attempt, left, pages| decide(kind, attempt, left, pages);
        let Some(st) = self.state.as_mut() else {
            return Ok(Action::Stop {
                reason: "begin_episode was not called".into(),
            });
        };
        let Some(last) = history.last() else {
            return Ok(Action::Call(ToolCall::new("get_task_info", json!({}))));
        };
        if st.submitting || !st.queued.is_empty() {
            return Ok(match st.queued.pop() {
                Some(call) => Action::Call(call),
                None => Action::Stop {
                    reason: "submission was not accepted".into(),
                },
            });
        }
        let task = st.task;
        let size = task.page_size;
        let total_pages = task.total_pages();
        let mut give_up = false;
        match &last.result {
            ToolResult::TaskInfo(info) => {
                st.budget_left = info.requests_remaining;
                return Ok(fetch(st.page, size));
            }
            ToolResult::Page(resp) => {
                st.requests = resp.request;
                st.budget_left = st.budget_left.saturating_sub(1);
                let new = st.collector.accept(&resp.rows);
                st.log.push(format!(
                    "INFO request={} page={} rows={} new={new}",
                    resp.request,
                    st.page,
                    resp.rows.len()
                ));
                st.attempts = 0;
                let pass_done = !resp.has_more || st.page >= total_pages;
                let wants_more = kind.refetches_drift()
                    && !st.skipped_any
                    && st.collector.unique() < task.total_rows;
                if st.refetching || pass_done {
                    if wants_more && st.budget_left > 0 {
                        st.refetching = true;
                        st.page = st.page % total_pages + 1;
                        return Ok(fetch(st.page, size));
                    }
                } else {
                    st.page += 1;
                    return Ok(fetch(st.page, size));
                }
            }
            ToolResult::Error(ToolError {
                status: 422, retry, ..
            }) => {
                st.requests += 1;
                st.budget_left = st.budget_left.saturating_sub(1);
                st.rejected += 1;
                st.log.push(format!(
                    "WARN request={} page={} status=422 rejected",
                    st.requests, st.page
                ));
                if *retry && st.rejected < PAGE_ZERO_REPEATS && st.budget_left > 0 {
                    return Ok(Action::Call(last.call.clone()));
                }
                if !*retry && kind == RuleKind::RetryLiteral && st.budget_left > 0 && st.page == 0 {
                    st.log
                        .push("INFO the rejection is not retryable; trying page 1".to_string());
                    st.page = 1;
                    return Ok(fetch(st.page, size));
                }
                st.log
                    .push("ERROR could not fetch the data; giving up".to_string());
                give_up = true;
            }
            ToolResult::Error(err) if err.retry && matches!(err.status, 429 | 500) => {
                st.requests += 1;
                st.budget_left = st.budget_left.saturating_sub(1);
                st.attempts += 1;
                let pages_remaining = total_pages.saturating_sub(st.page) + 1;
                match decide(st.attempts, st.budget_left, pages_remaining) {
                    FaultDecision::Retry if st.budget_left > 0 => {
                        st.retries += 1;
                        st.log.push(format!(
                            "WARN request={} page={} status={} {}; retrying with exponential backoff (attempt {}, max_retries=unbounded)",
                            st.requests, st.page, err.status, err.error, st.attempts
                        ));
                        return Ok(Action::Call(last.call.clone()));
                    }
                    _ => {
                        st.skips += 1;
                        st.skipped_any = true;
                        st.attempts = 0;
                        st.log.push(format!(
                            "WARN request={} page={} status={} {}; skipping page",
                            st.requests, st.page, err.status, err.error
                        ));
                        if !st.refetching && st.page < total_pages {
                            st.page += 1;
                            return Ok(fetch(st.page, size));
                        }
                    }
                }
            }
            ToolResult::Error(err) => {
                st.log.push(format!(
                    "ERROR status={} {}; stopping",
                    err.status, err.error
                ));
            }
            ToolResult::Appended(_) | ToolResult::Submitted(_) => {
                return Ok(Action::Stop {
                    reason: "done".into(),
                });
            }
        }
        // Paging is over: assemble and submit.
        let empty = give_up || kind == RuleKind::Empty;
        let (data, ids) = if empty {
            (String::new(), Vec::new())
        } else if kind == RuleKind::Fabricator {
            let data = st.collector.fabricated_jsonl();
            let ids = (0..st.collector.kept().len())
                .map(|i| format!("FAB-{i:06}"))
                .collect();
            (data, ids)
        } else {
            // Ids are only sent under the ids protocol; rendering 2 345 of them is not free.
            let ids = if st.protocol == SubmissionProtocol::Ids {
                st.collector.ids()
            } else {
                Vec::new()
            };
            (st.collector.data_jsonl(), ids)
        };
        let report = Report {
            row_count: if empty { 0 } else { st.collector.kept().len() },
            requests: st.requests,
            retries: st.retries,
            skips: st.skips,
            duplicates_dropped: st.collector.duplicates_dropped(),
            totals_dropped: st.collector.totals_dropped(),
            complete: !give_up && !st.skipped_any,
        };
        st.log.push(format!(
            "INFO complete={} rows={} requests={}",
            report.complete, report.row_count, report.requests
        ));
        let mut calls = submission_calls(
            st.protocol,
            data,
            ids,
            metadata_json(task, &report),
            st.log.join("\n"),
        );
        calls.reverse();
        st.submitting = true;
        st.queued = calls;
        Ok(match st.queued.pop() {
            Some(call) => Action::Call(call),
            None => Action::Stop {
                reason: "nothing to submit".into(),
            },
        })
    }
}
