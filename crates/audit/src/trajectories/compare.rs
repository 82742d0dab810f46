//! The same model under each agent implementation a benchmark ships (`audit --model` on a
//! trajectory target): the scaffold half of the confound measured on the benchmark's own code.
//!
//! The `compare` hook plays one model (an OpenAI-compatible endpoint; the key named by its
//! variable, never written) under each shipped agent implementation on a small seeded slice,
//! the user simulator held fixed, and answers every run's reward with the model requests it
//! made. Here the runs become the paper's A.10 table: the mean per scaffold, the spread across
//! scaffolds, the two-factor η² split (scaffold vs task), and per task the worst case, CVaR and
//! pass^k over the seeds (trials are seeds). A spread above the scorer's resolution fails
//! ownership, as measured scaffold variance does for every target.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::table::Benchmark;
use super::{HookStderr, TrajectoryPlayer, Unit};

/// CVaR's tail over a task's seeds (SPEC §7's default).
pub const CVAR_ALPHA: f64 = benchaudit_stats::DEFAULT_ALPHA;
/// A run passes when its reward is at least this (τ²'s and AgentDojo's rewards are 0 or 1).
pub const PASS: f64 = 1.0;

/// A model endpoint as the hook receives it: never the key, only the variable that holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelEndpoint {
    /// `provider:model`, as given to `--model`.
    pub name: String,
    /// The model name sent in requests.
    pub model: String,
    /// The OpenAI-compatible base URL.
    pub base_url: String,
    /// The environment variable holding the key (`None`: no key is sent).
    pub api_key_env: Option<String>,
}

/// What `--model` asks of a trajectory target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareSettings {
    /// The models, each compared on its own.
    pub models: Vec<ModelEndpoint>,
    /// Units per group (the first by the replay rule).
    pub units: usize,
    /// Trials: one run per seed.
    pub seeds: Vec<u64>,
    /// The benchmark's step limit for each run.
    pub max_steps: u32,
    /// Output tokens per model request.
    pub max_tokens: u64,
}

/// One shipped agent implementation, as the hook describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScaffoldInfo {
    /// Its registry name.
    pub name: String,
    /// Which tasks it applies to, in the benchmark's words.
    pub applies_to: String,
    /// The user simulator it runs with.
    #[serde(default)]
    pub user: Option<String>,
}

/// One run of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareRun {
    /// Group.
    pub group: String,
    /// Unit.
    pub unit: String,
    /// Agent implementation.
    pub scaffold: String,
    /// Seed.
    pub seed: u64,
    /// Whether the implementation applies to the task (the benchmark's own check).
    pub applicable: bool,
    /// The reward (`None`: not applicable, or the model request failed).
    #[serde(default)]
    pub reward: Option<f64>,
    /// How the run ended.
    #[serde(default)]
    pub termination: Option<String>,
    /// Why the run has no reward.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Model requests the run made (each recorded in `compare/<slug>.jsonl`).
    #[serde(default)]
    pub requests: usize,
}

/// A scaffold's row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScaffoldRow {
    /// Name.
    pub name: String,
    /// Which tasks it applies to.
    pub applies_to: String,
    /// Runs with a reward.
    pub scored: usize,
    /// Runs on tasks it does not apply to (listed, never dropped).
    pub not_applicable: usize,
    /// Runs without a reward (the model request failed).
    pub unscored: usize,
    /// Mean reward over its scored runs.
    pub mean: Option<f64>,
}

/// The largest gap between two scaffolds' means.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spread {
    /// max − min of the scaffold means.
    pub value: f64,
    /// The scaffold with the highest mean.
    pub highest: String,
    /// The scaffold with the lowest mean.
    pub lowest: String,
}

/// The two-factor η² split of the scored runs' rewards: scaffold, task (given scaffold), their
/// interaction, and the residual (seeds).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EtaSplit {
    /// Runs in the layout.
    pub n: usize,
    /// Every scaffold × task cell has the same number of runs.
    pub balanced: bool,
    /// η² of the scaffold.
    pub scaffold: f64,
    /// η² of the task given the scaffold.
    pub task: f64,
    /// η² of the interaction.
    pub interaction: f64,
    /// The residual share.
    pub residual: f64,
}

/// Per task and scaffold, over the seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskRow {
    /// Group.
    pub group: String,
    /// Unit.
    pub unit: String,
    /// Scaffold.
    pub scaffold: String,
    /// Its scored seeds' rewards: mean, worst, CVaR at [`CVAR_ALPHA`], pass^k.
    #[serde(flatten)]
    pub trials: benchaudit_stats::Trials,
}

/// One model's comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The model (`provider:model`).
    pub model: String,
    /// Seeds per task (trials).
    pub seeds: usize,
    /// The shipped implementations, in the registry's order.
    pub scaffolds: Vec<ScaffoldRow>,
    /// The user simulator and its model, as the hook discloses them.
    pub user: Value,
    /// The settings the hook ran with.
    pub settings: Value,
    /// The spread across scaffold means (at least two scaffolds scored).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
    /// The η² split, when the rewards vary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eta: Option<EtaSplit>,
    /// Why there is no η² split.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eta_note: Option<String>,
    /// Per task and scaffold.
    pub tasks: Vec<TaskRow>,
    /// Every run.
    pub runs: Vec<CompareRun>,
    /// Every model request and response, per run (written to `compare/<slug>.jsonl`).
    #[serde(skip)]
    pub requests: Vec<Vec<Value>>,
    /// Why the comparison did not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_probed: Option<String>,
}

#[derive(Deserialize)]
struct Answer {
    scaffolds: Vec<ScaffoldInfo>,
    #[serde(default)]
    user: Value,
    #[serde(default)]
    settings: Value,
    runs: Vec<RunAnswer>,
}

#[derive(Deserialize)]
struct RunAnswer {
    #[serde(flatten)]
    run: CompareRun,
    #[serde(default, rename = "requests")]
    recorded: Vec<Value>,
}

impl Comparison {
    /// A comparison that did not run, and why.
    pub fn unprobed(model: &str, why: &str) -> Self {
        Self::not_probed(model, why.to_string())
    }

    fn not_probed(model: &str, why: String) -> Self {
        Self {
            model: model.into(),
            seeds: 0,
            scaffolds: Vec::new(),
            user: Value::Null,
            settings: Value::Null,
            spread: None,
            eta: None,
            eta_note: None,
            tasks: Vec::new(),
            runs: Vec::new(),
            requests: Vec::new(),
            not_probed: Some(why),
        }
    }
}

/// A model whose reward moves across the shipped agent implementations by more than the
/// scorer's resolution fails ownership: the score is the model–scaffold system's (the
/// measured-scaffold-variance rule every target follows). A spread within ε changes nothing.
pub fn feed_ownership(cell: &mut crate::Cell, comparisons: &[Comparison], epsilon: f64) {
    let moved: Vec<String> = comparisons
        .iter()
        .filter_map(|c| {
            let s = c.spread.as_ref().filter(|s| s.value > epsilon)?;
            Some(format!(
                "{}'s mean reward moves by {:.3} across the shipped agent implementations ({} highest, {} lowest; > ε {epsilon})",
                c.model, s.value, s.highest, s.lowest
            ))
        })
        .collect();
    if moved.is_empty() {
        return;
    }
    let measured = format!(
        "measured with --model: {}: the score measures the model–scaffold system",
        moved.join("; ")
    );
    cell.evidence = if cell.status == crate::Status::Fail {
        format!("{measured}; and {}", cell.evidence)
    } else {
        measured
    };
    cell.status = crate::Status::Fail;
}

/// Runs the comparison for every model: `None` when no model was given.
pub fn measure(
    player: &dyn TrajectoryPlayer,
    benchmark: Benchmark,
    probed: &[(String, Vec<Unit>, usize)],
    settings: Option<&CompareSettings>,
    jobs: usize,
    config: &super::TrajectoriesConfig,
) -> Option<(Vec<Comparison>, Vec<HookStderr>)> {
    let settings = settings.filter(|s| !s.models.is_empty())?;
    let units: BTreeMap<&str, Vec<&str>> = probed
        .iter()
        .map(|(g, u, _)| {
            (
                g.as_str(),
                super::seeded_units(g, u, config, settings.units),
            )
        })
        .collect();
    let mut out = Vec::new();
    let mut stderr = Vec::new();
    for model in &settings.models {
        let request = json!({
            "benchmark": benchmark.name(),
            "model": model,
            "units": units,
            "seeds": settings.seeds,
            "max_steps": settings.max_steps,
            "max_tokens": settings.max_tokens,
            "jobs": jobs,
        });
        let c = match player.compare(&request) {
            None => Comparison::not_probed(
                &model.name,
                format!(
                    "the target has no compare hook: {} is not run under its shipped agent implementations",
                    benchmark.name()
                ),
            ),
            Some(Err(f)) => {
                stderr.push(HookStderr {
                    stage: "compare".into(),
                    tail: f.stderr_tail.clone(),
                });
                Comparison::not_probed(&model.name, super::failure_text("compare", &f))
            }
            Some(Ok(v)) => match serde_json::from_value::<Answer>(v) {
                Ok(a) => read(&model.name, settings.seeds.len(), a),
                Err(e) => Comparison::not_probed(
                    &model.name,
                    format!("the compare hook's answer does not fit the protocol: {e}"),
                ),
            },
        };
        out.push(c);
    }
    Some((out, stderr))
}

fn read(model: &str, seeds: usize, a: Answer) -> Comparison {
    let (runs, requests): (Vec<CompareRun>, Vec<Vec<Value>>) = a
        .runs
        .into_iter()
        .map(|r| {
            let mut run = r.run;
            run.reward = run.reward.filter(|x| x.is_finite());
            run.requests = r.recorded.len();
            (run, r.recorded)
        })
        .unzip();
    let scored = |r: &CompareRun| r.applicable && r.reward.is_some();
    let scaffolds: Vec<ScaffoldRow> = a
        .scaffolds
        .iter()
        .map(|s| {
            let mine: Vec<&CompareRun> = runs.iter().filter(|r| r.scaffold == s.name).collect();
            let rewards: Vec<f64> = mine
                .iter()
                .filter(|r| scored(r))
                .filter_map(|r| r.reward)
                .collect();
            ScaffoldRow {
                name: s.name.clone(),
                applies_to: s.applies_to.clone(),
                scored: rewards.len(),
                not_applicable: mine.iter().filter(|r| !r.applicable).count(),
                unscored: mine
                    .iter()
                    .filter(|r| r.applicable && r.reward.is_none())
                    .count(),
                mean: benchaudit_stats::mean(&rewards).ok(),
            }
        })
        .collect();
    let means: Vec<(&str, f64)> = scaffolds
        .iter()
        .filter_map(|s| s.mean.map(|m| (s.name.as_str(), m)))
        .collect();
    let spread = (means.len() >= 2).then(|| {
        let hi = means
            .iter()
            .copied()
            .fold(means[0], |a, b| if b.1 > a.1 { b } else { a });
        let lo = means
            .iter()
            .copied()
            .fold(means[0], |a, b| if b.1 < a.1 { b } else { a });
        Spread {
            value: hi.1 - lo.1,
            highest: hi.0.into(),
            lowest: lo.0.into(),
        }
    });
    let observations: Vec<(String, String, f64)> = runs
        .iter()
        .filter(|r| scored(r))
        .filter_map(|r| {
            Some((
                r.scaffold.clone(),
                format!("{}/{}", r.group, r.unit),
                r.reward?,
            ))
        })
        .collect();
    let (eta, eta_note) = match benchaudit_stats::two_way_eta_squared(&observations) {
        Ok(e) => (
            Some(EtaSplit {
                n: e.n,
                balanced: e.balanced,
                scaffold: e.eta_a,
                task: e.eta_b,
                interaction: e.eta_interaction,
                residual: e.eta_residual,
            }),
            None,
        ),
        Err(e) => (None, Some(format!("no η² split: {e}"))),
    };
    let mut cells: BTreeMap<(&str, &str, &str), Vec<f64>> = BTreeMap::new();
    for r in runs.iter().filter(|r| scored(r)) {
        if let Some(x) = r.reward {
            cells
                .entry((r.group.as_str(), r.unit.as_str(), r.scaffold.as_str()))
                .or_default()
                .push(x);
        }
    }
    let tasks = cells
        .into_iter()
        .filter_map(|((g, u, s), xs)| {
            Some(TaskRow {
                group: g.into(),
                unit: u.into(),
                scaffold: s.into(),
                trials: benchaudit_stats::trials(&xs, PASS, CVAR_ALPHA).ok()?,
            })
        })
        .collect();
    Comparison {
        model: model.into(),
        seeds,
        scaffolds,
        user: a.user,
        settings: a.settings,
        spread,
        eta,
        eta_note,
        tasks,
        runs,
        requests,
        not_probed: None,
    }
}
