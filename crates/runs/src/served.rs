//! Episodes played through `benchaudit serve`, recorded into a run ledger (`serve --ledger`):
//! an agent driven by hand or from someone's own stack plays over REST, MCP or OpenEnv, and
//! each accepted submission becomes an L2 record under the agent's name, so `report` reads the
//! directory like any run. One ledger, one writer: the server holds its lock while it runs.

use std::path::Path;
use std::sync::Mutex;

use benchaudit_agents::{
    AgentCounts, EpisodeKey, EpisodeRecord, EpisodeSpec, Level, Outcome, RunOptions, Timing,
    TokenUsage, Transcript,
};
use benchaudit_comtrade::{EpisodeCounts, EpisodeOptions, Submission, TaskSpec};
use benchaudit_scoring::{RewardScorer, Scores};
use serde_json::json;

use crate::error::Result;
use crate::ledger::{Ledger, Manifest};

/// A run ledger that served episodes are appended to (shared by the server's worker threads).
pub struct ServedLedger {
    ledger: Mutex<Ledger>,
}

/// The configuration a served ledger records: every episode is L2 (the agent drives the
/// tools); tasks, seeds and options are whatever the agents opened.
fn config() -> serde_json::Value {
    json!({ "command": "serve", "levels": [Level::L2] })
}

/// The ledger key of a served episode.
pub fn served_key(
    agent: &str,
    task: &'static TaskSpec,
    seed: u64,
    options: EpisodeOptions,
    reward: RewardScorer,
) -> EpisodeKey {
    EpisodeSpec {
        task,
        seed,
        level: Level::L2,
        options: RunOptions {
            episode: options,
            reward,
            stress: None,
        },
    }
    .key(agent.to_string())
}

impl ServedLedger {
    /// Opens (or resumes) the served ledger at `dir`, taking its lock.
    ///
    /// # Errors
    /// As [`Ledger::open`]: a folder another command owns, another run's ledger (naming the
    /// field), a locked or damaged ledger.
    pub fn open(dir: &Path) -> Result<ServedLedger> {
        let ledger = Ledger::open(dir, &Manifest::new(config())?)?;
        Ok(ServedLedger {
            ledger: Mutex::new(ledger),
        })
    }

    fn with<T>(&self, f: impl FnOnce(&mut Ledger) -> T) -> T {
        let mut guard = match self.ledger.lock() {
            Ok(g) => g,
            // A panic while appending leaves at worst a torn last line, which readers handle.
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }

    /// Whether the ledger already holds `key` (a second episode under it would be refused).
    pub fn holds(&self, key: &EpisodeKey) -> bool {
        self.with(|l| l.is_done(key))
    }

    /// Appends one accepted submission as a record (and an empty transcript: the calls were
    /// the agent's; the server keeps none).
    ///
    /// # Errors
    /// [`Error::Invalid`](crate::Error::Invalid) for a key already recorded; IO errors.
    pub fn record(
        &self,
        key: EpisodeKey,
        submission: &Submission,
        scores: &Scores,
        reward: f64,
        counts: EpisodeCounts,
        wall_ms: f64,
    ) -> Result<EpisodeRecord> {
        let record = EpisodeRecord {
            key,
            outcome: Outcome::Submitted,
            reward: Some(reward),
            scores: Some(scores.clone()),
            coverage: None,
            counts: AgentCounts {
                requests: counts.requests,
                duplicates_served: counts.duplicates_served,
                totals_served: counts.totals_served,
                quota_deaths: u32::from(counts.budget_exhausted > 0),
                ..AgentCounts::default()
            },
            payload_sha256: Some(benchaudit_agents::collector::payload_sha256(submission)),
            usage: TokenUsage::default(),
            error: None,
            mean_intensity: None,
            timing: Timing { wall_ms },
        };
        self.with(|l| l.append(&record, &Transcript::default()))?;
        Ok(record)
    }
}
