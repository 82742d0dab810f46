//! `benchaudit prereg freeze EXPERIMENT.toml`: freezes a pre-registration by hash (the format
//! and `ab --prereg` are in `benchaudit_runs::prereg`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::output::print;

/// `benchaudit prereg`
#[derive(Debug, Args)]
pub struct PreregArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: PreregAction,
}

/// Pre-registration actions.
#[derive(Debug, Subcommand)]
pub enum PreregAction {
    /// Validate an experiment spec, record its SHA-256 beside it (EXPERIMENT.toml.sha256) and
    /// print every value it freezes, defaults included (format: docs/experiments.md).
    Freeze {
        /// The experiment spec (TOML).
        file: PathBuf,
    },
}

/// Runs the subcommand.
pub fn run(args: &PreregArgs) -> anyhow::Result<ExitCode> {
    match &args.action {
        PreregAction::Freeze { file } => {
            let frozen = benchaudit_runs::prereg::freeze(file)?;
            print(&format!(
                "froze {} ({}): sha256 {}\n{}",
                file.display(),
                frozen.experiment.name,
                frozen.sha256,
                benchaudit_runs::prereg::describe(&frozen.experiment)
            ))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
