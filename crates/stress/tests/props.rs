//! No parameter, however wild (NaN, infinities, negatives, huge counts), makes the engine
//! panic: invalid input comes back as a `StressError`, and every intensity, probability and
//! rate stays in `[0, 1]`.

use benchaudit_stress::{
    AdversarialWrapper, AdversaryPolicy, AgentProgress, EscalatingAdversary, Perturbation,
    QuotaConfig, Schedule, Squeeze, StepOutcome, StepRng, StressError, WrapperConfig, matched_mean,
    simulate_always_retry,
};
use proptest::prelude::*;

/// Any `f64`, with the awkward values over-represented.
fn wild_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        prop::num::f64::ANY,
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(-0.0),
        Just(f64::MAX),
        Just(f64::MIN_POSITIVE),
        -2.0..2.0f64,
        0.0..=1.0f64,
    ]
}

/// Mostly valid levels, sometimes anything.
fn level() -> impl Strategy<Value = f64> {
    prop_oneof![3 => 0.0..=1.0f64, 1 => wild_f64()]
}

fn wild_u32() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0u32), Just(1), Just(u32::MAX), 0..20u32, any::<u32>()]
}

fn schedule() -> impl Strategy<Value = Schedule> {
    prop_oneof![
        level().prop_map(Schedule::Constant),
        (level(), wild_u32()).prop_map(|(max, span)| Schedule::Linear { max, span }),
        (level(), level(), wild_u32()).prop_map(|(before, after, at)| Schedule::Step {
            before,
            after,
            at
        }),
        (level(), wild_u32()).prop_map(|(max, span)| Schedule::Plateau { max, span }),
    ]
}

fn progress() -> impl Strategy<Value = AgentProgress> {
    (wild_u32(), wild_u32(), wild_u32()).prop_map(|(successes, steps, faults)| AgentProgress {
        successes,
        steps,
        faults,
    })
}

fn adversary() -> impl Strategy<Value = EscalatingAdversary> {
    (
        level(),
        level(),
        level(),
        prop::option::of(level()),
        prop_oneof![3 => Just(429u16), 1 => any::<u16>()],
    )
        .prop_map(
            |(fault_base, fault_scale, corruption_scale, distractor_at, fault_status)| {
                EscalatingAdversary {
                    fault_base,
                    fault_scale,
                    corruption_scale,
                    distractor_at,
                    fault_status,
                }
            },
        )
}

fn in_unit(x: f64) -> bool {
    (0.0..=1.0).contains(&x)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn intensity_is_always_in_unit_interval(s in schedule(), p in progress()) {
        let i = s.intensity(&p);
        prop_assert!(in_unit(i), "{s:?} at {p:?} gave {i}");
        // validate() never panics, and a valid schedule's checked constructor agrees.
        let valid = s.validate().is_ok();
        let rebuilt = match s {
            Schedule::Constant(l) => Schedule::constant(l),
            Schedule::Linear { max, span } => Schedule::linear(max, span),
            Schedule::Step { before, after, at } => Schedule::step(before, after, at),
            Schedule::Plateau { max, span } => Schedule::plateau(max, span),
        };
        prop_assert_eq!(rebuilt.is_ok(), valid);
    }

    #[test]
    fn adversary_never_panics_and_rates_stay_in_unit(
        a in adversary(), i in wild_f64(), p in progress(), seed: u64, step: u64,
    ) {
        let checked = EscalatingAdversary::new(
            a.fault_base, a.fault_scale, a.corruption_scale, a.distractor_at, a.fault_status,
        );
        prop_assert_eq!(checked.is_ok(), a.validate().is_ok());
        prop_assert!(in_unit(a.fault_probability(i)));
        prop_assert!(in_unit(a.corruption_rate(i)));
        let mut used = StepRng::new(seed, step);
        let intents = a.perturb(i, &p, &mut used);
        for intent in &intents {
            if let Perturbation::Corruption { rate, .. } = intent {
                prop_assert!(in_unit(*rate) && *rate > 0.0);
            }
        }
        let faults = intents.iter().filter(|x| x.is_fault()).count();
        prop_assert!(faults == 0 || intents.len() == 1);
        // Exactly one draw consumed, whatever the parameters.
        let mut fresh = StepRng::new(seed, step);
        fresh.next_u64();
        prop_assert_eq!(used.next_u64(), fresh.next_u64());
    }

    #[test]
    fn rng_draws_stay_in_range(seed: u64, step: u64, n: u64, len in 0usize..40) {
        let mut r = StepRng::new(seed, step);
        let u = r.uniform();
        prop_assert!((0.0..1.0).contains(&u));
        match r.below(n) {
            None => prop_assert_eq!(n, 0),
            Some(x) => prop_assert!(x < n),
        }
        let mut v: Vec<usize> = (0..len).collect();
        r.shuffle(&mut v);
        v.sort_unstable();
        prop_assert_eq!(v, (0..len).collect::<Vec<_>>());
    }

    #[test]
    fn wrapper_never_panics(
        seed: u64,
        s in schedule(),
        a in adversary(),
        limit in prop::option::of(wild_u32()),
        squeeze in prop::option::of((level(), wild_u32())),
        outcomes in prop::collection::vec(0u8..4, 0..40),
    ) {
        let quota = limit.map(|limit| QuotaConfig {
            limit,
            squeeze: squeeze.map(|(at, by)| Squeeze { at, by }),
        });
        let config = WrapperConfig { seed, schedule: s, quota };
        let Ok(mut w) = AdversarialWrapper::new(config, a) else {
            return Ok(());
        };
        for o in outcomes {
            let outcome = match o {
                0 => StepOutcome::Success,
                1 => StepOutcome::Fault,
                2 => StepOutcome::Neutral,
                // Protocol misuse: end without begin, or begin twice.
                _ => {
                    let _ = w.end_step(StepOutcome::Success);
                    let _ = w.begin_step();
                    continue;
                }
            };
            match w.begin_step() {
                Ok(plan) => {
                    prop_assert!(in_unit(plan.intensity));
                    w.end_step(outcome).map_err(|e| TestCaseError::fail(e.to_string()))?;
                }
                Err(StressError::StepAlreadyOpen { .. }) => {
                    w.end_step(outcome).map_err(|e| TestCaseError::fail(e.to_string()))?;
                }
                Err(StressError::QuotaExhausted { .. }) => {
                    prop_assert!(w.quota_death_at_step().is_some());
                    break;
                }
                Err(e) => return Err(TestCaseError::fail(e.to_string())),
            }
            if let (Some(rem), Some(lim)) = (w.quota_remaining(), w.quota_limit()) {
                prop_assert!(rem <= lim);
            }
        }
        prop_assert_eq!(w.trace().steps.len() as u32, w.progress().steps);
        let json = serde_json::to_string(w.trace());
        // Non-finite floats cannot appear: intensities are clamped and configs validated.
        prop_assert!(json.is_ok());
    }
}

proptest! {
    // Simulations can run up to the step limit, so fewer cases here.
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn matched_mean_never_panics(
        s in schedule(),
        a in adversary(),
        required in prop_oneof![Just(0u32), 1..8u32, Just(10_001), Just(u32::MAX)],
        seeds in prop::collection::vec(any::<u64>(), 0..3),
    ) {
        if let Ok(m) = matched_mean(&s, &a, required, &seeds) {
            prop_assert!(in_unit(m), "{m}");
        }
        if let Some(&seed) = seeds.first()
            && let Ok(t) = simulate_always_retry(seed, &s, &a, required)
        {
            prop_assert_eq!(t.progress.successes, required);
        }
    }
}
