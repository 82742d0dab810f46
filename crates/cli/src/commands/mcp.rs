//! `benchaudit mcp`: one episode over MCP stdio.

use std::process::ExitCode;

use benchaudit_comtrade::{EpisodeOptions, InterfaceProfile, SubmissionProtocol};
use clap::{Args, ValueEnum};

use crate::commands::resolve_task;

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

/// `benchaudit mcp`
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Task id.
    #[arg(long)]
    pub task: String,
    /// Seed.
    #[arg(long)]
    pub seed: u64,
    /// Argument-error envelope.
    #[arg(long, value_enum, default_value = "legacy")]
    pub interface: InterfaceArg,
    /// Submission protocol.
    #[arg(long, value_enum, default_value = "full")]
    pub submission: SubmissionArg,
}

/// Runs the subcommand.
pub fn run(args: &McpArgs) -> anyhow::Result<ExitCode> {
    let task = resolve_task(&args.task)?;
    let options = EpisodeOptions { interface: args.interface.into(), submission: args.submission.into(), max_requests: None };
    benchaudit_server::serve_stdio_blocking(task, args.seed, options)?;
    Ok(ExitCode::SUCCESS)
}
