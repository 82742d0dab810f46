//! Monte-Carlo power study of the paired A/B design.
//!
//! Exists to answer "could this design have detected the effect?" before a null is read as
//! evidence of absence (paper A.2, C.8). Each replication simulates both arms, runs the full
//! [`compare_paired`] analysis and applies the same [`decision_rule`] a real experiment uses.
//!
//! Simulation model for replication `r` (stream
//! [`stream_rng(seed, r)`](crate::rng::stream_rng)): for each pair `i` in order,
//! `aᵢ = effect + noise_sd·z` then `bᵢ = noise_sd·z′` with `z, z′` independent standard
//! normals ([`standard_normal`], Box–Muller), so `Δᵢ ~ N(effect, 2·noise_sd²)`. The
//! comparison inside replication `r` uses seed
//! [`derive_seed(seed, r)`](crate::rng::derive_seed) and one thread. The predicted side is positive when `effect ≥ 0`, else negative.
//!
//! Box–Muller uses `ln`/`cos`, so power values are reproducible on one platform but are not
//! a bit-exact golden quantity across platforms (unlike bootstrap CIs and exact p-values).

use serde::{Deserialize, Serialize};

use crate::bootstrap::{DEFAULT_LEVEL, DEFAULT_RESAMPLES};
use crate::error::{Result, StatsError, check_draws, check_level};
use crate::paired::{PairedConfig, compare_paired, decision_rule};
use crate::par::map_indexed;
use crate::permutation::DEFAULT_PERMUTATION_SAMPLES;
use crate::rng::{derive_seed, standard_normal, stream_rng};
use crate::wilson::{WilsonInterval, wilson_interval};

/// Default number of Monte-Carlo replications (paper C.8: 400 per cell).
pub const DEFAULT_REPLICATIONS: usize = 400;

/// Inputs of a power study.
///
/// Exists so the effect regime, design size and every seeded setting are recorded with the
/// power they produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerConfig {
    /// True mean paired difference Δ (positive = escalation penalty); 0 measures the size.
    pub effect: f64,
    /// Standard deviation of each arm's outcome noise (per arm, not of Δ).
    pub noise_sd: f64,
    /// Pairs (seeds) per arm.
    pub n: usize,
    /// Monte-Carlo replications.
    pub replications: usize,
    /// Master seed of the study.
    pub seed: u64,
    /// Bootstrap replicates B inside each replication.
    pub resamples: usize,
    /// Confidence level of the paired bootstrap CI.
    pub level: f64,
    /// Monte-Carlo sign patterns inside each replication when `n > 20`.
    pub permutation_samples: usize,
    /// Worker threads over replications; does not change the result.
    pub threads: usize,
}

impl PowerConfig {
    /// A study of `effect` with per-arm noise `noise_sd` and `n` pairs, other settings default
    /// (400 replications, seed 0, B = 2000, 95%, M = 100 000, one thread).
    ///
    /// Exists so the common case is one line.
    #[must_use]
    pub fn new(effect: f64, noise_sd: f64, n: usize) -> Self {
        Self {
            effect,
            noise_sd,
            n,
            replications: DEFAULT_REPLICATIONS,
            seed: 0,
            resamples: DEFAULT_RESAMPLES,
            level: DEFAULT_LEVEL,
            permutation_samples: DEFAULT_PERMUTATION_SAMPLES,
            threads: 1,
        }
    }
}

/// Outcome of a power study.
///
/// Exists to report the estimated power with its own Monte-Carlo uncertainty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerResult {
    /// Fraction of replications where the decision rule fired.
    pub power: f64,
    /// Replications where the decision rule fired.
    pub detections: u64,
    /// Replications run.
    pub replications: usize,
    /// Wilson 95% interval of the power estimate.
    pub power_ci: WilsonInterval,
    /// The configuration that produced this result.
    pub config: PowerConfig,
}

/// Runs the Monte-Carlo power study described in the module docs.
///
/// Exists so design sensitivity (paper C.8) is computed by the same code that analyses real
/// experiments.
///
/// # Errors
/// [`StatsError::OutOfRange`] for a non-finite effect, a negative or non-finite noise sd, or a
/// bad level; [`StatsError::CountOutOfRange`] for `n`, `replications`, `resamples` or
/// `permutation_samples` outside `1..=10⁷`; `Overflow` if the simulated values are too large.
pub fn power_study(config: &PowerConfig) -> Result<PowerResult> {
    if !config.effect.is_finite() {
        return Err(StatsError::OutOfRange {
            name: "effect",
            value: config.effect,
            range: "finite",
        });
    }
    if !(config.noise_sd.is_finite() && config.noise_sd >= 0.0) {
        return Err(StatsError::OutOfRange {
            name: "noise_sd",
            value: config.noise_sd,
            range: "finite and >= 0",
        });
    }
    check_draws("n", config.n)?;
    check_draws("replications", config.replications)?;
    check_draws("resamples", config.resamples)?;
    check_draws("permutation samples", config.permutation_samples)?;
    check_level(config.level)?;
    let predicted_positive = config.effect >= 0.0;
    let outcomes = map_indexed(config.replications, config.threads, |r| {
        let r = r as u64;
        let mut rng = stream_rng(config.seed, r);
        let mut a = Vec::with_capacity(config.n);
        let mut b = Vec::with_capacity(config.n);
        for _ in 0..config.n {
            a.push(config.effect + config.noise_sd * standard_normal(&mut rng));
            b.push(config.noise_sd * standard_normal(&mut rng));
        }
        let paired = PairedConfig {
            seed: derive_seed(config.seed, r),
            resamples: config.resamples,
            level: config.level,
            threads: 1,
            permutation_samples: config.permutation_samples,
        };
        compare_paired(&a, &b, &paired).map(|c| decision_rule(&c, predicted_positive))
    });
    let detections = outcomes
        .into_iter()
        .try_fold(0u64, |acc, hit| hit.map(|h| acc + u64::from(h)))?;
    let replications = config.replications as u64;
    Ok(PowerResult {
        power: detections as f64 / replications as f64,
        detections,
        replications: config.replications,
        power_ci: wilson_interval(detections, replications)?,
        config: config.clone(),
    })
}
