//! The episode: one agent, one (task, seed, options), one submission. A pure state machine
//! behind the three tools; nothing here reads a clock or does IO.
//!
//! Order of checks in `fetch_page`: budget exhausted → 429 `retry: false` (no data); otherwise
//! the call spends one unit; invalid arguments → 422 (retry flag per interface profile); the
//! call is then the next *valid* request (ordinal r, 1-based); a planned fault at r → 429/500;
//! else the page is served with r's injections.
//!
//! Why one long file: the episode is one state machine (budget, faults, injections, stress,
//! submission); its transitions share the counters and must be read in order. A sixth of it is
//! tests.

use serde::Serialize;

use benchaudit_stress::{
    AdversarialWrapper, CorruptionKind, EnvironmentAdapter, EscalatingAdversary, Perturbation,
    StepOutcome as StressOutcome, StressError, Trace, WrapperConfig,
};

use crate::faults::{FaultPlan, inject};
use crate::protocol::{
    Constraints, EpisodeOptions, FetchPageArgs, PageResponse, SubmissionProtocol, SubmitArgs,
    TaskInfo, ToolError,
};
use crate::record::{Generator, Row, RowWriter, Totals, record_id, totals_id};
use crate::stress::{ComtradeAdapter, StressConfig};
use crate::submission::Submission;
use crate::task::FaultFamily;
use crate::task::TaskSpec;

/// Largest request quota (`max_requests` override) an episode accepts, on every door: the
/// CLI's `--quota` (`run`, `mcp`), REST and `/mcp` creates, OpenEnv resets. The whole `u32`
/// range: load tests open episodes that must never run out (a million requests is ten
/// seconds of one page route under wrk), and a quota past the requests an episode needs
/// changes nothing.
pub const MAX_QUOTA: u32 = u32::MAX;

/// Largest page_size argument accepted (the largest page of the registry is 1000).
pub const MAX_PAGE_SIZE_ARG: i64 = 1000;

/// Cap on the data an agent may accumulate with `append_results` (bounded memory).
pub const MAX_SUBMISSION_BYTES: usize = 64 << 20;

/// What the episode observed; recorded in the ledger as counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct EpisodeCounts {
    /// fetch_page calls, rejected ones included.
    pub requests: u32,
    /// Calls that passed validation and budget.
    pub valid_requests: u32,
    /// Transient faults served (429/500 with retry).
    pub faults_served: u32,
    /// Calls rejected with 422.
    pub rejected: u32,
    /// Calls answered "request budget exhausted".
    pub budget_exhausted: u32,
    /// Extra duplicate rows served.
    pub duplicates_served: u32,
    /// Totals rows served.
    pub totals_served: u32,
    /// Rows served in total.
    pub rows_served: u32,
}

/// An episode's state. A few hundred bytes: records are regenerated on demand.
#[derive(Debug, Clone)]
pub struct Episode {
    generator: Generator,
    seed: u64,
    options: EpisodeOptions,
    plan: FaultPlan,
    counts: EpisodeCounts,
    /// Last page that served rows (source of cross-page duplicates).
    prev_page: Option<u32>,
    /// Canonical indices served at least once (resolves the `ids` protocol).
    served: Vec<u64>,
    /// Totals rows served, by page (resolves totals ids under `ids`).
    served_totals: Vec<Totals>,
    /// Rows appended under the `chunked` protocol.
    chunks: String,
    /// Non-blank lines in `chunks`, kept so an append costs O(its own bytes).
    chunk_records: usize,
    submitted: bool,
    /// The stress engine at the boundary, when an arm is attached (T9, A/B designs).
    stress: Option<Box<Stressed>>,
}

/// The engine's state inside an episode.
#[derive(Debug, Clone)]
struct Stressed {
    config: StressConfig,
    wrapper: AdversarialWrapper<EscalatingAdversary>,
    /// Pages served at least once: only a new page is progress.
    pages_done: Vec<u64>,
}

impl Episode {
    /// Opens episode `(task, seed, options)`. The adaptive family (T9) runs the engine's
    /// escalating arm.
    pub fn new(task: &'static TaskSpec, seed: u64, options: EpisodeOptions) -> Self {
        let mut episode = Episode::clean(task, seed, options);
        if task.fault == FaultFamily::Adaptive
            && let Ok(config) = StressConfig::escalating(task)
        {
            episode.attach(config).ok();
        }
        episode
    }

    /// Opens an episode with a stress arm at the agent–environment boundary (the A/B designs
    /// run it on T9_clean_ab). Fails only on an invalid configuration.
    pub fn with_stress(
        task: &'static TaskSpec,
        seed: u64,
        options: EpisodeOptions,
        config: StressConfig,
    ) -> Result<Self, StressError> {
        let mut episode = Episode::clean(task, seed, options);
        episode.attach(config)?;
        Ok(episode)
    }

    fn attach(&mut self, config: StressConfig) -> Result<(), StressError> {
        let wrapper = AdversarialWrapper::new(
            WrapperConfig {
                seed: self.seed,
                schedule: config.schedule,
                quota: config.quota,
            },
            config.adversary,
        )?;
        let words = (self.task().total_pages() as usize).div_ceil(64) + 1;
        self.stress = Some(Box::new(Stressed {
            config,
            wrapper,
            pages_done: vec![0; words],
        }));
        Ok(())
    }

    /// The stress arm attached, if any.
    pub fn stress_config(&self) -> Option<&StressConfig> {
        self.stress.as_ref().map(|s| &s.config)
    }

    /// The engine's per-step trace (intensity, intents, realised perturbations, quota), if an
    /// arm is attached.
    pub fn stress_trace(&self) -> Option<&Trace> {
        self.stress.as_ref().map(|s| s.wrapper.trace())
    }

    fn clean(task: &'static TaskSpec, seed: u64, options: EpisodeOptions) -> Self {
        let generator = Generator::new(task, seed);
        let plan = FaultPlan::new(task, generator.key());
        let words = (task.total_rows as usize).div_ceil(64);
        Episode {
            generator,
            seed,
            options,
            plan,
            counts: EpisodeCounts::default(),
            prev_page: None,
            served: vec![0; words],
            served_totals: Vec::new(),
            chunks: String::new(),
            chunk_records: 0,
            submitted: false,
            stress: None,
        }
    }

    /// The task.
    pub fn task(&self) -> &'static TaskSpec {
        self.generator.task()
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The options.
    pub fn options(&self) -> &EpisodeOptions {
        &self.options
    }

    /// The canonical-record generator of this episode's (task, seed).
    pub fn generator(&self) -> &Generator {
        &self.generator
    }

    /// Counts so far.
    pub fn counts(&self) -> EpisodeCounts {
        self.counts
    }

    /// The planned transient faults (valid-request ordinals and status).
    pub fn fault_plan(&self) -> &FaultPlan {
        &self.plan
    }

    /// Whether `submit_results` has been accepted.
    pub fn is_submitted(&self) -> bool {
        self.submitted
    }

    /// The request budget in force: the task budget or its override, and a stress quota (after
    /// any squeeze) when one is enforced.
    pub fn max_requests(&self) -> u32 {
        let budget = self
            .options
            .max_requests
            .unwrap_or(self.task().max_requests);
        match self.stress.as_ref().and_then(|s| s.wrapper.quota_limit()) {
            Some(quota) => budget.min(quota),
            None => budget,
        }
    }

    /// Requests left (the tighter of the budget and the stress quota).
    pub fn requests_remaining(&self) -> u32 {
        let budget = self
            .options
            .max_requests
            .unwrap_or(self.task().max_requests);
        let left = budget.saturating_sub(self.counts.requests);
        match self
            .stress
            .as_ref()
            .and_then(|s| s.wrapper.quota_remaining())
        {
            Some(quota) => left.min(quota),
            None => left,
        }
    }

    /// Whether canonical record `index` has been served to this episode.
    pub fn was_served(&self, index: u32) -> bool {
        let (w, b) = ((index / 64) as usize, index % 64);
        self.served.get(w).is_some_and(|word| word & (1 << b) != 0)
    }

    /// Tool 1: the task, its constraints and the budget state.
    pub fn get_task_info(&self) -> TaskInfo {
        let t = self.task();
        TaskInfo {
            task_id: t.task_id,
            description: t.description,
            query: t.query,
            constraints: Constraints {
                page_size: t.page_size,
                max_requests: self.max_requests(),
                paging_mode: t.paging_mode,
                rate_limit_qps: t.rate_limit_qps,
                total_rows: t.total_rows,
            },
            requests_used: self.counts.requests,
            requests_remaining: self.requests_remaining(),
            instructions: instructions(t, self.options.submission),
        }
    }

    fn argument_error(&mut self, error: String) -> ToolError {
        self.counts.rejected += 1;
        crate::protocol::argument_envelope(self.options.interface, error)
    }

    /// Tool 2: one page, or a fault envelope. Every call spends one unit of budget, except
    /// after the submission: the episode is over, so the call is refused (409) and spends
    /// nothing.
    pub fn fetch_page(&mut self, args: FetchPageArgs) -> Result<PageResponse, ToolError> {
        if self.submitted {
            return Err(ToolError::fatal(
                409,
                "the episode is over: results were already submitted, so no more pages are served",
            ));
        }
        let budget = self
            .options
            .max_requests
            .unwrap_or(self.task().max_requests);
        if self.counts.requests >= budget {
            self.counts.budget_exhausted = self.counts.budget_exhausted.saturating_add(1);
            return Err(ToolError::fatal(429, "request budget exhausted"));
        }
        self.counts.requests += 1;
        if args.page < 1 {
            return Err(self.argument_error(format!("page must be >= 1, got {}", args.page)));
        }
        if let Some(size) = args.page_size
            && !(1..=MAX_PAGE_SIZE_ARG).contains(&size)
        {
            return Err(self.argument_error(format!(
                "page_size must be between 1 and {MAX_PAGE_SIZE_ARG}, got {size}"
            )));
        }
        self.counts.valid_requests += 1;
        let ordinal = self.counts.valid_requests;
        if let Some(status) = self.plan.fault_at(ordinal) {
            self.counts.faults_served += 1;
            return Err(ToolError {
                status,
                error: if status == 429 {
                    "rate limit exceeded".into()
                } else {
                    "internal server error".into()
                },
                retry: true,
                retry_after_s: (status == 429).then_some(1),
            });
        }
        let task = self.task();
        let page = u32::try_from(args.page).unwrap_or(u32::MAX);
        let mut served = inject(&self.generator, page, ordinal, self.prev_page);
        if let Some(stressed) = self.stress.as_mut() {
            let plan = match stressed.wrapper.begin_step() {
                Ok(plan) => plan,
                Err(StressError::QuotaExhausted { .. }) => {
                    self.counts.budget_exhausted = self.counts.budget_exhausted.saturating_add(1);
                    return Err(ToolError::fatal(429, "request quota exhausted"));
                }
                Err(e) => return Err(ToolError::fatal(500, format!("stress engine: {e}"))),
            };
            if let Some(status) = crate::stress::fault_status(&plan.intents) {
                stressed.wrapper.end_step(StressOutcome::Fault).ok();
                self.counts.faults_served += 1;
                return Err(ToolError {
                    status,
                    error: "rate limit exceeded".into(),
                    retry: true,
                    retry_after_s: Some(1),
                });
            }
            let records: Vec<_> = crate::faults::page_records(&self.generator, page);
            let mut rng = plan.rng;
            let mut adapter = ComtradeAdapter {
                task,
                page,
                records: &records,
            };
            let realised = adapter.realise(&plan.intents, served.rows, &mut rng);
            for r in &realised.applied {
                match r.intent {
                    Perturbation::Corruption {
                        kind: CorruptionKind::Duplicate,
                        ..
                    } => served.duplicates += r.affected,
                    Perturbation::Distractor => served.totals += r.affected,
                    _ => {}
                }
            }
            served.rows = realised.observation;
            stressed.wrapper.record_realised(&realised.applied).ok();
            let (w, b) = ((page / 64) as usize, page % 64);
            let new_page = !records.is_empty()
                && stressed.pages_done.get_mut(w).is_some_and(|word| {
                    let fresh = *word & (1 << b) == 0;
                    *word |= 1 << b;
                    fresh
                });
            let outcome = if new_page {
                StressOutcome::Success
            } else {
                StressOutcome::Neutral
            };
            stressed.wrapper.end_step(outcome).ok();
        }
        for row in &served.rows {
            match row {
                Row::Record(r) => {
                    let (w, b) = ((r.index / 64) as usize, r.index % 64);
                    if let Some(word) = self.served.get_mut(w) {
                        *word |= 1 << b;
                    }
                }
                Row::Totals(t) => {
                    if !self.served_totals.iter().any(|s| s.page == t.page) {
                        self.served_totals.push(*t);
                    }
                }
            }
        }
        // Counters saturate: a long-lived episode with a huge budget must not wrap (or panic).
        let c = &mut self.counts;
        c.duplicates_served = c.duplicates_served.saturating_add(served.duplicates);
        c.totals_served = c.totals_served.saturating_add(served.totals);
        c.rows_served = c
            .rows_served
            .saturating_add(u32::try_from(served.rows.len()).unwrap_or(u32::MAX));
        if !served.rows.is_empty() {
            self.prev_page = Some(page);
        }
        Ok(PageResponse {
            rows: served.rows,
            page: args.page,
            page_size: args.page_size.unwrap_or(i64::from(task.page_size)),
            total_pages: task.total_pages(),
            total_rows: task.total_rows,
            has_more: page < task.total_pages(),
            request: self.counts.requests,
        })
    }

    /// `chunked` protocol only: appends records before the final submission.
    pub fn append_results(&mut self, data_jsonl: &str) -> Result<usize, ToolError> {
        if self.submitted {
            return Err(ToolError::fatal(
                409,
                "results already submitted for this episode",
            ));
        }
        if self.options.submission != SubmissionProtocol::Chunked {
            return Err(ToolError::fatal(
                400,
                "append_results is only available under the chunked submission protocol",
            ));
        }
        if self.chunks.len().saturating_add(data_jsonl.len()) > MAX_SUBMISSION_BYTES {
            return Err(ToolError::fatal(
                413,
                format!("chunked submission exceeds {MAX_SUBMISSION_BYTES} bytes"),
            ));
        }
        // A new chunk always starts on a fresh line, so the held record count is the old count
        // plus this chunk's: O(new bytes), however much is held.
        push_lines(&mut self.chunks, data_jsonl);
        self.chunk_records += count_records(data_jsonl);
        Ok(self.chunk_records)
    }

    /// Tool 3: accepts the one submission of the episode and resolves it into the files the
    /// scorers read. Scoring itself lives in the `scoring` crate.
    pub fn submit_results(&mut self, args: SubmitArgs) -> Result<Submission, ToolError> {
        if self.submitted {
            return Err(ToolError::fatal(
                409,
                "results already submitted for this episode",
            ));
        }
        let data_jsonl = match self.options.submission {
            SubmissionProtocol::Full => args.data_jsonl,
            SubmissionProtocol::Chunked => {
                let mut all = std::mem::take(&mut self.chunks);
                self.chunk_records = 0;
                if let Some(last) = args.data_jsonl.as_deref() {
                    push_lines(&mut all, last);
                }
                Some(all)
            }
            SubmissionProtocol::Ids => {
                let Some(ids) = args.record_ids else {
                    return Err(ToolError::fatal(
                        422,
                        "the ids protocol expects `record_ids`, a list of record ids",
                    ));
                };
                Some(self.resolve_ids(&ids))
            }
        };
        self.submitted = true;
        Ok(Submission {
            data_jsonl,
            metadata_json: args.metadata_json,
            run_log: args.run_log,
            undecodable: Vec::new(),
        })
    }

    /// Resolves ids against rows served to this episode: a served id becomes its row as served,
    /// an id never served becomes `{"record_id": id}`, which matches nothing (fabricated).
    fn resolve_ids(&self, ids: &[String]) -> String {
        let task = self.task();
        let writer = RowWriter::for_task(task);
        let mut out = String::with_capacity(ids.len() * writer.typical_row_len());
        for id in ids {
            let row = match self.generator.index_of(id) {
                Some(i) if self.was_served(i) => self.generator.record(i).map(Row::Record),
                _ => self
                    .served_totals
                    .iter()
                    .find(|t| totals_id(task, t.page) == *id)
                    .map(|t| Row::Totals(*t)),
            };
            match row {
                Some(row) => writer.write(&row, &mut out),
                None => out.push_str(&serde_json::json!({ "record_id": id }).to_string()),
            }
            out.push('\n');
        }
        out
    }
}

/// Non-blank lines of a JSON Lines text (what the scorers count as records).
fn count_records(text: &str) -> usize {
    text.split('\n').filter(|l| !l.trim().is_empty()).count()
}

fn push_lines(buf: &mut String, more: &str) {
    if !buf.is_empty() && !buf.ends_with('\n') {
        buf.push('\n');
    }
    buf.push_str(more);
}

/// The instructions `get_task_info` returns: what to fetch and what to hand back.
pub fn instructions(task: &TaskSpec, protocol: SubmissionProtocol) -> String {
    let example = record_id(task, 0);
    let submit = match protocol {
        SubmissionProtocol::Full => "Call submit_results once with data_jsonl (one JSON object per line, one line per unique record), metadata_json and run_log.".to_string(),
        SubmissionProtocol::Ids => format!(
            "Call submit_results once with record_ids (the record_id of every unique record, e.g. \"{example}\"), metadata_json and run_log."
        ),
        SubmissionProtocol::Chunked => "Send records in pieces with append_results(data_jsonl), then call submit_results once with metadata_json and run_log (and any last records in data_jsonl).".to_string(),
    };
    format!(
        "Fetch every record matching the query with fetch_page(page, page_size); each call spends one request of the budget. \
         Handle API faults, remove duplicate records (key: year, reporter, partner, flow, hs, record_id) and drop summary/totals rows. \
         {submit} metadata_json is a JSON object with task_id, query, row_count, schema, dedup_key; run_log describes what you did. \
         Only one submission is accepted."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::task;

    fn fetch(ep: &mut Episode, page: i64) -> Result<PageResponse, ToolError> {
        ep.fetch_page(FetchPageArgs {
            page,
            page_size: None,
        })
    }

    #[test]
    fn budget_counts_rejected_calls_and_then_refuses() {
        let t = task("T1_single_page").expect("registry");
        let mut ep = Episode::new(t, 0, EpisodeOptions::default());
        for _ in 0..t.max_requests {
            let _ = fetch(&mut ep, 0);
        }
        let err = fetch(&mut ep, 1).expect_err("budget spent");
        assert_eq!(
            (err.status, err.retry, err.error.as_str()),
            (429, false, "request budget exhausted")
        );
        assert_eq!(ep.counts().budget_exhausted, 1);
        assert_eq!(ep.requests_remaining(), 0);
    }

    #[test]
    fn fetch_after_submit_is_refused_and_spends_nothing() {
        let t = task("T2_multi_page").expect("registry");
        let mut ep = Episode::new(t, 3, EpisodeOptions::default());
        fetch(&mut ep, 1).expect("served");
        ep.submit_results(SubmitArgs::default()).expect("accepted");
        let before = ep.counts();
        let err = fetch(&mut ep, 2).expect_err("over");
        assert_eq!((err.status, err.retry), (409, false), "{err:?}");
        assert!(err.error.contains("already submitted"), "{err:?}");
        assert_eq!(ep.counts(), before, "nothing spent");
        assert_eq!(ep.requests_remaining(), t.max_requests - 1);
    }

    #[test]
    fn served_counters_saturate() {
        let t = task("T3_duplicates").expect("registry");
        let mut ep = Episode::new(
            t,
            1,
            EpisodeOptions {
                max_requests: Some(u32::MAX),
                ..EpisodeOptions::default()
            },
        );
        ep.counts.rows_served = u32::MAX - 1;
        ep.counts.duplicates_served = u32::MAX;
        ep.counts.totals_served = u32::MAX;
        for page in 1..=4 {
            let _ = fetch(&mut ep, page);
        }
        let c = ep.counts();
        assert_eq!(
            (c.rows_served, c.duplicates_served, c.totals_served),
            (u32::MAX, u32::MAX, u32::MAX)
        );
        ep.counts.requests = u32::MAX;
        ep.counts.budget_exhausted = u32::MAX;
        assert_eq!(fetch(&mut ep, 1).expect_err("spent").status, 429);
        assert_eq!(ep.counts().budget_exhausted, u32::MAX);
    }

    #[test]
    fn appends_count_records_across_chunks() {
        let t = task("T2_multi_page").expect("registry");
        let mut ep = Episode::new(
            t,
            1,
            EpisodeOptions {
                submission: SubmissionProtocol::Chunked,
                ..EpisodeOptions::default()
            },
        );
        assert_eq!(ep.append_results("{}\n{}"), Ok(2));
        assert_eq!(ep.append_results("{}"), Ok(3), "no newline between chunks");
        assert_eq!(ep.append_results("\n\n  \n"), Ok(3));
        assert_eq!(ep.append_results("{}\n"), Ok(4));
        let s = ep.submit_results(SubmitArgs::default()).expect("accepted");
        assert_eq!(s.data_lines().count(), 4);
    }

    #[test]
    fn page_past_the_end_is_empty() {
        let t = task("T2_multi_page").expect("registry");
        let mut ep = Episode::new(t, 3, EpisodeOptions::default());
        let p = fetch(&mut ep, 6).expect("served");
        assert!(p.rows.is_empty() && !p.has_more);
        let p = fetch(&mut ep, 5).expect("served");
        assert_eq!((p.rows.len(), p.has_more), (345, false));
    }
}
