//! The key-free self-audit of ComtradeBench reproduces the paper's findings.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use benchaudit_agents::{Decision, Level, OwnershipMap};
use benchaudit_audit::pipeline::ComtradeAudit;
use benchaudit_audit::{AuditConfig, ComtradeTarget, Configuration, Owner, Status, audit_comtrade};

fn audit(targets: &[ComtradeTarget]) -> ComtradeAudit {
    audit_comtrade(&AuditConfig::key_free(5, 2), targets).unwrap()
}

#[test]
fn as_shipped_licenses_self_report_compliance_and_repaired_model_capability() {
    let a = audit(&[
        ComtradeTarget::new(Configuration::AsShipped),
        ComtradeTarget::new(Configuration::Repaired),
    ]);
    for c in &a.checks {
        assert!(
            c.pass,
            "oracle check failed: {} (expected {}, observed {})",
            c.name, c.expected, c.observed
        );
    }
    let (shipped, repaired) = (&a.cards[0], &a.cards[1]);
    assert_eq!(
        shipped.criterion_sensitivity.status,
        Status::Fail,
        "{}",
        shipped.criterion_sensitivity.evidence
    );
    assert_eq!(shipped.ownership.status, Status::Fail);
    assert_eq!(shipped.licensed_claim.label(), "self-report compliance");
    assert!(
        shipped
            .criterion_sensitivity
            .evidence
            .contains("fabricated 0.987"),
        "{}",
        shipped.criterion_sensitivity.evidence
    );
    assert_eq!(
        repaired.criterion_sensitivity.status,
        Status::Pass,
        "{}",
        repaired.criterion_sensitivity.evidence
    );
    assert_eq!(
        repaired.ownership.status,
        Status::Pass,
        "{}",
        repaired.ownership.evidence
    );
    assert_eq!(repaired.replay.status, Status::Pass);
    assert_eq!(repaired.licensed_claim.label(), "model capability");

    // The 2×2: every L0 payload identical; only L2 × ground truth separates the stand-ins fully.
    let j = a.joint.as_ref().expect("the 2×2 has data");
    assert_eq!(j.l0_identical, j.l0_pairs);
    assert_eq!(j.spread.l0_judge, Some(0.0));
    assert_eq!(j.spread.l0_truth, Some(0.0));
    assert_eq!(j.spread.l2_truth, Some(1.0));
    assert!(
        j.spread.l2_judge < j.spread.l2_truth,
        "the judge compresses the L2 spread ({:?} vs {:?})",
        j.spread.l2_judge,
        j.spread.l2_truth
    );
    let row = |p: &str| j.rows.iter().find(|r| r.player == p).unwrap();
    assert_eq!(
        row("fabricator").l2_judge,
        row("oracle").l2_judge,
        "the judge cannot see fabrication"
    );
}

#[test]
fn measured_ownership_equals_the_declared_map_and_catches_a_mis_declared_one() {
    let a = audit(&[ComtradeTarget::new(Configuration::Repaired)]);
    assert!(
        a.ownership.iter().all(|c| c.declared == Some(c.measured)),
        "{:?}",
        a.ownership
    );
    fn wrong() -> OwnershipMap {
        let mut m = OwnershipMap::declared();
        for e in &mut m.entries {
            if e.0 == Level::L1 && e.1 == Decision::Dedup {
                e.2 = Owner::Model;
            }
        }
        m
    }
    let lying = ComtradeTarget {
        configuration: Configuration::Repaired,
        declared: Some(wrong),
    };
    let a = audit(&[lying]);
    let cell = a
        .ownership
        .iter()
        .find(|c| c.level == "L1" && c.decision == "dedup")
        .unwrap();
    assert_ne!(cell.declared, Some(cell.measured));
    assert_eq!(a.cards[0].ownership.status, Status::Fail);
    assert!(
        a.cards[0]
            .ownership
            .evidence
            .contains("dedup at L1 declared Model, measured Harness"),
        "{}",
        a.cards[0].ownership.evidence
    );
}

#[test]
fn t7_re_emission_cap_is_computed_and_lifted_by_ids() {
    let a = audit(&[ComtradeTarget::new(Configuration::Repaired)]);
    let t7 = a
        .re_emission
        .iter()
        .find(|r| r.task == "T7_totals_trap")
        .unwrap();
    assert!(t7.scale_bound);
    let (f6, f12) = (t7.full[0].2, t7.full[1].2);
    assert!(
        (0.2..0.32).contains(&f6) && (0.38..0.55).contains(&f12),
        "F1 caps {f6:.3} / {f12:.3}"
    );
    assert!(t7.ids[0].2 > f6 && t7.ids[1].2 > f12);
    assert!(
        a.re_emission
            .iter()
            .filter(|r| r.task == "T3_duplicates")
            .all(|r| !r.scale_bound)
    );
}
