//! The oracle checks: the audit's assertions about its own numbers (paper A.12). They pin what
//! the paper reports of ComtradeBench — the released judge's probe values, identical L0
//! payloads, the L2 separation, replay, measured ownership, solvability, the licensed claims —
//! so a regression in any stage fails the audit instead of changing its card quietly.

use serde::Serialize;

use crate::comtrade_target::{Configuration, Suite, short_id};
use crate::ownership::MeasuredCell;
use crate::pipeline::ComtradeAudit;
use crate::probes::ProbeKind;

/// One of the audit's regression assertions about its own numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// What is asserted.
    pub name: String,
    /// Expected, in words.
    pub expected: String,
    /// Observed, in words.
    pub observed: String,
    /// Whether it held.
    pub pass: bool,
}

/// Runs every check on a finished audit.
pub fn checks(a: &ComtradeAudit, suite: &Suite) -> Vec<Check> {
    let mut out = Vec::new();
    let mut check = |name: String, expected: String, observed: String, pass: bool| {
        out.push(Check {
            name,
            expected,
            observed,
            pass,
        })
    };
    let jc = suite.judge_check;
    let judge = |kind: ProbeKind| {
        a.probes
            .iter()
            .find(|(c, _)| *c == Configuration::AsShipped)
            .and_then(|(_, p)| p.iter().find(|r| r.task == jc.task && r.kind == kind))
            .and_then(|r| r.target_score)
    };
    let (c, f, e) = (
        judge(ProbeKind::Correct),
        judge(ProbeKind::Fabricated),
        judge(ProbeKind::Empty),
    );
    // The judge on 0–1, as every table, card and answer shows it.
    let points = |v: f64| format!("{v:.3}");
    let show = |v: Option<f64>| v.map_or("unscored".into(), points);
    let t = short_id(jc.task);
    check(
        format!("{t} judge: fabricated = correct = {}", points(jc.correct)),
        format!("{} and {}", points(jc.correct), points(jc.correct)),
        format!("{} and {}", show(f), show(c)),
        c.is_some() && c == f && c.is_some_and(|c| (c - jc.correct).abs() < 1e-9),
    );
    check(
        format!("{t} judge: empty floors at {}", points(jc.empty)),
        points(jc.empty),
        show(e),
        e.is_some_and(|e| (e - jc.empty).abs() < 1e-9),
    );
    let (pairs, identical) = a
        .joint
        .as_ref()
        .map_or((0, 0), |j| (j.l0_pairs, j.l0_identical));
    check(
        "L0 payloads identical across every player pair".into(),
        format!("{pairs} of {pairs} pairs"),
        format!("{identical} of {pairs} pairs"),
        pairs > 0 && identical == pairs,
    );
    let l2 = |p: &str| {
        a.joint
            .as_ref()
            .and_then(|j| j.rows.iter().find(|r| r.player == p))
            .and_then(|r| r.l2_truth)
    };
    let sep = l2("oracle").zip(l2("empty")).map(|(o, e)| o - e);
    check(
        "L2 ground truth separates oracle from empty by 1.0".into(),
        "1.000".into(),
        sep.map_or("missing".into(), |s| format!("{s:.3}")),
        sep == Some(1.0),
    );
    check(
        "replay identical".into(),
        "0 mismatches".into(),
        format!(
            "{} mismatches of {}",
            a.replay.mismatches.len(),
            a.replay.episodes
        ),
        a.replay.mismatches.is_empty() && a.replay.episodes > 0,
    );
    let mism: Vec<&MeasuredCell> = a
        .ownership
        .iter()
        .filter(|c| c.level != "L1" && c.declared.is_some_and(|d| d != c.measured))
        .collect();
    check(
        "measured ownership = declared at L0 and L2".into(),
        "0 mismatches".into(),
        format!("{} mismatches", mism.len()),
        mism.is_empty() && !a.ownership.is_empty(),
    );
    let unsolved: Vec<String> = a
        .oracle
        .iter()
        .filter(|o| o.solved < o.seeds)
        .map(|o| o.task.clone())
        .collect();
    check(
        "oracle solves every task at L2 within budget".into(),
        "every seed".into(),
        if unsolved.is_empty() {
            "every seed".into()
        } else {
            format!("unsolved: {}", unsolved.join(", "))
        },
        unsolved.is_empty(),
    );
    let bound = a
        .re_emission
        .iter()
        .find(|r| r.task == suite.scale_bound_task);
    let lifted =
        bound.is_some_and(|r| r.scale_bound && r.ids.iter().zip(&r.full).all(|(i, f)| i.1 > f.1));
    check(
        format!(
            "{} is scale-bound at L2 and the ids protocol lifts its cap",
            short_id(suite.scale_bound_task)
        ),
        "full cap < 1 at both budgets; ids cap higher".into(),
        bound.map_or("missing".into(), |r| {
            format!(
                "full F1 caps {:.2}/{:.2}, ids {:.2}/{:.2}",
                r.full[0].2, r.full[1].2, r.ids[0].2, r.ids[1].2
            )
        }),
        lifted,
    );
    // Paper §5.2: at L1 the model owns only retry-or-skip, and the oracle (like every model
    // the paper ran) never skips: judged on its own episodes the channel is degenerate.
    let l1 = a
        .channels
        .iter()
        .find(|c| c.level == "L1" && c.player == "oracle")
        .and_then(|c| c.channels.iter().find(|c| c.decision == "retry"));
    check(
        "L1: the oracle's retry channel is degenerate (skip chosen 0 of n)".into(),
        "skip chosen 0 of n > 0 faulted episodes: degenerate".into(),
        l1.map_or("missing".into(), |c| {
            format!(
                "skip chosen {} of {}: {}",
                c.deviant,
                c.episodes,
                if c.non_degenerate {
                    "non-degenerate"
                } else {
                    "degenerate"
                }
            )
        }),
        l1.is_some_and(|c| c.episodes > 0 && c.deviant == 0 && !c.non_degenerate),
    );
    let scoped = a
        .cards
        .iter()
        .filter_map(|c| c.claim_scope.as_ref())
        .all(|s| {
            s.excluded.iter().any(|e| e.task == suite.scale_bound_task)
                && !s.holds_on.iter().any(|t| t == suite.scale_bound_task)
        });
    check(
        format!(
            "model capability is licensed without the scale-bound {}",
            short_id(suite.scale_bound_task)
        ),
        format!("{} excluded", short_id(suite.scale_bound_task)),
        a.cards
            .iter()
            .filter_map(|c| c.claim_scope.as_ref().map(|s| s.label()))
            .collect::<Vec<_>>()
            .join(" | "),
        scoped && a.cards.iter().any(|c| c.claim_scope.is_some()),
    );
    let claims: Vec<String> = a
        .cards
        .iter()
        .map(|c| c.licensed_claim.label().to_string())
        .collect();
    check(
        "licensed claims: as shipped → self-report compliance; repaired → model capability".into(),
        "self-report compliance, model capability".into(),
        claims.join(", "),
        claims == ["self-report compliance", "model capability"],
    );
    out
}
