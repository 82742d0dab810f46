//! The run ledger (SPEC §6): `manifest.json` (the complete configuration), an append-only
//! `episodes.jsonl` (one complete record per finished episode, written with one `write_all` and
//! synced), `transcripts/`, and a lock that keeps a second writer out. Re-opening a ledger
//! resumes it: finished episodes are known by key, a torn last line is discarded.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use benchaudit_agents::{EpisodeKey, EpisodeRecord, Transcript, sha256_hex};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};

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

impl Manifest {
    /// The manifest of a run of this tool (version, registry hash) with `config`.
    pub fn new(config: Value) -> Result<Manifest> {
        let registry = serde_json::to_string(benchaudit_comtrade::tasks())
            .map_err(Error::json("serialising the task registry"))?;
        Ok(Manifest {
            tool: "benchaudit".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            registry_sha256: sha256_hex(registry.as_bytes()),
            config,
        })
    }

    /// Reads `dir/manifest.json`, if there is one.
    pub fn read(dir: &Path) -> Result<Option<Manifest>> {
        let path = dir.join("manifest.json");
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(format!("reading {}", path.display()))(e)),
        };
        serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            Error::Invalid(format!(
                "{} is not a benchaudit manifest: {e}",
                path.display()
            ))
        })
    }
}

/// An open, locked ledger.
pub struct Ledger {
    /// The run directory.
    dir: PathBuf,
    /// `episodes.jsonl`, open for appending.
    episodes: File,
    /// Held for the ledger's lifetime: the OS releases it when the process ends, however.
    _lock: File,
    /// Keys already recorded.
    done: HashSet<EpisodeKey>,
    /// Lines discarded when opening (a torn last line).
    pub discarded: usize,
    /// Records read when opening.
    pub existing: Vec<EpisodeRecord>,
}

/// Reads every complete record of a ledger file. A torn *last* line is reported (its byte
/// offset) and skipped; an unreadable line elsewhere is corruption and an error.
pub fn read_records(path: &Path) -> Result<(Vec<EpisodeRecord>, Option<u64>)> {
    let mut text = String::new();
    match File::open(path) {
        Ok(mut f) => {
            f.read_to_string(&mut text)
                .map_err(Error::io(format!("reading {}", path.display())))?;
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((Vec::new(), None)),
        Err(e) => return Err(Error::io(format!("opening {}", path.display()))(e)),
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
            Err(e) => {
                return Err(Error::Corrupt(format!(
                    "{}: line {} is not an episode record ({e}); the ledger is corrupt",
                    path.display(),
                    records.len() + 1
                )));
            }
            Ok(_) => {
                return Err(Error::Corrupt(format!(
                    "{}: line {} is incomplete; the ledger is corrupt",
                    path.display(),
                    records.len() + 1
                )));
            }
        }
        offset += piece.len() as u64;
    }
    Ok((records, None))
}

impl Ledger {
    /// Opens (or creates) the run directory `dir` for writing under `manifest`.
    pub fn open(dir: &Path, manifest: &Manifest) -> Result<Ledger> {
        fs::create_dir_all(dir.join("transcripts"))
            .map_err(Error::io(format!("creating {}", dir.display())))?;
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(".lock"))
            .map_err(Error::io(format!("opening {}/.lock", dir.display())))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                return Err(Error::Invalid(format!(
                    "{} is locked by another benchaudit process writing to it; wait for it to finish or use another --out",
                    dir.display()
                )));
            }
            Err(fs::TryLockError::Error(e)) => {
                return Err(Error::io("locking the run directory")(e));
            }
        }
        match Manifest::read(dir)? {
            Some(old) if old.config != manifest.config => {
                return Err(Error::Invalid(format!(
                    "{} holds a run with a different configuration; resume it with the same command or choose another --out",
                    dir.display()
                )));
            }
            Some(_) => {}
            None => {
                let text = serde_json::to_string_pretty(manifest)
                    .map_err(Error::json("serialising the manifest"))?;
                write_atomic(&dir.join("manifest.json"), text.as_bytes())?;
            }
        }
        let path = dir.join("episodes.jsonl");
        let (existing, torn_at) = read_records(&path)?;
        let opening = Error::io(format!("opening {}", path.display()));
        let mut episodes = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(&path)
            .map_err(opening)?;
        let mut discarded = 0;
        if let Some(at) = torn_at {
            let truncating = |e: io::Error| {
                Error::io(format!(
                    "discarding the torn last line of {}",
                    path.display()
                ))(e)
            };
            episodes.set_len(at).map_err(truncating)?;
            episodes.seek(SeekFrom::End(0)).map_err(truncating)?;
            episodes.sync_data().map_err(truncating)?;
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
    pub fn append(&mut self, record: &EpisodeRecord, transcript: &Transcript) -> Result<()> {
        let name = transcript_name(&record.key);
        let text =
            serde_json::to_string(transcript).map_err(Error::json("serialising a transcript"))?;
        write_atomic(&self.dir.join("transcripts").join(name), text.as_bytes())?;
        let mut line =
            serde_json::to_string(record).map_err(Error::json("serialising a record"))?;
        line.push('\n');
        self.episodes
            .write_all(line.as_bytes())
            .map_err(Error::io("appending to episodes.jsonl"))?;
        self.episodes
            .sync_data()
            .map_err(Error::io("syncing episodes.jsonl"))?;
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
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(Error::io(format!("writing into {}", dir.display())))?;
    let writing = || Error::io(format!("writing {}", path.display()));
    tmp.write_all(bytes).map_err(writing())?;
    tmp.as_file().sync_all().map_err(writing())?;
    tmp.persist(path).map_err(|e| writing()(e.error))?;
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
