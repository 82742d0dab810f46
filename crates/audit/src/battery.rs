//! The separation engine every forged-battery probe family shares: a benchmark's own scorer
//! has scored forged outputs of declared quality on a set of units (BFCL entries, Inspect
//! samples, τ² tasks); this module reads those scores against the declared order.
//!
//! Why one engine: criterion sensitivity means the same thing whatever produced the forgeries
//! (paper A.13, j(anchor) > j(x) + ε for every x of strictly lower quality), so the rule, the
//! pass rates and the wording of the verdict are written once, and every family's card
//! reads the same way.
//!
//! Decision rules, per group of units scored by one scorer:
//! * A forgery's **quality** is declared relative to the unit's **anchor** (the correct
//!   output): [`Quality::Equal`] (as good: another correct form) or [`Quality::Lower`].
//! * A **cell** is one (unit, lower-quality forgery) pair. It is **separated** when the
//!   anchor's score exceeds the forgery's by more than ε. Otherwise it is a **tie** (at the
//!   passing level when the anchor passes, at the failing level when it does not: the scorer
//!   separates nothing on that unit) or an **inversion** (the forgery scores higher by more
//!   than ε). A forgery the scorer could not score while the anchor passes is **unscored**; an
//!   anchor the scorer could not score is read as failing. None of these count as separated.
//! * **Criterion sensitivity** of a group passes iff every cell is separated, fails otherwise
//!   (naming the forgeries, their counts and example units), and is not probed when the group
//!   has no cell.
//! * An equal-quality forgery scored lower than the anchor by more than ε is **rejected as
//!   equivalent** ("grades the format"): reported beside the verdict, never a failure, since
//!   the criterion only asks that worse outputs score lower.
//! * A forgery's **pass rate** is the share of the units it was built for whose score reaches
//!   the scorer's passing value.
//!
//! ```
//! use benchaudit_audit::battery::{Quality, Scored, Wording, separate};
//! use benchaudit_audit::Status;
//! let items = [
//!     Scored { unit: "a", forgery: "correct", quality: Quality::Anchor, value: Some(1.0), note: None },
//!     Scored { unit: "a", forgery: "empty", quality: Quality::Lower, value: Some(0.0), note: None },
//!     Scored { unit: "b", forgery: "correct", quality: Quality::Anchor, value: Some(1.0), note: None },
//!     Scored { unit: "b", forgery: "empty", quality: Quality::Lower, value: Some(1.0), note: None },
//! ];
//! let v = separate(&items, &["correct", "empty"], 1e-9, 1.0, &Wording::default());
//! assert_eq!(v.cells.compared, 2);
//! assert_eq!(v.cells.ties_pass, 1);
//! assert_eq!(v.criterion.status, Status::Fail);
//! ```

use benchaudit_agents::sha256_hex;
use serde::{Deserialize, Serialize};

use crate::card::{Cell, Status};

/// How many example units a failing cell's evidence names.
const EXAMPLES: usize = 3;

/// The seeded sample of a group: the `n` ids with the smallest SHA-256 of
/// `"{seed}:{group}:{id}"` (all ids when `n` is `None` or exceeds the group), in the group's
/// own order. Stable under reordering of the input and independent per group.
pub fn sample<'a>(ids: &[&'a str], group: &str, seed: u64, n: Option<usize>) -> Vec<&'a str> {
    let Some(n) = n.filter(|n| *n < ids.len()) else {
        return ids.to_vec();
    };
    // Lowercase hex sorts as the digest bytes do.
    let mut keyed: Vec<(String, usize)> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (sha256_hex(format!("{seed}:{group}:{id}").as_bytes()), i))
        .collect();
    keyed.sort();
    let mut chosen: Vec<usize> = keyed[..n].iter().map(|(_, i)| *i).collect();
    chosen.sort_unstable();
    chosen.into_iter().map(|i| ids[i]).collect()
}

/// A forgery's intended quality relative to the anchor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Quality {
    /// The reference output (the correct answer).
    Anchor,
    /// As good as the anchor: a criterion-valid scorer may score it either way.
    Equal,
    /// Worse: a criterion-valid scorer scores it below the anchor.
    Lower,
}

impl Quality {
    /// How tables print it.
    pub fn label(self) -> &'static str {
        match self {
            Quality::Anchor => "anchor",
            Quality::Equal => "equal",
            Quality::Lower => "lower",
        }
    }
}

/// One forged output of one unit and the scorer's score of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored<'a> {
    /// The unit (entry, sample, task) it was built for.
    pub unit: &'a str,
    /// The forgery's name.
    pub forgery: &'a str,
    /// Its declared quality on this unit.
    pub quality: Quality,
    /// The scorer's score; `None` when the scorer raised or gave no score.
    pub value: Option<f64>,
    /// What the scorer said beside the score (an error type), kept on a deviation.
    pub note: Option<&'a str>,
}

/// One forgery's pass rate in one group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rate {
    /// The forgery.
    pub forgery: String,
    /// Its declared quality.
    pub quality: Quality,
    /// Units it was built for.
    pub applicable: usize,
    /// Units whose forged output reached the passing value.
    pub passed: usize,
    /// passed / applicable (none when built for no unit).
    pub rate: Option<f64>,
    /// Outputs the scorer could not score (counted as not passed).
    pub unscored: usize,
    /// Lower quality: cells not separated (ties, inversions, unscored).
    pub not_separated: usize,
    /// Equal quality: units where it scored below the anchor by more than ε.
    pub rejected: usize,
}

/// The cells of one group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Cells {
    /// (unit, lower forgery) pairs compared.
    pub compared: usize,
    /// The anchor scores higher by more than ε.
    pub separated: usize,
    /// Within ε, the anchor passing.
    pub ties_pass: usize,
    /// Within ε, the anchor failing (or both unscorable).
    pub ties_fail: usize,
    /// The forgery scores higher by more than ε.
    pub inversions: usize,
    /// The scorer could not score the forgery while the anchor passed.
    pub unscored: usize,
    /// compared − separated.
    pub not_separated: usize,
}

/// A cell that is not separated, or an equal-quality forgery scored lower.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Deviation {
    /// Unit.
    pub unit: String,
    /// Forgery.
    pub forgery: String,
    /// The anchor's score on that unit (none: unscored).
    pub anchor: Option<f64>,
    /// The forgery's score (none: unscored).
    pub forged: Option<f64>,
    /// What the scorer said of the forgery (an error type).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Everything the engine reads off one group's scores.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Separation {
    /// Pass rate of each forgery, in the order asked for (forgeries built for no unit are left
    /// out).
    pub rates: Vec<Rate>,
    /// The cells against the declared order.
    pub cells: Cells,
    /// Every cell not separated.
    pub deviations: Vec<Deviation>,
    /// Equal-quality forgeries scored below the anchor.
    pub rejected_equivalents: Vec<Deviation>,
    /// Criterion sensitivity of the group.
    pub criterion: Cell,
}

/// The nouns a verdict is written with (families call their units entries, samples, tasks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wording {
    /// Plural noun for units ("entries").
    pub units: &'static str,
    /// What passing the anchor is called in the pass-verdict sentence.
    pub pass_phrase: &'static str,
}

impl Default for Wording {
    fn default() -> Self {
        Wording {
            units: "entries",
            pass_phrase: "passes",
        }
    }
}

/// Separates one group's scores: `order` lists the forgeries in table order (the anchor
/// first), `epsilon` is the scorer's resolution and `pass_at` the score that counts as
/// passing.
pub fn separate(
    items: &[Scored<'_>],
    order: &[&str],
    epsilon: f64,
    pass_at: f64,
    wording: &Wording,
) -> Separation {
    let passes = |v: Option<f64>| v.is_some_and(|v| v >= pass_at);
    let anchor_of = |unit: &str| {
        items
            .iter()
            .find(|i| i.unit == unit && i.quality == Quality::Anchor)
            .map(|i| i.value)
    };
    let mut rates = Vec::new();
    let mut cells = Cells::default();
    let mut deviations = Vec::new();
    let mut rejected = Vec::new();
    for forgery in order {
        let mine: Vec<&Scored<'_>> = items.iter().filter(|i| i.forgery == *forgery).collect();
        let Some(quality) = mine.first().map(|i| i.quality) else {
            continue;
        };
        let (dev_before, rej_before) = (deviations.len(), rejected.len());
        for item in &mine {
            let Some(anchor) = anchor_of(item.unit) else {
                continue;
            };
            let dev = || Deviation {
                unit: item.unit.to_string(),
                forgery: item.forgery.to_string(),
                anchor,
                forged: item.value,
                note: item.note.map(str::to_string),
            };
            match item.quality {
                Quality::Anchor => {}
                Quality::Equal => {
                    let a = anchor.unwrap_or(f64::NEG_INFINITY);
                    let below = item.value.is_none_or(|x| a > x + epsilon);
                    if passes(anchor) && below {
                        rejected.push(dev());
                    }
                }
                Quality::Lower => {
                    cells.compared += 1;
                    match (anchor, item.value) {
                        (Some(a), Some(x)) if a > x + epsilon => {
                            cells.separated += 1;
                            continue;
                        }
                        (Some(a), Some(x)) if x > a + epsilon => cells.inversions += 1,
                        (a, Some(_)) if passes(a) => cells.ties_pass += 1,
                        (None, Some(x)) if passes(Some(x)) => cells.inversions += 1,
                        (a, None) if passes(a) => cells.unscored += 1,
                        _ => cells.ties_fail += 1,
                    }
                    deviations.push(dev());
                }
            }
        }
        let applicable = mine.len();
        let passed = mine.iter().filter(|i| passes(i.value)).count();
        rates.push(Rate {
            forgery: (*forgery).to_string(),
            quality,
            applicable,
            passed,
            rate: (applicable > 0).then(|| passed as f64 / applicable as f64),
            unscored: mine.iter().filter(|i| i.value.is_none()).count(),
            not_separated: deviations.len() - dev_before,
            rejected: rejected.len() - rej_before,
        });
    }
    cells.not_separated = cells.compared - cells.separated;
    let criterion = criterion_cell(&rates, &cells, &deviations, wording);
    Separation {
        rates,
        cells,
        deviations,
        rejected_equivalents: rejected,
        criterion,
    }
}

fn rate_text(r: &Rate) -> String {
    format!("{} {} of {}", r.forgery, r.passed, r.applicable)
}

fn examples(devs: &[&Deviation]) -> String {
    devs.iter()
        .take(EXAMPLES)
        .map(|d| format!("`{}`", d.unit))
        .collect::<Vec<_>>()
        .join(", ")
}

fn criterion_cell(rates: &[Rate], cells: &Cells, deviations: &[Deviation], w: &Wording) -> Cell {
    let units = w.units;
    if cells.compared == 0 {
        return Cell::not_probed(format!(
            "no lower-quality forgery could be built for any probed {}",
            singular(units)
        ));
    }
    let anchor_text =
        rates
            .iter()
            .find(|r| r.quality == Quality::Anchor)
            .map_or(String::new(), |r| {
                format!(
                    "{} {} {} of {}",
                    r.forgery, w.pass_phrase, r.passed, r.applicable
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
                " Rejects the equal-quality {} on {} of {} {units} (grades the format, not the content).",
                r.forgery, r.rejected, r.applicable
            ));
        } else {
            equal_note.push_str(&format!(
                " Equal-quality {} passes {} of {}.",
                r.forgery, r.passed, r.applicable
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
            "{} not separated on {} of {} {units}, passing {} (e.g. {})",
            r.forgery,
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

fn singular(units: &str) -> &str {
    match units {
        "entries" => "entry",
        other => other.strip_suffix('s').unwrap_or(other),
    }
}

/// A group of groups (BFCL's AST track over its categories; a benchmark over its domains)
/// and its totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rollup {
    /// Name.
    pub name: String,
    /// Its probed members.
    pub members: Vec<String>,
    /// Cells over them.
    pub compared: usize,
    /// Separated cells.
    pub separated: usize,
    /// compared − separated.
    pub not_separated: usize,
    /// Members whose criterion fails.
    pub failing: Vec<String>,
    /// The criterion: pass iff every probed member passes.
    pub criterion: Cell,
}

/// Rolls members (name, cells, criterion) up into one verdict; members not probed are left
/// out, and when none was probed the first member's cause is the rollup's.
pub fn rollup(name: &str, members: &[(&str, &Cells, &Cell)]) -> Rollup {
    let probed: Vec<&(&str, &Cells, &Cell)> = members
        .iter()
        .filter(|(_, _, c)| c.status != Status::NotProbed)
        .collect();
    let names: Vec<String> = probed.iter().map(|(n, _, _)| n.to_string()).collect();
    let failing: Vec<String> = probed
        .iter()
        .filter(|(_, _, c)| c.status == Status::Fail)
        .map(|(n, _, _)| n.to_string())
        .collect();
    let compared: usize = probed.iter().map(|(_, c, _)| c.compared).sum();
    let separated: usize = probed.iter().map(|(_, c, _)| c.separated).sum();
    let criterion = if probed.is_empty() {
        match members.first() {
            Some((_, _, c)) => (*c).clone(),
            None => Cell::not_probed(format!("nothing of {name} was probed")),
        }
    } else if failing.is_empty() {
        Cell {
            status: Status::Pass,
            evidence: format!(
                "every lower-quality forgery scores below the correct answer wherever it is built: {separated} of {compared} cells separated over {}.",
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
    Rollup {
        name: name.into(),
        members: names,
        compared,
        separated,
        not_separated: compared - separated,
        failing,
        criterion,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s<'a>(unit: &'a str, forgery: &'a str, quality: Quality, value: Option<f64>) -> Scored<'a> {
        Scored {
            unit,
            forgery,
            quality,
            value,
            note: None,
        }
    }

    const ORDER: [&str; 3] = ["correct", "alt", "wrong"];

    #[test]
    fn numeric_scores_separate_by_more_than_epsilon() {
        let items = [
            s("a", "correct", Quality::Anchor, Some(0.8)),
            s("a", "wrong", Quality::Lower, Some(0.5)),
            s("b", "correct", Quality::Anchor, Some(0.8)),
            s("b", "wrong", Quality::Lower, Some(0.79995)),
            s("c", "correct", Quality::Anchor, Some(0.4)),
            s("c", "wrong", Quality::Lower, Some(0.9)),
        ];
        let v = separate(&items, &ORDER, 1e-3, 1.0, &Wording::default());
        assert_eq!(v.cells.separated, 1);
        assert_eq!(
            v.cells.ties_fail, 1,
            "0.8 does not pass at 1.0: a tie at the failing level"
        );
        assert_eq!(v.cells.inversions, 1);
        assert_eq!(v.cells.not_separated, 2);
        assert_eq!(v.rates.len(), 2, "alt is built for no unit");
        assert_eq!(v.rates[0].passed, 0);
        assert_eq!(v.criterion.status, Status::Fail);
        assert!(
            v.criterion
                .evidence
                .contains("wrong not separated on 2 of 3 entries"),
            "{}",
            v.criterion.evidence
        );
    }

    #[test]
    fn unscored_outputs_never_separate_and_equal_forgeries_only_inform() {
        let items = [
            s("a", "correct", Quality::Anchor, Some(1.0)),
            s("a", "alt", Quality::Equal, Some(0.0)),
            s("a", "wrong", Quality::Lower, None),
            s("b", "correct", Quality::Anchor, None),
            s("b", "alt", Quality::Equal, Some(1.0)),
            s("b", "wrong", Quality::Lower, Some(1.0)),
        ];
        let v = separate(&items, &ORDER, 1e-9, 1.0, &Wording::default());
        assert_eq!(v.cells.unscored, 1);
        assert_eq!(v.cells.inversions, 1, "an unscored anchor reads as failing");
        assert_eq!(v.rejected_equivalents.len(), 1);
        assert_eq!(v.rates[2].unscored, 1);
        let clean = [
            s("a", "correct", Quality::Anchor, Some(1.0)),
            s("a", "alt", Quality::Equal, Some(0.0)),
            s("a", "wrong", Quality::Lower, Some(0.0)),
        ];
        let w = Wording {
            units: "samples",
            pass_phrase: "scores correct on",
        };
        let v = separate(&clean, &ORDER, 1e-9, 1.0, &w);
        assert_eq!(v.criterion.status, Status::Pass, "{}", v.criterion.evidence);
        assert!(
            v.criterion
                .evidence
                .contains("correct scores correct on 1 of 1")
        );
        assert!(
            v.criterion
                .evidence
                .contains("Rejects the equal-quality alt on 1 of 1 samples")
        );
    }

    #[test]
    fn nothing_comparable_is_not_probed_and_rolls_up_as_such() {
        let v = separate(&[], &ORDER, 1e-9, 1.0, &Wording::default());
        assert_eq!(v.criterion.status, Status::NotProbed);
        let r = rollup("track", &[("c", &v.cells, &v.criterion)]);
        assert_eq!(r.criterion.status, Status::NotProbed);
        let pass = Cell {
            status: Status::Pass,
            evidence: String::new(),
        };
        let fail = Cell {
            status: Status::Fail,
            evidence: String::new(),
        };
        let cells = Cells {
            compared: 4,
            separated: 3,
            not_separated: 1,
            ..Cells::default()
        };
        let r = rollup(
            "track",
            &[
                ("a", &cells, &pass),
                ("b", &cells, &fail),
                ("c", &v.cells, &v.criterion),
            ],
        );
        assert_eq!(r.members, ["a", "b"]);
        assert_eq!((r.compared, r.not_separated), (8, 2));
        assert_eq!(r.criterion.status, Status::Fail);
        assert!(r.criterion.evidence.contains("failing: b"));
    }
}
