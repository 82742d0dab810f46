//! The forged-submission probe battery and criterion sensitivity (paper §3.2, A.13): forged
//! submissions of known ground-truth quality go through the target's scorer; a criterion-valid
//! scorer must rank the correct set strictly above every set of lower quality.
//!
//! Why one file over 600 lines: 520 lines of code and the tests that pin them; the forgeries,
//! the one-target battery and the shared battery of several targets must give the same
//! results, and their tests compare them side by side.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::card::{Cell, Status};
use crate::target::{Forged, Target};

/// The kinds of forged submission (SPEC §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeKind {
    /// The canonical records, truthful metadata.
    Correct,
    /// No records, truthful metadata.
    Empty,
    /// Right shape, invented ids.
    Fabricated,
    /// The canonical records plus 20 % duplicates.
    DuplicateLaden,
    /// The canonical records plus summary (totals) rows.
    TotalsLeaked,
    /// The first half of the canonical records.
    Partial,
    /// The canonical records with a self-report that contradicts them: `metadata.row_count`
    /// declares 0 while all |G| records are submitted (equal quality: a scorer that drops for
    /// it "grades the report").
    ContradictoryReport,
    /// The records of another task, filed under that task's `task_id` (record ids re-keyed to
    /// it): ground-truth quality 0.
    WrongTaskId,
    /// The records and the declared query of another query (another reporter, the year
    /// before): ground-truth quality 0.
    WrongQuery,
    /// A tenth of the canonical records, the self-report consistent with them: `row_count`
    /// far below the true count |G|.
    RowCountOff,
    /// Half of the canonical records under a self-report that claims them complete
    /// (`row_count` = |G|): the records contradict the report, and quality is below correct.
    ContradictedClaim,
}

impl ProbeKind {
    /// Every kind, in battery order.
    pub const ALL: [ProbeKind; 11] = [
        ProbeKind::Correct,
        ProbeKind::Empty,
        ProbeKind::Fabricated,
        ProbeKind::DuplicateLaden,
        ProbeKind::TotalsLeaked,
        ProbeKind::Partial,
        ProbeKind::ContradictoryReport,
        ProbeKind::WrongTaskId,
        ProbeKind::WrongQuery,
        ProbeKind::RowCountOff,
        ProbeKind::ContradictedClaim,
    ];

    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::Correct => "correct",
            ProbeKind::Empty => "empty",
            ProbeKind::Fabricated => "fabricated",
            ProbeKind::DuplicateLaden => "duplicate_laden",
            ProbeKind::TotalsLeaked => "totals_leaked",
            ProbeKind::Partial => "partial",
            ProbeKind::ContradictoryReport => "contradictory_report",
            ProbeKind::WrongTaskId => "wrong_task_id",
            ProbeKind::WrongQuery => "wrong_query",
            ProbeKind::RowCountOff => "row_count_off",
            ProbeKind::ContradictedClaim => "contradicted_claim",
        }
    }

    /// The kind of a stable name.
    pub fn from_name(name: &str) -> Option<Self> {
        ProbeKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// The self-report and log every forgery shares, so only the records (and, for the report
/// probes, the declared task, query or row count) vary — as in the paper's probe. The schema
/// and query are read off `records` (the canonical ones when there are none).
fn metadata(task: &str, truth: &[Value], row_count: usize, pages: u32) -> Value {
    let first = truth.first();
    let schema: Vec<String> = first
        .and_then(Value::as_object)
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    let query: serde_json::Map<String, Value> = ["reporter", "partner", "flow", "hs", "year"]
        .iter()
        .filter_map(|k| {
            first
                .and_then(|r| r.get(*k))
                .map(|v| (k.to_string(), v.clone()))
        })
        .collect();
    let key_fields = ["year", "reporter", "partner", "flow", "hs", "record_id"];
    let dedup_key: Vec<&str> = key_fields
        .iter()
        .copied()
        .filter(|k| schema.iter().any(|s| s == k))
        .collect();
    json!({
        "task_id": task,
        "query": query,
        "row_count": row_count,
        "schema": schema,
        "dedup_key": if dedup_key.is_empty() { vec!["record_id"] } else { dedup_key },
        "request_count": pages,
        "request_stats": {"retries_total": 0},
    })
}

fn run_log(task: &str, pages: u32) -> String {
    let mut lines = vec![format!("INFO task_id={task}")];
    lines.extend((1..=pages).map(|p| format!("INFO request={p} page={p}")));
    lines.push("INFO complete=true".into());
    lines.join("\n")
}

/// Another query's version of a canonical record: another reporter, the year before.
fn other_query(r: &Value) -> Value {
    let mut r = r.clone();
    if let Some(o) = r.as_object_mut() {
        if let Some(Value::String(rep)) = o.get("reporter") {
            let other = if rep == "156" { "842" } else { "156" };
            o.insert("reporter".into(), json!(other));
        }
        match o.get("year") {
            Some(Value::Number(y)) => {
                if let Some(y) = y.as_i64() {
                    o.insert("year".into(), json!(y - 1));
                }
            }
            Some(Value::String(y)) => {
                if let Ok(y) = y.parse::<i64>() {
                    o.insert("year".into(), json!((y - 1).to_string()));
                }
            }
            _ => {}
        }
    }
    r
}

/// A canonical record re-keyed to `other` task: its `record_id` moves to that task's id space.
fn other_task_record(task: &str, other: &str, r: &Value) -> Value {
    let mut r = r.clone();
    if let Some(o) = r.as_object_mut() {
        let id = match o.get("record_id") {
            Some(Value::String(id)) => match id.strip_prefix(task) {
                Some(rest) => format!("{other}{rest}"),
                None => format!("{other}:{id}"),
            },
            Some(v) => format!("{other}:{v}"),
            None => format!("{other}:{}", o.len()),
        };
        o.insert("record_id".into(), json!(id));
    }
    r
}

/// Builds one forged submission from the canonical records; `other_task` is the task id the
/// wrong-task probe answers (another task of the battery).
pub fn forge(kind: ProbeKind, task: &str, truth: &[Value], pages: u32, other_task: &str) -> Forged {
    let n = truth.len();
    let records: Vec<Value> = match kind {
        ProbeKind::Correct | ProbeKind::ContradictoryReport => truth.to_vec(),
        ProbeKind::WrongTaskId => truth
            .iter()
            .map(|r| other_task_record(task, other_task, r))
            .collect(),
        ProbeKind::WrongQuery => truth.iter().map(other_query).collect(),
        ProbeKind::RowCountOff => truth[..n.div_ceil(10)].to_vec(),
        ProbeKind::ContradictedClaim => truth[..n / 2].to_vec(),
        ProbeKind::Empty => Vec::new(),
        ProbeKind::Fabricated => truth
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let mut r = r.clone();
                if let Some(o) = r.as_object_mut() {
                    o.insert("record_id".into(), json!(format!("FAB-{i:06}")));
                }
                r
            })
            .collect(),
        ProbeKind::DuplicateLaden => {
            let mut v = truth.to_vec();
            v.extend(truth.iter().step_by(5).cloned());
            v
        }
        ProbeKind::TotalsLeaked => {
            let mut v = truth.to_vec();
            let per_page = n.div_ceil(pages.max(1) as usize).max(1);
            for (p, chunk) in truth.chunks(per_page).enumerate() {
                let mut total = chunk.first().cloned().unwrap_or(json!({}));
                if let Some(o) = total.as_object_mut() {
                    for field in ["tradeValue", "netWeight", "qty"] {
                        let sum: f64 = chunk
                            .iter()
                            .filter_map(|r| r.get(field).and_then(Value::as_f64))
                            .sum();
                        if o.contains_key(field) {
                            o.insert(field.into(), json!(sum as u64));
                        }
                    }
                    o.insert("partner".into(), json!("WLD"));
                    o.insert(
                        "record_id".into(),
                        json!(format!("{task}-TOTAL-{:04}", p + 1)),
                    );
                    o.insert("is_total".into(), json!(true));
                }
                v.push(total);
            }
            v
        }
        ProbeKind::Partial => truth[..n / 2].to_vec(),
    };
    let declared = match kind {
        ProbeKind::ContradictoryReport => 0,
        ProbeKind::ContradictedClaim => n,
        _ => records.len(),
    };
    let (task_id, described) = match kind {
        ProbeKind::WrongTaskId => (other_task, records.as_slice()),
        ProbeKind::WrongQuery => (task, records.as_slice()),
        _ => (task, truth),
    };
    Forged {
        metadata: metadata(task_id, described, declared, pages),
        run_log: run_log(task_id, pages),
        records,
    }
}

/// Ground-truth quality of a record set: scoring's record-set F1 (the one F1 implementation).
fn ground_truth_f1(truth: &[Value], records: &[Value]) -> f64 {
    benchaudit_scoring::f1::record_set_f1(truth, records).f1
}

/// One probe's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeResult {
    /// Task.
    pub task: String,
    /// Seed.
    pub seed: u64,
    /// Kind of forgery.
    pub kind: ProbeKind,
    /// The target scorer's reward, when it could score.
    pub target_score: Option<f64>,
    /// Ground-truth F1 of the records.
    pub ground_truth: f64,
    /// Why the target could not score, if it failed.
    pub error: Option<String>,
}

/// Criterion sensitivity's verdict on one task's battery.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sensitivity {
    /// Task.
    pub task: String,
    /// The seed the battery was built for.
    pub seed: u64,
    /// Kinds of strictly lower quality that tie with or beat the correct set.
    pub violations: Vec<String>,
    /// Whether a contradictory self-report at equal quality lowers the score ("grades the report").
    pub grades_the_report: bool,
}

/// Criterion sensitivity on one battery: j(correct) > j(x) + ε for every x of strictly lower
/// ground-truth quality; a missing score counts as a violation (the scorer did not separate).
pub fn sensitivity(results: &[ProbeResult], epsilon: f64) -> Option<Sensitivity> {
    let correct = results.iter().find(|r| r.kind == ProbeKind::Correct)?;
    let j_correct = correct.target_score?;
    let mut violations = Vec::new();
    let mut grades_the_report = false;
    for r in results.iter().filter(|r| r.kind != ProbeKind::Correct) {
        let j = r.target_score;
        if r.ground_truth < correct.ground_truth - 1e-12 {
            if j.is_none_or(|j| j_correct <= j + epsilon) {
                violations.push(format!(
                    "{}: target {} vs correct {:.4} at ground truth {:.3} vs {:.3}",
                    r.kind.name(),
                    j.map_or("unscored".into(), |j| format!("{j:.4}")),
                    j_correct,
                    r.ground_truth,
                    correct.ground_truth
                ));
            }
        } else if r.kind == ProbeKind::ContradictoryReport
            && j.is_some_and(|j| j < j_correct - epsilon)
        {
            grades_the_report = true;
        }
    }
    Some(Sensitivity {
        task: correct.task.clone(),
        seed: correct.seed,
        violations,
        grades_the_report,
    })
}

/// The battery and its sensitivity verdict on each of `tasks` the target can probe.
///
/// # Errors
/// The truth hook failed.
pub fn run_battery(target: &dyn Target, tasks: &[&str], seed: u64) -> BatteryOutcome {
    run_battery_of(target, tasks, seed, &ProbeKind::ALL)
}

/// [`run_battery`] with the forgeries `kinds` only (a battery given as data,
/// [`crate::proposed`]); the correct set always runs, as every cell is read against it.
pub fn run_battery_of(
    target: &dyn Target,
    tasks: &[&str],
    seed: u64,
    kinds: &[ProbeKind],
) -> BatteryOutcome {
    run_batteries_of(&[target], tasks, seed, kinds)
        .pop()
        .unwrap_or_else(|| Ok((Vec::new(), Vec::new())))
}

/// One battery outcome per target: its probe results and sensitivity verdicts, or the failure
/// that stopped it.
pub type BatteryOutcome = Result<(Vec<ProbeResult>, Vec<Sensitivity>), String>;

/// [`run_battery`] for several targets at once, the same outcome for each: targets whose truth
/// hook gives the same records (and the same page count) for a task share its forged
/// submissions and their ground-truth F1, which are then built once, and only the scorers run
/// per target.
pub fn run_batteries(targets: &[&dyn Target], tasks: &[&str], seed: u64) -> Vec<BatteryOutcome> {
    run_batteries_of(targets, tasks, seed, &ProbeKind::ALL)
}

fn run_batteries_of(
    targets: &[&dyn Target],
    tasks: &[&str],
    seed: u64,
    kinds: &[ProbeKind],
) -> Vec<BatteryOutcome> {
    let kinds: Vec<ProbeKind> = ProbeKind::ALL
        .into_iter()
        .filter(|k| *k == ProbeKind::Correct || kinds.contains(k))
        .collect();
    let mut out: Vec<BatteryOutcome> = targets
        .iter()
        .map(|_| Ok((Vec::new(), Vec::new())))
        .collect();
    for (i, &id) in tasks.iter().enumerate() {
        // The wrong-task probe answers the battery's next task, or a made-up id with one task.
        let other = match tasks.get((i + 1) % tasks.len()) {
            Some(o) if *o != id => (*o).to_string(),
            _ => format!("{id}_other"),
        };
        // (truth, pages, the targets sharing them)
        let mut groups: Vec<(Vec<Value>, u32, Vec<usize>)> = Vec::new();
        for (t, target) in targets.iter().enumerate() {
            if out.get(t).is_none_or(Result::is_err) {
                continue;
            }
            match target.truth(id, seed) {
                None => {}
                Some(Err(e)) => {
                    out[t] = Err(format!("{e} (task `{id}`)"));
                }
                Some(Ok(truth)) => {
                    let pages = target.pages(id);
                    match groups
                        .iter_mut()
                        .find(|(tr, p, _)| *p == pages && *tr == truth)
                    {
                        Some(g) => g.2.push(t),
                        None => groups.push((truth, pages, vec![t])),
                    }
                }
            }
        }
        for (truth, pages, members) in &groups {
            // Each member's results so far; `None` once its scorer hook is missing (the task
            // is then not probed for that target).
            let mut results: Vec<Option<Vec<ProbeResult>>> = members
                .iter()
                .map(|_| Some(Vec::with_capacity(kinds.len())))
                .collect();
            for &kind in &kinds {
                let forged = forge(kind, id, truth, *pages, &other);
                let gt = ground_truth_f1(truth, &forged.records);
                for (slot, &t) in results.iter_mut().zip(members) {
                    let Some(done) = slot else { continue };
                    let (score, error) = match targets[t].score(id, seed, &forged) {
                        None => {
                            *slot = None;
                            continue;
                        }
                        Some(Ok(s)) => (Some(s), None),
                        Some(Err(e)) => (None, Some(e)),
                    };
                    done.push(ProbeResult {
                        task: id.into(),
                        seed,
                        kind,
                        target_score: score,
                        ground_truth: gt,
                        error,
                    });
                }
            }
            for (slot, &t) in results.into_iter().zip(members) {
                if let Some(results) = slot
                    && let Some(Ok((probes, sens))) = out.get_mut(t)
                {
                    if let Some(s) = sensitivity(&results, targets[t].resolution()) {
                        sens.push(s);
                    }
                    probes.extend(results);
                }
            }
        }
    }
    out
}

/// The criterion-sensitivity cell of the card, from the batteries' verdicts.
pub fn criterion_cell(sens: &[Sensitivity], probes: &[ProbeResult], epsilon: f64) -> Cell {
    if sens.is_empty() {
        return Cell::not_probed("no canonical-truth oracle or scorer hook");
    }
    let score = |task: &str, seed: u64, kind: ProbeKind| {
        probes
            .iter()
            .find(|p| p.task == task && p.seed == seed && p.kind == kind)
            .and_then(|p| p.target_score)
    };
    // A task probed on several seeds is named with its seed.
    let label = |s: &Sensitivity| {
        if sens.iter().filter(|t| t.task == s.task).count() > 1 {
            format!("{} seed {}", s.task, s.seed)
        } else {
            s.task.clone()
        }
    };
    let summary: Vec<String> = sens
        .iter()
        .map(|s| {
            let j = |k| score(&s.task, s.seed, k).map_or("-".into(), |v| format!("{v:.3}"));
            format!(
                "{}: correct {}, fabricated {}, empty {}",
                label(s),
                j(ProbeKind::Correct),
                j(ProbeKind::Fabricated),
                j(ProbeKind::Empty)
            )
        })
        .collect();
    let violations: Vec<String> = sens
        .iter()
        .flat_map(|s| {
            let l = label(s);
            s.violations.iter().map(move |v| format!("{l} {v}"))
        })
        .collect();
    let grades = sens.iter().filter(|s| s.grades_the_report).count();
    let graded = if grades > 0 {
        format!(
            " The scorer grades the report: a contradictory self-report lowers the score at equal ground truth on {grades} task(s)."
        )
    } else {
        String::new()
    };
    if violations.is_empty() {
        Cell {
            status: Status::Pass,
            evidence: format!(
                "j(correct) > j(x) + ε (ε = {epsilon:e}) for every lower-quality forgery. {}.{graded}",
                summary.join("; ")
            ),
        }
    } else {
        Cell {
            status: Status::Fail,
            evidence: format!(
                "{} tie or inversion: {}. {}.{graded}",
                violations.len(),
                violations.join("; "),
                summary.join("; ")
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn truth() -> Vec<Value> {
        (0..10)
            .map(|i| json!({"record_id": format!("T-{i:06}"), "reporter": "842", "year": 2021, "qty": i}))
            .collect()
    }

    #[test]
    fn forged_sets_have_the_intended_quality() {
        let t = truth();
        let q = |k| ground_truth_f1(&t, &forge(k, "T", &t, 2, "U").records);
        assert_eq!(q(ProbeKind::Correct), 1.0);
        assert_eq!(q(ProbeKind::ContradictoryReport), 1.0);
        assert_eq!(q(ProbeKind::Empty), 0.0);
        assert_eq!(q(ProbeKind::Fabricated), 0.0);
        assert!(q(ProbeKind::DuplicateLaden) < 1.0 && q(ProbeKind::DuplicateLaden) > 0.8);
        assert!(q(ProbeKind::TotalsLeaked) < 1.0);
        assert!((q(ProbeKind::Partial) - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(
            forge(ProbeKind::ContradictoryReport, "T", &t, 2, "U").metadata["row_count"],
            json!(0)
        );
        // The stronger forgeries are of strictly lower quality than the correct set.
        assert_eq!(q(ProbeKind::WrongTaskId), 0.0);
        assert_eq!(q(ProbeKind::WrongQuery), 0.0);
        assert!((q(ProbeKind::RowCountOff) - 2.0 * 0.1 / 1.1).abs() < 1e-12);
        assert!((q(ProbeKind::ContradictedClaim) - 2.0 / 3.0).abs() < 1e-12);
        // Each one's self-report says what the probe claims.
        let wrong = forge(ProbeKind::WrongTaskId, "T", &t, 2, "U");
        assert_eq!(wrong.metadata["task_id"], json!("U"));
        assert_eq!(wrong.records[3]["record_id"], json!("U-000003"));
        assert!(wrong.run_log.contains("task_id=U"));
        let query = forge(ProbeKind::WrongQuery, "T", &t, 2, "U").metadata;
        assert_eq!(query["query"], json!({"reporter": "156", "year": 2020}));
        let off = forge(ProbeKind::RowCountOff, "T", &t, 2, "U");
        assert_eq!(
            (off.records.len(), &off.metadata["row_count"]),
            (1, &json!(1))
        );
        let claim = forge(ProbeKind::ContradictedClaim, "T", &t, 2, "U");
        assert_eq!(
            (claim.records.len(), &claim.metadata["row_count"]),
            (5, &json!(10))
        );
    }

    /// A scorer that reads only the self-report (row count and task id consistent, query as
    /// expected) is caught by the stronger probes; the ground-truth F1 fails every one.
    #[test]
    fn the_stronger_probes_separate_under_ground_truth() {
        let t = truth();
        let results: Vec<ProbeResult> = ProbeKind::ALL
            .iter()
            .map(|&kind| {
                let f = forge(kind, "T", &t, 2, "U");
                let gt = ground_truth_f1(&t, &f.records);
                ProbeResult {
                    task: "T".into(),
                    seed: 0,
                    kind,
                    target_score: Some(gt),
                    ground_truth: gt,
                    error: None,
                }
            })
            .collect();
        let s = sensitivity(&results, 1e-12).expect("correct present");
        assert!(s.violations.is_empty(), "{:?}", s.violations);
        // A report-only scorer: 1 when the metadata's row_count equals the lines submitted.
        let report_only: Vec<ProbeResult> = results
            .iter()
            .map(|r| {
                let f = forge(r.kind, "T", &t, 2, "U");
                let consistent = f.metadata["row_count"] == json!(f.records.len());
                ProbeResult {
                    target_score: Some(if consistent { 1.0 } else { 0.0 }),
                    ..r.clone()
                }
            })
            .collect();
        let s = sensitivity(&report_only, 1e-3).expect("correct present");
        for kind in ["wrong_task_id", "wrong_query", "row_count_off"] {
            assert!(
                s.violations.iter().any(|v| v.starts_with(kind)),
                "{kind} not caught: {:?}",
                s.violations
            );
        }
    }

    #[test]
    fn a_tie_below_the_truth_fails_and_a_drop_at_equal_quality_grades_the_report() {
        let mk = |kind, score: f64, gt| ProbeResult {
            task: "T".into(),
            seed: 0,
            kind,
            target_score: Some(score),
            ground_truth: gt,
            error: None,
        };
        let results = vec![
            mk(ProbeKind::Correct, 0.9, 1.0),
            mk(ProbeKind::Fabricated, 0.9, 0.0),
            mk(ProbeKind::ContradictoryReport, 0.5, 1.0),
        ];
        let s = sensitivity(&results, 1e-3).expect("correct present");
        assert_eq!(s.violations.len(), 1);
        assert!(s.grades_the_report);
        let results = vec![
            mk(ProbeKind::Correct, 1.0, 1.0),
            mk(ProbeKind::Empty, 0.0, 0.0),
            mk(ProbeKind::Partial, 0.5, 0.6),
        ];
        assert!(
            sensitivity(&results, 1e-3)
                .expect("correct")
                .violations
                .is_empty()
        );
    }

    /// A target whose truth hook fails on one task, or which has no scorer.
    struct Partial {
        truth_fails_on: &'static str,
        scores: bool,
    }

    impl Target for Partial {
        fn name(&self) -> String {
            "partial".into()
        }
        fn ownership(&self) -> Option<crate::target::DeclaredOwnership> {
            None
        }
        fn registry(&self) -> Option<Vec<crate::target::TargetTask>> {
            None
        }
        fn truth(&self, task: &str, _seed: u64) -> Option<Result<Vec<Value>, String>> {
            Some(if task == self.truth_fails_on {
                Err("no truth here".into())
            } else {
                Ok(truth())
            })
        }
        fn score(&self, _task: &str, _seed: u64, s: &Forged) -> Option<Result<f64, String>> {
            self.scores.then(|| {
                if s.records.is_empty() {
                    Err("nothing to score".into())
                } else {
                    Ok(s.records.len() as f64 / 100.0)
                }
            })
        }
    }

    /// Sharing forged submissions between targets changes no target's battery: each one's
    /// outcome is what its own `run_battery` gives, including a failing truth hook, a missing
    /// scorer and a scorer error.
    #[test]
    #[allow(clippy::unwrap_used)]
    fn batteries_run_together_equal_each_targets_own() {
        use crate::comtrade_target::{ComtradeTarget, Configuration};
        let shipped = ComtradeTarget::new(Configuration::AsShipped);
        let repaired = ComtradeTarget::new(Configuration::Repaired);
        let tasks = ["T3_duplicates", "T4_rate_limit_429"];
        let alone = [
            run_battery(&shipped, &tasks, 1),
            run_battery(&repaired, &tasks, 1),
        ];
        assert!(alone.iter().all(|r| r.as_ref().unwrap().0.len() == 22));
        assert_eq!(run_batteries(&[&shipped, &repaired], &tasks, 1), alone);
        let fails = Partial {
            truth_fails_on: "B",
            scores: true,
        };
        let unscored = Partial {
            truth_fails_on: "none",
            scores: false,
        };
        let fine = Partial {
            truth_fails_on: "none",
            scores: true,
        };
        let tasks = ["A", "B", "C"];
        let together = run_batteries(&[&fails, &unscored, &fine], &tasks, 0);
        let own = [
            run_battery(&fails, &tasks, 0),
            run_battery(&unscored, &tasks, 0),
            run_battery(&fine, &tasks, 0),
        ];
        assert_eq!(together, own);
        assert!(together[0].as_ref().unwrap_err().contains("no truth here"));
        assert_eq!(together[1].as_ref().unwrap().0.len(), 0);
        let fine = &together[2].as_ref().unwrap().0;
        assert_eq!(fine.len(), 33);
        assert!(
            fine.iter()
                .any(|p| p.error.as_deref() == Some("nothing to score"))
        );
    }
}
