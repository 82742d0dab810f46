//! A real model through an answer-scored task's own solver and scorers (`audit --model` on an
//! Inspect target): Inspect epochs as seeds. The key-free battery says whether the scorer
//! checks the answer; these runs say how a model fares on it in its worst trials, not only on
//! average (SPEC §7's worst case, CVaR and pass^k, per sample and pooled).
//!
//! The `run` hook plays the model on the first samples of the audit's seeded sample, one trial
//! per audit seed (the seed set in the model's generate config, so a trial is reproducible
//! where the endpoint honours seeds), and writes each trial's Inspect log. Here the scores
//! become statistics; nothing here changes a cell: a model's score is evidence about the model,
//! not about the scorer. A scorer that asked a model while scoring (model-graded: the grader
//! is a model too) is listed with its runs but left out of the statistics.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{AnswerScorer, ItemScores, PASS_AT};
use crate::external::failure_text;
use crate::trajectories::compare::ModelEndpoint;

/// CVaR's tail over a sample's seeds (SPEC §7's default).
pub const CVAR_ALPHA: f64 = benchaudit_stats::DEFAULT_ALPHA;

/// Samples a model plays when the manifest does not say (`[answers] model_samples`).
pub const DEFAULT_SAMPLES: usize = 4;

/// What `--model` asks of an answer target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelRunSettings {
    /// The models, each run on its own.
    pub models: Vec<ModelEndpoint>,
    /// Samples run: the first of the audit's seeded sample.
    pub samples: usize,
    /// Trials: one per seed.
    pub seeds: Vec<u64>,
    /// Output tokens per model request (`--max-output-tokens`; none: the task's or the
    /// provider's default).
    pub max_tokens: Option<u64>,
    /// Where the hook writes each model's Inspect logs (`<dir>/<model>/seed-<s>/`), and the
    /// name they are recorded under in audit.json (relative to the audit folder).
    #[serde(skip)]
    pub logs: Option<(PathBuf, String)>,
}

/// One trial: one sample under one seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRun {
    /// Sample id.
    pub sample: String,
    /// Seed.
    pub seed: u64,
    /// Scorer → value (none: no score).
    #[serde(default)]
    pub values: BTreeMap<String, Option<f64>>,
    /// Model calls the solver made.
    #[serde(default)]
    pub solver_calls: u32,
    /// Model requests that failed.
    #[serde(default)]
    pub failed_requests: u32,
    /// The completion scored (its start).
    #[serde(default)]
    pub completion: Option<String>,
    /// The sample's error, if the runtime reported one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One sample's trials on one scorer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SampleRow {
    /// Sample id.
    pub sample: String,
    /// Its scored seeds' values: mean, worst, CVaR at [`CVAR_ALPHA`], pass^k.
    #[serde(flatten)]
    pub trials: benchaudit_stats::Trials,
}

/// One scorer over every trial.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScorerRow {
    /// Scorer name.
    pub name: String,
    /// Why its values are not statistics (a model-graded scorer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excluded: Option<String>,
    /// Trials with a value.
    pub scored: usize,
    /// Trials without one.
    pub unscored: usize,
    /// Mean over the scored trials.
    pub mean: Option<f64>,
    /// Mean over samples of each sample's worst trial.
    pub mean_worst: Option<f64>,
    /// CVaR at [`CVAR_ALPHA`] over every scored trial.
    pub cvar: Option<f64>,
    /// pass@k and pass^k pooled over samples, k = 1 … the fewest scored seeds of any sample,
    /// with stratified bootstrap CIs (seeds resampled within each sample).
    pub pass_k: Vec<benchaudit_stats::PooledPassK>,
    /// Per sample.
    pub samples: Vec<SampleRow>,
    /// Why there are no statistics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One model's runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelRuns {
    /// The model (`provider:model`).
    pub model: String,
    /// Seeds (trials), in order.
    pub seeds: Vec<u64>,
    /// The samples run, in the sample rule's order.
    pub samples: Vec<String>,
    /// How many seeds and samples.
    pub seed_count: usize,
    /// Samples run.
    pub sample_count: usize,
    /// What the hook ran (provider, settings), as it states it.
    pub settings: Value,
    /// The Inspect logs written, relative to the audit folder.
    pub logs: Vec<String>,
    /// Model requests over every trial, and how many failed.
    pub requests: u64,
    /// Failed model requests.
    pub failed_requests: u64,
    /// CVaR's tail share.
    pub cvar_alpha: f64,
    /// Per scorer.
    pub scorers: Vec<ScorerRow>,
    /// Every trial.
    pub runs: Vec<ModelRun>,
    /// Why the model did not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_probed: Option<String>,
}

impl ModelRuns {
    /// The folder the Inspect logs are in (`inspect-logs/<task>/<model>`), when any were kept.
    pub fn log_folder(&self) -> Option<&str> {
        let log = self.logs.first()?;
        // Each log is `<folder>/seed-<s>/<file>`.
        Some(log.rsplitn(3, '/').nth(2).unwrap_or(log))
    }

    /// Runs that did not happen, and why.
    pub fn not_probed(model: &str, why: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            seeds: Vec::new(),
            samples: Vec::new(),
            seed_count: 0,
            sample_count: 0,
            settings: Value::Null,
            logs: Vec::new(),
            requests: 0,
            failed_requests: 0,
            cvar_alpha: CVAR_ALPHA,
            scorers: Vec::new(),
            runs: Vec::new(),
            not_probed: Some(why.into()),
        }
    }
}

/// The run hook's request for one model (the task fields are the target's own).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRequest<'a> {
    /// The model (never the key: `api_key_env` names its variable).
    pub model: &'a ModelEndpoint,
    /// Sample ids.
    pub samples: &'a [String],
    /// Seeds.
    pub seeds: &'a [u64],
    /// Output tokens per request.
    pub max_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    settings: Value,
    #[serde(default)]
    model: Value,
    #[serde(default)]
    logs: Vec<String>,
    runs: Vec<RunAnswer>,
}

#[derive(Deserialize)]
struct RunAnswer {
    sample: String,
    seed: u64,
    #[serde(flatten)]
    scores: ItemScores,
    #[serde(default)]
    requests: u32,
    #[serde(default)]
    failed_requests: u32,
}

/// Runs every model on `samples` (ids in the sample rule's order); `refused` is why the task
/// cannot run at all (the key-free audit's refusal: no offline data, a sandbox, no scorer).
pub fn measure(
    runner: &dyn AnswerScorer,
    settings: &ModelRunSettings,
    samples: &[String],
    refused: Option<&str>,
) -> Vec<ModelRuns> {
    let chosen: Vec<String> = samples.iter().take(settings.samples).cloned().collect();
    settings
        .models
        .iter()
        .map(|model| {
            if let Some(why) = refused {
                return ModelRuns::not_probed(&model.name, why);
            }
            if chosen.is_empty() {
                return ModelRuns::not_probed(&model.name, "the task has no sample with a target");
            }
            let request = RunRequest {
                model,
                samples: &chosen,
                seeds: &settings.seeds,
                max_tokens: settings.max_tokens,
            };
            let slug = benchaudit_runs::files::file_safe(&model.name);
            let logs = settings
                .logs
                .as_ref()
                .map(|(dir, name)| (dir.join(&slug), format!("{name}/{slug}")));
            match runner.run_model(&request, logs.as_ref().map(|(d, _)| d.as_path())) {
                None => ModelRuns::not_probed(
                    &model.name,
                    "the target has no run hook: the model is not run through the task",
                ),
                Some(Err(f)) => ModelRuns::not_probed(&model.name, failure_text("run", &f)),
                Some(Ok(v)) => match serde_json::from_value::<Answer>(v) {
                    Ok(a) => read(
                        &model.name,
                        &settings.seeds,
                        &chosen,
                        a,
                        logs.as_ref().map(|(_, n)| n.as_str()),
                    ),
                    Err(e) => ModelRuns::not_probed(
                        &model.name,
                        format!("the run hook's answer does not fit the protocol: {e}"),
                    ),
                },
            }
        })
        .collect()
}

fn read(
    model: &str,
    seeds: &[u64],
    samples: &[String],
    a: Answer,
    logs: Option<&str>,
) -> ModelRuns {
    let mut graded: BTreeMap<String, u32> = BTreeMap::new();
    let mut requests = 0u64;
    let mut failed = 0u64;
    let runs: Vec<ModelRun> = a
        .runs
        .into_iter()
        .filter(|r| samples.contains(&r.sample) && seeds.contains(&r.seed))
        .map(|r| {
            for (span, n) in &r.scores.scorer_calls {
                *graded.entry(span.clone()).or_default() += n;
            }
            requests += u64::from(r.requests);
            failed += u64::from(r.failed_requests);
            ModelRun {
                sample: r.sample,
                seed: r.seed,
                values: (r.scores.scores.iter())
                    .map(|(k, v)| (k.clone(), v.value.filter(|x| x.is_finite())))
                    .collect(),
                solver_calls: r.scores.solver_calls,
                failed_requests: r.failed_requests,
                completion: r.scores.completion,
                error: r.scores.error,
            }
        })
        .collect();
    let mut names: Vec<&String> = runs.iter().flat_map(|r| r.values.keys()).collect();
    names.sort();
    names.dedup();
    let scorers = names
        .into_iter()
        .map(|name| {
            let base = name.split('/').next().unwrap_or(name);
            let excluded = graded.get(base).filter(|n| **n > 0).map(|n| {
                format!("model-graded: the scorer asked a model {n} times, so its values grade the grader as well as the answer")
            });
            scorer_row(name, excluded, samples, seeds, &runs)
        })
        .collect();
    let settings = match a.model {
        Value::Null => a.settings,
        m => {
            let mut s = a.settings;
            if let Value::Object(o) = &mut s {
                o.insert("model".into(), m);
            }
            s
        }
    };
    ModelRuns {
        model: model.into(),
        seeds: seeds.to_vec(),
        samples: samples.to_vec(),
        seed_count: seeds.len(),
        sample_count: samples.len(),
        settings,
        logs: match logs {
            Some(prefix) => a.logs.iter().map(|l| format!("{prefix}/{l}")).collect(),
            None => Vec::new(),
        },
        requests,
        failed_requests: failed,
        cvar_alpha: CVAR_ALPHA,
        scorers,
        runs,
        not_probed: None,
    }
}

fn scorer_row(
    name: &str,
    excluded: Option<String>,
    samples: &[String],
    seeds: &[u64],
    runs: &[ModelRun],
) -> ScorerRow {
    // Each sample's values in seed order.
    let per_sample: Vec<(&String, Vec<f64>)> = samples
        .iter()
        .map(|s| {
            let xs = seeds
                .iter()
                .filter_map(|seed| {
                    runs.iter()
                        .find(|r| &r.sample == s && r.seed == *seed)
                        .and_then(|r| r.values.get(name).copied().flatten())
                })
                .collect();
            (s, xs)
        })
        .collect();
    let all: Vec<f64> = per_sample
        .iter()
        .flat_map(|(_, xs)| xs.iter().copied())
        .collect();
    let scored = all.len();
    let mut row = ScorerRow {
        name: name.into(),
        excluded,
        scored,
        // At most one value per sample and seed.
        unscored: samples.len() * seeds.len() - scored,
        mean: None,
        mean_worst: None,
        cvar: None,
        pass_k: Vec::new(),
        samples: Vec::new(),
        note: None,
    };
    if row.excluded.is_some() {
        return row;
    }
    row.samples = per_sample
        .iter()
        .filter_map(|(s, xs)| {
            Some(SampleRow {
                sample: (*s).clone(),
                trials: benchaudit_stats::trials(xs, PASS_AT, CVAR_ALPHA).ok()?,
            })
        })
        .collect();
    row.mean = benchaudit_stats::mean(&all).ok();
    row.cvar = benchaudit_stats::cvar(&all, CVAR_ALPHA).ok();
    let worsts: Vec<f64> = row.samples.iter().map(|s| s.trials.worst).collect();
    row.mean_worst = benchaudit_stats::mean(&worsts).ok();
    let scored_samples: Vec<Vec<f64>> = per_sample
        .into_iter()
        .map(|(_, xs)| xs)
        .filter(|xs| !xs.is_empty())
        .collect();
    if scored_samples.len() < samples.len() {
        row.note = Some(format!(
            "pass^k pools the {} of {} samples with a scored trial",
            scored_samples.len(),
            samples.len()
        ));
    }
    let config = benchaudit_stats::PassKConfig {
        threshold: PASS_AT,
        ..benchaudit_stats::PassKConfig::default()
    };
    match benchaudit_stats::pass_k_curve(&scored_samples, &config) {
        Ok(curve) => row.pass_k = curve.pooled,
        Err(e) => row.note = Some(format!("no pass^k: {e}")),
    }
    row
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::external::HookFailure;
    use serde_json::json;

    struct Scripted(Option<Value>);

    impl AnswerScorer for Scripted {
        fn describe(&self) -> Result<super::super::Described, HookFailure> {
            Err(HookFailure {
                cause: "not used".into(),
                stderr_tail: String::new(),
            })
        }
        fn score(&self, _: &[super::super::AnswerItem]) -> Result<Vec<ItemScores>, HookFailure> {
            self.describe().map(|_| Vec::new())
        }
        fn run_model(
            &self,
            _: &RunRequest<'_>,
            _: Option<&std::path::Path>,
        ) -> Option<Result<Value, HookFailure>> {
            self.0.clone().map(Ok)
        }
    }

    fn settings(samples: usize, seeds: &[u64]) -> ModelRunSettings {
        ModelRunSettings {
            models: vec![ModelEndpoint {
                name: "scripted:m".into(),
                model: "m".into(),
                base_url: "http://127.0.0.1:1/v1".into(),
                api_key_env: None,
            }],
            samples,
            seeds: seeds.to_vec(),
            max_tokens: None,
            logs: Some((
                PathBuf::from("audit-out/inspect-logs/t"),
                "inspect-logs/t".into(),
            )),
        }
    }

    fn run(sample: &str, seed: u64, scores: Value, grader: u32) -> Value {
        json!({"sample": sample, "seed": seed, "scores": scores, "solver_calls": 1,
               "scorer_calls": if grader > 0 { json!({"graded": grader}) } else { json!({}) },
               "requests": 1 + grader, "failed_requests": 0, "completion": "ANSWER: A"})
    }

    #[test]
    fn trials_become_worst_case_cvar_and_pass_k_per_sample_and_pooled() {
        let v = |x: f64| json!({"value": x, "answer": "A"});
        let answer = json!({
            "settings": {"seeds": [0, 1, 2]}, "logs": ["seed-0/a.eval"],
            "runs": [
                run("q1", 0, json!({"choice": v(1.0), "graded": v(1.0)}), 1),
                run("q1", 1, json!({"choice": v(1.0), "graded": v(0.0)}), 1),
                run("q1", 2, json!({"choice": v(1.0), "graded": v(1.0)}), 1),
                run("q2", 0, json!({"choice": v(1.0), "graded": v(1.0)}), 1),
                run("q2", 1, json!({"choice": v(0.0), "graded": v(1.0)}), 1),
                run("q2", 2, json!({"choice": {"value": null}, "graded": v(1.0)}), 1),
                // Not asked for: ignored.
                run("q9", 0, json!({"choice": v(0.0)}), 0),
            ]
        });
        let samples = ["q1".to_string(), "q2".to_string(), "q3".to_string()];
        let [m] = measure(
            &Scripted(Some(answer)),
            &settings(2, &[0, 1, 2]),
            &samples,
            None,
        )
        .try_into()
        .unwrap();
        assert_eq!(m.not_probed, None);
        assert_eq!(
            m.samples,
            ["q1", "q2"],
            "the first two of the sample rule's order"
        );
        assert_eq!(m.runs.len(), 6);
        assert_eq!(m.requests, 12);
        assert_eq!(m.logs, ["inspect-logs/t/scripted_m/seed-0/a.eval"]);
        assert_eq!(m.log_folder(), Some("inspect-logs/t/scripted_m"));
        let choice = &m.scorers[0];
        assert_eq!(
            (choice.name.as_str(), choice.scored, choice.unscored),
            ("choice", 5, 1)
        );
        assert_eq!(choice.mean, Some(0.8));
        // q1 passes every seed; q2 scores 1, 0 (its third seed unscored).
        assert_eq!(choice.samples[0].trials.pass_hat_k, 1.0);
        assert_eq!(choice.samples[1].trials.seeds, 2);
        assert_eq!(choice.samples[1].trials.worst, 0.0);
        assert_eq!(choice.samples[1].trials.pass_hat_k, 0.0);
        assert_eq!(choice.mean_worst, Some(0.5));
        // pass^k pooled to k = 2 (q2's scored seeds): (1 + 0) / 2; pass^1 = (1 + 1/2) / 2.
        assert_eq!(choice.pass_k.len(), 2);
        assert_eq!(choice.pass_k[1].pass_hat_k.estimate, 0.5);
        assert_eq!(choice.pass_k[0].pass_hat_k.estimate, 0.75);
        // The model-graded scorer is listed, not counted.
        let graded = &m.scorers[1];
        assert!(graded.excluded.as_deref().unwrap().contains("model-graded"));
        assert!(graded.samples.is_empty() && graded.mean.is_none());
    }

    #[test]
    fn refusals_and_missing_hooks_are_not_probed_never_figures() {
        let s = settings(2, &[0]);
        let samples = ["q1".to_string()];
        let refused = measure(&Scripted(None), &s, &samples, Some("a sandbox"));
        assert_eq!(refused[0].not_probed.as_deref(), Some("a sandbox"));
        let no_hook = measure(&Scripted(None), &s, &samples, None);
        assert!(
            no_hook[0]
                .not_probed
                .as_deref()
                .unwrap()
                .contains("no run hook")
        );
        let garbage = measure(&Scripted(Some(json!({"runs": 3}))), &s, &samples, None);
        assert!(
            garbage[0]
                .not_probed
                .as_deref()
                .unwrap()
                .contains("does not fit")
        );
    }
}
