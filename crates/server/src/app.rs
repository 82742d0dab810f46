//! The operations both front ends (REST and MCP) perform on the store: one place that turns
//! episode results into answers or failures and counts them for `/metrics`.

use std::sync::Arc;

use benchaudit_comtrade::{
    AppendArgs, EpisodeOptions, FetchPageArgs, InterfaceProfile, PageResponse, SubmissionProtocol,
    SubmitArgs, TaskInfo, TaskInfoArgs, TaskSpec,
};
use benchaudit_scoring::{RewardScorer, Scores};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use tokio::sync::Semaphore;

use crate::answer::{Failure, SubmitAnswer};
use crate::metrics::{Metrics, inc};
use crate::record::{DEFAULT_AGENT, Finished, Recorder, check_agent};
use crate::store::{EpisodeId, EpisodeStore, Missing, Slot, StoreLimits};

/// `POST /v1/episodes`' body (and the query of `/mcp`): which episode to open.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CreateEpisode {
    /// A task id of the registry (`GET /v1/tasks`).
    pub task_id: String,
    /// The seed; the whole episode is a pure function of (task, seed, options).
    #[serde(deserialize_with = "seed")]
    pub seed: u64,
    /// Argument-error envelope: `legacy` (422 says retry) or `strict`.
    #[serde(default)]
    pub interface: InterfaceProfile,
    /// Submission protocol: `full`, `ids` or `chunked`.
    #[serde(default)]
    pub submission: SubmissionProtocol,
    /// Request budget override (a quota, 0 to [`benchaudit_comtrade::MAX_QUOTA`] as
    /// `--quota`); absent keeps the task's `max_requests`.
    #[serde(default, deserialize_with = "quota")]
    pub max_requests: Option<u32>,
    /// Primary scorer giving `reward`: `f1` (default) or `judge`.
    #[serde(default)]
    pub reward: RewardScorer,
    /// Who plays, as a server started with `--ledger` records it (the ledger key's policy;
    /// default `served`): 1 to 64 characters of `A-Z a-z 0-9 . _ : -`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// A seed: a whole number from 0 to 2^64 − 1. Said in those words when it is not one (a
/// number past 2^64 − 1 reaches the parser as a float, which is not what the client wrote).
fn seed<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    struct Seed;
    impl serde::de::Visitor<'_> for Seed {
        type Value = u64;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a seed: a whole number from 0 to 18446744073709551615")
        }
        fn visit_u64<E>(self, n: u64) -> Result<u64, E> {
            Ok(n)
        }
        fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<u64, E> {
            u64::try_from(n).map_err(|_| {
                E::custom(format!(
                    "seed must be a whole number from 0 to 18446744073709551615, got {n}"
                ))
            })
        }
        fn visit_f64<E: serde::de::Error>(self, x: f64) -> Result<u64, E> {
            // 2^64 as a float: the first whole number a u64 cannot hold.
            Err(E::custom(
                if x.fract() == 0.0 && x >= 18_446_744_073_709_551_616.0 {
                    "seed must be at most 18446744073709551615 (2^64 - 1); got a larger number"
                        .into()
                } else {
                    format!("seed must be a whole number from 0 to 18446744073709551615, got {x}")
                },
            ))
        }
    }
    d.deserialize_u64(Seed)
}

/// A quota: at most [`benchaudit_comtrade::MAX_QUOTA`], the range of `--quota`.
fn quota<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    use serde::de::Error;
    let max = benchaudit_comtrade::MAX_QUOTA;
    match Option::<u64>::deserialize(d)? {
        None => Ok(None),
        Some(n) => u32::try_from(n)
            .ok()
            .filter(|&n| n <= max)
            .map(Some)
            .ok_or_else(|| {
                D::Error::custom(format!(
                    "max_requests must be between 0 and {max} (the range of --quota), got {n}"
                ))
            }),
    }
}

impl CreateEpisode {
    /// The task named, or a 422 listing the known ids.
    pub fn task(&self) -> Result<&'static TaskSpec, Failure> {
        benchaudit_comtrade::task(&self.task_id).ok_or_else(|| {
            let ids: Vec<&str> = benchaudit_comtrade::tasks()
                .iter()
                .map(|t| t.task_id)
                .collect();
            Failure::new(
                422,
                format!(
                    "unknown task_id `{}` (known: {})",
                    truncate(&self.task_id),
                    ids.join(", ")
                ),
            )
        })
    }

    /// The episode options requested.
    pub fn options(&self) -> EpisodeOptions {
        EpisodeOptions {
            interface: self.interface,
            submission: self.submission,
            max_requests: self.max_requests,
        }
    }
}

/// `POST /v1/episodes`' answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Created {
    /// The episode's id; every other route addresses the episode by it.
    pub episode_id: String,
    /// Path of the MCP endpoint bound to this episode (streamable HTTP, any protocol version).
    pub mcp_url: String,
}

/// Shared state of a server: the store, the counters, the limits. Cheap to share in an `Arc`.
#[derive(Debug)]
pub struct App {
    /// Open episodes.
    pub store: EpisodeStore,
    /// Counters for `/metrics`.
    pub metrics: Metrics,
    /// Permits for CPU-heavy jobs (scoring, chunk assembly, parsing large bodies): one per
    /// core, so such jobs queue instead of filling the blocking pool, and the async workers
    /// stay free for every other request.
    cpu: Arc<Semaphore>,
    /// Where accepted submissions are recorded (`serve --ledger`), if anywhere.
    recorder: Option<Arc<dyn Recorder>>,
    /// The wording of the tools every door lists (`--tool-text`).
    pub tool_text: benchaudit_comtrade::ToolText,
}

impl App {
    /// An app with an empty store.
    pub fn new(limits: StoreLimits) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        App {
            store: EpisodeStore::new(limits),
            metrics: Metrics::default(),
            cpu: Arc::new(Semaphore::new(cores)),
            recorder: None,
            tool_text: benchaudit_comtrade::ToolText::default(),
        }
    }

    /// The app listing its tools in wording `text`.
    #[must_use]
    pub fn with_tool_text(mut self, text: benchaudit_comtrade::ToolText) -> Self {
        self.tool_text = text;
        self
    }

    /// The app with `recorder` receiving every accepted submission.
    #[must_use]
    pub fn with_recorder(mut self, recorder: Option<Arc<dyn Recorder>>) -> Self {
        self.recorder = recorder;
        self
    }

    /// Runs CPU-heavy `job` on the blocking pool, at most one job per core at a time; the
    /// caller's task waits without holding an async worker.
    pub async fn cpu<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Failure> {
        let permit = Arc::clone(&self.cpu)
            .acquire_owned()
            .await
            .map_err(|_| Failure::new(503, "the server is shutting down"))?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            job()
        })
        .await
        .map_err(|_| Failure::new(500, "internal error: a background job failed"))
    }

    /// Opens an episode.
    pub fn create(&self, req: &CreateEpisode) -> Result<Arc<Slot>, Failure> {
        let task = req.task()?;
        let agent = req.agent.as_deref();
        if let Some(name) = agent {
            check_agent(name).map_err(|e| Failure::new(422, e))?;
        }
        if let Some(recorder) = &self.recorder {
            let name = agent.unwrap_or(DEFAULT_AGENT);
            recorder
                .admits(name, task, req.seed, req.options(), req.reward)
                .map_err(|e| Failure::new(409, e))?;
        }
        let slot = self.store.create(
            task,
            req.seed,
            req.options(),
            req.reward,
            agent.map(Into::into),
        );
        inc(&self.metrics.episodes_created);
        Ok(slot)
    }

    /// The answer to a successful create.
    pub fn created(slot: &Slot) -> Created {
        Created {
            episode_id: slot.id.to_string(),
            mcp_url: format!("/v1/episodes/{}/mcp", slot.id),
        }
    }

    /// Finds an episode by its id as written in a URL: 404 when malformed or unknown, 410 when
    /// evicted or expired.
    pub fn lookup(&self, id: &str) -> Result<Arc<Slot>, Failure> {
        let id: EpisodeId = id
            .parse()
            .map_err(|_| Failure::new(404, format!("no episode `{}`", truncate(id))))?;
        self.lookup_id(id)
    }

    /// Finds an episode by id (see `lookup`).
    pub fn lookup_id(&self, id: EpisodeId) -> Result<Arc<Slot>, Failure> {
        self.store.get(id).map_err(|missing| match missing {
            Missing::Unknown => Failure::new(404, format!("no episode `{id}`")),
            Missing::Gone(gone) => Failure {
                envelope: benchaudit_comtrade::ToolError::fatal(
                    410,
                    format!(
                        "episode `{id}` was {} ({}); it is not restarted: open a new episode",
                        gone.as_str(),
                        gone.explain(),
                    ),
                ),
                gone: Some(gone),
            },
        })
    }

    /// Tool 1.
    pub async fn task_info(&self, slot: &Slot) -> TaskInfo {
        slot.lock().await.episode.get_task_info()
    }

    /// Tool 2. The episode's lock is held only for the state transition (a page is at most
    /// 1 000 rows); the caller serialises the page afterwards.
    pub async fn fetch_page(
        &self,
        slot: &Slot,
        args: FetchPageArgs,
    ) -> Result<(&'static TaskSpec, PageResponse), Failure> {
        let (task, result) = {
            let mut state = slot.lock().await;
            (state.episode.task(), state.episode.fetch_page(args))
        };
        match result {
            Ok(page) => {
                inc(&self.metrics.pages_served);
                Ok((task, page))
            }
            Err(e) => {
                match (e.status, e.retry) {
                    (429, true) => inc(&self.metrics.faults_429),
                    (500, _) => inc(&self.metrics.faults_500),
                    (422, _) => inc(&self.metrics.rejected_422),
                    (429, false) => inc(&self.metrics.budget_exhausted),
                    _ => inc(&self.metrics.after_submit),
                }
                Err(e.into())
            }
        }
    }

    /// `fetch_page` called as a tool: its arguments read by the parser every door uses, then
    /// [`App::fetch_page`]. The one implementation behind MCP's `fetch_page`, whether its answer
    /// is then built as a JSON value ([`App::call_tool`]) or written straight from the rows
    /// (`mcp_page`).
    pub async fn fetch_page_call(
        &self,
        slot: &Slot,
        args: serde_json::Map<String, Value>,
    ) -> Result<(&'static TaskSpec, PageResponse), Failure> {
        match FetchPageArgs::from_json(&Value::Object(args)) {
            Err(e) => Err(Failure::from(e.envelope(slot.options.interface))),
            Ok(args) => self.fetch_page(slot, args).await,
        }
    }

    /// `append_results` (chunked protocol): returns the number of records held so far. The
    /// copy into the episode's buffer runs on the CPU pool, the episode locked meanwhile.
    pub async fn append(
        self: &Arc<Self>,
        slot: Arc<Slot>,
        data_jsonl: String,
    ) -> Result<usize, Failure> {
        let mut state = slot.lock_owned().await;
        let reserve = if slot.options.submission == SubmissionProtocol::Chunked
            && !state.episode.is_submitted()
        {
            // The episode may add a newline between chunks.
            let bytes = data_jsonl.len().saturating_add(1);
            if !self.store.reserve_appended(&slot, bytes) {
                return Err(Failure::new(
                    503,
                    "the server's buffer for chunked submissions is full: submit what you have, or retry later",
                ));
            }
            bytes
        } else {
            0
        };
        let app = Arc::clone(self);
        let job_slot = Arc::clone(&slot);
        let result = self
            .cpu(move || {
                state.episode.append_results(&data_jsonl).map_err(|e| {
                    app.store.unreserve_appended(&job_slot, reserve);
                    if e.status == 409 {
                        inc(&app.metrics.double_submits);
                    }
                    Failure::from(e)
                })
            })
            .await;
        match result {
            Ok(inner) => inner,
            Err(failure) => {
                self.store.unreserve_appended(&slot, reserve);
                Err(failure)
            }
        }
    }

    /// Tool 3: accepts the submission and scores it with both scorers. Scoring is CPU work
    /// (up to about a second for a 16 MiB body), so it runs on the CPU pool; the episode's
    /// lock is held throughout (an async lock: other requests on the episode wait without
    /// holding a worker) so a concurrent second submit gets 409, not a race.
    pub async fn submit(
        self: &Arc<Self>,
        slot: Arc<Slot>,
        args: SubmitArgs,
    ) -> Result<SubmitAnswer, Failure> {
        let state = slot.lock_owned().await;
        let app = Arc::clone(self);
        self.cpu(move || app.submit_locked(&slot, state, args))
            .await?
    }

    /// `submit` on the calling thread, with the episode locked by the caller.
    fn submit_locked(
        &self,
        slot: &Slot,
        mut state: tokio::sync::OwnedMutexGuard<crate::store::EpisodeState>,
        args: SubmitArgs,
    ) -> Result<SubmitAnswer, Failure> {
        let task = state.episode.task();
        let seed = state.episode.seed();
        let submission = state.episode.submit_results(args).map_err(|e| {
            if e.status == 409 {
                inc(&self.metrics.double_submits);
            }
            Failure::from(e)
        })?;
        self.store.release_appended(slot);
        let scores = Scores::compute(task, seed, &submission);
        let answer = SubmitAnswer::from_scores(scores.clone(), state.reward);
        if let Some(recorder) = &self.recorder {
            let finished = Finished {
                agent: state.agent.as_deref().unwrap_or(DEFAULT_AGENT),
                task,
                seed,
                options: *state.episode.options(),
                reward_scorer: state.reward,
                submission: &submission,
                scores: &scores,
                reward: answer.reward,
                counts: state.episode.counts(),
                wall_ms: state.created.elapsed().as_secs_f64() * 1000.0,
            };
            if let Err(e) = recorder.record(&finished) {
                inc(&self.metrics.recording_errors);
                tracing::error!(episode = %slot.id, "recording the episode failed: {e}");
            }
        }
        state.result = Some(Box::new(answer.clone()));
        inc(&self.metrics.submissions);
        Ok(answer)
    }

    /// `GET /v1/episodes/{id}`: the episode's state, and its scores once submitted.
    pub async fn status(&self, slot: &Slot) -> Value {
        let state = slot.lock().await;
        let ep = &state.episode;
        json!({
            "episode_id": slot.id.to_string(),
            "task_id": ep.task().task_id,
            "seed": ep.seed(),
            "options": ep.options(),
            "reward_scorer": state.reward,
            "state": if ep.is_submitted() { "submitted" } else { "open" },
            "requests_used": ep.counts().requests,
            "requests_remaining": ep.requests_remaining(),
            "counts": ep.counts(),
            "result": state.result.as_deref(),
            "mcp_url": format!("/v1/episodes/{}/mcp", slot.id),
        })
    }
}

/// The tools an episode answers (`append_results` only does work under the chunked protocol).
pub use benchaudit_comtrade::TOOL_NAMES;

impl App {
    /// One tool call on `slot` with JSON arguments, as MCP and OpenEnv make them; `None` for
    /// a tool the episode does not offer (`append_results` outside the chunked protocol
    /// included: [`SubmissionProtocol::tool_names`]). Arguments are parsed by
    /// `benchaudit_comtrade`'s own parsers (the ones REST and in-process agents use); a bad
    /// argument is a 422 failure like any other.
    pub async fn call_tool(
        self: &Arc<Self>,
        slot: Arc<Slot>,
        name: &str,
        args: serde_json::Map<String, Value>,
    ) -> Option<Result<Value, Failure>> {
        if !slot.options.submission.tool_names().contains(&name) {
            return None;
        }
        let json = |v: Result<Value, serde_json::Error>| v.unwrap_or(Value::Null);
        let interface = slot.options.interface;
        let bad_args =
            |e: benchaudit_comtrade::ArgumentError| Err(Failure::from(e.envelope(interface)));
        Some(match name {
            "get_task_info" => match TaskInfoArgs::from_json(&Value::Object(args)) {
                Err(e) => bad_args(e),
                Ok(TaskInfoArgs) => Ok(json(serde_json::to_value(self.task_info(&slot).await))),
            },
            "fetch_page" => self.fetch_page_call(&slot, args).await.map(|(task, page)| {
                json(serde_json::to_value(crate::answer::PageBody {
                    task,
                    page: &page,
                }))
            }),
            "append_results" => match AppendArgs::from_json(&Value::Object(args)) {
                Ok(a) => self
                    .append(slot, a.data_jsonl)
                    .await
                    .map(|held| json!({"appended": true, "records_held": held})),
                Err(e) => bad_args(e),
            },
            "submit_results" => match SubmitArgs::from_json(&Value::Object(args)) {
                Err(e) => bad_args(e),
                Ok(submit) => self
                    .submit(slot, submit)
                    .await
                    .map(|answer| json(serde_json::to_value(answer))),
            },
            _ => return None,
        })
    }
}

/// Caps echoed user input in error messages (64 bytes).
pub fn truncate(s: &str) -> String {
    crate::answer::cap(s, 64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_request_rejects_unknown_fields_and_tasks() {
        let ok: CreateEpisode =
            serde_json::from_value(json!({"task_id": "T1_single_page", "seed": 3}))
                .expect("minimal");
        assert_eq!(ok.options(), EpisodeOptions::default());
        assert_eq!(ok.reward, RewardScorer::F1);
        assert!(
            serde_json::from_value::<CreateEpisode>(
                json!({"task_id": "T1_single_page", "seed": 3, "sede": 1})
            )
            .is_err()
        );
        assert!(
            serde_json::from_value::<CreateEpisode>(
                json!({"task_id": "T1_single_page", "seed": -1})
            )
            .is_err()
        );
        let bad = CreateEpisode {
            task_id: "T99".into(),
            ..ok
        };
        assert_eq!(
            bad.task().map(|t| t.task_id).map_err(|f| f.status()),
            Err(422)
        );
    }

    #[test]
    fn truncate_respects_char_boundaries() {
        let s = "é".repeat(100);
        let t = truncate(&s);
        assert!(t.len() <= 64 + '…'.len_utf8());
        assert!(t.ends_with('…'));
        assert_eq!(truncate("short"), "short");
    }
}
