//! `benchaudit mcp`: one episode over MCP stdio, for MCP clients that spawn servers. stdout
//! carries only protocol messages; anything else goes to stderr (`RUST_LOG=info` for more).

use std::process::ExitCode;

use benchaudit_comtrade::{EpisodeOptions, TaskSpec, find_task};
use benchaudit_runs::parse_seed;
use clap::Args;

use crate::args::{InterfaceArg, RewardArg, SubmissionArg};

/// `benchaudit mcp`
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Task id.
    #[arg(long, value_parser = find_task)]
    pub task: &'static TaskSpec,
    /// Seed (0..=18446744073709551615).
    #[arg(long, allow_negative_numbers = true, value_parser = parse_seed)]
    pub seed: u64,
    /// Argument-error envelope.
    #[arg(long, value_enum, default_value = "legacy")]
    pub interface: InterfaceArg,
    /// Submission protocol.
    #[arg(long, value_enum, default_value = "full")]
    pub submission: SubmissionArg,
    /// Request quota: requests allowed in the episode, overriding the task's budget
    /// (0..=4294967295), as `run --quota`.
    #[arg(long = "quota", alias = "max-requests", value_parser = clap::value_parser!(u32).range(0..=i64::from(benchaudit_comtrade::MAX_QUOTA)))]
    pub max_requests: Option<u32>,
    /// Primary scorer giving the submission's `reward` (both are always reported).
    #[arg(long, value_enum, default_value = "f1")]
    pub reward: RewardArg,
    /// Longest message line in bytes (1024..=1073741824); a longer one is skipped and answered
    /// with a JSON-RPC error.
    #[arg(long, default_value_t = 16 << 20, value_parser = clap::value_parser!(u64).range(1024..=1 << 30))]
    pub max_line_bytes: u64,
    /// The wording of fetch_page's `page` argument in the tool list: `clarified` states the
    /// base (1-based), `ambiguous` says only "Page number".
    #[arg(long, value_enum, default_value = "clarified")]
    pub tool_text: crate::args::ToolTextArg,
}

/// Runs the subcommand.
pub fn run(args: &McpArgs) -> anyhow::Result<ExitCode> {
    let task = args.task;
    let options = EpisodeOptions {
        interface: args.interface.into(),
        submission: args.submission.into(),
        max_requests: args.max_requests,
    };
    benchaudit_server::serve_stdio_blocking(benchaudit_server::StdioEpisode {
        task,
        seed: args.seed,
        options,
        reward: args.reward.into(),
        max_line_bytes: usize::try_from(args.max_line_bytes).unwrap_or(usize::MAX),
        tool_text: args.tool_text.into(),
    })?;
    Ok(ExitCode::SUCCESS)
}
