//! Bootstrap cost on the SPEC §7 workload: B = 2000 replicates of the mean of n = 50 runs
//! (SPEC target: ≤ 2 ms), plus the other seeded hot paths of a report.

use benchaudit_stats::{
    BootstrapConfig, PairedConfig, PassKConfig, bootstrap_mean_ci, compare_paired, pass_k_curve,
    sign_flip_test,
};
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

/// Deterministic, score-like data in [0, 1].
fn scores(n: usize, salt: u64) -> Vec<f64> {
    (0..n as u64)
        .map(|i| (benchaudit_stats::rng::splitmix64(i ^ salt) >> 11) as f64 / (1u64 << 53) as f64)
        .collect()
}

#[divan::bench(args = [1, 4])]
fn bootstrap_mean_b2000_n50(bencher: Bencher, threads: usize) {
    let data = scores(50, 1);
    let config = BootstrapConfig {
        threads,
        ..BootstrapConfig::default()
    };
    bencher.bench(|| bootstrap_mean_ci(black_box(&data), black_box(&config)));
}

#[divan::bench]
fn sign_flip_exact_n20(bencher: Bencher) {
    let data: Vec<f64> = scores(20, 2).iter().map(|x| x - 0.5).collect();
    bencher.bench(|| sign_flip_test(black_box(&data), 100_000, 0));
}

#[divan::bench]
fn sign_flip_monte_carlo_n50(bencher: Bencher) {
    let data: Vec<f64> = scores(50, 3).iter().map(|x| x - 0.5).collect();
    bencher.bench(|| sign_flip_test(black_box(&data), 100_000, 0));
}

#[divan::bench]
fn compare_paired_n20(bencher: Bencher) {
    let a = scores(20, 4);
    let b = scores(20, 5);
    let config = PairedConfig::default();
    bencher.bench(|| compare_paired(black_box(&a), black_box(&b), &config));
}

/// The pass^k/pass@k curve of one report row: 11 tasks × `seeds` trials, k = 1 … seeds, B =
/// 2000 (a report computes one per condition); its cost should grow linearly in the seeds.
#[divan::bench(args = [10, 100, 300, 1000])]
fn pass_k_curve_11_tasks(bencher: Bencher, seeds: usize) {
    let tasks: Vec<Vec<f64>> = (0..11)
        .map(|t| {
            scores(seeds, 100 + t)
                .iter()
                .map(|&x| if x < 0.8 { 1.0 } else { 0.0 })
                .collect()
        })
        .collect();
    let config = PassKConfig::default();
    bencher.bench(|| pass_k_curve(black_box(&tasks), black_box(&config)));
}
