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
        assert_eq!(
            licensed_claim(Pass, Pass, Pass, ScorerKind::Outcome),
            Claim::ModelCapability
        );
        assert_eq!(
            licensed_claim(Pass, Pass, Fail, ScorerKind::Outcome),
            Claim::None
        );
        assert_eq!(
            licensed_claim(Pass, Fail, Pass, ScorerKind::Outcome),
            Claim::ModelScaffoldSystemPerformance
        );
        assert_eq!(
            licensed_claim(Fail, Fail, Pass, ScorerKind::Shape),
            Claim::SelfReportCompliance
        );
        assert_eq!(
            licensed_claim(Fail, Pass, Pass, ScorerKind::Shape),
            Claim::SelfReportCompliance
        );
        assert_eq!(
            licensed_claim(Pass, NotProbed, Pass, ScorerKind::Specification),
            Claim::SpecificationCompliance
        );
        assert_eq!(
            licensed_claim(Pass, NotProbed, Pass, ScorerKind::Outcome),
            Claim::None
        );
        assert_eq!(
            licensed_claim(NotProbed, Pass, Pass, ScorerKind::Outcome),
            Claim::None
        );
        assert_eq!(
            licensed_claim(NotProbed, NotProbed, NotProbed, ScorerKind::Unknown),
            Claim::None
        );
    }
}
