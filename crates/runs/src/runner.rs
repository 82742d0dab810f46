//! The parallel runner: plays jobs on worker threads and hands each finished episode to the
//! calling thread, so whoever records results (a ledger, a vector) needs no locking.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use benchaudit_agents::{EpisodeRecord, EpisodeRun, Transcript, run_episode};

use crate::plan::{Job, Plan};

/// What the runner does after a finished episode has been handed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Keep starting jobs.
    Continue,
    /// Start no further job; the episodes already running still finish and are handed over.
    Stop,
}

/// Plays `jobs` on up to `threads` workers (at least one). Workers take the next job as they
/// finish one, so slow episodes (LLMs) do not hold up a fixed share; each finished episode is
/// passed to `on_done` with its index in `jobs`, on the calling thread, in completion order.
/// The record's wall time is measured here (the only part allowed to differ on replay).
///
/// An episode that ends in a provider refusal ([`EpisodeRun::fatal`]) stops the workers from
/// taking further jobs as soon as it ends. When `on_done` answers [`Flow::Stop`], no further job starts and the episodes already
/// running are still handed to `on_done` (a fatal provider error: what ran is recorded). When
/// it fails, no further job starts; jobs already running finish and are dropped; the error is
/// returned.
pub fn run_jobs<E>(
    jobs: &[Job<'_>],
    threads: usize,
    on_done: impl FnMut(usize, EpisodeRun) -> Result<Flow, E>,
) -> Result<(), E> {
    run_jobs_beside(jobs, threads, Vec::new(), on_done)
}

/// Work the runner's workers do besides episodes (see [`run_jobs_beside`]).
pub type SideTask<'a> = Box<dyn FnOnce() + Send + 'a>;

/// [`run_jobs`], the same workers first running `side` — other work of the caller, each task
/// once, in order, a worker taking the next one as it finishes one — and then the episodes.
/// So a caller with serial work beside its episodes (a long computation that cannot be split)
/// keeps at most `threads` threads busy instead of a thread of its own beside the workers,
/// and the longest side task, put first, starts at once. Side tasks hand their results back
/// themselves (through what they capture) and always run, even when `on_done` stops the
/// episodes; workers are at least one, at most the number of side tasks plus jobs.
pub fn run_jobs_beside<E>(
    jobs: &[Job<'_>],
    threads: usize,
    side: Vec<SideTask<'_>>,
    mut on_done: impl FnMut(usize, EpisodeRun) -> Result<Flow, E>,
) -> Result<(), E> {
    let next = AtomicUsize::new(0);
    let workers = threads.max(1).min((jobs.len() + side.len()).max(1));
    let side = std::sync::Mutex::new(std::collections::VecDeque::from(side));
    let (tx, rx) = mpsc::channel::<(usize, EpisodeRun)>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let tx = tx.clone();
            let next = &next;
            let side = &side;
            scope.spawn(move || {
                // A poisoned queue means a side task panicked; the panic is re-raised when the
                // scope ends.
                while let Some(task) = side.lock().ok().and_then(|mut q| q.pop_front()) {
                    task();
                }
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(job) = jobs.get(i) else { break };
                    if let Some((record, messages)) = job.player.recorded(&job.key) {
                        // Played and recorded before (its wall time kept): nothing to play.
                        let run = EpisodeRun {
                            record: record.clone(),
                            transcript: Transcript {
                                events: Vec::new(),
                                messages: messages.clone(),
                            },
                            fatal: None,
                        };
                        if tx.send((i, run)).is_err() {
                            break;
                        }
                        continue;
                    }
                    let mut policy = job.player.policy();
                    let started = Instant::now();
                    let mut run = run_episode(&job.spec, policy.as_mut());
                    run.record.timing.wall_ms = started.elapsed().as_secs_f64() * 1000.0;
                    if run.fatal.is_some() {
                        // A provider refusal: every later episode would meet it too, so no
                        // worker takes another job (without waiting for `on_done` to say so).
                        next.store(jobs.len(), Ordering::SeqCst);
                    }
                    if tx.send((i, run)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (i, run) in rx {
            match on_done(i, run) {
                Ok(Flow::Continue) => {}
                // Workers take no further job; the channel stays open for the ones in flight.
                Ok(Flow::Stop) => next.store(jobs.len(), Ordering::SeqCst),
                Err(e) => {
                    // Workers see the closed channel after their current episode and stop.
                    next.store(jobs.len(), Ordering::SeqCst);
                    return Err(e);
                }
            }
        }
        Ok(())
    })
}

/// Plays `jobs` in memory; records come back in job order (whatever order they finished in).
pub fn collect(jobs: &[Job<'_>], threads: usize) -> Vec<EpisodeRecord> {
    let mut out: Vec<Option<EpisodeRecord>> = vec![None; jobs.len()];
    let done: Result<(), std::convert::Infallible> = run_jobs(jobs, threads, |i, run| {
        out[i] = Some(run.record);
        Ok(Flow::Continue)
    });
    match done {
        Ok(()) => {}
        Err(never) => match never {},
    }
    // Every index is filled: each job is sent exactly once unless a worker panicked, and a
    // panicking worker re-raises its panic when the scope ends.
    out.into_iter().flatten().collect()
}

/// Plays every episode of `plan` in memory (no ledger), records in plan order.
pub fn run_all(plan: &Plan, threads: usize) -> Vec<EpisodeRecord> {
    collect(&plan.jobs(), threads)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use benchaudit_agents::{Level, RuleKind};

    fn plan() -> Plan {
        Plan::new(
            vec![
                Player::rule(RuleKind::Oracle),
                Player::rule(RuleKind::NoDedup),
            ],
            vec![Level::L0, Level::L2],
            vec![benchaudit_comtrade::task("T3_duplicates").unwrap()],
            (0..3).collect(),
        )
    }

    use crate::player::Player;

    #[test]
    fn records_come_back_in_plan_order_whatever_the_thread_count() {
        let plan = plan();
        let keys = |threads| -> Vec<_> {
            run_all(&plan, threads)
                .into_iter()
                .map(|r| (r.key, r.payload_sha256, r.scores.map(|s| s.f1)))
                .collect()
        };
        let one = keys(1);
        assert_eq!(one.len(), plan.len());
        assert_eq!(one, keys(4));
        let planned: Vec<_> = plan.jobs().into_iter().map(|j| j.key).collect();
        assert_eq!(one.into_iter().map(|k| k.0).collect::<Vec<_>>(), planned);
    }

    #[test]
    fn recorded_episodes_are_answered_from_the_record_and_the_rest_are_played() {
        let plan = plan();
        let played = run_all(&plan, 1);
        // Mark the recorded copies so an answered episode is told from a played one.
        let mut recorded: Vec<EpisodeRecord> =
            played.iter().filter(|r| r.key.seed != 2).cloned().collect();
        for r in &mut recorded {
            r.timing.wall_ms = -1.0;
        }
        let mut again = plan.clone();
        again.players = again
            .players
            .into_iter()
            .map(|p| p.with_recorded(recorded.iter().map(|r| (r.clone(), None))))
            .collect();
        let out = run_all(&again, 3);
        assert_eq!(out.len(), played.len());
        for (a, b) in out.iter().zip(&played) {
            assert_eq!(a.key, b.key);
            assert_eq!(a.payload_sha256, b.payload_sha256);
            // Seeds 0 and 1 come from the record (wall time kept), seed 2 was played.
            assert_eq!(a.timing.wall_ms < 0.0, a.key.seed != 2, "{:?}", a.key);
        }
    }

    #[test]
    fn a_failing_callback_stops_the_run_and_is_returned() {
        let plan = plan();
        let jobs = plan.jobs();
        let mut seen = 0;
        let result = run_jobs(&jobs, 1, |_, _| {
            seen += 1;
            if seen == 2 {
                Err("disk full")
            } else {
                Ok(Flow::Continue)
            }
        });
        assert_eq!(result, Err("disk full"));
        // With one worker, at most the episode in flight finishes after the failure.
        assert_eq!(seen, 2);
    }

    #[test]
    fn side_tasks_run_once_each_beside_the_episodes_on_the_same_workers() {
        let plan = plan();
        let jobs = plan.jobs();
        for threads in [1, 2, 5] {
            let ran = std::sync::Mutex::new(Vec::new());
            let side: Vec<SideTask<'_>> = (0..3)
                .map(|i| {
                    let ran = &ran;
                    Box::new(move || ran.lock().unwrap().push(i)) as SideTask<'_>
                })
                .collect();
            let mut done = 0;
            let result: Result<(), ()> = run_jobs_beside(&jobs, threads, side, |_, _| {
                done += 1;
                // Stopping the episodes leaves the side tasks to run.
                Ok(Flow::Stop)
            });
            assert_eq!(result, Ok(()));
            let mut ran = ran.into_inner().unwrap();
            ran.sort_unstable();
            assert_eq!(ran, [0, 1, 2], "{threads} threads");
            assert!(done >= 1, "no episode handed over with {threads} threads");
        }
        // One worker runs the side tasks in order before any episode.
        let order = std::sync::Mutex::new(Vec::new());
        let side: Vec<SideTask<'_>> = (0..2)
            .map(|i| {
                let order = &order;
                Box::new(move || order.lock().unwrap().push(format!("side {i}"))) as SideTask<'_>
            })
            .collect();
        let result: Result<(), ()> = run_jobs_beside(&jobs, 1, side, |i, _| {
            order.lock().unwrap().push(format!("job {i}"));
            Ok(Flow::Continue)
        });
        assert_eq!(result, Ok(()));
        let order = order.into_inner().unwrap();
        assert_eq!(order.len(), 2 + jobs.len());
        assert_eq!(order[..3], ["side 0", "side 1", "job 0"]);
    }
}
