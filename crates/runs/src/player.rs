//! Who plays "the model" in a run: a rule policy, an LLM, or any [`Policy`] a caller builds.

use std::collections::HashMap;
use std::sync::Arc;

use benchaudit_agents::llm::{LlmAgent, ModelConfig};
use benchaudit_agents::{EpisodeKey, EpisodeRecord, Policy, RuleKind, RulePolicy};
use serde_json::Value;

/// A recorded episode and its policy's message log (what a replay of an LLM episode needs).
type Recorded = (EpisodeRecord, Option<Value>);

/// Makes a fresh policy for one episode (an episode never sees another's state).
type MakePolicy = dyn Fn() -> Box<dyn Policy> + Send + Sync;

/// A named maker of fresh policies: one per episode, from any thread.
///
/// Cloning is cheap (the maker is shared), so one player can sit in several plans.
#[derive(Clone)]
pub struct Player {
    /// The ledger name (`key.policy` of every record it plays).
    name: String,
    /// An LLM's configuration (endpoint, quirks, budgets; never the key): it shapes the
    /// model's episodes, so a run's manifest records it.
    model: Option<ModelConfig>,
    /// The policy factory.
    make: Arc<MakePolicy>,
    /// Episodes already played and recorded in a run ledger: the runner answers these keys
    /// from here instead of playing them again (a sharded `audit --model`, where the shards
    /// played the model's episodes and the audit reads them back).
    recorded: Option<Arc<HashMap<EpisodeKey, Recorded>>>,
}

impl std::fmt::Debug for Player {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Player").field("name", &self.name).finish()
    }
}

impl Player {
    /// Any policy: `make` is called once per episode, possibly on several threads at once.
    pub fn new(
        name: impl Into<String>,
        make: impl Fn() -> Box<dyn Policy> + Send + Sync + 'static,
    ) -> Self {
        Player {
            name: name.into(),
            model: None,
            make: Arc::new(make),
            recorded: None,
        }
    }

    /// A built-in rule policy (key-free: its decisions are known).
    pub fn rule(kind: RuleKind) -> Self {
        Player::new(kind.name(), move || Box::new(RulePolicy::new(kind)))
    }

    /// An LLM behind an OpenAI-compatible API (`provider:model`).
    pub fn model(agent: LlmAgent) -> Self {
        let model = Some(agent.config().clone());
        let mut player = Player::new(agent.name(), move || Box::new(agent.policy()));
        player.model = model;
        player
    }

    /// The ledger name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The LLM configuration, for LLM players.
    pub fn model_config(&self) -> Option<&ModelConfig> {
        self.model.as_ref()
    }

    /// A fresh policy for one episode.
    pub fn policy(&self) -> Box<dyn Policy> {
        (self.make)()
    }

    /// The same player, with its episodes among `records` (those under its name, each with
    /// its policy's message log, as `ledger::recorded_messages` reads it) answered from them
    /// by the runner instead of being played; any other episode is still played.
    #[must_use]
    pub fn with_recorded(
        mut self,
        records: impl IntoIterator<Item = (EpisodeRecord, Option<Value>)>,
    ) -> Self {
        let mine: HashMap<EpisodeKey, Recorded> = records
            .into_iter()
            .filter(|(r, _)| r.key.policy == self.name)
            .map(|(r, log)| (r.key.clone(), (r, log)))
            .collect();
        self.recorded = Some(Arc::new(mine));
        self
    }

    /// The LLM players among `players` answered from the episodes of the run ledger at `dir`
    /// (`records`, each with its message log read from the ledger's transcripts) instead of
    /// being played; rule players are returned as they are.
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] for a transcript that cannot be read.
    pub fn answered_from_ledger(
        players: Vec<Player>,
        dir: &std::path::Path,
        records: Vec<EpisodeRecord>,
    ) -> crate::Result<Vec<Player>> {
        let mut recorded = Vec::with_capacity(records.len());
        for r in records {
            let log = crate::ledger::recorded_messages(dir, &r.key)?;
            recorded.push((r, log));
        }
        Ok(players
            .into_iter()
            .map(|p| match p.model {
                Some(_) => p.with_recorded(recorded.iter().cloned()),
                None => p,
            })
            .collect())
    }

    /// The recorded episode under `key` and its message log, for a player built
    /// [`with_recorded`](Self::with_recorded).
    pub fn recorded(&self, key: &EpisodeKey) -> Option<&(EpisodeRecord, Option<Value>)> {
        self.recorded.as_deref()?.get(key)
    }
}
