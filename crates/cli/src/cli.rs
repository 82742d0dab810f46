//! Command-line surface (clap types only); each subcommand resolves these into work in
//! `commands/`.

use std::path::PathBuf;

use benchaudit_comtrade::{TaskSpec, find_task};
use benchaudit_runs::parse_seed;
use clap::{Args, Parser, Subcommand};

/// benchaudit: evaluate LLM agents honestly.
#[derive(Debug, Parser)]
#[command(name = "benchaudit", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the task registry, or print the generator card.
    Tasks(TasksArgs),
    /// List the rule policies and the one decision each makes differently.
    Policies(crate::commands::policies::PoliciesArgs),
    /// Write the canonical records of (task, seed) as JSON Lines to stdout.
    Truth(TruthArgs),
    /// Score a submission directory (data.jsonl, metadata.json, run.log) with both scorers.
    Score(ScoreArgs),
    /// Run policies × levels × tasks × seeds into a resumable run ledger.
    Run(crate::commands::run::RunArgs),
    /// Join the shards of a plan (`run --shard I/N`) into one verified run directory.
    Merge(crate::commands::merge::MergeArgs),
    /// The main job: the key-free self-audit of ComtradeBench (card, report, figures).
    Audit(crate::commands::audit::AuditArgs),
    /// Reject any figure in prose that is absent from a JSON document.
    Guard(crate::commands::guard::GuardArgs),
    /// Escalating vs constant stress: matched-mean A/B, quota and squeeze, degradation.
    Ab(crate::commands::ab::AbArgs),
    /// Freeze a pre-registered experiment spec by hash.
    Prereg(crate::commands::prereg::PreregArgs),
    /// Reliability statistics, tables and figures of a run directory.
    Report(crate::commands::report::ReportArgs),
    /// Serve ComtradeBench over REST and MCP (streamable HTTP).
    Serve(crate::commands::serve::ServeArgs),
    /// Serve one episode over MCP on stdio, for clients that spawn servers.
    Mcp(crate::commands::mcp::McpArgs),
    /// Write a run as logs of another tool (Inspect `.eval`).
    Export(crate::commands::export::ExportArgs),
    /// Read logs of another tool (Inspect `.eval`/`.json`) into a run directory.
    Import(crate::commands::import::ImportArgs),
    /// LLM-assisted layers that propose, never score: discover, probes, narrate, eval.
    Assist(crate::commands::assist::AssistArgs),
}

/// `benchaudit tasks`
#[derive(Debug, Args)]
pub struct TasksArgs {
    /// Print the registry as JSON.
    #[arg(long, conflicts_with = "card")]
    pub json: bool,
    /// Print the generator card (Markdown).
    #[arg(long)]
    pub card: bool,
}

/// `benchaudit truth`
#[derive(Debug, Args)]
pub struct TruthArgs {
    /// Task id (see `benchaudit tasks`).
    #[arg(long, value_parser = find_task)]
    pub task: &'static TaskSpec,
    /// Seed (0..=18446744073709551615).
    #[arg(long, allow_negative_numbers = true, value_parser = parse_seed)]
    pub seed: u64,
}

/// `benchaudit score`
#[derive(Debug, Args)]
pub struct ScoreArgs {
    /// Task id the submission answers.
    #[arg(long, value_parser = find_task)]
    pub task: &'static TaskSpec,
    /// Seed of the episode (0..=18446744073709551615).
    #[arg(long, allow_negative_numbers = true, value_parser = parse_seed)]
    pub seed: u64,
    /// Submission directory holding data.jsonl, metadata.json and run.log (any may be missing).
    pub dir: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}
