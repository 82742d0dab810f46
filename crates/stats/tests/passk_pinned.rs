//! pass^k / pass@k pinned bit for bit: the curve of a fixed input must equal, field by field
//! and f64 bit by f64 bit, the one recorded in `data/passk_pinned.json` (written by the
//! implementation that computed every k's pooled value from the resampled indicators anew).
//! Any faster method must give the same bits.

use benchaudit_stats::rng::splitmix64;
use benchaudit_stats::{BootstrapConfig, PassKConfig, PassKCurve, pass_k_curve};

/// Seven tasks of 47 to 90 trials, one never solved and one always, the rest in between, with
/// scores on both sides of a 0.9 threshold.
fn tasks() -> Vec<Vec<f64>> {
    let sizes = [60_u64, 61, 75, 47, 90, 64, 70];
    let rates = [0.0, 1.0, 0.5, 0.85, 0.1, 0.97, 0.35];
    sizes
        .iter()
        .zip(rates)
        .enumerate()
        .map(|(t, (&n, rate))| {
            (0..n)
                .map(|i| {
                    let u = (splitmix64((t as u64) << 32 | i) >> 11) as f64 / (1u64 << 53) as f64;
                    if u < rate {
                        1.0
                    } else if u < rate + 0.1 {
                        0.95
                    } else {
                        0.5
                    }
                })
                .collect()
        })
        .collect()
}

fn configs() -> [PassKConfig; 2] {
    [
        PassKConfig {
            bootstrap: BootstrapConfig {
                seed: 7,
                resamples: 300,
                ..BootstrapConfig::default()
            },
            ..PassKConfig::default()
        },
        PassKConfig {
            threshold: 0.9,
            max_k: Some(25),
            bootstrap: BootstrapConfig {
                seed: 11,
                resamples: 200,
                level: 0.9,
                threads: 3,
            },
        },
    ]
}

fn bits(curve: &PassKCurve) -> Vec<u64> {
    let mut out = vec![curve.threshold.to_bits(), curve.max_k];
    for t in &curve.tasks {
        out.extend([t.n, t.successes]);
        for p in &t.points {
            out.extend([p.k, p.pass_at_k.to_bits(), p.pass_hat_k.to_bits()]);
        }
    }
    for p in &curve.pooled {
        out.push(p.k);
        for ci in [&p.pass_at_k, &p.pass_hat_k] {
            out.extend([ci.estimate.to_bits(), ci.lo.to_bits(), ci.hi.to_bits()]);
        }
    }
    out
}

#[test]
fn pass_k_curves_equal_the_pinned_bits() {
    let pinned: Vec<PassKCurve> =
        serde_json::from_str(include_str!("data/passk_pinned.json")).expect("the pinned curves");
    let tasks = tasks();
    let configs = configs();
    assert_eq!(pinned.len(), configs.len());
    for (config, pinned) in configs.iter().zip(&pinned) {
        let curve = pass_k_curve(&tasks, config).expect("a curve");
        assert_eq!(bits(&curve), bits(pinned), "threshold {}", config.threshold);
        assert_eq!(&curve, pinned);
    }
    // The input is what the pinned file was made from, and not degenerate.
    assert_eq!(pinned[0].max_k, 47);
    assert_eq!(pinned[1].max_k, 25);
    let solved: Vec<u64> = pinned[0].tasks.iter().map(|t| t.successes).collect();
    assert_eq!(solved[0], 0);
    assert_eq!(solved[1], 61);
    assert!(solved[2..].iter().all(|&c| c > 0));
    assert!(pinned[1].tasks[0].successes > 0, "0.95 passes at 0.9");
    let hat = |c: &PassKCurve, k: usize| c.pooled[k].pass_hat_k.clone();
    assert!(hat(&pinned[0], 46).hi < hat(&pinned[0], 0).lo);
}
