//! Value types shared by several subcommands' flags.

use benchaudit_comtrade::{InterfaceProfile, SubmissionProtocol};
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
