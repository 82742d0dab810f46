//! Declared vs measured ownership (paper §4.1): for each decision and level, a stand-in that is
//! wrong on exactly that decision runs beside the oracle on the tasks where the decision
//! matters; identical payloads mean the harness owns the decision, whatever the declaration
//! says. Then D_claimed ⊆ D_model and non-degeneracy of each model-owned channel from episode
//! data (Var(A) > 0 and E[Y|A=a₁] ≠ E[Y|A=a₂]).

use benchaudit_agents::{
    Decision, EpisodeRecord, EpisodeSpec, Level, Outcome, RuleKind, RunOptions,
};
use benchaudit_comtrade::{TaskSpec, task};
use benchaudit_runs::{Job, Player, collect};
use serde::Serialize;

use crate::card::{Cell, Status};
use crate::comtrade_target::{Suite, decision_name};
use crate::target::{DeclaredOwnership, Owner, Target};

/// One measured cell.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredCell {
    /// Level.
    pub level: String,
    /// Decision.
    pub decision: String,
    /// Declared owner (None: no declaration).
    pub declared: Option<Owner>,
    /// Measured owner.
    pub measured: Owner,
    /// Episodes compared and how many payloads differed from the oracle's.
    pub compared: usize,
    /// Payloads that differed.
    pub differed: usize,
}

/// Measures who owns each decision at each level by intervention: the suite's stand-ins for a
/// decision beside the oracle on the tasks where the decision matters.
pub fn measure(
    declared: Option<&DeclaredOwnership>,
    suite: &Suite,
    seeds: &[u64],
    threads: usize,
) -> Vec<MeasuredCell> {
    measure_with(declared, suite, seeds, &mut |jobs| collect(jobs, threads))
}

/// [`measure`], its episodes obtained from `play`, which returns the records of the jobs it
/// is given in job order (the audit answers the ones an earlier stage played from their
/// records). Every cell's jobs go to `play` at once.
pub fn measure_with(
    declared: Option<&DeclaredOwnership>,
    suite: &Suite,
    seeds: &[u64],
    play: &mut dyn FnMut(&[Job<'_>]) -> Vec<EpisodeRecord>,
) -> Vec<MeasuredCell> {
    let oracle = Player::rule(RuleKind::Oracle);
    let stand_ins: Vec<Player> = RuleKind::STAND_INS
        .iter()
        .map(|k| Player::rule(*k))
        .collect();
    // Each cell's (level, decision) and how many of the jobs are its own, in order.
    let mut groups: Vec<(Level, Decision, usize)> = Vec::new();
    let mut jobs: Vec<Job<'_>> = Vec::new();
    for level in Level::ALL {
        for decision in Decision::ALL {
            let (kinds, task_ids) = (suite.ownership_probe)(decision);
            let tasks: Vec<&'static TaskSpec> = task_ids.iter().filter_map(|id| task(id)).collect();
            let before = jobs.len();
            for kind in kinds {
                let Some(player) = stand_ins.iter().find(|p| p.name() == kind.name()) else {
                    continue;
                };
                for &t in &tasks {
                    for &seed in seeds {
                        let spec = EpisodeSpec {
                            task: t,
                            seed,
                            level,
                            options: RunOptions::default(),
                        };
                        jobs.push(Job::new(&oracle, spec));
                        jobs.push(Job::new(player, spec));
                    }
                }
            }
            groups.push((level, decision, jobs.len() - before));
        }
    }
    let all = play(&jobs);
    let mut rest = all.as_slice();
    let mut cells = Vec::new();
    for (level, decision, n) in groups {
        let (records, tail) = rest.split_at(n.min(rest.len()));
        rest = tail;
        let pairs: Vec<(&EpisodeRecord, &EpisodeRecord)> = records
            .chunks(2)
            .filter_map(|c| Some((c.first()?, c.get(1)?)))
            .collect();
        let differed = pairs
            .iter()
            .filter(|(o, s)| o.payload_sha256 != s.payload_sha256)
            .count();
        let measured = if differed > 0 {
            Owner::Model
        } else {
            Owner::Harness
        };
        cells.push(MeasuredCell {
            level: level.to_string(),
            decision: decision_name(decision).into(),
            declared: declared.and_then(|d| d.owner(&level.to_string(), decision_name(decision))),
            measured,
            compared: pairs.len(),
            differed,
        });
    }
    cells
}

/// Non-degeneracy of one decision channel over a pool of episodes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Channel {
    /// Decision.
    pub decision: String,
    /// Episodes where the decision arose.
    pub episodes: usize,
    /// Episodes where the action was the deviant one (skip, keep duplicates, keep totals,
    /// incomplete collection, empty or fabricated submission).
    pub deviant: usize,
    /// Mean outcome when the action was taken / not taken.
    pub mean_y: (Option<f64>, Option<f64>),
    /// Var(A) > 0 and the two means differ.
    pub non_degenerate: bool,
}

/// The action variable A of a decision in an episode, when the decision arose.
fn action(decision: Decision, r: &EpisodeRecord) -> Option<bool> {
    let s = r.scores.as_ref()?;
    let total = task(&r.key.task_id)?.total_rows;
    match decision {
        Decision::Retry => (r.counts.faults_seen > 0).then_some(r.counts.skips > 0),
        Decision::Dedup => (r.counts.duplicates_served > 0 && s.submitted > 0)
            .then_some(s.submitted > s.distinct_ids),
        Decision::TotalsFilter => {
            (r.counts.totals_served > 0 && s.submitted > 0).then_some(s.totals_rows > 0)
        }
        // Only episodes where every fault met was retried: rows of a page given up on purpose
        // (the retry channel, or a skip the harness imputed) are missing for a reason other
        // than pagination, so they must not make this channel fire.
        Decision::Pagination => (s.submitted > 0
            && s.true_unique > 0
            && r.counts.skips == 0
            && r.counts.imputed_decisions == 0)
            .then_some(s.distinct_ids.saturating_sub(s.totals_rows) < total),
        Decision::Submission => {
            (r.outcome == Outcome::Submitted).then_some(s.submitted == 0 || s.true_unique == 0)
        }
    }
}

/// What the deviant action of a decision is, in the words the card uses ("skip chosen 0 of
/// 40").
pub fn deviant_action(decision: &str) -> &'static str {
    match decision {
        "retry" => "skip",
        "dedup" => "keep duplicates",
        "totals_filter" => "keep totals",
        "pagination" => "incomplete collection",
        "submission" => "empty or fabricated submission",
        _ => "deviant action",
    }
}

/// The decision channels of one player's own episodes at one level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlayerChannels {
    /// Level.
    pub level: String,
    /// Player (the ledger's `key.policy`).
    pub player: String,
    /// Non-degeneracy of each decision over this player's episodes only.
    pub channels: Vec<Channel>,
}

/// The channels of every player at every level, each judged on that player's own episodes:
/// a stand-in built to deviate never makes another player's channel look non-degenerate.
pub fn channels_by_player(pool: &[EpisodeRecord], players: &[String]) -> Vec<PlayerChannels> {
    let mut out = Vec::new();
    for level in Level::ALL {
        for player in players {
            let mine = pool
                .iter()
                .filter(|r| r.key.level == level && r.key.policy == *player);
            out.push(PlayerChannels {
                level: level.to_string(),
                player: player.clone(),
                channels: channels(mine),
            });
        }
    }
    out
}

/// One player's non-degeneracy verdict at one level: every claimed decision the model owns
/// there (as measured) must be non-degenerate in that player's own episodes.
pub fn player_cell(
    declared: &DeclaredOwnership,
    measured: &[MeasuredCell],
    chans: &PlayerChannels,
) -> Cell {
    let level = &chans.level;
    let owned: Vec<&String> = declared
        .claimed
        .iter()
        .filter(|d| {
            measured
                .iter()
                .any(|c| &c.level == level && &c.decision == *d && c.measured == Owner::Model)
        })
        .collect();
    if owned.is_empty() {
        return Cell::not_probed(format!(
            "the harness owns every claimed decision at {level}: no channel of {} to judge",
            chans.player
        ));
    }
    let mut bad = Vec::new();
    let mut good = Vec::new();
    for d in owned {
        let c = chans.channels.iter().find(|c| &c.decision == d);
        let (k, n) = c.map_or((0, 0), |c| (c.deviant, c.episodes));
        let text = format!("{d}: {} chosen {k} of {n}", deviant_action(d));
        if c.is_some_and(|c| c.non_degenerate) {
            good.push(text);
        } else {
            bad.push(text);
        }
    }
    if bad.is_empty() {
        Cell {
            status: Status::Pass,
            evidence: format!(
                "{} at {level}: every model-owned claimed channel non-degenerate ({}).",
                chans.player,
                good.join("; ")
            ),
        }
    } else {
        Cell {
            status: Status::Fail,
            evidence: format!(
                "{} at {level}: degenerate ({}){}.",
                chans.player,
                bad.join("; "),
                if good.is_empty() {
                    String::new()
                } else {
                    format!("; non-degenerate: {}", good.join("; "))
                }
            ),
        }
    }
}

/// The calibration of every decision channel per level (the paper's rule-policy pre-run
/// check): each decision over the episodes of the oracle and of the stand-ins built to deviate
/// on exactly that decision, so a deviation elsewhere (an empty submission, say) never lands in
/// the "not deviant" group. It shows that the channel can move ground-truth F1; it is no
/// player's non-degeneracy.
pub fn calibration(pool: &[EpisodeRecord]) -> Vec<(String, Vec<Channel>)> {
    Level::ALL
        .iter()
        .map(|&level| {
            let chans = Decision::ALL
                .iter()
                .filter_map(|&d| {
                    let paired = pool.iter().filter(move |r| {
                        r.key.level == level
                            && RuleKind::parse(&r.key.policy).is_some_and(|k| {
                                k == RuleKind::Oracle || k.wrong_decision() == Some(d)
                            })
                    });
                    channels(paired)
                        .into_iter()
                        .find(|c| c.decision == decision_name(d))
                })
                .collect();
            (level.to_string(), chans)
        })
        .collect()
}

/// Non-degeneracy of every decision over episodes (Y = ground-truth F1).
pub fn channels<'a, I>(pool: I) -> Vec<Channel>
where
    I: IntoIterator<Item = &'a EpisodeRecord> + Clone,
{
    Decision::ALL
        .iter()
        .map(|&d| {
            let mut yes = Vec::new();
            let mut no = Vec::new();
            for r in pool.clone() {
                if let (Some(a), Some(s)) = (action(d, r), r.scores.as_ref()) {
                    if a { yes.push(s.f1) } else { no.push(s.f1) }
                }
            }
            let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
            let (my, mn) = (mean(&yes), mean(&no));
            let non_degenerate = matches!((my, mn), (Some(a), Some(b)) if (a - b).abs() > 1e-9);
            Channel {
                decision: decision_name(d).into(),
                episodes: yes.len() + no.len(),
                deviant: yes.len(),
                mean_y: (my, mn),
                non_degenerate,
            }
        })
        .collect()
}

/// The ownership-completeness cell (the lattice's input): at the scored level, D_claimed ⊆
/// D_model as measured, every claimed channel outcome-sensitive in `calibration` ([`calibration`]:
/// the oracle beside the stand-ins built to deviate on each decision, the paper's rule-policy
/// pre-run check), and the declaration never contradicted by the
/// measurement. Whether a player's own choices vary is judged per player
/// ([`player_cell`]), never over this pool.
pub fn cell(
    target: &dyn Target,
    measured: &[MeasuredCell],
    calibration: &[(String, Vec<Channel>)],
) -> Cell {
    let Some(declared) = target.ownership() else {
        return Cell::not_probed("no scaffold-ownership map (the `ownership` hook)");
    };
    let level = declared.scored_level.clone();
    let model: Vec<String> = measured
        .iter()
        .filter(|c| c.level == level && c.measured == Owner::Model)
        .map(|c| c.decision.clone())
        .collect();
    let missing: Vec<&String> = declared
        .claimed
        .iter()
        .filter(|d| !model.contains(d))
        .collect();
    let chans = calibration
        .iter()
        .find(|(l, _)| *l == level)
        .map(|(_, c)| c.as_slice())
        .unwrap_or(&[]);
    let degenerate: Vec<String> = declared
        .claimed
        .iter()
        .filter(|d| model.contains(d))
        .filter(|d| !chans.iter().any(|c| &c.decision == *d && c.non_degenerate))
        .map(|d| {
            let c = chans.iter().find(|c| &c.decision == d);
            format!(
                "{d} ({} deviant of {} episodes)",
                c.map_or(0, |c| c.deviant),
                c.map_or(0, |c| c.episodes)
            )
        })
        .collect();
    let mismatched: Vec<String> = measured
        .iter()
        .filter(|c| c.declared.is_some_and(|d| d != c.measured))
        .map(|c| {
            format!(
                "{} at {} declared {:?}, measured {:?}",
                c.decision,
                c.level,
                c.declared.unwrap_or(Owner::Harness),
                c.measured
            )
        })
        .collect();
    let mism = if mismatched.is_empty() {
        " Declared map = measured map.".to_string()
    } else {
        format!(" Declaration contradicted: {}.", mismatched.join("; "))
    };
    if missing.is_empty() && degenerate.is_empty() && mismatched.is_empty() {
        return Cell {
            status: Status::Pass,
            evidence: format!(
                "At {level} the model owns every claimed decision ({}), each outcome-sensitive in calibration (the stand-in built to deviate on it moves ground-truth F1); each player's own non-degeneracy is judged per player.{mism}",
                declared.claimed.join(", ")
            ),
        };
    }
    let mut why = Vec::new();
    if !missing.is_empty() {
        why.push(format!(
            "harness owns {} of {} claimed decisions at {level} ({})",
            missing.len(),
            declared.claimed.len(),
            missing
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !degenerate.is_empty() {
        why.push(format!(
            "not outcome-sensitive in calibration: {}",
            degenerate.join(", ")
        ));
    }
    Cell {
        status: Status::Fail,
        evidence: format!("{}.{mism}", why.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchaudit_runs::{Plan, run_all};

    fn pool(kind: RuleKind, level: Level, tasks: &[&str]) -> Vec<EpisodeRecord> {
        let tasks = tasks.iter().filter_map(|id| task(id)).collect();
        let plan = Plan::new(
            vec![Player::rule(kind)],
            vec![level],
            tasks,
            (0..4).collect(),
        );
        run_all(&plan, 1)
    }

    fn channel<'a>(chans: &'a [Channel], d: &str) -> &'a Channel {
        chans.iter().find(|c| c.decision == d).expect("channel")
    }

    #[test]
    fn skipped_faults_do_not_make_the_pagination_channel_fire() {
        // skips-faults paginates like the oracle and gives up every faulted page at L1.
        let rs = pool(
            RuleKind::SkipsFaults,
            Level::L1,
            &["T4_rate_limit_429", "T5_server_error_500"],
        );
        assert!(
            rs.iter().any(|r| r.counts.skips > 0),
            "the pool must hold skipped faults"
        );
        let chans = channels(&rs);
        assert!(channel(&chans, "retry").deviant > 0);
        let p = channel(&chans, "pagination");
        assert_eq!(p.deviant, 0, "pagination fired on skipped pages: {p:?}");
        assert_eq!(
            p.episodes,
            rs.iter().filter(|r| r.counts.skips == 0).count(),
            "pagination is measured on the episodes whose faults were all retried"
        );
        // Missing rows without a skipped fault still fire (single-pass on drifting pages).
        let single = pool(RuleKind::SinglePass, Level::L2, &["T6_page_drift"]);
        assert!(channel(&channels(&single), "pagination").deviant > 0);
    }
}
