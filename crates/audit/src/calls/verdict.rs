//! Pass rates, ties and inversions against the forgery table, and the verdicts.
//!
//! Decision rules (BFCL's checker scores one output of one entry as pass or fail, read as a
//! score of 1 or 0; a checker that raised gives no score):
//! * Cells, ties, inversions, rejected equivalents and criterion sensitivity are the shared
//!   engine's ([`crate::battery`]): on 0/1 scores a cell is separated only when the anchor
//!   passes and the forgery fails; both passing is a tie, both failing a tie at 0 (the checker
//!   separates nothing on that entry), the forgery passing where the anchor fails an inversion.
//! * **Replay** passes iff a second, separate checker process gives every item the same
//!   verdict and error type.
//! * Ownership is **not probed**: BFCL scores single calls; the decoding scaffold that turns a
//!   model's text into calls has no hook the audit could vary.
//! * A category's card, and each group's card (the AST track; relevance detection), apply the
//!   lattice of [`crate::card`] to these cells; a group's criterion passes iff every probed
//!   category in it passes.

use serde::Serialize;

use super::forge::{Forgery, anchor};
use super::{CategoryKind, ItemRecord};
use crate::battery::{Cells, Quality, Rollup, Scored, Separation, Wording, rollup, separate};
use crate::card::{Card, Cell};
use crate::target::ScorerKind;

pub use crate::battery::sample;

/// Everything measured on one category.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CategoryResult {
    /// BFCL category.
    pub name: String,
    /// Its kind.
    pub kind: CategoryKind,
    /// Entries the category has.
    pub entries_total: usize,
    /// Entries probed (the seeded sample).
    pub entries_probed: usize,
    /// Pass rates, cells, deviations and the criterion, as the shared engine reads them.
    #[serde(flatten)]
    pub separation: Separation,
}

impl CategoryResult {
    /// Criterion sensitivity of this category.
    pub fn criterion(&self) -> &Cell {
        &self.separation.criterion
    }
}

/// Measures one category from its scored items (all of one category): the checker's verdict
/// is a score of 1 (valid) or 0, a raised checker no score.
pub fn category(
    name: &str,
    kind: CategoryKind,
    entries_total: usize,
    entries_probed: usize,
    items: &[ItemRecord],
) -> CategoryResult {
    let anchor = anchor(kind);
    let scored: Vec<Scored<'_>> = items
        .iter()
        .filter_map(|i| {
            let quality = if i.forgery == anchor {
                Quality::Anchor
            } else {
                super::forge::intended(kind, i.forgery)?
            };
            Some(Scored {
                unit: &i.id,
                forgery: i.forgery.name(),
                quality,
                value: (!i.raised).then_some(if i.valid { 1.0 } else { 0.0 }),
                note: i.error_type.as_deref(),
            })
        })
        .collect();
    let order: Vec<&str> = Forgery::ALL.into_iter().map(Forgery::name).collect();
    CategoryResult {
        name: name.into(),
        kind,
        entries_total,
        entries_probed,
        separation: separate(&scored, &order, 0.0, 1.0, &Wording::default()),
    }
}

/// The ownership cell of every BFCL card.
pub fn ownership_cell() -> Cell {
    Cell::not_probed(
        "BFCL scores single calls: the decoding scaffold that turns a model's text into calls has no hook to vary, so who owns which decision is not measured",
    )
}

/// A group's totals and criterion over its categories (the AST track; relevance detection).
pub fn group(name: &str, categories: &[&CategoryResult]) -> Rollup {
    let members: Vec<(&str, &Cells, &Cell)> = categories
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                &c.separation.cells,
                &c.separation.criterion,
            )
        })
        .collect();
    rollup(name, &members)
}

/// A card for a category or group, by the lattice.
pub fn card(name: String, criterion: Cell, replay: Cell) -> Card {
    Card::new(
        name,
        ScorerKind::Specification,
        criterion,
        ownership_cell(),
        replay,
    )
}

/// Which group a category's kind belongs to.
pub fn group_of(kind: CategoryKind) -> usize {
    match kind {
        CategoryKind::Ast => 0,
        CategoryKind::Relevance | CategoryKind::Irrelevance => 1,
    }
}

/// The groups' names, by [`group_of`].
pub const GROUPS: [&str; 2] = ["AST track", "relevance detection"];

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::Claim;
    use crate::card::Status;

    fn item(id: &str, forgery: Forgery, valid: bool) -> ItemRecord {
        ItemRecord {
            category: "c".into(),
            id: id.into(),
            forgery,
            output: String::new(),
            valid,
            error_type: None,
            raised: false,
            replay_valid: Some(valid),
        }
    }

    #[test]
    fn the_sample_is_seeded_stable_and_in_category_order() {
        let ids: Vec<String> = (0..50).map(|i| format!("e_{i}")).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let a = sample(&refs, "simple_python", 0, Some(10));
        assert_eq!(a.len(), 10);
        let mut rev = refs.clone();
        rev.reverse();
        let mut b = sample(&rev, "simple_python", 0, Some(10));
        b.reverse();
        assert_eq!(a, b, "the sample does not depend on input order");
        assert_ne!(a, sample(&refs, "simple_python", 1, Some(10)));
        assert_ne!(a, sample(&refs, "multiple", 0, Some(10)));
        assert_eq!(sample(&refs, "x", 0, None).len(), 50);
        assert_eq!(sample(&refs, "x", 0, Some(80)).len(), 50);
        let pos = |s: &str| refs.iter().position(|r| *r == s);
        assert!(a.windows(2).all(|w| pos(w[0]) < pos(w[1])));
    }

    #[test]
    fn a_passing_lower_forgery_fails_the_criterion_and_the_lattice_follows() {
        let items = vec![
            item("a", Forgery::Correct, true),
            item("a", Forgery::WrongValue, false),
            item("a", Forgery::JsonSyntax, false),
            item("b", Forgery::Correct, true),
            item("b", Forgery::WrongValue, true),
        ];
        let r = category("c", CategoryKind::Ast, 2, 2, &items);
        assert_eq!(r.separation.cells.compared, 2);
        assert_eq!(r.separation.cells.separated, 1);
        assert_eq!(r.separation.cells.ties_pass, 1);
        assert_eq!(r.separation.criterion.status, Status::Fail);
        assert!(
            r.separation
                .criterion
                .evidence
                .contains("wrong_value not separated on 1 of 2 entries, passing 1")
        );
        assert_eq!(
            r.separation.rejected_equivalents.len(),
            1,
            "json rejected on a"
        );
        let c = card(
            "c".into(),
            r.separation.criterion.clone(),
            Cell::not_probed("x"),
        );
        assert_eq!(c.licensed_claim, Claim::SelfReportCompliance);
    }

    #[test]
    fn separated_cells_pass_and_license_specification_compliance() {
        let items = vec![
            item("a", Forgery::Correct, true),
            item("a", Forgery::Empty, false),
            item("a", Forgery::JsonSyntax, false),
        ];
        let r = category("c", CategoryKind::Ast, 1, 1, &items);
        assert_eq!(
            r.separation.criterion.status,
            Status::Pass,
            "{}",
            r.separation.criterion.evidence
        );
        assert!(
            r.separation
                .criterion
                .evidence
                .contains("Rejects the equal-quality json_syntax")
        );
        let replay = Cell {
            status: Status::Pass,
            evidence: String::new(),
        };
        let c = card("c".into(), r.separation.criterion, replay);
        assert_eq!(c.licensed_claim, Claim::SpecificationCompliance);
    }

    #[test]
    fn a_failing_anchor_ties_and_an_irrelevance_call_that_passes_inverts() {
        let items = vec![
            item("a", Forgery::Correct, false),
            item("a", Forgery::Empty, false),
        ];
        let r = category("c", CategoryKind::Ast, 1, 1, &items);
        assert_eq!(r.separation.cells.ties_fail, 1);
        assert_eq!(r.separation.criterion.status, Status::Fail);
        let items = vec![
            item("a", Forgery::Refusal, true),
            item("a", Forgery::Garbage, true),
            item("a", Forgery::JsonSyntax, true),
        ];
        let r = category("i", CategoryKind::Irrelevance, 1, 1, &items);
        assert_eq!(
            r.separation.cells.compared, 1,
            "garbage is equal in irrelevance"
        );
        assert_eq!(r.separation.cells.ties_pass, 1);
        let g = group("g", &[&r]);
        assert_eq!(g.criterion.status, Status::Fail);
        assert!(g.criterion.evidence.contains("failing: i"));
        assert_eq!((g.compared, g.not_separated), (1, 1));
    }

    #[test]
    fn nothing_comparable_is_not_probed() {
        let r = category("c", CategoryKind::Ast, 0, 0, &[]);
        assert_eq!(r.separation.criterion.status, Status::NotProbed);
        assert_eq!(group("g", &[&r]).criterion.status, Status::NotProbed);
    }
}
