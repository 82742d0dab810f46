//! How much the engine costs per step: it sits on every environment call of every episode.

use benchaudit_stress::{EscalatingAdversary, Schedule, StepRng, matched_mean};

fn main() {
    divan::main();
}

/// Deriving one step's stream (SHA-256 + ChaCha8 key setup) and one draw.
#[divan::bench]
fn step_rng(bencher: divan::Bencher) {
    let mut step = 0u64;
    bencher.bench_local(|| {
        step += 1;
        StepRng::new(divan::black_box(7), step).uniform()
    });
}

/// The paper's matched mean: a 5-success ramp over 20 seeds.
#[divan::bench]
fn matched_mean_20_seeds() -> f64 {
    let ramp = Schedule::Linear { max: 1.0, span: 5 };
    let adversary = EscalatingAdversary {
        fault_base: 0.0,
        fault_scale: 0.3,
        corruption_scale: 0.3,
        distractor_at: Some(0.7),
        fault_status: 429,
    };
    let seeds: Vec<u64> = (0..20).collect();
    matched_mean(&ramp, &adversary, divan::black_box(5), &seeds).unwrap_or(f64::NAN)
}
