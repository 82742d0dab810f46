//! Runs: everything between "which episodes" and "the records on disk".
//!
//! A [`Plan`] is the cross product players × levels × tasks × seeds × arms (an arm is one set
//! of [`RunOptions`](benchaudit_agents::RunOptions), e.g. a stress arm). The runner plays its
//! [`Job`]s on worker threads ([`run_jobs`], [`collect`]); [`execute`] runs a plan into the
//! resumable, locked, append-only run [`Ledger`] (SPEC §6), reporting [`Progress`] through a
//! callback so the library prints nothing. A plan splits into deterministic [`shard`]s
//! ([`execute_shard`]) that any scheduler can run, and [`merge()`](merge::merge) joins their ledgers into one
//! run, verified against the plan hash. The stress designs of SPEC §5 are data
//! ([`Design`]: matched-mean, quota and squeeze, slack sweep, degradation) with their
//! [`analysis`], and a design run can be held to a frozen [`prereg`]istration.
//!
//! The audit runs its stages through the same plan and runner, so an audit episode and a
//! `benchaudit run` episode are the same thing.
//!
//! ```
//! use benchaudit_agents::{Level, RuleKind};
//! use benchaudit_comtrade::task;
//! use benchaudit_runs::{Plan, Player, execute, run_all};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let plan = Plan::new(
//!     vec![Player::rule(RuleKind::Oracle), Player::rule(RuleKind::NoDedup)],
//!     vec![Level::L2],
//!     vec![task("T3_duplicates").ok_or("no T3")?],
//!     vec![0, 1],
//! );
//! // In memory, in plan order: the oracle solves T3; the stand-in keeps the duplicates.
//! let records = run_all(&plan, 2);
//! let f1: Vec<f64> = records.iter().map(|r| r.scores.as_ref().map_or(0.0, |s| s.f1)).collect();
//! assert_eq!(f1[..2], [1.0, 1.0]);
//! assert!(f1[2] < 1.0);
//!
//! // Into a ledger; running the same plan again resumes and runs nothing.
//! let dir = tempfile::tempdir()?;
//! let first = execute(dir.path(), plan.config(), &plan, 2, &mut |_| {})?;
//! let mut to_run = None;
//! let again = execute(dir.path(), plan.config(), &plan, 2, &mut |p| {
//!     if let benchaudit_runs::Progress::Started { to_run: n, .. } = p {
//!         to_run = Some(n);
//!     }
//! })?;
//! assert_eq!((first.records.len(), again.records.len(), to_run), (4, 4, Some(0)));
//! assert_eq!((first.ran, first.infra_errors, again.ran), (4, 0, 0));
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

pub mod analysis;
pub mod design;
mod error;
mod execute;
pub mod files;
pub mod ledger;
pub mod merge;
mod metric;
pub mod outdir;
mod plan;
mod player;
pub mod prereg;
mod runner;
mod seeds;
pub mod served;
pub mod shard;

pub use analysis::{
    AbResult, AgentCurve, AnalysisSettings, Comparison, IntensityCheck, analyse, conclude,
};
/// Bootstrap replicates B when none is chosen.
pub use benchaudit_stats::DEFAULT_RESAMPLES;
pub use design::{
    ArmSetting, Arms, DEFAULT_CALIBRATION, Design, DesignKind, QuotaSetting, SQUEEZE_AT,
    arm_settings, default_calibration,
};
pub use error::{Error, Result};
pub use execute::{Executed, Progress, execute, execute_shard};
pub use ledger::{
    Ledger, LedgerContents, Manifest, PlanScope, Resume, Transcripts, read_ledger, scan_ledger,
    write_atomic, write_atomic_with,
};
pub use merge::{Merged, merge};
pub use metric::{JUDGE_SCALE, Metric};
pub use plan::{Job, Plan};
pub use player::Player;
pub use runner::{Flow, SideTask, collect, run_all, run_jobs, run_jobs_beside};
pub use seeds::{SeedSet, format_seeds, parse_seed, parse_seeds};
pub use shard::{Shard, ShardRun};
