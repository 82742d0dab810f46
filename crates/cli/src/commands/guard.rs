//! `benchaudit guard FILE --against audit.json`: rejects any figure in prose that the JSON does
//! not contain (after normalising formatting).

use std::path::PathBuf;
use std::process::ExitCode;

use benchaudit_audit::guard::check_files;
use clap::Args;

use crate::UsageError;
use crate::output::print;

/// `benchaudit guard`
#[derive(Debug, Args)]
pub struct GuardArgs {
    /// Prose to check (Markdown, text, or HTML by extension).
    pub file: PathBuf,
    /// The JSON every number must come from.
    #[arg(long)]
    pub against: PathBuf,
}

/// Runs the subcommand: exit 0 when every number is accounted for, 1 otherwise.
pub fn run(args: &GuardArgs) -> anyhow::Result<ExitCode> {
    let report = check_files(&args.file, &args.against).map_err(|e| UsageError(e.to_string()))?;
    let text = benchaudit_report::listing::guard_text(&report, &args.file, &args.against);
    print(&text)?;
    Ok(if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
