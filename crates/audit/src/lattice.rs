//! The lattice of SPEC §8 / paper A.13: which claim a card's cells license. Fixed, so the
//! strongest reading of a score is a function of evidence, not of the reader.

use serde::{Deserialize, Serialize};

use crate::card::Status;
use crate::target::ScorerKind;

/// The strongest reading a configuration permits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Claim {
    /// Replay, criterion sensitivity and ownership all pass.
    ModelCapability,
    /// Criterion passes, ownership fails.
    ModelScaffoldSystemPerformance,
    /// The scorer is shape-based (criterion fails).
    SelfReportCompliance,
    /// A specification scorer passes and ownership is not probed.
    SpecificationCompliance,
    /// Nothing is licensed.
    None,
}

impl Claim {
    /// The claim in words.
    pub fn label(self) -> &'static str {
        match self {
            Claim::ModelCapability => "model capability",
            Claim::ModelScaffoldSystemPerformance => "model–scaffold system performance",
            Claim::SelfReportCompliance => "self-report compliance",
            Claim::SpecificationCompliance => "specification compliance",
            Claim::None => "none",
        }
    }
}

/// The claim licensed by criterion sensitivity, ownership completeness and replay.
pub fn licensed_claim(
    criterion: Status,
    ownership: Status,
    replay: Status,
    kind: ScorerKind,
) -> Claim {
    use Status::*;
    match (criterion, ownership, replay) {
        (Pass, Pass, Pass) => Claim::ModelCapability,
        (Pass, Fail, _) => Claim::ModelScaffoldSystemPerformance,
        (Fail, _, _) => Claim::SelfReportCompliance,
        (Pass, NotProbed, _) if kind == ScorerKind::Specification => Claim::SpecificationCompliance,
        _ => Claim::None,
    }
}

/// What evidence would license a stronger claim than the cells do, in words; `None` for model
/// capability, the strongest. Read off the same cells as [`licensed_claim`], so a card never
/// leaves its reader guessing what was missing.
pub fn what_would_raise(criterion: Status, ownership: Status, replay: Status) -> Option<String> {
    use Status::*;
    let ownership_text = "an ownership map measured by intervention (the model owning every claimed decision, each non-degenerate: its choice varies and moves the outcome)";
    let replay_text = "a replay that reproduces every scored run bit for bit";
    let mut needs = Vec::new();
    match criterion {
        Fail => {
            return Some(
                "none from more evidence: criterion sensitivity fails, so the scorer itself must change until it scores every lower-quality forgery below the correct answer".into(),
            );
        }
        NotProbed => needs.push(
            "criterion sensitivity measured on a forged battery (a canonical-truth oracle and the benchmark's own scorer)",
        ),
        Pass => {}
    }
    match ownership {
        Fail => needs.push(
            "the harness-owned or degenerate decisions returned to the model (or the score relabelled as the model–scaffold system's)",
        ),
        NotProbed => needs.push(ownership_text),
        Pass => {}
    }
    if replay != Pass {
        needs.push(replay_text);
    }
    if needs.is_empty() {
        return None;
    }
    Some(format!("model capability needs {}", needs.join("; and ")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use Status::*;

    #[test]
    fn the_lattice() {
        use ScorerKind::{Outcome, Shape, Specification, Unknown};
        let cases = [
            ((Pass, Pass, Pass, Outcome), Claim::ModelCapability),
            ((Pass, Pass, Fail, Outcome), Claim::None),
            (
                (Pass, Fail, Pass, Outcome),
                Claim::ModelScaffoldSystemPerformance,
            ),
            ((Fail, Fail, Pass, Shape), Claim::SelfReportCompliance),
            ((Fail, Pass, Pass, Shape), Claim::SelfReportCompliance),
            (
                (Pass, NotProbed, Pass, Specification),
                Claim::SpecificationCompliance,
            ),
            ((Pass, NotProbed, Pass, Outcome), Claim::None),
            ((NotProbed, Pass, Pass, Outcome), Claim::None),
            ((NotProbed, NotProbed, NotProbed, Unknown), Claim::None),
        ];
        for ((criterion, ownership, replay, kind), claim) in cases {
            assert_eq!(
                licensed_claim(criterion, ownership, replay, kind),
                claim,
                "{criterion:?} {ownership:?} {replay:?} {kind:?}"
            );
            let raise = what_would_raise(criterion, ownership, replay);
            assert_eq!(
                raise.is_none(),
                claim == Claim::ModelCapability,
                "only the strongest claim has nothing to raise it: {criterion:?} {ownership:?} {replay:?}"
            );
        }
        let r = what_would_raise(Pass, NotProbed, Pass).unwrap();
        assert!(r.contains("ownership map measured by intervention"), "{r}");
        let r = what_would_raise(Pass, Pass, NotProbed).unwrap();
        assert!(r.contains("replay"), "{r}");
        assert!(!r.contains("ownership"), "{r}");
        let r = what_would_raise(Fail, Pass, Pass).unwrap();
        assert!(r.contains("the scorer itself must change"), "{r}");
    }
}
