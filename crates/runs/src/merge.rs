//! Merging the run directories of a plan's shards into one run directory (issue 19), with the
//! guarantees of one run: the shards must come from the same plan, tool version, task registry
//! and configuration; each shard once; every shard complete. The merged directory is an
//! ordinary run directory: `report`, `export` and a resume read it as if the run had not been
//! sharded.
//!
//! **What is checked, in order.** (1) Every directory is a shard (its manifest records one).
//! (2) All agree with the first on `tool`, `version`, `registry_sha256`, `config`,
//! `shard.count`, `shard.plan_sha256` and `shard.plan_episodes` ([`MergeError::Mismatch`] names
//! the field and both values). (3) No shard is given twice ([`MergeError::Overlap`]). (4) Every
//! shard 0..N is present, not locked by a running writer, and complete: no torn last line, no
//! `infra_error` record, and exactly its recorded episodes (the SHA-256 of its keys); every
//! shard that is not is reported with the command that completes it ([`MergeError::Gaps`]);
//! every record agrees with itself ([`EpisodeRecord::inconsistency`]: the key hash cannot see
//! an edited score). (5) No episode is in two shards, and the merged episodes hash to the plan hash: they are the
//! plan, exactly. Nothing is written before all of this holds.
//!
//! **What is written** into `--out` (which must be absent or empty): `transcripts/` (each
//! record's transcript and its failed attempts' transcripts, copied), `episodes.jsonl` in the
//! canonical order ([`canonical_order`]: sorted by episode key; a key's failed attempts before
//! its effective record, in their recorded order), and last `manifest.json`: the shards' tool,
//! version, registry and configuration, no `shard`, and `merged` ([`MergedFrom`]). A merge that
//! stops midway leaves no manifest, so the directory cannot be taken for a finished run.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

use benchaudit_agents::{EpisodeKey, EpisodeRecord, Outcome};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::ledger::{
    Manifest, Transcripts, attempt_name, canonical, describe, differences, read_ledger,
    transcript_name, write_atomic,
};
use crate::shard::{Shard, ShardManifest, keys_sha256, plan_sha256};

/// What a merged run's `manifest.json` records about its making (the `merged` object).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergedFrom {
    /// The plan hash every shard recorded and the merged episodes hash to.
    pub plan_sha256: String,
    /// How many shards were merged.
    pub shards: u32,
    /// The shard directories, by shard index.
    pub sources: Vec<String>,
}

/// Why a shard is not ready to merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GapState {
    /// No directory given holds this shard.
    Missing,
    /// Another process holds the shard's lock: it is still being written.
    Running,
    /// The shard's ledger lacks episodes.
    Incomplete {
        /// Finished episodes recorded.
        recorded: usize,
        /// Episodes the shard holds.
        expected: usize,
        /// Of the episodes not finished, those whose last record is `infra_error`.
        infra_errors: usize,
        /// A torn last line (an interrupted write) is in the ledger.
        torn_line: bool,
    },
}

/// A shard that keeps a merge from happening, and the command that completes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    /// Which shard.
    pub shard: Shard,
    /// Its directory, when one was given.
    pub dir: Option<PathBuf>,
    /// What is wrong.
    pub state: GapState,
    /// The shell line that runs (or resumes) it: `cd WORKDIR && benchaudit … --shard I/N …`.
    pub command: String,
}

impl fmt::Display for Gap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self
            .dir
            .as_ref()
            .map(|d| format!(" ({})", d.display()))
            .unwrap_or_default();
        match &self.state {
            GapState::Missing => write!(f, "shard {}: missing; run it with:", self.shard)?,
            GapState::Running => write!(
                f,
                "shard {}{at}: still running (another process holds its lock); wait for it, or if it died, resume it with:",
                self.shard
            )?,
            GapState::Incomplete {
                recorded,
                expected,
                infra_errors,
                torn_line,
            } => {
                write!(
                    f,
                    "shard {}{at}: incomplete: {recorded} of {expected} episodes recorded",
                    self.shard
                )?;
                if *infra_errors > 0 {
                    write!(f, ", {infra_errors} ended in infra_error")?;
                }
                if *torn_line {
                    write!(f, ", a torn last line")?;
                }
                write!(f, "; complete it with:")?;
            }
        }
        write!(f, "\n    {}", self.command)
    }
}

/// Why shards could not be merged. Nothing is written when any of these is returned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// No directory was given.
    #[error("merge needs the shard directories of one plan")]
    NoShards,
    /// A directory is not a shard of a plan.
    #[error(
        "{} is not a shard (its manifest records no shard: it was not run with --shard I/N); merge takes the directories of a plan's shards",
        dir.display()
    )]
    NotAShard {
        /// The directory.
        dir: PathBuf,
    },
    /// Two shards disagree on a field that must be equal.
    #[error(
        "cannot merge {}: {field} differs from {}'s: {} has {}, {} has {}",
        other.display(), first.display(), first.display(), first_value, other.display(), other_value
    )]
    Mismatch {
        /// The field (`version`, `registry_sha256`, `config.seeds`, `shard.count`, `shard.plan_sha256`, …).
        field: String,
        /// The first directory.
        first: PathBuf,
        /// Its value (`absent` when it has none).
        first_value: String,
        /// The directory that differs.
        other: PathBuf,
        /// Its value.
        other_value: String,
    },
    /// The same shard is given twice.
    #[error(
        "shard {shard} is given twice: {} and {}; give each shard once",
        first.display(), other.display()
    )]
    Overlap {
        /// The shard.
        shard: Shard,
        /// The first directory holding it.
        first: PathBuf,
        /// The second.
        other: PathBuf,
    },
    /// One episode is recorded by two shards.
    #[error(
        "episode {episode} is recorded by two shards, {} and {}: the shards overlap",
        first.display(), other.display()
    )]
    OverlappingEpisode {
        /// The episode.
        episode: String,
        /// The first shard's directory.
        first: PathBuf,
        /// The second's.
        other: PathBuf,
    },
    /// Shards are missing or incomplete.
    #[error("{}", gaps_message(*count, gaps))]
    Gaps {
        /// How many shards the plan has.
        count: u32,
        /// Each shard not ready, by index.
        gaps: Vec<Gap>,
    },
    /// The output directory already holds something.
    #[error(
        "{} is not empty: merge writes a new run directory; choose another --out",
        out.display()
    )]
    OutNotEmpty {
        /// The directory.
        out: PathBuf,
    },
}

fn gaps_message(count: u32, gaps: &[Gap]) -> String {
    let verb = if gaps.len() == 1 { "is" } else { "are" };
    let mut s = format!(
        "cannot merge: {} of the {count} shards {verb} missing or incomplete (nothing was written):",
        gaps.len()
    );
    for g in gaps {
        s.push_str(&format!("\n  {g}"));
    }
    s.push_str("\nthen run the same merge again");
    s
}

/// What [`merge`] wrote.
#[derive(Debug, Clone)]
pub struct Merged {
    /// The effective record of every episode, in canonical order.
    pub records: Vec<EpisodeRecord>,
    /// Shards merged.
    pub shards: u32,
    /// The plan hash.
    pub plan_sha256: String,
    /// Transcript files copied.
    pub transcripts: usize,
}

/// Sorts records into the canonical order of a merged ledger: by episode key (policy, level,
/// task, seed, arm, options hash); records of one key keep their order (failed attempts first).
/// A single-process ledger sorted this way equals the merged one, timing aside.
pub fn canonical_order(records: &mut [EpisodeRecord]) {
    records.sort_by(|a, b| a.key.cmp(&b.key));
}

/// One shard directory, read.
struct Source {
    dir: PathBuf,
    manifest: Manifest,
    shard: ShardManifest,
    /// Held while merging, so no writer starts meanwhile.
    _lock: Option<File>,
    running: bool,
}

fn value_text(v: Option<String>) -> String {
    v.unwrap_or_else(|| "absent".into())
}

fn mismatch(field: &str, a: &Source, av: String, b: &Source, bv: String) -> MergeError {
    MergeError::Mismatch {
        field: field.into(),
        first: a.dir.clone(),
        first_value: av,
        other: b.dir.clone(),
        other_value: bv,
    }
}

/// The first field where `b` may not be merged with `a`.
fn compare(a: &Source, b: &Source) -> Result<Option<MergeError>> {
    let (ma, mb) = (&a.manifest, &b.manifest);
    let plain = [
        ("tool", &ma.tool, &mb.tool),
        ("version", &ma.version, &mb.version),
        ("registry_sha256", &ma.registry_sha256, &mb.registry_sha256),
    ];
    for (field, x, y) in plain {
        if x != y {
            return Ok(Some(mismatch(field, a, x.clone(), b, y.clone())));
        }
    }
    let mut diffs = Vec::new();
    differences(
        &canonical(&ma.config)?,
        &canonical(&mb.config)?,
        "config",
        1,
        &mut diffs,
    );
    if let Some((field, x, y)) = diffs.pop() {
        return Ok(Some(mismatch(&field, a, value_text(x), b, value_text(y))));
    }
    let (sa, sb) = (&a.shard, &b.shard);
    if sa.count != sb.count {
        let (x, y) = (sa.count.to_string(), sb.count.to_string());
        return Ok(Some(mismatch("shard.count", a, x, b, y)));
    }
    if sa.plan_sha256 != sb.plan_sha256 {
        let (x, y) = (sa.plan_sha256.clone(), sb.plan_sha256.clone());
        return Ok(Some(mismatch("shard.plan_sha256", a, x, b, y)));
    }
    if sa.plan_episodes != sb.plan_episodes {
        let (x, y) = (sa.plan_episodes.to_string(), sb.plan_episodes.to_string());
        return Ok(Some(mismatch("shard.plan_episodes", a, x, b, y)));
    }
    Ok(None)
}

/// Takes `dir/.lock` if it exists; `(None, true)` when another process holds it. Where the lock
/// cannot be taken at all (a read-only mount, a filesystem without locks) the shard is read
/// unlocked: its completeness is still checked record by record.
fn hold(dir: &Path) -> Result<(Option<File>, bool)> {
    let path = dir.join(".lock");
    let opened = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .or_else(|_| File::open(&path));
    let file = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((None, false)),
        Err(e) => return Err(Error::io(format!("opening {}", path.display()))(e)),
    };
    match file.try_lock() {
        Ok(()) => Ok((Some(file), false)),
        Err(fs::TryLockError::WouldBlock) => Ok((None, true)),
        Err(fs::TryLockError::Error(_)) => Ok((None, false)),
    }
}

fn read_source(dir: &Path) -> Result<Source> {
    let manifest = Manifest::read(dir)?.ok_or_else(|| {
        Error::Invalid(format!(
            "{} holds no manifest.json: it is not a run directory",
            dir.display()
        ))
    })?;
    let shard = manifest
        .shard
        .clone()
        .ok_or_else(|| MergeError::NotAShard {
            dir: dir.to_path_buf(),
        })?;
    let (lock, running) = hold(dir)?;
    Ok(Source {
        dir: dir.to_path_buf(),
        manifest,
        shard,
        _lock: lock,
        running,
    })
}

fn out_is_empty(out: &Path) -> Result<bool> {
    match fs::read_dir(out) {
        Ok(mut entries) => Ok(entries.next().is_none()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => Ok(false),
        Err(e) => Err(Error::io(format!("reading {}", out.display()))(e)),
    }
}

/// Merges the shard directories `dirs` (any order) into the new run directory `out`, under
/// the rules of the module documentation.
///
/// # Errors
/// [`Error::Merge`] for shards that cannot be merged (naming the field, the shard or the
/// episode; [`MergeError::Gaps`] lists every missing or incomplete shard with its command);
/// [`Error::Invalid`] for a directory that is not a run; [`Error::Corrupt`] for a damaged
/// ledger or shards whose episodes are not their plan's; IO errors.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<Merged> {
    if dirs.is_empty() {
        return Err(MergeError::NoShards.into());
    }
    if !out_is_empty(out)? {
        return Err(MergeError::OutNotEmpty {
            out: out.to_path_buf(),
        }
        .into());
    }
    let sources = dirs
        .iter()
        .map(|d| read_source(d))
        .collect::<Result<Vec<_>>>()?;
    let first = &sources[0];
    for other in &sources[1..] {
        if let Some(e) = compare(first, other)? {
            return Err(e.into());
        }
    }
    let count = first.shard.count;
    let mut by_index: BTreeMap<u32, &Source> = BTreeMap::new();
    for s in &sources {
        if let Some(earlier) = by_index.insert(s.shard.index, s) {
            return Err(MergeError::Overlap {
                shard: s.shard.shard(),
                first: earlier.dir.clone(),
                other: s.dir.clone(),
            }
            .into());
        }
    }

    // Read every shard's ledger; collect the gaps.
    let mut gaps = Vec::new();
    let mut ledgers = Vec::with_capacity(sources.len());
    for index in 0..count {
        let shard = Shard { index, count };
        let Some(s) = by_index.get(&index) else {
            gaps.push(Gap {
                shard,
                dir: None,
                state: GapState::Missing,
                command: first.shard.sibling_line(index),
            });
            continue;
        };
        let file = s.dir.join("episodes.jsonl");
        let contents = read_ledger(&file)?;
        let finished: Vec<&EpisodeRecord> = contents
            .records
            .iter()
            .filter(|r| r.outcome != Outcome::InfraError)
            .collect();
        let infra_errors = contents.records.len() - finished.len();
        let state = if s.running {
            Some(GapState::Running)
        } else if contents.torn_at.is_some()
            || infra_errors > 0
            || finished.len() < s.shard.episodes
        {
            Some(GapState::Incomplete {
                recorded: finished.len(),
                expected: s.shard.episodes,
                infra_errors,
                torn_line: contents.torn_at.is_some(),
            })
        } else {
            None
        };
        if let Some(state) = state {
            gaps.push(Gap {
                shard,
                dir: Some(s.dir.clone()),
                state,
                command: s.shard.resume_line(),
            });
            continue;
        }
        // The keys are hashed below; each record must also agree with itself (a reward that
        // contradicts its own F1 is an edited record, whatever its key).
        if let Some((r, why)) = contents
            .records
            .iter()
            .chain(&contents.superseded)
            .find_map(|r| r.inconsistency().map(|why| (r, why)))
        {
            return Err(Error::Corrupt(format!(
                "{}: the record of {} contradicts itself: {why}; it was edited or damaged: run shard {} again into an empty directory",
                file.display(),
                describe(&r.key),
                shard
            )));
        }
        let held = keys_sha256(finished.iter().map(|r| &r.key))?;
        if finished.len() != s.shard.episodes || held != s.shard.episodes_sha256 {
            return Err(Error::Corrupt(format!(
                "{}: shard {} holds {} episodes that are not the {} its manifest records (episodes_sha256 {}, recorded {}): it was edited, or written by another plan; run the shard again into an empty directory",
                file.display(),
                shard,
                finished.len(),
                s.shard.episodes,
                held,
                s.shard.episodes_sha256
            )));
        }
        ledgers.push((*s, contents));
    }
    if !gaps.is_empty() {
        return Err(MergeError::Gaps { count, gaps }.into());
    }

    // One ledger: no episode twice, and exactly the plan.
    let mut owner: BTreeMap<&EpisodeKey, &Path> = BTreeMap::new();
    for (s, contents) in &ledgers {
        for r in &contents.records {
            if let Some(earlier) = owner.insert(&r.key, &s.dir) {
                return Err(MergeError::OverlappingEpisode {
                    episode: describe(&r.key),
                    first: earlier.to_path_buf(),
                    other: s.dir.clone(),
                }
                .into());
            }
        }
    }
    let plan_hash = plan_sha256(&first.manifest.config, owner.keys().copied())?;
    if owner.len() != first.shard.plan_episodes || plan_hash != first.shard.plan_sha256 {
        return Err(Error::Corrupt(format!(
            "the {count} shards hold {} episodes hashing to plan {plan_hash}, but their plan has {} episodes and hash {}: they are not this plan's shards",
            owner.len(),
            first.shard.plan_episodes,
            first.shard.plan_sha256
        )));
    }

    // Write: transcripts, then the ledger, then the manifest.
    let transcripts = out.join("transcripts");
    fs::create_dir_all(&transcripts)
        .map_err(Error::io(format!("creating {}", transcripts.display())))?;
    let mut copied = 0;
    let mut lines: Vec<EpisodeRecord> = Vec::new();
    // A plan that keeps no transcripts has none to copy.
    let keep = Transcripts::of(&first.manifest.config) == Transcripts::Keep;
    for (s, contents) in &ledgers {
        let from = s.dir.join("transcripts");
        for r in contents.records.iter().filter(|_| keep) {
            let name = stored_name(&from, transcript_name(&r.key));
            copy(&from.join(&name), &transcripts.join(&name), true)?;
            copied += 1;
            let attempts = contents.attempts.get(&r.key).copied().unwrap_or(1);
            for n in 1..attempts {
                let name = stored_name(&from, attempt_name(&r.key, n));
                if copy(&from.join(&name), &transcripts.join(&name), false)? {
                    copied += 1;
                }
            }
        }
        lines.extend(contents.superseded.iter().cloned());
        lines.extend(contents.records.iter().cloned());
    }
    canonical_order(&mut lines);
    let mut text = String::new();
    for r in &lines {
        text.push_str(&serde_json::to_string(r).map_err(Error::json("serialising a record"))?);
        text.push('\n');
    }
    let episodes = out.join("episodes.jsonl");
    write_atomic(&episodes, text.as_bytes())?;
    let merged = Manifest {
        shard: None,
        // The whole plan: what the shards planned together.
        planned: by_index.values().map(|s| s.manifest.planned).sum(),
        merged: Some(MergedFrom {
            plan_sha256: plan_hash.clone(),
            shards: count,
            sources: by_index
                .values()
                .map(|s| {
                    std::path::absolute(&s.dir)
                        .unwrap_or_else(|_| s.dir.clone())
                        .display()
                        .to_string()
                })
                .collect(),
        }),
        ..first.manifest.clone()
    };
    merged.write(out)?;
    // What every reader will see: read back under the ledger's rules.
    let written = read_ledger(&episodes)?;
    Ok(Merged {
        records: written.records,
        shards: count,
        plan_sha256: plan_hash,
        transcripts: copied,
    })
}

/// The name a transcript has in the folder `from`: `name` (compressed, `*.json.zst`), or the
/// plain `*.json` a shard recorded before transcripts were compressed holds instead. It is
/// copied under that name; [`crate::ledger::read_transcript`] reads either.
fn stored_name(from: &Path, name: String) -> String {
    match name.strip_suffix(".zst") {
        Some(plain) if !from.join(&name).exists() && from.join(plain).exists() => plain.to_string(),
        _ => name,
    }
}

/// Copies `from` to `to`; a missing `from` is an error when `required`, else `Ok(false)`.
fn copy(from: &Path, to: &Path, required: bool) -> Result<bool> {
    match fs::copy(from, to) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => Ok(false),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::Corrupt(format!(
            "{} is missing: the shard's ledger records the episode, so its transcript should be there ({e})",
            from.display()
        ))),
        Err(e) => Err(Error::io(format!(
            "copying {} to {}",
            from.display(),
            to.display()
        ))(e)),
    }
}
