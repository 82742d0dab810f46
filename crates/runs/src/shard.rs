//! Deterministic shards of a run plan (issue 19): shard `I/N` holds a fixed subset of the plan's
//! episodes, chosen from the plan alone, so any scheduler (a Slurm job array, a Kubernetes
//! Indexed Job, a shell loop over machines) can run the shards and [`merge`](crate::merge::merge)
//! puts their ledgers back together.
//!
//! **The assignment.** The plan's distinct episodes (by [`EpisodeKey`]) are sorted by expected
//! cost, largest first, ties by key; each in turn goes to the shard with the least expected cost
//! so far, ties to the lowest index (greedy longest-processing-time). It reads nothing but the
//! plan: no clock, no randomness, no machine. Every episode lands in exactly one shard for any
//! N, and no shard's expected cost exceeds another's by more than one episode's.
//!
//! **The cost model** ([`expected_cost`]): an episode costs one unit per expected tool request
//! (the task's pages plus the submission) for an in-process player, and [`MODEL_WEIGHT`] units
//! per request for an LLM player, whose requests take seconds instead of microseconds.
//!
//! **The plan hash** ([`plan_sha256`]): SHA-256 over the canonical configuration and the sorted
//! list of the plan's episode keys. It does not depend on N, so every shard of a plan records
//! the same hash, and a merge recomputes it from the merged episodes to prove they are the plan.
//!
//! ```
//! use benchaudit_agents::{Level, RuleKind};
//! use benchaudit_runs::shard::{Shard, assign};
//! use benchaudit_runs::{Plan, Player};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let plan = Plan::new(
//!     vec![Player::rule(RuleKind::Oracle)],
//!     vec![Level::L1, Level::L2],
//!     benchaudit_comtrade::tasks().iter().collect(),
//!     (0..5).collect(),
//! );
//! let shard: Shard = "1/3".parse()?;
//! assert_eq!((shard.index, shard.count), (1, 3));
//! // Three shards cover the 110 episodes exactly once.
//! let sizes: Vec<usize> = Shard::all(3)?.map(|s| s.jobs(&plan).len()).collect();
//! assert_eq!(sizes.iter().sum::<usize>(), plan.len());
//! assert_eq!(assign(&plan.jobs(), 3).len(), plan.len());
//! # Ok(())
//! # }
//! ```

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use benchaudit_agents::{EpisodeKey, sha256_hex};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::ledger::canonical;
use crate::plan::{Job, Plan};

/// Most shards a plan may be split into.
pub const MAX_SHARDS: u32 = 4096;

/// Expected cost of one request of an LLM player, in units of one request of an in-process
/// (rule) player. docs/scale-out.md gives the measurement behind it: a rule request costs
/// tens of microseconds here, a local model's request about a second.
pub const MODEL_WEIGHT: u64 = 10_000;

/// Shard `index` of `count` (written `I/N`, 0 ≤ I < N ≤ [`MAX_SHARDS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Shard {
    /// Which shard, from 0.
    pub index: u32,
    /// How many shards the plan is split into.
    pub count: u32,
}

impl Shard {
    /// Shard `index` of `count`.
    ///
    /// # Errors
    /// [`Error::Invalid`] unless 0 ≤ `index` < `count` ≤ [`MAX_SHARDS`].
    pub fn new(index: u32, count: u32) -> Result<Shard> {
        if count == 0 || count > MAX_SHARDS {
            return Err(Error::Invalid(format!(
                "a plan is split into 1 to {MAX_SHARDS} shards, not {count}"
            )));
        }
        if index >= count {
            return Err(Error::Invalid(format!(
                "shard {index}/{count} does not exist: shards are numbered 0 to {} (as Slurm's SLURM_ARRAY_TASK_ID and Kubernetes' JOB_COMPLETION_INDEX are)",
                count - 1
            )));
        }
        Ok(Shard { index, count })
    }

    /// Every shard of a plan split into `count`.
    ///
    /// # Errors
    /// [`Error::Invalid`] unless 1 ≤ `count` ≤ [`MAX_SHARDS`].
    pub fn all(count: u32) -> Result<impl Iterator<Item = Shard>> {
        Shard::new(0, count)?;
        Ok((0..count).map(move |index| Shard { index, count }))
    }

    /// The episodes of `plan` this shard holds, in plan order (an episode the plan lists twice
    /// appears once).
    pub fn jobs<'a>(&self, plan: &'a Plan) -> Vec<Job<'a>> {
        let jobs = plan.jobs();
        let shards = assign(&jobs, self.count);
        let mut seen = std::collections::HashSet::new();
        jobs.into_iter()
            .zip(shards)
            .filter(|(j, s)| *s == self.index && seen.insert(j.key.clone()))
            .map(|(j, _)| j)
            .collect()
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `I/N`, e.g. `0/4` … `3/4`.
    fn from_str(s: &str) -> std::result::Result<Shard, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}` is not I/N (e.g. 0/4: the first of four shards)"))?;
        let num = |t: &str| {
            t.trim()
                .parse::<u32>()
                .map_err(|_| format!("`{s}` is not I/N: `{t}` is not a number"))
        };
        Shard::new(num(i)?, num(n)?).map_err(|e| e.to_string())
    }
}

/// Expected cost of `job` in units of one rule-player request: (task pages + 1 submission) ×
/// (1 for an in-process player, [`MODEL_WEIGHT`] for an LLM).
pub fn expected_cost(job: &Job<'_>) -> u64 {
    let requests = u64::from(job.spec.task.total_pages()) + 1;
    let weight = if job.player.model_config().is_some() {
        MODEL_WEIGHT
    } else {
        1
    };
    requests.saturating_mul(weight)
}

/// The shard (0..`count`) of each of `jobs` under the module's rule: greedy
/// longest-processing-time over the distinct keys, ties by key and then by the lowest shard.
/// A key listed twice gets its first listing's shard. `count` is clamped to 1..=[`MAX_SHARDS`].
pub fn assign(jobs: &[Job<'_>], count: u32) -> Vec<u32> {
    let count = count.clamp(1, MAX_SHARDS);
    let mut first: HashMap<&EpisodeKey, usize> = HashMap::new();
    for (i, j) in jobs.iter().enumerate() {
        first.entry(&j.key).or_insert(i);
    }
    let mut order: Vec<(u64, &EpisodeKey)> = first
        .keys()
        .map(|k| (expected_cost(&jobs[first[k]]), *k))
        .collect();
    order.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    // (load, shard), smallest first.
    let mut bins: BinaryHeap<Reverse<(u64, u32)>> = (0..count).map(|s| Reverse((0, s))).collect();
    let mut shard_of: HashMap<&EpisodeKey, u32> = HashMap::with_capacity(order.len());
    for (cost, key) in order {
        let Some(Reverse((load, s))) = bins.pop() else {
            break;
        };
        shard_of.insert(key, s);
        bins.push(Reverse((load.saturating_add(cost), s)));
    }
    jobs.iter()
        .map(|j| shard_of.get(&j.key).copied().unwrap_or(0))
        .collect()
}

/// SHA-256 (hex) over the sorted, distinct `keys` as one JSON array.
///
/// # Errors
/// A key that cannot be serialised.
pub fn keys_sha256<'a>(keys: impl IntoIterator<Item = &'a EpisodeKey>) -> Result<String> {
    let sorted: BTreeSet<&EpisodeKey> = keys.into_iter().collect();
    let text = serde_json::to_string(&sorted).map_err(Error::json("serialising episode keys"))?;
    Ok(sha256_hex(text.as_bytes()))
}

/// The plan hash: SHA-256 (hex) over `{"config": <canonical config>, "episodes": <sorted
/// distinct keys>}` as JSON (object keys sorted). Independent of N and of the plan's order.
///
/// # Errors
/// A configuration or key that cannot be serialised.
pub fn plan_sha256<'a>(
    config: &Value,
    keys: impl IntoIterator<Item = &'a EpisodeKey>,
) -> Result<String> {
    let sorted: BTreeSet<&EpisodeKey> = keys.into_iter().collect();
    let doc = json!({ "config": canonical(config)?, "episodes": sorted });
    let text = serde_json::to_string(&doc).map_err(Error::json("serialising the plan"))?;
    Ok(sha256_hex(text.as_bytes()))
}

/// What a shard's `manifest.json` records beside the run's configuration (the `shard` object):
/// which shard, the plan it is a shard of, what it holds, and the command that runs (and
/// resumes) it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardManifest {
    /// Which shard, from 0.
    pub index: u32,
    /// How many shards.
    pub count: u32,
    /// The plan hash ([`plan_sha256`]), the same in every shard of the plan.
    pub plan_sha256: String,
    /// Distinct episodes in the whole plan.
    pub plan_episodes: usize,
    /// Distinct episodes in this shard.
    pub episodes: usize,
    /// [`keys_sha256`] of this shard's episodes: a complete shard's ledger holds exactly these.
    pub episodes_sha256: String,
    /// The folder the command ran in.
    pub workdir: String,
    /// The command line that ran the shard, with `--out` made absolute: running it again in
    /// `workdir` resumes (completes) the shard.
    pub command: Vec<String>,
}

/// A shard to run, with the command line that runs it (recorded in its manifest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardRun {
    /// Which shard.
    pub shard: Shard,
    /// The command line, `--shard` and `--out` as given to it.
    pub command: Vec<String>,
    /// The folder the command runs in.
    pub workdir: PathBuf,
}

impl ShardRun {
    /// Shard `shard` run by `args` (this process's command line) into `out`, in the current
    /// folder: `--out` is recorded as an absolute path.
    ///
    /// # Errors
    /// [`Error::Io`] when the current folder cannot be read.
    pub fn from_args(
        shard: Shard,
        args: impl IntoIterator<Item = String>,
        out: &Path,
    ) -> Result<ShardRun> {
        let workdir = std::env::current_dir().map_err(Error::io("reading the current folder"))?;
        let args: Vec<String> = args.into_iter().collect();
        Ok(ShardRun {
            shard,
            command: command_for(&args, shard, &workdir.join(out)),
            workdir,
        })
    }

    /// The manifest entry of this shard of `plan` run under `config`.
    ///
    /// # Errors
    /// A configuration or key that cannot be serialised.
    pub fn manifest(&self, config: &Value, plan: &Plan) -> Result<ShardManifest> {
        let jobs = plan.jobs();
        let mine = self.shard.jobs(plan);
        let plan_keys: BTreeSet<&EpisodeKey> = jobs.iter().map(|j| &j.key).collect();
        Ok(ShardManifest {
            index: self.shard.index,
            count: self.shard.count,
            plan_sha256: plan_sha256(config, plan_keys.iter().copied())?,
            plan_episodes: plan_keys.len(),
            episodes: mine.len(),
            episodes_sha256: keys_sha256(mine.iter().map(|j| &j.key))?,
            workdir: self.workdir.display().to_string(),
            command: self.command.clone(),
        })
    }
}

impl ShardManifest {
    /// The shard it records.
    pub fn shard(&self) -> Shard {
        Shard {
            index: self.index,
            count: self.count,
        }
    }

    /// The command that completes this shard, as one shell line (`cd WORKDIR && COMMAND`).
    pub fn resume_line(&self) -> String {
        format!(
            "cd {} && {}",
            shell_quote(&self.workdir),
            shell_line(&self.command)
        )
    }

    /// The command that runs shard `index` of the same plan: this shard's command with
    /// `--shard index/N` and an `--out` beside this one's (its trailing shard number replaced,
    /// or `shard-<index>` in the same parent folder).
    pub fn sibling_line(&self, index: u32) -> String {
        let shard = Shard {
            index,
            count: self.count,
        };
        let out = self
            .out()
            .map(|o| sibling_out(&o, self.index, index))
            .unwrap_or_else(|| PathBuf::from(format!("shard-{index}")));
        let command = command_for(&self.command, shard, &out);
        format!(
            "cd {} && {}",
            shell_quote(&self.workdir),
            shell_line(&command)
        )
    }

    /// The `--out` of the recorded command.
    fn out(&self) -> Option<PathBuf> {
        let mut it = self.command.iter();
        while let Some(a) = it.next() {
            if a == "--out" {
                return it.next().map(PathBuf::from);
            }
            if let Some(v) = a.strip_prefix("--out=") {
                return Some(PathBuf::from(v));
            }
        }
        None
    }
}

/// `args` with `--shard` set to `shard` and `--out` to `out` (each added when absent).
pub fn command_for(args: &[String], shard: Shard, out: &Path) -> Vec<String> {
    let mut command = Vec::with_capacity(args.len() + 4);
    let (mut saw_shard, mut saw_out) = (false, false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--shard" | "--out" => {
                let shard_flag = a == "--shard";
                command.push(a.clone());
                command.push(if shard_flag {
                    shard.to_string()
                } else {
                    out.display().to_string()
                });
                it.next();
                if shard_flag {
                    saw_shard = true;
                } else {
                    saw_out = true;
                }
            }
            _ if a.starts_with("--shard=") => {
                command.push(format!("--shard={shard}"));
                saw_shard = true;
            }
            _ if a.starts_with("--out=") => {
                command.push(format!("--out={}", out.display()));
                saw_out = true;
            }
            _ => command.push(a.clone()),
        }
    }
    if !saw_shard {
        command.extend(["--shard".to_string(), shard.to_string()]);
    }
    if !saw_out {
        command.extend(["--out".to_string(), out.display().to_string()]);
    }
    command
}

/// The run directory of shard `to` beside `out`, the directory of shard `from`: the trailing
/// number of its name replaced when it is `from` (`shard-1` → `shard-3`, `s01` → `s03`),
/// otherwise `shard-<to>` in the same parent folder.
pub fn sibling_out(out: &Path, from: u32, to: u32) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let digits = &name[stem.len()..];
    let parent = out.parent().unwrap_or(Path::new(""));
    if !digits.is_empty() && digits.parse::<u64>().ok() == Some(u64::from(from)) {
        let width = digits.len();
        parent.join(format!("{stem}{to:0width$}"))
    } else {
        parent.join(format!("shard-{to}"))
    }
}

/// One word for a POSIX shell: unchanged when it holds only safe characters, else in single
/// quotes.
pub fn shell_quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// `args` as one shell line.
pub fn shell_line(args: &[String]) -> String {
    args.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_string()).collect()
    }

    #[test]
    fn shards_parse_and_refuse_out_of_range() {
        assert_eq!("3/4".parse::<Shard>(), Ok(Shard { index: 3, count: 4 }));
        assert_eq!(
            " 0 / 1 ".parse::<Shard>().map(|s| s.to_string()),
            Ok("0/1".into())
        );
        for bad in ["4/4", "0/0", "1", "a/4", "-1/4", "0/4097", "1/2/3"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert!("4095/4096".parse::<Shard>().is_ok());
        let e = "4/4".parse::<Shard>().unwrap_err();
        assert!(e.contains("numbered 0 to 3"), "{e}");
    }

    #[test]
    fn commands_are_rewritten_for_another_shard() {
        let args = s(&[
            "benchaudit",
            "run",
            "--shard",
            "1/4",
            "--out",
            "runs/shard-1",
            "--jobs",
            "2",
        ]);
        let out = command_for(&args, Shard { index: 3, count: 4 }, Path::new("/x/shard-3"));
        assert_eq!(
            out,
            s(&[
                "benchaudit",
                "run",
                "--shard",
                "3/4",
                "--out",
                "/x/shard-3",
                "--jobs",
                "2"
            ])
        );
        let eq = s(&["b", "--shard=1/4", "--out=o"]);
        assert_eq!(
            command_for(&eq, Shard { index: 0, count: 4 }, Path::new("p")),
            s(&["b", "--shard=0/4", "--out=p"])
        );
        assert_eq!(
            command_for(&s(&["b"]), Shard { index: 0, count: 2 }, Path::new("p")),
            s(&["b", "--shard", "0/2", "--out", "p"])
        );
        assert_eq!(
            sibling_out(Path::new("/r/shard-1"), 1, 3),
            Path::new("/r/shard-3")
        );
        assert_eq!(sibling_out(Path::new("/r/s01"), 1, 12), Path::new("/r/s12"));
        assert_eq!(
            sibling_out(Path::new("/r/mine"), 1, 2),
            Path::new("/r/shard-2")
        );
        assert_eq!(
            sibling_out(Path::new("/r/run7"), 1, 2),
            Path::new("/r/shard-2")
        );
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("--seeds=0..9"), "--seeds=0..9");
        assert_eq!(shell_quote(""), "''");
    }
}
