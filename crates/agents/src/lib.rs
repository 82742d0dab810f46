//! Agents under a controlled scaffolding level. A [`Policy`] is "the model"; the scaffolds L0,
//! L1 and L2 decide which execution-critical decisions it gets to make ([`OwnershipMap`]).
//! Rule policies play models whose decisions are known, so every claim about the scaffold can
//! be checked without an API key.
//!
//! ```
//! use benchaudit_agents::{EpisodeSpec, Level, RuleKind, RulePolicy, RunOptions, run_episode};
//! use benchaudit_comtrade::task;
//!
//! let spec = EpisodeSpec { task: task("T3_duplicates").unwrap(), seed: 0, level: Level::L2, options: RunOptions::default() };
//! let run = run_episode(&spec, &mut RulePolicy::new(RuleKind::Oracle));
//! assert_eq!(run.record.scores.unwrap().f1, 1.0);
//! ```
#![deny(missing_docs)]

pub mod collector;
pub mod digest;
pub mod level;
pub mod llm;
pub mod policy;
pub mod record;
pub mod rules;
pub mod scaffold;
pub mod tools;
pub mod transcript;

pub use digest::sha256_hex;
pub use level::{Decision, Level, Owner, OwnershipMap};
pub use policy::{
    Action, EpisodeStart, FaultContext, FaultDecision, Policy, PolicyError, Slots, Step,
    TokenUsage, ToolCall, ToolResult,
};
pub use record::{
    AgentCounts, EpisodeKey, EpisodeRecord, EpisodeSpec, Outcome, RunOptions, Timing,
};
pub use rules::{RuleKind, RulePolicy};
pub use scaffold::{EpisodeRun, run_episode};
pub use transcript::Transcript;
