//! Pass rates per component, the do-nothing floor, the separation of each component against
//! the table's declared qualities, and the cards.
//!
//! Decision rules (every score the benchmarks give is 0 or 1; a run passes a component when
//! its score, read so that 1 is the good outcome, reaches 1):
//! * A component's **pass rate** of a forgery is over the units where the forgery was built
//!   and the evaluator scored that component; the units where it passes are listed.
//! * A component is **compared** on a unit where the gold run has a score for it (τ²'s
//!   evaluator checks COMMUNICATE only on tasks with something to communicate). Each built
//!   forgery gets the table's quality on that unit ([`super::table::quality`]); cells, ties,
//!   inversions and the component's criterion are the shared engine's
//!   ([`crate::battery::separate`]). A run the evaluator raised on is unscored (never
//!   separated); a run it scored without this component (τ² gives a run that did not end by a
//!   stop its reward, 0, and no component: relabelled runs, runs ended by the error limit) is
//!   compared on the headline score only.
//! * The **criterion sensitivity** of a group reads its headline components (τ²: the reward;
//!   AgentDojo: utility and security): pass iff each one probed passes, fail when one fails,
//!   not probed when none has a cell. The benchmark's criterion rolls the groups up
//!   ([`crate::battery::rollup`]).
//! * The **do-nothing floor** of a group is the share of its probed units whose `do_nothing`
//!   run passes the first headline component (τ²'s reward, AgentDojo's utility), with the
//!   units named, beside how many of them the table declares as asking nothing the score
//!   checks.
//! * **Gold** should pass the headline score on every unit; a unit where it does not is named
//!   with the evaluator's reason (a component that failed, or the error it raised).

use serde::Serialize;

use super::table::{Benchmark, Component, Forgery, quality};
use super::{RunRecord, TrajectoriesAudit, TrajectoriesConfig, Unit};
use crate::battery::{Quality, Rollup, Scored, Separation, Wording, rollup, separate};
use crate::card::{Card, Cell, Status};

/// The score every benchmark of the family counts as passing (its scores are 0 or 1).
pub const PASS_AT: f64 = 1.0;

/// One forgery's pass rate on one component of one group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComponentRate {
    /// Forgery.
    pub forgery: Forgery,
    /// Units it was built for.
    pub built: usize,
    /// Of them, units the evaluator scored this component on.
    pub scored: usize,
    /// Of them, units where it passed.
    pub passed: usize,
    /// passed / scored.
    pub rate: Option<f64>,
    /// The units where it passed.
    pub passing: Vec<String>,
}

/// One component of one group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComponentResult {
    /// Component name.
    pub name: String,
    /// The card's criterion reads it.
    pub headline: bool,
    /// Units where the gold run has a score for it (where it is compared).
    pub units_checked: usize,
    /// Pass rate of every forgery played.
    pub rates: Vec<ComponentRate>,
    /// The separation against the declared qualities.
    pub separation: Separation,
}

/// The do-nothing floor of a group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Floor {
    /// The component it is read on.
    pub component: String,
    /// Units `do_nothing` was played on.
    pub played: usize,
    /// Units where it passes.
    pub passed: usize,
    /// passed / played.
    pub rate: Option<f64>,
    /// The units where it passes.
    pub units: Vec<String>,
    /// Of the played units, those the table declares as asking nothing this component checks
    /// (doing nothing is as good as gold there).
    pub asks_nothing: usize,
}

/// A unit whose gold run does not pass the headline score, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GoldMiss {
    /// Unit.
    pub unit: String,
    /// Why (the failed components, or the evaluator's error).
    pub why: String,
}

/// Forgeries not built, with how many units and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotBuilt {
    /// Forgery.
    pub forgery: Forgery,
    /// Units it was not built for.
    pub units: usize,
    /// Each reason and how many units gave it.
    pub reasons: Vec<(String, usize)>,
}

/// Everything measured on one group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupResult {
    /// Domain or suite.
    pub name: String,
    /// Units the group has.
    pub units_total: usize,
    /// Units probed (the seeded sample).
    pub units_probed: usize,
    /// The probed units and their facts.
    pub units: Vec<Unit>,
    /// Per component, headline first.
    pub components: Vec<ComponentResult>,
    /// The do-nothing floor.
    pub floor: Floor,
    /// Units whose gold run does not pass.
    pub gold_misses: Vec<GoldMiss>,
    /// Forgeries not built on some units.
    pub not_built: Vec<NotBuilt>,
    /// Runs the evaluator (or the play) raised on.
    pub errors: usize,
    /// Criterion sensitivity of the group (its headline components).
    pub criterion: Cell,
}

impl GroupResult {
    /// A group no stage could probe.
    pub fn not_probed(benchmark: Benchmark, name: &str, why: &str) -> Self {
        GroupResult {
            name: name.into(),
            units_total: 0,
            units_probed: 0,
            units: Vec::new(),
            components: Vec::new(),
            floor: Floor {
                component: benchmark.components()[0].name.into(),
                played: 0,
                passed: 0,
                rate: None,
                units: Vec::new(),
                asks_nothing: 0,
            },
            gold_misses: Vec::new(),
            not_built: Vec::new(),
            errors: 0,
            criterion: Cell::not_probed(why),
        }
    }

    /// The result of one component.
    pub fn component(&self, name: &str) -> Option<&ComponentResult> {
        self.components.iter().find(|c| c.name == name)
    }
}

/// A run's score on a component, read so that 1 is the good outcome; `None` when unscored.
fn good(run: &RunRecord, c: &Component) -> Option<f64> {
    if run.error.is_some() {
        return None;
    }
    let v = run.scores.get(c.name).copied().flatten()?;
    Some(if c.inverted { 1.0 - v } else { v })
}

fn passes(v: Option<f64>) -> bool {
    v.is_some_and(|v| v >= PASS_AT)
}

/// Measures one group from its runs (all of one group, unit order).
pub fn group(
    benchmark: Benchmark,
    name: &str,
    units: &[Unit],
    units_total: usize,
    runs: &[&RunRecord],
    config: &TrajectoriesConfig,
) -> GroupResult {
    let wording = Wording {
        units: "tasks",
        pass_phrase: "passes",
    };
    let forgeries = config.forgeries.clone();
    let order: Vec<&str> = forgeries.iter().map(|f| f.name()).collect();
    let facts_of = |id: &str| {
        units
            .iter()
            .find(|u| u.id == id)
            .map(Unit::facts)
            .unwrap_or_default()
    };
    let gold_of = |unit: &str| {
        runs.iter()
            .find(|r| r.unit == unit && r.forgery == Forgery::Gold && r.built)
    };
    let mut components = Vec::new();
    for c in benchmark.components() {
        let mut rates = Vec::new();
        for f in &forgeries {
            let built: Vec<&&RunRecord> =
                runs.iter().filter(|r| r.forgery == *f && r.built).collect();
            if built.is_empty() {
                continue;
            }
            let scored: Vec<&&&RunRecord> = built.iter().filter(|r| good(r, c).is_some()).collect();
            let passing: Vec<String> = scored
                .iter()
                .filter(|r| passes(good(r, c)))
                .map(|r| r.unit.clone())
                .collect();
            rates.push(ComponentRate {
                forgery: *f,
                built: built.len(),
                scored: scored.len(),
                passed: passing.len(),
                rate: (!scored.is_empty()).then(|| passing.len() as f64 / scored.len() as f64),
                passing,
            });
        }
        let labels: Vec<(String, String)> = runs
            .iter()
            .map(|r| (r.unit.clone(), super::label(&r.unit)))
            .collect();
        let label_of = |id: &str| -> &str {
            labels
                .iter()
                .find(|(u, _)| u == id)
                .map_or("", |(_, l)| l.as_str())
        };
        let mut items = Vec::new();
        let mut checked = 0;
        for unit in units {
            let Some(gold) = gold_of(&unit.id) else {
                continue;
            };
            // An evaluator that raised on the gold run still makes the unit compared (as an
            // unscored anchor); one that checks nothing of this component here does not.
            if gold.error.is_none() && good(gold, c).is_none() {
                continue;
            }
            checked += 1;
            let facts = facts_of(&unit.id);
            for r in runs.iter().filter(|r| r.unit == unit.id && r.built) {
                let Some(q) = quality(r.forgery, c, &facts) else {
                    continue;
                };
                // A run the evaluator scored without this component (τ² scores no component of
                // a run that did not end by a stop: relabelled runs, runs ended by the error
                // limit) is not compared on it.
                if !c.headline && r.error.is_none() && good(r, c).is_none() {
                    continue;
                }
                items.push(Scored {
                    unit: label_of(&r.unit),
                    forgery: r.forgery.name(),
                    quality: q,
                    value: good(r, c),
                    note: r.error.as_deref().map(first_line),
                });
            }
        }
        let separation = separate(&items, &order, config.epsilon, PASS_AT, &wording);
        components.push(ComponentResult {
            name: c.name.into(),
            headline: c.headline,
            units_checked: checked,
            rates,
            separation,
        });
    }
    // The floor, on the first headline component.
    let head = &benchmark.components()[0];
    let nothing: Vec<&&RunRecord> = runs
        .iter()
        .filter(|r| r.forgery == Forgery::DoNothing && r.built)
        .collect();
    let floor_units: Vec<String> = nothing
        .iter()
        .filter(|r| passes(good(r, head)))
        .map(|r| r.unit.clone())
        .collect();
    let asks_nothing = nothing
        .iter()
        .filter(|r| quality(Forgery::DoNothing, head, &facts_of(&r.unit)) == Some(Quality::Equal))
        .count();
    let floor = Floor {
        component: head.name.into(),
        played: nothing.len(),
        passed: floor_units.len(),
        rate: (!nothing.is_empty()).then(|| floor_units.len() as f64 / nothing.len() as f64),
        units: floor_units,
        asks_nothing,
    };
    let gold_misses = units
        .iter()
        .filter_map(|u| {
            let g = gold_of(&u.id)?;
            if passes(good(g, head)) {
                return None;
            }
            let why = match &g.error {
                Some(e) => format!("the evaluator raised: {}", first_line(e)),
                None => {
                    let failed: Vec<String> = benchmark
                        .components()
                        .iter()
                        .skip(1)
                        .filter(|c| good(g, c).is_some_and(|v| v < PASS_AT))
                        .map(|c| c.name.to_string())
                        .collect();
                    if failed.is_empty() {
                        format!(
                            "{} is {} (ended: {})",
                            head.name,
                            good(g, head).map_or("unscored".into(), |v| format!("{v}")),
                            g.termination.as_deref().unwrap_or("?")
                        )
                    } else {
                        format!("failed {}", failed.join(", "))
                    }
                }
            };
            Some(GoldMiss {
                unit: u.id.clone(),
                why,
            })
        })
        .collect();
    let mut not_built: Vec<NotBuilt> = Vec::new();
    for f in &forgeries {
        let mut reasons: Vec<(String, usize)> = Vec::new();
        for r in runs.iter().filter(|r| r.forgery == *f && !r.built) {
            let why = r.reason.clone().unwrap_or_else(|| "not built".into());
            match reasons.iter_mut().find(|(w, _)| *w == why) {
                Some((_, n)) => *n += 1,
                None => reasons.push((why, 1)),
            }
        }
        if !reasons.is_empty() {
            not_built.push(NotBuilt {
                forgery: *f,
                units: reasons.iter().map(|(_, n)| n).sum(),
                reasons,
            });
        }
    }
    let errors = runs.iter().filter(|r| r.error.is_some()).count();
    let criterion = headline_criterion(&components);
    GroupResult {
        name: name.into(),
        units_total,
        units_probed: units.len(),
        units: units.to_vec(),
        components,
        floor,
        gold_misses,
        not_built,
        errors,
        criterion,
    }
}

fn first_line(s: &str) -> &str {
    s.trim().lines().last().unwrap_or("")
}

/// The group's criterion over its headline components.
fn headline_criterion(components: &[ComponentResult]) -> Cell {
    let heads: Vec<&ComponentResult> = components.iter().filter(|c| c.headline).collect();
    let probed: Vec<&&ComponentResult> = heads
        .iter()
        .filter(|c| c.separation.criterion.status != Status::NotProbed)
        .collect();
    if probed.is_empty() {
        return heads.first().map_or_else(
            || Cell::not_probed("no headline component"),
            |c| c.separation.criterion.clone(),
        );
    }
    let single = heads.len() == 1;
    let text = |c: &ComponentResult| {
        if single {
            c.separation.criterion.evidence.clone()
        } else {
            format!("{}: {}", c.name, c.separation.criterion.evidence)
        }
    };
    let failing: Vec<&&ComponentResult> = probed
        .iter()
        .filter(|c| c.separation.criterion.status == Status::Fail)
        .copied()
        .collect();
    let status = if failing.is_empty() {
        Status::Pass
    } else {
        Status::Fail
    };
    let shown: Vec<String> = if failing.is_empty() {
        probed.iter().map(|c| text(c)).collect()
    } else {
        failing.iter().map(|c| text(c)).collect()
    };
    Cell {
        status,
        evidence: shown.join(" "),
    }
}

/// The cells of the headline components of a group, summed (for the rollup).
fn headline_cells(g: &GroupResult) -> crate::battery::Cells {
    let mut total = crate::battery::Cells::default();
    for c in g.components.iter().filter(|c| c.headline) {
        let x = &c.separation.cells;
        total.compared += x.compared;
        total.separated += x.separated;
        total.ties_pass += x.ties_pass;
        total.ties_fail += x.ties_fail;
        total.inversions += x.inversions;
        total.unscored += x.unscored;
        total.not_separated += x.not_separated;
    }
    total
}

/// The benchmark's rollup, and the cards: one per group, then the benchmark's.
pub fn cards(target: &str, a: &TrajectoriesAudit) -> (Rollup, Vec<Card>) {
    let kind = a.config.scorer_kind;
    let ownership = a.ownership.cell.clone();
    let replay = a.replay.cell.clone();
    let mut cards: Vec<Card> = a
        .groups
        .iter()
        .map(|g| {
            Card::new(
                format!("{target}: {}", g.name),
                kind,
                g.criterion.clone(),
                ownership.clone(),
                replay.clone(),
            )
        })
        .collect();
    let cells: Vec<crate::battery::Cells> = a.groups.iter().map(headline_cells).collect();
    let members: Vec<(&str, &crate::battery::Cells, &Cell)> = a
        .groups
        .iter()
        .zip(&cells)
        .map(|(g, c)| (g.name.as_str(), c, &g.criterion))
        .collect();
    let r = rollup(target, &members);
    cards.push(Card::new(
        target.to_string(),
        kind,
        r.criterion.clone(),
        ownership,
        replay,
    ));
    (r, cards)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn unit(id: &str, facts: serde_json::Value) -> Unit {
        Unit {
            id: id.into(),
            facts,
        }
    }

    fn run(unit: &str, forgery: Forgery, reward: f64, db: Option<f64>) -> RunRecord {
        RunRecord {
            group: "airline".into(),
            unit: unit.into(),
            forgery,
            built: true,
            reason: None,
            termination: Some("user_stop".into()),
            scores: BTreeMap::from([
                ("reward".to_string(), Some(reward)),
                ("DB".to_string(), db),
                ("COMMUNICATE".to_string(), None),
                ("ACTION".to_string(), None),
                ("ENV_ASSERTION".to_string(), None),
            ]),
            error: None,
            replay_match: None,
            trajectory: serde_json::Value::Null,
        }
    }

    fn config() -> TrajectoriesConfig {
        TrajectoriesConfig {
            benchmark: Benchmark::Tau2,
            groups: vec!["airline".into()],
            sample: None,
            seed: 0,
            replay: 0,
            port: 0,
            compare: None,
            forgeries: Benchmark::Tau2.forgeries(),
            jobs: 1,
            epsilon: 1e-9,
            scorer_kind: crate::target::ScorerKind::Outcome,
        }
    }

    #[test]
    fn a_refusal_task_sets_the_floor_without_failing_the_reward() {
        let units = [
            unit("0", json!({"actions": 0})),
            unit("1", json!({"actions": 3, "writes": 1})),
        ];
        let runs = [
            run("0", Forgery::Gold, 1.0, Some(1.0)),
            run("0", Forgery::DoNothing, 1.0, Some(1.0)),
            run("1", Forgery::Gold, 1.0, Some(1.0)),
            run("1", Forgery::DoNothing, 0.0, Some(0.0)),
            run("1", Forgery::DropLastWrite, 0.0, Some(0.0)),
        ];
        let refs: Vec<&RunRecord> = runs.iter().collect();
        let g = group(Benchmark::Tau2, "airline", &units, 2, &refs, &config());
        assert_eq!(g.floor.played, 2);
        assert_eq!(g.floor.passed, 1);
        assert_eq!(g.floor.units, ["0"]);
        assert_eq!(g.floor.asks_nothing, 1);
        let reward = g.component("reward").unwrap();
        assert_eq!(reward.separation.cells.compared, 2);
        assert_eq!(reward.separation.cells.separated, 2);
        assert_eq!(g.criterion.status, Status::Pass, "{}", g.criterion.evidence);
        assert!(g.gold_misses.is_empty());
    }

    #[test]
    fn a_lower_forgery_that_passes_fails_the_criterion_and_gold_misses_are_named() {
        let units = [
            unit("1", json!({"actions": 3, "writes": 1})),
            unit("2", json!({"actions": 1, "writes": 1})),
        ];
        let mut broken = run("2", Forgery::Gold, 0.0, Some(0.0));
        broken.error = None;
        let runs = [
            run("1", Forgery::Gold, 1.0, Some(1.0)),
            run("1", Forgery::CorruptLastWrite, 1.0, Some(0.0)),
            broken,
            run("2", Forgery::DoNothing, 0.0, Some(0.0)),
        ];
        let refs: Vec<&RunRecord> = runs.iter().collect();
        let g = group(Benchmark::Tau2, "airline", &units, 2, &refs, &config());
        assert_eq!(g.criterion.status, Status::Fail);
        assert!(
            g.criterion
                .evidence
                .contains("corrupt_last_write not separated on 1 of 1 tasks"),
            "{}",
            g.criterion.evidence
        );
        let db = g.component("DB").unwrap();
        assert_eq!(
            db.separation.cells.separated, 1,
            "DB separates the corrupted write"
        );
        assert_eq!(g.gold_misses.len(), 1);
        assert_eq!(g.gold_misses[0].why, "failed DB");
        let corrupt = &g.components[0]
            .rates
            .iter()
            .find(|r| r.forgery == Forgery::CorruptLastWrite)
            .unwrap();
        assert_eq!(corrupt.passing, ["1"]);
    }

    #[test]
    fn relabelled_runs_count_on_the_reward_only_and_errors_are_unscored() {
        let units = [unit("1", json!({"actions": 1, "writes": 1}))];
        let mut relabel = run("1", Forgery::StepLimit, 0.0, None);
        relabel.termination = Some("max_steps".into());
        let mut crashed = run("1", Forgery::DropLastWrite, 0.0, Some(0.0));
        crashed.error = Some("Traceback\nValueError: Tool call mismatch".into());
        let runs = [run("1", Forgery::Gold, 1.0, Some(1.0)), relabel, crashed];
        let refs: Vec<&RunRecord> = runs.iter().collect();
        let g = group(Benchmark::Tau2, "airline", &units, 1, &refs, &config());
        let reward = g.component("reward").unwrap();
        assert_eq!(
            reward.separation.rejected_equivalents.len(),
            1,
            "step_limit is the same work scored 0"
        );
        assert_eq!(reward.separation.cells.unscored, 1);
        assert_eq!(
            reward.separation.deviations[0].note.as_deref(),
            Some("ValueError: Tool call mismatch")
        );
        let db = g.component("DB").unwrap();
        assert!(
            db.separation.rejected_equivalents.is_empty(),
            "no component scores for a relabelled run"
        );
        assert_eq!(g.errors, 1);
    }
}
