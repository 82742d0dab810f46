//! Ownership measured by intervention: the benchmark's own orchestration (τ²'s orchestrator
//! with its shipped agent and user simulator, AgentDojo's shipped pipeline) is driven by
//! scripted models that emit the same turns as an otherwise identical base run, except for
//! one variation each (two tool calls in one message, malformed arguments, an unknown tool,
//! …). The `intervene` hook reports what the harness decided and the reward of both runs;
//! this module reads who owns each decision off that by a fixed rule.
//!
//! Decision rules:
//! * The **measured owner** of a decision is read off what the harness did with the
//!   variation ([`owner_of`]): the model's action stood (both calls executed, the error
//!   returned to the model, the conversation continued, its message taken as its final
//!   answer) → the **model**; the harness
//!   overrode it (truncated, ended the run as fatal, retried, stopped at its limit) → the
//!   **harness**; the simulated user ended the run → the **user**.
//! * The reward **moved** when the varied run's reward differs from the base run's, or the
//!   varied run has none (it raised before scoring): the harness's decision then decides the
//!   score of an otherwise identical run.
//! * **Ownership completeness** passes iff every decision the benchmark claims to measure of
//!   the agent (the hook says which: `claimed`) is measured model-owned; it fails naming each
//!   claimed decision the harness or the user owns and whether the reward moved; it is not
//!   probed when the target has no `intervene` hook or the hook fails. Non-degeneracy (that the
//!   model's choices on a decision it owns spread the outcome) needs a model's runs and is not
//!   read here.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::table::Benchmark;
use super::{TrajectoriesConfig, TrajectoryPlayer, Unit};
use crate::card::{Cell, Status};

/// Who makes a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Owner {
    /// The model (the agent's own turns decide).
    Model,
    /// The harness (orchestrator, scaffold, pipeline).
    Harness,
    /// The simulated user.
    User,
}

impl Owner {
    /// How the card prints it.
    pub fn label(self) -> &'static str {
        match self {
            Owner::Model => "model",
            Owner::Harness => "harness",
            Owner::User => "user",
        }
    }
}

/// What the harness did with a variation (the hook's `outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Every call of the message was executed.
    ExecutedAll,
    /// Only the first call was executed.
    ExecutedFirst,
    /// No call was executed.
    ExecutedNone,
    /// The error went back to the model and the run went on.
    Forgiven,
    /// The run ended at the error (an exception, an abort).
    Fatal,
    /// The harness asked the model again.
    Retried,
    /// The run went on after the turn.
    Continued,
    /// The harness ended the run (its step or iteration limit, or the turn ended it).
    EndedByHarness,
    /// The simulated user ended the run.
    EndedByUser,
    /// The model's turn ended the run (AgentDojo reads any message without a call as the final
    /// answer).
    EndedByTurn,
}

impl Outcome {
    /// How the card prints it.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::ExecutedAll => "executed every call",
            Outcome::ExecutedFirst => "executed the first call only",
            Outcome::ExecutedNone => "executed no call",
            Outcome::Forgiven => "returned the error to the model and went on",
            Outcome::Fatal => "ended the run (fatal)",
            Outcome::Retried => "asked the model again",
            Outcome::Continued => "went on",
            Outcome::EndedByHarness => "ended the run",
            Outcome::EndedByUser => "the user ended the run",
            Outcome::EndedByTurn => "took the message as the final answer and ended the run",
        }
    }
}

/// The owner a harness outcome shows.
pub fn owner_of(outcome: Outcome) -> Owner {
    match outcome {
        Outcome::ExecutedAll | Outcome::Forgiven | Outcome::Continued | Outcome::EndedByTurn => {
            Owner::Model
        }
        Outcome::EndedByUser => Owner::User,
        Outcome::ExecutedFirst
        | Outcome::ExecutedNone
        | Outcome::Fatal
        | Outcome::Retried
        | Outcome::EndedByHarness => Owner::Harness,
    }
}

/// One decision as the hook reports it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Observed {
    /// Decision name (`parallel_calls`, `malformed_arguments`, …).
    pub decision: String,
    /// The variation, in words.
    pub variation: String,
    /// Who the benchmark's documentation says decides it.
    pub declared: Owner,
    /// Whether the benchmark claims to measure the agent on it.
    pub claimed: bool,
    /// What the harness did.
    pub outcome: Outcome,
    /// The varied run's reward (none: the run raised before scoring).
    pub reward: Option<f64>,
    /// How the varied run ended.
    #[serde(default)]
    pub termination: Option<String>,
    /// Whether the environment was kept or reset between the harness's retries (where it
    /// retries).
    #[serde(default)]
    pub environment: Option<String>,
    /// What the hook saw, in words (the exception, the calls executed).
    #[serde(default)]
    pub detail: Option<String>,
}

/// The `intervene` hook's answer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Interventions {
    /// The shipped agent implementation driven (τ²'s `llm_agent`, AgentDojo's pipeline).
    pub agent: String,
    /// The user simulator (τ²'s `user_simulator`; none for AgentDojo).
    #[serde(default)]
    pub user: Option<String>,
    /// The base run: group, unit, its reward and termination.
    pub base: Value,
    /// The base run's reward.
    pub base_reward: Option<f64>,
    /// Every decision probed.
    pub decisions: Vec<Observed>,
}

/// One decision as the card shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecisionResult {
    /// Decision name.
    pub decision: String,
    /// The variation.
    pub variation: String,
    /// Declared owner.
    pub declared: Owner,
    /// Measured owner.
    pub measured: Owner,
    /// Claimed by the benchmark.
    pub claimed: bool,
    /// What the harness did.
    pub outcome: Outcome,
    /// Base run's reward.
    pub base_reward: Option<f64>,
    /// Varied run's reward.
    pub reward: Option<f64>,
    /// The reward moved (differs from the base run's, or the varied run has none).
    pub moved: bool,
    /// How the varied run ended.
    pub termination: Option<String>,
    /// Environment kept or reset between retries.
    pub environment: Option<String>,
    /// What the hook saw.
    pub detail: Option<String>,
}

/// Ownership measured on one target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OwnershipResult {
    /// The shipped agent implementation driven.
    pub agent: Option<String>,
    /// The user simulator.
    pub user: Option<String>,
    /// The base run.
    pub base: Value,
    /// Per decision.
    pub decisions: Vec<DecisionResult>,
    /// Ownership completeness.
    pub cell: Cell,
    /// The stderr tail of a failed intervene hook (moved to the audit's record of failures).
    #[serde(skip)]
    pub hook_stderr: Option<String>,
}

impl OwnershipResult {
    /// Nothing measured, for one cause.
    pub fn not_probed(why: &str) -> Self {
        OwnershipResult {
            agent: None,
            user: None,
            base: Value::Null,
            decisions: Vec::new(),
            cell: Cell::not_probed(why),
            hook_stderr: None,
        }
    }

    /// Decisions the simulated user, not the agent, completes.
    pub fn user_owned(&self) -> Vec<&DecisionResult> {
        self.decisions
            .iter()
            .filter(|d| d.measured == Owner::User)
            .collect()
    }
}

/// Reads the hook's answer into decisions and the ownership cell.
pub fn read(answer: Interventions) -> OwnershipResult {
    let decisions: Vec<DecisionResult> = answer
        .decisions
        .into_iter()
        .map(|o| {
            let moved = match (answer.base_reward, o.reward) {
                (Some(b), Some(r)) => (b - r).abs() > f64::EPSILON,
                _ => true,
            };
            DecisionResult {
                measured: owner_of(o.outcome),
                decision: o.decision,
                variation: o.variation,
                declared: o.declared,
                claimed: o.claimed,
                outcome: o.outcome,
                base_reward: answer.base_reward,
                reward: o.reward,
                moved,
                termination: o.termination,
                environment: o.environment,
                detail: o.detail,
            }
        })
        .collect();
    let cell = cell(&decisions);
    OwnershipResult {
        agent: Some(answer.agent),
        user: answer.user,
        base: answer.base,
        decisions,
        cell,
        hook_stderr: None,
    }
}

fn cell(decisions: &[DecisionResult]) -> Cell {
    let claimed: Vec<&DecisionResult> = decisions.iter().filter(|d| d.claimed).collect();
    if claimed.is_empty() {
        return Cell::not_probed("the intervene hook names no decision the benchmark claims");
    }
    let lost: Vec<&&DecisionResult> = claimed
        .iter()
        .filter(|d| d.measured != Owner::Model)
        .collect();
    let model: Vec<String> = claimed
        .iter()
        .filter(|d| d.measured == Owner::Model)
        .map(|d| d.decision.clone())
        .collect();
    if lost.is_empty() {
        return Cell {
            status: Status::Pass,
            evidence: format!(
                "measured by intervention: the model owns every claimed decision ({})",
                model.join(", ")
            ),
        };
    }
    let parts: Vec<String> = lost
        .iter()
        .map(|d| {
            format!(
                "{} ({}): the {} {}{}",
                d.decision,
                d.variation,
                if d.measured == Owner::User {
                    "simulated user"
                } else {
                    "harness"
                },
                d.outcome.label(),
                if d.moved {
                    ", and the reward of the otherwise identical run moved"
                } else {
                    ", the reward unchanged"
                }
            )
        })
        .collect();
    Cell {
        status: Status::Fail,
        evidence: format!(
            "measured by intervention: {} of {} claimed decisions are not the model's: {}",
            lost.len(),
            claimed.len(),
            parts.join("; ")
        ),
    }
}

/// Asks the `intervene` hook (on the first probed unit of the first group that has units)
/// and reads its answer; not probed without the hook or when it fails.
pub fn measure(
    player: &dyn TrajectoryPlayer,
    benchmark: Benchmark,
    probed: &[(String, Vec<Unit>, usize)],
    config: &TrajectoriesConfig,
) -> OwnershipResult {
    let _ = config;
    let groups: Vec<&String> = probed.iter().map(|(g, _, _)| g).collect();
    let request = json!({"benchmark": benchmark.name(), "groups": groups});
    match player.intervene(&request) {
        None => OwnershipResult::not_probed("the target has no intervene hook"),
        Some(Err(f)) => {
            let mut r = OwnershipResult::not_probed(&super::failure_text("intervene", &f));
            r.hook_stderr = Some(f.stderr_tail);
            r
        }
        Some(Ok(v)) => match serde_json::from_value::<Interventions>(v) {
            Ok(a) => read(a),
            Err(e) => OwnershipResult::not_probed(&format!(
                "the intervene hook's answer does not fit the protocol: {e}"
            )),
        },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn observed(decision: &str, outcome: Outcome, claimed: bool, reward: Option<f64>) -> Observed {
        Observed {
            decision: decision.into(),
            variation: format!("{decision} variation"),
            declared: Owner::Model,
            claimed,
            outcome,
            reward,
            termination: None,
            environment: None,
            detail: None,
        }
    }

    fn answer(decisions: Vec<Observed>) -> Interventions {
        Interventions {
            agent: "llm_agent".into(),
            user: Some("user_simulator".into()),
            base: Value::Null,
            base_reward: Some(1.0),
            decisions,
        }
    }

    #[test]
    fn a_fatal_claimed_decision_fails_ownership_and_says_the_reward_moved() {
        let r = read(answer(vec![
            observed("parallel_calls", Outcome::ExecutedAll, true, Some(1.0)),
            observed("malformed_arguments", Outcome::Fatal, true, None),
            observed("user_ends_early", Outcome::EndedByUser, false, Some(0.0)),
        ]));
        assert_eq!(r.cell.status, Status::Fail);
        assert!(
            r.cell.evidence.contains(
                "malformed_arguments (malformed_arguments variation): the harness ended the run (fatal), and the reward of the otherwise identical run moved"
            ),
            "{}",
            r.cell.evidence
        );
        assert!(r.cell.evidence.contains("1 of 2 claimed"));
        assert_eq!(r.user_owned().len(), 1);
        assert!(!r.decisions[0].moved);
    }

    #[test]
    fn every_claimed_decision_model_owned_passes() {
        let r = read(answer(vec![
            observed("unknown_tool", Outcome::Forgiven, true, Some(1.0)),
            observed("step_limit", Outcome::EndedByHarness, false, Some(0.0)),
        ]));
        assert_eq!(r.cell.status, Status::Pass, "{}", r.cell.evidence);
        assert_eq!(r.decisions[1].measured, Owner::Harness);
        let none = read(answer(vec![observed(
            "step_limit",
            Outcome::EndedByHarness,
            false,
            None,
        )]));
        assert_eq!(none.cell.status, Status::NotProbed);
    }
}
