//! Value types shared by several subcommands' flags.

use benchaudit_comtrade::{InterfaceProfile, SubmissionProtocol, ToolText};
use benchaudit_runs::{DesignKind, Metric, Transcripts};
use benchaudit_scoring::RewardScorer;
use clap::ValueEnum;

/// A flag's twin of a library enum: the same variants, with clap's names and help, and the
/// conversion into the library type (so the libraries need not know clap).
macro_rules! flag_enum {
    ($(#[$doc:meta])* $name:ident => $target:ident { $($(#[$vdoc:meta])* $variant:ident,)+ }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)+
        }

        impl From<$name> for $target {
            fn from(a: $name) -> Self {
                match a {
                    $($name::$variant => $target::$variant,)+
                }
            }
        }
    };
}

flag_enum! {
    /// Interface profile on the command line.
    InterfaceArg => InterfaceProfile {
        /// As released: 422 says retry.
        Legacy,
        /// 422 says do not retry.
        Strict,
    }
}

flag_enum! {
    /// The tool text a model is shown on the command line (paper C.6).
    ToolTextArg => ToolText {
        /// `page` described as 1-based, page 0 rejected (the default).
        Clarified,
        /// `page` described as "Page number" with no base stated.
        Ambiguous,
    }
}

flag_enum! {
    /// Whether a run keeps its episodes' transcripts, on the command line.
    TranscriptsArg => Transcripts {
        /// Each episode's events (and an LLM's message log), zstd-compressed, in transcripts/.
        Keep,
        /// None (large sweeps of rule players; replaying models needs them).
        None,
    }
}

flag_enum! {
    /// Submission protocol on the command line.
    SubmissionArg => SubmissionProtocol {
        /// Re-emit every record.
        Full,
        /// Submit record ids.
        Ids,
        /// append_results chunks, then submit.
        Chunked,
    }
}

flag_enum! {
    /// Primary scorer on the command line.
    RewardArg => RewardScorer {
        /// Ground-truth F1.
        F1,
        /// The legacy judge (total / 100).
        Judge,
    }
}

flag_enum! {
    /// Per-episode metric on the command line (`ab --metric`, `report --metric`).
    MetricArg => Metric {
        /// Ground-truth F1 (`scores.f1`).
        F1,
        /// The legacy judge total divided by 100 (`scores.judge_total / 100`).
        Judge,
        /// Share of G among rows the harness accepted (`coverage`), recorded at L0/L1 only.
        Coverage,
        /// The episode's reward (`reward`): the run's primary scorer, or an imported log's score.
        Reward,
    }
}

flag_enum! {
    /// Stress design on the command line.
    DesignArg => DesignKind {
        /// Escalating ramp vs constant at its realised mean; free retries.
        MatchedMean,
        /// As matched-mean, under an enforced quota with a squeeze only the escalating arm crosses.
        Quota,
        /// Constant intensity at doses 0, 0.25, 0.5, 0.75, 1.
        Degradation,
    }
}

/// `--task all` or a list of ids (one flag value, so `all` can stand for the registry).
#[derive(Debug, Clone)]
pub struct Tasks(pub Vec<&'static benchaudit_comtrade::TaskSpec>);

/// The value parser of a task-list flag.
pub fn select_tasks(spec: &str) -> Result<Tasks, String> {
    benchaudit_comtrade::select_tasks(spec).map(Tasks)
}

/// `--jobs`, the same flag and default on every subcommand that plays episodes.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct JobsArg {
    /// Episodes in parallel (1..=1024) [default: the number of cores].
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
