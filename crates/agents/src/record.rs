//! The episode record of the run ledger (SPEC §6): everything outside `timing` is a pure
//! function of (policy, level, task, seed, options) for rule policies, bit-identical on replay.

use benchaudit_comtrade::{EpisodeOptions, StressConfig, TaskSpec};
use benchaudit_scoring::{RewardScorer, Scores};
use serde::{Deserialize, Serialize};

use crate::level::Level;
use crate::policy::TokenUsage;

/// Identifies an episode within a run; resuming skips keys already in the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct EpisodeKey {
    /// Policy or model name.
    pub policy: String,
    /// Scaffolding level.
    pub level: Level,
    /// Task id.
    pub task_id: String,
    /// Seed.
    pub seed: u64,
    /// Stress arm (`escalating`, `constant`, a dose) or none.
    pub arm: Option<String>,
    /// Hash of the options that change what is measured.
    pub options_hash: String,
}

/// How an episode ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// submit_results was accepted.
    Submitted,
    /// The policy stopped without submitting.
    NoSubmission,
    /// The L2 step limit ended the episode.
    StepLimit,
    /// The output-token budget ended the episode.
    TokenBudget,
    /// The model's conversation outgrew the provider's context window (an HTTP 400 such as
    /// `context_length_exceeded`, or a reply cut off by the context rather than by the output
    /// limit). A model outcome, not infrastructure: scored as a failed episode (the missing
    /// files are scored, F1 0) and counted in every statistic.
    ContextOverflow,
    /// The provider failed: excluded from statistics, listed in the run summary.
    InfraError,
}

/// What the agent did and met in one episode, as its scaffold counted it (the ledger's counts;
/// `comtrade::EpisodeCounts` is what the API served). Fields added later default to 0 when an
/// older ledger is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentCounts {
    /// fetch_page calls (rejected ones included).
    pub requests: u32,
    /// Transient faults (429/500 with retry) the agent met.
    pub faults_seen: u32,
    /// Retries after a fault the model (or rule policy) chose (L1: its answers; L2: a later
    /// fetch of the faulted page). Imputed decisions are not counted here.
    pub retries: u32,
    /// Faulted pages the model (or rule policy) gave up (L1: its answers; L2: moving on to
    /// another page or submitting). Imputed decisions are not counted here.
    pub skips: u32,
    /// Extra duplicate rows served.
    pub duplicates_served: u32,
    /// Totals rows served.
    pub totals_served: u32,
    /// Tool calls made (L2) or issued by the harness (L0/L1).
    pub tool_calls: u32,
    /// Calls with an unknown tool or unreadable arguments, and replies holding a call in an
    /// envelope the tool protocol does not read (bare JSON instead of a native tool call).
    pub malformed_calls: u32,
    /// L0/L1 answers the harness could not read (slots without a JSON object, an L1 answer that
    /// names neither or both of retry and skip).
    pub malformed_decisions: u32,
    /// Decisions the harness made in the model's place after an unreadable answer (see
    /// docs/decisions.md: an unreadable L1 answer is imputed as skip, never as a recovery).
    pub imputed_decisions: u32,
    /// L0 slots the harness replaced by the task's own values (the model's value disagreed).
    pub slots_replaced: u32,
    /// 1 when the budget or quota ran out mid-episode.
    pub quota_deaths: u32,
}

impl AgentCounts {
    /// An L0/L1 answer the harness could not read, and the decision it then makes in the
    /// model's place: always counted together, and never as the model's own choice.
    pub fn unreadable_answer_imputed(&mut self) {
        self.malformed_decisions += 1;
        self.imputed_decisions += 1;
    }
}

/// Wall-clock facts: the only part of a record allowed to differ on replay.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Timing {
    /// Episode wall time in milliseconds.
    pub wall_ms: f64,
}

/// One finished episode, as the ledger stores it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeRecord {
    /// Identity.
    pub key: EpisodeKey,
    /// How it ended.
    pub outcome: Outcome,
    /// The primary scorer's value (absent for infra errors).
    pub reward: Option<f64>,
    /// Both scorers (absent for infra errors; an episode without submission scores its
    /// missing files: F1 0, judge 0).
    pub scores: Option<Scores>,
    /// L1 outcome: share of G among rows the harness accepted (L0/L1 only).
    pub coverage: Option<f64>,
    /// Counts.
    pub counts: AgentCounts,
    /// SHA-256 of the submitted files.
    pub payload_sha256: Option<String>,
    /// Tokens (LLM policies).
    pub usage: TokenUsage,
    /// What went wrong, for infra errors.
    pub error: Option<String>,
    /// Mean stress intensity over the episode's engine steps, when an arm was attached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_intensity: Option<f64>,
    /// Wall-clock facts.
    pub timing: Timing,
}

impl EpisodeRecord {
    /// What in this record contradicts the rest of it, if anything: a record is written whole
    /// by one computation, so its parts agree exactly (the ledger's floats round-trip).
    ///
    /// Checked: an `infra_error` has no reward and no scores, any other outcome has both; the
    /// task is in the registry; precision, recall and F1 are the one F1 formula of its own
    /// counts against the task's rows ([`benchaudit_scoring::F1Score::from_counts`]), with at
    /// most as many true records as submitted lines and as rows; the judge total is within 0
    /// and [`benchaudit_scoring::JUDGE_POINTS`]; the reward is one of the two scorers' values;
    /// coverage, when present, is within 0 and 1.
    pub fn inconsistency(&self) -> Option<String> {
        let (reward, scores) = match (self.outcome, self.reward, &self.scores) {
            (Outcome::InfraError, None, None) => return None,
            (Outcome::InfraError, _, _) => {
                return Some("an infra_error record carries a reward or scores".into());
            }
            (_, Some(reward), Some(scores)) => (reward, scores),
            (_, None, _) => return Some("a finished episode without a reward".into()),
            (_, _, None) => return Some("a finished episode without scores".into()),
        };
        let Some(task) = benchaudit_comtrade::task(&self.key.task_id) else {
            return Some(format!(
                "task `{}` is not in the registry",
                self.key.task_id
            ));
        };
        let s = scores;
        if s.true_unique > s.submitted || s.true_unique > task.total_rows {
            return Some(format!(
                "{} true records among {} submitted lines, of a task of {} rows",
                s.true_unique, s.submitted, task.total_rows
            ));
        }
        let f = benchaudit_scoring::F1Score::from_counts(
            s.true_unique,
            s.submitted,
            task.total_rows,
            s.distinct_ids,
            s.totals_rows,
        );
        for (name, recorded, counted) in [
            ("f1", s.f1, f.f1),
            ("precision", s.precision, f.precision),
            ("recall", s.recall, f.recall),
        ] {
            if recorded.to_bits() != counted.to_bits() {
                return Some(format!(
                    "{name} {recorded:?} is not the {counted:?} its counts give ({} true of {} submitted, {} rows)",
                    s.true_unique, s.submitted, task.total_rows
                ));
            }
        }
        if !(0.0..=benchaudit_scoring::JUDGE_POINTS).contains(&s.judge_total) {
            return Some(format!(
                "judge total {:?} is outside 0..={}",
                s.judge_total,
                benchaudit_scoring::JUDGE_POINTS
            ));
        }
        let by = |scorer| s.reward(scorer).to_bits() == reward.to_bits();
        if !by(RewardScorer::F1) && !by(RewardScorer::Judge) {
            return Some(format!(
                "reward {reward:?} is neither its f1 ({:?}) nor its judge ({:?})",
                s.f1,
                s.judge()
            ));
        }
        if let Some(c) = self.coverage.filter(|c| !(0.0..=1.0).contains(c)) {
            return Some(format!("coverage {c:?} is outside 0..=1"));
        }
        None
    }

    /// A record of an episode that could not run (outcome `infra_error`).
    pub fn failed(key: EpisodeKey, error: String) -> Self {
        EpisodeRecord {
            key,
            outcome: Outcome::InfraError,
            reward: None,
            scores: None,
            coverage: None,
            counts: AgentCounts::default(),
            payload_sha256: None,
            usage: TokenUsage::default(),
            error: Some(error),
            mean_intensity: None,
            timing: Timing::default(),
        }
    }
}

/// The options that define an episode besides (policy, level, task, seed).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RunOptions {
    /// Interface, submission protocol, budget override.
    pub episode: EpisodeOptions,
    /// Primary scorer.
    pub reward: RewardScorer,
    /// A stress arm at the boundary (A/B designs); recorded as the key's `arm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stress: Option<StressConfig>,
}

impl RunOptions {
    /// A short stable hash (16 hex digits of SHA-256 over the options' JSON).
    pub fn hash(&self) -> String {
        let text = serde_json::to_string(self).unwrap_or_default();
        let mut hex = crate::digest::sha256_hex(text.as_bytes());
        hex.truncate(16);
        hex
    }
}

impl EpisodeSpec {
    /// The ledger key of this episode when `policy` plays it: the one place keys are made, so
    /// a resume recognises exactly the episodes a run records.
    pub fn key(&self, policy: String) -> EpisodeKey {
        EpisodeKey {
            policy,
            level: self.level,
            task_id: self.task.task_id.to_string(),
            seed: self.seed,
            arm: self.options.stress.map(|s| s.label()),
            options_hash: self.options.hash(),
        }
    }
}

/// A complete specification of one episode to run.
#[derive(Debug, Clone, Copy)]
pub struct EpisodeSpec {
    /// Task.
    pub task: &'static TaskSpec,
    /// Seed.
    pub seed: u64,
    /// Level.
    pub level: Level,
    /// Options.
    pub options: RunOptions,
}
