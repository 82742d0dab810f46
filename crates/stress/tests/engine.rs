//! The engine end to end: a tiny domain adapter over `Vec<u32>` observations, reproducibility,
//! and the matched-mean A/B design with quota and squeeze.

use benchaudit_stress::{
    AdversarialWrapper, AdversaryPolicy, AgentProgress, Arm, CorruptionKind, EnvironmentAdapter,
    EscalatingAdversary, Perturbation, QuotaConfig, Realisation, Realised, Schedule, Squeeze,
    StepOutcome, StepRng, StressError, WrapperConfig, matched_mean, simulate_always_retry,
};

/// The value the test adapter uses as its distractor ("totals") unit.
const DISTRACTOR: u32 = u32::MAX;

/// A toy environment whose observation is a list of numbers or an error status.
struct VecAdapter;

impl EnvironmentAdapter for VecAdapter {
    type Observation = Result<Vec<u32>, u16>;

    fn realise(
        &mut self,
        intents: &[Perturbation],
        observation: Self::Observation,
        rng: &mut StepRng,
    ) -> Realised<Self::Observation> {
        let mut applied = Vec::new();
        let mut obs = observation;
        for &intent in intents {
            let affected = match (intent, &mut obs) {
                (Perturbation::TransientFault { status }, _) => {
                    obs = Err(status);
                    1
                }
                (_, Err(_)) => continue,
                (Perturbation::Corruption { kind, rate }, Ok(items)) => {
                    corrupt(kind, rate, items, rng)
                }
                (Perturbation::Distractor, Ok(items)) => {
                    let at = rng.below(items.len() as u64 + 1).unwrap_or(0) as usize;
                    items.insert(at, DISTRACTOR);
                    1
                }
                (Perturbation::BudgetDelta(_) | Perturbation::Latency { .. }, Ok(_)) => 0,
            };
            applied.push(Realisation { intent, affected });
        }
        Realised {
            observation: obs,
            applied,
        }
    }
}

fn corrupt(kind: CorruptionKind, rate: f64, items: &mut Vec<u32>, rng: &mut StepRng) -> u32 {
    let mut affected = 0;
    match kind {
        CorruptionKind::Duplicate => {
            let mut out = Vec::with_capacity(items.len() * 2);
            for &x in items.iter() {
                out.push(x);
                if rng.chance(rate) {
                    out.push(x);
                    affected += 1;
                }
            }
            *items = out;
        }
        CorruptionKind::Reorder => {
            if rng.chance(rate) {
                rng.shuffle(items);
                affected = items.len() as u32;
            }
        }
        CorruptionKind::Noise => {
            for x in items.iter_mut() {
                if rng.chance(rate) {
                    *x ^= 1;
                    affected += 1;
                }
            }
        }
        CorruptionKind::Drop => {
            let before = items.len();
            items.retain(|_| !rng.chance(rate));
            affected = (before - items.len()) as u32;
        }
    }
    affected
}

fn page(n: u32) -> Vec<u32> {
    (n * 10..n * 10 + 10).collect()
}

fn corruption(kind: CorruptionKind, rate: f64) -> Perturbation {
    Perturbation::Corruption { kind, rate }
}

#[test]
fn adapter_realises_each_intent() {
    let mut adapter = VecAdapter;
    let mut rng = StepRng::new(0, 0);
    let run =
        |intents: &[Perturbation], rng: &mut StepRng| VecAdapter.realise(intents, Ok(page(1)), rng);

    let dup = run(&[corruption(CorruptionKind::Duplicate, 1.0)], &mut rng);
    assert_eq!(dup.observation.as_ref().map(Vec::len), Ok(20));
    assert_eq!(dup.applied[0].affected, 10);

    let dropped = run(&[corruption(CorruptionKind::Drop, 1.0)], &mut rng);
    assert_eq!(dropped.observation, Ok(vec![]));

    let noisy = run(&[corruption(CorruptionKind::Noise, 1.0)], &mut rng);
    let expected: Vec<u32> = page(1).iter().map(|x| x ^ 1).collect();
    assert_eq!(noisy.observation, Ok(expected));

    let shuffled = run(&[corruption(CorruptionKind::Reorder, 1.0)], &mut rng);
    let mut sorted = shuffled.observation.clone().expect("not faulted");
    assert_ne!(sorted, page(1));
    sorted.sort_unstable();
    assert_eq!(sorted, page(1));

    let untouched = run(&[corruption(CorruptionKind::Drop, 0.0)], &mut rng);
    assert_eq!(untouched.observation, Ok(page(1)));

    let distracted = adapter.realise(&[Perturbation::Distractor], Ok(page(2)), &mut rng);
    let items = distracted.observation.expect("not faulted");
    assert_eq!(items.len(), 11);
    assert_eq!(items.iter().filter(|&&x| x == DISTRACTOR).count(), 1);

    let faulted = adapter.realise(
        &[
            Perturbation::TransientFault { status: 429 },
            corruption(CorruptionKind::Duplicate, 1.0),
        ],
        Ok(page(3)),
        &mut rng,
    );
    assert_eq!(faulted.observation, Err(429));
    assert_eq!(faulted.applied.len(), 1, "nothing to corrupt after a fault");
}

/// An agent that fetches pages until it has `pages` successes, through the wrapper and the
/// adapter; returns the observations it saw and the trace.
fn run_episode(seed: u64, schedule: Schedule, pages: u32) -> (Vec<Result<Vec<u32>, u16>>, String) {
    let adversary = EscalatingAdversary::new(0.1, 0.4, 0.5, Some(0.6), 429).expect("valid");
    let config = WrapperConfig {
        seed,
        schedule,
        quota: None,
    };
    let mut wrapper = AdversarialWrapper::new(config, adversary).expect("valid");
    let mut adapter = VecAdapter;
    let mut seen = Vec::new();
    let mut next_page = 0;
    while wrapper.progress().successes < pages {
        let realised = wrapper
            .step_with(&mut adapter, Ok(page(next_page)))
            .expect("no quota");
        let outcome = if realised.observation.is_ok() {
            next_page += 1;
            StepOutcome::Success
        } else {
            StepOutcome::Fault
        };
        seen.push(realised.observation);
        wrapper.end_step(outcome).expect("open");
    }
    let trace = serde_json::to_string(wrapper.trace()).expect("serialise");
    (seen, trace)
}

#[test]
fn same_seed_same_episode_bit_for_bit() {
    let ramp = Schedule::linear(1.0, 5).expect("valid");
    for seed in [0, 1, 99, u64::MAX] {
        assert_eq!(run_episode(seed, ramp, 6), run_episode(seed, ramp, 6));
    }
}

#[test]
fn different_seeds_give_different_traces() {
    let ramp = Schedule::linear(1.0, 5).expect("valid");
    let traces: Vec<String> = (0..8).map(|s| run_episode(s, ramp, 6).1).collect();
    for i in 0..traces.len() {
        for j in i + 1..traces.len() {
            assert_ne!(traces[i], traces[j], "seeds {i} and {j}");
        }
    }
}

#[test]
fn trace_records_intents_and_realisations() {
    let ramp = Schedule::linear(1.0, 3).expect("valid");
    let mut any_distractor = false;
    for seed in 0..8 {
        let (seen, json) = run_episode(seed, ramp, 6);
        let trace: benchaudit_stress::Trace = serde_json::from_str(&json).expect("deserialise");
        assert_eq!(trace.steps.len(), seen.len());
        for (step, obs) in trace.steps.iter().zip(&seen) {
            assert_eq!(
                step.realised.len(),
                step.intents.len(),
                "every intent realised here"
            );
            assert!(step.outcome.is_some());
            let faulted = step.intents.iter().any(Perturbation::is_fault);
            assert_eq!(faulted, obs.is_err());
            let distractors = step.intents.contains(&Perturbation::Distractor);
            assert_eq!(distractors, !faulted && step.intensity >= 0.6);
            if let Ok(items) = obs {
                assert_eq!(items.contains(&DISTRACTOR), distractors);
            }
            any_distractor |= distractors;
        }
    }
    assert!(
        any_distractor,
        "the ramp crosses the distractor threshold on some seed"
    );
}

fn paper_adversary() -> EscalatingAdversary {
    EscalatingAdversary::new(0.0, 0.3, 0.3, Some(0.7), 429).expect("valid")
}

#[test]
fn matched_arms_have_matching_mean_intensity() {
    let ramp = Schedule::linear(1.0, 5).expect("valid");
    let adversary = paper_adversary();
    let seeds: Vec<u64> = (0..20).collect();
    let level = matched_mean(&ramp, &adversary, 5, &seeds).expect("finishes");

    let arm_mean = |arm: Arm| {
        let schedule = arm.schedule(&ramp, level).expect("valid level");
        let total: f64 = seeds
            .iter()
            .map(|&s| {
                simulate_always_retry(s, &schedule, &adversary, 5)
                    .expect("finishes")
                    .mean_intensity()
                    .expect("non-empty")
            })
            .sum();
        total / seeds.len() as f64
    };
    let escalating = arm_mean(Arm::Escalating);
    let constant = arm_mean(Arm::Constant);
    assert!(
        (escalating - level).abs() < 1e-12,
        "{escalating} vs {level}"
    );
    assert!((constant - level).abs() < 1e-12, "{constant} vs {level}");
    // The matched level sits below the distractor threshold, so only the ramp crosses it.
    assert!(level < 0.7);
    let distracted = |arm: Arm| {
        let schedule = arm.schedule(&ramp, level).expect("valid level");
        seeds.iter().any(|&s| {
            simulate_always_retry(s, &schedule, &adversary, 5)
                .expect("finishes")
                .steps
                .iter()
                .any(|st| st.intents.contains(&Perturbation::Distractor))
        })
    };
    assert!(distracted(Arm::Escalating));
    assert!(!distracted(Arm::Constant));
}

#[test]
fn matched_mean_depends_on_the_seeds_and_the_adversary() {
    let ramp = Schedule::linear(1.0, 5).expect("valid");
    let calm = EscalatingAdversary::new(0.0, 0.0, 0.3, None, 429).expect("valid");
    let seeds: Vec<u64> = (0..20).collect();
    let calm_level = matched_mean(&ramp, &calm, 5, &seeds).expect("finishes");
    let hostile_level = matched_mean(&ramp, &paper_adversary(), 5, &seeds).expect("finishes");
    assert!((calm_level - 0.4).abs() < 1e-12);
    // Faults knock the agent back down the ramp, so the realised mean is lower.
    assert!(hostile_level < calm_level);
    // A single seed's mean is that episode's own mean.
    let one = matched_mean(&ramp, &paper_adversary(), 5, &[42]).expect("finishes");
    let trace = simulate_always_retry(42, &ramp, &paper_adversary(), 5).expect("finishes");
    assert_eq!(Some(one), trace.mean_intensity());
}

/// Drives an always-retry agent under a quota; returns (pages fetched, squeezed?, died?).
fn quota_episode(
    seed: u64,
    schedule: Schedule,
    quota: QuotaConfig,
    pages: u32,
) -> (u32, bool, bool) {
    let config = WrapperConfig {
        seed,
        schedule,
        quota: Some(quota),
    };
    let mut wrapper = AdversarialWrapper::new(config, paper_adversary()).expect("valid");
    while wrapper.progress().successes < pages {
        match wrapper.begin_step() {
            Ok(plan) => {
                let outcome = if plan.faulted() {
                    StepOutcome::Fault
                } else {
                    StepOutcome::Success
                };
                wrapper.end_step(outcome).expect("open");
            }
            Err(StressError::QuotaExhausted { .. }) => break,
            Err(e) => panic!("unexpected {e}"),
        }
    }
    (
        wrapper.progress().successes,
        wrapper.squeezed_at_step().is_some(),
        wrapper.quota_death_at_step().is_some(),
    )
}

#[test]
fn squeeze_hits_only_the_escalating_arm() {
    let ramp = Schedule::linear(1.0, 5).expect("valid");
    let seeds: Vec<u64> = (0..20).collect();
    let level = matched_mean(&ramp, &paper_adversary(), 5, &seeds).expect("finishes");
    let quota = QuotaConfig {
        limit: 8,
        squeeze: Some(Squeeze { at: 0.7, by: 3 }),
    };
    assert_eq!(quota.slack(5), 0);
    let constant = Schedule::constant(level).expect("valid");
    let mut escalating_squeezes = 0;
    for &seed in &seeds {
        let (_, squeezed, _) = quota_episode(seed, ramp, quota, 5);
        escalating_squeezes += u32::from(squeezed);
        let (pages, squeezed, died) = quota_episode(seed, constant, quota, 5);
        assert!(!squeezed, "constant arm squeezed on seed {seed}");
        // 8 requests for 5 pages with no squeeze: only 4+ faults could kill it.
        if !died {
            assert_eq!(pages, 5);
        }
    }
    assert!(escalating_squeezes > 0);
}

#[test]
fn policies_compose_through_references() {
    // A custom policy: latency grows with progress, exercising the trait object path.
    struct Slow;
    impl AdversaryPolicy for Slow {
        fn perturb(&self, i: f64, p: &AgentProgress, _: &mut StepRng) -> Vec<Perturbation> {
            vec![Perturbation::Latency {
                ms: (i * 1000.0) as u32 + p.steps,
            }]
        }
    }
    let policy: &dyn AdversaryPolicy = &Slow;
    let config = WrapperConfig {
        seed: 0,
        schedule: Schedule::Constant(0.5),
        quota: None,
    };
    let mut w = AdversarialWrapper::new(config, policy).expect("valid");
    let plan = w.begin_step().expect("first");
    assert_eq!(plan.intents, vec![Perturbation::Latency { ms: 500 }]);
}
