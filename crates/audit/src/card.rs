//! The validity card (paper §5.5, A.13): every cell pass | fail | not probed with its evidence,
//! and the licensed claim the [`lattice`](crate::lattice) reads off the cells. A not-probed cell
//! never licenses a claim.

use serde::{Deserialize, Serialize};

use crate::lattice::{Claim, licensed_claim};
use crate::target::ScorerKind;

/// A cell's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The condition holds.
    Pass,
    /// The condition fails.
    Fail,
    /// The audit could not test it (a hook is missing): never read as passing.
    NotProbed,
}

impl Status {
    /// How the card prints it.
    pub fn label(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::NotProbed => "not probed",
        }
    }
}

/// One cell of the card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Verdict.
    pub status: Status,
    /// The evidence, in one or two sentences, with its numbers.
    pub evidence: String,
}

impl Cell {
    /// A not-probed cell naming the missing hook.
    pub fn not_probed(why: impl Into<String>) -> Self {
        Cell {
            status: Status::NotProbed,
            evidence: why.into(),
        }
    }
}

/// The card of one target configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Card {
    /// Target name.
    pub target: String,
    /// The scorer kind, as measured (criterion fails → shape) or declared.
    pub scorer_kind: ScorerKind,
    /// Criterion sensitivity.
    pub criterion_sensitivity: Cell,
    /// Ownership completeness (D_claimed ⊆ D_model, non-degenerate).
    pub ownership: Cell,
    /// Replay.
    pub replay: Cell,
    /// The licensed claim.
    pub licensed_claim: Claim,
    /// The interface confound (paper C.6; [`crate::interface`]): evidence beside the
    /// lattice, never an input to the licensed claim. Absent where not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<Cell>,
}

impl Card {
    /// Assembles a card and applies the lattice.
    pub fn new(
        target: String,
        kind: ScorerKind,
        criterion: Cell,
        ownership: Cell,
        replay: Cell,
    ) -> Self {
        let scorer_kind = if criterion.status == Status::Fail {
            ScorerKind::Shape
        } else {
            kind
        };
        let licensed_claim = licensed_claim(
            criterion.status,
            ownership.status,
            replay.status,
            scorer_kind,
        );
        Card {
            target,
            scorer_kind,
            criterion_sensitivity: criterion,
            ownership,
            replay,
            licensed_claim,
            interface: None,
        }
    }

    /// The card with the interface-confound cell: the licensed claim stays what the three
    /// lattice cells give.
    #[must_use]
    pub fn with_interface(mut self, cell: Cell) -> Self {
        self.interface = Some(cell);
        self
    }
}
