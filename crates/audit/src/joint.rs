//! The 2×2 joint intervention (paper §5.2, Table 1): harness {L0, L2} × scorer {legacy judge,
//! ground truth} on shared episodes, per player. L0 payloads must be SHA-256-identical across
//! every player pair; only the L2 × ground-truth cell may separate the players.

use benchaudit_agents::{EpisodeRecord, Level, RunOptions};
use benchaudit_comtrade::TaskSpec;
use serde::Serialize;

use crate::runs::{Player, product, run_jobs};

/// One player's four cell means.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JointRow {
    /// Player.
    pub player: String,
    /// L0 × judge (judge total / 100).
    pub l0_judge: f64,
    /// L0 × ground truth (F1).
    pub l0_truth: f64,
    /// L2 × judge.
    pub l2_judge: f64,
    /// L2 × ground truth.
    pub l2_truth: f64,
}

/// The 2×2 over all players.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Joint {
    /// Task.
    pub task: String,
    /// Seeds per cell.
    pub seeds: Vec<u64>,
    /// Per-player means.
    pub rows: Vec<JointRow>,
    /// Player pairs compared at L0 (per seed) and how many had identical payloads.
    pub l0_pairs: usize,
    /// Identical L0 payload pairs.
    pub l0_identical: usize,
    /// Spread (max − min over players) of each cell: [L0×judge, L0×truth, L2×judge, L2×truth].
    pub spread: [f64; 4],
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = v.collect();
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Runs the 2×2 on `task` over `seeds`; also returns the episodes (they join the pool).
pub fn run(
    players: &[Player],
    task: &'static TaskSpec,
    seeds: &[u64],
    threads: usize,
) -> (Joint, Vec<EpisodeRecord>) {
    let jobs = product(
        players,
        &[Level::L0, Level::L2],
        &[task],
        seeds,
        RunOptions::default(),
    );
    let records = run_jobs(&jobs, threads);
    let cell = |p: &str, l: Level, judge: bool| {
        mean(
            records
                .iter()
                .filter(|r| r.key.policy == p && r.key.level == l)
                .filter_map(|r| {
                    r.scores
                        .as_ref()
                        .map(|s| if judge { s.judge_total / 100.0 } else { s.f1 })
                }),
        )
    };
    let rows: Vec<JointRow> = players
        .iter()
        .map(|p| JointRow {
            player: p.name.clone(),
            l0_judge: cell(&p.name, Level::L0, true),
            l0_truth: cell(&p.name, Level::L0, false),
            l2_judge: cell(&p.name, Level::L2, true),
            l2_truth: cell(&p.name, Level::L2, false),
        })
        .collect();
    let (mut pairs, mut identical) = (0, 0);
    for &seed in seeds {
        let hashes: Vec<&Option<String>> = records
            .iter()
            .filter(|r| r.key.level == Level::L0 && r.key.seed == seed)
            .map(|r| &r.payload_sha256)
            .collect();
        for i in 0..hashes.len() {
            for j in i + 1..hashes.len() {
                pairs += 1;
                if hashes[i].is_some() && hashes[i] == hashes[j] {
                    identical += 1;
                }
            }
        }
    }
    let spread_of = |f: fn(&JointRow) -> f64| {
        let v: Vec<f64> = rows.iter().map(f).collect();
        v.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
            - v.iter().cloned().fold(f64::INFINITY, f64::min)
    };
    let spread = [
        spread_of(|r| r.l0_judge),
        spread_of(|r| r.l0_truth),
        spread_of(|r| r.l2_judge),
        spread_of(|r| r.l2_truth),
    ];
    (
        Joint {
            task: task.task_id.into(),
            seeds: seeds.to_vec(),
            rows,
            l0_pairs: pairs,
            l0_identical: identical,
            spread,
        },
        records,
    )
}
