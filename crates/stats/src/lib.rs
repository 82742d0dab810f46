//! Pure, deterministic statistics for benchaudit reports.
//!
//! Why this crate exists: an evaluation report is only as trustworthy as the numbers in it,
//! and a reader must be able to re-derive every one of them. So everything here is a pure
//! function of its inputs and explicit seeds — no IO, no clock, no global RNG — and the
//! seeded procedures (bootstrap CIs, Monte-Carlo permutation p-values) are bit-reproducible
//! and independent of the thread count. Bad inputs (empty data, NaN, α out of range,
//! mismatched lengths) come back as [`StatsError`]; no function panics on any input.
//!
//! What it computes (SPEC §7, paper §4.4): per-set [`summarize`] (mean, worst case, CVaR@α,
//! Reliability@τ, bootstrap CI of the mean); paired A/B [`compare_paired`] (mean Δ, paired
//! bootstrap CI, sign-flip p, Cliff's δ with CI) and the pre-registered [`decision_rule`];
//! [`holm_adjust`]; [`wilson_interval`]; type-7 [`quantile`]s and [`five_numbers`];
//! [`reliability_gap`]; [`degradation_curve`]; [`power_study`]; two-factor η²
//! ([`two_way_eta_squared`]); the unbiased [`pass_at_k`] and [`pass_hat_k`] estimators and
//! their curve over k ([`pass_k_curve`]); and the stratified bootstrap that pooled intervals
//! use ([`stratified_bootstrap_mean_ci`]: seeds resampled within each task).
//!
//! ```
//! use benchaudit_stats::{summarize, compare_paired, decision_rule, PairedConfig, SummaryConfig};
//!
//! let scores = [1.0, 0.9, 0.95, 0.0, 1.0, 0.85, 1.0, 0.9, 1.0, 0.8];
//! let s = summarize(&scores, &SummaryConfig::default())?;
//! assert_eq!(s.worst, 0.0);
//! assert!((s.cvar - 0.4).abs() < 1e-12); // mean of the 2 lowest: (0.0 + 0.8) / 2
//! assert!((s.reliability[0].fraction - 0.7).abs() < 1e-12); // share ≥ 0.9
//! assert!(s.mean_ci.lo <= s.mean && s.mean <= s.mean_ci.hi);
//! // Same seed, same bits.
//! assert_eq!(s, summarize(&scores, &SummaryConfig::default())?);
//!
//! let constant = [0.9, 0.8, 0.95, 0.9, 0.85, 0.9];
//! let escalating = [0.7, 0.6, 0.8, 0.7, 0.75, 0.65];
//! let ab = compare_paired(&constant, &escalating, &PairedConfig::default())?;
//! assert!(ab.mean_delta > 0.0);
//! assert_eq!(ab.p_value(), 2.0 / 64.0); // exact: only the all-positive/all-negative patterns
//! assert!(decision_rule(&ab, true));
//! # Ok::<(), benchaudit_stats::StatsError>(())
//! ```

#![deny(missing_docs)]

mod anova;
mod bootstrap;
mod cliffs;
mod curve;
mod error;
mod gap;
mod holm;
mod numeric;
mod paired;
mod par;
mod passk;
mod permutation;
mod power;
mod quantile;
pub mod rng;
mod stratified;
mod summary;
mod wilson;

pub use anova::{EtaSquared, two_way_eta_squared};
pub use bootstrap::{
    BootstrapCi, BootstrapConfig, DEFAULT_LEVEL, DEFAULT_RESAMPLES, bootstrap_ci,
    bootstrap_mean_ci, bootstrap_replicates, percentile_indices, percentile_interval,
};
pub use cliffs::{cliffs_delta, cliffs_delta_paired, cliffs_delta_paired_ci};
pub use curve::{CurvePoint, DegradationCurve, degradation_curve};
pub use error::{MAX_DRAWS, Result, StatsError};
pub use gap::{ReliabilityGap, reliability_gap};
pub use holm::holm_adjust;
pub use paired::{
    DECISION_ALPHA, PairedComparison, PairedConfig, compare_paired, decision_rule,
    paired_differences,
};
pub use passk::{
    DEFAULT_PASS_THRESHOLD, LazyPassKCurve, PassKConfig, PassKCurve, PassKPoint, PooledPassK,
    TaskPassK, TaskTrials, pass_at_k, pass_hat_k, pass_k_curve, pass_k_curve_lazy,
};
pub use permutation::{
    DEFAULT_PERMUTATION_SAMPLES, EXACT_MAX_N, PERMUTATION_STREAM, SIGN_FLIP_TOLERANCE,
    SignFlipMethod, SignFlipTest, sign_flip_test,
};
pub use power::{DEFAULT_REPLICATIONS, PowerConfig, PowerResult, power_study};
pub use quantile::{FiveNumbers, five_numbers, quantile};
pub use stratified::{
    pooled_mean, stratified_bootstrap_ci, stratified_bootstrap_map, stratified_bootstrap_mean_ci,
    stratified_bootstrap_replicates,
};
pub use summary::{
    DEFAULT_ALPHA, DEFAULT_TAUS, ReliabilityAt, Summary, SummaryConfig, Trials, cvar,
    cvar_tail_size, mean, reliability, summarize, summarize_stratified, trials, worst,
};
pub use wilson::{WilsonInterval, Z_95, wilson_interval, wilson_interval_z};
