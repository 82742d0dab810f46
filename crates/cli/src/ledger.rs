//! The run ledger (SPEC §6): `manifest.json` (the complete configuration), an append-only
//! `episodes.jsonl` (one complete record per finished episode, written with one `write_all` and
//! synced), `transcripts/`, and a lock that keeps a second writer out. Re-opening a ledger
//! resumes it: finished episodes are known by key, a torn last line is discarded.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use benchaudit_agents::{EpisodeKey, EpisodeRecord, Transcript};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::UsageError;

/// Written once per run directory; a resume must present the same `config`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always "benchaudit".
    pub tool: String,
    /// Tool version that created the run.
    pub version: String,
    /// SHA-256 of the task registry (JSON), so a changed registry is detected.
    pub registry_sha256: String,
    /// The complete configuration of the run.
    pub config: Value,
}

/// An open, locked ledger.
pub struct Ledger {
    dir: PathBuf,
    episodes: File,
    _lock: File,
    done: HashSet<EpisodeKey>,
    /// Lines discarded when opening (a torn last line).
    pub discarded: usize,
    /// Records read when opening.
    pub existing: Vec<EpisodeRecord>,
}

/// Reads every complete record of a ledger file. A torn *last* line is reported (its byte
/// offset) and skipped; an unreadable line elsewhere is corruption and an error.
pub fn read_records(path: &Path) -> anyhow::Result<(Vec<EpisodeRecord>, Option<u64>)> {
    let mut text = String::new();
    match File::open(path) {
        Ok(mut f) => {
            f.read_to_string(&mut text)
                .with_context(|| format!("reading {}", path.display()))?;
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), None)),
        Err(e) => return Err(e).with_context(|| format!("opening {}", path.display())),
    }
    let mut records = Vec::new();
    let mut offset = 0u64;
    let mut pieces = text.split_inclusive('\n').peekable();
    while let Some(piece) = pieces.next() {
        let is_last = pieces.peek().is_none();
        let complete = piece.ends_with('\n');
        match serde_json::from_str::<EpisodeRecord>(piece.trim_end()) {
            Ok(r) if complete => records.push(r),
            _ if is_last => return Ok((records, Some(offset))),
            Err(e) => bail!(
                "{}: line {} is not an episode record ({e}); the ledger is corrupt",
                path.display(),
                records.len() + 1
            ),
            Ok(_) => bail!(
                "{}: line {} is incomplete; the ledger is corrupt",
                path.display(),
                records.len() + 1
            ),
        }
        offset += piece.len() as u64;
    }
    Ok((records, None))
}

impl Ledger {
    /// Opens (or creates) the run directory `dir` for writing under `manifest`.
    pub fn open(dir: &Path, manifest: &Manifest) -> anyhow::Result<Ledger> {
        fs::create_dir_all(dir.join("transcripts"))
            .with_context(|| format!("creating {}", dir.display()))?;
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(".lock"))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                return Err(UsageError(format!(
                    "{} is locked by another benchaudit process writing to it; wait for it to finish or use another --out",
                    dir.display()
                ))
                .into());
            }
            Err(fs::TryLockError::Error(e)) => return Err(e).context("locking the run directory"),
        }
        let manifest_path = dir.join("manifest.json");
        if manifest_path.exists() {
            let old: Manifest =
                serde_json::from_slice(&fs::read(&manifest_path)?).with_context(|| {
                    format!("{} is not a benchaudit manifest", manifest_path.display())
                })?;
            if old.config != manifest.config {
                return Err(UsageError(format!(
                    "{} holds a run with a different configuration; resume it with the same command or choose another --out",
                    dir.display()
                ))
                .into());
            }
        } else {
            write_atomic(
                &manifest_path,
                serde_json::to_string_pretty(manifest)?.as_bytes(),
            )?;
        }
        let path = dir.join("episodes.jsonl");
        let (existing, torn_at) = read_records(&path)?;
        let mut episodes = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(&path)?;
        let mut discarded = 0;
        if let Some(at) = torn_at {
            episodes.set_len(at)?;
            episodes.seek(SeekFrom::End(0))?;
            episodes.sync_data()?;
            discarded = 1;
        }
        let done = existing.iter().map(|r| r.key.clone()).collect();
        Ok(Ledger {
            dir: dir.to_path_buf(),
            episodes,
            _lock: lock,
            done,
            discarded,
            existing,
        })
    }

    /// Whether an episode is already in the ledger.
    pub fn is_done(&self, key: &EpisodeKey) -> bool {
        self.done.contains(key)
    }

    /// Appends one record (one write, then sync) and its transcript.
    pub fn append(
        &mut self,
        record: &EpisodeRecord,
        transcript: &Transcript,
    ) -> anyhow::Result<()> {
        let name = transcript_name(&record.key);
        write_atomic(
            &self.dir.join("transcripts").join(name),
            serde_json::to_string(transcript)?.as_bytes(),
        )?;
        let mut line = serde_json::to_string(record)?;
        line.push('\n');
        self.episodes
            .write_all(line.as_bytes())
            .context("appending to episodes.jsonl")?;
        self.episodes
            .sync_data()
            .context("syncing episodes.jsonl")?;
        self.done.insert(record.key.clone());
        Ok(())
    }
}

/// The transcript file name of an episode (safe on every filesystem).
pub fn transcript_name(key: &EpisodeKey) -> String {
    let policy: String = key
        .policy
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let arm = key
        .arm
        .as_deref()
        .map(|a| format!("__{a}"))
        .unwrap_or_default();
    format!(
        "{policy}__{}__{}__{}{arm}__{}.json",
        key.level, key.task_id, key.seed, key.options_hash
    )
}

/// Writes a file atomically: temp file in the same directory, sync, rename, sync the directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("writing into {}", dir.display()))?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("writing {}", path.display()))?;
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
