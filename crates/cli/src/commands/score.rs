//! `benchaudit score`: both scorers on a submission directory.

use std::process::ExitCode;

use benchaudit_report::listing::{score_json, score_text};
use benchaudit_runs::files::read_submission_dir;
use benchaudit_scoring::Scores;

use crate::UsageError;
use crate::cli::ScoreArgs;
use crate::output::print;

/// Runs the subcommand.
pub fn run(args: &ScoreArgs) -> anyhow::Result<ExitCode> {
    let submission = read_submission_dir(&args.dir).map_err(|e| UsageError(e.to_string()))?;
    let s = Scores::compute(args.task, args.seed, &submission);
    if args.json {
        print(&format!("{}\n", score_json(args.task, args.seed, &s)))?;
    } else {
        print(&score_text(args.task, args.seed, &s))?;
    }
    Ok(ExitCode::SUCCESS)
}
