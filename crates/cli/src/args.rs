//! Value types shared by several subcommands' flags.

use benchaudit_comtrade::{InterfaceProfile, SubmissionProtocol};
use benchaudit_runs::{DesignKind, Metric};
use benchaudit_scoring::RewardScorer;
use clap::ValueEnum;

/// Interface profile on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum InterfaceArg {
    /// As released: 422 says retry.
    Legacy,
    /// 422 says do not retry.
    Strict,
}

/// The tool text a model is shown on the command line (paper C.6).
#[derive(Debug, Clone, Copy, Default, ValueEnum)]
pub enum ToolTextArg {
    /// `page` described as 1-based, page 0 rejected (the default).
    #[default]
    Clarified,
    /// `page` described as "Page number" with no base stated.
    Ambiguous,
}

impl From<ToolTextArg> for benchaudit_comtrade::ToolText {
    fn from(a: ToolTextArg) -> Self {
        match a {
            ToolTextArg::Clarified => benchaudit_comtrade::ToolText::Clarified,
            ToolTextArg::Ambiguous => benchaudit_comtrade::ToolText::Ambiguous,
        }
    }
}

/// Submission protocol on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SubmissionArg {
    /// Re-emit every record.
    Full,
    /// Submit record ids.
    Ids,
    /// append_results chunks, then submit.
    Chunked,
}

/// Primary scorer on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RewardArg {
    /// Ground-truth F1.
    F1,
    /// The legacy judge (total / 100).
    Judge,
}

/// Per-episode metric on the command line (`ab --metric`, `report --metric`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MetricArg {
    /// Ground-truth F1 (`scores.f1`).
    F1,
    /// The legacy judge total divided by 100 (`scores.judge_total / 100`).
    Judge,
    /// Share of G among rows the harness accepted (`coverage`), recorded at L0/L1 only.
    Coverage,
    /// The episode's reward (`reward`): the run's primary scorer, or an imported log's score.
    Reward,
}

/// Stress design on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DesignArg {
    /// Escalating ramp vs constant at its realised mean; free retries.
    MatchedMean,
    /// As matched-mean, under an enforced quota with a squeeze only the escalating arm crosses.
    Quota,
    /// Constant intensity at doses 0, 0.25, 0.5, 0.75, 1.
    Degradation,
}

impl From<MetricArg> for Metric {
    fn from(a: MetricArg) -> Self {
        match a {
            MetricArg::F1 => Metric::F1,
            MetricArg::Judge => Metric::Judge,
            MetricArg::Coverage => Metric::Coverage,
            MetricArg::Reward => Metric::Reward,
        }
    }
}

impl From<DesignArg> for DesignKind {
    fn from(a: DesignArg) -> Self {
        match a {
            DesignArg::MatchedMean => DesignKind::MatchedMean,
            DesignArg::Quota => DesignKind::Quota,
            DesignArg::Degradation => DesignKind::Degradation,
        }
    }
}

impl From<InterfaceArg> for InterfaceProfile {
    fn from(a: InterfaceArg) -> Self {
        match a {
            InterfaceArg::Legacy => InterfaceProfile::Legacy,
            InterfaceArg::Strict => InterfaceProfile::Strict,
        }
    }
}

impl From<SubmissionArg> for SubmissionProtocol {
    fn from(a: SubmissionArg) -> Self {
        match a {
            SubmissionArg::Full => SubmissionProtocol::Full,
            SubmissionArg::Ids => SubmissionProtocol::Ids,
            SubmissionArg::Chunked => SubmissionProtocol::Chunked,
        }
    }
}

impl From<RewardArg> for RewardScorer {
    fn from(a: RewardArg) -> Self {
        match a {
            RewardArg::F1 => RewardScorer::F1,
            RewardArg::Judge => RewardScorer::Judge,
        }
    }
}

/// `--jobs`, the same flag and default on every subcommand that plays episodes.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct JobsArg {
    /// Episodes in parallel, 1 to 1 024 [default: the number of cores].
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1024))]
    pub jobs: Option<usize>,
}

impl JobsArg {
    /// The given value, else the number of cores this process may use.
    pub fn get(self) -> usize {
        self.jobs.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(1024))
        })
    }
}
