//! `benchaudit export --format inspect RUN_DIR --out DIR`: a run ledger as Inspect `.eval`
//! logs (one per condition), for `inspect view` and `inspect_ai.log.read_eval_log`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use crate::output::print;

/// Formats `export` and `import` speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InteropFormat {
    /// Inspect (inspect-ai) `.eval` logs.
    Inspect,
}

/// `benchaudit export`
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Output format.
    #[arg(long, value_enum)]
    pub format: InteropFormat,
    /// Run directory written by `benchaudit run` (or `benchaudit import`).
    pub run_dir: PathBuf,
    /// Directory for the logs (created if missing).
    #[arg(long)]
    pub out: PathBuf,
}

/// Runs the subcommand.
pub fn run(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let InteropFormat::Inspect = args.format;
    let logs = benchaudit_interop::inspect::export_run(&args.run_dir, &args.out)?;
    print(&benchaudit_interop::inspect::export_summary(
        &logs, &args.out,
    ))?;
    Ok(ExitCode::SUCCESS)
}
