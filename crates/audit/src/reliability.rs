//! Reliability by scaffolding level (SPEC §7 metrics on ground-truth F1): per player and level,
//! the summary and the five numbers of the reliability spectrum's box, over the execution tasks'
//! episodes. The mean's CI pools tasks, so it resamples seeds within each task (the stratified
//! bootstrap, as every pooled CI of a report).

use benchaudit_agents::{EpisodeRecord, Level};
use benchaudit_stats::{FiveNumbers, Summary, SummaryConfig, five_numbers, summarize_stratified};
use serde::Serialize;

/// Reliability of one player at one level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlayerReliability {
    /// Player.
    pub player: String,
    /// Level.
    pub level: String,
    /// Summary over execution tasks × seeds; its CI is stratified by task.
    pub summary: Summary,
    /// Minimum, type-7 quartiles and maximum, for the spectrum's box and whiskers.
    pub five: FiveNumbers,
}

/// The ground-truth F1 of `player`'s scored episodes at `level`, in pool order, and the same
/// values per task (tasks in order of first appearance).
fn f1_of(pool: &[EpisodeRecord], player: &str, level: Level) -> (Vec<f64>, Vec<Vec<f64>>) {
    let mut all = Vec::new();
    let mut strata: Vec<(&str, Vec<f64>)> = Vec::new();
    for r in pool
        .iter()
        .filter(|r| r.key.policy == player && r.key.level == level)
    {
        if let Some(f1) = r.scores.as_ref().map(|s| s.f1) {
            all.push(f1);
            match strata.iter_mut().find(|(t, _)| *t == r.key.task_id) {
                Some((_, v)) => v.push(f1),
                None => strata.push((&r.key.task_id, vec![f1])),
            }
        }
    }
    (all, strata.into_iter().map(|(_, v)| v).collect())
}

/// One row per (player, level) with scored episodes in `pool`, players in the given order.
pub fn spectrum(
    pool: &[EpisodeRecord],
    players: &[String],
    threads: usize,
) -> Vec<PlayerReliability> {
    let config = SummaryConfig {
        threads,
        ..SummaryConfig::default()
    };
    let mut out = Vec::new();
    for player in players {
        for level in Level::ALL {
            let (values, strata) = f1_of(pool, player, level);
            if let (Ok(summary), Ok(five)) = (
                summarize_stratified(&values, &strata, &config),
                five_numbers(&values),
            ) {
                out.push(PlayerReliability {
                    player: player.clone(),
                    level: level.to_string(),
                    summary,
                    five,
                });
            }
        }
    }
    out
}
