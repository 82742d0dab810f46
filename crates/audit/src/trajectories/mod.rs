//! The trajectory probe family: an agent benchmark's own evaluator (τ²-bench's
//! `evaluate_simulation`, AgentDojo's task checks) scoring forged runs of declared quality,
//! played through the benchmark's own orchestration with its real environments, no model.
//!
//! For every probed group (a τ² domain, an AgentDojo suite) the audit takes a seeded sample
//! of units (tasks; AgentDojo's task × injection pairs too), asks the target's `play` hook to
//! play each forgery of the [`table`] that can be built for the unit, reads every component
//! of the benchmark's score against the declared quality ([`verdict`], on the shared
//! [`crate::battery`] engine), plays a seeded share of the units again in a second hook
//! process (replay), and measures who owns the harness's decisions by scripted interventions
//! ([`ownership`]). The module does no IO itself: the benchmark is reached through
//! [`TrajectoryPlayer`], which the external target implements with batch hooks.
//!
//! ```
//! use benchaudit_audit::trajectories::table::{Benchmark, Facts, Forgery, quality};
//! use benchaudit_audit::battery::Quality;
//! let reads_only = Facts { actions: 2, ..Facts::default() };
//! let reward = &Benchmark::Tau2.components()[0];
//! // A task that only reads and has nothing to communicate: doing nothing reaches its
//! // outcome, so passing it is no failure of the reward.
//! assert_eq!(quality(Forgery::DoNothing, reward, &reads_only), Some(Quality::Equal));
//! ```

pub mod compare;
pub mod ownership;
pub mod port;
pub mod table;
pub mod verdict;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::card::{Card, Cell, Status};
use crate::external::HookFailure;
use table::{Benchmark, Facts, Forgery, TableRow};
use verdict::GroupResult;

/// One unit of a group as the `units` hook lists it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct Unit {
    /// Unit id (a task id; AgentDojo pairs `user_task_3+injection_task_1`).
    pub id: String,
    /// What the task asks for, as counts the table reads, plus whatever the hook adds
    /// (τ²'s reward basis, NL assertions), kept for the card.
    pub facts: Value,
}

impl Unit {
    /// The counts the table reads (missing counts are 0).
    pub fn facts(&self) -> Facts {
        serde_json::from_value(self.facts.clone()).unwrap_or_default()
    }
}

/// One group as the `units` hook lists it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct Group {
    /// Domain or suite name.
    pub name: String,
    /// Every unit of the group.
    pub units: Vec<Unit>,
}

/// The `units` hook's answer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Catalogue {
    /// The benchmark as the hook describes it (package, version, evaluator).
    pub benchmark: Value,
    /// The requested groups.
    pub groups: Vec<Group>,
}

/// One forged run to play.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlayItem {
    /// Group.
    pub group: String,
    /// Unit id.
    pub unit: String,
    /// Forgery name.
    pub forgery: String,
}

/// What the `play` hook answers for one item.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct Played {
    /// Whether the forgery could be built for the unit.
    pub built: bool,
    /// Why not, when not built.
    #[serde(default)]
    pub reason: Option<String>,
    /// How the run ended (τ²'s termination reason).
    #[serde(default)]
    pub termination: Option<String>,
    /// Each component's score (`null` where the evaluator checked nothing).
    #[serde(default)]
    pub scores: BTreeMap<String, Option<f64>>,
    /// The trajectory as the evaluator saw it.
    #[serde(default)]
    pub trajectory: Value,
    /// The evaluator (or the play) raised: the run is unscored.
    #[serde(default)]
    pub error: Option<String>,
}

/// The benchmark, reached by whatever IO the implementation needs (`Sync`: the intervene hook
/// runs on its own thread beside the plays).
pub trait TrajectoryPlayer: Sync {
    /// The units of the named groups; `jobs` is how many processes the hook may use.
    fn units(&self, groups: &[String], jobs: usize) -> Result<Catalogue, HookFailure>;
    /// One answer per item, in order; `jobs` is how many runs the hook may play at once.
    fn play(&self, items: &[PlayItem], jobs: usize) -> Result<Vec<Played>, HookFailure>;
    /// The harness's decisions under scripted interventions (`None`: no such hook).
    fn intervene(&self, request: &Value) -> Option<Result<Value, HookFailure>>;
    /// One model under each shipped agent implementation (`None`: no such hook).
    fn compare(&self, request: &Value) -> Option<Result<Value, HookFailure>> {
        let _ = request;
        None
    }
    /// The same forged runs scored by a port of the benchmark (`None`: no such hook).
    fn port(&self, request: &Value) -> Option<Result<Value, HookFailure>> {
        let _ = request;
        None
    }
}

/// What to probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoriesConfig {
    /// Which benchmark's table applies.
    pub benchmark: Benchmark,
    /// Groups (domains, suites) to probe.
    pub groups: Vec<String>,
    /// Units per group (seeded sample); `None` = every unit.
    pub sample: Option<usize>,
    /// Sample seed.
    pub seed: u64,
    /// Units per group played again in a second process (seeded among the probed).
    pub replay: usize,
    /// Units per group whose forged runs a port of the benchmark scores too (the first ones by
    /// the replay rule; 0: none).
    #[serde(default)]
    pub port: usize,
    /// `--model`: the models to run under each shipped agent implementation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare: Option<compare::CompareSettings>,
    /// The forgeries played, in table order (the benchmark's whole table unless the manifest
    /// names a subset; gold always).
    pub forgeries: Vec<Forgery>,
    /// Runs the hook may play at once.
    pub jobs: usize,
    /// The scorer's resolution ε.
    pub epsilon: f64,
    /// The scorer kind the manifest declares.
    pub scorer_kind: crate::target::ScorerKind,
}

/// One forged run and what the evaluator made of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRecord {
    /// Group.
    pub group: String,
    /// Unit.
    pub unit: String,
    /// Forgery.
    pub forgery: Forgery,
    /// Built (false: not applicable, with the reason).
    pub built: bool,
    /// Why not built.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How the run ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub termination: Option<String>,
    /// Each component's score as the benchmark reports it.
    pub scores: BTreeMap<String, Option<f64>>,
    /// The evaluator raised.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The second process's run matched (scores, termination, trajectory); none when not
    /// replayed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_match: Option<bool>,
    /// The forged trajectory (messages as the evaluator saw them), written beside audit.json
    /// (`forged/<target>.jsonl`) so another scorer can score the same run.
    #[serde(skip)]
    pub trajectory: Value,
}

/// The replay comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayResult {
    /// Runs played twice.
    pub runs: usize,
    /// Units they belong to.
    pub units: usize,
    /// Runs whose scores, termination or trajectory differed.
    pub mismatches: usize,
    /// Of them, runs whose scores or termination differed (not only the trajectory).
    pub score_mismatches: usize,
    /// The replay's cell.
    pub cell: Cell,
}

/// Everything the trajectory audit of one target found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrajectoriesAudit {
    /// Target name.
    pub target: String,
    /// The benchmark as its hook describes it.
    pub benchmark: Value,
    /// What was probed.
    pub config: TrajectoriesConfig,
    /// How the units were sampled.
    pub sample_rule: &'static str,
    /// The forgery table.
    pub table: Vec<TableRow>,
    /// The components and what each judges.
    pub components: Vec<table::Component>,
    /// Components not probed, and why.
    pub not_probed: Vec<NotProbedComponent>,
    /// What the paper found on the benchmark's predecessor, for comparison.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paper: Option<table::PaperReading>,
    /// Per group.
    pub groups: Vec<GroupResult>,
    /// The benchmark's headline criterion over every group.
    pub rollup: crate::battery::Rollup,
    /// Replay.
    pub replay: ReplayResult,
    /// Ownership measured by intervention.
    pub ownership: ownership::OwnershipResult,
    /// The same runs scored by a port of the benchmark, where the target has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<port::PortFidelity>,
    /// `--model`: each model under the benchmark's shipped agent implementations.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub comparisons: Vec<compare::Comparison>,
    /// The battery given as data (`--battery`), when one was: what ran and what it left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub battery: Option<crate::proposed::BatteryRun>,
    /// One card per group, then the benchmark's.
    pub cards: Vec<Card>,
    /// Every forged run.
    pub runs: Vec<RunRecord>,
    /// Hook failures, when a stage could not run (as the cells state them).
    pub failures: Vec<String>,
    /// The stderr tail of every failed hook.
    pub stderr: Vec<HookStderr>,
}

/// A score component the audit does not probe.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotProbedComponent {
    /// Its name.
    pub name: &'static str,
    /// Why.
    pub why: &'static str,
}

/// The sample rule, stated once (the units of each group, and the replayed units among them).
pub const SAMPLE_RULE: &str = "per group, the units with the smallest SHA-256 of \"{seed}:{group}:{id}\", in the group's order; the replayed units are the first ones by the same rule with seed + 1 among the probed";

/// A failed hook as the card states it: the cause and the last line of its stderr (a Python
/// hook's exception). The whole tail is kept in [`HookStderr`].
pub fn failure_text(stage: &str, f: &HookFailure) -> String {
    let last = f
        .stderr_tail
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty());
    match last {
        None => format!("the {stage} hook failed: {}", f.cause),
        Some(l) => format!("the {stage} hook failed: {}; its stderr ends: {l}", f.cause),
    }
}

/// The tail of a failed hook's stderr, whole.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HookStderr {
    /// The hook (units, play, play (replay), intervene).
    pub stage: String,
    /// The last bytes it wrote to stderr.
    pub tail: String,
}

/// A unit id as cards and verdicts write it: an id that is a bare number (τ²'s airline and
/// retail tasks are `0`, `1`, …) is written `task_N`, so no task id reads as a figure.
pub fn label(id: &str) -> String {
    if id.starts_with(|c: char| c.is_ascii_digit()) {
        format!("task_{id}")
    } else {
        id.to_string()
    }
}

impl TrajectoriesAudit {
    /// The benchmark's card (the last one).
    pub fn benchmark_card(&self) -> Option<&Card> {
        self.cards.last()
    }

    /// Runs of one group, one unit, one forgery.
    pub fn run(&self, group: &str, unit: &str, forgery: Forgery) -> Option<&RunRecord> {
        self.runs
            .iter()
            .find(|r| r.group == group && r.unit == unit && r.forgery == forgery)
    }
}

/// Runs the trajectory audit. Hook failures never become verdicts: the stages that needed the
/// failing hook are "not probed" with the cause and the hook's stderr on the card.
pub fn audit(
    target: &str,
    player: &dyn TrajectoryPlayer,
    config: &TrajectoriesConfig,
) -> TrajectoriesAudit {
    let benchmark = config.benchmark;
    let mut out = TrajectoriesAudit {
        target: target.into(),
        benchmark: Value::Null,
        config: config.clone(),
        sample_rule: SAMPLE_RULE,
        table: table::table(benchmark),
        components: benchmark.components().to_vec(),
        not_probed: benchmark
            .not_probed()
            .iter()
            .map(|(name, why)| NotProbedComponent { name, why })
            .collect(),
        paper: benchmark.paper(),
        groups: Vec::new(),
        rollup: crate::battery::rollup(target, &[]),
        replay: ReplayResult {
            runs: 0,
            units: 0,
            mismatches: 0,
            score_mismatches: 0,
            cell: Cell::not_probed("nothing was played"),
        },
        ownership: ownership::OwnershipResult::not_probed("nothing was played"),
        port: None,
        comparisons: Vec::new(),
        battery: None,
        cards: Vec::new(),
        runs: Vec::new(),
        failures: Vec::new(),
        stderr: Vec::new(),
    };
    let catalogue = match player.units(&config.groups, config.jobs) {
        Ok(c) => c,
        Err(f) => {
            let why = out.fail("units", &f);
            return out.unprobed(&why, config.groups.clone());
        }
    };
    let missing: Vec<&String> = config
        .groups
        .iter()
        .filter(|g| !catalogue.groups.iter().any(|c| &c.name == *g))
        .collect();
    if !missing.is_empty() {
        let why = format!(
            "the units hook left out {}",
            missing
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return out.unprobed(&why, config.groups.clone());
    }
    out.benchmark = catalogue.benchmark.clone();
    // The units of each group, and the items to play.
    let mut probed: Vec<(String, Vec<Unit>, usize)> = Vec::new();
    let mut items = Vec::new();
    let mut runs = Vec::new();
    for name in &config.groups {
        let Some(group) = catalogue.groups.iter().find(|g| &g.name == name) else {
            continue;
        };
        let ids: Vec<&str> = group.units.iter().map(|u| u.id.as_str()).collect();
        let chosen = crate::calls::verdict::sample(&ids, name, config.seed, config.sample);
        let units: Vec<Unit> = group
            .units
            .iter()
            .filter(|u| chosen.contains(&u.id.as_str()))
            .cloned()
            .collect();
        for unit in &units {
            let facts = unit.facts();
            for forgery in config.forgeries.iter().copied() {
                match forgery.applicable(&facts) {
                    Ok(()) => {
                        items.push(PlayItem {
                            group: name.clone(),
                            unit: unit.id.clone(),
                            forgery: forgery.name().into(),
                        });
                        runs.push(None);
                    }
                    Err(why) => runs.push(Some(RunRecord {
                        group: name.clone(),
                        unit: unit.id.clone(),
                        forgery,
                        built: false,
                        reason: Some(why.into()),
                        termination: None,
                        scores: BTreeMap::new(),
                        error: None,
                        replay_match: None,
                        trajectory: Value::Null,
                    })),
                }
            }
        }
        probed.push((name.clone(), units, group.units.len()));
    }
    // The intervene hook needs only the probed groups, so it runs in its own process beside the
    // plays: the audit's wall time is the longer of the two, not their sum.
    // So does `--model`'s comparison, which waits on a model, not on the plays.
    let (played, measured, compared) = std::thread::scope(|s| {
        let measuring = s.spawn(|| ownership::measure(player, benchmark, &probed, config));
        let comparing = s.spawn(|| {
            compare::measure(
                player,
                benchmark,
                &probed,
                config.compare.as_ref(),
                config.jobs,
                config,
            )
        });
        let played = play_and_replay(&mut out, player, config, &probed, &items, runs);
        let measured = measuring.join().unwrap_or_else(|_| {
            ownership::OwnershipResult::not_probed("the intervene stage stopped with a panic")
        });
        let compared = comparing.join().unwrap_or_else(|_| {
            let names = (config.compare.iter()).flat_map(|c| &c.models);
            let why = "the compare stage stopped with a panic";
            Some((
                names
                    .map(|m| compare::Comparison::unprobed(&m.name, why))
                    .collect(),
                Vec::new(),
            ))
        });
        (played, measured, compared)
    });
    if let Some((comparisons, stderr)) = compared {
        for c in &comparisons {
            if let Some(why) = &c.not_probed
                && !stderr.is_empty()
            {
                out.failures.push(why.clone());
            }
        }
        out.stderr.extend(stderr);
        out.comparisons = comparisons;
    }
    let records = match played {
        Ok(records) => records,
        Err(why) => {
            let names = probed.iter().map(|(n, _, _)| n.clone()).collect();
            return out.unprobed(&why, names);
        }
    };
    out.groups = probed
        .iter()
        .map(|(name, units, total)| {
            let mine: Vec<&RunRecord> = records.iter().filter(|r| &r.group == name).collect();
            verdict::group(benchmark, name, units, *total, &mine, config)
        })
        .collect();
    out.ownership = measured;
    compare::feed_ownership(&mut out.ownership.cell, &out.comparisons, config.epsilon);
    if let Some(tail) = out.ownership.hook_stderr.take() {
        out.failures.push(out.ownership.cell.evidence.clone());
        out.stderr.push(HookStderr {
            stage: "intervene".into(),
            tail,
        });
    }
    if let Some((fidelity, stderr)) = port::measure(player, benchmark, &probed, &records, config) {
        if let Some(tail) = stderr {
            out.failures
                .push(fidelity.not_probed.clone().unwrap_or_default());
            out.stderr.push(tail);
        }
        out.port = Some(fidelity);
    }
    out.runs = records;
    (out.rollup, out.cards) = verdict::cards(target, &out);
    out
}

/// Plays every item, then the replay sample again in a second hook process; the records in
/// item order (with `runs`' unplayable slots kept), or why the play stage failed.
fn play_and_replay(
    out: &mut TrajectoriesAudit,
    player: &dyn TrajectoryPlayer,
    config: &TrajectoriesConfig,
    probed: &[(String, Vec<Unit>, usize)],
    items: &[PlayItem],
    runs: Vec<Option<RunRecord>>,
) -> Result<Vec<RunRecord>, String> {
    let first = player
        .play(items, config.jobs)
        .and_then(|v| same_length(v, items.len()));
    let first = match first {
        Ok(v) => v,
        Err(f) => return Err(out.fail("play", &f)),
    };
    let mut answers = first.into_iter();
    let mut records: Vec<RunRecord> = Vec::with_capacity(runs.len());
    let mut item_index = items.iter();
    for slot in runs {
        match slot {
            Some(r) => records.push(r),
            None => {
                let (Some(item), Some(p)) = (item_index.next(), answers.next()) else {
                    continue;
                };
                records.push(record(item, p));
            }
        }
    }
    // Replay: the chosen units' built runs, played again in a second process.
    let replayed: Vec<(usize, PlayItem)> = records
        .iter()
        .enumerate()
        .filter(|(_, r)| r.built)
        .filter(|(_, r)| {
            probed.iter().any(|(g, units, _)| {
                g == &r.group && replay_units(g, units, config).contains(&r.unit.as_str())
            })
        })
        .map(|(i, r)| {
            (
                i,
                PlayItem {
                    group: r.group.clone(),
                    unit: r.unit.clone(),
                    forgery: r.forgery.name().into(),
                },
            )
        })
        .collect();
    out.replay = if replayed.is_empty() {
        ReplayResult {
            runs: 0,
            units: 0,
            mismatches: 0,
            score_mismatches: 0,
            cell: Cell::not_probed("no built run was chosen for replay"),
        }
    } else {
        let batch: Vec<PlayItem> = replayed.iter().map(|(_, i)| i.clone()).collect();
        match player
            .play(&batch, config.jobs)
            .and_then(|v| same_length(v, batch.len()))
        {
            Ok(second) => {
                let mut mismatches = 0;
                let mut score_mismatches = 0;
                let mut example = None;
                for (((i, _), item), p) in replayed.iter().zip(&batch).zip(second) {
                    let again = record(item, p);
                    let r = &mut records[*i];
                    let same_scores = r.built == again.built
                        && r.scores == again.scores
                        && r.termination == again.termination
                        && r.error == again.error;
                    let same = same_scores && r.trajectory == again.trajectory;
                    r.replay_match = Some(same);
                    if !same {
                        mismatches += 1;
                        if !same_scores {
                            score_mismatches += 1;
                        }
                        example.get_or_insert_with(|| {
                            format!(
                                "{} {} {}{}",
                                r.group,
                                label(&r.unit),
                                r.forgery.name(),
                                first_difference(&r.trajectory, &again.trajectory)
                            )
                        });
                    }
                }
                let units: usize = probed
                    .iter()
                    .map(|(g, units, _)| replay_units(g, units, config).len())
                    .sum();
                ReplayResult {
                    runs: replayed.len(),
                    units,
                    mismatches,
                    score_mismatches,
                    cell: if mismatches == 0 {
                        Cell {
                            status: Status::Pass,
                            evidence: format!(
                                "a second hook process played the {} forged runs of {units} units again: the same trajectories, terminations and scores",
                                replayed.len()
                            ),
                        }
                    } else {
                        Cell {
                            status: Status::Fail,
                            evidence: format!(
                                "{mismatches} of {} forged runs differed when a second hook process played them again, {score_mismatches} of them in their score or termination (e.g. {})",
                                replayed.len(),
                                example.unwrap_or_default()
                            ),
                        }
                    },
                }
            }
            Err(f) => {
                let why = out.fail("play (replay)", &f);
                ReplayResult {
                    runs: 0,
                    units: 0,
                    mismatches: 0,
                    score_mismatches: 0,
                    cell: Cell::not_probed(why),
                }
            }
        }
    };
    Ok(records)
}

impl TrajectoriesAudit {
    /// Records a failed hook; the text the cells state.
    fn fail(&mut self, stage: &str, f: &HookFailure) -> String {
        let why = failure_text(stage, f);
        self.failures.push(why.clone());
        self.stderr.push(HookStderr {
            stage: stage.into(),
            tail: f.stderr_tail.clone(),
        });
        why
    }

    /// Every stage not probed for one cause.
    fn unprobed(mut self, why: &str, groups: Vec<String>) -> Self {
        if !self.failures.iter().any(|f| f == why) {
            self.failures.push(why.to_string());
        }
        self.replay.cell = Cell::not_probed(why);
        self.ownership = ownership::OwnershipResult::not_probed(why);
        self.groups = groups
            .iter()
            .map(|g| GroupResult::not_probed(self.config.benchmark, g, why))
            .collect();
        (self.rollup, self.cards) = verdict::cards(&self.target.clone(), &self);
        self
    }
}

/// The replayed units of a group: `replay` of the probed units, seeded with seed + 1.
fn replay_units<'a>(group: &str, units: &'a [Unit], config: &TrajectoriesConfig) -> Vec<&'a str> {
    seeded_units(group, units, config, config.replay)
}

/// The first `n` probed units of a group by the replay rule (seed + 1): the replayed units,
/// and the port's (a prefix of them).
fn seeded_units<'a>(
    group: &str,
    units: &'a [Unit],
    config: &TrajectoriesConfig,
    n: usize,
) -> Vec<&'a str> {
    if n == 0 {
        return Vec::new();
    }
    let ids: Vec<&str> = units.iter().map(|u| u.id.as_str()).collect();
    crate::calls::verdict::sample(&ids, group, config.seed.wrapping_add(1), Some(n))
}

/// Where two trajectories first differ, in words (which message, of which role).
fn first_difference(a: &Value, b: &Value) -> String {
    let (Some(a), Some(b)) = (a.as_array(), b.as_array()) else {
        return String::new();
    };
    if a.len() != b.len() {
        return ": the runs have different numbers of messages".into();
    }
    a.iter()
        .zip(b)
        .find(|(x, y)| x != y)
        .map_or(String::new(), |(x, _)| {
            let role = x.get("role").and_then(Value::as_str).unwrap_or("a");
            format!(": a {role} message differs")
        })
}

fn record(item: &PlayItem, p: Played) -> RunRecord {
    RunRecord {
        group: item.group.clone(),
        unit: item.unit.clone(),
        forgery: Forgery::of(&item.forgery).unwrap_or(Forgery::Gold),
        built: p.built,
        reason: p.reason,
        termination: p.termination,
        scores: p.scores,
        error: p.error,
        replay_match: None,
        trajectory: p.trajectory,
    }
}

fn same_length(v: Vec<Played>, n: usize) -> Result<Vec<Played>, HookFailure> {
    if v.len() == n {
        Ok(v)
    } else {
        Err(HookFailure {
            cause: format!("answered {} results for {n} runs", v.len()),
            stderr_tail: String::new(),
        })
    }
}
