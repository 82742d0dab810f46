//! Running a plan into a ledger: resume, run what is missing in parallel, record each episode
//! as it finishes.

use std::path::Path;

use benchaudit_agents::EpisodeRecord;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::ledger::{Ledger, Manifest};
use crate::plan::{Job, Plan};
use crate::runner::run_jobs;

/// What [`execute`] reports while it works, for the caller to show (the library prints
/// nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The ledger is open: episodes of the plan already recorded, episodes to run now, and
    /// whether a torn last line (an interrupted write) was discarded.
    Started {
        /// Already recorded (skipped).
        recorded: usize,
        /// To run.
        to_run: usize,
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

/// Runs every episode of `plan` missing from the ledger at `dir` (created under `config`,
/// or resumed when it holds the same configuration) on `threads` workers, and returns all of
/// the run's records, old and new.
///
/// # Errors
/// [`Error::Invalid`] for a locked directory or one holding another configuration;
/// [`Error::Corrupt`] for a damaged ledger; IO errors while recording.
pub fn execute(
    dir: &Path,
    config: Value,
    plan: &Plan,
    threads: usize,
    progress: &mut dyn FnMut(Progress),
) -> Result<Vec<EpisodeRecord>> {
    let mut ledger = Ledger::open(dir, &Manifest::new(config)?)?;
    let work: Vec<Job<'_>> = plan
        .jobs()
        .into_iter()
        .filter(|j| !ledger.is_done(&j.key))
        .collect();
    let total = work.len();
    progress(Progress::Started {
        recorded: plan.len() - total,
        to_run: total,
        discarded_torn_line: ledger.discarded > 0,
    });
    let mut new_records = Vec::with_capacity(total);
    run_jobs(&work, threads, |i, run| {
        debug_assert_eq!(run.record.key, work[i].key);
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
        Ok::<(), Error>(())
    })?;
    let mut all = std::mem::take(&mut ledger.existing);
    all.extend(new_records);
    Ok(all)
}
