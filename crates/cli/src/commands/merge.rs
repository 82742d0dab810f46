//! `benchaudit merge`: the shards of a plan (`run --shard I/N`, `ab --shard I/N`) into one run
//! directory, verified as `runs::merge` documents; exit 3 when shards are missing or
//! incomplete (the message gives the command that completes each).

use std::path::PathBuf;
use std::process::ExitCode;

use benchaudit_runs::merge::MergeError;
use clap::Args;

use crate::output::print;

/// `benchaudit merge`
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' run directories, in any order (e.g. runs/shard-*).
    #[arg(required = true, value_name = "SHARD_DIR")]
    pub shards: Vec<PathBuf>,
    /// The merged run directory (created; it must be absent or empty).
    #[arg(long)]
    pub out: PathBuf,
}

/// Runs the subcommand.
pub fn run(args: &MergeArgs) -> anyhow::Result<ExitCode> {
    let merged = match benchaudit_runs::merge(&args.shards, &args.out) {
        Ok(m) => m,
        Err(benchaudit_runs::Error::Merge(e @ MergeError::Gaps { .. })) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(3));
        }
        Err(e) => return Err(crate::UsageError(e.to_string()).into()),
    };
    print(&format!(
        "merged {} shards of plan {} into {}: {} episodes, {} transcripts\n{}",
        merged.shards,
        &merged.plan_sha256[..16.min(merged.plan_sha256.len())],
        args.out.display(),
        merged.records.len(),
        merged.transcripts,
        benchaudit_report::text::RunSummary::of(&merged.records).text()
    ))?;
    Ok(ExitCode::SUCCESS)
}
