//! Interop: meet evaluation researchers in the tools they already use.
//!
//! [`inspect`] turns a run ledger into Inspect `.eval` logs (one per condition: player, level,
//! arm and options; its samples are the tasks and its epochs the seeds), which `inspect view`
//! browses and `inspect_ai.log.read_eval_log` reads, and turns Inspect logs (samples × epochs
//! with scores) into a run ledger that `benchaudit report` reads — worst case, CVaR,
//! Reliability@τ, bootstrap CIs, pass^k and paired A/B on logs Inspect wrote.
//!
//! The format code lives here, apart from `runs` and `report`, because it is a boundary with
//! another project's schema: it changes when Inspect's does, and nothing else depends on it.
//! The crate uses the ledger only through its public API (`Ledger`, `read_ledger`,
//! `Manifest`).
//!
//! ```
//! use benchaudit_agents::{Level, RuleKind};
//! use benchaudit_comtrade::task;
//! use benchaudit_interop::inspect::{ImportOptions, export_run, import_logs};
//! use benchaudit_runs::{Plan, Player, execute, read_ledger};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let plan = Plan::new(
//!     vec![Player::rule(RuleKind::Oracle)],
//!     vec![Level::L2],
//!     vec![task("T3_duplicates").ok_or("no T3")?],
//!     vec![0, 1],
//! );
//! let dir = tempfile::tempdir()?;
//! let run = dir.path().join("run");
//! execute(&run, plan.config(), &plan, 1, &mut |_| {})?;
//! // One condition (the oracle at L2): one log, with one sample per task and seed.
//! let logs = export_run(&run, &dir.path().join("logs"))?;
//! assert_eq!((logs.len(), logs[0].samples), (1, 2));
//! // And back: the records come home unchanged.
//! let paths: Vec<_> = logs.iter().map(|l| l.path.clone()).collect();
//! import_logs(&paths, &dir.path().join("back"), &ImportOptions::default())?;
//! let original = read_ledger(&run.join("episodes.jsonl"))?.records;
//! let back = read_ledger(&dir.path().join("back/episodes.jsonl"))?.records;
//! assert_eq!(original, back);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

mod error;
pub mod inspect;

pub use error::{Error, Result};
