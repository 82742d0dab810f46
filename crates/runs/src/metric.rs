//! The per-episode outcome a statistic is computed on.

use benchaudit_agents::{EpisodeRecord, Level, Outcome};
use serde::{Deserialize, Serialize};

/// Points of a perfect judge total; the judge metric is `judge_total / JUDGE_SCALE`.
pub const JUDGE_SCALE: f64 = benchaudit_scoring::JUDGE_POINTS;

/// Which per-episode number a statistic is computed on.
///
/// Exists because the paper's headline metric is ground-truth F1 while the judge and L1
/// coverage are studied too; the choice is recorded so numbers are never read on the wrong
/// scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Ground-truth F1 (`scores.f1`).
    F1,
    /// The legacy judge total divided by 100 (`scores.judge_total / 100`).
    Judge,
    /// L1 coverage (`coverage`): share of G among rows the harness accepted, recorded at L0
    /// and L1 only.
    Coverage,
    /// The episode's primary reward (`reward`): F1 or the judge's total / 100 as the run chose
    /// for native runs; the chosen score of a run imported from another tool's logs.
    Reward,
}

impl Metric {
    /// The metric of a level when none is chosen: coverage where the harness assembles the
    /// submission (L0, L1), F1 where the model does (L2).
    pub fn default_for(level: Level) -> Metric {
        Metric::default_for_levels(&[level])
    }

    /// The metric of a run over `levels` when none is chosen — the one default of `ab` and
    /// `report`: coverage when every level is L0 or L1, F1 when the run includes L2 (the one
    /// metric every level records; coverage does not exist at L2) or has no level.
    pub fn default_for_levels(levels: &[Level]) -> Metric {
        if levels.contains(&Level::L2) || levels.is_empty() {
            Metric::F1
        } else {
            Metric::Coverage
        }
    }

    /// Human name, used in headings, axis labels and captions.
    pub fn label(self) -> &'static str {
        match self {
            Metric::F1 => "ground-truth F1",
            Metric::Judge => "legacy judge (0–1)",
            Metric::Coverage => "coverage",
            Metric::Reward => "reward",
        }
    }

    /// The flag value (`f1`, `judge`, `coverage`).
    pub fn flag(self) -> &'static str {
        match self {
            Metric::F1 => "f1",
            Metric::Judge => "judge",
            Metric::Coverage => "coverage",
            Metric::Reward => "reward",
        }
    }

    /// The metric of one record: `None` for an infra error, a record without it (coverage
    /// at L2, no scores) or a non-finite value. The single definition of each metric's
    /// per-episode value.
    pub fn of(self, record: &EpisodeRecord) -> Option<f64> {
        self.of_parts(
            record.outcome,
            record.scores.as_ref().map(|s| (s.f1, s.judge_total)),
            record.coverage,
            record.reward,
        )
    }

    /// [`Metric::of`] from the fields it reads: the outcome, `(scores.f1, scores.judge_total)`,
    /// `coverage` and `reward`. Exists for readers that keep only these of a record (a report
    /// streams a ledger without holding its records).
    pub fn of_parts(
        self,
        outcome: Outcome,
        scores: Option<(f64, f64)>,
        coverage: Option<f64>,
        reward: Option<f64>,
    ) -> Option<f64> {
        if outcome == Outcome::InfraError {
            return None;
        }
        let v = match self {
            Metric::F1 => scores.map(|(f1, _)| f1),
            Metric::Judge => scores.map(|(_, judge_total)| judge_total / JUDGE_SCALE),
            Metric::Coverage => coverage,
            Metric::Reward => reward,
        };
        v.filter(|x| x.is_finite())
    }
}
