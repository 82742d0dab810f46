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

/// One player's four cell means over the (task, seed) episodes it has at both L0 and L2; a
/// cell over zero such episodes is `None` ("no data"), never 0.
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
    pub l0_judge: Option<f64>,
    /// L0 × ground truth (F1).
    pub l0_truth: Option<f64>,
    /// L2 × judge.
    pub l2_judge: Option<f64>,
    /// L2 × ground truth.
    pub l2_truth: Option<f64>,
}

/// Max − min across the players with data of each cell's mean (`None` when no player has).
///
/// Exists because "the judge compresses the ground-truth spread" is a statement about these.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CellSpread {
    /// L0 × judge.
    pub l0_judge: Option<f64>,
    /// L0 × ground truth.
    pub l0_truth: Option<f64>,
    /// L2 × judge.
    pub l2_judge: Option<f64>,
    /// L2 × ground truth.
    pub l2_truth: Option<f64>,
}

/// The 2×2 over all players.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Joint {
    /// Tasks of the shared episodes.
    pub tasks: Vec<String>,
    /// Seeds of the shared episodes.
    pub seeds: Vec<u64>,
    /// One row per player with an L0 or L2 episode, in the order players first appear in the
    /// records; a player without shared scored episodes has `n` 0 and no data in its cells.
    pub rows: Vec<JointRow>,
    /// Player pairs compared on the same (task, seed, arm, options) at L0.
    pub l0_pairs: usize,
    /// Of those, pairs whose submitted payloads were SHA-256-identical.
    pub l0_identical: usize,
    /// Spread of each cell over the players.
    pub spread: CellSpread,
}

/// The 2×2 of `records` (infra errors and unscored episodes left out of the means, not of the
/// rows); `None` when no player has a scored episode at both L0 and L2. `label` names a row from (player, arm, options
/// hash).
pub fn compute(
    records: &[EpisodeRecord],
    label: &dyn Fn(&str, Option<&str>, &str) -> String,
) -> Option<Joint> {
    compute_from(records.iter().map(JointEpisode::from), label)
}

/// What the 2×2 reads of one episode: its key, how it ended, its two scores and (at L0) the
/// hash of its payload.
///
/// Exists so a reader that keeps only these of a record (a report streaming a ledger) computes
/// the 2×2 with the same code as the audit ([`compute_from`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointEpisode<'a> {
    /// The player (`key.policy`).
    pub policy: &'a str,
    /// `key.level`.
    pub level: Level,
    /// `key.task_id`.
    pub task_id: &'a str,
    /// `key.seed`.
    pub seed: u64,
    /// `key.arm`.
    pub arm: Option<&'a str>,
    /// `key.options_hash`.
    pub options_hash: &'a str,
    /// How the episode ended.
    pub outcome: Outcome,
    /// `(scores.f1, scores.judge_total)` when scored.
    pub scores: Option<(f64, f64)>,
    /// `payload_sha256`.
    pub payload_sha256: Option<&'a str>,
}

impl<'a> From<&'a EpisodeRecord> for JointEpisode<'a> {
    fn from(r: &'a EpisodeRecord) -> Self {
        JointEpisode {
            policy: &r.key.policy,
            level: r.key.level,
            task_id: &r.key.task_id,
            seed: r.key.seed,
            arm: r.key.arm.as_deref(),
            options_hash: &r.key.options_hash,
            outcome: r.outcome,
            scores: r.scores.as_ref().map(|s| (s.f1, s.judge_total)),
            payload_sha256: r.payload_sha256.as_deref(),
        }
    }
}

/// [`compute`] over episodes given as [`JointEpisode`]s, in ledger order.
pub fn compute_from<'a>(
    episodes: impl IntoIterator<Item = JointEpisode<'a>>,
    label: &dyn Fn(&str, Option<&str>, &str) -> String,
) -> Option<Joint> {
    type GroupKey<'a> = (&'a str, Level, &'a str, Option<&'a str>, &'a str);
    // The episodes' groups in order of first appearance, each with its scored episodes by
    // seed (a repeated seed keeps the last scored record, as a map insert would).
    let mut order: Vec<GroupKey<'a>> = Vec::new();
    let mut scored: BTreeMap<GroupKey<'a>, BTreeMap<u64, JointScored<Option<&'a str>>>> =
        BTreeMap::new();
    for k in episodes {
        if !matches!(k.level, Level::L0 | Level::L2) {
            continue;
        }
        let key = (k.policy, k.level, k.task_id, k.arm, k.options_hash);
        let group = scored.entry(key).or_insert_with(|| {
            order.push(key);
            BTreeMap::new()
        });
        if let Some(s) = JointScored::of(k.outcome, k.scores, k.payload_sha256) {
            group.insert(k.seed, JointScored { seed: k.seed, ..s });
        }
    }
    let groups: Vec<JointGroup<'a, Vec<JointScored<Option<&'a str>>>>> = order
        .into_iter()
        .enumerate()
        .map(|(first, key)| {
            let (policy, level, task_id, arm, options_hash) = key;
            JointGroup {
                policy,
                level,
                task_id,
                arm,
                options_hash,
                first,
                scored: scored
                    .remove(&key)
                    .map(|m| m.into_values().collect())
                    .unwrap_or_default(),
            }
        })
        .collect();
    compute_grouped(&groups, label)
}

/// One scored episode of a [`JointGroup`]: not an infra error, both scores finite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointScored<P> {
    /// Seed.
    pub seed: u64,
    /// Judge total / 100.
    pub judge: f64,
    /// Ground-truth F1.
    pub f1: f64,
    /// What its submitted payload is compared by (at L0); two payloads are identical when
    /// these are equal and not `None`.
    pub payload: P,
}

impl<P> JointScored<Option<P>> {
    /// The episode as the 2×2 reads it, or `None` when it is left out of the means (an infra
    /// error, unscored, or a score not finite); its seed is 0 (set it).
    pub fn of(outcome: Outcome, scores: Option<(f64, f64)>, payload: Option<P>) -> Option<Self> {
        let (f1, judge_total) = scores
            .filter(|_| outcome != Outcome::InfraError)
            .filter(|(f1, judge_total)| f1.is_finite() && judge_total.is_finite())?;
        Some(JointScored {
            seed: 0,
            judge: judge_total / JUDGE_SCALE,
            f1,
            payload,
        })
    }
}

/// A group's scored episodes ([`JointScored::of`]), ascending seed, each seed once, read as
/// often as the 2×2 needs them (a reader that keeps its episodes as columns gives a view).
pub trait ScoredEpisodes {
    /// What a payload is compared by.
    type Payload: PartialEq;
    /// The episodes.
    fn scored(&self) -> impl Iterator<Item = JointScored<Option<Self::Payload>>> + '_;
}

impl<P: PartialEq + Clone> ScoredEpisodes for Vec<JointScored<Option<P>>> {
    type Payload = P;
    fn scored(&self) -> impl Iterator<Item = JointScored<Option<P>>> + '_ {
        self.iter().cloned()
    }
}

/// The episodes of one (player, level, task, arm, options) group the 2×2 reads.
#[derive(Debug, Clone, PartialEq)]
pub struct JointGroup<'a, S> {
    /// The player (`key.policy`).
    pub policy: &'a str,
    /// `key.level` (groups at other levels than L0 and L2 are ignored).
    pub level: Level,
    /// `key.task_id`.
    pub task_id: &'a str,
    /// `key.arm`.
    pub arm: Option<&'a str>,
    /// `key.options_hash`.
    pub options_hash: &'a str,
    /// When the group's first episode came (any ordered key): the rows follow their players'
    /// first episodes at L0 or L2.
    pub first: usize,
    /// Its scored episodes.
    pub scored: S,
}

/// (player or task, arm, options hash): a family of the 2×2, or an L0 payload comparison's
/// (task, arm, options).
type FamilyKey<'a> = (&'a str, Option<&'a str>, &'a str);

/// One cell's value of a (task, seed) episode from its L0 and L2 records.
type Pick<P> = dyn Fn(&JointScored<Option<P>>, &JointScored<Option<P>>) -> f64;

/// [`compute`] over episodes given by group: the one computation behind [`compute_from`],
/// for a reader that keeps a run's episodes by group (a report). Groups are read in place:
/// what is held is one family's means at a time.
pub fn compute_grouped<S: ScoredEpisodes>(
    groups: &[JointGroup<'_, S>],
    label: &dyn Fn(&str, Option<&str>, &str) -> String,
) -> Option<Joint> {
    let groups: Vec<&JointGroup<'_, S>> = groups
        .iter()
        .filter(|g| matches!(g.level, Level::L0 | Level::L2))
        .collect();
    // Families (player, arm, options) in order of their first episode.
    let mut firsts: BTreeMap<FamilyKey<'_>, usize> = BTreeMap::new();
    for g in &groups {
        let first = firsts
            .entry((g.policy, g.arm, g.options_hash))
            .or_insert(g.first);
        *first = (*first).min(g.first);
    }
    let mut order: Vec<(FamilyKey<'_>, usize)> = firsts.into_iter().collect();
    order.sort_by_key(|&(_, first)| first);
    let mut tasks = std::collections::BTreeSet::new();
    let mut seeds = std::collections::BTreeSet::new();
    let mut rows = Vec::new();
    for ((player, arm, options_hash), _) in order {
        // The family's groups by task (in task order) at each level.
        let mut by_task: BTreeMap<&str, [Option<&JointGroup<'_, S>>; 2]> = BTreeMap::new();
        for g in groups
            .iter()
            .filter(|g| (g.policy, g.arm, g.options_hash) == (player, arm, options_hash))
        {
            let slot = usize::from(g.level == Level::L2);
            by_task.entry(g.task_id).or_default()[slot] = Some(g);
        }
        let both: Vec<(&str, &JointGroup<'_, S>, &JointGroup<'_, S>)> = by_task
            .iter()
            .filter_map(|(task, [l0, l2])| Some((*task, (*l0)?, (*l2)?)))
            .collect();
        // One value of each (task, seed) episode scored at both levels, in (task, seed)
        // order: the order is part of the bit-exact result.
        let shared = |f: &Pick<S::Payload>, each: &mut dyn FnMut(&str, u64)| {
            let mut values = Vec::new();
            for (task, l0, l2) in &both {
                let mut at_l2 = l2.scored.scored().peekable();
                for a in l0.scored.scored() {
                    while at_l2.next_if(|b| b.seed < a.seed).is_some() {}
                    if let Some(b) = at_l2.next_if(|b| b.seed == a.seed) {
                        values.push(f(&a, &b));
                        each(task, a.seed);
                    }
                }
            }
            values
        };
        // `mean` of no episodes is an error: the cell is None and reads "no data".
        let l0_judge = shared(&|l0, _| l0.judge, &mut |task, seed| {
            tasks.insert(task.to_string());
            seeds.insert(seed);
        });
        let n = l0_judge.len();
        let col = |f: &Pick<S::Payload>| mean(&shared(f, &mut |_, _| {})).ok();
        rows.push(JointRow {
            label: label(player, arm, options_hash),
            n,
            l0_judge: mean(&l0_judge).ok(),
            l0_truth: col(&|l0, _| l0.f1),
            l2_judge: col(&|_, l2| l2.judge),
            l2_truth: col(&|_, l2| l2.f1),
            player: player.to_string(),
            arm: arm.map(str::to_string),
            options_hash: options_hash.to_string(),
        });
    }
    if rows.iter().all(|r| r.n == 0) {
        return None;
    }
    // Player pairs on the same (task, seed, arm, options) at L0: the L0 groups of one (task,
    // arm, options), one per player, joined by seed.
    let mut buckets: BTreeMap<FamilyKey<'_>, Vec<&JointGroup<'_, S>>> = BTreeMap::new();
    for g in groups.iter().filter(|g| g.level == Level::L0) {
        buckets
            .entry((g.task_id, g.arm, g.options_hash))
            .or_default()
            .push(g);
    }
    let (mut pairs, mut identical) = (0, 0);
    for players in buckets.values() {
        let mut cursors: Vec<_> = players
            .iter()
            .map(|g| g.scored.scored().peekable())
            .collect();
        while let Some(seed) = cursors
            .iter_mut()
            .filter_map(|c| c.peek().map(|e| e.seed))
            .min()
        {
            let hashes: Vec<Option<S::Payload>> = cursors
                .iter_mut()
                .filter_map(|c| c.next_if(|e| e.seed == seed).map(|e| e.payload))
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
    }
    let spread = |f: fn(&JointRow) -> Option<f64>| {
        rows.iter()
            .filter_map(f)
            .fold(None, |acc: Option<(f64, f64)>, v| {
                Some(acc.map_or((v, v), |(a, b)| (a.min(v), b.max(v))))
            })
            .map(|(lo, hi)| hi - lo)
    };
    let spread = CellSpread {
        l0_judge: spread(|r| r.l0_judge),
        l0_truth: spread(|r| r.l0_truth),
        l2_judge: spread(|r| r.l2_judge),
        l2_truth: spread(|r| r.l2_truth),
    };
    Some(Joint {
        tasks: tasks.into_iter().collect(),
        seeds: seeds.into_iter().collect(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use benchaudit_agents::RuleKind;
    use benchaudit_comtrade::task;
    use proptest::prelude::*;

    fn records() -> Vec<EpisodeRecord> {
        let t = task("T1_single_page").expect("task");
        let plan = Plan::new(
            vec![
                Player::rule(RuleKind::Oracle),
                Player::rule(RuleKind::Empty),
            ],
            vec![Level::L0, Level::L2],
            vec![t],
            vec![0, 1],
        );
        run_all(&plan, 1)
    }

    #[test]
    fn a_player_without_shared_episodes_reads_no_data_never_zero() {
        let mut rs = records();
        // The empty player's L2 episodes all ended in infra errors: it has L0 data only.
        for r in rs
            .iter_mut()
            .filter(|r| r.key.policy == "empty" && r.key.level == Level::L2)
        {
            r.outcome = Outcome::InfraError;
            r.scores = None;
        }
        let j = compute(&rs, &|p, _, _| p.to_string()).expect("the oracle has data");
        let empty = j
            .rows
            .iter()
            .find(|r| r.player == "empty")
            .expect("row kept");
        assert_eq!(empty.n, 0);
        assert_eq!(
            (
                empty.l0_judge,
                empty.l0_truth,
                empty.l2_judge,
                empty.l2_truth
            ),
            (None, None, None, None)
        );
        let json = serde_json::to_value(empty).expect("json");
        assert!(json["l2_truth"].is_null() && json["l0_judge"].is_null());
        let oracle = j.rows.iter().find(|r| r.player == "oracle").expect("row");
        assert_eq!((oracle.n, oracle.l2_truth), (2, Some(1.0)));
        // The spread is over the players with data: one player spreads 0, not 1 − 0.
        assert_eq!(j.spread.l2_truth, Some(0.0));
        // Nobody with shared episodes: no 2×2 at all.
        for r in rs.iter_mut().filter(|r| r.key.level == Level::L2) {
            r.outcome = Outcome::InfraError;
            r.scores = None;
        }
        assert_eq!(compute(&rs, &|p, _, _| p.to_string()), None);
    }

    type Scored = (f64, f64);
    type Family = (String, Option<String>, String);
    type Episodes = BTreeMap<(String, u64), BTreeMap<Level, Scored>>;

    /// The computation as it was before it went by group (records in a map per family).
    #[allow(clippy::type_complexity)]
    fn reference<'a>(
        episodes: impl IntoIterator<Item = JointEpisode<'a>>,
        label: &dyn Fn(&str, Option<&str>, &str) -> String,
    ) -> Option<Joint> {
        type PayloadKey = (String, u64, Option<String>, String);
        // family → (task, seed) → level → scores; families in order of first appearance.
        let mut order: Vec<Family> = Vec::new();
        let mut by: BTreeMap<Family, Episodes> = BTreeMap::new();
        // (task, seed, arm, options) → player → payload hash, at L0.
        let mut payloads: BTreeMap<PayloadKey, BTreeMap<String, Option<String>>> = BTreeMap::new();
        for k in episodes {
            if !matches!(k.level, Level::L0 | Level::L2) {
                continue;
            }
            let family = (
                k.policy.to_string(),
                k.arm.map(str::to_string),
                k.options_hash.to_string(),
            );
            if !by.contains_key(&family) {
                order.push(family.clone());
                by.insert(family.clone(), BTreeMap::new());
            }
            let Some((f1, judge_total)) = k
                .scores
                .filter(|_| k.outcome != Outcome::InfraError)
                .filter(|(f1, judge_total)| f1.is_finite() && judge_total.is_finite())
            else {
                continue;
            };
            by.entry(family)
                .or_default()
                .entry((k.task_id.to_string(), k.seed))
                .or_default()
                .insert(k.level, (judge_total / JUDGE_SCALE, f1));
            if k.level == Level::L0 {
                payloads
                    .entry((
                        k.task_id.to_string(),
                        k.seed,
                        k.arm.map(str::to_string),
                        k.options_hash.to_string(),
                    ))
                    .or_default()
                    .insert(k.policy.to_string(), k.payload_sha256.map(str::to_string));
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
            for ((task, seed), _, _) in &shared {
                tasks.push(task.clone());
                seeds.push(*seed);
            }
            // Sums in (task, seed) order: the order is part of the bit-exact result.
            // `mean` of no episodes is an error: the cell is None and reads "no data".
            let col = |f: &dyn Fn(Scored, Scored) -> f64| {
                mean(
                    &shared
                        .iter()
                        .map(|&(_, l0, l2)| f(l0, l2))
                        .collect::<Vec<_>>(),
                )
                .ok()
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
        if rows.iter().all(|r| r.n == 0) {
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
        let spread = |f: fn(&JointRow) -> Option<f64>| {
            rows.iter()
                .filter_map(f)
                .fold(None, |acc: Option<(f64, f64)>, v| {
                    Some(acc.map_or((v, v), |(a, b)| (a.min(v), b.max(v))))
                })
                .map(|(lo, hi)| hi - lo)
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

    /// (player, level, task, seed, arm, outcome, score kind, payload) indices.
    type Drawn = (usize, u8, usize, u64, usize, u8, u8, u8);

    fn episode_strategy() -> impl Strategy<Value = Vec<Drawn>> {
        prop::collection::vec(
            (
                0..3usize,
                0..3u8,
                0..3usize,
                0..4u64,
                0..2usize,
                0..4u8,
                0..3u8,
                0..3u8,
            ),
            0..60,
        )
    }

    proptest::proptest! {
        #[test]
        fn by_group_is_the_reference_computation(eps in episode_strategy()) {
            let players = ["b", "a", "c"];
            let tasks = ["T2", "T10", "T1"];
            let arms = [None, Some("x")];
            let payloads = [None, Some("h1"), Some("h2")];
            let episodes: Vec<JointEpisode<'_>> = eps
                .iter()
                .map(|&(p, level, t, seed, arm, outcome, score, payload)| JointEpisode {
                    policy: players[p],
                    level: [Level::L0, Level::L1, Level::L2][usize::from(level)],
                    task_id: tasks[t],
                    seed,
                    arm: arms[arm],
                    options_hash: if arm == 0 { "o1" } else { "o2" },
                    outcome: if outcome == 0 { Outcome::InfraError } else { Outcome::Submitted },
                    scores: match score {
                        0 => None,
                        1 => Some((0.25 * f64::from(outcome), 50.0)),
                        _ => Some((1.0, 10.0 * f64::from(payload))),
                    },
                    payload_sha256: payloads[usize::from(payload)],
                })
                .collect();
            let label = |p: &str, a: Option<&str>, o: &str| format!("{p}{a:?}{o}");
            let new = compute_from(episodes.iter().copied(), &label);
            let old = reference(episodes.iter().copied(), &label);
            proptest::prop_assert_eq!(new, old);
        }
    }
}
