//! Fault plans and per-request injections.
//!
//! * Transient faults (T4, T5, T8): the plan draws `k` distinct valid-request ordinals from
//!   `1..=total_pages + k − 1` on the fault-plan stream (shuffle, take the first `k`). That range
//!   guarantees every planned fault fires for any agent that completes one pass and retries, so
//!   an agent always meets exactly the planned faults (see docs/decisions.md).
//! * Per-request injections draw from stream `2³² + r` (r = valid-request ordinal), in this
//!   order: drift permutation (page_drift), own-row duplicates, cross-page duplicates.

use serde::Serialize;

use crate::record::{Generator, Record, Row, Totals};
use crate::rng::{FAULT_PLAN_STREAM, REQUEST_STREAM_BASE, Stream};
use crate::task::{FaultFamily, TaskSpec};

/// The transient faults planned for an episode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FaultPlan {
    /// Valid-request ordinals (1-based, ascending) that fault.
    pub ordinals: Vec<u32>,
    /// Status they answer with (429 or 500); 0 when nothing is planned.
    pub status: u16,
}

impl FaultPlan {
    /// Draws the plan of a (task, key).
    pub fn new(task: &TaskSpec, key: &[u8; 32]) -> Self {
        let Some((k, status)) = task.fault.planned_faults() else {
            return FaultPlan {
                ordinals: Vec::new(),
                status: 0,
            };
        };
        let mut candidates: Vec<u32> = (1..=task.total_pages() + k - 1).collect();
        let mut s = Stream::new(key, FAULT_PLAN_STREAM);
        s.shuffle(&mut candidates);
        let mut ordinals: Vec<u32> = candidates.into_iter().take(k as usize).collect();
        ordinals.sort_unstable();
        FaultPlan { ordinals, status }
    }

    /// The status a valid request faults with, if it is planned.
    pub fn fault_at(&self, ordinal: u32) -> Option<u16> {
        self.ordinals.contains(&ordinal).then_some(self.status)
    }
}

/// A page as served, with what was injected into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedPage {
    /// Rows in serving order.
    pub rows: Vec<Row>,
    /// Extra duplicate rows injected.
    pub duplicates: u32,
    /// Totals rows injected.
    pub totals: u32,
}

/// Python's `round` on a non-negative product (half to even), as the released service did.
fn round_half_even(x: f64) -> u32 {
    let r = x.round_ties_even();
    if r.is_finite() && r >= 0.0 {
        r as u32
    } else {
        0
    }
}

fn slice(task: &TaskSpec, page: u32) -> std::ops::Range<u32> {
    let start = u64::from(page.saturating_sub(1)) * u64::from(task.page_size);
    let end = (start + u64::from(task.page_size)).min(u64::from(task.total_rows));
    let start = start.min(u64::from(task.total_rows));
    start as u32..end as u32
}

/// The canonical records of a page before any injection (no drift).
pub fn page_records(generator: &Generator, page: u32) -> Vec<Record> {
    generator.records(slice(generator.task(), page)).collect()
}

/// Serves `page` as the `ordinal`-th valid request; `prev_page` is the last page that served
/// rows (the source of cross-page duplicates).
pub fn inject(
    generator: &Generator,
    page: u32,
    ordinal: u32,
    prev_page: Option<u32>,
) -> ServedPage {
    let task = generator.task();
    let mut s = Stream::new(generator.key(), REQUEST_STREAM_BASE + u64::from(ordinal));
    let range = slice(task, page);
    let mut rows: Vec<Row> = match task.fault {
        FaultFamily::PageDrift => {
            let mut order: Vec<u32> = (0..task.total_rows).collect();
            s.shuffle(&mut order);
            generator
                .records_at(&order[range.start as usize..range.end as usize])
                .into_iter()
                .map(Row::Record)
                .collect()
        }
        _ => generator.records(range).map(Row::Record).collect(),
    };
    let mut duplicates = 0;
    let mut totals = 0;
    if !rows.is_empty()
        && (task.fault.duplicate_rates().is_some() || task.fault == FaultFamily::TotalsTrap)
    {
        // The page's records before any injection, which duplicates and totals are drawn from.
        let records: Vec<Record> = rows
            .iter()
            .filter_map(|r| match r {
                Row::Record(r) => Some(*r),
                Row::Totals(_) => None,
            })
            .collect();
        if let Some((rate, cross_rate)) = task.fault.duplicate_rates() {
            let len = records.len();
            let own = round_half_even(rate * len as f64).max(1);
            for _ in 0..own {
                let src = records[s.below(len as u64) as usize];
                let at = s.below(rows.len() as u64 + 1) as usize;
                rows.insert(at, Row::Record(src));
            }
            duplicates += own;
            if let Some(prev) = prev_page {
                let prev_records = page_records(generator, prev);
                if !prev_records.is_empty() {
                    let cross = round_half_even(cross_rate * len as f64).max(1);
                    for _ in 0..cross {
                        let src = prev_records[s.below(prev_records.len() as u64) as usize];
                        let at = s.below(rows.len() as u64 + 1) as usize;
                        rows.insert(at, Row::Record(src));
                    }
                    duplicates += cross;
                }
            }
        }
        if task.fault == FaultFamily::TotalsTrap {
            rows.insert(0, Row::Totals(Totals::of(page, records.iter().copied())));
            totals += 1;
        }
    }
    ServedPage {
        rows,
        duplicates,
        totals,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::task;

    #[test]
    fn python_rounding_of_rates() {
        assert_eq!(round_half_even(0.8), 1);
        assert_eq!(round_half_even(0.5), 0);
        assert_eq!(round_half_even(2.5), 2);
        assert_eq!(round_half_even(0.3), 0);
    }

    #[test]
    fn plans_fall_in_the_guaranteed_range() {
        for id in [
            "T4_rate_limit_429",
            "T5_server_error_500",
            "T8_mixed_faults",
        ] {
            let t = task(id).expect("registry");
            let (k, _) = t.fault.planned_faults().expect("planned");
            for seed in 0..200 {
                let plan = FaultPlan::new(t, &crate::rng::task_key(id, seed));
                assert_eq!(plan.ordinals.len(), k as usize);
                assert!(plan.ordinals.windows(2).all(|w| w[0] < w[1]));
                assert!(
                    plan.ordinals
                        .iter()
                        .all(|&o| o >= 1 && o < t.total_pages() + k)
                );
            }
        }
    }
}
