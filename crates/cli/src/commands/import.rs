//! `benchaudit import --format inspect LOG... --out RUN_DIR`: Inspect logs (samples × epochs
//! with scores) as a run ledger, for `benchaudit report` (worst case, CVaR, Reliability@τ,
//! pass^k, bootstrap CIs, paired A/B with `report --compare`).

use std::path::PathBuf;
use std::process::ExitCode;

use benchaudit_interop::inspect::{ImportOptions, import_logs};
use clap::Args;

use crate::commands::export::InteropFormat;
use crate::output::print;

/// `benchaudit import`
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Input format.
    #[arg(long, value_enum)]
    pub format: InteropFormat,
    /// Inspect logs (`.eval` or `.json`).
    #[arg(required = true)]
    pub logs: Vec<PathBuf>,
    /// Run directory to write (resumed when it holds an import of the same logs).
    #[arg(long)]
    pub out: PathBuf,
    /// Scorer whose value becomes each episode's reward: NAME, or NAME.KEY for a dict value
    /// [default: the log's headline scorer].
    #[arg(long)]
    pub score: Option<String>,
}

/// Runs the subcommand.
pub fn run(args: &ImportArgs) -> anyhow::Result<ExitCode> {
    let InteropFormat::Inspect = args.format;
    let done = import_logs(
        &args.logs,
        &args.out,
        &ImportOptions {
            score: args.score.clone(),
        },
    )?;
    print(&done.summary())?;
    Ok(ExitCode::SUCCESS)
}
