//! What the agent has achieved so far in an episode.

use serde::{Deserialize, Serialize};

/// The agent's progress within one episode: the input every [`Schedule`](crate::Schedule)
/// reads.
///
/// Escalation is driven by what the agent has *achieved*, not by elapsed time: an agent that
/// stalls does not get harder conditions just for stalling. A fault cancels a success, so the
/// quantity schedules read is [`effective_successes`](Self::effective_successes) =
/// `successes − faults`, saturating at 0. An agent that is being knocked back by faults
/// therefore sees the pressure ease, and escalation tracks real, net progress.
///
/// Because the subtraction is over the running totals, a fault that arrives when there is no
/// net success to cancel is not forgotten: it cancels the next success instead (one fault at
/// the start, then two successes, is one effective success).
///
/// All counters saturate at `u32::MAX` instead of overflowing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AgentProgress {
    /// Steps that succeeded (e.g. a page fetched).
    pub successes: u32,
    /// Steps begun, whatever their outcome.
    pub steps: u32,
    /// Steps that faulted; each one cancels one success.
    pub faults: u32,
}

impl AgentProgress {
    /// An episode that has not started.
    pub const fn new() -> Self {
        Self {
            successes: 0,
            steps: 0,
            faults: 0,
        }
    }

    /// Records that a step was begun.
    pub fn record_step(&mut self) {
        self.steps = self.steps.saturating_add(1);
    }

    /// Records that a step succeeded.
    pub fn record_success(&mut self) {
        self.successes = self.successes.saturating_add(1);
    }

    /// Records that a step faulted (cancelling one success).
    pub fn record_fault(&mut self) {
        self.faults = self.faults.saturating_add(1);
    }

    /// Net progress: `successes − faults`, saturating at 0. This, not `steps`, drives every
    /// schedule.
    pub const fn effective_successes(&self) -> u32 {
        self.successes.saturating_sub(self.faults)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_cancels_a_success() {
        let mut p = AgentProgress::new();
        p.record_success();
        p.record_success();
        assert_eq!(p.effective_successes(), 2);
        p.record_fault();
        assert_eq!(p.effective_successes(), 1);
        assert_eq!((p.successes, p.faults), (2, 1));
    }

    #[test]
    fn effective_successes_saturate_at_zero() {
        let mut p = AgentProgress::new();
        p.record_fault();
        p.record_fault();
        p.record_success();
        assert_eq!(p.effective_successes(), 0);
        p.record_success();
        p.record_success();
        assert_eq!(p.effective_successes(), 1);
    }

    #[test]
    fn steps_do_not_count_as_progress() {
        let mut p = AgentProgress::new();
        for _ in 0..10 {
            p.record_step();
        }
        assert_eq!(p.steps, 10);
        assert_eq!(p.effective_successes(), 0);
    }

    #[test]
    fn counters_saturate() {
        let mut p = AgentProgress {
            successes: u32::MAX,
            steps: u32::MAX,
            faults: u32::MAX,
        };
        p.record_step();
        p.record_success();
        p.record_fault();
        assert_eq!(p.steps, u32::MAX);
        assert_eq!(p.successes, u32::MAX);
        assert_eq!(p.faults, u32::MAX);
        assert_eq!(p.effective_successes(), 0);
    }
}
