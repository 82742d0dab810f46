//! `benchaudit tasks`: the registry as a table, JSON, or the generator card.

use std::process::ExitCode;

use benchaudit_comtrade::{card, tasks};

use crate::cli::TasksArgs;
use crate::output::{print, print_json};

/// Runs the subcommand.
pub fn run(args: &TasksArgs) -> anyhow::Result<ExitCode> {
    if args.card {
        print(&card::generator_card())?;
    } else if args.json {
        print_json(&tasks())?;
    } else {
        print(&benchaudit_report::listing::tasks_table())?;
    }
    Ok(ExitCode::SUCCESS)
}
