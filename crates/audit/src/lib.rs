//! BenchAudit: does a benchmark score measure the model? The audit probes the scorer with forged
//! submissions, measures who owns each execution-critical decision, runs the 2×2 joint
//! intervention, replays episodes, checks solvability, and writes a validity card whose licensed
//! claim follows a fixed lattice.
#![deny(missing_docs)]

pub mod guard;
