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

#[cfg(test)]
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
        }
    }
}
