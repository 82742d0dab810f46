//! The validity card (paper §5.5, A.13): every cell pass | fail | not probed with its evidence,
//! and the licensed claim the [`lattice`](crate::lattice) reads off the cells. A not-probed cell
//! never licenses a claim.

use serde::{Deserialize, Serialize};

use crate::lattice::{Claim, licensed_claim, what_would_raise};
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
    /// The kind the target declared, when the measurement overrode it, with the reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scorer_kind_override: Option<KindOverride>,
    /// What evidence would license a stronger claim (none for model capability).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_raise_the_claim: Option<String>,
    /// The tasks the licensed claim holds on, when a stage limits it (the solvability stage's
    /// scale-bound tasks are excluded from a model-capability claim).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_scope: Option<ClaimScope>,
    /// Non-degeneracy judged per player on its own episodes, at L1 and at the scored level:
    /// evidence beside the ownership cell (which stays the lattice's input).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub non_degeneracy: Vec<PlayerVerdict>,
    /// The interface confound (paper C.6; [`crate::interface`]): evidence beside the
    /// lattice, never an input to the licensed claim. Absent where not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<Cell>,
}

/// A declared scorer kind the measurement contradicts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KindOverride {
    /// What the target declared.
    pub declared: ScorerKind,
    /// Why the card shows another kind.
    pub reason: String,
}

/// One player's non-degeneracy verdict at one level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlayerVerdict {
    /// Level.
    pub level: String,
    /// Player (the ledger's `key.policy`).
    pub player: String,
    /// Verdict and evidence.
    pub verdict: Cell,
}

/// A task left out of a claim, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExcludedTask {
    /// Task.
    pub task: String,
    /// Why (e.g. "scale-bound").
    pub reason: String,
}

/// The tasks a licensed claim holds on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimScope {
    /// Tasks the claim holds on.
    pub holds_on: Vec<String>,
    /// Tasks excluded from it.
    pub excluded: Vec<ExcludedTask>,
}

impl ClaimScope {
    /// In words, short task ids where they are unambiguous: "on T1, T2, …; T7 excluded:
    /// scale-bound" (two tasks sharing a short id are written in full).
    pub fn label(&self) -> String {
        let all: Vec<&str> = self
            .holds_on
            .iter()
            .map(String::as_str)
            .chain(self.excluded.iter().map(|e| e.task.as_str()))
            .collect();
        let prefix = |t: &str| benchaudit_comtrade::short_id(t).to_string();
        let short = |t: &str| {
            let p = prefix(t);
            if all.iter().filter(|u| prefix(u) == p).count() > 1 {
                t.to_string()
            } else {
                p
            }
        };
        let on: Vec<String> = self.holds_on.iter().map(|t| short(t)).collect();
        let mut s = format!("on {}", on.join(", "));
        // Excluded tasks grouped by reason, reasons in order of first appearance.
        let mut reasons: Vec<&str> = Vec::new();
        for e in &self.excluded {
            if !reasons.contains(&e.reason.as_str()) {
                reasons.push(&e.reason);
            }
        }
        for reason in reasons {
            let tasks: Vec<String> = self
                .excluded
                .iter()
                .filter(|e| e.reason == reason)
                .map(|e| short(&e.task))
                .collect();
            s.push_str(&format!("; {} excluded: {reason}", tasks.join(", ")));
        }
        s
    }
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
        // The measurement outranks the declaration: a scorer that ties or inverts a
        // lower-quality forgery grades shape; one that separates every forgery does not.
        let (scorer_kind, scorer_kind_override) = match (criterion.status, kind) {
            (Status::Fail, ScorerKind::Shape) => (ScorerKind::Shape, None),
            (Status::Fail, declared) => (
                ScorerKind::Shape,
                (declared != ScorerKind::Unknown).then(|| KindOverride {
                    declared,
                    reason: "criterion sensitivity fails: a forgery of lower quality scores as high as the correct answer, so the scorer reads the shape of the work, not its content".into(),
                }),
            ),
            (Status::Pass, ScorerKind::Shape) => (
                ScorerKind::Unknown,
                Some(KindOverride {
                    declared: ScorerKind::Shape,
                    reason: "criterion sensitivity passes: every lower-quality forgery scores below the correct answer, so the scorer is not shape-based (outcome and specification are not told apart by the battery)".into(),
                }),
            ),
            (_, declared) => (declared, None),
        };
        let licensed_claim = licensed_claim(
            criterion.status,
            ownership.status,
            replay.status,
            scorer_kind,
        );
        let to_raise_the_claim =
            what_would_raise(criterion.status, ownership.status, replay.status);
        Card {
            target,
            scorer_kind,
            criterion_sensitivity: criterion,
            ownership,
            replay,
            licensed_claim,
            scorer_kind_override,
            to_raise_the_claim,
            claim_scope: None,
            non_degeneracy: Vec::new(),
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
