//! Replay: the same (task, seed, policy, options) twice must give the same payload hash and the
//! same scores — every field of the record outside `timing`.

use benchaudit_agents::{EpisodeRecord, Level, RunOptions};
use benchaudit_comtrade::TaskSpec;
use serde::Serialize;

use crate::runs::{Player, product, run_jobs};

/// The replay verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replay {
    /// Episodes replayed.
    pub episodes: usize,
    /// Episodes whose records differed outside timing.
    pub mismatches: Vec<String>,
}

fn comparable(r: &EpisodeRecord) -> String {
    let mut v = serde_json::to_value(r).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.remove("timing");
    }
    v.to_string()
}

/// Runs every job twice (on different thread counts) and compares.
pub fn run(
    players: &[Player],
    levels: &[Level],
    tasks: &[&'static TaskSpec],
    seeds: &[u64],
    threads: usize,
) -> Replay {
    let jobs = product(players, levels, tasks, seeds, RunOptions::default());
    let first = run_jobs(&jobs, threads);
    let second = run_jobs(&jobs, 1);
    let mismatches = first
        .iter()
        .zip(&second)
        .filter(|(a, b)| comparable(a) != comparable(b))
        .map(|(a, _)| {
            format!(
                "{} {} {} seed {}",
                a.key.policy, a.key.level, a.key.task_id, a.key.seed
            )
        })
        .collect();
    Replay {
        episodes: jobs.len(),
        mismatches,
    }
}
