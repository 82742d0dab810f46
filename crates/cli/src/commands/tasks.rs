//! `benchaudit tasks`: the registry as a table, JSON, or the generator card.

use std::fmt::Write;
use std::process::ExitCode;

use benchaudit_comtrade::{card, tasks};

use crate::cli::TasksArgs;
use crate::output::print;

/// Runs the subcommand.
pub fn run(args: &TasksArgs) -> anyhow::Result<ExitCode> {
    if args.card {
        print(&card::generator_card())?;
    } else if args.json {
        let mut text = serde_json::to_string_pretty(tasks())?;
        text.push('\n');
        print(&text)?;
    } else {
        let mut out = String::new();
        writeln!(
            out,
            "{:<24} {:>5} {:>6} {:>6} {:>5}  {:<7} fault",
            "task", "rows", "pages", "budget", "qps", "paging"
        )?;
        for t in tasks() {
            writeln!(
                out,
                "{:<24} {:>5} {:>6} {:>6} {:>5}  {:<7} {}",
                t.task_id,
                t.total_rows,
                t.total_pages(),
                t.max_requests,
                t.rate_limit_qps,
                format!("{:?}", t.paging_mode).to_lowercase(),
                t.fault.mode()
            )?;
        }
        print(&out)?;
    }
    Ok(ExitCode::SUCCESS)
}
