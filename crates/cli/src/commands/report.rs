//! `benchaudit report` (being written).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

/// `benchaudit report`
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run directory to report on.
    pub run_dir: PathBuf,
}

/// Runs the subcommand.
pub fn run(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("report is not built yet ({})", args.run_dir.display())
}
