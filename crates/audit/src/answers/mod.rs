//! The answer probe family: criterion sensitivity of an answer-scored benchmark's own scorer
//! (an Inspect task's `match`, `includes`, `pattern`, `choice`, `f1` or task-specific scorer),
//! its ownership of the one decision such a task scores, and replay, with no model call.
//!
//! The audit takes a seeded sample of the task's samples ([`crate::battery::sample`]), finds
//! the answer format the scorer reads ([`forge::Format`]: the target in each format, scored
//! once), forges answers of declared quality in that format ([`forge`]), has the task's own
//! solver and scorers score every one in one batch, scores the same batch again in a second
//! process (replay), and reads each scorer's values against the table with the shared
//! [`crate::battery`] engine. The module does no IO: the benchmark is reached through
//! [`AnswerScorer`], which an external target implements with two batch hooks.
//!
//! Refusals are stage by stage and never verdicts: a task whose data cannot be loaded offline,
//! that runs in a sandbox, or that has no scorer is not probed at all; a scorer that asks a
//! model (model-graded) is not probed, its siblings are; a solver that asks the model more
//! than once per sample (an agent loop or a multi-turn chain) leaves every stage not probed,
//! because a forged answer does not then fix what is scored.
//!
//! Ownership, measured: when the solver asks the model exactly once per sample and the scored
//! completion is the forged text, the model owns the answer, the one decision the task
//! scores; the stage passes when changing only that answer (the target against a wrong
//! answer of the battery) moves the score on some sample, and fails (degenerate) when it
//! never does.
//!
//! ```
//! use benchaudit_audit::answers::forge::{Format, Forgery, Sample, forge};
//! let s = Sample { id: "q1".into(), input: "What is 2+3?".into(), targets: vec!["5".into()], choices: None };
//! assert_eq!(forge(Forgery::Prefixed, Format::AnswerLine, &s, &[]).as_deref(), Some("ANSWER: 15"));
//! ```

pub mod forge;
pub mod model_runs;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::battery::{Quality, Rollup, Scored, Separation, Wording, rollup, separate};
use crate::card::{Card, Cell, Status};
use crate::external::{HookFailure, failure_text};
use crate::target::ScorerKind;
use forge::{AnswerKind, Forgery, Format, Sample};

/// The score at or above which an answer counts as passed (Inspect's `C` is 1).
pub const PASS_AT: f64 = 1.0;

/// The task as the describe hook states it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskInfo {
    /// The task's name.
    pub name: String,
    /// The spec it was loaded from.
    pub spec: String,
    /// The solver chain's steps.
    #[serde(default)]
    pub solver: Vec<String>,
    /// The scorers' names.
    #[serde(default)]
    pub scorers: Vec<String>,
    /// Where the data came from (name, location, samples in all, the local file used).
    #[serde(default)]
    pub dataset: Value,
    /// The task's message limit, if any.
    #[serde(default)]
    pub message_limit: Option<u64>,
}

/// The describe hook's answer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Described {
    /// Versions of the packages the hook ran.
    #[serde(default)]
    pub packages: Value,
    /// The task, when it could be loaded.
    #[serde(default)]
    pub task: Option<TaskInfo>,
    /// Why the task could not be loaded offline (a download it needs).
    #[serde(default)]
    pub refused: Option<String>,
    /// Per stage (`criterion`), why it cannot be probed.
    #[serde(default)]
    pub stages: BTreeMap<String, String>,
    /// Every sample.
    #[serde(default)]
    pub samples: Vec<Sample>,
}

/// One forged answer to score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnswerItem {
    /// Sample id.
    pub id: String,
    /// Forgery name.
    pub forgery: String,
    /// The model output to play.
    pub output: String,
}

/// One scorer's verdict on one item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreValue {
    /// The value as a number (Inspect's `value_to_float`); none: no score.
    #[serde(default)]
    pub value: Option<f64>,
    /// The answer the scorer read out of the output.
    #[serde(default)]
    pub answer: Option<String>,
}

/// What happened to one item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ItemScores {
    /// Scorer name → its verdict.
    #[serde(default)]
    pub scores: BTreeMap<String, ScoreValue>,
    /// Model calls made by the solver.
    #[serde(default)]
    pub solver_calls: u32,
    /// Model calls made inside each scorer.
    #[serde(default)]
    pub scorer_calls: BTreeMap<String, u32>,
    /// The completion the scorer saw.
    #[serde(default)]
    pub completion: Option<String>,
    /// The sample's error, if the runtime reported one.
    #[serde(default)]
    pub error: Option<String>,
    /// The tools the solver offered the model besides the answer's own `submit` tool.
    #[serde(default)]
    pub tools: Vec<String>,
}

/// The benchmark's runtime, reached by whatever IO the implementation needs.
pub trait AnswerScorer {
    /// The task and its samples.
    fn describe(&self) -> Result<Described, HookFailure>;
    /// One result per item, in order.
    fn score(&self, items: &[AnswerItem]) -> Result<Vec<ItemScores>, HookFailure>;
    /// A real model through the task (`audit --model`): the `run` hook's answer, `None` when
    /// the target has none ([`model_runs`]). `log_dir`: where the trials' logs go.
    fn run_model(
        &self,
        request: &model_runs::RunRequest<'_>,
        log_dir: Option<&std::path::Path>,
    ) -> Option<Result<Value, HookFailure>> {
        let _ = (request, log_dir);
        None
    }
}

/// What to probe.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnswersConfig {
    /// Samples probed (seeded sample); `None` = every sample.
    pub sample: Option<usize>,
    /// Sample seed.
    pub seed: u64,
    /// The scorer's resolution ε.
    pub epsilon: f64,
    /// The forgeries to build, by name, when a battery was given as data (`--battery`,
    /// [`crate::proposed`]); the anchor always runs. `None`: every forgery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forgeries: Option<Vec<String>>,
    /// `--model`: the models run through the task, trials being the audit's seeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<model_runs::ModelRunSettings>,
}

/// One forged answer and every scorer's values on it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemRecord {
    /// Sample id.
    pub id: String,
    /// Forgery.
    pub forgery: Forgery,
    /// Declared quality on this sample.
    pub quality: Quality,
    /// The output played.
    pub output: String,
    /// Scorer → value (none: no score).
    pub values: BTreeMap<String, Option<f64>>,
    /// Scorer → the answer it read.
    pub answers: BTreeMap<String, Option<String>>,
    /// The replay's values (none when the replay could not run).
    pub replay: Option<BTreeMap<String, Option<f64>>>,
}

/// The answer format chosen for the anchor, and how each format fared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FormatChoice {
    /// The chosen format.
    pub chosen: Format,
    /// Per format (in [`Format::ALL`] order), the samples on which every scorer probed passed
    /// the target written that way.
    pub passed: Vec<(Format, usize)>,
    /// Samples the calibration scored.
    pub of: usize,
}

/// One scorer's verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScorerResult {
    /// Scorer name (as Inspect keys its scores).
    pub name: String,
    /// Why it is not probed, when it is not.
    pub refused: Option<String>,
    /// Model calls the scorer made (a model-graded scorer's).
    pub grader_calls: u32,
    /// Answers it made them for.
    pub graded_answers: usize,
    /// The separation over the battery.
    #[serde(flatten)]
    pub separation: Separation,
}

/// The ownership measurement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OwnershipMeasure {
    /// Fewest and most model calls the solver made per item.
    pub solver_calls: (u32, u32),
    /// Items whose scored completion is the forged text.
    pub completion_is_forged: usize,
    /// Items the solver was asked for.
    pub items: usize,
    /// Samples where changing only the answer moved the first probed scorer's value.
    pub outcome_moves: usize,
    /// Samples compared.
    pub samples: usize,
    /// The cell.
    pub cell: Cell,
}

/// The replay comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayResult {
    /// Items scored twice.
    pub items: usize,
    /// Items whose values differed.
    pub mismatches: usize,
    /// The cell.
    pub cell: Cell,
}

/// Everything the answer audit found on one task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnswersAudit {
    /// The card's name for the task.
    pub target: String,
    /// The packages that ran it.
    pub packages: Value,
    /// The task.
    pub task: Option<TaskInfo>,
    /// What was probed.
    pub config: AnswersConfig,
    /// How the sample was drawn.
    pub sample_rule: &'static str,
    /// The forgery table.
    pub table: Vec<forge::TableRow>,
    /// Samples the task has.
    pub samples_total: usize,
    /// Samples probed.
    pub samples_probed: usize,
    /// Their ids, in the dataset's order.
    pub probed: Vec<String>,
    /// Probed samples per answer kind (free text, number, multiple choice).
    pub kinds: [usize; 3],
    /// The anchor's format.
    pub format: Option<FormatChoice>,
    /// Per scorer.
    pub scorers: Vec<ScorerResult>,
    /// Over the probed scorers.
    pub criterion: Rollup,
    /// Ownership, measured.
    pub ownership: OwnershipMeasure,
    /// Replay.
    pub replay: ReplayResult,
    /// The battery given as data (`--battery`), when one was: what ran and what it left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub battery: Option<crate::proposed::BatteryRun>,
    /// The card.
    pub card: Card,
    /// Every forged answer with its values.
    pub items: Vec<ItemRecord>,
    /// `--model`: each model through the task's own solver and scorers, trials being seeds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub model_runs: Vec<model_runs::ModelRuns>,
    /// Hook failures and refusals, when a stage could not run.
    pub failures: Vec<String>,
}

/// The sample rule, stated once.
pub const SAMPLE_RULE: &str =
    "the samples with the smallest SHA-256 of \"{seed}:{task}:{id}\", in the dataset's order";

const WORDING: Wording = Wording {
    units: "samples",
    pass_phrase: "scores full marks on",
};

/// Runs the answer audit of one task, then (`--model`) each model through it. Hook failures
/// never become verdicts.
pub fn audit(target: &str, scorer: &dyn AnswerScorer, config: &AnswersConfig) -> AnswersAudit {
    let mut refusal = None;
    let mut out = battery(target, scorer, config, &mut refusal);
    if let Some(settings) = &config.model {
        out.model_runs = model_runs::measure(scorer, settings, &out.probed, refusal.as_deref());
    }
    out
}

/// The key-free battery; `refusal` is set when the task itself cannot run (no offline data,
/// a sandbox, no scorer, no sample), which refuses a model's runs as well.
fn battery(
    target: &str,
    scorer: &dyn AnswerScorer,
    config: &AnswersConfig,
    refusal: &mut Option<String>,
) -> AnswersAudit {
    let mut out = AnswersAudit {
        target: target.into(),
        packages: Value::Null,
        task: None,
        config: config.clone(),
        sample_rule: SAMPLE_RULE,
        table: forge::table(),
        samples_total: 0,
        samples_probed: 0,
        probed: Vec::new(),
        kinds: [0; 3],
        format: None,
        scorers: Vec::new(),
        criterion: rollup(target, &[]),
        ownership: OwnershipMeasure {
            solver_calls: (0, 0),
            completion_is_forged: 0,
            items: 0,
            outcome_moves: 0,
            samples: 0,
            cell: Cell::not_probed("nothing was scored"),
        },
        replay: ReplayResult {
            items: 0,
            mismatches: 0,
            cell: Cell::not_probed("nothing was scored"),
        },
        card: Card::new(
            target.into(),
            ScorerKind::Outcome,
            Cell::not_probed("nothing was scored"),
            Cell::not_probed("nothing was scored"),
            Cell::not_probed("nothing was scored"),
        ),
        battery: None,
        items: Vec::new(),
        model_runs: Vec::new(),
        failures: Vec::new(),
    };
    let refuse = |out: &mut AnswersAudit, why: String| {
        out.failures.push(why.clone());
        out.criterion = rollup(target, &[]);
        out.criterion.criterion = Cell::not_probed(why.clone());
        out.ownership.cell = Cell::not_probed(why.clone());
        out.replay.cell = Cell::not_probed(why.clone());
        out.card = Card::new(
            target.into(),
            ScorerKind::Outcome,
            Cell::not_probed(why.clone()),
            Cell::not_probed(why.clone()),
            Cell::not_probed(why),
        );
    };
    let described = match scorer.describe() {
        Ok(d) => d,
        Err(f) => {
            let why = failure_text("describe", &f);
            *refusal = Some(why.clone());
            refuse(&mut out, why);
            return out;
        }
    };
    out.packages = described.packages.clone();
    out.task = described.task.clone();
    if let Some(why) = &described.refused {
        let why = format!("the task cannot be loaded offline: {why}");
        *refusal = Some(why.clone());
        refuse(&mut out, why);
        return out;
    }
    let spec = described
        .task
        .as_ref()
        .map_or_else(|| target.to_string(), |t| t.spec.clone());
    out.samples_total = described.samples.len();
    let ids: Vec<&str> = described.samples.iter().map(|s| s.id.as_str()).collect();
    let chosen: Vec<&str> = crate::battery::sample(&ids, &spec, config.seed, config.sample);
    let probed: Vec<Sample> = described
        .samples
        .iter()
        .filter(|s| chosen.contains(&s.id.as_str()) && !s.targets.is_empty())
        .cloned()
        .collect();
    out.samples_probed = probed.len();
    out.probed = probed.iter().map(|s| s.id.clone()).collect();
    for s in &probed {
        out.kinds[AnswerKind::ALL
            .iter()
            .position(|k| *k == s.kind())
            .unwrap_or(0)] += 1;
    }
    if let Some(why) = described.stages.get("criterion") {
        *refusal = Some(why.clone());
        refuse(&mut out, why.clone());
        return out;
    }
    if probed.is_empty() {
        let why = "the task has no sample with a target".to_string();
        *refusal = Some(why.clone());
        refuse(&mut out, why);
        return out;
    }
    // 1. The answer format: the target in every format, once.
    let calibration: Vec<AnswerItem> = probed
        .iter()
        .flat_map(|s| {
            Format::ALL.into_iter().map(|f| AnswerItem {
                id: s.id.clone(),
                forgery: f.forgery().name().into(),
                output: f.write(s.targets[0].trim()),
            })
        })
        .collect();
    let calibrated = match scorer
        .score(&calibration)
        .and_then(|v| same_length(v, calibration.len()))
    {
        Ok(v) => v,
        Err(f) => {
            refuse(&mut out, failure_text("score", &f));
            return out;
        }
    };
    let mut refused = refusals(&calibrated);
    let passes = |r: &ItemScores, name: &str| {
        r.scores
            .get(name)
            .and_then(|v| v.value)
            .is_some_and(|v| v >= PASS_AT)
    };
    let at = |i: usize, k: usize| &calibrated[i * Format::ALL.len() + k];
    // A scorer that gives the target itself full marks on no sample in any format has no
    // anchor: the battery cannot be read against it.
    for name in scorer_names(&calibrated) {
        if refused.contains_key(name) {
            continue;
        }
        let credited =
            (0..probed.len()).any(|i| (0..Format::ALL.len()).any(|k| passes(at(i, k), name)));
        if !credited {
            refused.insert(
                name.clone(),
                Refusal {
                    reason: "the scorer gives the target itself full marks on no probed sample in any answer format tried, so the battery has no anchor to read forgeries against (a dependency the scorer needs may be missing)".into(),
                    grader_calls: 0,
                    answers: 0,
                },
            );
        }
    }
    let live: Vec<&String> = scorer_names(&calibrated)
        .into_iter()
        .filter(|n| !refused.contains_key(*n))
        .collect();
    let passed: Vec<(Format, usize)> = Format::ALL
        .into_iter()
        .enumerate()
        .map(|(k, f)| {
            let n = (0..probed.len())
                .filter(|i| !live.is_empty() && live.iter().all(|name| passes(at(*i, k), name)))
                .count();
            (f, n)
        })
        .collect();
    let best = passed.iter().map(|(_, n)| *n).max().unwrap_or(0);
    let chosen_format = passed
        .iter()
        .find(|(_, n)| *n == best)
        .map_or(Format::AnswerLine, |(f, _)| *f);
    out.format = Some(FormatChoice {
        chosen: chosen_format,
        passed,
        of: probed.len(),
    });
    // 2. The battery in that format.
    let mut battery = Vec::new();
    let mut meta = Vec::new();
    for s in &probed {
        let kind = s.kind();
        for forgery in Forgery::ALL {
            let Some(quality) = forge::intended(kind, forgery) else {
                continue;
            };
            if !crate::proposed::runs(config.forgeries.as_deref(), forgery.name(), quality) {
                continue;
            }
            if let Some(output) = forge::forge(forgery, chosen_format, s, &probed) {
                battery.push(AnswerItem {
                    id: s.id.clone(),
                    forgery: forgery.name().into(),
                    output,
                });
                meta.push((forgery, quality));
            }
        }
    }
    let first = match scorer
        .score(&battery)
        .and_then(|v| same_length(v, battery.len()))
    {
        Ok(v) => v,
        Err(f) => {
            refuse(&mut out, failure_text("score", &f));
            return out;
        }
    };
    let second = scorer
        .score(&battery)
        .and_then(|v| same_length(v, battery.len()));
    for (name, why) in refusals(&first) {
        refused.entry(name).or_insert(why);
    }
    for (name, why) in deaf_to_answers(&first) {
        refused.entry(name).or_insert(why);
    }
    let names = scorer_names(&first);
    let values = |r: &ItemScores| -> BTreeMap<String, Option<f64>> {
        names
            .iter()
            .map(|n| ((*n).clone(), r.scores.get(*n).and_then(|v| v.value)))
            .collect()
    };
    out.items = battery
        .iter()
        .zip(&meta)
        .zip(&first)
        .enumerate()
        .map(|(i, ((item, (forgery, quality)), r))| ItemRecord {
            id: item.id.clone(),
            forgery: *forgery,
            quality: *quality,
            output: item.output.clone(),
            values: values(r),
            answers: names
                .iter()
                .map(|n| {
                    (
                        (*n).clone(),
                        r.scores.get(*n).and_then(|v| v.answer.clone()),
                    )
                })
                .collect(),
            replay: second.as_ref().ok().map(|s| values(&s[i])),
        })
        .collect();
    // Per scorer: the separation, or why it is not probed.
    let solver_calls = (
        first.iter().map(|r| r.solver_calls).min().unwrap_or(0),
        first.iter().map(|r| r.solver_calls).max().unwrap_or(0),
    );
    let multi_turn = (solver_calls.1 > 1).then(|| {
        format!(
            "the solver asks the model up to {} times per sample (an agent loop or a multi-turn chain): a forged answer does not fix what is scored",
            solver_calls.1
        )
    });
    let order: Vec<&str> = Forgery::ALL.into_iter().map(Forgery::name).collect();
    for name in &names {
        let refusal = refused.get(*name);
        let why = multi_turn
            .clone()
            .or_else(|| refusal.map(|r| r.reason.clone()));
        let scored: Vec<Scored<'_>> = out
            .items
            .iter()
            .map(|i| Scored {
                unit: &i.id,
                forgery: i.forgery.name(),
                quality: i.quality,
                value: i.values.get(*name).copied().flatten(),
                note: None,
            })
            .collect();
        let mut separation = separate(&scored, &order, config.epsilon, PASS_AT, &WORDING);
        if let Some(why) = &why {
            separation.criterion = Cell::not_probed(why.clone());
        }
        out.scorers.push(ScorerResult {
            name: (*name).clone(),
            refused: why,
            grader_calls: refusal.map_or(0, |r| r.grader_calls),
            graded_answers: refusal.map_or(0, |r| r.answers),
            separation,
        });
    }
    let members: Vec<(&str, &crate::battery::Cells, &Cell)> = out
        .scorers
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                &s.separation.cells,
                &s.separation.criterion,
            )
        })
        .collect();
    out.criterion = rollup(target, &members);
    // One probed scorer: its own verdict, examples included, is the task's.
    let probed: Vec<&ScorerResult> = out.scorers.iter().filter(|s| s.refused.is_none()).collect();
    if let [only] = probed.as_slice() {
        out.criterion.criterion = only.separation.criterion.clone();
    }
    if out.scorers.is_empty() {
        out.criterion.criterion = Cell::not_probed("the runtime returned no score for any item");
    }
    out.ownership = ownership(&out, &first, &battery, solver_calls, multi_turn.as_deref());
    let live: Vec<&String> = out
        .scorers
        .iter()
        .filter(|s| s.refused.is_none())
        .map(|s| &s.name)
        .collect();
    out.replay = if live.is_empty() {
        ReplayResult {
            items: 0,
            mismatches: 0,
            cell: Cell::not_probed("no scorer could be probed, so there is nothing to replay"),
        }
    } else {
        replay(&first, second.as_ref(), &live)
    };
    if let Err(f) = &second {
        out.failures.push(failure_text("score (replay)", f));
    }
    out.failures.extend(
        out.scorers
            .iter()
            .filter_map(|s| s.refused.as_ref().map(|w| format!("{}: {w}", s.name))),
    );
    out.failures.dedup();
    out.card = Card::new(
        target.into(),
        ScorerKind::Outcome,
        out.criterion.criterion.clone(),
        out.ownership.cell.clone(),
        out.replay.cell.clone(),
    );
    out
}

fn same_length(v: Vec<ItemScores>, n: usize) -> Result<Vec<ItemScores>, HookFailure> {
    if v.len() == n {
        Ok(v)
    } else {
        Err(HookFailure {
            cause: format!("answered {} results for {n} answers", v.len()),
            stderr_tail: String::new(),
        })
    }
}

/// Every scorer name the results carry, sorted.
fn scorer_names(results: &[ItemScores]) -> Vec<&String> {
    let mut names: Vec<&String> = results.iter().flat_map(|r| r.scores.keys()).collect();
    names.sort();
    names.dedup();
    names
}

/// Why a scorer is not probed, with the counts its reason states.
#[derive(Debug, Clone, PartialEq)]
struct Refusal {
    reason: String,
    grader_calls: u32,
    answers: usize,
}

/// Scorers that asked a model while scoring: model-graded, so not probed without a key.
fn refusals(results: &[ItemScores]) -> BTreeMap<String, Refusal> {
    let mut calls: BTreeMap<String, (u32, usize)> = BTreeMap::new();
    for r in results {
        for (span, n) in &r.scorer_calls {
            if *n > 0 {
                let e = calls.entry(span.clone()).or_default();
                e.0 += n;
                e.1 += 1;
            }
        }
    }
    let mut out = BTreeMap::new();
    for name in scorer_names(results) {
        // A dict-valued score is keyed `scorer/key`; its calls are the scorer's.
        let base = name.split('/').next().unwrap_or(name);
        if let Some((n, items)) = calls.get(base) {
            out.insert(
                name.clone(),
                Refusal {
                    reason: format!(
                        "model-graded: the scorer asked a model {n} times over {items} answers, so its verdicts need a model and a key"
                    ),
                    grader_calls: *n,
                    answers: *items,
                },
            );
        }
    }
    out
}

/// Scorers that no forged answer moves on a task whose solver hands the model tools: such a
/// scorer reads what the model does with the tools (a call made, a message sent), which an
/// answer forgery never does, so the battery says nothing about it. (Without tools, a score no
/// answer moves is a finding: the scorer accepts anything.)
fn deaf_to_answers(results: &[ItemScores]) -> BTreeMap<String, Refusal> {
    let mut tools: Vec<&str> = results
        .iter()
        .flat_map(|r| r.tools.iter().map(String::as_str))
        .collect();
    tools.sort_unstable();
    tools.dedup();
    let mut out = BTreeMap::new();
    if tools.is_empty() {
        return out;
    }
    for name in scorer_names(results) {
        let mut values = results
            .iter()
            .filter_map(|r| r.scores.get(name).and_then(|v| v.value));
        let Some(first) = values.next() else {
            continue;
        };
        if values.all(|v| v == first) {
            out.insert(
                name.clone(),
                Refusal {
                    reason: format!(
                        "every forged answer (the target, the empty answer and the garbage alike) gets the same score on every sample, and the solver offers the model tools ({}): the scorer reads what the model does with them, which answer forgeries never do",
                        tools.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ")
                    ),
                    grader_calls: 0,
                    answers: 0,
                },
            );
        }
    }
    out
}

fn ownership(
    a: &AnswersAudit,
    results: &[ItemScores],
    battery: &[AnswerItem],
    solver_calls: (u32, u32),
    multi_turn: Option<&str>,
) -> OwnershipMeasure {
    let completion_is_forged = results
        .iter()
        .zip(battery)
        .filter(|(r, i)| r.completion.as_deref() == Some(i.output.as_str()))
        .count();
    let scorer = a.scorers.iter().find(|s| s.refused.is_none());
    let mut measure = OwnershipMeasure {
        solver_calls,
        completion_is_forged,
        items: results.len(),
        outcome_moves: 0,
        samples: 0,
        cell: Cell::not_probed("no scorer could be probed"),
    };
    if let Some(why) = multi_turn {
        measure.cell = Cell::not_probed(format!(
            "{why}; who owns the loop's decisions needs the trajectory probes"
        ));
        return measure;
    }
    let Some(scorer) = scorer else {
        if let Some(s) = a.scorers.first() {
            measure.cell = Cell::not_probed(s.refused.clone().unwrap_or_default());
        }
        return measure;
    };
    let mut samples: Vec<&str> = a.items.iter().map(|i| i.id.as_str()).collect();
    samples.dedup();
    let value = |id: &str, q: Quality| {
        a.items
            .iter()
            .filter(|i| i.id == id && i.quality == q)
            .map(|i| i.values.get(&scorer.name).copied().flatten())
            .collect::<Vec<_>>()
    };
    for id in &samples {
        let anchor = value(id, Quality::Anchor);
        let lower = value(id, Quality::Lower);
        if anchor.is_empty() || lower.is_empty() {
            continue;
        }
        measure.samples += 1;
        if anchor.iter().any(|a| lower.iter().any(|l| l != a)) {
            measure.outcome_moves += 1;
        }
    }
    let rewritten = measure.items - completion_is_forged;
    measure.cell = if solver_calls != (1, 1) {
        Cell::not_probed(format!(
            "the solver asked the model {} to {} times per answer",
            solver_calls.0, solver_calls.1
        ))
    } else if measure.outcome_moves == 0 {
        Cell {
            status: Status::Fail,
            evidence: format!(
                "measured by intervention: the solver asks the model once per sample, but changing only the model's answer moves the {} score on none of {} samples: the decision is degenerate",
                scorer.name, measure.samples
            ),
        }
    } else {
        Cell {
            status: Status::Pass,
            evidence: format!(
                "measured by intervention: the solver asks the model once per sample and the scored completion is the model's own text on {} of {} answers{}; the model owns the answer, the one decision the task scores, and changing only that answer moves the {} score on {} of {} samples",
                completion_is_forged,
                measure.items,
                if rewritten > 0 {
                    " (the rest submitted through the task's submit tool)"
                } else {
                    ""
                },
                scorer.name,
                measure.outcome_moves,
                measure.samples
            ),
        }
    };
    measure
}

fn replay(
    first: &[ItemScores],
    second: Result<&Vec<ItemScores>, &HookFailure>,
    names: &[&String],
) -> ReplayResult {
    match second {
        Ok(s) => {
            let mismatches = first
                .iter()
                .zip(s)
                .filter(|(a, b)| {
                    names.iter().any(|n| {
                        a.scores.get(*n).map(|v| v.value.map(f64::to_bits))
                            != b.scores.get(*n).map(|v| v.value.map(f64::to_bits))
                    })
                })
                .count();
            ReplayResult {
                items: first.len(),
                mismatches,
                cell: if mismatches == 0 {
                    Cell {
                        status: Status::Pass,
                        evidence: format!(
                            "a second process ran the task again on all {} forged answers and every scorer gave the same values",
                            first.len()
                        ),
                    }
                } else {
                    Cell {
                        status: Status::Fail,
                        evidence: format!(
                            "{mismatches} of {} forged answers got different values from a second process",
                            first.len()
                        ),
                    }
                },
            }
        }
        Err(f) => ReplayResult {
            items: 0,
            mismatches: 0,
            cell: Cell::not_probed(failure_text("score (replay)", f)),
        },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::cell::Cell as Counter;

    /// A task runtime whose scorer is a function of (sample, output), counting its calls.
    struct Fake {
        samples: Vec<Sample>,
        scorer: fn(&Sample, &str) -> f64,
        grader_calls: u32,
        solver_calls: u32,
        fail_describe: bool,
        calls: Counter<usize>,
        tools: Vec<String>,
    }

    impl Fake {
        fn new(scorer: fn(&Sample, &str) -> f64) -> Self {
            let samples = (1..=6)
                .map(|i| Sample {
                    id: format!("s{i}"),
                    input: format!("What is {i} times {}?", i + 1),
                    targets: vec![format!("{}", i * (i + 1))],
                    choices: None,
                })
                .collect();
            Fake {
                samples,
                scorer,
                grader_calls: 0,
                solver_calls: 1,
                fail_describe: false,
                calls: Counter::new(0),
                tools: Vec::new(),
            }
        }
    }

    impl AnswerScorer for Fake {
        fn describe(&self) -> Result<Described, HookFailure> {
            if self.fail_describe {
                return Err(HookFailure {
                    cause: "`.venv/bin/python` exited with exit status: 1".into(),
                    stderr_tail: "ModuleNotFoundError: No module named 'inspect_ai'".into(),
                });
            }
            Ok(Described {
                packages: serde_json::json!({"inspect_ai": "test"}),
                task: Some(TaskInfo {
                    name: "fake".into(),
                    spec: "fake".into(),
                    solver: vec!["generate".into()],
                    scorers: vec!["match".into()],
                    dataset: Value::Null,
                    message_limit: None,
                }),
                refused: None,
                stages: BTreeMap::new(),
                samples: self.samples.clone(),
            })
        }

        fn score(&self, items: &[AnswerItem]) -> Result<Vec<ItemScores>, HookFailure> {
            self.calls.set(self.calls.get() + 1);
            Ok(items
                .iter()
                .map(|i| {
                    let s = self.samples.iter().find(|s| s.id == i.id).unwrap();
                    ItemScores {
                        scores: [(
                            "match".to_string(),
                            ScoreValue {
                                value: Some((self.scorer)(s, &i.output)),
                                answer: None,
                            },
                        )]
                        .into(),
                        solver_calls: self.solver_calls,
                        scorer_calls: [("match".to_string(), self.grader_calls)].into(),
                        completion: Some(i.output.clone()),
                        error: None,
                        tools: self.tools.clone(),
                    }
                })
                .collect())
        }
    }

    /// Full marks iff the output is `ANSWER: <target>` exactly: a sound scorer.
    fn exact(s: &Sample, out: &str) -> f64 {
        f64::from(u8::from(out == format!("ANSWER: {}", s.targets[0])))
    }

    /// Full marks iff the last number in the output is the target (Inspect's `match` at the
    /// end): a list of candidates ending with the target passes.
    fn last_number(s: &Sample, out: &str) -> f64 {
        let last = forge::numbers_in(out).pop();
        f64::from(u8::from(last.as_deref() == Some(s.targets[0].as_str())))
    }

    fn config() -> AnswersConfig {
        AnswersConfig {
            sample: Some(5),
            seed: 0,
            epsilon: 0.0,
            forgeries: None,
            model: None,
        }
    }

    #[test]
    fn a_sound_scorer_comes_out_sound_with_measured_ownership_and_replay() {
        let f = Fake::new(exact);
        let a = audit("fake", &f, &config());
        assert_eq!(f.calls.get(), 3, "calibration, battery, replay");
        assert_eq!(a.samples_probed, 5);
        assert_eq!(a.format.as_ref().unwrap().chosen, Format::AnswerLine);
        assert_eq!(
            a.card.criterion_sensitivity.status,
            Status::Pass,
            "{}",
            a.card.criterion_sensitivity.evidence
        );
        assert_eq!(
            a.card.ownership.status,
            Status::Pass,
            "{}",
            a.card.ownership.evidence
        );
        assert_eq!(a.card.replay.status, Status::Pass);
        assert_eq!(a.card.licensed_claim, crate::Claim::ModelCapability);
        let bare = a.scorers[0]
            .separation
            .rates
            .iter()
            .find(|r| r.forgery == "target_as_bare")
            .unwrap();
        assert_eq!(bare.rejected, 5, "the exact scorer grades the format");
    }

    #[test]
    fn a_battery_given_as_data_builds_its_forgeries_and_the_anchor_only() {
        let only = AnswersConfig {
            forgeries: Some(vec!["every_candidate".into()]),
            model: None,
            ..config()
        };
        let a = audit("fake", &Fake::new(last_number), &only);
        let mut built: Vec<&str> = a.items.iter().map(|i| i.forgery.name()).collect();
        built.sort_unstable();
        built.dedup();
        assert_eq!(built, ["every_candidate", "target"]);
        // The hedged list still fails the scorer that reads the last number.
        assert_eq!(a.card.criterion_sensitivity.status, Status::Fail);
    }

    #[test]
    fn a_scorer_reading_the_last_number_passes_a_hedged_list() {
        let a = audit("fake", &Fake::new(last_number), &config());
        assert_eq!(a.card.criterion_sensitivity.status, Status::Fail);
        let hedge = a.scorers[0]
            .separation
            .rates
            .iter()
            .find(|r| r.forgery == "every_candidate")
            .unwrap();
        assert!(hedge.passed > 0, "{hedge:?}");
        assert!(
            a.card
                .criterion_sensitivity
                .evidence
                .contains("every_candidate not separated"),
            "{}",
            a.card.criterion_sensitivity.evidence
        );
        assert_eq!(a.card.licensed_claim, crate::Claim::SelfReportCompliance);
    }

    #[test]
    fn refusals_are_not_probed_never_verdicts() {
        let mut f = Fake::new(exact);
        f.grader_calls = 1;
        let a = audit("fake", &f, &config());
        assert_eq!(a.card.criterion_sensitivity.status, Status::NotProbed);
        assert!(
            a.card
                .criterion_sensitivity
                .evidence
                .contains("model-graded")
        );
        assert_eq!(
            a.scorers[0].grader_calls, 20,
            "one call for each of the 4 formats × 5 samples"
        );
        assert_eq!(a.card.replay.status, Status::NotProbed);

        let mut f = Fake::new(exact);
        f.solver_calls = 3;
        let a = audit("fake", &f, &config());
        assert_eq!(a.card.criterion_sensitivity.status, Status::NotProbed);
        assert_eq!(a.card.ownership.status, Status::NotProbed);
        assert!(a.card.ownership.evidence.contains("up to 3 times"));

        let mut f = Fake::new(exact);
        f.fail_describe = true;
        let a = audit("fake", &f, &config());
        assert_eq!(f.calls.get(), 0);
        for cell in [
            &a.card.criterion_sensitivity,
            &a.card.ownership,
            &a.card.replay,
        ] {
            assert_eq!(cell.status, Status::NotProbed);
            assert!(
                cell.evidence.contains("No module named 'inspect_ai'"),
                "{}",
                cell.evidence
            );
        }

        let a = audit("fake", &Fake::new(|_, _| 0.0), &config());
        assert_eq!(
            a.card.criterion_sensitivity.status,
            Status::NotProbed,
            "no anchor"
        );
        assert!(a.card.criterion_sensitivity.evidence.contains("no anchor"));
    }

    #[test]
    fn a_scorer_deaf_to_the_answer_is_degenerate_ownership() {
        // Full marks for anything: the score never moves with the model's answer.
        let a = audit("fake", &Fake::new(|_, _| 1.0), &config());
        assert_eq!(a.card.criterion_sensitivity.status, Status::Fail);
        assert_eq!(
            a.card.ownership.status,
            Status::Fail,
            "{}",
            a.card.ownership.evidence
        );
        assert!(a.card.ownership.evidence.contains("degenerate"));
    }

    #[test]
    fn a_score_no_answer_moves_is_not_probed_when_the_solver_offers_tools() {
        // The same always-passing scorer, on a task whose solver hands the model tools: the
        // scorer may read the tool calls (an agentic security check passes when no harmful
        // call is made), which no answer forgery makes, so it is not probed, not a finding.
        let mut f = Fake::new(|_, _| 1.0);
        f.tools = vec!["send_message".into(), "resolve_ticket".into()];
        let a = audit("fake", &f, &config());
        assert_eq!(
            a.card.criterion_sensitivity.status,
            Status::NotProbed,
            "{}",
            a.card.criterion_sensitivity.evidence
        );
        assert!(
            a.card
                .criterion_sensitivity
                .evidence
                .contains("`resolve_ticket`, `send_message`"),
            "{}",
            a.card.criterion_sensitivity.evidence
        );
        assert_eq!(a.card.ownership.status, Status::NotProbed);
        // With tools but a scorer that reads the answer, the battery applies as usual.
        let mut f = Fake::new(exact);
        f.tools = vec!["search".into()];
        let a = audit("fake", &f, &config());
        assert_eq!(a.card.criterion_sensitivity.status, Status::Pass);
    }
}
