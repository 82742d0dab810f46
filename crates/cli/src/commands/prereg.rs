//! `benchaudit prereg freeze EXPERIMENT.toml`: freezes a pre-registration by hash, and the
//! reading of a frozen file that `benchaudit ab --prereg` applies (SPEC §5).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::UsageError;
use crate::ledger::write_atomic;
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
    /// Validate an experiment spec and record its SHA-256 beside it (EXPERIMENT.toml.sha256).
    Freeze {
        /// The experiment spec (TOML).
        file: PathBuf,
    },
}

/// A pre-registered experiment (TOML). Every field is part of the frozen commitment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    /// Name of the experiment.
    pub name: String,
    /// The hypothesis in words.
    pub hypothesis: String,
    /// Predicted sign of Δ = constant − escalating: "positive" (escalation hurts) or "negative".
    pub predicted: Predicted,
    /// The design.
    pub design: Design,
    /// Who plays the model.
    pub agents: Agents,
}

/// The predicted side of the effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Predicted {
    /// Δ > 0.
    Positive,
    /// Δ < 0.
    Negative,
}

/// The frozen design; `ab` compares its own parameters with these field by field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Design {
    /// matched-mean, quota or degradation.
    pub kind: String,
    /// Substrate task.
    pub task: String,
    /// Scaffolding level.
    pub level: String,
    /// Seeds, as `--seeds` writes them.
    pub seeds: String,
    /// Outcome metric: coverage, f1 or judge.
    pub metric: String,
    /// Enforced quota, if any.
    #[serde(default)]
    pub quota: Option<u32>,
    /// Squeeze, if any.
    #[serde(default)]
    pub squeeze: Option<u32>,
}

/// The agents of a pre-registration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Agents {
    /// Rule policies.
    #[serde(default)]
    pub policies: Vec<String>,
    /// Models (provider:name).
    #[serde(default)]
    pub models: Vec<String>,
}

fn sidecar(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".sha256");
    PathBuf::from(name)
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn parse(file: &Path, bytes: &[u8]) -> Result<Experiment, UsageError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| UsageError(format!("{} is not UTF-8", file.display())))?;
    toml::from_str(text).map_err(|e| {
        UsageError(format!(
            "{} is not a valid experiment spec: {}",
            file.display(),
            e.message()
        ))
    })
}

/// Loads a frozen experiment, refusing a file whose bytes changed since `prereg freeze`.
pub fn load_frozen(file: &Path) -> Result<(Experiment, String), UsageError> {
    let bytes = std::fs::read(file)
        .map_err(|e| UsageError(format!("cannot read {}: {e}", file.display())))?;
    let frozen = std::fs::read_to_string(sidecar(file)).map_err(|_| {
        UsageError(format!(
            "{} is not frozen: run `benchaudit prereg freeze {}` before the experiment",
            file.display(),
            file.display()
        ))
    })?;
    let want = frozen.split_whitespace().next().unwrap_or("").to_string();
    let have = sha256_hex(&bytes);
    if want != have {
        return Err(UsageError(format!(
            "{} changed after it was frozen (frozen sha256 {want}, now {have}); a pre-registration cannot be edited",
            file.display()
        )));
    }
    Ok((parse(file, &bytes)?, have))
}

/// Runs the subcommand.
pub fn run(args: &PreregArgs) -> anyhow::Result<ExitCode> {
    match &args.action {
        PreregAction::Freeze { file } => {
            let bytes = std::fs::read(file)
                .map_err(|e| UsageError(format!("cannot read {}: {e}", file.display())))?;
            let experiment = parse(file, &bytes)?;
            let target = sidecar(file);
            if target.exists() {
                return Err(UsageError(format!(
                    "{} is already frozen ({})",
                    file.display(),
                    target.display()
                ))
                .into());
            }
            let hash = sha256_hex(&bytes);
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            write_atomic(&target, format!("{hash}  {name}\n").as_bytes())
                .context("writing the frozen hash")?;
            print(&format!(
                "froze {} ({}): sha256 {hash}\n",
                file.display(),
                experiment.name
            ))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
