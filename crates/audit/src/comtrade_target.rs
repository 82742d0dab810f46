//! ComtradeBench as an audit target, in its two configurations: as shipped (L0 + the legacy
//! judge) and repaired (L2 + ground-truth F1). It supplies all four hooks, and the [`Suite`]:
//! the tasks, stand-ins and released-judge values the in-process stages use, so the pipeline
//! names no ComtradeBench task.

use benchaudit_agents::{Decision, Level, OwnershipMap, RuleKind};
use benchaudit_comtrade::{Generator, Row, RowJson, Submission, task, tasks};
use benchaudit_scoring::{GroundTruthF1, LegacyJudge, Scorer};
use serde_json::Value;

use crate::target::{DeclaredOwnership, Forged, ScorerKind, Target, TargetTask};

/// Which configuration of ComtradeBench is audited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Configuration {
    /// The released benchmark: production scaffold (L0) and the six-dimension judge.
    AsShipped,
    /// The repair: slim scaffold (L2) and ground-truth F1.
    Repaired,
}

/// ComtradeBench under audit.
#[derive(Debug, Clone, Copy)]
pub struct ComtradeTarget {
    /// Configuration.
    pub configuration: Configuration,
    /// The ownership map it declares (the scaffolds' own, unless a test mis-declares it).
    pub declared: Option<fn() -> OwnershipMap>,
}

impl ComtradeTarget {
    /// The stages' tasks and expected values.
    pub fn suite(&self) -> &'static Suite {
        &SUITE
    }

    /// A configuration with the scaffolds' declared map.
    pub fn new(configuration: Configuration) -> Self {
        ComtradeTarget {
            configuration,
            declared: Some(OwnershipMap::declared),
        }
    }

    /// The level this configuration scores at.
    pub fn level(&self) -> Level {
        match self.configuration {
            Configuration::AsShipped => Level::L0,
            Configuration::Repaired => Level::L2,
        }
    }
}

/// The released judge's scores on one probe task, which the oracle checks pin (paper §3.2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JudgeCheck {
    /// The probe task.
    pub task: &'static str,
    /// The judge's reward for the correct (and, identically, the fabricated) submission.
    pub correct: f64,
    /// The judge's floor for an empty submission.
    pub empty: f64,
}

/// What the in-process audit of ComtradeBench runs, stage by stage.
#[derive(Debug, Clone, Copy)]
pub struct Suite {
    /// Tasks of the forged-submission battery (T2: the paper's probe; T3: its card; T7: totals).
    pub probe_tasks: &'static [&'static str],
    /// Execution tasks of the reliability spectrum and the decision channels (paper Figure 2
    /// plus T7's diagnostic).
    pub execution_tasks: &'static [&'static str],
    /// The task of the 2×2 joint intervention (paper Table 1).
    pub joint_task: &'static str,
    /// Per decision, the stand-ins wrong on exactly it and the tasks where it matters.
    pub ownership_probe: fn(Decision) -> (&'static [RuleKind], &'static [&'static str]),
    /// The released judge's probe values.
    pub judge_check: JudgeCheck,
    /// The task the solvability stage must find scale-bound at L2 (paper A.6).
    pub scale_bound_task: &'static str,
}

/// ComtradeBench's suite.
pub const SUITE: Suite = Suite {
    probe_tasks: &["T2_multi_page", "T3_duplicates", "T7_totals_trap"],
    execution_tasks: &[
        "T3_duplicates",
        "T4_rate_limit_429",
        "T5_server_error_500",
        "T6_page_drift",
        "T7_totals_trap",
        "T8_mixed_faults",
    ],
    joint_task: "T3_duplicates",
    ownership_probe,
    judge_check: JudgeCheck {
        task: "T2_multi_page",
        correct: 0.987,
        empty: 0.648,
    },
    scale_bound_task: "T7_totals_trap",
};

/// The stand-ins and the tasks that expose each decision.
pub fn ownership_probe(decision: Decision) -> (&'static [RuleKind], &'static [&'static str]) {
    match decision {
        Decision::Retry => (
            &[RuleKind::SkipsFaults],
            &[
                "T4_rate_limit_429",
                "T5_server_error_500",
                "T8_mixed_faults",
            ],
        ),
        Decision::Dedup => (
            &[RuleKind::NoDedup],
            &["T3_duplicates", "T8_mixed_faults", "T10_constrained_budget"],
        ),
        Decision::TotalsFilter => (&[RuleKind::KeepsTotals], &["T7_totals_trap"]),
        Decision::Pagination => (
            &[RuleKind::SinglePass, RuleKind::PageZero],
            &["T6_page_drift"],
        ),
        Decision::Submission => (&[RuleKind::Fabricator, RuleKind::Empty], &["T3_duplicates"]),
    }
}

/// The benchmark's name, as the card's heading gives it beside any other target audited.
pub const NAME: &str = "ComtradeBench";

/// The short id of a task (`T2_multi_page` → `T2`), as check names and captions write it.
pub use benchaudit_comtrade::short_id;

/// The decision names the audit uses (the same words as the ownership map).
pub fn decision_name(d: Decision) -> &'static str {
    match d {
        Decision::Retry => "retry",
        Decision::Dedup => "dedup",
        Decision::TotalsFilter => "totals_filter",
        Decision::Pagination => "pagination",
        Decision::Submission => "submission",
    }
}

/// Converts the scaffolds' map into the target hook's shape.
pub fn declared_from(map: &OwnershipMap, scored: Level) -> DeclaredOwnership {
    DeclaredOwnership {
        entries: map
            .entries
            .iter()
            .map(|(l, d, o)| (l.to_string(), decision_name(*d).to_string(), *o))
            .collect(),
        // ComtradeBench claims to measure execution reliability: every decision the adversary targets.
        claimed: Decision::ALL
            .iter()
            .map(|d| decision_name(*d).to_string())
            .collect(),
        scored_level: scored.to_string(),
        // Measured by the audit's own ownership stage, not by a hook.
        measured: Vec::new(),
        confirmed_from: None,
    }
}

impl Target for ComtradeTarget {
    fn name(&self) -> String {
        match self.configuration {
            Configuration::AsShipped => "ComtradeBench as shipped (L0 + legacy judge)".into(),
            Configuration::Repaired => "ComtradeBench repaired (L2 + ground-truth F1)".into(),
        }
    }

    fn ownership(&self) -> Option<DeclaredOwnership> {
        self.declared.map(|f| declared_from(&f(), self.level()))
    }

    fn registry(&self) -> Option<Vec<TargetTask>> {
        Some(
            tasks()
                .iter()
                .map(|t| TargetTask {
                    task_id: t.task_id.into(),
                    seeds: Vec::new(),
                })
                .collect(),
        )
    }

    fn truth(&self, task_id: &str, seed: u64) -> Option<Result<Vec<Value>, String>> {
        let Some(t) = task(task_id) else {
            return Some(Err(format!("unknown task {task_id}")));
        };
        Some(Ok(Generator::new(t, seed)
            .truth()
            .map(|r| {
                serde_json::to_value(RowJson {
                    task: t,
                    row: &Row::Record(r),
                })
                .unwrap_or(Value::Null)
            })
            .collect()))
    }

    fn score(&self, task_id: &str, seed: u64, s: &Forged) -> Option<Result<f64, String>> {
        let Some(t) = task(task_id) else {
            return Some(Err(format!("unknown task {task_id}")));
        };
        // Each record as its compact JSON (the bytes `Value`'s `Display` writes) and a newline,
        // written into one buffer.
        let mut bytes = Vec::new();
        for r in &s.records {
            if let Err(e) = serde_json::to_writer(&mut bytes, r) {
                return Some(Err(format!("serialising a record: {e}")));
            }
            bytes.push(b'\n');
        }
        let data = match String::from_utf8(bytes) {
            Ok(d) => d,
            Err(e) => return Some(Err(format!("serialising a record: {e}"))),
        };
        let submission = Submission::new(data, s.metadata.to_string(), s.run_log.clone());
        Some(Ok(match self.configuration {
            Configuration::AsShipped => LegacyJudge.reward(t, seed, &submission),
            Configuration::Repaired => GroundTruthF1.reward(t, seed, &submission),
        }))
    }

    fn resolution(&self) -> f64 {
        match self.configuration {
            Configuration::AsShipped => LegacyJudge.resolution(),
            Configuration::Repaired => GroundTruthF1.resolution(),
        }
    }

    fn pages(&self, task_id: &str) -> u32 {
        task(task_id).map_or(1, |t| t.total_pages())
    }

    fn declared_scorer_kind(&self) -> ScorerKind {
        match self.configuration {
            Configuration::AsShipped => ScorerKind::Shape,
            Configuration::Repaired => ScorerKind::Outcome,
        }
    }
}
