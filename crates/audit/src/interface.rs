//! The interface confound (paper C.6, SPEC §2.3) as a card cell: a probe that obeys the tool
//! result's `retry` flag literally ([`RuleKind::RetryLiteral`]) plays the same task and seeds
//! under the `legacy` interface (422 with `retry: true`, as released) and under `strict`
//! (`retry: false`), with the oracle as control. When the literal follower's F1 moves with
//! the profile and the oracle's does not, the envelope — not capability — decides the score.
//!
//! The cell is evidence beside the lattice's three cells: it never changes the licensed
//! claim (docs/decisions.md, "The interface-confound cell").

use benchaudit_agents::{EpisodeRecord, Level, RuleKind, RunOptions};
use benchaudit_comtrade::{
    Episode, EpisodeOptions, FetchPageArgs, InterfaceProfile, TaskSpec, ToolError,
};
use benchaudit_runs::{Job, Plan, Player, collect};
use serde::Serialize;

use crate::card::{Cell, Status};

/// The smallest F1 difference the cell reads as a difference.
pub const EPSILON: f64 = 1e-9;

/// One player's episodes under one profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileRow {
    /// Player name.
    pub player: String,
    /// Interface profile.
    pub interface: InterfaceProfile,
    /// Scored episodes.
    pub episodes: usize,
    /// Mean ground-truth F1 over them (`None`: no scored episode).
    pub mean_f1: Option<f64>,
    /// Episodes at F1 = 1.
    pub solved: usize,
}

/// The interface-confound stage's evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InterfaceConfound {
    /// Tasks played.
    pub tasks: Vec<String>,
    /// Seeds per task.
    pub seeds: Vec<u64>,
    /// The profile the audited configurations ship with (the episode stages' own).
    pub audited: InterfaceProfile,
    /// The literal follower and the oracle under each profile.
    pub rows: Vec<ProfileRow>,
    /// The literal follower's mean F1 under `strict` minus under the audited profile
    /// (`None` when either has no scored episode).
    pub difference: Option<f64>,
    /// The same difference for the oracle (the control; 0 when the envelope is the cause).
    pub control_difference: Option<f64>,
    /// What the episode answers the probe's opening call (`fetch_page(page=0)`) under each
    /// profile, as played on the first task and seed: the envelope the cell is about.
    pub rejections: Vec<(InterfaceProfile, ToolError)>,
}

/// The probe and its control.
pub fn players() -> Vec<Player> {
    vec![
        Player::rule(RuleKind::RetryLiteral),
        Player::rule(RuleKind::Oracle),
    ]
}

fn row(records: &[EpisodeRecord], player: &str, interface: InterfaceProfile) -> ProfileRow {
    let f1: Vec<f64> = records
        .iter()
        .filter(|r| r.key.policy == player)
        .filter_map(|r| r.scores.as_ref().map(|s| s.f1))
        .collect();
    ProfileRow {
        player: player.to_string(),
        interface,
        episodes: f1.len(),
        mean_f1: (!f1.is_empty()).then(|| f1.iter().sum::<f64>() / f1.len() as f64),
        solved: f1.iter().filter(|f| **f >= 1.0 - EPSILON).count(),
    }
}

/// Plays the probe and the control at L2 on `tasks` × `seeds` under both profiles.
pub fn measure(tasks: &[&'static TaskSpec], seeds: &[u64], threads: usize) -> InterfaceConfound {
    measure_with(tasks, seeds, &mut |jobs| collect(jobs, threads))
}

/// [`measure`], its episodes obtained from `play`, which returns the records of the jobs it is
/// given in job order (the audit answers the ones an earlier stage played from their records).
pub fn measure_with(
    tasks: &[&'static TaskSpec],
    seeds: &[u64],
    play: &mut dyn FnMut(&[Job<'_>]) -> Vec<EpisodeRecord>,
) -> InterfaceConfound {
    let audited = RunOptions::default().episode.interface;
    let mut rows = Vec::new();
    for interface in [InterfaceProfile::Legacy, InterfaceProfile::Strict] {
        let plan = Plan::new(players(), vec![Level::L2], tasks.to_vec(), seeds.to_vec())
            .with_options(RunOptions {
                episode: EpisodeOptions {
                    interface,
                    ..EpisodeOptions::default()
                },
                ..RunOptions::default()
            });
        let records = play(&plan.jobs());
        for p in plan.player_names() {
            rows.push(row(&records, &p, interface));
        }
    }
    let diff = |player: RuleKind| {
        let mean = |i: InterfaceProfile| {
            rows.iter()
                .find(|r| r.player == player.name() && r.interface == i)
                .and_then(|r| r.mean_f1)
        };
        Some(mean(InterfaceProfile::Strict)? - mean(audited)?)
    };
    let rejections = match (tasks.first(), seeds.first()) {
        (Some(task), Some(seed)) => [InterfaceProfile::Legacy, InterfaceProfile::Strict]
            .into_iter()
            .filter_map(|interface| {
                let options = EpisodeOptions {
                    interface,
                    ..EpisodeOptions::default()
                };
                let opening = FetchPageArgs {
                    page: 0,
                    page_size: None,
                };
                Episode::new(task, *seed, options)
                    .fetch_page(opening)
                    .err()
                    .map(|e| (interface, e))
            })
            .collect(),
        _ => Vec::new(),
    };
    InterfaceConfound {
        rejections,
        tasks: tasks.iter().map(|t| t.task_id.to_string()).collect(),
        seeds: seeds.to_vec(),
        audited,
        difference: diff(RuleKind::RetryLiteral),
        control_difference: diff(RuleKind::Oracle),
        rows,
    }
}

fn f3(x: f64) -> String {
    format!("{x:.3}")
}

/// The card cell. **fail**: the literal follower's mean F1 under the audited profile is
/// below its F1 under `strict` by more than [`EPSILON`] while the oracle's is not — the
/// argument-error envelope decides its score. **pass**: the profile moves no score.
/// **not probed**: a profile has no scored episode, or the control moves too (the difference
/// is then not the envelope's alone).
pub fn cell(c: &InterfaceConfound) -> Cell {
    let find = |player: RuleKind, i: InterfaceProfile| {
        c.rows
            .iter()
            .find(|r| r.player == player.name() && r.interface == i)
    };
    let (Some(diff), Some(control)) = (c.difference, c.control_difference) else {
        return Cell::not_probed(
            "the retry-literal probe or its oracle control has no scored episode under a profile",
        );
    };
    if control.abs() > EPSILON {
        return Cell::not_probed(format!(
            "the oracle control's F1 moves with the profile too (Δ {}): the difference is not the envelope's alone",
            f3(control)
        ));
    }
    let name = |i: InterfaceProfile| match i {
        InterfaceProfile::Legacy => "legacy",
        InterfaceProfile::Strict => "strict",
    };
    let mean = |i| {
        find(RuleKind::RetryLiteral, i)
            .and_then(|r| r.mean_f1)
            .map_or_else(|| "no data".to_string(), f3)
    };
    let solved = |i| find(RuleKind::RetryLiteral, i).map_or((0, 0), |r| (r.solved, r.episodes));
    let (sa, na) = solved(c.audited);
    let (ss, ns) = solved(InterfaceProfile::Strict);
    let numbers = format!(
        "a probe that obeys the retry flag literally scores F1 {} under {} ({sa} of {na} solved) and {} under strict ({ss} of {ns}); the oracle control does not move",
        mean(c.audited),
        name(c.audited),
        mean(InterfaceProfile::Strict),
    );
    let envelope = c
        .rejections
        .iter()
        .find(|(i, _)| *i == c.audited)
        .map_or_else(
            || "the argument-error envelope".to_string(),
            |(_, e)| {
                format!(
                    "the argument-error envelope ({} with retry: {})",
                    e.status, e.retry
                )
            },
        );
    if diff > EPSILON {
        Cell {
            status: Status::Fail,
            evidence: format!(
                "{numbers}: {envelope}, not capability, decides the score (Δ {})",
                f3(diff)
            ),
        }
    } else {
        Cell {
            status: Status::Pass,
            evidence: format!("{numbers}: the interface profile moves no score"),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_legacy_envelope_decides_a_literal_followers_score() {
        let t3 = benchaudit_comtrade::task("T3_duplicates").unwrap();
        let c = measure(&[t3], &[0, 1, 2], 2);
        assert_eq!(c.audited, InterfaceProfile::Legacy);
        let f1 = |p: RuleKind, i| {
            c.rows
                .iter()
                .find(|r| r.player == p.name() && r.interface == i)
                .and_then(|r| r.mean_f1)
                .unwrap()
        };
        assert_eq!(f1(RuleKind::RetryLiteral, InterfaceProfile::Legacy), 0.0);
        assert_eq!(f1(RuleKind::RetryLiteral, InterfaceProfile::Strict), 1.0);
        assert_eq!(f1(RuleKind::Oracle, InterfaceProfile::Legacy), 1.0);
        assert_eq!(c.difference, Some(1.0));
        assert_eq!(c.control_difference, Some(0.0));
        let cell = cell(&c);
        assert_eq!(cell.status, Status::Fail, "{}", cell.evidence);
        assert!(
            cell.evidence
                .contains("F1 0.000 under legacy (0 of 3 solved)")
        );
        assert!(cell.evidence.contains("1.000 under strict (3 of 3)"));
        assert!(
            cell.evidence.contains("(422 with retry: true)"),
            "{}",
            cell.evidence
        );
        let retry: Vec<bool> = c.rejections.iter().map(|(_, e)| e.retry).collect();
        assert_eq!(retry, [true, false], "legacy says retry, strict does not");
    }

    #[test]
    fn no_difference_passes_and_a_moving_control_or_no_data_is_not_probed() {
        let row = |player: RuleKind, interface, mean_f1: Option<f64>| ProfileRow {
            player: player.name().into(),
            interface,
            episodes: usize::from(mean_f1.is_some()),
            mean_f1,
            solved: 0,
        };
        let mut c = InterfaceConfound {
            tasks: vec!["T3_duplicates".into()],
            seeds: vec![0],
            audited: InterfaceProfile::Strict,
            rows: vec![
                row(RuleKind::RetryLiteral, InterfaceProfile::Strict, Some(1.0)),
                row(RuleKind::Oracle, InterfaceProfile::Strict, Some(1.0)),
            ],
            difference: Some(0.0),
            control_difference: Some(0.0),
            rejections: Vec::new(),
        };
        assert_eq!(cell(&c).status, Status::Pass);
        c.control_difference = Some(0.5);
        assert_eq!(cell(&c).status, Status::NotProbed);
        c.control_difference = None;
        assert_eq!(cell(&c).status, Status::NotProbed);
    }
}
