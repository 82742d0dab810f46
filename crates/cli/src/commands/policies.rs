//! `benchaudit policies`: the rule policies and the one decision each makes differently.

use std::process::ExitCode;

use benchaudit_report::listing::{policies_json, policies_table};
use clap::Args;

use crate::output::{print, print_json};

/// `benchaudit policies`
#[derive(Debug, Args)]
pub struct PoliciesArgs {
    /// Print the list as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs the subcommand.
pub fn run(args: &PoliciesArgs) -> anyhow::Result<ExitCode> {
    if args.json {
        print_json(&policies_json())?;
    } else {
        print(&policies_table())?;
    }
    Ok(ExitCode::SUCCESS)
}
