//! The episodes the audit has played so far, by ledger key: a stage that asks for an episode
//! an earlier stage already played — the same rule player on the same (level, task, seed,
//! options), which the key holds — reads its record instead of playing it again. Rule
//! players are deterministic (the replay stage shows it), so the record is the one a second
//! play would give, timing aside; a model's episode is never answered from here.

use std::collections::{HashMap, HashSet};

use benchaudit_agents::{EpisodeKey, EpisodeRecord, RuleKind};
use benchaudit_runs::{Job, collect};

/// Played episodes of rule players, by key.
#[derive(Debug, Default)]
pub(crate) struct Played {
    by_key: HashMap<EpisodeKey, EpisodeRecord>,
    /// Worker threads for the episodes still to play.
    threads: usize,
}

/// Whether `job`'s record may be shared between stages: a built-in rule player's (the key's
/// policy name is its identity, as in a run ledger), never a model's.
fn shareable(job: &Job<'_>) -> bool {
    job.player.model_config().is_none() && RuleKind::parse(job.player.name()).is_some()
}

impl Played {
    /// Nothing played yet; episodes still to play run on `threads` workers.
    pub(crate) fn new(threads: usize) -> Self {
        Played {
            by_key: HashMap::new(),
            threads,
        }
    }

    /// Remembers `records`, played for `jobs` (the same order).
    pub(crate) fn add(&mut self, jobs: &[Job<'_>], records: &[EpisodeRecord]) {
        for (job, record) in jobs.iter().zip(records) {
            if shareable(job) {
                self.by_key
                    .entry(job.key.clone())
                    .or_insert_with(|| record.clone());
            }
        }
    }

    /// The records of `jobs`, in job order: the ones played before read from here, every
    /// other one played (once, however often it appears in `jobs`) and remembered.
    pub(crate) fn play(&mut self, jobs: &[Job<'_>]) -> Vec<EpisodeRecord> {
        let mut missing: Vec<Job<'_>> = Vec::new();
        let mut queued: HashSet<&EpisodeKey> = HashSet::new();
        for job in jobs {
            if !shareable(job) || (!self.by_key.contains_key(&job.key) && queued.insert(&job.key)) {
                missing.push(job.clone());
            }
        }
        let mut fresh = collect(&missing, self.threads).into_iter();
        let mut out = Vec::with_capacity(jobs.len());
        let mut queued: HashSet<&EpisodeKey> = HashSet::new();
        for job in jobs {
            if !shareable(job) {
                out.extend(fresh.next());
                continue;
            }
            if !self.by_key.contains_key(&job.key)
                && queued.insert(&job.key)
                && let Some(r) = fresh.next()
            {
                self.by_key.insert(job.key.clone(), r);
            }
            out.extend(self.by_key.get(&job.key).cloned());
        }
        out
    }

    /// How many distinct rule-player episodes are held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.by_key.len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use benchaudit_agents::Level;
    use benchaudit_runs::{Plan, Player, run_all};

    fn plan(kinds: &[RuleKind], seeds: std::ops::Range<u64>) -> Plan {
        Plan::new(
            kinds.iter().map(|k| Player::rule(*k)).collect(),
            vec![Level::L2],
            vec![benchaudit_comtrade::task("T3_duplicates").unwrap()],
            seeds.collect(),
        )
    }

    /// Records outside timing, as replay compares them.
    fn strip(rs: Vec<EpisodeRecord>) -> Vec<EpisodeRecord> {
        rs.into_iter()
            .map(|mut r| {
                r.timing = Default::default();
                r
            })
            .collect()
    }

    #[test]
    fn known_episodes_are_read_and_the_rest_played_once_in_job_order() {
        let first = plan(&[RuleKind::Oracle], 0..2);
        let mut played = Played::new(2);
        let jobs = first.jobs();
        played.add(&jobs, &run_all(&first, 1));
        assert_eq!(played.len(), 2);
        // Seeds 0..3 of the oracle and no-dedup, with the oracle's jobs listed twice: two
        // oracle episodes are known, the other four are played once each.
        let both = plan(&[RuleKind::Oracle, RuleKind::NoDedup], 0..3);
        let mut jobs = both.jobs();
        jobs.extend(both.jobs().into_iter().take(3));
        let got = played.play(&jobs);
        assert_eq!(played.len(), 6);
        let mut fresh = run_all(&both, 1);
        fresh.extend(fresh[..3].to_vec());
        assert_eq!(strip(got), strip(fresh));
    }

    #[test]
    fn a_player_that_is_no_rule_policy_is_always_played() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let made = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&made);
        let custom = Player::new("custom", move || {
            counter.fetch_add(1, Ordering::SeqCst);
            Box::new(benchaudit_agents::RulePolicy::new(RuleKind::Oracle))
        });
        let p = Plan::new(
            vec![custom],
            vec![Level::L2],
            vec![benchaudit_comtrade::task("T3_duplicates").unwrap()],
            vec![0],
        );
        let mut played = Played::new(1);
        let jobs = p.jobs();
        played.add(&jobs, &run_all(&p, 1));
        assert_eq!(played.len(), 0, "a custom player's record is not shared");
        let again = played.play(&[jobs[0].clone(), jobs[0].clone()]);
        assert_eq!(again.len(), 2);
        assert_eq!(
            made.load(Ordering::SeqCst),
            3,
            "played every time it is asked for"
        );
    }
}
