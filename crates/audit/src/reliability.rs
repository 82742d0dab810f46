//! Reliability by scaffolding level (SPEC §7 metrics on ground-truth F1): per player and level,
//! the summary and the five numbers of the reliability spectrum's box, over the execution tasks'
//! episodes.

use benchaudit_agents::{EpisodeRecord, Level};
use benchaudit_stats::{FiveNumbers, Summary, SummaryConfig, five_numbers, summarize};
use serde::Serialize;

/// Reliability of one player at one level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlayerReliability {
    /// Player.
    pub player: String,
    /// Level.
    pub level: String,
    /// Summary over execution tasks × seeds.
    pub summary: Summary,
    /// Minimum, type-7 quartiles and maximum, for the spectrum's box and whiskers.
    pub five: FiveNumbers,
}

/// The ground-truth F1 of `player`'s scored episodes at `level`, in pool order.
fn f1_of(pool: &[EpisodeRecord], player: &str, level: Level) -> Vec<f64> {
    pool.iter()
        .filter(|r| r.key.policy == player && r.key.level == level)
        .filter_map(|r| r.scores.as_ref().map(|s| s.f1))
        .collect()
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
            let values = f1_of(pool, player, level);
            if let (Ok(summary), Ok(five)) = (summarize(&values, &config), five_numbers(&values)) {
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
