//! Running episodes in-process for the audit: "players" (rule stand-ins key-free, LLMs when
//! given) at chosen levels, in parallel, results in input order.

use benchaudit_agents::{
    EpisodeRecord, EpisodeSpec, Level, Policy, RuleKind, RulePolicy, RunOptions, run_episode,
};
use benchaudit_comtrade::TaskSpec;

/// Something that plays "the model": a name and a way to make a fresh policy per episode.
pub struct Player {
    /// Ledger name.
    pub name: String,
    /// Makes a fresh policy.
    pub make: Box<dyn Fn() -> Box<dyn Policy> + Send + Sync>,
}

impl Player {
    /// A rule policy as a player.
    pub fn rule(kind: RuleKind) -> Self {
        Player {
            name: kind.name().to_string(),
            make: Box::new(move || Box::new(RulePolicy::new(kind))),
        }
    }
}

/// One episode to run.
#[derive(Clone, Copy)]
pub struct Job<'a> {
    /// Who plays.
    pub player: &'a Player,
    /// What.
    pub spec: EpisodeSpec,
}

/// Runs jobs on `threads` threads; records come back in job order.
pub fn run_jobs(jobs: &[Job<'_>], threads: usize) -> Vec<EpisodeRecord> {
    let threads = threads.clamp(1, 16).min(jobs.len().max(1));
    let chunk = jobs.len().div_ceil(threads).max(1);
    let mut out: Vec<Vec<EpisodeRecord>> = Vec::new();
    std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|j| run_episode(&j.spec, (j.player.make)().as_mut()).record)
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            // A panicking episode is a bug in this crate; surface it rather than hide a result.
            match h.join() {
                Ok(v) => out.push(v),
                Err(e) => std::panic::resume_unwind(e),
            }
        }
    });
    out.into_iter().flatten().collect()
}

/// The cross product players × levels × tasks × seeds as jobs.
pub fn product<'a>(
    players: &'a [Player],
    levels: &[Level],
    tasks: &[&'static TaskSpec],
    seeds: &[u64],
    options: RunOptions,
) -> Vec<Job<'a>> {
    let mut jobs = Vec::new();
    for p in players {
        for &level in levels {
            for &task in tasks {
                for &seed in seeds {
                    jobs.push(Job {
                        player: p,
                        spec: EpisodeSpec {
                            task,
                            seed,
                            level,
                            options,
                        },
                    });
                }
            }
        }
    }
    jobs
}
