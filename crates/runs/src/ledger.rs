//! The run ledger (SPEC §6): `manifest.json` (the complete configuration, the tool version and
//! the task registry's hash), an append-only `episodes.jsonl` (one complete record per line,
//! written with one `write_all` and synced), `transcripts/`, and a lock that keeps a second
//! writer out. Re-opening a ledger resumes it.
//!
//! The rules every reader applies, through [`read_ledger`]:
//!
//! * **Torn line.** Only a final line without its newline is torn (a crash mid-write, possibly
//!   inside a UTF-8 character: the file is read as bytes). A resume cuts it off and runs that
//!   episode again; `report` skips it and says so.
//! * **Corruption.** A complete, newline-terminated line that is not an episode record is
//!   corruption: an error naming the file and the line. Nothing is truncated or rewritten.
//!   So is a line over [`LINE_LIMIT`], and a record holding a value no benchaudit scorer
//!   writes ([`check_record`]: an F1 of -5, a judge total of 1e300).
//! * **Attempts.** An `infra_error` record is a failed attempt, not a finished episode: a resume
//!   runs the episode again and appends a new record with the same key. A key may therefore
//!   repeat, but only while every earlier record of it is `infra_error`; the last record is the
//!   effective one. Any other repeated key is corruption.
//! * **Transcripts.** `transcripts/<name>.json` ([`transcript_name`]) belongs to the key's
//!   effective (last) record. When an attempt is retried, the failed attempt's transcript is
//!   kept as `transcripts/<name>.attempt-<n>.json`, `n` being the attempt's place among the
//!   key's records (1 for the first record).
//! * **Resume.** A resume must present the same configuration, compared exactly (floats
//!   included; serde_json is built with `float_roundtrip`), and be made by the same tool
//!   version on the same task registry; the refusal names the field that differs. An
//!   `episodes.jsonl` with records but no manifest is refused, never adopted.
//!
//! Why one long file: every rule above (torn lines, corruption, attempts, transcripts, resume)
//! is enforced here and nowhere else, so a reader of the ledger and its writer cannot disagree.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use benchaudit_agents::{EpisodeKey, EpisodeRecord, Outcome, Transcript, sha256_hex};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::merge::MergedFrom;
use crate::shard::ShardManifest;

/// Written once per run directory; a resume must present the same tool, version, registry and
/// `config`.
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
    /// Episodes the run's plan holds (what `report` compares the recorded ones with); absent
    /// in manifests written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<usize>,
    /// Set when the run is one shard of a plan (`--shard I/N`): which shard, the plan's hash,
    /// what the shard holds and the command that completes it. Absent in an unsharded run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardManifest>,
    /// Set when the run was put together from shards by [`merge`](crate::merge::merge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<MergedFrom>,
}

/// The configuration lists a resume may widen or narrow (compared as sets: their order and
/// repeats do not matter). Everything else must be equal.
const SET_KEYS: [&str; 5] = ["policies", "levels", "tasks", "seeds", "models"];

/// How the plan of a resume relates to the run recorded in a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// The same plan (lists possibly written in another order).
    Same,
    /// A part of the recorded plan: runs what of it is missing; the manifest stays.
    Narrower,
    /// The recorded plan and more (more seeds, policies, tasks, levels or models): runs what is
    /// new; the manifest is rewritten to the wider plan.
    Wider,
}

/// The elements of a configuration list as a set of their JSON texts.
fn as_set(v: &[Value]) -> std::collections::BTreeSet<String> {
    v.iter().map(Value::to_string).collect()
}

/// The longest value a refusal quotes.
const QUOTE_LIMIT: usize = 120;

fn quote(v: &Value) -> String {
    let mut s = v.to_string();
    if s.len() > QUOTE_LIMIT {
        let mut cut = QUOTE_LIMIT;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

/// One place where two JSON values differ: its path and both values, quoted (`None`: absent).
pub(crate) type Difference = (String, Option<String>, Option<String>);

/// The JSON paths where `recorded` and `now` differ, at most `limit` of them, each with both
/// values.
pub(crate) fn differences(
    recorded: &Value,
    now: &Value,
    path: &str,
    limit: usize,
    out: &mut Vec<Difference>,
) {
    if out.len() >= limit || recorded == now {
        return;
    }
    match (recorded, now) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let sub = format!("{path}.{k}");
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => differences(x, y, &sub, limit, out),
                    (x, y) => out.push((sub, x.map(quote), y.map(quote))),
                }
                if out.len() >= limit {
                    return;
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                differences(x, y, &format!("{path}[{i}]"), limit, out);
            }
        }
        _ => out.push((path.to_string(), Some(quote(recorded)), Some(quote(now)))),
    }
}

/// `config.seeds: recorded [0,1], now [0,1,2]`.
fn describe_difference((path, recorded, now): &Difference) -> String {
    match (recorded, now) {
        (Some(r), Some(n)) => format!("{path}: recorded {r}, now {n}"),
        (Some(r), None) => format!("{path}: recorded {r}, now absent"),
        (None, Some(n)) => format!("{path}: absent, now {n}"),
        (None, None) => path.clone(),
    }
}

/// A configuration as it reads back from a manifest: the value after one trip through JSON
/// text. With serde_json's `float_roundtrip` the trip is exact; comparing the canonical forms
/// of both sides keeps a resume exact even if a number's text ever parsed back differently.
pub fn canonical(config: &Value) -> Result<Value> {
    let text = serde_json::to_string(config).map_err(Error::json("serialising a configuration"))?;
    serde_json::from_str(&text).map_err(Error::json("re-reading a configuration"))
}

/// A configuration recorded before the tool text was a choice (no `tool_text`, at the top or
/// in a model's entry) was played with the only wording there was, the clarified one: it is
/// read so, and resumes under `--tool-text clarified` (the default) but not under `ambiguous`.
fn read_tool_text_default(config: &mut Value) {
    let clarified = || Value::String(benchaudit_comtrade::ToolText::Clarified.name().into());
    let Value::Object(m) = config else { return };
    m.entry("tool_text").or_insert_with(clarified);
    if let Some(Value::Array(models)) = m.get_mut("models") {
        for model in models {
            if let Value::Object(model) = model {
                model.entry("tool_text").or_insert_with(clarified);
            }
        }
    }
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
            planned: None,
            shard: None,
            merged: None,
        })
    }

    /// The same manifest for one shard of the plan.
    #[must_use]
    pub fn with_shard(mut self, shard: ShardManifest) -> Manifest {
        self.shard = Some(shard);
        self
    }

    /// Reads `dir/manifest.json`, if there is one.
    pub fn read(dir: &Path) -> Result<Option<Manifest>> {
        let path = dir.join("manifest.json");
        let bytes = match crate::files::read_bounded(&path, crate::files::limits::SMALL) {
            Ok(b) => b,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(Error::Invalid(e.to_string())),
        };
        serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            Error::Invalid(format!(
                "{} is not a benchaudit manifest: {e}",
                path.display()
            ))
        })
    }

    /// Writes `dir/manifest.json` (atomically).
    pub fn write(&self, dir: &Path) -> Result<()> {
        let text =
            serde_json::to_string_pretty(self).map_err(Error::json("serialising the manifest"))?;
        write_atomic(&dir.join("manifest.json"), text.as_bytes())
    }

    /// Why a run recorded under `self` (read from `dir`) cannot be resumed under `now`, naming
    /// each field that differs; `None` when it can.
    pub fn resume_refusal(&self, now: &Manifest, dir: &Path) -> Result<Option<String>> {
        Ok(self.resume(now, dir)?.err())
    }

    /// How a run recorded under `self` (read from `dir`) resumes under `now`: the same, a
    /// narrower or a wider plan, or why it cannot (naming each field that differs).
    ///
    /// # Errors
    /// Serialisation errors only.
    pub fn resume(
        &self,
        now: &Manifest,
        dir: &Path,
    ) -> Result<std::result::Result<Resume, String>> {
        let at = dir.join("manifest.json");
        let choose =
            "finish it with the command and binary that started it, or choose another --out";
        if self.tool != now.tool {
            return Ok(Err(format!(
                "{}: tool is `{}`, not `{}`: not a benchaudit run directory; choose another --out",
                at.display(),
                self.tool,
                now.tool
            )));
        }
        if self.version != now.version {
            return Ok(Err(format!(
                "{}: version: the run was recorded by benchaudit {}, this is benchaudit {}; a resume would mix episodes of two versions: {choose}",
                at.display(),
                self.version,
                now.version
            )));
        }
        if self.registry_sha256 != now.registry_sha256 {
            return Ok(Err(format!(
                "{}: registry_sha256: the run was recorded on task registry {}, this binary's is {}; a resume would mix two benchmarks: {choose}",
                at.display(),
                self.registry_sha256,
                now.registry_sha256
            )));
        }
        let sharded = self.shard.is_some() || now.shard.is_some();
        Ok(match self.compare_plans(now)? {
            Ok(kind) => match shard_refusal(self.shard.as_ref(), now.shard.as_ref(), dir) {
                Some(why) => Err(why),
                None => Ok(kind),
            },
            Err(diffs) => Err(format!(
                "{} holds a run with a different configuration ({}); {}",
                dir.display(),
                diffs.join("; "),
                if sharded {
                    "a shard's plan is fixed: resume it with the command that started it or choose another --out"
                } else {
                    "resume it with an equivalent command, widen its lists, or choose another --out"
                }
            )),
        })
    }

    /// How a resume under `now` relates to the run recorded under `self` (tool, version and
    /// registry already equal): the same plan, a narrower or a wider one, or the differences
    /// that make it another run (each naming the field and both values). A shard's lists are
    /// compared exactly: its plan is fixed.
    ///
    /// # Errors
    /// Serialisation errors only.
    pub fn compare_plans(
        &self,
        now: &Manifest,
    ) -> Result<std::result::Result<Resume, Vec<String>>> {
        let (mut recorded, mut wanted) = (canonical(&self.config)?, canonical(&now.config)?);
        read_tool_text_default(&mut recorded);
        read_tool_text_default(&mut wanted);
        let as_sets = self.shard.is_none() && now.shard.is_none();
        if recorded == wanted {
            return Ok(Ok(Resume::Same));
        }
        let (Value::Object(a), Value::Object(b)) = (&recorded, &wanted) else {
            let mut diffs = Vec::new();
            differences(&recorded, &wanted, "config", 5, &mut diffs);
            return Ok(Err(diffs.iter().map(describe_difference).collect()));
        };
        let (mut diffs, mut wider, mut narrower) = (Vec::new(), Vec::new(), Vec::new());
        let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        for k in keys {
            let (x, y) = (a.get(k), b.get(k));
            match (x, y) {
                (Some(Value::Array(x)), Some(Value::Array(y)))
                    if as_sets && SET_KEYS.contains(&k.as_str()) =>
                {
                    let (old, new) = (as_set(x), as_set(y));
                    if old == new {
                        continue;
                    }
                    if new.is_superset(&old) {
                        wider.push(k.clone());
                    } else if new.is_subset(&old) {
                        narrower.push(k.clone());
                    } else {
                        diffs.push(format!(
                            "config.{k}: recorded {}, now {} (neither holds the other; to extend the run give both)",
                            quote(&Value::Array(x.clone())),
                            quote(&Value::Array(y.clone()))
                        ));
                    }
                }
                (Some(x), Some(y)) => {
                    let mut found = Vec::new();
                    differences(x, y, &format!("config.{k}"), 5, &mut found);
                    diffs.extend(found.iter().map(describe_difference));
                }
                (Some(x), None) => {
                    diffs.push(format!("config.{k}: recorded {}, now absent", quote(x)))
                }
                (None, Some(y)) => diffs.push(format!("config.{k}: absent, now {}", quote(y))),
                (None, None) => {}
            }
        }
        if !diffs.is_empty() {
            diffs.truncate(5);
            return Ok(Err(diffs));
        }
        Ok(match (wider.is_empty(), narrower.is_empty()) {
            (true, true) => Ok(Resume::Same),
            (false, true) => Ok(Resume::Wider),
            (true, false) => Ok(Resume::Narrower),
            (false, false) => Err(vec![format!(
                "the command widens {} but narrows {}: a resume may add to the lists or run a part of them, not both; to extend the run give the recorded lists and the new entries",
                wider.join(", "),
                narrower.join(", ")
            )]),
        })
    }
}

impl Manifest {
    /// The lists of the plan this manifest's configuration records ([`PlanScope`]).
    #[must_use]
    pub fn scope(&self) -> PlanScope {
        PlanScope::of(&self.config)
    }
}

/// What a run's configuration says its episodes may be: its policies, levels, tasks, seeds and
/// option sets, each when the configuration records it (a `run` or `audit` plan records all of
/// them, an `ab` design its policies, level, task and seeds, a served or imported ledger
/// none). A record outside them was not written by the run the manifest describes.
///
/// Exists so a reader of a run directory refuses a foreign record (a hand-edited ledger, a
/// ledger copied beside another run's manifest) as a resume refuses a foreign plan.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanScope {
    policies: Option<std::collections::BTreeSet<String>>,
    levels: Option<std::collections::BTreeSet<benchaudit_agents::Level>>,
    tasks: Option<std::collections::BTreeSet<String>>,
    seeds: Option<std::collections::BTreeSet<u64>>,
    options: Option<std::collections::BTreeSet<String>>,
}

impl PlanScope {
    /// The scope a configuration records (see the type's documentation).
    #[must_use]
    pub fn of(config: &Value) -> PlanScope {
        fn list<T: serde::de::DeserializeOwned + Ord>(
            config: &Value,
            many: &str,
            one: &str,
        ) -> Option<std::collections::BTreeSet<T>> {
            match (config.get(many), config.get(one)) {
                (Some(v), _) => serde_json::from_value::<Vec<T>>(v.clone())
                    .ok()
                    .map(|v| v.into_iter().collect()),
                (None, Some(v)) => serde_json::from_value::<T>(v.clone())
                    .ok()
                    .map(|v| std::iter::once(v).collect()),
                (None, None) => None,
            }
        }
        let options = match (config.get("options"), config.get("arms")) {
            (Some(one), None) => {
                serde_json::from_value::<benchaudit_agents::RunOptions>(one.clone())
                    .ok()
                    .map(|o| std::iter::once(o.hash()).collect())
            }
            (None, Some(arms)) => {
                serde_json::from_value::<Vec<benchaudit_agents::RunOptions>>(arms.clone())
                    .ok()
                    .map(|arms| {
                        arms.iter()
                            .map(benchaudit_agents::RunOptions::hash)
                            .collect()
                    })
            }
            _ => None,
        };
        PlanScope {
            policies: list(config, "policies", "policy"),
            levels: list(config, "levels", "level"),
            tasks: list(config, "tasks", "task"),
            seeds: list(config, "seeds", "seed"),
            options,
        }
    }

    /// Why `key` is outside the scope (naming the field, the value and what the plan holds),
    /// or `None` when it is inside (or the configuration does not record that field).
    #[must_use]
    pub fn refusal(&self, key: &EpisodeKey) -> Option<String> {
        fn outside<T: Ord + std::fmt::Debug>(
            (what, field): (&str, &str),
            set: Option<&std::collections::BTreeSet<T>>,
            value: &T,
        ) -> Option<String> {
            let set = set?;
            if set.contains(value) {
                return None;
            }
            let shown: Vec<String> = set.iter().take(12).map(|v| format!("{v:?}")).collect();
            let more = if set.len() > 12 {
                format!(" and {} more", set.len() - 12)
            } else {
                String::new()
            };
            Some(format!(
                "{what} {value:?} is not in the run's plan (manifest.json config.{field}: {}{more})",
                shown.join(", ")
            ))
        }
        outside(("policy", "policies"), self.policies.as_ref(), &key.policy)
            .or_else(|| outside(("level", "levels"), self.levels.as_ref(), &key.level))
            .or_else(|| outside(("task", "tasks"), self.tasks.as_ref(), &key.task_id))
            .or_else(|| outside(("seed", "seeds"), self.seeds.as_ref(), &key.seed))
            .or_else(|| {
                outside(
                    ("options hash", "options"),
                    self.options.as_ref(),
                    &key.options_hash,
                )
            })
    }
}

/// Why a run recorded as shard `recorded` (or unsharded, `None`) cannot be resumed as `now`.
fn shard_refusal(
    recorded: Option<&ShardManifest>,
    now: Option<&ShardManifest>,
    dir: &Path,
) -> Option<String> {
    let at = dir.join("manifest.json");
    let at = at.display();
    match (recorded, now) {
        (None, None) => None,
        (None, Some(n)) => Some(format!(
            "{at}: shard: the run there is not a shard (it was recorded without --shard), this is shard {}; choose another --out for the shard",
            n.shard()
        )),
        (Some(r), None) => Some(format!(
            "{at}: shard: the run there is shard {} of a plan; resume it with --shard {} (its command: {}) or choose another --out",
            r.shard(),
            r.shard(),
            r.resume_line()
        )),
        (Some(r), Some(n)) if r.shard() != n.shard() => Some(format!(
            "{at}: shard: recorded {}, now {}; a shard directory holds one shard: resume it with --shard {} or choose another --out",
            r.shard(),
            n.shard(),
            r.shard()
        )),
        (Some(r), Some(n)) if r.plan_sha256 != n.plan_sha256 => Some(format!(
            "{at}: shard.plan_sha256: recorded {}, now {}: the shard belongs to another plan; resume it with the command that started it or choose another --out",
            r.plan_sha256, n.plan_sha256
        )),
        (Some(r), Some(n)) if r.episodes_sha256 != n.episodes_sha256 => Some(format!(
            "{at}: shard.episodes_sha256: recorded {}, now {}: the shard holds other episodes; resume it with the command that started it or choose another --out",
            r.episodes_sha256, n.episodes_sha256
        )),
        (Some(_), Some(_)) => None,
    }
}

/// What a ledger file holds under the rules of the module documentation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LedgerContents {
    /// The effective record of every key (its last record), in the order of their lines.
    pub records: Vec<EpisodeRecord>,
    /// Earlier attempts: `infra_error` records a later record of the same key supersedes.
    pub superseded: Vec<EpisodeRecord>,
    /// Records per key, superseded attempts included.
    pub attempts: HashMap<EpisodeKey, usize>,
    /// Byte offset of a torn final line (one without its newline), if there is one.
    pub torn_at: Option<u64>,
}

/// An episode key as messages name it.
pub fn describe(key: &EpisodeKey) -> String {
    let arm = key
        .arm
        .as_deref()
        .map(|a| format!(" [{a}]"))
        .unwrap_or_default();
    format!(
        "{} {} {} seed {}{arm} (options {})",
        key.policy, key.level, key.task_id, key.seed, key.options_hash
    )
}

/// The refusal of a key that repeats after a record that finished it (the attempt rule): the
/// one message every reader of a ledger gives.
pub fn repeated_key(file: &Path, line: usize, first_line: usize, key: &EpisodeKey) -> Error {
    Error::Corrupt(format!(
        "{}: line {line}: episode {} appears twice (line {first_line} already finished it; a key may repeat only after infra_error attempts): the ledger is corrupt",
        file.display(),
        describe(key)
    ))
}

/// Applies the attempt rule to records in ledger order (`lines[i]` is the 1-based line of
/// `records[i]`): the one implementation every reader of a ledger goes through.
///
/// # Errors
/// [`Error::Corrupt`] when a key repeats after a record that is not `infra_error`.
pub fn resolve(
    records: Vec<EpisodeRecord>,
    lines: &[usize],
    file: &Path,
) -> Result<LedgerContents> {
    // key → (index of its current effective record, that record's line)
    let mut effective: HashMap<EpisodeKey, (usize, usize)> = HashMap::new();
    let mut keep: Vec<Option<EpisodeRecord>> = Vec::with_capacity(records.len());
    let mut superseded = Vec::new();
    let mut attempts: HashMap<EpisodeKey, usize> = HashMap::new();
    for (i, r) in records.into_iter().enumerate() {
        let line = lines.get(i).copied().unwrap_or(i + 1);
        if let Some(&(at, first_line)) = effective.get(&r.key) {
            let earlier_failed = keep[at]
                .as_ref()
                .is_some_and(|e| e.outcome == Outcome::InfraError);
            if !earlier_failed {
                return Err(repeated_key(file, line, first_line, &r.key));
            }
            if let Some(old) = keep[at].take() {
                superseded.push(old);
            }
        }
        *attempts.entry(r.key.clone()).or_default() += 1;
        effective.insert(r.key.clone(), (keep.len(), line));
        keep.push(Some(r));
    }
    Ok(LedgerContents {
        records: keep.into_iter().flatten().collect(),
        superseded,
        attempts,
        torn_at: None,
    })
}

/// Reads a ledger file (bytes, not text) under the rules of the module documentation. A
/// missing file is an empty ledger.
///
/// # Errors
/// [`Error::Corrupt`] for a complete line that is not an episode record (naming the file and
/// the line) or a repeated key that is not a retried `infra_error`; IO errors.
pub fn read_ledger(path: &Path) -> Result<LedgerContents> {
    let mut records = Vec::new();
    let mut lines = Vec::new();
    let torn_at = scan_ledger(path, &mut |line, record| {
        records.push(record);
        lines.push(line);
        Ok(())
    })?;
    let mut contents = resolve(records, &lines, path)?;
    contents.torn_at = torn_at;
    Ok(contents)
}

/// Longest line a ledger reader takes, newline excluded (a record is one to a few KB; an
/// LLM episode's error message is cut long before this): a longer line is refused unread.
pub const LINE_LIMIT: usize = 16 << 20;

/// Reads a ledger file line by line, in file order, handing every complete record and its
/// 1-based line number to `visit`; returns the byte offset of a torn final line (one without
/// its newline), if there is one. A missing file is an empty ledger. Memory is one line at a
/// time: a reader that keeps less than the records (a report) stays small on any ledger.
///
/// This is where the line rules of the module documentation live; the attempt rule is the
/// caller's ([`resolve`], or a reader's own bookkeeping with [`repeated_key`]).
///
/// # Errors
/// [`Error::Corrupt`] for a complete line that is not an episode record or holds a value no
/// benchaudit scorer writes ([`check_record`]), or a line over [`LINE_LIMIT`]; what `visit`
/// returns; IO errors.
pub fn scan_ledger(
    path: &Path,
    visit: &mut dyn FnMut(usize, EpisodeRecord) -> Result<()>,
) -> Result<Option<u64>> {
    let file = match crate::files::open_regular(path, crate::files::limits::LEDGER) {
        Ok(f) => f,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(Error::Invalid(e.to_string())),
    };
    let reading = || Error::io(format!("reading {}", path.display()));
    let mut reader = io::BufReader::with_capacity(1 << 16, file);
    let mut line = Vec::new();
    let (mut offset, mut line_no) = (0u64, 0usize);
    loop {
        line.clear();
        let n = io::Read::take(&mut reader, LINE_LIMIT as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(reading())?;
        if n == 0 {
            return Ok(None);
        }
        line_no += 1;
        if line.pop() != Some(b'\n') {
            if n > LINE_LIMIT {
                return Err(Error::Corrupt(format!(
                    "{}: line {line_no} is longer than {LINE_LIMIT} bytes: not an episode record; the ledger is corrupt: nothing was changed, repair or move the file",
                    path.display()
                )));
            }
            // A final line without its newline: an interrupted write.
            return Ok(Some(offset));
        }
        let record = serde_json::from_slice::<EpisodeRecord>(&line).map_err(|e| {
            Error::Corrupt(format!(
                "{}: line {line_no} is complete but not an episode record ({e}); the ledger is corrupt: nothing was changed, repair or move the file",
                path.display()
            ))
        })?;
        check_record(&record).map_err(|why| {
            Error::Corrupt(format!(
                "{}: line {line_no}: episode {}: {why}; no benchaudit scorer writes it, so the ledger is corrupt: nothing was changed, repair or move the file",
                path.display(),
                describe(&record.key)
            ))
        })?;
        visit(line_no, record)?;
        offset += n as u64;
    }
}

/// Why a record holds a value no benchaudit scorer writes, if it does: F1, precision, recall
/// and coverage outside [0, 1], a judge total outside [0, 100], or a scored episode's reward
/// (its F1 or judge / 100) outside [0, 1]. An imported episode (no scores) may carry any
/// finite reward: another tool's scale is its own.
///
/// # Errors
/// The field, its value and its range.
pub fn check_record(r: &EpisodeRecord) -> std::result::Result<(), String> {
    let within = |what: &str, v: f64, hi: f64| {
        if (0.0..=hi).contains(&v) {
            Ok(())
        } else {
            Err(format!("{what} {v:?} is outside [0, {hi}]"))
        }
    };
    if let Some(s) = &r.scores {
        within("scores.f1", s.f1, 1.0)?;
        within("scores.precision", s.precision, 1.0)?;
        within("scores.recall", s.recall, 1.0)?;
        within(
            "scores.judge_total",
            s.judge_total,
            benchaudit_scoring::JUDGE_POINTS,
        )?;
        if let Some(reward) = r.reward {
            within("reward", reward, 1.0)?;
        }
    }
    if let Some(c) = r.coverage {
        within("coverage", c, 1.0)?;
    }
    Ok(())
}

/// An open, locked ledger.
pub struct Ledger {
    /// The run directory.
    dir: PathBuf,
    /// `episodes.jsonl`, open for appending.
    episodes: File,
    /// Held for the ledger's lifetime: the OS releases it when the process ends, however.
    _lock: File,
    /// Keys finished (their effective record is not `infra_error`).
    done: HashSet<EpisodeKey>,
    /// Records per key in the file, failed attempts included.
    attempts: HashMap<EpisodeKey, usize>,
    /// Lines discarded when opening (a torn last line).
    pub discarded: usize,
    /// The effective records read when opening (`infra_error` ones included: they are run again).
    pub existing: Vec<EpisodeRecord>,
    /// Whether transcripts are written (the manifest's `transcripts`).
    transcripts: Transcripts,
}

impl Ledger {
    /// Opens (or creates) the run directory `dir` for writing under `manifest`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a locked directory, a manifest that differs from `manifest` (the
    /// message names the field) or a ledger without a manifest; [`Error::Corrupt`] for a
    /// damaged ledger (nothing is changed then); IO errors.
    pub fn open(dir: &Path, manifest: &Manifest) -> Result<Ledger> {
        crate::outdir::claim(dir, crate::outdir::DirKind::Run).map_err(Error::Invalid)?;
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
        let path = dir.join("episodes.jsonl");
        let recorded = Manifest::read(dir)?;
        let mut widened = false;
        match &recorded {
            Some(old) => {
                widened = old.resume(manifest, dir)?.map_err(Error::Invalid)? == Resume::Wider;
            }
            None => {
                let len = match fs::metadata(&path) {
                    Ok(m) => m.len(),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => 0,
                    Err(e) => return Err(Error::io(format!("reading {}", path.display()))(e)),
                };
                if len > 0 {
                    return Err(Error::Invalid(format!(
                        "{} holds episodes but no manifest.json: its configuration is unknown, so its episodes cannot be resumed; choose another --out",
                        dir.display()
                    )));
                }
            }
        }
        // Read (and so validate) before anything is written.
        let contents = read_ledger(&path)?;
        if recorded.is_none() || widened {
            manifest.write(dir)?;
        }
        let opening = Error::io(format!("opening {}", path.display()));
        let mut episodes = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(&path)
            .map_err(opening)?;
        let mut discarded = 0;
        if let Some(at) = contents.torn_at {
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
        let done = contents
            .records
            .iter()
            .filter(|r| r.outcome != Outcome::InfraError)
            .map(|r| r.key.clone())
            .collect();
        Ok(Ledger {
            dir: dir.to_path_buf(),
            episodes,
            _lock: lock,
            done,
            attempts: contents.attempts,
            discarded,
            existing: contents.records,
            transcripts: Transcripts::of(&manifest.config),
        })
    }

    /// Whether an episode is finished in the ledger (an `infra_error` attempt is not).
    pub fn is_done(&self, key: &EpisodeKey) -> bool {
        self.done.contains(key)
    }

    /// Appends one record (one write, then sync) and, unless the run keeps none, its
    /// transcript. A retry of a failed attempt keeps the attempt's transcript as
    /// `<name>.attempt-<n>.json.zst`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an episode already finished in the ledger (recording it again
    /// would count it twice); IO and serialisation errors.
    pub fn append(&mut self, record: &EpisodeRecord, transcript: &Transcript) -> Result<()> {
        if self.done.contains(&record.key) {
            return Err(Error::Invalid(format!(
                "episode {} is already recorded in {}; it is not recorded twice",
                describe(&record.key),
                self.dir.display()
            )));
        }
        let transcripts = self.dir.join("transcripts");
        let name = transcript_name(&record.key);
        let earlier = self.attempts.get(&record.key).copied().unwrap_or(0);
        let keep = self.transcripts == Transcripts::Keep;
        if keep && earlier > 0 {
            // Keep the failed attempt's transcript. If the attempt file exists, an earlier
            // retry already moved it and crashed before its record was written: the file at
            // `name` then belongs to no record and is overwritten below.
            let kept = transcripts.join(attempt_name(&record.key, earlier));
            if !kept.exists() {
                match fs::rename(transcripts.join(&name), &kept) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(Error::io(format!(
                            "keeping the failed attempt's transcript as {}",
                            kept.display()
                        ))(e));
                    }
                }
            }
        }
        if keep {
            let text =
                serde_json::to_vec(transcript).map_err(Error::json("serialising a transcript"))?;
            let packed = zstd::bulk::compress(&text, TRANSCRIPT_LEVEL)
                .map_err(Error::io("compressing a transcript"))?;
            write_atomic(&transcripts.join(name), &packed)?;
        }
        let mut line =
            serde_json::to_string(record).map_err(Error::json("serialising a record"))?;
        line.push('\n');
        self.episodes
            .write_all(line.as_bytes())
            .map_err(Error::io("appending to episodes.jsonl"))?;
        self.episodes
            .sync_data()
            .map_err(Error::io("syncing episodes.jsonl"))?;
        *self.attempts.entry(record.key.clone()).or_default() += 1;
        if record.outcome != Outcome::InfraError {
            self.done.insert(record.key.clone());
        }
        Ok(())
    }
}

/// The file a failed attempt's transcript is kept under: `<name>.attempt-<n>.json.zst`, `n`
/// being the attempt's place among the key's records (1-based).
pub fn attempt_name(key: &EpisodeKey, n: usize) -> String {
    format!("{}.attempt-{n}.json.zst", transcript_stem(key))
}

/// Whether another process holds the run directory's lock (a run still being written).
pub fn is_being_written(dir: &Path) -> bool {
    File::open(dir.join(".lock"))
        .is_ok_and(|f| matches!(f.try_lock_shared(), Err(fs::TryLockError::WouldBlock)))
}

/// Largest transcript [`recorded_messages`] reads (an LLM episode's message log is at most a
/// few megabytes; a larger file is not one this tool wrote).
pub const TRANSCRIPT_LIMIT: u64 = 256 << 20;

/// The policy's message log (an LLM's provider exchange) in the transcript of `key`'s
/// effective record in the run directory `dir`; `None` when the episode has no transcript or
/// its policy keeps no log (rule players).
///
/// # Errors
/// [`Error::Corrupt`] for a transcript that cannot be read or is not JSON (naming the file).
pub fn recorded_messages(dir: &Path, key: &EpisodeKey) -> Result<Option<Value>> {
    Ok(read_transcript(dir, key)?.and_then(|mut doc| doc.get_mut("messages").map(Value::take)))
}

/// The transcript of `key`'s effective record in the run directory `dir`, read within
/// [`TRANSCRIPT_LIMIT`] (decompressed); `None` when the episode has none (a run that keeps
/// none, an episode never played). A transcript written before they were compressed
/// (`<name>.json`) is read too.
///
/// # Errors
/// [`Error::Corrupt`] for a transcript that cannot be read, decompressed or parsed (naming the
/// file).
pub fn read_transcript(dir: &Path, key: &EpisodeKey) -> Result<Option<Value>> {
    let folder = dir.join("transcripts");
    for path in [
        folder.join(transcript_name(key)),
        folder.join(format!("{}.json", transcript_stem(key))),
    ] {
        match read_transcript_file(&path) {
            Ok(doc) => return Ok(Some(doc)),
            Err(TranscriptError::Missing) => {}
            Err(TranscriptError::Bad(why)) => return Err(Error::Corrupt(why)),
        }
    }
    Ok(None)
}

/// Why a transcript file could not be read.
#[derive(Debug)]
enum TranscriptError {
    Missing,
    Bad(String),
}

/// One transcript file: `*.json.zst` decompressed, anything else read as JSON, within
/// [`TRANSCRIPT_LIMIT`].
///
/// # Errors
/// [`Error::Corrupt`] naming the file when it is missing, cannot be read, decompressed or
/// parsed.
pub fn transcript_file(path: &Path) -> Result<Value> {
    read_transcript_file(path).map_err(|e| match e {
        TranscriptError::Missing => {
            Error::Corrupt(format!("{}: no such transcript", path.display()))
        }
        TranscriptError::Bad(why) => Error::Corrupt(why),
    })
}

fn read_transcript_file(path: &Path) -> std::result::Result<Value, TranscriptError> {
    let packed = path.extension().is_some_and(|e| e == "zst");
    let bytes = if packed {
        read_packed(path)
    } else {
        crate::files::read_bounded(path, TRANSCRIPT_LIMIT)
    };
    let bytes = match bytes {
        Ok(bytes) => bytes,
        Err(e) if e.is_not_found() => return Err(TranscriptError::Missing),
        Err(e) => return Err(TranscriptError::Bad(e.to_string())),
    };
    serde_json::from_slice(&bytes)
        .map_err(|e| TranscriptError::Bad(format!("{}: not a transcript: {e}", path.display())))
}

/// The zstd level transcripts are written at: the default, a few MB/s of a core for a rule
/// player's transcript (they compress about eightfold at it).
const TRANSCRIPT_LEVEL: i32 = 3;

/// A compressed transcript, decompressed within [`TRANSCRIPT_LIMIT`] (a larger one, or a
/// compressed file over that size, is refused unread past the limit).
fn read_packed(path: &Path) -> std::result::Result<Vec<u8>, crate::files::FileError> {
    let io = |source| crate::files::FileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = crate::files::open_regular(path, TRANSCRIPT_LIMIT)?;
    let decoder = zstd::stream::read::Decoder::new(file).map_err(io)?;
    let mut bytes = Vec::new();
    io::Read::read_to_end(
        &mut io::Read::take(decoder, TRANSCRIPT_LIMIT + 1),
        &mut bytes,
    )
    .map_err(io)?;
    if bytes.len() as u64 > TRANSCRIPT_LIMIT {
        return Err(crate::files::FileError::TooLarge {
            path: path.to_path_buf(),
            size: bytes.len() as u64,
            limit: TRANSCRIPT_LIMIT,
        });
    }
    Ok(bytes)
}

/// The transcript file name of an episode (safe on every filesystem): zstd-compressed JSON,
/// `<policy>__<level>__<task>__<seed>[__<arm>]__<options>.json.zst`.
pub fn transcript_name(key: &EpisodeKey) -> String {
    format!("{}.json.zst", transcript_stem(key))
}

/// A transcript file's name without its extension.
fn transcript_stem(key: &EpisodeKey) -> String {
    let policy = crate::files::file_safe(&key.policy);
    let arm = key
        .arm
        .as_deref()
        .map(|a| format!("__{a}"))
        .unwrap_or_default();
    format!(
        "{policy}__{}__{}__{}{arm}__{}",
        key.level, key.task_id, key.seed, key.options_hash
    )
}

/// Whether a run keeps its episodes' transcripts (`run --transcripts`).
///
/// Exists because a large sweep of rule players may not want them: recorded in the manifest's
/// configuration as `"transcripts": "none"` (absent: kept, as every run before the choice
/// existed), so a resume keeps the choice and a reader knows an absent transcript is expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transcripts {
    /// Every episode's transcript, zstd-compressed, in `transcripts/`.
    #[default]
    Keep,
    /// None: `transcripts/` stays empty; replay of models and `export`'s messages need them.
    None,
}

impl Transcripts {
    /// The choice a run's configuration records.
    #[must_use]
    pub fn of(config: &Value) -> Transcripts {
        match config.get("transcripts").and_then(Value::as_str) {
            Some("none") => Transcripts::None,
            _ => Transcripts::Keep,
        }
    }

    /// The name `--transcripts` and the manifest use.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Transcripts::Keep => "keep",
            Transcripts::None => "none",
        }
    }
}

/// Writes a file atomically: temp file in the same directory, sync, rename, sync the directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |w| {
        w.write_all(bytes)
            .map_err(Error::io(format!("writing {}", path.display())))
    })
}

/// [`write_atomic`] of what `write` writes into a buffered writer, so a large file is never
/// held in memory whole. Nothing is at `path` unless `write` succeeds.
///
/// # Errors
/// `write`'s error, or [`Error::Io`] naming the file.
pub fn write_atomic_with<E: From<Error>>(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(Error::io(format!("writing into {}", dir.display())))?;
    let writing = || Error::io(format!("writing {}", path.display()));
    {
        let mut buffered = io::BufWriter::with_capacity(1 << 16, tmp.as_file_mut());
        write(&mut buffered)?;
        buffered.flush().map_err(writing())?;
    }
    // A temporary file is created 0600; what we write is a document for others to read, as
    // the figures and the ledger are (0644).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(fs::Permissions::from_mode(0o644))
            .map_err(writing())?;
    }
    tmp.as_file().sync_all().map_err(writing())?;
    tmp.persist(path).map_err(|e| writing()(e.error))?;
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
