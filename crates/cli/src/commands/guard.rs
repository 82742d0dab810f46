//! `benchaudit guard FILE --against audit.json`: rejects any figure in prose that the JSON does
//! not contain (after normalising formatting).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use benchaudit_audit::guard::{self, GuardReport};
use benchaudit_runs::files;
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

/// Checks a file; HTML is checked on its rendered text.
pub fn check_file(file: &Path, against: &serde_json::Value) -> Result<GuardReport, UsageError> {
    let text = files::read_text_bounded(file, files::limits::GUARD)
        .map_err(|e| UsageError(e.to_string()))?;
    let html = file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm"));
    Ok(if html {
        guard::check_html(&text, against)
    } else {
        guard::check(&text, against)
    })
}

/// Runs the subcommand: exit 0 when every number is accounted for, 1 otherwise.
pub fn run(args: &GuardArgs) -> anyhow::Result<ExitCode> {
    let bytes = files::read_bounded(&args.against, files::limits::GUARD)
        .map_err(|e| UsageError(e.to_string()))?;
    let json: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| UsageError(format!("{} is not JSON: {e}", args.against.display())))?;
    let report = check_file(&args.file, &json)?;
    let mut out = String::new();
    for v in &report.violations {
        let why = match &v.path {
            Some(path) => format!("is not the value at its tagged path {path} of"),
            None => "is not in".into(),
        };
        out.push_str(&format!(
            "{}:{}:{}: {} {why} {}: {}\n",
            args.file.display(),
            v.number.line,
            v.number.column,
            v.number.text,
            args.against.display(),
            v.context
        ));
    }
    out.push_str(&format!(
        "{}: {} numbers checked ({} at their tagged path), {} not accounted for by the JSON\n",
        if report.passed() { "pass" } else { "FAIL" },
        report.checked,
        report.tagged,
        report.violations.len()
    ));
    print(&out)?;
    Ok(if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
