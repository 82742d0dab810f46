//! `benchaudit mcp`: one episode over MCP stdio, for MCP clients that spawn servers. stdout
//! carries only protocol messages; anything else goes to stderr.

use std::process::ExitCode;

use benchaudit_comtrade::EpisodeOptions;
use clap::Args;

use crate::args::{InterfaceArg, RewardArg, SubmissionArg};
use crate::commands::resolve_task;

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
    /// Request budget override (a quota); default: the task's max_requests.
    #[arg(long)]
    pub max_requests: Option<u32>,
    /// Primary scorer giving the submission's `reward` (both are always reported).
    #[arg(long, value_enum, default_value = "f1")]
    pub reward: RewardArg,
}

/// Runs the subcommand.
pub fn run(args: &McpArgs) -> anyhow::Result<ExitCode> {
    let task = resolve_task(&args.task)?;
    let options = EpisodeOptions {
        interface: args.interface.into(),
        submission: args.submission.into(),
        max_requests: args.max_requests,
    };
    benchaudit_server::serve_stdio_blocking(task, args.seed, options, args.reward.into())?;
    Ok(ExitCode::SUCCESS)
}
