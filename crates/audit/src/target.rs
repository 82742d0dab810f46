//! A benchmark under audit supplies up to four hooks (paper A.13, SPEC §8). A missing hook makes
//! every stage that needs it **not probed** — never passed.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who makes an execution-critical decision: the same two owners the scaffolds declare, so a
/// target's declaration and a measurement compare directly.
pub use benchaudit_agents::Owner;

/// Hook 1: the scaffold-ownership map — per level, decision → owner — and the decisions the
/// benchmark's construct claims to measure (D_claimed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeclaredOwnership {
    /// `(level, decision, owner)` entries.
    pub entries: Vec<(String, String, Owner)>,
    /// D_claimed.
    pub claimed: Vec<String>,
    /// The level the benchmark is scored at in this configuration (the card's level).
    pub scored_level: String,
    /// The map as the target measured it by intervention (an external target's ownership hook
    /// may answer it beside its declaration): when given, it decides the ownership cell.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measured: Vec<MeasuredDecision>,
    /// Set when a person confirmed this map from a proposal (`benchaudit assist discover`)
    /// into the target's manifest: the proposal's id, so the card says which cell rests on a
    /// model's proposal that a person accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed_from: Option<String>,
}

/// One decision as measured by intervention: the harness run with the model's choice varied,
/// who turned out to decide, which choices were observed and whether the outcome moved with
/// them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasuredDecision {
    /// Level.
    pub level: String,
    /// Decision.
    pub decision: String,
    /// Who decided: the model's choice took effect (model), or the harness overrode it.
    pub owner: Owner,
    /// The distinct choices observed (non-degeneracy needs two or more).
    pub actions: Vec<String>,
    /// Whether the outcome differed between the choices.
    pub outcome_moves: bool,
}

impl DeclaredOwnership {
    /// The decisions the model owns at `level`.
    pub fn model_owned(&self, level: &str) -> Vec<String> {
        self.entries
            .iter()
            .filter(|(l, _, o)| l == level && *o == Owner::Model)
            .map(|(_, d, _)| d.clone())
            .collect()
    }

    /// The declared owner of a decision at a level.
    pub fn owner(&self, level: &str, decision: &str) -> Option<Owner> {
        self.entries
            .iter()
            .find(|(l, d, _)| l == level && d == decision)
            .map(|(_, _, o)| *o)
    }
}

/// Hook 2: one task of the target's registry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetTask {
    /// Task id.
    pub task_id: String,
    /// Seeds the audit may use (empty = any).
    #[serde(default)]
    pub seeds: Vec<u64>,
}

/// Measured scaffold variance (paper §5, as measured for τ-bench): the same model's score
/// under several of the target's native scaffolds. A spread above the scorer's resolution
/// is a measurement that the scaffold moves the score, so the number is a model–scaffold
/// system's, whatever the ownership map declares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaffoldVariance {
    /// The model whose scores these are.
    pub model: String,
    /// Scaffold name → the model's score under it (finite; at least two scaffolds).
    pub scores: std::collections::BTreeMap<String, f64>,
}

impl ScaffoldVariance {
    /// Checks the numbers: at least two scaffolds, every score finite.
    ///
    /// # Errors
    /// Fewer than two scaffolds, or a score that is NaN or infinite.
    pub fn validate(&self) -> Result<(), String> {
        if self.scores.len() < 2 {
            return Err(format!(
                "scaffold variance needs the scores of at least two scaffolds, got {}",
                self.scores.len()
            ));
        }
        match self.scores.iter().find(|(_, v)| !v.is_finite()) {
            Some((name, v)) => Err(format!(
                "scaffold variance: the score under `{name}` is not a finite number ({v})"
            )),
            None => Ok(()),
        }
    }

    /// Highest minus lowest score.
    pub fn spread(&self) -> f64 {
        let lo = self.scores.values().copied().fold(f64::INFINITY, f64::min);
        let hi = self
            .scores
            .values()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        if lo.is_finite() && hi.is_finite() {
            hi - lo
        } else {
            0.0
        }
    }
}

/// A forged submission: records, the self-report and the log, as a target's scorer reads them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Forged {
    /// Records (one JSON object each).
    pub records: Vec<Value>,
    /// The self-report (metadata.json).
    pub metadata: Value,
    /// The run log.
    pub run_log: String,
}

/// What kind of scorer a target ships (paper Appendix B).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScorerKind {
    /// Grades shape and self-report.
    Shape,
    /// Grades the outcome against ground truth.
    Outcome,
    /// Grades conformance to a specification.
    Specification,
    /// Unknown until probed.
    Unknown,
}

/// A benchmark under audit. Every hook is optional; `None` means "this target does not supply
/// it" and the stages that need it are not probed.
pub trait Target {
    /// Display name (e.g. "ComtradeBench (as shipped: L0 + legacy judge)").
    fn name(&self) -> String;

    /// Hook 1.
    fn ownership(&self) -> Option<DeclaredOwnership>;

    /// Hook 2.
    fn registry(&self) -> Option<Vec<TargetTask>>;

    /// Hook 3: the canonical records of (task, seed), or why they could not be produced.
    fn truth(&self, task: &str, seed: u64) -> Option<Result<Vec<Value>, String>>;

    /// Hook 4: the target's own scorer on a submission, as a reward in [0, 1].
    fn score(&self, task: &str, seed: u64, submission: &Forged) -> Option<Result<f64, String>>;

    /// The smallest reward difference the scorer can express (criterion sensitivity's ε).
    fn resolution(&self) -> f64 {
        1e-9
    }

    /// Requests a complete pass of a task takes (shapes the forged self-report and log).
    fn pages(&self, _task: &str) -> u32 {
        1
    }

    /// The scorer kind the target declares (used when criterion sensitivity cannot decide).
    fn declared_scorer_kind(&self) -> ScorerKind {
        ScorerKind::Unknown
    }

    /// Hook 1 with the cause of its failure: `Some(Err(cause))` when the hook exists but
    /// gave no usable answer (the stage is then not probed, naming the cause).
    fn ownership_hook(&self) -> Option<Result<DeclaredOwnership, String>> {
        self.ownership().map(Ok)
    }

    /// Hook 2 with the cause of its failure.
    fn registry_hook(&self) -> Option<Result<Vec<TargetTask>, String>> {
        self.registry().map(Ok)
    }

    /// Measured scaffold variance, if the target supplies it (numbers in its manifest or a
    /// hook), with the cause of a failure.
    fn scaffold_variance(&self) -> Option<Result<ScaffoldVariance, String>> {
        None
    }
}
