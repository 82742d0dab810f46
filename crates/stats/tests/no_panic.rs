//! Property tests: no input (NaN, ±∞, huge, empty, out-of-range parameters) panics, and on
//! valid input the basic invariants hold.
#![allow(clippy::unwrap_used)]

use benchaudit_stats::*;
use proptest::prelude::*;

/// Any f64 at all, weighted towards the score-like range.
fn any_value() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => 0.0..=1.0f64,
        2 => proptest::num::f64::ANY,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::MAX),
        1 => Just(-1e300),
        1 => Just(0.0),
    ]
}

fn values(max: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(any_value(), 0..max)
}

fn small_bootstrap(seed: u64, level: f64, threads: usize) -> BootstrapConfig {
    BootstrapConfig {
        seed,
        resamples: 40,
        level,
        threads,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn summary_functions_never_panic(
        v in values(30),
        alpha in any_value(),
        tau in any_value(),
        level in any_value(),
        seed: u64,
        threads in 0usize..4,
    ) {
        let _ = mean(&v);
        let _ = worst(&v);
        let _ = cvar(&v, alpha);
        let _ = cvar_tail_size(alpha, v.len());
        let _ = reliability(&v, tau);
        let config = SummaryConfig { alpha, taus: vec![tau, 0.5], seed, resamples: 30, level, threads };
        if let Ok(s) = summarize(&v, &config) {
            prop_assert!(s.worst <= s.cvar + 1e-9 * s.cvar.abs().max(1.0));
            prop_assert!(s.cvar <= s.mean + 1e-9 * s.mean.abs().max(1.0));
            prop_assert!(s.mean_ci.lo <= s.mean_ci.hi);
            for r in &s.reliability {
                prop_assert!((0.0..=1.0).contains(&r.fraction));
            }
        }
        let _ = percentile_indices(v.len(), level);
        let _ = percentile_interval(&v, level);
    }

    #[test]
    fn paired_never_panics(a in values(25), b in values(25), seed: u64, level in any_value(), samples in 0usize..300) {
        let config = PairedConfig { seed, resamples: 30, level, threads: 2, permutation_samples: samples };
        let _ = paired_differences(&a, &b);
        if let Ok(c) = compare_paired(&a, &b, &config) {
            prop_assert!(c.p_value() > 0.0 && c.p_value() <= 1.0);
            prop_assert!((-1.0..=1.0).contains(&c.cliffs_delta));
            prop_assert!(c.delta_ci.lo <= c.delta_ci.hi && c.cliffs_ci.lo <= c.cliffs_ci.hi);
            prop_assert_eq!(c.positive + c.negative + c.ties, c.n);
            let _ = decision_rule(&c, true);
        }
        let n = a.len().min(b.len());
        let _ = compare_paired(&a[..n], &b[..n], &config);
        let _ = sign_flip_test(&a, samples, seed);
        let _ = cliffs_delta_paired(&a);
        let _ = cliffs_delta(&a, &b);
        let _ = cliffs_delta_paired_ci(&a, &small_bootstrap(seed, level, 3));
    }

    #[test]
    fn holm_never_panics_and_is_valid(p in prop::collection::vec(prop_oneof![4 => 0.0..=1.0f64, 1 => any_value()], 0..20)) {
        if let Ok(adj) = holm_adjust(&p) {
            prop_assert_eq!(adj.len(), p.len());
            for (raw, a) in p.iter().zip(&adj) {
                prop_assert!(*a >= *raw && *a <= 1.0);
            }
            // Monotone: a smaller raw p never gets a larger adjusted p.
            for i in 0..p.len() {
                for j in 0..p.len() {
                    if p[i] < p[j] {
                        prop_assert!(adj[i] <= adj[j]);
                    }
                }
            }
        }
    }

    #[test]
    fn wilson_never_panics(k: u64, n: u64, z in any_value()) {
        let _ = wilson_interval_z(k, n, z);
        if let Ok(w) = wilson_interval(k % (n.max(1) + 1), n) {
            prop_assert!(0.0 <= w.lo && w.lo <= w.rate && w.rate <= w.hi && w.hi <= 1.0);
        }
    }

    #[test]
    fn curve_gap_and_anova_never_panic(
        groups in prop::collection::vec((any_value(), values(8)), 0..5),
        obs in prop::collection::vec((0u8..3, 0u8..3, any_value()), 0..30),
    ) {
        let config = SummaryConfig { resamples: 20, ..SummaryConfig::default() };
        let _ = degradation_curve(&groups, &config);
        if let (Some(first), Some(last)) = (groups.first(), groups.last()) {
            let _ = reliability_gap(&first.1, &last.1);
        }
        if let Ok(e) = two_way_eta_squared(&obs) {
            let sum = e.eta_a + e.eta_b + e.eta_interaction + e.eta_residual;
            prop_assert!((sum - 1.0).abs() < 1e-6, "{:?}", e);
            for x in [e.eta_a, e.eta_b, e.eta_interaction, e.eta_residual] {
                prop_assert!((-1e-12..=1.0 + 1e-12).contains(&x));
            }
        }
    }

    #[test]
    fn power_never_panics(effect in any_value(), sd in any_value(), n in 0usize..8, reps in 0usize..4, level in any_value()) {
        let config = PowerConfig { replications: reps, resamples: 20, level, threads: 2, ..PowerConfig::new(effect, sd, n) };
        if let Ok(p) = power_study(&config) {
            prop_assert!((0.0..=1.0).contains(&p.power));
        }
    }

    #[test]
    fn bootstrap_is_thread_invariant(v in prop::collection::vec(-1.0..1.0f64, 1..40), seed: u64, threads in 2usize..9) {
        let one = bootstrap_mean_ci(&v, &small_bootstrap(seed, 0.9, 1)).unwrap();
        let many = bootstrap_mean_ci(&v, &small_bootstrap(seed, 0.9, threads)).unwrap();
        prop_assert_eq!(one.lo.to_bits(), many.lo.to_bits());
        prop_assert_eq!(one.hi.to_bits(), many.hi.to_bits());
    }

    #[test]
    fn exact_sign_flip_agrees_with_direct_enumeration(cents in prop::collection::vec(-50i64..50, 1..11)) {
        let deltas: Vec<f64> = cents.iter().map(|&k| k as f64 / 10.0).collect();
        let t = sign_flip_test(&deltas, 1, 0).unwrap();
        let observed = cents.iter().sum::<i64>().abs();
        let n = cents.len();
        let count = (0u64..(1 << n)).filter(|mask| {
            let s: i64 = cents.iter().enumerate().map(|(i, &k)| if mask >> i & 1 == 1 { -k } else { k }).sum();
            s.abs() >= observed
        }).count() as u64;
        prop_assert_eq!(t.extreme, count);
    }
}
