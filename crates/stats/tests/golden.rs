//! Hand-checkable golden values for every statistic. Each test would fail if the formula,
//! a boundary convention (≥ vs >, ceil vs floor) or the output order were wrong.
//!
//! Why one file over 600 lines: it is one table of hand-derived values, statistic by statistic,
//! each next to the arithmetic that gives it; split, the shared fixtures would be copied.
#![allow(clippy::unwrap_used)]

use benchaudit_stats::*;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

// ---------------------------------------------------------------- summary

#[test]
fn cvar_takes_mean_of_ceil_alpha_n_lowest() {
    let v = [0.1, 0.5, 0.9, 0.3, 0.7];
    // k = ceil(0.2·5) = 1 → lowest value.
    assert_eq!(cvar(&v, 0.2).unwrap(), 0.1);
    // k = ceil(0.4·5) = 2 → (0.1 + 0.3) / 2.
    assert!(close(cvar(&v, 0.4).unwrap(), 0.2, 1e-15));
    // k = ceil(0.5·5) = ceil(2.5) = 3 → (0.1 + 0.3 + 0.5) / 3.
    assert!(close(cvar(&v, 0.5).unwrap(), 0.3, 1e-15));
    // k = n → the mean.
    assert!(close(cvar(&v, 1.0).unwrap(), 0.5, 1e-15));
    // k is at least 1.
    assert_eq!(cvar(&v, 0.01).unwrap(), 0.1);
}

#[test]
fn cvar_tail_size_is_not_fooled_by_float_noise() {
    // 0.1·30 = 3.0000000000000004 in f64; the tail must still be 3, not 4.
    assert_eq!(cvar_tail_size(0.1, 30).unwrap(), 3);
    assert_eq!(cvar_tail_size(0.2, 50).unwrap(), 10);
    assert_eq!(cvar_tail_size(0.2, 7).unwrap(), 2); // ceil(1.4)
    assert_eq!(cvar_tail_size(0.2, 1).unwrap(), 1);
    let v: Vec<f64> = (1..=30).map(f64::from).collect();
    assert_eq!(cvar(&v, 0.1).unwrap(), 2.0); // (1 + 2 + 3) / 3
}

#[test]
fn reliability_counts_values_at_or_above_tau() {
    let v = [0.1, 0.5, 0.9, 0.3, 0.7];
    assert!(close(reliability(&v, 0.5).unwrap(), 0.6, 1e-15)); // 0.5, 0.9, 0.7
    assert!(close(reliability(&v, 0.9).unwrap(), 0.2, 1e-15)); // 0.9 counts (≥)
    assert_eq!(reliability(&v, 0.95).unwrap(), 0.0);
    assert_eq!(reliability(&v, 0.0).unwrap(), 1.0);
}

#[test]
fn paper_gpt4o_dedup_vector() {
    // Paper §5.1: GPT-4o on T3, per-seed F1 = 0,0,1,0,0,0,0,1,1,1.
    let v = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0];
    let s = summarize(&v, &SummaryConfig::default()).unwrap();
    assert_eq!(s.n, 10);
    assert_eq!(s.mean, 0.4);
    assert_eq!(s.worst, 0.0);
    assert_eq!(s.cvar, 0.0);
    assert_eq!(s.cvar_alpha, 0.2);
    assert_eq!(
        s.reliability,
        vec![
            ReliabilityAt {
                tau: 0.9,
                fraction: 0.4
            },
            ReliabilityAt {
                tau: 0.5,
                fraction: 0.4
            }
        ]
    );
    // Pinned bootstrap CI (seed 0, B = 2000, 95%): means of 0/1 resamples are k/10.
    assert_eq!((s.mean_ci.lo, s.mean_ci.hi), (0.1, 0.7));
}

#[test]
fn mean_and_worst() {
    assert_eq!(mean(&[1.0, 2.0, 6.0]).unwrap(), 3.0);
    assert_eq!(worst(&[0.3, -2.0, 6.0]).unwrap(), -2.0);
}

// ---------------------------------------------------------------- Wilson

#[test]
fn wilson_matches_newcombe_1998() {
    // Newcombe R.G. (1998), "Two-sided confidence intervals for the single proportion:
    // comparison of seven methods", Stat. Med. 17:857–872, Table II, method 3 (Wilson score,
    // no continuity correction), 4 decimal places.
    let cases = [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0000, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ];
    for (k, n, lo, hi) in cases {
        let w = wilson_interval(k, n).unwrap();
        assert!(close(w.lo, lo, 5e-5), "{k}/{n} lo {}", w.lo);
        assert!(close(w.hi, hi, 5e-5), "{k}/{n} hi {}", w.hi);
        assert!(w.lo <= w.rate && w.rate <= w.hi);
    }
    let full = wilson_interval(10, 10).unwrap();
    assert_eq!(full.hi, 1.0);
    assert!(close(full.lo, 0.7225, 5e-5));
    assert_eq!(Z_95, 1.959963984540054);
}

#[test]
fn wilson_rejects_bad_counts() {
    assert!(matches!(
        wilson_interval(1, 0),
        Err(StatsError::Empty { .. })
    ));
    assert!(matches!(
        wilson_interval(5, 4),
        Err(StatsError::CountExceedsTrials { .. })
    ));
    assert!(wilson_interval_z(1, 2, f64::NAN).is_err());
}

// ---------------------------------------------------------------- Holm

#[test]
fn holm_textbook_example() {
    // Wikipedia, "Holm–Bonferroni method", Example: p = 0.01, 0.04, 0.03, 0.005 (α = 0.05)
    // rejects H4 and H1 only. Adjusted (as R's p.adjust(method = "holm")): 0.03 0.06 0.06 0.02.
    let adj = holm_adjust(&[0.01, 0.04, 0.03, 0.005]).unwrap();
    let expected = [0.03, 0.06, 0.06, 0.02];
    for (a, e) in adj.iter().zip(expected) {
        assert!(close(*a, e, 1e-15), "{adj:?}");
    }
    let rejected: Vec<bool> = adj.iter().map(|&p| p < 0.05).collect();
    assert_eq!(rejected, [true, false, false, true]);
}

#[test]
fn holm_reproduces_the_papers_b2_family() {
    // Paper A.2 table: p and p_Holm over the six exploratory B2 / B2-slack rows.
    let p = [0.0011, 0.0076, 0.0355, 0.0231, 0.3495, 0.6031];
    let expected = [0.0066, 0.0380, 0.1065, 0.0924, 0.6990, 0.6990];
    let adj = holm_adjust(&p).unwrap();
    for (a, e) in adj.iter().zip(expected) {
        assert!(close(*a, e, 1e-12), "{adj:?}");
    }
}

#[test]
fn holm_caps_at_one_and_handles_edges() {
    assert_eq!(holm_adjust(&[0.5, 0.6]).unwrap(), vec![1.0, 1.0]);
    assert_eq!(holm_adjust(&[]).unwrap(), Vec::<f64>::new());
    assert_eq!(holm_adjust(&[0.2]).unwrap(), vec![0.2]);
    assert!(holm_adjust(&[0.1, f64::NAN]).is_err());
    assert!(holm_adjust(&[1.5]).is_err());
}

// ---------------------------------------------------------------- sign flip

/// Independent brute force on integer data (exact arithmetic): count of sign patterns with
/// |Σ sᵢkᵢ| ≥ |Σ kᵢ|, over 2ⁿ.
fn brute_force_p(cents: &[i64]) -> (u64, u64) {
    let n = cents.len();
    let observed: i64 = cents.iter().sum::<i64>().abs();
    let mut count = 0;
    for mask in 0u64..(1 << n) {
        let s: i64 = cents
            .iter()
            .enumerate()
            .map(|(i, &k)| if mask >> i & 1 == 1 { -k } else { k })
            .sum();
        if s.abs() >= observed {
            count += 1;
        }
    }
    (count, 1 << n)
}

#[test]
fn sign_flip_small_hand_example() {
    // ±1±2±3 ∈ {6,4,2,0,0,−2,−4,−6}: only ±6 reach |6| → 2/8.
    let t = sign_flip_test(&[1.0, 2.0, 3.0], 10, 0).unwrap();
    assert_eq!(t.p_value, 0.25);
    assert_eq!(t.extreme, 2);
    assert_eq!(t.method, SignFlipMethod::Exact { patterns: 8 });
    // A single pair: both patterns are equally extreme.
    assert_eq!(sign_flip_test(&[0.3], 10, 0).unwrap().p_value, 1.0);
    // No differences at all: p = 1.
    assert_eq!(sign_flip_test(&[0.0; 7], 10, 0).unwrap().p_value, 1.0);
}

#[test]
fn sign_flip_exact_matches_brute_force_with_float_ties() {
    // Decimal data in hundredths: many patterns tie the observed sum exactly in ℚ but not in
    // f64 (0.1 + 0.2 ≠ 0.3), which is what the tolerance is for.
    let cases: [&[i64]; 4] = [
        &[10, 20, 30, -10, 5, 15, 25, -5, 10, 20, 30, 0],
        &[
            7, -3, 12, 1, 1, 9, -14, 6, 3, 3, 2, -1, 8, 5, 4, 10, -2, 6, 1, 7,
        ],
        &[30, -10, -20, 10, 20, -30],
        &[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, 1],
    ];
    for cents in cases {
        let deltas: Vec<f64> = cents.iter().map(|&k| k as f64 / 100.0).collect();
        let t = sign_flip_test(&deltas, 10, 0).unwrap();
        let (count, total) = brute_force_p(cents);
        assert_eq!(t.extreme, count, "{cents:?}");
        assert_eq!(t.p_value, count as f64 / total as f64);
    }
}

/// Exact count for integer data of any n, by dynamic programming over the signed sum.
fn dp_exact_p(cents: &[i64]) -> f64 {
    let total: i64 = cents.iter().map(|k| k.abs()).sum();
    let offset = total as usize;
    let mut ways = vec![0f64; 2 * offset + 1];
    ways[offset] = 1.0;
    for &k in cents {
        let mut next = vec![0f64; ways.len()];
        for (s, &w) in ways.iter().enumerate() {
            if w > 0.0 {
                next[(s as i64 + k) as usize] += w;
                next[(s as i64 - k) as usize] += w;
            }
        }
        ways = next;
    }
    let observed = cents.iter().sum::<i64>().abs();
    let hits: f64 = ways
        .iter()
        .enumerate()
        .filter(|(s, _)| (*s as i64 - offset as i64).abs() >= observed)
        .map(|(_, w)| w)
        .sum();
    hits / 2f64.powi(cents.len() as i32)
}

#[test]
fn sign_flip_monte_carlo_is_seeded_and_close_to_exact() {
    let cents: Vec<i64> = (0..30).map(|i| (i * 37 % 11) - 4).collect();
    let deltas: Vec<f64> = cents.iter().map(|&k| k as f64 / 100.0).collect();
    let t = sign_flip_test(&deltas, 100_000, 3).unwrap();
    assert_eq!(
        t.method,
        SignFlipMethod::MonteCarlo {
            samples: 100_000,
            seed: 3
        }
    );
    // Pinned: the (count + 1) / (M + 1) rule on the seeded stream.
    assert_eq!(t.extreme, 18_036);
    assert_eq!(t.p_value, 18_037.0 / 100_001.0);
    assert_eq!(t, sign_flip_test(&deltas, 100_000, 3).unwrap());
    // Within 5 Monte-Carlo standard errors of the exact value.
    let exact = dp_exact_p(&cents);
    let se = (exact * (1.0 - exact) / 100_000.0).sqrt();
    assert!(
        (t.p_value - exact).abs() < 5.0 * se,
        "{} vs {exact}",
        t.p_value
    );
    // A different seed draws different patterns.
    assert_ne!(
        sign_flip_test(&deltas, 100_000, 4).unwrap().extreme,
        t.extreme
    );
}

// ---------------------------------------------------------------- Cliff's δ

#[test]
fn cliffs_delta_hand_examples() {
    // 3 positive, 1 negative, 1 tie over 5 pairs.
    assert_eq!(
        cliffs_delta_paired(&[0.5, -0.2, 0.0, 0.1, 0.3]).unwrap(),
        0.4
    );
    assert_eq!(cliffs_delta_paired(&[-1.0, -2.0]).unwrap(), -1.0);
    // Two-sample: x = 1,2,3 vs y = 2,2,4 → 2 wins, 5 losses, 2 ties over 9 pairs.
    assert!(close(
        cliffs_delta(&[1.0, 2.0, 3.0], &[2.0, 2.0, 4.0]).unwrap(),
        -1.0 / 3.0,
        1e-15
    ));
    assert_eq!(cliffs_delta(&[5.0], &[1.0, 2.0]).unwrap(), 1.0);
}

// ---------------------------------------------------------------- paired comparison

#[test]
fn paired_comparison_pinned() {
    let a = [
        0.91, 0.85, 0.97, 0.88, 0.93, 0.79, 0.95, 0.9, 0.86, 0.92, 0.89, 0.94,
    ];
    let b = [
        0.84, 0.86, 0.90, 0.80, 0.93, 0.70, 0.91, 0.88, 0.87, 0.85, 0.83, 0.90,
    ];
    let config = PairedConfig {
        seed: 7,
        ..PairedConfig::default()
    };
    let c = compare_paired(&a, &b, &config).unwrap();
    assert_eq!((c.n, c.positive, c.negative, c.ties), (12, 9, 2, 1));
    assert!(close(c.mean_delta, 0.52 / 12.0, 1e-15));
    assert_eq!(c.cliffs_delta, 7.0 / 12.0);
    // Exact sign-flip over 2¹² patterns, cross-checked by integer brute force.
    let cents: Vec<i64> = a
        .iter()
        .zip(&b)
        .map(|(x, y)| ((x - y) * 100.0f64).round() as i64)
        .collect();
    let (count, total) = brute_force_p(&cents);
    assert_eq!((c.sign_flip.extreme, total), (count, 4096));
    assert_eq!(c.p_value(), 20.0 / 4096.0);
    // Pinned bootstrap bits (seed 7, B = 2000, 95%).
    assert_eq!(c.delta_ci.lo.to_bits(), 0x3f97_e4b1_7e4b_17e8); // 0.023333333333333345
    assert_eq!(c.delta_ci.hi.to_bits(), 0x3faf_92c5_f92c_5f95); // 0.06166666666666668
    assert_eq!(c.cliffs_ci.lo, 1.0 / 12.0);
    assert_eq!(c.cliffs_ci.hi, 1.0);
    assert!(decision_rule(&c, true));
    assert!(!decision_rule(&c, false));
}

#[test]
fn paired_rejects_mismatched_lengths() {
    let e = compare_paired(&[1.0, 2.0], &[1.0], &PairedConfig::default()).unwrap_err();
    assert_eq!(e, StatsError::LengthMismatch { left: 2, right: 1 });
}

#[test]
fn decision_rule_needs_both_ci_and_p() {
    let base = compare_paired(&[1.0; 6], &[0.5; 6], &PairedConfig::default()).unwrap();
    assert!(decision_rule(&base, true)); // CI = [0.5, 0.5], p = 2/64
    // Same CI but n = 4: p = 2/16 = 0.125 ≥ 0.05 → no decision.
    let small = compare_paired(&[1.0; 4], &[0.5; 4], &PairedConfig::default()).unwrap();
    assert!(small.delta_ci.lo > 0.0);
    assert!(!decision_rule(&small, true));
    // p < 0.05 but the CI straddles 0 on the predicted side → no decision.
    let mut straddle = base.clone();
    straddle.delta_ci.lo = -0.01;
    assert!(!decision_rule(&straddle, true));
}

// ---------------------------------------------------------------- gap and curve

#[test]
fn reliability_gap_is_static_mean_minus_hardest_worst() {
    let g = reliability_gap(&[1.0, 0.9, 0.8], &[0.7, 0.2, 0.5]).unwrap();
    assert!(close(g.static_mean, 0.9, 1e-15));
    assert_eq!(g.hardest_worst, 0.2);
    assert!(close(g.gap, 0.7, 1e-15));
}

#[test]
fn degradation_curve_sorts_doses_and_uses_extremes_for_gap() {
    let groups = vec![
        (2.0, vec![0.4, 0.1, 0.6]),
        (0.0, vec![1.0, 0.9, 0.8]),
        (1.0, vec![0.9, 0.5, 0.7]),
    ];
    let curve = degradation_curve(&groups, &SummaryConfig::default()).unwrap();
    let doses: Vec<f64> = curve.points.iter().map(|p| p.dose).collect();
    assert_eq!(doses, [0.0, 1.0, 2.0]);
    let p1 = &curve.points[1].summary;
    assert_eq!((p1.n, p1.worst), (3, 0.5));
    assert!(close(p1.mean, 0.7, 1e-15));
    assert_eq!(p1.cvar, 0.5); // k = ceil(0.6) = 1
    assert!(close(curve.gap.gap, 0.9 - 0.1, 1e-15));
    // A dose's summary does not depend on the other doses.
    let alone = degradation_curve(&groups[2..], &SummaryConfig::default()).unwrap();
    assert_eq!(&alone.points[0], &curve.points[1]);
    let dup = vec![(1.0, vec![0.5]), (1.0, vec![0.6])];
    assert!(matches!(
        degradation_curve(&dup, &SummaryConfig::default()),
        Err(StatsError::DuplicateDose { .. })
    ));
    let none: Vec<(f64, Vec<f64>)> = vec![];
    assert!(degradation_curve(&none, &SummaryConfig::default()).is_err());
}

// ---------------------------------------------------------------- η²

fn toy_layout() -> Vec<(&'static str, &'static str, f64)> {
    vec![
        ("a1", "b1", 1.0),
        ("a1", "b1", 3.0),
        ("a1", "b2", 5.0),
        ("a1", "b2", 7.0),
        ("a2", "b1", 2.0),
        ("a2", "b1", 4.0),
        ("a2", "b2", 10.0),
        ("a2", "b2", 12.0),
    ]
}

#[test]
fn eta_squared_balanced_toy_by_hand() {
    // Cell means 2, 6 / 3, 11; grand mean 5.5. A means 4, 7 → SS_A = 4·1.5²·2 = 18.
    // B means 2.5, 8.5 → SS_B = 4·3²·2 = 72. Cells: 2·(3.5² + 0.5² + 2.5² + 5.5²) = 98
    // → SS_AB = 98 − 18 − 72 = 8. Residual: 8 deviations of ±1 → 8. Total 106.
    let e = two_way_eta_squared(&toy_layout()).unwrap();
    assert!(e.balanced);
    assert_eq!((e.n, e.levels_a, e.levels_b, e.cells), (8, 2, 2, 4));
    for (got, want) in [
        (e.ss_a, 18.0),
        (e.ss_b, 72.0),
        (e.ss_interaction, 8.0),
        (e.ss_residual, 8.0),
        (e.ss_total, 106.0),
    ] {
        assert!(close(got, want, 1e-12), "{got} vs {want}");
    }
    assert!(close(e.eta_a, 18.0 / 106.0, 1e-15));
    assert!(close(e.eta_b, 72.0 / 106.0, 1e-15));
    assert!(close(e.eta_interaction, 8.0 / 106.0, 1e-15));
    assert!(close(e.eta_residual, 8.0 / 106.0, 1e-15));
    // Balanced: swapping the factors swaps the shares.
    let swapped: Vec<_> = toy_layout()
        .into_iter()
        .map(|(a, b, y)| (b, a, y))
        .collect();
    let s = two_way_eta_squared(&swapped).unwrap();
    assert!(close(s.eta_a, e.eta_b, 1e-15) && close(s.eta_b, e.eta_a, 1e-15));
}

/// Residual SS of the additive model y ~ A + B by backfitting (an algorithm independent of
/// the library's normal-equation solve), iterated to convergence.
fn additive_rss(obs: &[(usize, usize, f64)], na: usize, nb: usize) -> f64 {
    let mut alpha = vec![0.0; na];
    let mut beta = vec![0.0; nb];
    for _ in 0..20_000 {
        alpha = (0..na)
            .map(|i| {
                let (s, c) = obs
                    .iter()
                    .filter(|o| o.0 == i)
                    .fold((0.0, 0.0), |(s, c), o| (s + o.2 - beta[o.1], c + 1.0));
                s / c
            })
            .collect();
        beta = (0..nb)
            .map(|j| {
                let (s, c) = obs
                    .iter()
                    .filter(|o| o.1 == j)
                    .fold((0.0, 0.0), |(s, c), o| (s + o.2 - alpha[o.0], c + 1.0));
                s / c
            })
            .collect();
    }
    obs.iter()
        .map(|o| (o.2 - alpha[o.0] - beta[o.1]).powi(2))
        .sum()
}

#[test]
fn eta_squared_unbalanced_is_type_one_sequential() {
    let obs = vec![
        (0, 0, 1.0),
        (0, 0, 2.5),
        (0, 0, 1.5),
        (0, 1, 4.0),
        (1, 0, 2.0),
        (1, 1, 6.0),
        (1, 1, 7.5),
        (1, 1, 5.0),
        (1, 1, 6.5),
        (2, 0, 3.0),
        (2, 1, 9.0),
        (2, 1, 8.0),
    ];
    let e = two_way_eta_squared(&obs).unwrap();
    assert!(!e.balanced);
    // SS_A from group means; SS_B|A = RSS(A) − RSS(A + B).
    let y: Vec<f64> = obs.iter().map(|o| o.2).collect();
    let grand = y.iter().sum::<f64>() / y.len() as f64;
    let total: f64 = y.iter().map(|v| (v - grand).powi(2)).sum();
    let rss_a: f64 = (0..3)
        .map(|i| {
            let g: Vec<f64> = obs.iter().filter(|o| o.0 == i).map(|o| o.2).collect();
            let m = g.iter().sum::<f64>() / g.len() as f64;
            g.iter().map(|v| (v - m).powi(2)).sum::<f64>()
        })
        .sum();
    let rss_ab = additive_rss(&obs, 3, 2);
    assert!(close(e.ss_total, total, 1e-12));
    assert!(close(e.ss_a, total - rss_a, 1e-12));
    assert!(
        close(e.ss_b, rss_a - rss_ab, 1e-9),
        "{} vs {}",
        e.ss_b,
        rss_a - rss_ab
    );
    let sum = e.eta_a + e.eta_b + e.eta_interaction + e.eta_residual;
    assert!(close(sum, 1.0, 1e-12));
}

#[test]
fn eta_squared_errors() {
    let flat = vec![(0, 0, 1.0), (1, 1, 1.0)];
    assert!(matches!(
        two_way_eta_squared(&flat),
        Err(StatsError::NoVariation { .. })
    ));
    let empty: Vec<(u8, u8, f64)> = vec![];
    assert!(matches!(
        two_way_eta_squared(&empty),
        Err(StatsError::Empty { .. })
    ));
    assert!(two_way_eta_squared(&[(0, 0, f64::NAN)]).is_err());
}

// ---------------------------------------------------------------- power

#[test]
fn power_study_separates_large_effect_from_null() {
    let mut large = PowerConfig::new(0.5, 0.15, 12);
    large.replications = 60;
    large.resamples = 400;
    large.threads = 3;
    let p = power_study(&large).unwrap();
    assert_eq!(p.detections, 60); // Δ ≈ 2.4 sd of a difference: always detected
    assert_eq!(p.power, 1.0);

    let mut null = large.clone();
    null.effect = 0.0;
    let q = power_study(&null).unwrap();
    assert!(q.power < 0.2, "size {}", q.power); // nominal one-sided size ≈ 0.025
    assert!(q.power_ci.lo <= q.power && q.power <= q.power_ci.hi);

    // Seeded: identical on repeat and for any thread count.
    let mut one = null.clone();
    one.threads = 1;
    assert_eq!(power_study(&one).unwrap().detections, q.detections);
}

// ---------------------------------------------------------------- report serialization

#[test]
fn results_serialize_to_report_json() {
    let s = summarize(&[0.2, 0.9, 1.0], &SummaryConfig::default()).unwrap();
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["n"], 3);
    assert_eq!(json["worst"], 0.2);
    assert_eq!(json["reliability"][0]["tau"], 0.9);
    assert_eq!(json["mean_ci"]["resamples"], 2000);
    let c = compare_paired(&[1.0, 0.9], &[0.5, 0.9], &PairedConfig::default()).unwrap();
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["sign_flip"]["method"]["method"], "exact");
    assert_eq!(json["sign_flip"]["method"]["patterns"], 4);
    let curve = degradation_curve(&[(0.0, vec![0.5, 1.0])], &SummaryConfig::default()).unwrap();
    let json = serde_json::to_value(&curve).unwrap();
    // Curve points flatten their summary next to the dose.
    assert_eq!(json["points"][0]["dose"], 0.0);
    assert_eq!(json["points"][0]["mean"], 0.75);
}

#[test]
fn pass_k_estimators_by_hand() {
    use benchaudit_stats::{pass_at_k, pass_hat_k};
    // n = 5 trials, c = 2 successes.
    // pass@1 = c/n = 0.4; pass@2 = 1 − C(3,2)/C(5,2) = 1 − 3/10 = 0.7;
    // pass@3 = 1 − C(3,3)/C(5,3) = 1 − 1/10 = 0.9; pass@4 = 1 (C(3,4) = 0).
    let at = |k| pass_at_k(5, 2, k).unwrap();
    assert!(close(at(1), 0.4, 1e-15) && close(at(2), 0.7, 1e-15) && close(at(3), 0.9, 1e-15));
    assert_eq!(at(4), 1.0);
    // pass^1 = 0.4; pass^2 = C(2,2)/C(5,2) = 1/10; pass^3 = 0 (C(2,3) = 0).
    let hat = |k| pass_hat_k(5, 2, k).unwrap();
    assert!(close(hat(1), 0.4, 1e-15) && close(hat(2), 0.1, 1e-15));
    assert_eq!(hat(3), 0.0);
    // n = 10, c = 7, k = 3: pass^3 = C(7,3)/C(10,3) = 35/120; pass@3 = 1 − C(3,3)/120.
    assert!(close(pass_hat_k(10, 7, 3).unwrap(), 35.0 / 120.0, 1e-15));
    assert!(close(pass_at_k(10, 7, 3).unwrap(), 119.0 / 120.0, 1e-15));
    // All or nothing.
    assert_eq!(pass_hat_k(4, 4, 4).unwrap(), 1.0);
    assert_eq!(pass_at_k(4, 0, 4).unwrap(), 0.0);
    // Bad counts are errors, not panics.
    assert!(pass_at_k(3, 4, 1).is_err());
    assert!(pass_hat_k(3, 1, 0).is_err());
    assert!(pass_hat_k(3, 1, 4).is_err());
}

#[test]
fn pass_k_curve_per_task_and_pooled() {
    use benchaudit_stats::{PassKConfig, pass_k_curve};
    // Task A: 3 of 4 seeds perfect; task B: 1 of 4 (0.95 is below the default threshold 1).
    let tasks = vec![vec![1.0, 1.0, 0.5, 1.0], vec![0.95, 1.0, 0.0, 0.0]];
    let c = pass_k_curve(&tasks, &PassKConfig::default()).unwrap();
    assert_eq!(c.max_k, 4);
    assert_eq!((c.tasks[0].n, c.tasks[0].successes), (4, 3));
    assert_eq!((c.tasks[1].n, c.tasks[1].successes), (4, 1));
    // A: pass^2 = C(3,2)/C(4,2) = 3/6; B: pass^2 = 0. Pooled: (0.5 + 0)/2.
    assert!(close(c.tasks[0].points[1].pass_hat_k, 0.5, 1e-15));
    assert!(close(c.pooled[1].pass_hat_k.estimate, 0.25, 1e-15));
    // A: pass@2 = 1 − C(1,2)/6 = 1; B: pass@2 = 1 − C(3,2)/C(4,2) = 0.5. Pooled 0.75.
    assert!(close(c.pooled[1].pass_at_k.estimate, 0.75, 1e-15));
    // k = 1: both estimators are the success rate; pooled (0.75 + 0.25)/2 = 0.5.
    assert!(close(c.pooled[0].pass_at_k.estimate, 0.5, 1e-15));
    assert!(close(c.pooled[0].pass_hat_k.estimate, 0.5, 1e-15));
    // pass^k never rises with k, pass@k never falls; the CI brackets the estimate.
    for w in c.pooled.windows(2) {
        assert!(w[1].pass_hat_k.estimate <= w[0].pass_hat_k.estimate);
        assert!(w[1].pass_at_k.estimate >= w[0].pass_at_k.estimate);
    }
    for p in &c.pooled {
        assert!(
            p.pass_hat_k.lo <= p.pass_hat_k.estimate && p.pass_hat_k.estimate <= p.pass_hat_k.hi
        );
    }
    // A lower threshold counts 0.95 as a success.
    let lenient = pass_k_curve(
        &tasks,
        &PassKConfig {
            threshold: 0.9,
            max_k: Some(2),
            ..PassKConfig::default()
        },
    )
    .unwrap();
    assert_eq!((lenient.max_k, lenient.tasks[1].successes), (2, 2));
    // Same inputs, same bits.
    assert_eq!(c, pass_k_curve(&tasks, &PassKConfig::default()).unwrap());
    assert!(pass_k_curve(&[], &PassKConfig::default()).is_err());
    assert!(pass_k_curve(&[vec![]], &PassKConfig::default()).is_err());
    assert!(pass_k_curve(&[vec![f64::NAN]], &PassKConfig::default()).is_err());
}
