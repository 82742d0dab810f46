//! The 2×2 joint intervention (paper §5.2, Table 1): harness {L0, L2} × scorer {legacy judge,
//! ground truth} on shared episodes, per player. L0 payloads must be SHA-256-identical across
//! every player pair; only the L2 × ground-truth cell may separate the players.
//!
//! [`compute`] is the one computation of the 2×2, from any episode records: the audit's own
//! run on its joint task ([`run`]) or a run ledger's (`benchaudit report`).

use std::collections::BTreeMap;

use benchaudit_agents::{EpisodeRecord, Level, Outcome};
use benchaudit_comtrade::TaskSpec;
use benchaudit_runs::{JUDGE_SCALE, Plan, Player, run_all};
use benchaudit_stats::mean;
use serde::{Deserialize, Serialize};

/// One player's four cell means over the (task, seed) episodes it has at both L0 and L2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JointRow {
    /// Player (the ledger's `key.policy`).
    pub player: String,
    /// Stress arm, if any.
    pub arm: Option<String>,
    /// Options hash.
    pub options_hash: String,
    /// Display label (the player, qualified by arm and options where a run needs it).
    pub label: String,
    /// Shared (task, seed) episodes.
    pub n: usize,
    /// L0 × judge (judge total / 100).
    pub l0_judge: f64,
    /// L0 × ground truth (F1).
    pub l0_truth: f64,
    /// L2 × judge.
    pub l2_judge: f64,
    /// L2 × ground truth.
    pub l2_truth: f64,
}

/// Max − min across players of each cell's mean.
///
/// Exists because "the judge compresses the ground-truth spread" is a statement about these.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CellSpread {
    /// L0 × judge.
    pub l0_judge: f64,
    /// L0 × ground truth.
    pub l0_truth: f64,
    /// L2 × judge.
    pub l2_judge: f64,
    /// L2 × ground truth.
    pub l2_truth: f64,
}

/// The 2×2 over all players.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Joint {
    /// Tasks of the shared episodes.
    pub tasks: Vec<String>,
    /// Seeds of the shared episodes.
    pub seeds: Vec<u64>,
    /// One row per player, in the order players first appear in the records.
    pub rows: Vec<JointRow>,
    /// Player pairs compared on the same (task, seed, arm, options) at L0.
    pub l0_pairs: usize,
    /// Of those, pairs whose submitted payloads were SHA-256-identical.
    pub l0_identical: usize,
    /// Spread of each cell over the players.
    pub spread: CellSpread,
}

/// (judge / 100, F1) of one episode.
type Scored = (f64, f64);
/// (player, arm, options hash): a row of the 2×2.
type Family = (String, Option<String>, String);
/// (task, seed) → level → scores: one family's episodes.
type Episodes = BTreeMap<(String, u64), BTreeMap<Level, Scored>>;

/// The 2×2 of `records` (infra errors and unscored episodes left out); `None` when no player
/// has a scored episode at both L0 and L2. `label` names a row from (player, arm, options hash).
pub fn compute(
    records: &[EpisodeRecord],
    label: &dyn Fn(&str, Option<&str>, &str) -> String,
) -> Option<Joint> {
    type PayloadKey = (String, u64, Option<String>, String);
    // family → (task, seed) → level → scores; families in order of first appearance.
    let mut order: Vec<Family> = Vec::new();
    let mut by: BTreeMap<Family, Episodes> = BTreeMap::new();
    // (task, seed, arm, options) → player → payload hash, at L0.
    let mut payloads: BTreeMap<PayloadKey, BTreeMap<String, Option<String>>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.outcome != Outcome::InfraError) {
        let Some(s) = r
            .scores
            .as_ref()
            .filter(|s| s.f1.is_finite() && s.judge_total.is_finite())
        else {
            continue;
        };
        let k = &r.key;
        if matches!(k.level, Level::L0 | Level::L2) {
            let family = (k.policy.clone(), k.arm.clone(), k.options_hash.clone());
            if !by.contains_key(&family) {
                order.push(family.clone());
            }
            by.entry(family)
                .or_default()
                .entry((k.task_id.clone(), k.seed))
                .or_default()
                .insert(k.level, (s.judge_total / JUDGE_SCALE, s.f1));
        }
        if k.level == Level::L0 {
            payloads
                .entry((
                    k.task_id.clone(),
                    k.seed,
                    k.arm.clone(),
                    k.options_hash.clone(),
                ))
                .or_default()
                .insert(k.policy.clone(), r.payload_sha256.clone());
        }
    }
    let (mut tasks, mut seeds) = (Vec::new(), Vec::new());
    let mut rows = Vec::new();
    for family in order {
        let Some(episodes) = by.get(&family) else {
            continue;
        };
        let shared: Vec<(&(String, u64), Scored, Scored)> = episodes
            .iter()
            .filter_map(|(at, levels)| {
                Some((at, *levels.get(&Level::L0)?, *levels.get(&Level::L2)?))
            })
            .collect();
        if shared.is_empty() {
            continue;
        }
        for ((task, seed), _, _) in &shared {
            tasks.push(task.clone());
            seeds.push(*seed);
        }
        // Sums in (task, seed) order: the order is part of the bit-exact result.
        let col = |f: &dyn Fn(Scored, Scored) -> f64| {
            mean(
                &shared
                    .iter()
                    .map(|&(_, l0, l2)| f(l0, l2))
                    .collect::<Vec<_>>(),
            )
            .unwrap_or(f64::NAN)
        };
        let (player, arm, options_hash) = family;
        rows.push(JointRow {
            label: label(&player, arm.as_deref(), &options_hash),
            n: shared.len(),
            l0_judge: col(&|l0, _| l0.0),
            l0_truth: col(&|l0, _| l0.1),
            l2_judge: col(&|_, l2| l2.0),
            l2_truth: col(&|_, l2| l2.1),
            player,
            arm,
            options_hash,
        });
    }
    if rows.is_empty() {
        return None;
    }
    let (mut pairs, mut identical) = (0, 0);
    for by_player in payloads.values() {
        let hashes: Vec<&Option<String>> = by_player.values().collect();
        for i in 0..hashes.len() {
            for j in i + 1..hashes.len() {
                pairs += 1;
                if hashes[i].is_some() && hashes[i] == hashes[j] {
                    identical += 1;
                }
            }
        }
    }
    let spread = |f: fn(&JointRow) -> f64| {
        let (lo, hi) = rows
            .iter()
            .map(f)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        hi - lo
    };
    let spread = CellSpread {
        l0_judge: spread(|r| r.l0_judge),
        l0_truth: spread(|r| r.l0_truth),
        l2_judge: spread(|r| r.l2_judge),
        l2_truth: spread(|r| r.l2_truth),
    };
    tasks.sort();
    tasks.dedup();
    seeds.sort_unstable();
    seeds.dedup();
    Some(Joint {
        tasks,
        seeds,
        rows,
        l0_pairs: pairs,
        l0_identical: identical,
        spread,
    })
}

/// Runs `players` at L0 and L2 on `task` over `seeds` and computes the 2×2 (rows labelled by
/// player); also returns the episodes. `None` when no player produced a scored episode at both
/// levels.
pub fn run(
    players: Vec<Player>,
    task: &'static TaskSpec,
    seeds: &[u64],
    threads: usize,
) -> (Option<Joint>, Vec<EpisodeRecord>) {
    let plan = Plan::new(
        players,
        vec![Level::L0, Level::L2],
        vec![task],
        seeds.to_vec(),
    );
    let records = run_all(&plan, threads);
    (
        compute(&records, &|player, _, _| player.to_string()),
        records,
    )
}
