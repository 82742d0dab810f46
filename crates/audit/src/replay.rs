//! Replay: the same (task, seed, policy, options) twice must give the same payload hash and the
//! same scores — every field of the record outside `timing`.

use benchaudit_agents::{EpisodeRecord, Level};
use benchaudit_comtrade::TaskSpec;
use benchaudit_runs::{Plan, Player, collect};
use serde::Serialize;

use crate::card::{Cell, Status};

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

/// Runs every episode of players × levels × tasks × seeds twice (on `threads` workers, then
/// on one) and compares.
pub fn run(
    players: Vec<Player>,
    levels: &[Level],
    tasks: &[&'static TaskSpec],
    seeds: &[u64],
    threads: usize,
) -> Replay {
    let plan = Plan::new(players, levels.to_vec(), tasks.to_vec(), seeds.to_vec());
    let jobs = plan.jobs();
    let first = collect(&jobs, threads);
    let second = collect(&jobs, 1);
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

/// The replay cell of the card.
pub fn cell(r: &Replay) -> Cell {
    if r.mismatches.is_empty() {
        Cell {
            status: Status::Pass,
            evidence: format!(
                "{} episodes replayed bit-for-bit (records outside timing identical).",
                r.episodes
            ),
        }
    } else {
        Cell {
            status: Status::Fail,
            evidence: format!(
                "{} of {} episodes differ on replay: {}",
                r.mismatches.len(),
                r.episodes,
                r.mismatches.join("; ")
            ),
        }
    }
}
