//! Reading a run directory: its episodes, as the report reads them, and provenance.
//!
//! The ledger is streamed ([`benchaudit_runs::scan_ledger`]): each record is reduced on the
//! spot to the few fields the statistics read ([`Episode`]), with its key's strings kept once
//! per group ([`Group`]), so what a report holds grows with the number of groups, plus a few
//! dozen bytes per episode, never with the size of the records.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use benchaudit_agents::{EpisodeKey, EpisodeRecord, Level, Outcome, TokenUsage};
use benchaudit_runs::{ArmSetting, Manifest, Metric, arm_settings, ledger, scan_ledger};

use crate::error::{Error, Result, chain};
use crate::model::Source;

/// What the episodes of one group share: an episode key without its seed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Group {
    /// Policy or model name.
    pub policy: String,
    /// Scaffolding level.
    pub level: Level,
    /// Task id.
    pub task_id: String,
    /// Stress arm, if any.
    pub arm: Option<String>,
    /// Options hash.
    pub options_hash: String,
}

/// One episode as a report reads it: its group and seed, how it ended, its scores, coverage,
/// reward, tokens, and (at L0, where the 2×2 compares them) its payload hash.
///
/// Exists so a report keeps a few dozen bytes of each episode instead of its whole record.
#[derive(Debug, Clone, PartialEq)]
pub struct Episode {
    /// Index of its group in [`Loaded::groups`].
    pub group: usize,
    /// Seed.
    pub seed: u64,
    /// How it ended.
    pub outcome: Outcome,
    /// `(scores.f1, scores.judge_total)` when scored.
    pub scores: Option<(f64, f64)>,
    /// L1 coverage.
    pub coverage: Option<f64>,
    /// The primary reward.
    pub reward: Option<f64>,
    /// Tokens.
    pub usage: TokenUsage,
    /// SHA-256 of the submitted files, kept at L0 only.
    pub payload_sha256: Option<String>,
    /// What went wrong, when the record says.
    pub error: Option<String>,
}

impl Episode {
    /// The episode's value of `metric` ([`Metric::of`] on its record).
    #[must_use]
    pub fn metric(&self, metric: Metric) -> Option<f64> {
        metric.of_parts(self.outcome, self.scores, self.coverage, self.reward)
    }
}

/// A run directory's episodes and provenance.
///
/// Exists so loading (IO, validation) is separate from computing (pure).
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The groups episodes belong to, in order of first appearance.
    pub groups: Vec<Group>,
    /// The effective episode of every key, in ledger order (a retried `infra_error` attempt
    /// is replaced by its retry, in the retry's place: `benchaudit_runs::ledger`'s rules).
    pub episodes: Vec<Episode>,
    /// Provenance.
    pub source: Source,
    /// The quota setting of each A/B arm by options hash, when the run is an A/B design
    /// `benchaudit ab` wrote ([`benchaudit_runs::arm_settings`] of its manifest); empty
    /// otherwise.
    pub arm_settings: BTreeMap<String, ArmSetting>,
    /// What the reader should know that is not an error: a manifest written by another
    /// version of benchaudit or on another task registry.
    pub notes: Vec<String>,
}

impl Loaded {
    /// The group of `e`.
    #[must_use]
    pub fn group(&self, e: &Episode) -> &Group {
        &self.groups[e.group]
    }

    /// The ledger key of `e`.
    #[must_use]
    pub fn key(&self, e: &Episode) -> EpisodeKey {
        key_of(self.group(e), e.seed)
    }
}

fn key_of(g: &Group, seed: u64) -> EpisodeKey {
    EpisodeKey {
        policy: g.policy.clone(),
        level: g.level,
        task_id: g.task_id.clone(),
        seed,
        arm: g.arm.clone(),
        options_hash: g.options_hash.clone(),
    }
}

/// Checks a run directory's manifest: another tool's is refused; another version's or another
/// task registry's is read, with a note saying so (the record's numbers are what that version
/// scored; the tasks may not be this binary's).
fn manifest_notes(manifest: &Manifest, dir: &Path) -> Result<Vec<String>> {
    let at = dir.join("manifest.json");
    let ours = Manifest::new(serde_json::Value::Null)?;
    if manifest.tool != ours.tool {
        return Err(Error::Invalid(format!(
            "{}: tool is `{}`, not `{}`: not a benchaudit run directory",
            at.display(),
            manifest.tool,
            ours.tool
        )));
    }
    let mut notes = Vec::new();
    if manifest.version != ours.version {
        notes.push(format!(
            "{}: the run was recorded by benchaudit {}, this is benchaudit {}: its records are read and its statistics computed by this version",
            at.display(),
            manifest.version,
            ours.version
        ));
    }
    if manifest.registry_sha256 != ours.registry_sha256 {
        notes.push(format!(
            "{}: the run was recorded on task registry {}, this binary's is {}: its tasks may not be the ones this binary knows by the same names",
            at.display(),
            manifest.registry_sha256,
            ours.registry_sha256
        ));
    }
    Ok(notes)
}

/// Reads a run directory: `episodes.jsonl` under the ledger's rules (a torn last line is
/// skipped and noted, a retried attempt superseded; any other repeated key, unreadable
/// complete line or value no scorer writes refused), streamed, and, when present,
/// `manifest.json`, whose plan every record must belong to ([`benchaudit_runs::PlanScope`]).
///
/// Exists as the one place that decides what a readable run is.
///
/// # Errors
/// [`Error::Invalid`] when the directory, the ledger or the manifest is missing or unreadable,
/// the manifest is another tool's, the ledger is empty, a record is outside the manifest's
/// plan, or an episode key appears twice.
pub fn load_run(dir: &Path) -> Result<Loaded> {
    if !dir.is_dir() {
        return Err(Error::Invalid(format!(
            "{} is not a directory (give a run directory written by `benchaudit run`)",
            dir.display()
        )));
    }
    let file = dir.join("episodes.jsonl");
    if !file.is_file() {
        return Err(Error::Invalid(format!(
            "{} has no episodes.jsonl: not a run directory",
            dir.display()
        )));
    }
    let manifest = Manifest::read(dir)?;
    let notes = match &manifest {
        Some(m) => manifest_notes(m, dir)?,
        None => Vec::new(),
    };
    let scope = manifest.as_ref().map(Manifest::scope).unwrap_or_default();

    let mut groups: Vec<Group> = Vec::new();
    let mut group_of: HashMap<Group, usize> = HashMap::new();
    // Episodes in line order; a superseded attempt leaves a hole.
    let mut episodes: Vec<Option<Episode>> = Vec::new();
    // (group, seed) → (index in `episodes`, its line).
    let mut effective: HashMap<(usize, u64), (usize, usize)> = HashMap::new();
    let torn = scan_ledger(&file, &mut |line, r: EpisodeRecord| {
        if let Some(why) = scope.refusal(&r.key) {
            return Err(benchaudit_runs::Error::Invalid(format!(
                "{}: line {line}: episode {}: {why}: the ledger holds an episode its run did not plan; a report would mix it in",
                file.display(),
                ledger::describe(&r.key)
            )));
        }
        let group = Group {
            policy: r.key.policy,
            level: r.key.level,
            task_id: r.key.task_id,
            arm: r.key.arm,
            options_hash: r.key.options_hash,
        };
        let index = match group_of.get(&group) {
            Some(&i) => i,
            None => {
                groups.push(group.clone());
                group_of.insert(group, groups.len() - 1);
                groups.len() - 1
            }
        };
        let seed = r.key.seed;
        if let Some(&(at, first_line)) = effective.get(&(index, seed)) {
            let earlier_failed = episodes[at]
                .as_ref()
                .is_some_and(|e| e.outcome == Outcome::InfraError);
            if !earlier_failed {
                return Err(ledger::repeated_key(
                    &file,
                    line,
                    first_line,
                    &key_of(&groups[index], seed),
                ));
            }
            episodes[at] = None;
        }
        effective.insert((index, seed), (episodes.len(), line));
        let level = groups[index].level;
        episodes.push(Some(Episode {
            group: index,
            seed,
            outcome: r.outcome,
            scores: r.scores.as_ref().map(|s| (s.f1, s.judge_total)),
            coverage: r.coverage,
            reward: r.reward,
            usage: r.usage,
            payload_sha256: r.payload_sha256.filter(|_| level == Level::L0),
            error: r.error,
        }));
        Ok(())
    })
    .map_err(|e| Error::Invalid(chain(&e)))?;
    drop(effective);
    let episodes: Vec<Episode> = episodes.into_iter().flatten().collect();
    if episodes.is_empty() {
        return Err(Error::Invalid(format!(
            "{} holds no complete episode record",
            file.display()
        )));
    }
    let recorded = episodes.len();
    let arm_settings = manifest
        .as_ref()
        .and_then(|m| arm_settings(&m.config))
        .map(|v| v.into_iter().collect())
        .unwrap_or_default();
    Ok(Loaded {
        groups,
        episodes,
        arm_settings,
        notes,
        source: Source {
            planned: manifest.as_ref().and_then(|m| m.planned),
            recorded,
            being_written: benchaudit_runs::ledger::is_being_written(dir),
            run_dir: dir.display().to_string(),
            episodes_file: file.display().to_string(),
            run_tool_version: manifest.as_ref().map(|m| m.version.clone()),
            registry_sha256: manifest.map(|m| m.registry_sha256),
            torn_last_line: torn.is_some(),
        },
    })
}
