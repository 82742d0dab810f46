//! BenchAudit: does a benchmark score measure the model? The audit probes the scorer with forged
//! submissions, measures who owns each execution-critical decision, runs the 2×2 joint
//! intervention, replays episodes, checks solvability, and writes a validity card whose licensed
//! claim follows a fixed lattice. ComtradeBench is the built-in target; others plug in through
//! four hooks ([`Target`]), including external commands ([`external`]).
#![deny(missing_docs)]

pub mod calls;
pub mod card;
pub mod comtrade_target;
pub mod external;
pub mod guard;
pub mod joint;
pub mod ownership;
pub mod pipeline;
pub mod probes;
pub mod replay;
pub mod runs;
pub mod solvability;
pub mod target;

pub use card::{Card, Cell, Claim, Status, licensed_claim};
pub use comtrade_target::{ComtradeTarget, Configuration};
pub use pipeline::{AuditConfig, ComtradeAudit, ExternalAudit, audit_comtrade, audit_external};
pub use runs::Player;
pub use target::{DeclaredOwnership, Forged, Owner, ScorerKind, Target, TargetTask};
