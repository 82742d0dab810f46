//! Running a plan into a ledger: resume, run what is missing in parallel, record each episode
//! as it finishes, and stop at a provider's refusal.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use benchaudit_agents::{EpisodeKey, EpisodeRecord, Outcome};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::ledger::{Ledger, Manifest};
use crate::plan::{Job, Plan};
use crate::runner::{Flow, run_jobs};
use crate::shard::ShardRun;

/// What [`execute`] reports while it works, for the caller to show (the library prints
/// nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The ledger is open: episodes of the plan already recorded, episodes to run now (failed
    /// attempts among them), and whether a torn last line (an interrupted write) was discarded.
    Started {
        /// Already finished (skipped).
        recorded: usize,
        /// To run.
        to_run: usize,
        /// Of those, episodes whose last record is an `infra_error` attempt (retried).
        retrying: usize,
        /// A torn last line was discarded.
        discarded_torn_line: bool,
    },
    /// One more episode is recorded.
    Recorded {
        /// Recorded so far in this call.
        done: usize,
        /// To run in this call.
        total: usize,
    },
}

impl Progress {
    /// The lines a command shows when the ledger at `out` is opened ([`Progress::Started`]):
    /// a discarded torn line, a resume, and the work about to start; none for
    /// [`Progress::Recorded`].
    pub fn started_lines(&self, out: &std::path::Path) -> Vec<String> {
        let Progress::Started {
            recorded,
            to_run,
            retrying,
            discarded_torn_line,
        } = *self
        else {
            return Vec::new();
        };
        let out = out.display();
        let mut lines = Vec::new();
        if discarded_torn_line {
            lines.push(format!(
                "note: discarded a torn last line of {out}/episodes.jsonl (an interrupted write)"
            ));
        }
        if recorded > 0 || retrying > 0 {
            let retried = if retrying > 0 {
                format!(" ({retrying} of them retried after an infra_error)")
            } else {
                String::new()
            };
            lines.push(format!(
                "resuming {out}: {} already recorded, {to_run} to run{retried}",
                episodes(recorded)
            ));
        }
        if to_run > 0 {
            lines.push(format!(
                "running {} into {out} (Ctrl-C stops it; the same command resumes)",
                episodes(to_run)
            ));
        }
        lines
    }
}

/// "1 episode", "3 episodes".
fn episodes(n: usize) -> String {
    if n == 1 {
        "1 episode".into()
    } else {
        format!("{n} episodes")
    }
}

/// What one [`execute`] call did.
#[derive(Debug, Clone)]
pub struct Executed {
    /// The effective record of every episode of the plan, in plan order (each key's last
    /// record: a retried attempt is replaced by its retry).
    pub records: Vec<EpisodeRecord>,
    /// Episodes run (and recorded) by this call.
    pub ran: usize,
    /// Of those, episodes that ended in `infra_error`: the run is incomplete, and running the
    /// same command again retries them.
    pub infra_errors: usize,
}

/// Runs every episode of `plan` not finished in the ledger at `dir` (created under `config`,
/// or resumed when it holds the same tool version and registry and an equivalent, narrower or
/// wider plan: see [`Resume`](crate::ledger::Resume)) on `threads` workers. Episodes whose last record is `infra_error` are run again. A plan that lists an
/// episode twice runs it once.
///
/// When an episode ends in a provider refusal ([`EpisodeRun::fatal`]) its record is not
/// appended (a resume runs it again), no further episode starts, the episodes already running
/// finish and are recorded, and [`Error::Fatal`] is returned.
///
/// [`EpisodeRun::fatal`]: benchaudit_agents::EpisodeRun::fatal
///
/// # Errors
/// [`Error::Invalid`] for a locked directory or one holding another run (the message names the
/// field); [`Error::Corrupt`] for a damaged ledger; [`Error::Fatal`] for a provider refusal;
/// IO errors while recording.
pub fn execute(
    dir: &Path,
    config: Value,
    plan: &Plan,
    threads: usize,
    progress: &mut dyn FnMut(Progress),
) -> Result<Executed> {
    run_into(dir, &Manifest::new(config)?, plan.jobs(), threads, progress)
}

/// [`execute`] for one shard of `plan` ([`Shard::jobs`]): the run directory holds that shard's
/// episodes only, and its manifest records the shard, the plan hash and `run`'s command (see
/// [`ShardManifest`](crate::shard::ShardManifest)). A resume must present the same shard of the
/// same plan. [`Executed::records`] are the shard's.
///
/// [`Shard::jobs`]: crate::shard::Shard::jobs
///
/// # Errors
/// As [`execute`]; a directory holding an unsharded run, another shard or a shard of another
/// plan is refused naming the field.
pub fn execute_shard(
    dir: &Path,
    config: Value,
    plan: &Plan,
    run: &ShardRun,
    threads: usize,
    progress: &mut dyn FnMut(Progress),
) -> Result<Executed> {
    let manifest = Manifest::new(config.clone())?.with_shard(run.manifest(&config, plan)?);
    run_into(dir, &manifest, run.shard.jobs(plan), threads, progress)
}

/// Runs `jobs` into the ledger at `dir` under `manifest`.
fn run_into(
    dir: &Path,
    manifest: &Manifest,
    jobs: Vec<Job<'_>>,
    threads: usize,
    progress: &mut dyn FnMut(Progress),
) -> Result<Executed> {
    let mut planned = HashSet::new();
    let unique: Vec<&Job<'_>> = jobs.iter().filter(|j| planned.insert(&j.key)).collect();
    let mut manifest = manifest.clone();
    manifest.planned = Some(unique.len());
    let mut ledger = Ledger::open(dir, &manifest)?;
    let work: Vec<Job<'_>> = unique
        .iter()
        .filter(|j| !ledger.is_done(&j.key))
        .map(|j| (*j).clone())
        .collect();
    let failed_before: HashSet<&EpisodeKey> = ledger
        .existing
        .iter()
        .filter(|r| r.outcome == Outcome::InfraError)
        .map(|r| &r.key)
        .collect();
    let retrying = work
        .iter()
        .filter(|j| failed_before.contains(&j.key))
        .count();
    let total = work.len();
    progress(Progress::Started {
        recorded: unique.len() - total,
        to_run: total,
        retrying,
        discarded_torn_line: ledger.discarded > 0,
    });
    let mut new_records = Vec::with_capacity(total);
    let mut fatal: Option<String> = None;
    run_jobs(&work, threads, |i, run| {
        debug_assert_eq!(run.record.key, work[i].key);
        if let Some(message) = run.fatal {
            // Not recorded: the episode never ran as the model would have run it.
            fatal.get_or_insert(message);
            return Ok(Flow::Stop);
        }
        ledger
            .append(&run.record, &run.transcript)
            .map_err(|e| match e {
                Error::Io { context, source } => Error::Io {
                    context: format!("recording episode {:?}: {context}", work[i].key),
                    source,
                },
                other => other,
            })?;
        new_records.push(run.record);
        progress(Progress::Recorded {
            done: new_records.len(),
            total,
        });
        Ok::<Flow, Error>(if fatal.is_some() {
            Flow::Stop
        } else {
            Flow::Continue
        })
    })?;
    let ran = new_records.len();
    if let Some(message) = fatal {
        return Err(Error::Fatal {
            message,
            recorded: ran,
            not_run: total - ran,
        });
    }
    let infra_errors = new_records
        .iter()
        .filter(|r| r.outcome == Outcome::InfraError)
        .count();
    let mut by_key: HashMap<EpisodeKey, EpisodeRecord> = std::mem::take(&mut ledger.existing)
        .into_iter()
        .map(|r| (r.key.clone(), r))
        .collect();
    for r in new_records {
        by_key.insert(r.key.clone(), r);
    }
    let records = unique
        .iter()
        .filter_map(|j| by_key.remove(&j.key))
        .collect();
    Ok(Executed {
        records,
        ran,
        infra_errors,
    })
}

#[cfg(test)]
mod tests {
    use super::Progress;

    #[test]
    fn a_resume_says_what_is_recorded_retried_and_discarded() {
        let p = Progress::Started {
            recorded: 7,
            to_run: 3,
            retrying: 2,
            discarded_torn_line: true,
        };
        let lines = p.started_lines(std::path::Path::new("runs/a"));
        assert_eq!(
            lines,
            [
                "note: discarded a torn last line of runs/a/episodes.jsonl (an interrupted write)",
                "resuming runs/a: 7 episodes already recorded, 3 to run (2 of them retried after an infra_error)",
                "running 3 episodes into runs/a (Ctrl-C stops it; the same command resumes)",
            ]
        );
        let fresh = Progress::Started {
            recorded: 0,
            to_run: 0,
            retrying: 0,
            discarded_torn_line: false,
        };
        assert!(fresh.started_lines(std::path::Path::new("x")).is_empty());
        let one = Progress::Started {
            recorded: 1,
            to_run: 1,
            retrying: 0,
            discarded_torn_line: false,
        };
        assert_eq!(
            one.started_lines(std::path::Path::new("runs/b")),
            [
                "resuming runs/b: 1 episode already recorded, 1 to run",
                "running 1 episode into runs/b (Ctrl-C stops it; the same command resumes)",
            ]
        );
        let tick = Progress::Recorded { done: 1, total: 2 };
        assert!(tick.started_lines(std::path::Path::new("x")).is_empty());
    }
}
