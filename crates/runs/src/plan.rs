//! The run plan: players × levels × tasks × seeds × arms, as the list of episodes to play.

use benchaudit_agents::{EpisodeKey, EpisodeSpec, Level, RunOptions};
use benchaudit_comtrade::{TaskSpec, ToolText};
use serde_json::{Value, json};

use crate::ledger::Transcripts;
use crate::player::Player;

/// A cross product of episodes. An arm is one set of [`RunOptions`] (interface, submission
/// protocol, budget, reward and an optional stress arm); a plain run has one.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Who plays.
    pub players: Vec<Player>,
    /// Scaffolding levels.
    pub levels: Vec<Level>,
    /// Tasks.
    pub tasks: Vec<&'static TaskSpec>,
    /// Seeds.
    pub seeds: Vec<u64>,
    /// Option sets (arms), outermost in the episode order.
    pub arms: Vec<RunOptions>,
    /// The wording of the tools models are shown (`--tool-text`; rule policies read none).
    /// Recorded in the manifest as `tool_text`, so a resume under the other wording is
    /// refused naming the field.
    pub tool_text: ToolText,
    /// Whether the ledger keeps each episode's transcript (`--transcripts`); recorded in the
    /// manifest as `"transcripts": "none"` when it keeps none.
    pub transcripts: Transcripts,
}

/// One episode of a plan: who plays what, and the ledger key it will be recorded under.
#[derive(Debug, Clone)]
pub struct Job<'a> {
    /// Who plays.
    pub player: &'a Player,
    /// What is played.
    pub spec: EpisodeSpec,
    /// The ledger key (`spec.key(player name)`), made once so resume and record agree.
    pub key: EpisodeKey,
}

impl<'a> Job<'a> {
    /// `player` on `spec`.
    pub fn new(player: &'a Player, spec: EpisodeSpec) -> Self {
        let key = spec.key(player.name().to_string());
        Job { player, spec, key }
    }
}

impl Plan {
    /// One arm of default options (legacy interface, full submission, F1 reward, no stress).
    pub fn new(
        players: Vec<Player>,
        levels: Vec<Level>,
        tasks: Vec<&'static TaskSpec>,
        seeds: Vec<u64>,
    ) -> Self {
        Plan {
            players,
            levels,
            tasks,
            seeds,
            arms: vec![RunOptions::default()],
            tool_text: ToolText::default(),
            transcripts: Transcripts::Keep,
        }
    }

    /// The same plan keeping transcripts or not.
    #[must_use]
    pub fn with_transcripts(mut self, transcripts: Transcripts) -> Self {
        self.transcripts = transcripts;
        self
    }

    /// The same plan with models shown the tools in wording `text`.
    #[must_use]
    pub fn with_tool_text(mut self, text: ToolText) -> Self {
        self.tool_text = text;
        self
    }

    /// The same plan under `options` as its only arm.
    #[must_use]
    pub fn with_options(mut self, options: RunOptions) -> Self {
        self.arms = vec![options];
        self
    }

    /// Every episode, arms outermost, then players, levels, tasks, seeds (the ledger's order
    /// when one worker runs them).
    pub fn jobs(&self) -> Vec<Job<'_>> {
        let mut jobs = Vec::with_capacity(self.len());
        for &options in &self.arms {
            for player in &self.players {
                for &level in &self.levels {
                    for &task in &self.tasks {
                        for &seed in &self.seeds {
                            let spec = EpisodeSpec {
                                task,
                                seed,
                                level,
                                options,
                            };
                            jobs.push(Job::new(player, spec));
                        }
                    }
                }
            }
        }
        jobs
    }

    /// Number of episodes.
    pub fn len(&self) -> usize {
        self.arms.len()
            * self.players.len()
            * self.levels.len()
            * self.tasks.len()
            * self.seeds.len()
    }

    /// Whether the plan holds no episode.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The player names, in plan order.
    pub fn player_names(&self) -> Vec<String> {
        self.players.iter().map(|p| p.name().to_string()).collect()
    }

    /// The configuration a run of this plan records in its manifest: a resume must present
    /// the same. One arm is recorded as `options`, several as `arms`; LLM players add their
    /// configuration (endpoint, quirks, budgets, tool protocol; the key variable's name, never
    /// the key) under `models`.
    pub fn config(&self) -> Value {
        let mut config = json!({
            "policies": self.player_names(),
            "levels": self.levels,
            "tasks": self.tasks.iter().map(|t| t.task_id).collect::<Vec<_>>(),
            "seeds": self.seeds,
            "tool_text": self.tool_text,
        });
        match self.arms.as_slice() {
            [one] => config["options"] = json!(one),
            arms => config["arms"] = json!(arms),
        }
        let models: Vec<_> = self
            .players
            .iter()
            .filter_map(Player::model_config)
            .collect();
        if !models.is_empty() {
            config["models"] = json!(models);
        }
        if self.transcripts == Transcripts::None {
            config["transcripts"] = json!(self.transcripts.name());
        }
        config
    }
}
