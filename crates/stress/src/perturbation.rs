//! What an adversary *intends* to do to one environment step.

use serde::{Deserialize, Serialize};

/// One perturbation an [`AdversaryPolicy`](crate::AdversaryPolicy) asks for.
///
/// These are *intents*, free of any domain: an
/// [`EnvironmentAdapter`](crate::EnvironmentAdapter) decides what each means in its
/// environment (a trade-data API turns `TransientFault { status: 429 }` into an HTTP 429
/// response, a duplicate `Corruption` into repeated rows and `Distractor` into a totals row).
///
/// Serialised externally tagged in snake case, e.g. `{"transient_fault":{"status":429}}`,
/// `{"corruption":{"kind":"duplicate","rate":0.3}}`, `{"budget_delta":-3}`,
/// `{"latency":{"ms":250}}`, `"distractor"`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Perturbation {
    /// The step fails with a retryable fault; the observation is lost.
    TransientFault {
        /// HTTP-like status describing the fault (429 rate limit, 503 unavailable, …).
        status: u16,
    },
    /// The observation is delivered but damaged.
    Corruption {
        /// How it is damaged.
        kind: CorruptionKind,
        /// Fraction of the observation's units affected, in `[0, 1]`.
        rate: f64,
    },
    /// The agent's operational budget changes by this many units (negative shrinks it).
    BudgetDelta(i32),
    /// The response is delayed.
    Latency {
        /// Delay in milliseconds.
        ms: u32,
    },
    /// A plausible but wrong summary unit (e.g. a "totals" row) is mixed into the observation,
    /// which a careful agent must recognise and drop.
    Distractor,
}

/// The ways an observation can be damaged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CorruptionKind {
    /// Some units appear more than once.
    Duplicate,
    /// Units arrive out of order.
    Reorder,
    /// Some units' values are altered.
    Noise,
    /// Some units are missing.
    Drop,
}

impl Perturbation {
    /// Whether this intent makes the step fail (so the step cannot count as a success).
    pub const fn is_fault(&self) -> bool {
        matches!(self, Self::TransientFault { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_shape_is_stable() {
        let all = [
            Perturbation::TransientFault { status: 429 },
            Perturbation::Corruption {
                kind: CorruptionKind::Duplicate,
                rate: 0.25,
            },
            Perturbation::BudgetDelta(-3),
            Perturbation::Latency { ms: 250 },
            Perturbation::Distractor,
        ];
        let json = serde_json::to_string(&all).expect("serialise");
        assert_eq!(
            json,
            r#"[{"transient_fault":{"status":429}},{"corruption":{"kind":"duplicate","rate":0.25}},{"budget_delta":-3},{"latency":{"ms":250}},"distractor"]"#
        );
        let back: Vec<Perturbation> = serde_json::from_str(&json).expect("deserialise");
        assert_eq!(back, all);
    }

    #[test]
    fn only_transient_faults_are_faults() {
        assert!(Perturbation::TransientFault { status: 503 }.is_fault());
        assert!(!Perturbation::Distractor.is_fault());
        assert!(!Perturbation::BudgetDelta(-1).is_fault());
    }
}
