//! Reading a run directory: its episodes, as the report reads them, and provenance.
//!
//! The ledger is streamed ([`benchaudit_runs::scan_ledger`]): each record is reduced on the
//! spot to the few fields the statistics read, kept as columns of its group
//! ([`GroupEpisodes`]), with its key's strings kept once per group ([`Group`]), so what a
//! report holds grows with the number of groups, plus a few dozen bytes per episode, never with
//! the size of the records.

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

/// A submitted payload's SHA-256 as the 2×2 compares it: the number of its text among the
/// distinct payload texts of the run (numbered as they come), so two payloads are equal
/// exactly when their texts are, in 4 bytes an episode.
pub type PayloadKey = std::num::NonZeroU32;

/// A payload text while the ledger is read: the 32 bytes of a lowercase hex SHA-256, or the
/// text itself.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum PayloadText {
    Sha256([u8; 32]),
    Other(String),
}

/// The 32 bytes of a lowercase 64-digit hex text.
fn sha256_bytes(hex: &str) -> Option<[u8; 32]> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let hex = hex.as_bytes();
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (o, pair) in out.iter_mut().zip(hex.chunks(2)) {
        *o = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

/// The values of one optional field of a group's episodes: none stored while every episode
/// lacks it, else one per episode (`NaN` for an episode without it: a ledger's JSON holds no
/// NaN, and every reader drops a value that is not finite).
#[derive(Debug, Clone, Default, PartialEq)]
struct Column(Vec<f64>);

impl Column {
    /// Appends the value of episode `at` (the column's length before it when stored).
    fn push(&mut self, at: usize, v: Option<f64>) {
        match v {
            Some(v) => {
                self.0.resize(at, f64::NAN);
                self.0.push(v);
            }
            None if !self.0.is_empty() => self.0.push(f64::NAN),
            None => {}
        }
    }

    fn get(&self, i: usize) -> Option<f64> {
        self.0.get(i).copied().filter(|v| !v.is_nan())
    }

    fn reorder(&mut self, order: &[usize]) {
        if !self.0.is_empty() {
            self.0 = order
                .iter()
                .map(|&i| self.0.get(i).copied().unwrap_or(f64::NAN))
                .collect();
        }
    }
}

/// Token usage over the episodes one metric uses (not infra errors, the metric recorded):
/// prompt tokens, completion tokens, and whether any of them used a model at all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Prompt tokens (wrapping, as `+=` on u64 in a release build).
    pub input: u64,
    /// Completion tokens.
    pub output: u64,
    /// Some episode had tokens or model requests.
    pub any: bool,
}

const METRICS: [Metric; 4] = [Metric::F1, Metric::Judge, Metric::Coverage, Metric::Reward];

fn metric_index(m: Metric) -> usize {
    METRICS.iter().position(|x| *x == m).unwrap_or(0)
}

/// What a report reads of a record besides its key.
struct Reduced {
    outcome: Outcome,
    scores: Option<(f64, f64)>,
    coverage: Option<f64>,
    reward: Option<f64>,
    usage: TokenUsage,
}

/// One group's episodes, ascending seed, each seed once, as columns: what a report reads of
/// each (how it ended, its scores, coverage, reward, and at L0 its payload hash) and its line,
/// with the group's token usage summed.
///
/// Exists so a report keeps a few dozen bytes of each episode instead of its whole record:
/// 8 for the seed, 4 for the line, 1 for the outcome, 16 for the two scores, 8 more for each of
/// coverage and reward when the group records them and the metric may read them, 4 for the
/// payload hash at L0.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GroupEpisodes {
    seeds: Vec<u64>,
    lines: Vec<u32>,
    outcomes: Vec<Outcome>,
    /// `scores.f1`, `NaN` when unscored.
    f1: Vec<f64>,
    /// `scores.judge_total`, `NaN` when unscored.
    judge: Vec<f64>,
    coverage: Column,
    reward: Column,
    /// At L0 only.
    payloads: Vec<Option<PayloadKey>>,
    /// Per metric ([`METRICS`]), the usage of the episodes it uses.
    tokens: [Tokens; 4],
}

impl GroupEpisodes {
    /// Episodes.
    #[must_use]
    pub fn len(&self) -> usize {
        self.seeds.len()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.seeds.is_empty()
    }

    /// Seeds, ascending.
    #[must_use]
    pub fn seeds(&self) -> &[u64] {
        &self.seeds
    }

    /// The ledger line of episode `i` (its effective record's): ledger order.
    #[must_use]
    pub fn line(&self, i: usize) -> u32 {
        self.lines[i]
    }

    /// How episode `i` ended.
    #[must_use]
    pub fn outcome(&self, i: usize) -> Outcome {
        self.outcomes[i]
    }

    /// `(scores.f1, scores.judge_total)` of episode `i` when scored.
    #[must_use]
    pub fn scores(&self, i: usize) -> Option<(f64, f64)> {
        let (f1, judge) = (self.f1[i], self.judge[i]);
        (!f1.is_nan() || !judge.is_nan()).then_some((f1, judge))
    }

    /// Episode `i`'s value of `metric` ([`Metric::of`] on its record).
    #[must_use]
    pub fn metric(&self, i: usize, metric: Metric) -> Option<f64> {
        metric.of_parts(
            self.outcomes[i],
            self.scores(i),
            self.coverage.get(i),
            self.reward.get(i),
        )
    }

    /// The payload hash of episode `i` (L0 only).
    #[must_use]
    pub fn payload(&self, i: usize) -> Option<PayloadKey> {
        self.payloads.get(i).copied().flatten()
    }

    /// The token usage of the episodes `metric` uses.
    #[must_use]
    pub fn tokens(&self, metric: Metric) -> Tokens {
        self.tokens[metric_index(metric)]
    }

    /// Keeps only what `metric` and the sections that read scores need: a run reported on F1
    /// or the judge does not hold coverage and reward.
    pub fn keep_for(&mut self, metric: Metric) {
        if metric != Metric::Coverage {
            self.coverage = Column::default();
        }
        if metric != Metric::Reward {
            self.reward = Column::default();
        }
    }

    fn push(
        &mut self,
        seed: u64,
        line: u32,
        r: &Reduced,
        l0: Option<Option<PayloadKey>>,
        keep: &[Metric],
    ) {
        let at = self.seeds.len();
        self.seeds.push(seed);
        self.lines.push(line);
        self.outcomes.push(r.outcome);
        let scores = r.scores;
        self.f1.push(scores.map_or(f64::NAN, |s| s.0));
        self.judge.push(scores.map_or(f64::NAN, |s| s.1));
        if keep.contains(&Metric::Coverage) {
            self.coverage.push(at, r.coverage);
        }
        if keep.contains(&Metric::Reward) {
            self.reward.push(at, r.reward);
        }
        if let Some(payload) = l0 {
            self.payloads.push(payload);
        }
        let u = &r.usage;
        if r.outcome != Outcome::InfraError
            && (u.prompt_tokens != 0 || u.completion_tokens != 0 || u.requests != 0)
        {
            for (t, m) in self.tokens.iter_mut().zip(METRICS) {
                if m.of_parts(r.outcome, scores, r.coverage, r.reward)
                    .is_some()
                {
                    t.input = t.input.wrapping_add(u.prompt_tokens);
                    t.output = t.output.wrapping_add(u.completion_tokens);
                    t.any = true;
                }
            }
        }
    }

    /// The episodes at `order` (indices), in that order.
    fn reorder(&mut self, order: &[usize]) {
        fn pick<T: Copy>(v: &[T], order: &[usize]) -> Vec<T> {
            order.iter().map(|&i| v[i]).collect()
        }
        self.seeds = pick(&self.seeds, order);
        self.lines = pick(&self.lines, order);
        self.outcomes = pick(&self.outcomes, order);
        self.f1 = pick(&self.f1, order);
        self.judge = pick(&self.judge, order);
        self.coverage.reorder(order);
        self.reward.reorder(order);
        if !self.payloads.is_empty() {
            self.payloads = pick(&self.payloads, order);
        }
    }
}

/// A run directory's episodes and provenance.
///
/// Exists so loading (IO, validation) is separate from computing (pure).
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The groups episodes belong to, in order of first appearance.
    pub groups: Vec<Group>,
    /// The effective episode of every key, by group (`episodes[g]` are `groups[g]`'s): a
    /// retried `infra_error` attempt is replaced by its retry, which takes its line
    /// (`benchaudit_runs::ledger`'s rules).
    pub episodes: Vec<GroupEpisodes>,
    /// Provenance.
    pub source: Source,
    /// The quota setting of each A/B arm by options hash, when the run is an A/B design
    /// `benchaudit ab` wrote ([`benchaudit_runs::arm_settings`] of its manifest); empty
    /// otherwise.
    pub arm_settings: BTreeMap<String, ArmSetting>,
    /// What the reader should know that is not an error: a manifest written by another
    /// version of benchaudit or on another task registry.
    pub notes: Vec<String>,
    /// What went wrong, by the line of an effective record that says.
    errors: BTreeMap<u32, String>,
}

impl Loaded {
    /// Effective episodes.
    #[must_use]
    pub fn episode_count(&self) -> usize {
        self.episodes.iter().map(GroupEpisodes::len).sum()
    }

    /// The error the record at `line` holds, if any.
    #[must_use]
    pub fn error_at(&self, line: u32) -> Option<&str> {
        self.errors.get(&line).map(String::as_str)
    }

    /// Drops every payload hash (once the 2×2 is computed).
    pub fn drop_payloads(&mut self) {
        for e in &mut self.episodes {
            e.payloads = Vec::new();
        }
    }

    /// Keeps of every episode only what `metric` and the scores' sections read
    /// ([`GroupEpisodes::keep_for`]).
    pub fn keep_for(&mut self, metric: Metric) {
        for e in &mut self.episodes {
            e.keep_for(metric);
        }
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

/// Applies the attempt rule to each group's records (kept in ledger order): a key may repeat
/// only while its effective record is `infra_error`, the repeat superseding it. Sorts every
/// group by seed, keeping each key's effective record, and returns the lines of the superseded
/// records, or the first repeat (by line) that breaks the rule: (its line, the line of the
/// record it repeats, group, seed), as a ledger read line by line stops at it.
fn resolve_attempts(
    episodes: &mut [GroupEpisodes],
) -> std::result::Result<Vec<u32>, (u32, u32, usize, u64)> {
    let mut superseded = Vec::new();
    let mut first_violation: Option<(u32, u32, usize, u64)> = None;
    for (g, e) in episodes.iter_mut().enumerate() {
        let mut order: Vec<usize> = (0..e.len()).collect();
        // Stable: a key's records stay in line order.
        order.sort_by_key(|&i| e.seeds[i]);
        let mut keep: Vec<usize> = Vec::with_capacity(order.len());
        let mut i = 0;
        while i < order.len() {
            let seed = e.seeds[order[i]];
            let mut effective = order[i];
            let mut j = i + 1;
            while j < order.len() && e.seeds[order[j]] == seed {
                let repeat = order[j];
                if e.outcomes[effective] == Outcome::InfraError {
                    superseded.push(e.lines[effective]);
                    effective = repeat;
                } else {
                    let found = (e.lines[repeat], e.lines[effective], g, seed);
                    if first_violation.is_none_or(|v| found.0 < v.0) {
                        first_violation = Some(found);
                    }
                    break;
                }
                j += 1;
            }
            while j < order.len() && e.seeds[order[j]] == seed {
                j += 1;
            }
            keep.push(effective);
            i = j;
        }
        if keep.len() != e.len() || keep.iter().enumerate().any(|(a, &b)| a != b) {
            e.reorder(&keep);
        }
    }
    match first_violation {
        Some(v) => Err(v),
        None => Ok(superseded),
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
    load_run_for(dir, &METRICS)
}

/// [`load_run`] for a report on one of `metrics`: coverage and reward are kept only when
/// they are among them (F1 and the judge always are, for the scorers' sections).
///
/// # Errors
/// As [`load_run`].
pub fn load_run_for(dir: &Path, metrics: &[Metric]) -> Result<Loaded> {
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
    // Each group's records in line order (a key's repeats included: resolved after the scan).
    let mut episodes: Vec<GroupEpisodes> = Vec::new();
    let mut errors: BTreeMap<u32, String> = BTreeMap::new();
    // Distinct payload texts, numbered from 1 (only while reading).
    let mut payloads: HashMap<PayloadText, PayloadKey> = HashMap::new();
    let scanned = scan_ledger(&file, &mut |line, r: EpisodeRecord| {
        if let Some(why) = scope.refusal(&r.key) {
            return Err(benchaudit_runs::Error::Invalid(format!(
                "{}: line {line}: episode {}: {why}: the ledger holds an episode its run did not plan; a report would mix it in",
                file.display(),
                ledger::describe(&r.key)
            )));
        }
        let line = u32::try_from(line).map_err(|_| {
            benchaudit_runs::Error::Invalid(format!(
                "{}: line {line}: a report reads at most {} lines of a ledger",
                file.display(),
                u32::MAX
            ))
        })?;
        let seed = r.key.seed;
        let reduced = Reduced {
            outcome: r.outcome,
            scores: r.scores.as_ref().map(|s| (s.f1, s.judge_total)),
            coverage: r.coverage,
            reward: r.reward,
            usage: r.usage,
        };
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
                episodes.push(GroupEpisodes::default());
                group_of.insert(group, groups.len() - 1);
                groups.len() - 1
            }
        };
        let l0 = match (groups[index].level, r.payload_sha256.as_deref()) {
            (Level::L0, Some(p)) => {
                let text = match sha256_bytes(p) {
                    Some(bytes) => PayloadText::Sha256(bytes),
                    None => PayloadText::Other(p.to_string()),
                };
                let next = u32::try_from(payloads.len() + 1)
                    .ok()
                    .and_then(PayloadKey::new)
                    .ok_or_else(|| {
                        benchaudit_runs::Error::Invalid(format!(
                            "{}: line {line}: more distinct payload hashes than a report counts",
                            file.display()
                        ))
                    })?;
                Some(Some(*payloads.entry(text).or_insert(next)))
            }
            (Level::L0, None) => Some(None),
            _ => None,
        };
        episodes[index].push(seed, line, &reduced, l0, metrics);
        if let Some(e) = r.error {
            errors.insert(line, e);
        }
        Ok(())
    });
    drop(payloads);
    // A key repeated against the rules stops a line-by-line read where it is, before any
    // later line: it comes first.
    let superseded = resolve_attempts(&mut episodes).map_err(|(line, first_line, g, seed)| {
        Error::Invalid(chain(&ledger::repeated_key(
            &file,
            line as usize,
            first_line as usize,
            &key_of(&groups[g], seed),
        )))
    })?;
    let torn = scanned.map_err(|e| Error::Invalid(chain(&e)))?;
    for line in superseded {
        errors.remove(&line);
    }
    let recorded: usize = episodes.iter().map(GroupEpisodes::len).sum();
    if recorded == 0 {
        return Err(Error::Invalid(format!(
            "{} holds no complete episode record",
            file.display()
        )));
    }
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
        errors,
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use benchaudit_testkit::{record, template_record, write_ledger};

    #[test]
    fn payload_hashes_compare_as_their_text() {
        let hex = "693dbcfe844c6df5fea925221d165188afdddd7a0dd4d13df9c00675516ab794";
        let bytes = sha256_bytes(hex).unwrap();
        assert_eq!(bytes[0], 0x69);
        assert_eq!(bytes[31], 0x94);
        assert_eq!(
            sha256_bytes(&hex.to_uppercase()),
            None,
            "another text, not the same"
        );
        assert_eq!(sha256_bytes(&hex[1..]), None);
        assert_eq!(sha256_bytes(&format!("{}g", &hex[1..])), None);
    }

    #[test]
    fn a_column_stores_nothing_until_a_value_comes() {
        let mut c = Column::default();
        c.push(0, None);
        c.push(1, None);
        assert!(c.0.is_empty());
        c.push(2, Some(0.5));
        c.push(3, None);
        assert_eq!(c.0.len(), 4);
        assert_eq!(
            (c.get(0), c.get(2), c.get(3), c.get(9)),
            (None, Some(0.5), None, None)
        );
        c.reorder(&[2, 0]);
        assert_eq!((c.get(0), c.get(1)), (Some(0.5), None));
    }

    #[test]
    fn retries_replace_their_attempt_by_seed_and_a_finished_key_may_not_repeat() {
        let t = template_record();
        let ep = |task: &str, seed: u64, f1: f64| record(&t, "oracle", task, seed, "none", f1);
        let failed = |task: &str, seed: u64| {
            let mut r = ep(task, seed, 0.0);
            r["outcome"] = "infra_error".into();
            r["scores"] = serde_json::Value::Null;
            r["error"] = "boom".into();
            r
        };
        let dir = tempfile::tempdir().unwrap();
        // Line 1: seed 3 fails; lines 2–3: seeds 1 and 0; line 4: seed 3's retry.
        let lines = [
            failed("T1_single_page", 3),
            ep("T1_single_page", 1, 0.5),
            ep("T1_single_page", 0, 1.0),
            ep("T1_single_page", 3, 0.25),
        ];
        write_ledger(dir.path(), &lines);
        let loaded = load_run(dir.path()).unwrap();
        assert_eq!(loaded.groups.len(), 1);
        let e = &loaded.episodes[0];
        assert_eq!(e.seeds(), [0, 1, 3]);
        assert_eq!((0..3).map(|i| e.line(i)).collect::<Vec<_>>(), [3, 2, 4]);
        assert_eq!(e.metric(2, Metric::F1), Some(0.25));
        assert_eq!(loaded.error_at(1), None, "the attempt's error went with it");
        assert_eq!(loaded.episode_count(), 3);
        // A key that finished may not come again: the error names the repeat and the record it
        // repeats, as a line-by-line read would.
        let mut twice = lines.to_vec();
        twice.push(ep("T1_single_page", 1, 0.5));
        twice.push(ep("T1_single_page", 0, 1.0));
        write_ledger(dir.path(), &twice);
        let err = load_run(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("line 5:") && err.contains("line 2 already"),
            "{err}"
        );
    }
}
