//! Bit-reproducibility of the seeded bootstrap: same bits on repeat, for any thread count,
//! and pinned golden values so a change of RNG, index drawing, summation order or
//! percentile rule is caught.
#![allow(clippy::unwrap_used)]

use benchaudit_stats::rng::stream_rng;
use benchaudit_stats::*;
use rand_core::RngCore;

const DATA: [f64; 10] = [0.93, 0.41, 0.77, 1.0, 0.0, 0.62, 0.88, 0.95, 0.5, 0.71];

fn config(seed: u64, threads: usize) -> BootstrapConfig {
    BootstrapConfig {
        seed,
        threads,
        ..BootstrapConfig::default()
    }
}

fn bits(ci: &BootstrapCi) -> (u64, u64, u64) {
    (ci.estimate.to_bits(), ci.lo.to_bits(), ci.hi.to_bits())
}

#[test]
fn chacha8_stream_is_pinned() {
    // Guards the generator itself (rand_chacha seed_from_u64 + set_stream).
    assert_eq!(stream_rng(0, 0).next_u64(), 0xb585_f767_a79a_3b6c);
    assert_eq!(stream_rng(42, 5).next_u64(), 0x5a4c_b496_8c34_03e3);
}

#[test]
fn golden_mean_ci_bits() {
    let ci = bootstrap_mean_ci(&DATA, &config(42, 1)).unwrap();
    assert_eq!(ci.lo.to_bits(), 0x3fde_b851_eb85_1eb8); // 0.48
    assert_eq!(ci.hi.to_bits(), 0x3feb_020c_49ba_5e35); // 0.844
    assert_eq!(
        (ci.estimate, ci.resamples, ci.seed, ci.level),
        (0.677, 2000, 42, 0.95)
    );
    let ci0 = bootstrap_mean_ci(&DATA, &config(0, 1)).unwrap();
    assert_eq!(ci0.lo.to_bits(), 0x3fde_a7ef_9db2_2d0e); // 0.479
    assert_eq!(ci0.hi.to_bits(), 0x3fea_f9db_22d0_e560); // 0.843
}

#[test]
fn golden_replicates() {
    let r = bootstrap_replicates(&DATA, &config(42, 1), |x| {
        x.iter().sum::<f64>() / x.len() as f64
    })
    .unwrap();
    assert_eq!(r.len(), 2000);
    assert_eq!(r[0].to_bits(), 0x3fe5_fbe7_6c8b_4396); // 0.687
    assert_eq!(r[1].to_bits(), 0x3fe4_b439_5810_624e); // 0.647
    assert_eq!(r[1999].to_bits(), 0x3fe6_2d0e_5604_1893); // 0.693
    // The interval ends are exactly the order statistics named by the percentile rule.
    let mut sorted = r.clone();
    sorted.sort_by(f64::total_cmp);
    let ci = bootstrap_mean_ci(&DATA, &config(42, 1)).unwrap();
    assert_eq!((ci.lo, ci.hi), (sorted[50], sorted[1949]));
}

#[test]
fn identical_bits_on_repeat_and_across_threads() {
    let reference = bits(&bootstrap_mean_ci(&DATA, &config(42, 1)).unwrap());
    assert_eq!(
        bits(&bootstrap_mean_ci(&DATA, &config(42, 1)).unwrap()),
        reference
    );
    for threads in [0, 2, 7, 64] {
        assert_eq!(
            bits(&bootstrap_mean_ci(&DATA, &config(42, threads)).unwrap()),
            reference,
            "threads = {threads}"
        );
    }
    let base = bootstrap_replicates(&DATA, &config(9, 1), |x| x[0]).unwrap();
    for threads in [2, 7] {
        let r = bootstrap_replicates(&DATA, &config(9, threads), |x| x[0]).unwrap();
        assert!(r.iter().zip(&base).all(|(a, b)| a.to_bits() == b.to_bits()));
    }
    let a: Vec<f64> = DATA.to_vec();
    let b: Vec<f64> = DATA.iter().rev().map(|x| x * 0.9).collect();
    let one = compare_paired(
        &a,
        &b,
        &PairedConfig {
            seed: 5,
            ..PairedConfig::default()
        },
    )
    .unwrap();
    for threads in [2, 7] {
        let many = compare_paired(
            &a,
            &b,
            &PairedConfig {
                seed: 5,
                threads,
                ..PairedConfig::default()
            },
        )
        .unwrap();
        assert_eq!(bits(&many.delta_ci), bits(&one.delta_ci));
        assert_eq!(bits(&many.cliffs_ci), bits(&one.cliffs_ci));
        assert_eq!(many.sign_flip, one.sign_flip);
    }
}

#[test]
fn replicate_b_depends_only_on_seed_and_b() {
    let long = bootstrap_replicates(&DATA, &config(3, 1), |x| x.iter().sum()).unwrap();
    let short = bootstrap_replicates(
        &DATA,
        &BootstrapConfig {
            seed: 3,
            resamples: 17,
            ..BootstrapConfig::default()
        },
        |x| x.iter().sum(),
    )
    .unwrap();
    assert_eq!(&long[..17], &short[..]);
}

#[test]
fn different_seeds_give_different_intervals() {
    let a = bootstrap_mean_ci(&DATA, &config(1, 1)).unwrap();
    let b = bootstrap_mean_ci(&DATA, &config(2, 1)).unwrap();
    let ra = bootstrap_replicates(&DATA, &config(1, 1), |x| x[0]).unwrap();
    let rb = bootstrap_replicates(&DATA, &config(2, 1), |x| x[0]).unwrap();
    assert_ne!(ra, rb);
    assert!(a.lo < a.estimate && a.estimate < a.hi && b.lo < b.estimate && b.estimate < b.hi);
}

#[test]
fn percentile_interval_on_known_replicates() {
    // 0..2000 shuffled-free: lo = sorted[50] = 50, hi = sorted[1949] = 1949.
    let reps: Vec<f64> = (0..2000).rev().map(f64::from).collect();
    assert_eq!(percentile_interval(&reps, 0.95).unwrap(), (50.0, 1949.0));
    assert_eq!(
        percentile_interval(&[3.0, 1.0, 2.0], 0.5).unwrap(),
        (1.0, 3.0)
    );
}

#[test]
fn constant_data_gives_a_degenerate_interval() {
    let ci = bootstrap_mean_ci(&[0.5; 8], &BootstrapConfig::default()).unwrap();
    assert_eq!((ci.lo, ci.hi, ci.estimate), (0.5, 0.5, 0.5));
}

#[test]
fn bad_configs_are_errors() {
    assert!(
        bootstrap_mean_ci(
            &DATA,
            &BootstrapConfig {
                resamples: 0,
                ..BootstrapConfig::default()
            }
        )
        .is_err()
    );
    assert!(
        bootstrap_mean_ci(
            &DATA,
            &BootstrapConfig {
                resamples: usize::MAX,
                ..BootstrapConfig::default()
            }
        )
        .is_err()
    );
    assert!(
        bootstrap_mean_ci(
            &DATA,
            &BootstrapConfig {
                level: 1.5,
                ..BootstrapConfig::default()
            }
        )
        .is_err()
    );
    assert!(bootstrap_mean_ci(&[], &BootstrapConfig::default()).is_err());
    assert!(bootstrap_mean_ci(&[1.0, f64::INFINITY], &BootstrapConfig::default()).is_err());
    assert!(matches!(
        bootstrap_mean_ci(&[f64::MAX, 1.0], &BootstrapConfig::default()),
        Err(StatsError::Overflow { .. })
    ));
}
