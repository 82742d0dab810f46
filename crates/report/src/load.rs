//! Reading a run directory: its records and provenance.

use std::collections::BTreeMap;
use std::path::Path;

use benchaudit_agents::EpisodeRecord;
use benchaudit_runs::{ArmSetting, Manifest, arm_settings, read_ledger};

use crate::error::{Error, Result, chain};
use crate::model::Source;

/// A run directory's records and provenance.
///
/// Exists so loading (IO, validation) is separate from computing (pure).
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The effective record of every episode (a retried `infra_error` attempt is replaced by
    /// its retry: `benchaudit_runs::ledger`'s rules).
    pub records: Vec<EpisodeRecord>,
    /// Provenance.
    pub source: Source,
    /// The quota setting of each A/B arm by options hash, when the run is an A/B design
    /// `benchaudit ab` wrote ([`benchaudit_runs::arm_settings`] of its manifest); empty
    /// otherwise.
    pub arm_settings: BTreeMap<String, ArmSetting>,
}

/// Reads a run directory: `episodes.jsonl` under the ledger's rules ([`read_ledger`]: a torn
/// last line is skipped and noted, a retried attempt superseded, any other repeated key or
/// unreadable complete line refused) and, when present, `manifest.json`.
///
/// Exists as the one place that decides what a readable run is.
///
/// # Errors
/// [`Error::Invalid`] when the directory, the ledger or the manifest is missing or unreadable,
/// the ledger is empty, or an episode key appears twice.
pub fn load_run(dir: &Path) -> Result<Loaded> {
    if !dir.is_dir() {
        return Err(Error::Invalid(format!(
            "{} is not a directory (give a run directory written by `benchaudit run`)",
            dir.display()
        )));
    }
    let episodes = dir.join("episodes.jsonl");
    if !episodes.is_file() {
        return Err(Error::Invalid(format!(
            "{} has no episodes.jsonl: not a run directory",
            dir.display()
        )));
    }
    let contents = read_ledger(&episodes).map_err(|e| Error::Invalid(chain(&e)))?;
    let (records, torn) = (contents.records, contents.torn_at);
    if records.is_empty() {
        return Err(Error::Invalid(format!(
            "{} holds no complete episode record",
            episodes.display()
        )));
    }
    let manifest = Manifest::read(dir)?;
    let recorded = records.len();
    let arm_settings = manifest
        .as_ref()
        .and_then(|m| arm_settings(&m.config))
        .map(|v| v.into_iter().collect())
        .unwrap_or_default();
    Ok(Loaded {
        records,
        arm_settings,
        source: Source {
            planned: manifest.as_ref().and_then(|m| m.planned),
            recorded,
            being_written: benchaudit_runs::ledger::is_being_written(dir),
            run_dir: dir.display().to_string(),
            episodes_file: episodes.display().to_string(),
            run_tool_version: manifest.as_ref().map(|m| m.version.clone()),
            registry_sha256: manifest.map(|m| m.registry_sha256),
            torn_last_line: torn.is_some(),
        },
    })
}
