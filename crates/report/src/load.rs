//! Reading a run directory: its records and provenance.

use std::collections::BTreeSet;
use std::path::Path;

use benchaudit_agents::EpisodeRecord;
use benchaudit_runs::{Manifest, read_records};

use crate::error::{Error, Result, chain};
use crate::model::Source;

/// A run directory's records and provenance.
///
/// Exists so loading (IO, validation) is separate from computing (pure).
#[derive(Debug, Clone)]
pub struct Loaded {
    /// Every complete record of the ledger.
    pub records: Vec<EpisodeRecord>,
    /// Provenance.
    pub source: Source,
}

/// Reads a run directory: `episodes.jsonl` (a torn last line is skipped and noted) and, when
/// present, `manifest.json`.
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
    let (records, torn) = read_records(&episodes).map_err(|e| Error::Invalid(chain(&e)))?;
    if records.is_empty() {
        return Err(Error::Invalid(format!(
            "{} holds no complete episode record",
            episodes.display()
        )));
    }
    let mut seen = BTreeSet::new();
    for r in &records {
        if !seen.insert(&r.key) {
            return Err(Error::Invalid(format!(
                "{}: episode {} {} {} seed {} appears twice; the ledger is corrupt",
                episodes.display(),
                r.key.policy,
                r.key.level,
                r.key.task_id,
                r.key.seed
            )));
        }
    }
    let manifest = Manifest::read(dir)?;
    Ok(Loaded {
        records,
        source: Source {
            run_dir: dir.display().to_string(),
            episodes_file: episodes.display().to_string(),
            run_tool_version: manifest.as_ref().map(|m| m.version.clone()),
            registry_sha256: manifest.map(|m| m.registry_sha256),
            torn_last_line: torn.is_some(),
        },
    })
}
