//! Realising intents in one concrete environment: the only domain-coupled piece.

use serde::{Deserialize, Serialize};

use crate::perturbation::Perturbation;
use crate::rng::StepRng;

/// Turns perturbation intents into concrete changes to one environment's observation.
///
/// This is where a domain enters. A trade-data adapter (`ComtradeAdapter`, in the
/// `benchaudit-comtrade` crate) realises `TransientFault { status: 429 }` as an HTTP 429
/// response, a duplicate `Corruption` as repeated rows, and `Distractor` as a totals row; this
/// crate knows none of that.
///
/// The adapter receives the *same* [`StepRng`] the policy drew from, positioned after the
/// policy's draws, so its own draws (which rows to duplicate, where to put the distractor) are
/// reproducible too. It must draw in an order that depends only on the intents, the
/// observation and the stream.
pub trait EnvironmentAdapter {
    /// What the agent sees after one step (a page, a tool result, an error response…).
    type Observation;

    /// Applies `intents`, in order, to `observation`, reporting what actually happened.
    fn realise(
        &mut self,
        intents: &[Perturbation],
        observation: Self::Observation,
        rng: &mut StepRng,
    ) -> Realised<Self::Observation>;
}

/// An observation after perturbation, with a record of what was done to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Realised<O> {
    /// The perturbed observation, to hand to the agent.
    pub observation: O,
    /// What each applied intent actually did, for the trace.
    pub applied: Vec<Realisation>,
}

/// What one intent actually did to one observation: the "realised perturbation" the trace
/// records and the metrics read.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Realisation {
    /// The intent that was realised.
    pub intent: Perturbation,
    /// How many units of the observation it touched (rows duplicated, units dropped; 1 for a
    /// fault or a single injected distractor; 0 if the intent happened to touch nothing).
    pub affected: u32,
}
