//! Recording served episodes (`serve --ledger DIR`): the server hands every accepted
//! submission to a [`Recorder`], and the binary's recorder appends it to a run ledger, so an
//! episode an agent plays through the server by hand or from its own stack feeds `report` like
//! any other run. The server stays free of ledgers: it only describes what finished.

use std::sync::Arc;

use benchaudit_comtrade::{EpisodeCounts, EpisodeOptions, Submission, TaskSpec};
use benchaudit_scoring::{RewardScorer, Scores};

/// The `agent` an episode is recorded under when its create request names none.
pub const DEFAULT_AGENT: &str = "served";

/// Longest `agent` name accepted (it becomes part of a ledger key and a file name).
pub const MAX_AGENT_LEN: usize = 64;

/// An episode whose submission was accepted and scored.
#[derive(Debug)]
pub struct Finished<'a> {
    /// Who played it (`agent` of the create request, or [`DEFAULT_AGENT`]).
    pub agent: &'a str,
    /// The task.
    pub task: &'static TaskSpec,
    /// The seed.
    pub seed: u64,
    /// Interface, submission protocol, budget override.
    pub options: EpisodeOptions,
    /// Which scorer gave `reward`.
    pub reward_scorer: RewardScorer,
    /// What was submitted (resolved and assembled).
    pub submission: &'a Submission,
    /// Both scorers.
    pub scores: &'a Scores,
    /// The primary scorer's value.
    pub reward: f64,
    /// What the episode served.
    pub counts: EpisodeCounts,
    /// Milliseconds from the episode's creation to its submission.
    pub wall_ms: f64,
}

/// Where finished episodes go. Called on the CPU pool (never on an async worker), so it may
/// write files.
pub trait Recorder: Send + Sync {
    /// Whether an episode of `agent` on (task, seed, options, scorer) may be opened: a run
    /// ledger holds one episode per key, so a key it already holds is refused at creation
    /// instead of being lost at submission. The error is the client's to read (409).
    fn admits(
        &self,
        agent: &str,
        task: &'static TaskSpec,
        seed: u64,
        options: EpisodeOptions,
        reward: RewardScorer,
    ) -> Result<(), String>;

    /// Records `finished`. An error is logged and counted; the agent still gets its scores.
    fn record(&self, finished: &Finished<'_>) -> Result<(), String>;
}

impl std::fmt::Debug for dyn Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Recorder")
    }
}

/// A shared [`Recorder`] in a [`ServerConfig`](crate::ServerConfig) (compared by identity).
#[derive(Clone, Debug)]
pub struct RecorderHandle(pub Arc<dyn Recorder>);

impl PartialEq for RecorderHandle {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for RecorderHandle {}

/// Checks an `agent` name: 1 to [`MAX_AGENT_LEN`] characters of `A-Z a-z 0-9 . _ : -`.
///
/// # Errors
/// A message saying what is allowed.
pub fn check_agent(agent: &str) -> Result<(), String> {
    let ok = !agent.is_empty()
        && agent.len() <= MAX_AGENT_LEN
        && agent
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "agent must be 1 to {MAX_AGENT_LEN} characters of A-Z, a-z, 0-9, '.', '_', ':' or '-'"
        ))
    }
}
