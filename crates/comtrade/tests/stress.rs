//! The stress engine at ComtradeBench's boundary: reproducible traces, matched arms, quotas.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use benchaudit_comtrade::{Episode, EpisodeOptions, FetchPageArgs, Row, StressConfig, task};
use benchaudit_stress::{QuotaConfig, Squeeze};

/// An always-retry single pass; returns (unique records held, quota death).
fn always_retry(e: &mut Episode) -> (usize, bool) {
    let pages = e.task().total_pages();
    let mut held = std::collections::BTreeSet::new();
    let mut page = 1;
    while page <= pages {
        match e.fetch_page(FetchPageArgs {
            page: i64::from(page),
            page_size: None,
        }) {
            Ok(r) => {
                held.extend(r.rows.iter().filter_map(|r| {
                    if let Row::Record(x) = r {
                        Some(x.index)
                    } else {
                        None
                    }
                }));
                page += 1;
            }
            Err(err) if err.retry => {}
            Err(_) => return (held.len(), true),
        }
    }
    (held.len(), false)
}

fn stressed(seed: u64, config: StressConfig) -> Episode {
    Episode::with_stress(
        task("T9_clean_ab").unwrap(),
        seed,
        EpisodeOptions::default(),
        config,
    )
    .unwrap()
}

#[test]
fn same_seed_gives_a_bit_identical_adversarial_trace() {
    let t = task("T9_adaptive_adversary").unwrap();
    let trace = |seed| {
        let mut e = Episode::new(t, seed, EpisodeOptions::default());
        always_retry(&mut e);
        serde_json::to_string(e.stress_trace().unwrap()).unwrap()
    };
    assert_eq!(trace(3), trace(3));
    assert_ne!(trace(3), trace(4));
    let mut e = Episode::new(t, 3, EpisodeOptions::default());
    always_retry(&mut e);
    let steps = &e.stress_trace().unwrap().steps;
    let intensities: Vec<f64> = steps.iter().map(|s| s.intensity).collect();
    // Golden: the ramp climbs 0.25 per new page and each 429 cancels one success (seed 3 meets
    // two faults at 0.25, so it finishes its five pages at 0.5).
    assert_eq!(intensities, [0.0, 0.25, 0.0, 0.25, 0.0, 0.25, 0.5]);
    let faults: Vec<bool> = steps
        .iter()
        .map(|s| s.outcome == Some(benchaudit_stress::StepOutcome::Fault))
        .collect();
    assert_eq!(faults, [false, true, false, true, false, false, false]);
}

#[test]
fn arms_have_matching_mean_intensity() {
    let t = task("T9_clean_ab").unwrap();
    let seeds: Vec<u64> = (0..20).collect();
    let level = StressConfig::matched_level(t, &seeds).unwrap();
    let mean_of = |config: StressConfig| {
        let per: Vec<f64> = seeds
            .iter()
            .map(|&s| {
                let mut e = stressed(s, config);
                always_retry(&mut e);
                e.stress_trace().unwrap().mean_intensity().unwrap()
            })
            .collect();
        per.iter().sum::<f64>() / per.len() as f64
    };
    let esc = mean_of(StressConfig::escalating(t).unwrap());
    let con = mean_of(StressConfig::constant(level).unwrap());
    assert!(
        (esc - level).abs() < 1e-12,
        "escalating realised mean {esc} is the matched level {level}"
    );
    assert!((con - level).abs() < 1e-12, "constant arm holds {con}");
    // Totals rows appear only where intensity reaches 0.70: the escalating arm, never the constant.
    let totals = |config: StressConfig| {
        seeds
            .iter()
            .map(|&s| {
                let mut e = stressed(s, config);
                always_retry(&mut e);
                e.counts().totals_served
            })
            .sum::<u32>()
    };
    assert!(totals(StressConfig::escalating(t).unwrap()) > 0);
    assert_eq!(totals(StressConfig::constant(level).unwrap()), 0);
}

#[test]
fn a_squeeze_lands_only_on_the_escalating_arm() {
    let t = task("T9_clean_ab").unwrap();
    let quota = Some(QuotaConfig {
        limit: 8,
        squeeze: Some(Squeeze { at: 0.7, by: 3 }),
    });
    let level = StressConfig::matched_level(t, &(0..20).collect::<Vec<_>>()).unwrap();
    let (mut esc_deaths, mut con_deaths, mut squeezed) = (0, 0, 0);
    for seed in 0..20 {
        let mut e = stressed(seed, StressConfig::escalating(t).unwrap().with_quota(quota));
        let (_, death) = always_retry(&mut e);
        squeezed += u32::from(e.stress_trace().unwrap().squeezed_at_step.is_some());
        esc_deaths += u32::from(death);
        let mut e = stressed(
            seed,
            StressConfig::constant(level).unwrap().with_quota(quota),
        );
        let (_, death) = always_retry(&mut e);
        assert!(e.stress_trace().unwrap().squeezed_at_step.is_none());
        con_deaths += u32::from(death);
    }
    assert!(
        squeezed >= 10,
        "most escalating episodes cross 0.7 ({squeezed}/20)"
    );
    assert!(
        esc_deaths > con_deaths,
        "zero slack kills escalating episodes ({esc_deaths} vs {con_deaths})"
    );
}
