//! The scaffolds' claims, checked with rule policies: the oracle solves everything at L2, L0
//! makes every policy submit the same bytes, each stand-in departs from the oracle only on its
//! own channel at L2, and L1 hands over exactly the retry decision.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use benchaudit_agents::{
    EpisodeRecord, EpisodeSpec, Level, Outcome, RuleKind, RulePolicy, RunOptions, run_episode,
};
use benchaudit_comtrade::{
    EpisodeOptions, FaultFamily, InterfaceProfile, SubmissionProtocol, TaskSpec, task, tasks,
};

fn run(kind: RuleKind, id: &str, seed: u64, level: Level) -> EpisodeRecord {
    run_with(kind, task(id).unwrap(), seed, level, RunOptions::default())
}

fn run_with(
    kind: RuleKind,
    t: &'static TaskSpec,
    seed: u64,
    level: Level,
    options: RunOptions,
) -> EpisodeRecord {
    run_episode(
        &EpisodeSpec {
            task: t,
            seed,
            level,
            options,
        },
        &mut RulePolicy::new(kind),
    )
    .record
}

fn f1(r: &EpisodeRecord) -> f64 {
    r.scores.as_ref().unwrap().f1
}

#[test]
fn oracle_solves_every_task_at_l2_within_budget() {
    // Every task, seeds 0..999 (SPEC §2.3 solvability), T9 under the escalating adversary.
    for t in tasks() {
        for seed in 0..1000 {
            let r = run_with(RuleKind::Oracle, t, seed, Level::L2, RunOptions::default());
            assert_eq!(r.outcome, Outcome::Submitted, "{} seed {seed}", t.task_id);
            assert_eq!(f1(&r), 1.0, "{} seed {seed}", t.task_id);
            assert!(
                r.counts.requests <= t.max_requests && r.counts.quota_deaths == 0,
                "{} seed {seed}",
                t.task_id
            );
        }
    }
}

#[test]
fn l0_payloads_are_byte_identical_across_every_rule_policy() {
    for t in tasks() {
        for seed in 0..10 {
            let hashes: Vec<(RuleKind, Option<String>)> = RuleKind::ALL
                .into_iter()
                .map(|k| {
                    (
                        k,
                        run_with(k, t, seed, Level::L0, RunOptions::default()).payload_sha256,
                    )
                })
                .collect();
            let first = hashes[0].1.clone();
            assert!(first.is_some(), "{} seed {seed}: L0 submits", t.task_id);
            for (k, h) in &hashes {
                assert_eq!(
                    h,
                    &first,
                    "{} seed {seed}: {} differs at L0",
                    t.task_id,
                    k.name()
                );
            }
        }
    }
}

/// Seeds where a fault-family task actually serves what the stand-in mishandles.
const SEEDS: std::ops::Range<u64> = 0..10;

#[test]
fn no_dedup_loses_precision_only_where_duplicates_are_served() {
    for t in tasks() {
        for seed in SEEDS {
            let r = run(RuleKind::NoDedup, t.task_id, seed, Level::L2);
            let s = r.scores.as_ref().unwrap();
            assert_eq!(s.recall, 1.0, "{}", t.task_id);
            // T9's adversary injects duplicates too; drift repeats rows across re-fetches.
            if t.fault.duplicate_rates().is_some()
                || matches!(t.fault, FaultFamily::PageDrift | FaultFamily::Adaptive)
            {
                assert!(
                    s.precision < 1.0,
                    "{} seed {seed}: duplicates kept",
                    t.task_id
                );
            } else {
                assert_eq!(s.precision, 1.0, "{} seed {seed}", t.task_id);
            }
        }
    }
}

#[test]
fn keeps_totals_loses_precision_only_on_the_totals_trap() {
    for t in tasks() {
        let r = run(RuleKind::KeepsTotals, t.task_id, 3, Level::L2);
        let s = r.scores.as_ref().unwrap();
        assert_eq!(s.recall, 1.0, "{}", t.task_id);
        if t.fault == FaultFamily::TotalsTrap {
            assert_eq!(s.precision, 750.0 / 753.0);
        } else {
            assert_eq!(s.precision, 1.0, "{}", t.task_id);
        }
    }
}

#[test]
fn skips_faults_loses_recall_only_on_fault_tasks() {
    for t in tasks() {
        for seed in SEEDS {
            let r = run(RuleKind::SkipsFaults, t.task_id, seed, Level::L2);
            let s = r.scores.as_ref().unwrap();
            assert_eq!(s.precision, 1.0, "{}", t.task_id);
            if t.fault.planned_faults().is_some() {
                assert!(s.recall < 1.0, "{} seed {seed}", t.task_id);
                assert!(r.counts.skips >= 1 && r.counts.retries == 0);
            } else if t.fault == FaultFamily::Adaptive {
                // The adversary's 429s are drawn per step: recall drops exactly when one was met.
                assert_eq!(
                    s.recall < 1.0,
                    r.counts.faults_seen > 0,
                    "{} seed {seed}",
                    t.task_id
                );
            } else {
                assert_eq!(s.recall, 1.0, "{} seed {seed}", t.task_id);
            }
        }
    }
}

#[test]
fn single_pass_loses_recall_only_under_drift() {
    for t in tasks() {
        let r = run(RuleKind::SinglePass, t.task_id, 1, Level::L2);
        let s = r.scores.as_ref().unwrap();
        assert_eq!(s.precision, 1.0);
        if t.fault == FaultFamily::PageDrift {
            assert!(s.recall < 1.0);
        } else {
            assert_eq!(s.recall, 1.0, "{}", t.task_id);
        }
    }
}

#[test]
fn page_zero_ends_with_f1_zero_and_an_empty_payload() {
    for t in tasks() {
        let r = run(RuleKind::PageZero, t.task_id, 0, Level::L2);
        assert_eq!(r.outcome, Outcome::Submitted);
        let s = r.scores.as_ref().unwrap();
        assert_eq!((s.f1, s.submitted), (0.0, 0), "{}", t.task_id);
        assert_eq!(
            r.counts.requests,
            benchaudit_agents::rules::PAGE_ZERO_REPEATS,
            "repeats the identical rejected call"
        );
    }
    // Under the strict interface the 422 says "do not retry": one call, then it gives up.
    let strict = RunOptions {
        episode: EpisodeOptions {
            interface: InterfaceProfile::Strict,
            ..EpisodeOptions::default()
        },
        ..RunOptions::default()
    };
    let r = run_with(
        RuleKind::PageZero,
        task("T3_duplicates").unwrap(),
        0,
        Level::L2,
        strict,
    );
    assert_eq!(r.counts.requests, 1);
}

#[test]
fn fabricator_and_empty_fail_only_on_re_emission() {
    for t in tasks() {
        let oracle = run(RuleKind::Oracle, t.task_id, 2, Level::L2);
        for kind in [RuleKind::Fabricator, RuleKind::Empty] {
            let r = run(kind, t.task_id, 2, Level::L2);
            assert_eq!(f1(&r), 0.0, "{} {}", kind.name(), t.task_id);
            assert_eq!(
                r.counts.requests, oracle.counts.requests,
                "same fetching as the oracle"
            );
        }
    }
    // The judge cannot tell a fabrication from the truth.
    let oracle = run(RuleKind::Oracle, "T2_multi_page", 0, Level::L2);
    let fab = run(RuleKind::Fabricator, "T2_multi_page", 0, Level::L2);
    assert_eq!(
        oracle.scores.as_ref().unwrap().judge_total,
        fab.scores.as_ref().unwrap().judge_total
    );
}

#[test]
fn l1_always_retry_covers_everything_where_always_skip_does_not() {
    for id in [
        "T4_rate_limit_429",
        "T5_server_error_500",
        "T8_mixed_faults",
    ] {
        for seed in SEEDS {
            let retry = run(RuleKind::AlwaysRetry, id, seed, Level::L1);
            let skip = run(RuleKind::AlwaysSkip, id, seed, Level::L1);
            assert_eq!(retry.coverage, Some(1.0), "{id} seed {seed}");
            assert!(skip.coverage.unwrap() < 1.0, "{id} seed {seed}");
            assert_eq!(
                (retry.counts.retries, retry.counts.skips),
                (retry.counts.faults_seen, 0)
            );
            assert_eq!(
                (skip.counts.retries, skip.counts.skips),
                (0, skip.counts.faults_seen)
            );
            assert!(skip.counts.skips >= 1);
        }
    }
    // Dedup and totals stay with the harness at L1: the stand-ins change nothing there.
    for kind in [
        RuleKind::NoDedup,
        RuleKind::KeepsTotals,
        RuleKind::Fabricator,
        RuleKind::Empty,
    ] {
        let a = run(kind, "T8_mixed_faults", 4, Level::L1);
        let b = run(RuleKind::Oracle, "T8_mixed_faults", 4, Level::L1);
        assert_eq!(a.payload_sha256, b.payload_sha256, "{}", kind.name());
    }
}

#[test]
fn protocols_lift_nothing_for_the_oracle_and_resolve_served_ids() {
    for protocol in [SubmissionProtocol::Ids, SubmissionProtocol::Chunked] {
        let options = RunOptions {
            episode: EpisodeOptions {
                submission: protocol,
                ..EpisodeOptions::default()
            },
            ..RunOptions::default()
        };
        for id in ["T3_duplicates", "T7_totals_trap"] {
            for level in Level::ALL {
                let r = run_with(RuleKind::Oracle, task(id).unwrap(), 1, level, options);
                assert_eq!(f1(&r), 1.0, "{id} {level} {protocol:?}");
            }
            let r = run_with(
                RuleKind::Fabricator,
                task(id).unwrap(),
                1,
                Level::L2,
                options,
            );
            assert_eq!(f1(&r), 0.0);
        }
    }
}

#[test]
fn records_are_bit_identical_on_replay() {
    for kind in RuleKind::ALL {
        for level in Level::ALL {
            let a = serde_json::to_string(&run(kind, "T8_mixed_faults", 7, level)).unwrap();
            let b = serde_json::to_string(&run(kind, "T8_mixed_faults", 7, level)).unwrap();
            assert_eq!(a, b);
        }
    }
}
