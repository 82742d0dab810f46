//! BenchAudit: does a benchmark score measure the model?
//!
//! The audit runs the stages of SPEC §8, each producing evidence: the forged-submission
//! [`probes`] and criterion sensitivity, measured [`ownership`] and the decision channels'
//! non-degeneracy, the [`joint`] 2×2 intervention, [`replay`], [`reliability`] by scaffolding
//! level and [`solvability`]. A validity [`Card`] holds one verdict per cell with its evidence,
//! and the fixed [`lattice`] reads the licensed claim off the cells. The oracle [`checks`]
//! assert the audit's own numbers, and the number [`guard`] rejects any figure in prose that
//! the audit's JSON does not hold.
//!
//! ComtradeBench is the built-in target ([`ComtradeTarget`], with the tasks and stand-ins of
//! its [`Suite`]); other benchmarks plug in through four hooks ([`Target`]), including
//! external commands ([`external`]). Rendering cards is the report crate's job: this crate is
//! data and verdicts.
//!
//! The key-free audit through the library, no binary involved:
//!
//! ```
//! use benchaudit_audit::{AuditConfig, Claim, ComtradeTarget, Configuration, audit_comtrade};
//!
//! let targets = [
//!     ComtradeTarget::new(Configuration::AsShipped),
//!     ComtradeTarget::new(Configuration::Repaired),
//! ];
//! // One seed per cell keeps the example quick; `benchaudit audit` uses five.
//! let audit = audit_comtrade(&AuditConfig::key_free(1, 2), &targets)?;
//! assert_eq!(audit.cards[0].licensed_claim, Claim::SelfReportCompliance);
//! assert_eq!(audit.cards[1].licensed_claim, Claim::ModelCapability);
//! assert!(audit.checks.iter().all(|c| c.pass));
//! # Ok::<(), String>(())
//! ```
#![deny(missing_docs)]

pub mod answers;
pub mod battery;
pub mod calls;
pub mod card;
pub mod checks;
pub mod comtrade_target;
pub mod external;
pub mod guard;
pub mod interface;
pub mod joint;
pub mod lattice;
pub mod ownership;
pub mod pipeline;
pub mod probes;
pub mod proposed;
pub mod reliability;
pub mod replay;
pub mod solvability;
pub mod target;
pub mod targets;
pub mod trajectories;

pub use card::{Card, Cell, Status};
pub use checks::Check;
pub use comtrade_target::{ComtradeTarget, Configuration, SUITE, Suite};
pub use lattice::{Claim, licensed_claim};
pub use pipeline::{
    AnswersTargetAudit, AuditConfig, AuditReport, CallsTargetAudit, ComtradeAudit, ExternalAudit,
    Resolution, TrajectoriesTargetAudit, audit_comtrade, audit_external,
};
pub use target::{
    DeclaredOwnership, Forged, Owner, ScaffoldVariance, ScorerKind, Target, TargetTask,
};
pub use targets::{
    AuditError, LoadedTarget, TargetOptions, TargetRef, audit_all, load_targets, resolve_target,
};
