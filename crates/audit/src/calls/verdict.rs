//! Pass rates, ties and inversions against the forgery table, and the verdicts.
//!
//! Decision rules (BFCL's checker scores one output of one entry as pass or fail):
//! * A **cell** is one (entry, lower-quality forgery) pair. The paper's rule
//!   j(anchor) > j(x) + ε, applied to one entry's 0/1 scores, holds only when the anchor passes
//!   and the forgery fails: that cell is **separated**. When both pass it is a **tie**; when
//!   both fail it is a tie at 0 (the checker separates nothing on that entry); when the forgery
//!   passes and the anchor fails it is an **inversion**. A forgery the checker raised on
//!   counts as not separated, as a missing score does for the record probes.
//! * **Criterion sensitivity** of a category passes iff every cell is separated; otherwise it
//!   fails, naming the forgeries, their counts and example entries. A category with no cell is
//!   not probed.
//! * An equal-quality forgery the checker fails where the anchor passes is **rejected as
//!   equivalent** ("grades the format"): reported, never a criterion failure, because the table
//!   declares the two outputs equally good and the criterion only asks that worse outputs score
//!   lower.
//! * **Replay** passes iff a second, separate checker process gives every item the same
//!   verdict and error type.
//! * Ownership is **not probed**: BFCL scores single calls; the decoding scaffold that turns a
//!   model's text into calls has no hook the audit could vary.
//! * A category's card, and each group's card (the AST track; relevance detection), apply the
//!   lattice of [`crate::card`] to these cells; a group's criterion passes iff every probed
//!   category in it passes.

use benchaudit_agents::sha256_hex;
use serde::Serialize;

use super::forge::{Forgery, Quality, anchor};
use super::{CategoryKind, ItemRecord};
use crate::card::{Card, Cell, Status};
use crate::target::ScorerKind;

/// How many example entries a failing cell's evidence names.
const EXAMPLES: usize = 3;

/// The seeded sample of a category: the `n` ids with the smallest SHA-256 of
/// `"{seed}:{category}:{id}"` (all ids when `n` is `None` or exceeds the category), in the
/// category's own order. Stable under reordering of the input and independent per category.
pub fn sample<'a>(ids: &[&'a str], category: &str, seed: u64, n: Option<usize>) -> Vec<&'a str> {
    let Some(n) = n.filter(|n| *n < ids.len()) else {
        return ids.to_vec();
    };
    // Lowercase hex sorts as the digest bytes do.
    let mut keyed: Vec<(String, usize)> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (sha256_hex(format!("{seed}:{category}:{id}").as_bytes()), i))
        .collect();
    keyed.sort();
    let mut chosen: Vec<usize> = keyed[..n].iter().map(|(_, i)| *i).collect();
    chosen.sort_unstable();
    chosen.into_iter().map(|i| ids[i]).collect()
}

/// One forgery's checker pass rate in one category.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForgeryRate {
    /// The forgery.
    pub forgery: Forgery,
    /// Its intended quality in this category.
    pub quality: Quality,
    /// Entries it was built for.
    pub applicable: usize,
    /// Entries whose forged output the checker passed.
    pub passed: usize,
    /// passed / applicable (none when not applicable anywhere).
    pub rate: Option<f64>,
    /// Outputs the checker raised on (counted as not passed).
    pub raised: usize,
    /// Lower quality: cells not separated (ties and inversions).
    pub not_separated: usize,
    /// Equal quality: entries where the anchor passes and this fails.
    pub rejected: usize,
}

/// The cells of one category.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Cells {
    /// (entry, lower forgery) pairs compared.
    pub compared: usize,
    /// Anchor passes, forgery fails.
    pub separated: usize,
    /// Both pass.
    pub ties_pass: usize,
    /// Both fail (or the checker raised on the forgery while the anchor failed).
    pub ties_fail: usize,
    /// Forgery passes, anchor fails.
    pub inversions: usize,
    /// The checker raised on the forgery while the anchor passed.
    pub unscored: usize,
    /// compared − separated.
    pub not_separated: usize,
}

/// A cell that is not separated, or an equivalent the checker rejected.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Deviation {
    /// Entry id.
    pub id: String,
    /// Forgery.
    pub forgery: Forgery,
    /// The checker's verdict on the anchor.
    pub anchor_valid: bool,
    /// The checker's verdict on the forgery.
    pub forged_valid: bool,
    /// BFCL's error type for the forgery, when it failed.
    pub error_type: Option<String>,
}

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
    /// Pass rate of each forgery built for this kind, in table order.
    pub rates: Vec<ForgeryRate>,
    /// The cells against the ordering.
    pub cells: Cells,
    /// Cells not separated (ties and inversions), every one.
    pub deviations: Vec<Deviation>,
    /// Equal-quality forgeries the checker failed where the anchor passed.
    pub rejected_equivalents: Vec<Deviation>,
    /// Criterion sensitivity of this category.
    pub criterion: Cell,
}

fn by_entry(items: &[ItemRecord], forgery: Forgery) -> Vec<&ItemRecord> {
    items.iter().filter(|i| i.forgery == forgery).collect()
}

/// Measures one category from its scored items (all of one category).
pub fn category(
    name: &str,
    kind: CategoryKind,
    entries_total: usize,
    entries_probed: usize,
    items: &[ItemRecord],
) -> CategoryResult {
    let anchor_kind = anchor(kind);
    let anchors = by_entry(items, anchor_kind);
    let anchor_of = |id: &str| anchors.iter().find(|a| a.id == id).map(|a| a.valid);
    let mut rates = Vec::new();
    let mut cells = Cells::default();
    let mut deviations = Vec::new();
    let mut rejected = Vec::new();
    for forgery in Forgery::ALL {
        let Some(quality) = super::forge::intended(kind, forgery) else {
            continue;
        };
        let mine = by_entry(items, forgery);
        let passed = mine.iter().filter(|i| i.valid).count();
        let raised = mine.iter().filter(|i| i.raised).count();
        let (dev_before, rej_before) = (deviations.len(), rejected.len());
        let applicable = mine.len();
        for item in mine {
            let Some(a) = anchor_of(&item.id) else {
                continue;
            };
            let dev = || Deviation {
                id: item.id.clone(),
                forgery,
                anchor_valid: a,
                forged_valid: item.valid,
                error_type: item.error_type.clone(),
            };
            match quality {
                Quality::Anchor => {}
                Quality::Equal => {
                    if a && !item.valid {
                        rejected.push(dev());
                    }
                }
                Quality::Lower => {
                    cells.compared += 1;
                    match (a, item.valid, item.raised) {
                        (true, false, false) => cells.separated += 1,
                        (true, false, true) => {
                            cells.unscored += 1;
                            deviations.push(dev());
                        }
                        (true, true, _) => {
                            cells.ties_pass += 1;
                            deviations.push(dev());
                        }
                        (false, true, _) => {
                            cells.inversions += 1;
                            deviations.push(dev());
                        }
                        (false, false, _) => {
                            cells.ties_fail += 1;
                            deviations.push(dev());
                        }
                    }
                }
            }
        }
        rates.push(ForgeryRate {
            forgery,
            quality,
            applicable,
            passed,
            rate: (applicable > 0).then(|| passed as f64 / applicable as f64),
            raised,
            not_separated: deviations.len() - dev_before,
            rejected: rejected.len() - rej_before,
        });
    }
    cells.not_separated = cells.compared - cells.separated;
    let criterion = criterion_cell(&rates, &cells, &deviations);
    CategoryResult {
        name: name.into(),
        kind,
        entries_total,
        entries_probed,
        rates,
        cells,
        deviations,
        rejected_equivalents: rejected,
        criterion,
    }
}

fn rate_text(r: &ForgeryRate) -> String {
    format!("{} {} of {}", r.forgery.name(), r.passed, r.applicable)
}

fn examples(devs: &[&Deviation]) -> String {
    devs.iter()
        .take(EXAMPLES)
        .map(|d| format!("`{}`", d.id))
        .collect::<Vec<_>>()
        .join(", ")
}

fn criterion_cell(rates: &[ForgeryRate], cells: &Cells, deviations: &[Deviation]) -> Cell {
    if cells.compared == 0 {
        return Cell::not_probed("no lower-quality forgery could be built for any probed entry");
    }
    let anchor_rate = rates.iter().find(|r| r.quality == Quality::Anchor);
    let anchor_text = anchor_rate.map_or(String::new(), |r| {
        format!(
            "{} passes {} of {}",
            r.forgery.name(),
            r.passed,
            r.applicable
        )
    });
    let lower: Vec<String> = rates
        .iter()
        .filter(|r| r.quality == Quality::Lower && r.applicable > 0)
        .map(rate_text)
        .collect();
    let mut equal_note = String::new();
    for r in rates
        .iter()
        .filter(|r| r.quality == Quality::Equal && r.applicable > 0)
    {
        if r.rejected > 0 {
            equal_note.push_str(&format!(
                " Rejects the equal-quality {} on {} of {} entries (grades the format, not the content).",
                r.forgery.name(),
                r.rejected,
                r.applicable
            ));
        } else {
            equal_note.push_str(&format!(
                " Equal-quality {} passes {} of {}.",
                r.forgery.name(),
                r.passed,
                r.applicable
            ));
        }
    }
    if deviations.is_empty() {
        return Cell {
            status: Status::Pass,
            evidence: format!(
                "{} of {} cells separated: {anchor_text}; lower-quality {}.{equal_note}",
                cells.separated,
                cells.compared,
                lower.join(", ")
            ),
        };
    }
    let mut parts = Vec::new();
    for r in rates.iter().filter(|r| r.not_separated > 0) {
        let mine: Vec<&Deviation> = deviations
            .iter()
            .filter(|d| d.forgery == r.forgery)
            .collect();
        parts.push(format!(
            "{} not separated on {} of {} entries, passing {} (e.g. {})",
            r.forgery.name(),
            r.not_separated,
            r.applicable,
            r.passed,
            examples(&mine)
        ));
    }
    Cell {
        status: Status::Fail,
        evidence: format!(
            "{} of {} cells not separated ({} ties with both passing, {} ties with both failing, {} inversions, {} unscored): {}. {anchor_text}; lower-quality {}.{equal_note}",
            cells.not_separated,
            cells.compared,
            cells.ties_pass,
            cells.ties_fail,
            cells.inversions,
            cells.unscored,
            parts.join("; "),
            lower.join(", ")
        ),
    }
}

/// The ownership cell of every BFCL card.
pub fn ownership_cell() -> Cell {
    Cell::not_probed(
        "BFCL scores single calls: the decoding scaffold that turns a model's text into calls has no hook to vary, so who owns which decision is not measured",
    )
}

/// A group of categories (the AST track; relevance detection) and its totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupResult {
    /// Group name.
    pub name: String,
    /// Its probed categories.
    pub categories: Vec<String>,
    /// Cells over them.
    pub compared: usize,
    /// Separated cells.
    pub separated: usize,
    /// compared − separated.
    pub not_separated: usize,
    /// Categories whose criterion fails.
    pub failing: Vec<String>,
    /// The group's criterion: pass iff every probed category passes.
    pub criterion: Cell,
}

/// A group's totals and criterion over its categories.
pub fn group(name: &str, categories: &[&CategoryResult]) -> GroupResult {
    let probed: Vec<&&CategoryResult> = categories
        .iter()
        .filter(|c| c.criterion.status != Status::NotProbed)
        .collect();
    let names: Vec<String> = probed.iter().map(|c| c.name.clone()).collect();
    let failing: Vec<String> = probed
        .iter()
        .filter(|c| c.criterion.status == Status::Fail)
        .map(|c| c.name.clone())
        .collect();
    let compared: usize = probed.iter().map(|c| c.cells.compared).sum();
    let separated: usize = probed.iter().map(|c| c.cells.separated).sum();
    let criterion = if probed.is_empty() {
        match categories.first() {
            // Every category unprobed for the same cause (a failing hook): say which.
            Some(c) => c.criterion.clone(),
            None => Cell::not_probed("no category of this group was probed"),
        }
    } else if failing.is_empty() {
        Cell {
            status: Status::Pass,
            evidence: format!(
                "every lower-quality forgery is failed wherever the correct answer passes: {separated} of {compared} cells separated over {}.",
                names.join(", ")
            ),
        }
    } else {
        Cell {
            status: Status::Fail,
            evidence: format!(
                "{} of {} cells not separated over {}; failing: {} (see their rows).",
                compared - separated,
                compared,
                names.join(", "),
                failing.join(", ")
            ),
        }
    };
    GroupResult {
        name: name.into(),
        categories: names,
        compared,
        separated,
        not_separated: compared - separated,
        failing,
        criterion,
    }
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
        assert_eq!(r.cells.compared, 2);
        assert_eq!(r.cells.separated, 1);
        assert_eq!(r.cells.ties_pass, 1);
        assert_eq!(r.criterion.status, Status::Fail);
        assert!(
            r.criterion
                .evidence
                .contains("wrong_value not separated on 1 of 2 entries, passing 1")
        );
        assert_eq!(r.rejected_equivalents.len(), 1, "json rejected on a");
        let c = card("c".into(), r.criterion.clone(), Cell::not_probed("x"));
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
        assert_eq!(r.criterion.status, Status::Pass, "{}", r.criterion.evidence);
        assert!(
            r.criterion
                .evidence
                .contains("Rejects the equal-quality json_syntax")
        );
        let replay = Cell {
            status: Status::Pass,
            evidence: String::new(),
        };
        let c = card("c".into(), r.criterion, replay);
        assert_eq!(c.licensed_claim, Claim::SpecificationCompliance);
    }

    #[test]
    fn a_failing_anchor_ties_and_an_irrelevance_call_that_passes_inverts() {
        let items = vec![
            item("a", Forgery::Correct, false),
            item("a", Forgery::Empty, false),
        ];
        let r = category("c", CategoryKind::Ast, 1, 1, &items);
        assert_eq!(r.cells.ties_fail, 1);
        assert_eq!(r.criterion.status, Status::Fail);
        let items = vec![
            item("a", Forgery::Refusal, true),
            item("a", Forgery::Garbage, true),
            item("a", Forgery::JsonSyntax, true),
        ];
        let r = category("i", CategoryKind::Irrelevance, 1, 1, &items);
        assert_eq!(r.cells.compared, 1, "garbage is equal in irrelevance");
        assert_eq!(r.cells.ties_pass, 1);
        let g = group("g", &[&r]);
        assert_eq!(g.criterion.status, Status::Fail);
        assert!(g.criterion.evidence.contains("failing: i"));
        assert_eq!((g.compared, g.not_separated), (1, 1));
    }

    #[test]
    fn nothing_comparable_is_not_probed() {
        let r = category("c", CategoryKind::Ast, 0, 0, &[]);
        assert_eq!(r.criterion.status, Status::NotProbed);
        assert_eq!(group("g", &[&r]).criterion.status, Status::NotProbed);
    }
}
