//! Declared vs measured ownership (paper §4.1): for each decision and level, a stand-in that is
//! wrong on exactly that decision runs beside the oracle on the tasks where the decision
//! matters; identical payloads mean the harness owns the decision, whatever the declaration
//! says. Then D_claimed ⊆ D_model and non-degeneracy of each model-owned channel from episode
//! data (Var(A) > 0 and E[Y|A=a₁] ≠ E[Y|A=a₂]).

use benchaudit_agents::{Decision, EpisodeRecord, Level, Outcome, RuleKind, RunOptions};
use benchaudit_comtrade::{TaskSpec, task};
use serde::Serialize;

use crate::comtrade_target::decision_name;
use crate::runs::{Job, Player, run_jobs};
use crate::target::{DeclaredOwnership, Owner};

/// The stand-in and the tasks that expose each decision.
pub fn probe_of(decision: Decision) -> (&'static [RuleKind], &'static [&'static str]) {
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

/// One measured cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredCell {
    /// Level.
    pub level: String,
    /// Decision.
    pub decision: String,
    /// Declared owner (None: no declaration).
    pub declared: Option<Owner>,
    /// Measured owner.
    pub measured: Owner,
    /// Episodes compared and how many payloads differed from the oracle's.
    pub compared: usize,
    /// Payloads that differed.
    pub differed: usize,
}

/// Measures who owns each decision at each level by intervention.
pub fn measure(
    declared: Option<&DeclaredOwnership>,
    seeds: &[u64],
    threads: usize,
) -> Vec<MeasuredCell> {
    let oracle = Player::rule(RuleKind::Oracle);
    let stand_ins: Vec<Player> = RuleKind::STAND_INS
        .iter()
        .map(|k| Player::rule(*k))
        .collect();
    let mut cells = Vec::new();
    for level in Level::ALL {
        for decision in Decision::ALL {
            let (kinds, task_ids) = probe_of(decision);
            let tasks: Vec<&'static TaskSpec> = task_ids.iter().filter_map(|id| task(id)).collect();
            let mut jobs: Vec<Job<'_>> = Vec::new();
            for kind in kinds {
                let Some(player) = stand_ins.iter().find(|p| p.name == kind.name()) else {
                    continue;
                };
                for &t in &tasks {
                    for &seed in seeds {
                        let spec = benchaudit_agents::EpisodeSpec {
                            task: t,
                            seed,
                            level,
                            options: RunOptions::default(),
                        };
                        jobs.push(Job {
                            player: &oracle,
                            spec,
                        });
                        jobs.push(Job { player, spec });
                    }
                }
            }
            let records = run_jobs(&jobs, threads);
            let pairs: Vec<(&EpisodeRecord, &EpisodeRecord)> = records
                .chunks(2)
                .filter_map(|c| Some((c.first()?, c.get(1)?)))
                .collect();
            let differed = pairs
                .iter()
                .filter(|(o, s)| o.payload_sha256 != s.payload_sha256)
                .count();
            let measured = if differed > 0 {
                Owner::Model
            } else {
                Owner::Harness
            };
            cells.push(MeasuredCell {
                level: level.to_string(),
                decision: decision_name(decision).into(),
                declared: declared
                    .and_then(|d| d.owner(&level.to_string(), decision_name(decision))),
                measured,
                compared: pairs.len(),
                differed,
            });
        }
    }
    cells
}

/// Non-degeneracy of one decision channel over a pool of episodes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Channel {
    /// Decision.
    pub decision: String,
    /// Episodes where the decision arose.
    pub episodes: usize,
    /// Episodes where the action was the deviant one (skip, keep duplicates, keep totals,
    /// incomplete collection, empty or fabricated submission).
    pub deviant: usize,
    /// Mean outcome when the action was taken / not taken.
    pub mean_y: (Option<f64>, Option<f64>),
    /// Var(A) > 0 and the two means differ.
    pub non_degenerate: bool,
}

/// The action variable A of a decision in an episode, when the decision arose.
fn action(decision: Decision, r: &EpisodeRecord) -> Option<bool> {
    let s = r.scores.as_ref()?;
    let total = task(&r.key.task_id)?.total_rows;
    match decision {
        Decision::Retry => (r.counts.faults_seen > 0).then_some(r.counts.skips > 0),
        Decision::Dedup => (r.counts.duplicates_served > 0 && s.submitted > 0)
            .then_some(s.submitted > s.distinct_ids),
        Decision::TotalsFilter => {
            (r.counts.totals_served > 0 && s.submitted > 0).then_some(s.totals_rows > 0)
        }
        Decision::Pagination => (s.submitted > 0 && s.true_unique > 0)
            .then_some(s.distinct_ids.saturating_sub(s.totals_rows) < total),
        Decision::Submission => {
            (r.outcome == Outcome::Submitted).then_some(s.submitted == 0 || s.true_unique == 0)
        }
    }
}

/// Non-degeneracy of every decision over episodes (Y = ground-truth F1).
pub fn channels(pool: &[EpisodeRecord]) -> Vec<Channel> {
    Decision::ALL
        .iter()
        .map(|&d| {
            let mut yes = Vec::new();
            let mut no = Vec::new();
            for r in pool {
                if let (Some(a), Some(s)) = (action(d, r), r.scores.as_ref()) {
                    if a { yes.push(s.f1) } else { no.push(s.f1) }
                }
            }
            let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
            let (my, mn) = (mean(&yes), mean(&no));
            let non_degenerate = matches!((my, mn), (Some(a), Some(b)) if (a - b).abs() > 1e-9);
            Channel {
                decision: decision_name(d).into(),
                episodes: yes.len() + no.len(),
                deviant: yes.len(),
                mean_y: (my, mn),
                non_degenerate,
            }
        })
        .collect()
}
