//! `benchaudit score`: both scorers on a submission directory.

use std::fmt::Write;
use std::path::Path;
use std::process::ExitCode;

use benchaudit_comtrade::Submission;
use benchaudit_runs::files;
use benchaudit_scoring::Scores;
use serde_json::json;

use crate::UsageError;
use crate::cli::ScoreArgs;
use crate::commands::resolve_task;
use crate::output::print;

fn read_optional(dir: &Path, name: &str) -> Result<Option<Vec<u8>>, UsageError> {
    match files::read_bounded(&dir.join(name), files::limits::SUBMISSION) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(UsageError(e.to_string())),
    }
}

/// Reads a submission directory; a missing file is a missing file, an unreadable one an error.
pub fn read_submission(dir: &Path) -> Result<Submission, UsageError> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(UsageError(format!("{} is not a directory", dir.display()))),
        Err(e) => {
            return Err(UsageError(format!(
                "cannot read submission directory {}: {e}",
                dir.display()
            )));
        }
    }
    Ok(Submission::from_bytes(
        read_optional(dir, "data.jsonl")?,
        read_optional(dir, "metadata.json")?,
        read_optional(dir, "run.log")?,
    ))
}

/// Runs the subcommand.
pub fn run(args: &ScoreArgs) -> anyhow::Result<ExitCode> {
    let task = resolve_task(&args.task)?;
    let submission = read_submission(&args.dir)?;
    let s = Scores::compute(task, args.seed, &submission);
    if args.json {
        let value = json!({
            "task_id": task.task_id,
            "seed": args.seed,
            "f1": s.f1,
            "precision": s.precision,
            "recall": s.recall,
            "judge": {
                "score": s.judge(),
                "breakdown": s.judge_breakdown.shares(),
                "errors": s.judge_errors,
                "released_total": s.judge_total,
            },
        });
        print(&format!("{value}\n"))?;
    } else {
        let b = &s.judge_breakdown.shares();
        let mut out = String::new();
        writeln!(out, "{} seed {}", task.task_id, args.seed)?;
        writeln!(
            out,
            "  ground truth  F1 {:.3}  precision {:.3}  recall {:.3}  ({} true of {} lines; |G| = {})",
            s.f1, s.precision, s.recall, s.true_unique, s.submitted, task.total_rows
        )?;
        writeln!(
            out,
            "  legacy judge  {:.3} (0-1; the released judge's {:.1}/100)",
            s.judge(),
            s.judge_total
        )?;
        writeln!(
            out,
            "                correctness {:.3}  completeness {:.3}  robustness {:.3}  efficiency {:.3}  data_quality {:.3}  observability {:.3}",
            b.correctness,
            b.completeness,
            b.robustness,
            b.efficiency,
            b.data_quality,
            b.observability
        )?;
        for e in &s.judge_errors {
            writeln!(out, "                (released judge would raise: {e})")?;
        }
        print(&out)?;
    }
    Ok(ExitCode::SUCCESS)
}
