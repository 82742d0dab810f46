//! The audit of ComtradeBench (both configurations) and of external targets: the stages of
//! SPEC §8 in order, each producing its evidence, then the cards and the oracle checks. Which
//! tasks and players each stage uses comes from the target's [`Suite`].
//!
//! Why one file over 600 lines: the stages are in their own modules (probes, ownership, joint,
//! replay, interface, solvability, reliability); what stays here is their order and the
//! joins between them (which episodes the pool, the 2×2, the channels and the replay share,
//! which threads run beside which), and splitting that order across files would hide it.

use benchaudit_agents::{Decision, Level, RuleKind};
use benchaudit_comtrade::{TaskSpec, task, tasks};
use benchaudit_runs::{Flow, Plan, Player, SideTask, collect, run_jobs_beside};
use std::sync::OnceLock;

use serde::Serialize;
use serde_json::{Value, json};

use crate::card::{Card, Cell, ClaimScope, ExcludedTask, PlayerVerdict, Status};
use crate::checks::{Check, checks};
use crate::comtrade_target::{ComtradeTarget, Configuration, Suite, decision_name, short_id};
use crate::interface::{self, InterfaceConfound};
use crate::joint::{self, Joint};
use crate::ownership::{self, Channel, MeasuredCell, PlayerChannels};
use crate::probes::{self, ProbeKind, ProbeResult, Sensitivity};
use crate::reliability::{self, PlayerReliability};
use crate::replay::{self, RecordedEpisode, Replay};
use crate::solvability::{self, OracleSolve, ReEmission};
use crate::target::{DeclaredOwnership, Owner, Target};

mod played;
use played::Played;

/// Most worker threads the audit's episode stages use (they are CPU-bound and short).
const MAX_THREADS: usize = 16;

/// How the audit runs.
#[derive(Debug, Clone)]
pub struct AuditConfig {
    /// The seeds of every cell (sorted, without repeats; empty means seed 0).
    pub seeds: Vec<u64>,
    /// Worker threads.
    pub threads: usize,
    /// Who plays the model: the oracle and the stand-ins by default, plus any LLMs.
    pub players: Vec<Player>,
    /// LLM step limit assumed by the solvability stage.
    pub step_limit: u32,
}

impl AuditConfig {
    /// The key-free default: oracle + every stand-in on seeds 0..seeds−1.
    pub fn key_free(seeds: u64, threads: usize) -> Self {
        let mut players = vec![Player::rule(RuleKind::Oracle)];
        players.extend(RuleKind::STAND_INS.iter().map(|k| Player::rule(*k)));
        AuditConfig {
            seeds: (0..seeds).collect(),
            threads,
            players,
            step_limit: 30,
        }
    }

    /// The seeds of every cell: [`seeds`](Self::seeds), or seed 0 when none are given.
    pub fn cell_seeds(&self) -> Vec<u64> {
        if self.seeds.is_empty() {
            vec![0]
        } else {
            self.seeds.clone()
        }
    }

    /// The episode pool every player plays (all levels × the suite's execution tasks × the
    /// seeds): the decision channels, the 2×2 and the reliability spectrum read it.
    pub fn pool_plan(&self, suite: &Suite) -> Plan {
        Plan::new(
            self.players.clone(),
            Level::ALL.to_vec(),
            specs(suite.execution_tasks),
            self.cell_seeds(),
        )
    }

    /// The episodes the audit plays with its LLM players: the pool restricted to them (the
    /// other stages play rule players only, or read the pool). `audit --model --ledger`
    /// records exactly these in a run ledger, shardable like any run, and the audit then
    /// reads them back instead of calling the models again.
    pub fn model_plan(&self, suite: &Suite) -> Plan {
        let mut plan = self.pool_plan(suite);
        plan.players.retain(|p| p.model_config().is_some());
        plan
    }
}

/// Everything the ComtradeBench audit found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComtradeAudit {
    /// Seeds per cell.
    pub seeds: Vec<u64>,
    /// Players.
    pub players: Vec<String>,
    /// Probe battery under each configuration's scorer.
    pub probes: Vec<(Configuration, Vec<ProbeResult>)>,
    /// Criterion sensitivity per configuration and task.
    pub sensitivity: Vec<(Configuration, Vec<Sensitivity>)>,
    /// Measured vs declared ownership.
    pub ownership: Vec<MeasuredCell>,
    /// Non-degeneracy of the decision channels per level and player, each on the player's own
    /// episodes.
    pub channels: Vec<PlayerChannels>,
    /// Per level, each decision's channel over the oracle and the stand-ins built to deviate
    /// on exactly it: the calibration that shows the channel outcome-sensitive (the ownership
    /// cell's input), never a player's non-degeneracy.
    pub calibration: Vec<(String, Vec<Channel>)>,
    /// The tasks the solvability stage finds solvable within the output budget (not
    /// scale-bound): the reliability spectrum pools the execution tasks among them, and a
    /// model-capability claim holds on them.
    pub solvable_tasks: Vec<String>,
    /// The 2×2 (`None` when no player has scored episodes at both L0 and L2).
    pub joint: Option<Joint>,
    /// Replay.
    pub replay: Replay,
    /// Reliability per player and level.
    pub reliability: Vec<PlayerReliability>,
    /// Oracle solvability per task.
    pub oracle: Vec<OracleSolve>,
    /// Re-emission bounds per task.
    pub re_emission: Vec<ReEmission>,
    /// The interface confound (C.6): a literal follower of `retry` under legacy and strict.
    pub interface: InterfaceConfound,
    /// The cards: as shipped, repaired.
    pub cards: Vec<Card>,
    /// Oracle checks.
    pub checks: Vec<Check>,
}

fn specs(ids: &[&str]) -> Vec<&'static TaskSpec> {
    ids.iter().filter_map(|id| task(id)).collect()
}

/// Runs the full ComtradeBench audit of `targets` (its configurations).
///
/// # Errors
/// A probe's truth hook or the solvability stage's tokenizer failed.
pub fn audit_comtrade(
    config: &AuditConfig,
    targets: &[ComtradeTarget],
) -> Result<ComtradeAudit, String> {
    let suite: &Suite = targets
        .first()
        .map_or(&crate::comtrade_target::SUITE, |t| t.suite());
    let seeds: Vec<u64> = config.cell_seeds();
    let threads = config.threads;
    let workers = threads.clamp(1, MAX_THREADS);

    let all: Vec<&'static TaskSpec> = tasks().iter().collect();
    let exec = specs(suite.execution_tasks);
    let replay_seeds: Vec<u64> = seeds[..seeds.len().min(3)].to_vec();
    let replay_plan = replay::plan(
        config
            .players
            .iter()
            .filter(|p| p.model_config().is_none())
            .cloned()
            .collect(),
        &Level::ALL,
        &exec,
        &replay_seeds,
    );
    let replay_jobs = replay_plan.jobs();
    // Every stage plays through `played`, so an episode one stage played (the same rule
    // player, level, task, seed and options) is read, not played again, by the next: the
    // ownership intervention, replay's first run and the oracle's solvability read the pool.
    // Replay's second run is the one that plays them again, on one worker.
    //
    // The serial parts independent of the pool run on the pool's own workers before its
    // episodes: the re-emission bound (the registry's token counts are a table, see
    // `solvability::count_tokens`; another task builds the o200k tokenizer, a 200 000-entry
    // table), replay's second run, and the probe batteries. So at most `workers` threads
    // are busy and a long serial part starts at once. Every result is
    // joined in stage order and errors are reported in the serial order (a failing battery
    // first), so the audit does not depend on the interleaving; `--jobs 1` runs the same
    // parts one after the other.
    let re_emission_out = OnceLock::new();
    let rerun_out = OnceLock::new();
    let battery_out = OnceLock::new();
    let re_emission_stage = || {
        let r = all
            .iter()
            .map(|t| solvability::re_emission(t, config.step_limit))
            .collect::<Result<Vec<_>, _>>();
        let _ = re_emission_out.set(r);
    };
    let rerun = || {
        let _ = rerun_out.set(collect(&replay_jobs, 1));
    };
    // Criterion sensitivity: the forged-submission battery under each configuration's scorer
    // (the configurations share the forged submissions and their ground truth).
    let battery = || {
        let shared: Vec<&dyn crate::target::Target> = targets
            .iter()
            .map(|t| t as &dyn crate::target::Target)
            .collect();
        let _ = battery_out.set(probes::run_batteries(&shared, suite.probe_tasks, 0));
    };
    let side: Vec<SideTask<'_>> = vec![
        Box::new(re_emission_stage),
        Box::new(rerun),
        Box::new(battery),
    ];
    // The pool: every player's episodes (the decision channels, the 2×2, the reliability
    // spectrum, and the first run of replay read it).
    let pool_plan = config.pool_plan(suite);
    let jobs = pool_plan.jobs();
    let mut slots: Vec<Option<benchaudit_agents::EpisodeRecord>> = vec![None; jobs.len()];
    let mut recorded: Vec<(usize, RecordedEpisode)> = Vec::new();
    let pooled: Result<(), std::convert::Infallible> =
        run_jobs_beside(&jobs, workers, side, |i, run| {
            // A model's episodes on the replay seeds keep their provider exchange for replay.
            if let Some(job) = jobs.get(i)
                && let Some(model) = job.player.model_config()
                && replay_seeds.contains(&job.spec.seed)
            {
                recorded.push((
                    i,
                    RecordedEpisode {
                        config: model.clone(),
                        spec: job.spec,
                        record: run.record.clone(),
                        log: run.transcript.messages.clone(),
                    },
                ));
            }
            if let Some(slot) = slots.get_mut(i) {
                *slot = Some(run.record);
            }
            Ok(Flow::Continue)
        });
    match pooled {
        Ok(()) => {}
        Err(never) => match never {},
    }

    let pool: Vec<benchaudit_agents::EpisodeRecord> = slots.into_iter().flatten().collect();
    let mut played = Played::new(workers);
    played.add(&jobs, &pool);
    let mut play = |jobs: &[benchaudit_runs::Job<'_>]| played.play(jobs);
    recorded.sort_by_key(|(i, _)| *i);
    let recorded: Vec<RecordedEpisode> = recorded.into_iter().map(|(_, e)| e).collect();
    let names = pool_plan.player_names();
    let channels = ownership::channels_by_player(&pool, &names);
    let calibration = ownership::calibration(&pool);

    // Ownership by intervention.
    let declared = targets.first().and_then(|t| t.ownership());
    let measured = ownership::measure_with(declared.as_ref(), suite, &seeds, &mut play);

    // The 2×2 joint intervention.
    let joint_task = task(suite.joint_task).ok_or("registry lost the joint task")?;
    // Its episodes are the pool's on the joint task at L0 and L2 when the pool holds that
    // task: the same episodes, so a model is not called twice for them (and the 2×2 reads
    // the very episodes the channels and the spectrum read).
    let joint = if exec.iter().any(|t| t.task_id == joint_task.task_id) {
        let cells: Vec<_> = pool
            .iter()
            .filter(|r| {
                r.key.task_id == joint_task.task_id && matches!(r.key.level, Level::L0 | Level::L2)
            })
            .cloned()
            .collect();
        joint::compute(&cells, &|player, _, _| player.to_string())
    } else {
        joint::run(config.players.clone(), joint_task, &seeds, workers).0
    };

    // The interface confound (C.6 is the joint task, T3): evidence on the card, no lattice
    // input.
    let interface = interface::measure_with(&[joint_task], &seeds, &mut play);
    let interface_cell = interface::cell(&interface);

    // Solvability; reliability by level over the execution tasks solvable within the
    // output budget.
    let (oracle, _) = solvability::oracle_with(&all, &seeds, &mut play);

    let batteries = battery_out
        .into_inner()
        .ok_or("the probe batteries did not run")?;
    let mut probes_all = Vec::new();
    let mut sens_all = Vec::new();
    for (t, result) in targets.iter().zip(batteries) {
        let (p, s) = result?;
        probes_all.push((t.configuration, p));
        sens_all.push((t.configuration, s));
    }

    // Replay: every rule player of the plan on the first seeds, its first run read from the
    // pool and its second played again; every model episode of those seeds replayed from
    // its recorded provider responses.
    let first = play(&replay_jobs);

    let second = rerun_out
        .into_inner()
        .ok_or("replay's second run did not run")?;
    let replay = replay::compare(replay_plan.player_names(), &first, &second, &recorded)?;

    let re_emission = re_emission_out
        .into_inner()
        .ok_or("the re-emission stage did not run")??;

    let scale_bound: Vec<&ReEmission> = re_emission.iter().filter(|r| r.scale_bound).collect();
    let solvable_tasks: Vec<String> = re_emission
        .iter()
        .filter(|r| !r.scale_bound)
        .map(|r| r.task.clone())
        .collect();
    let spectrum_pool: Vec<benchaudit_agents::EpisodeRecord> = pool
        .iter()
        .filter(|r| solvable_tasks.contains(&r.key.task_id))
        .cloned()
        .collect();
    let reliability = reliability::spectrum(&spectrum_pool, &names, threads);

    // Who is judged for non-degeneracy: the oracle (the rule target's player) and every
    // model, never the stand-ins built to deviate.
    let judged: Vec<String> = config
        .players
        .iter()
        .filter(|p| p.name() == RuleKind::Oracle.name() || p.model_config().is_some())
        .map(|p| p.name().to_string())
        .collect();
    let cards = targets
        .iter()
        .map(|t| {
            let p = probes_all
                .iter()
                .find(|(c, _)| *c == t.configuration)
                .map_or(&[][..], |(_, p)| p.as_slice());
            let s = sens_all
                .iter()
                .find(|(c, _)| *c == t.configuration)
                .map_or(&[][..], |(_, s)| s.as_slice());
            let mut card = Card::new(
                t.name(),
                t.declared_scorer_kind(),
                probes::criterion_cell(s, p, t.resolution()),
                ownership::cell(t, &measured, &calibration),
                replay::cell(&replay),
            )
            .with_interface(interface_cell.clone());
            if let Some(d) = t.ownership() {
                let mut levels = vec![Level::L1.to_string()];
                if !levels.contains(&d.scored_level) {
                    levels.push(d.scored_level.clone());
                }
                for level in &levels {
                    for player in &judged {
                        if let Some(c) = channels
                            .iter()
                            .find(|c| &c.level == level && &c.player == player)
                        {
                            card.non_degeneracy.push(PlayerVerdict {
                                level: level.clone(),
                                player: player.clone(),
                                verdict: ownership::player_cell(&d, &measured, c),
                            });
                        }
                    }
                }
            }
            if card.licensed_claim == crate::lattice::Claim::ModelCapability {
                card.claim_scope = Some(ClaimScope {
                    holds_on: solvable_tasks.clone(),
                    excluded: scale_bound
                        .iter()
                        .map(|r| ExcludedTask {
                            task: r.task.clone(),
                            reason: "scale-bound".into(),
                        })
                        .collect(),
                });
            }
            card
        })
        .collect();
    let mut audit = ComtradeAudit {
        seeds,
        players: names,
        probes: probes_all,
        sensitivity: sens_all,
        ownership: measured,
        channels,
        calibration,
        solvable_tasks,
        joint,
        replay,
        reliability,
        oracle,
        re_emission,
        interface,
        cards,
        checks: Vec::new(),
    };

    audit.checks = checks(&audit, suite);
    Ok(audit)
}

impl ComtradeAudit {
    /// The released judge's probe values on the suite's judge-check task, on the judge's
    /// 100-point scale (the figures the checks quote, so the number guard finds them).
    pub fn judge_points(&self, suite: &Suite) -> Value {
        let mut out = serde_json::Map::new();
        if let Some((_, probes)) = self
            .probes
            .iter()
            .find(|(c, _)| *c == Configuration::AsShipped)
        {
            for p in probes.iter().filter(|p| p.task == suite.judge_check.task) {
                if let Some(s) = p.target_score {
                    out.insert(p.kind.name().into(), json!((s * 1000.0).round() / 10.0));
                }
            }
        }
        Value::Object(out)
    }
}

/// The decisions in table order, by name (for reports).
pub fn decision_names() -> Vec<&'static str> {
    Decision::ALL.iter().map(|d| decision_name(*d)).collect()
}

/// An external target's audit: probes and criterion sensitivity (hooks 3+4), declared
/// ownership (hook 1; not measurable without runs), replay not probed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExternalAudit {
    /// Probe results.
    pub probes: Vec<ProbeResult>,
    /// Sensitivity per task and seed.
    pub sensitivity: Vec<Sensitivity>,
    /// Ties and inversions over every task and seed (the count the criterion cell states).
    pub criterion_violations: usize,
    /// Forged submissions scored a second time for replay (0 when the replay could not run).
    pub replayed: usize,
    /// Hook calls that failed in the first round (their first cause is on the card).
    pub hook_failures: usize,
    /// Measured scaffold variance, when the target supplies it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaffold_variance: Option<crate::target::ScaffoldVariance>,
    /// Its spread (max − min), to three decimals as the card states it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaffold_spread: Option<f64>,
    /// The battery given as data (`--battery`), when one was: what ran and what it left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub battery: Option<crate::proposed::BatteryRun>,
    /// The card.
    pub card: Card,
}

/// Audits a target reached only through its hooks. A hook that fails in any way (cannot
/// start, exits non-zero, times out, answers too much or no JSON) makes the stages it serves
/// "not probed" with the cause and its stderr tail; the audit goes on.
///
/// # Errors
/// None today: kept so a stage that cannot be reported at all can still stop the audit.
pub fn audit_external(
    target: &dyn Target,
    seeds: &[u64],
    battery: Option<&crate::proposed::ProposedBattery>,
) -> Result<ExternalAudit, String> {
    let registry = target.registry_hook();
    let kinds: Vec<ProbeKind> = match battery {
        Some(b) => (b.forgeries.iter())
            .filter_map(|f| ProbeKind::from_name(f))
            .collect(),
        None => ProbeKind::ALL.to_vec(),
    };
    // A failing registry, truth or score hook makes criterion sensitivity "not probed" with
    // the cause and the hook's stderr, never a fail: the scorer did not answer, so nothing
    // was measured.
    let (probes, sensitivity, failures) =
        external_batteries(target, registry.as_ref(), seeds, &kinds);
    // Replay: the same (task, seed) batteries built again from a second round of hook calls
    // must give the same ground truth and the same scores, bit for bit.
    let mut replayed = 0;
    let replay = if probes.is_empty() || !failures.is_empty() {
        Cell::not_probed(if probes.is_empty() {
            "nothing was scored: no registry, truth or score hook answered".to_string()
        } else {
            "the first round of hook calls failed (see criterion sensitivity)".to_string()
        })
    } else {
        let (again, _, failed) = external_batteries(target, registry.as_ref(), seeds, &kinds);
        let key = |p: &ProbeResult| {
            (
                p.task.clone(),
                p.seed,
                p.kind,
                p.target_score.map(f64::to_bits),
                p.ground_truth.to_bits(),
            )
        };
        let differ = probes
            .iter()
            .zip(&again)
            .filter(|(a, b)| key(a) != key(b))
            .count()
            + probes.len().abs_diff(again.len());
        replayed = again.len();
        if let Some(f) = failed.first() {
            Cell::not_probed(format!("the replay's hook calls failed: {f}"))
        } else if differ == 0 {
            Cell {
                status: Status::Pass,
                evidence: format!(
                    "a second round of truth and score hook calls reproduced the ground truth and the score of all {} forged submissions bit for bit",
                    probes.len()
                ),
            }
        } else {
            Cell {
                status: Status::Fail,
                evidence: format!(
                    "{differ} of {} forged submissions got another ground truth or score from a second round of hook calls",
                    probes.len()
                ),
            }
        }
    };
    let criterion = match &registry {
        None => Cell::not_probed("no task registry (the `registry` hook)"),
        Some(Err(cause)) => Cell::not_probed(cause.clone()),
        Some(Ok(_)) => {
            if let Some(first) = failures.first() {
                let more = match failures.len() {
                    1 => String::new(),
                    n => format!(" ({n} hook calls failed in all)"),
                };
                Cell::not_probed(format!("{first}{more}"))
            } else if sensitivity.is_empty() {
                Cell::not_probed(
                    "no canonical-truth oracle or no scorer (the `truth` and `score` hooks)",
                )
            } else {
                probes::criterion_cell(&sensitivity, &probes, target.resolution())
            }
        }
    };
    let ownership = external_ownership_cell(target);
    let card = Card::new(
        target.name(),
        target.declared_scorer_kind(),
        criterion,
        ownership,
        replay,
    );
    let battery = battery.map(|b| {
        b.run_against(
            &crate::external::ProbeFamily::Records.forgeries(),
            &[ProbeKind::Correct.name()],
        )
    });
    let card = match &battery {
        Some(run) => run.cap(card),
        None => card,
    };
    let scaffold_variance = target
        .scaffold_variance()
        .and_then(Result::ok)
        .filter(|v| v.validate().is_ok());
    Ok(ExternalAudit {
        criterion_violations: sensitivity.iter().map(|s| s.violations.len()).sum(),
        replayed,
        hook_failures: failures.len(),
        probes,
        sensitivity,
        scaffold_spread: scaffold_variance
            .as_ref()
            .map(|v| (v.spread() * 1000.0).round() / 1000.0),
        scaffold_variance,
        battery,
        card,
    })
}

/// Every registered task's battery on every seed it registers (the audit's seeds where it
/// registers none): the probes, the sensitivity verdicts and the hook failures.
fn external_batteries(
    target: &dyn Target,
    registry: Option<&Result<Vec<crate::target::TargetTask>, String>>,
    seeds: &[u64],
    kinds: &[ProbeKind],
) -> (Vec<ProbeResult>, Vec<Sensitivity>, Vec<String>) {
    let (mut probes, mut sensitivity, mut failures) = (Vec::new(), Vec::new(), Vec::new());
    let Some(Ok(reg)) = registry else {
        return (probes, sensitivity, failures);
    };
    for t in reg {
        let task_seeds = if t.seeds.is_empty() { seeds } else { &t.seeds };
        for &seed in task_seeds {
            match probes::run_battery_of(target, &[t.task_id.as_str()], seed, kinds) {
                Ok((p, s)) => {
                    failures.extend(p.iter().filter_map(|p| {
                        p.error
                            .as_ref()
                            .map(|e| format!("{e} (task `{}`, forgery {})", p.task, p.kind.name()))
                    }));
                    probes.extend(p);
                    sensitivity.extend(s);
                }
                Err(e) => failures.push(e),
            }
        }
    }
    (probes, sensitivity, failures)
}

/// An external target's ownership cell: measured scaffold variance first (a spread above the
/// scorer's resolution is a measured fail: the score is a model–scaffold system's), then the
/// declared map (hook 1). A failing hook is "not probed" with its cause, never a fail.
fn external_ownership_cell(target: &dyn Target) -> Cell {
    let epsilon = target.resolution();
    let variance = match target.scaffold_variance() {
        Some(Err(cause)) => Some(Err(cause)),
        Some(Ok(v)) => Some(v.validate().map(|()| v)),
        None => None,
    };
    if let Some(Ok(v)) = &variance
        && v.spread() > epsilon
    {
        let scores: Vec<String> = v
            .scores
            .iter()
            .map(|(name, s)| format!("{name} {s}"))
            .collect();
        return Cell {
            status: Status::Fail,
            evidence: format!(
                "measured: {} scores {} under its {} native scaffolds (spread {:.3} > ε {epsilon}): the scaffold moves the score, so it measures the model–scaffold system",
                v.model,
                scores.join(", "),
                v.scores.len(),
                v.spread()
            ),
        };
    }
    let declared = match target.ownership_hook() {
        None => {
            return match variance {
                Some(Err(cause)) => Cell::not_probed(cause),
                Some(Ok(v)) => Cell::not_probed(format!(
                    "measured: {} scores within ε {epsilon} under its {} native scaffolds, but no scaffold-ownership map (the `ownership` hook) says which decisions the model owns",
                    v.model,
                    v.scores.len()
                )),
                None => Cell::not_probed("no scaffold-ownership map (the `ownership` hook)"),
            };
        }
        Some(Err(cause)) => return Cell::not_probed(cause),
        Some(Ok(d)) => d,
    };
    let mut cell = declared_ownership_cell(&declared, variance.as_ref());
    // A map a person confirmed from a model's proposal says so on the card.
    if let Some(id) = &declared.confirmed_from {
        cell.evidence.push_str(&format!(
            " (ownership map confirmed from the proposal {id})"
        ));
    }
    cell
}

/// The ownership cell of a declared map (hook 1 or the manifest's `[ownership]` table).
fn declared_ownership_cell(
    declared: &DeclaredOwnership,
    variance: Option<&Result<crate::target::ScaffoldVariance, String>>,
) -> Cell {
    if !declared.measured.is_empty() {
        return measured_ownership_cell(declared);
    }
    let model = declared.model_owned(&declared.scored_level);
    let missing: Vec<&String> = declared
        .claimed
        .iter()
        .filter(|c| !model.contains(c))
        .collect();
    if missing.is_empty() {
        let variance_note = match variance {
            Some(Err(cause)) => format!(" ({cause})"),
            _ => String::new(),
        };
        Cell::not_probed(format!(
            "declared: the model owns every claimed decision at {}, but the ownership hook measured nothing (no `measured` map), so neither the declaration nor non-degeneracy is measured{variance_note}",
            declared.scored_level
        ))
    } else {
        Cell {
            status: Status::Fail,
            evidence: format!(
                "by the target's own declaration the harness owns {} at {}",
                missing
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                declared.scored_level
            ),
        }
    }
}

fn owner_name(o: Owner) -> &'static str {
    match o {
        Owner::Harness => "harness",
        Owner::Model => "model",
    }
}

/// The ownership cell from a measured map: passes iff every claimed decision was measured at
/// the scored level, the model's choice took effect, and it is non-degenerate (two or more
/// choices observed and the outcome moved with them); fails on a harness-owned or degenerate
/// claimed decision; not probed when a claimed decision was not measured. Where the
/// declaration says otherwise, the evidence says so: the measurement decides.
fn measured_ownership_cell(d: &DeclaredOwnership) -> Cell {
    let level = &d.scored_level;
    let mut harness = Vec::new();
    let mut degenerate = Vec::new();
    let mut unmeasured = Vec::new();
    let mut fine = Vec::new();
    let mut contradicted = Vec::new();
    for claimed in &d.claimed {
        let Some(m) = d
            .measured
            .iter()
            .find(|m| &m.level == level && &m.decision == claimed)
        else {
            unmeasured.push(claimed.as_str());
            continue;
        };
        if let Some(declared) = d.owner(level, claimed)
            && declared != m.owner
        {
            contradicted.push(format!(
                "{claimed} declared {}, measured {}",
                owner_name(declared),
                owner_name(m.owner)
            ));
        }
        let mut actions = m.actions.clone();
        actions.sort();
        actions.dedup();
        if m.owner != Owner::Model {
            harness.push(claimed.as_str());
        } else if actions.len() < 2 || !m.outcome_moves {
            degenerate.push(format!(
                "{claimed} ({} choice{} observed, outcome {})",
                actions.len(),
                if actions.len() == 1 { "" } else { "s" },
                if m.outcome_moves {
                    "moves"
                } else {
                    "never moves"
                }
            ));
        } else {
            fine.push(format!("{claimed} ({})", actions.join(" / ")));
        }
    }
    let contradiction = if contradicted.is_empty() {
        String::new()
    } else {
        format!(
            "; the declaration is contradicted: {} (the measurement decides)",
            contradicted.join(", ")
        )
    };
    if !harness.is_empty() || !degenerate.is_empty() {
        let mut parts = Vec::new();
        if !harness.is_empty() {
            parts.push(format!("the harness decides {}", harness.join(", ")));
        }
        if !degenerate.is_empty() {
            parts.push(format!("degenerate: {}", degenerate.join(", ")));
        }
        return Cell {
            status: Status::Fail,
            evidence: format!(
                "measured by intervention at {level}: {}{contradiction}",
                parts.join("; ")
            ),
        };
    }
    if !unmeasured.is_empty() {
        return Cell::not_probed(format!(
            "measured map at {level} leaves out the claimed {}{contradiction}",
            unmeasured.join(", ")
        ));
    }
    Cell {
        status: Status::Pass,
        evidence: format!(
            "measured by intervention at {level}: the model decides every claimed decision, each non-degenerate: {}{contradiction}",
            fine.join(", ")
        ),
    }
}

/// One target's scorer resolution ε, as audit.json lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resolution {
    /// Target name.
    pub target: String,
    /// The smallest reward difference its scorer expresses.
    pub epsilon: f64,
}

impl Resolution {
    /// The resolution of `target`.
    pub fn of(target: &dyn Target) -> Self {
        Resolution {
            target: target.name(),
            epsilon: target.resolution(),
        }
    }
}

/// A whole audit: ComtradeBench and any external targets, with every card.
#[derive(Debug, Clone)]
pub struct AuditReport {
    /// The ComtradeBench audit.
    pub comtrade: ComtradeAudit,
    /// The suite it ran.
    pub suite: Suite,
    /// Scorer resolutions of every target.
    pub resolutions: Vec<Resolution>,
    /// External targets' audits.
    pub external: Vec<ExternalAudit>,
    /// Function-call targets' audits (BFCL), each with the short name its figures are filed
    /// under.
    pub calls: Vec<CallsTargetAudit>,
    /// Answer targets' audits (Inspect tasks), each with the short name its figures are filed
    /// under.
    pub answers: Vec<AnswersTargetAudit>,
    /// Agent benchmarks audited through forged runs (τ², AgentDojo).
    pub trajectories: Vec<TrajectoriesTargetAudit>,
}

/// A trajectory target's audit and the short name its figures and forged runs are filed under
/// (the manifest folder's name, e.g. `tau2`).
#[derive(Debug, Clone, Serialize)]
pub struct TrajectoriesTargetAudit {
    /// Short name (file prefix).
    pub slug: String,
    /// The audit.
    #[serde(flatten)]
    pub audit: crate::trajectories::TrajectoriesAudit,
}

/// An answer target's audit and the short name its figures are filed under (the task's short
/// name, e.g. `gsm8k`).
#[derive(Debug, Clone, Serialize)]
pub struct AnswersTargetAudit {
    /// Short name (figure file prefix).
    pub slug: String,
    /// The audit.
    #[serde(flatten)]
    pub audit: crate::answers::AnswersAudit,
}

/// A function-call target's audit and the short name its figures are filed under (the
/// manifest folder's name, e.g. `bfcl`).
#[derive(Debug, Clone, Serialize)]
pub struct CallsTargetAudit {
    /// Short name (figure file prefix).
    pub slug: String,
    /// The audit.
    #[serde(flatten)]
    pub audit: crate::calls::CallsAudit,
}

impl AuditReport {
    /// The name of every target this audit covered, in card order: ComtradeBench, the
    /// external targets, then the function-call targets. The card's heading is written from
    /// it, so a target added to the report is named there too.
    pub fn targets(&self) -> Vec<String> {
        let mut names = vec![crate::comtrade_target::NAME.to_string()];
        names.extend(self.external.iter().map(|e| e.card.target.clone()));
        names.extend(self.calls.iter().map(|c| c.audit.target.clone()));
        names
    }

    /// Every card: ComtradeBench's configurations, the external targets, then the groups of
    /// every function-call target.
    pub fn cards(&self) -> Vec<Card> {
        let mut cards = self.comtrade.cards.clone();
        cards.extend(self.external.iter().map(|e| e.card.clone()));
        for c in &self.calls {
            cards.extend(c.audit.group_cards().iter().cloned());
        }
        cards.extend(self.answers.iter().map(|a| a.audit.card.clone()));
        for t in &self.trajectories {
            cards.extend(t.audit.benchmark_card().cloned());
        }
        cards
    }

    /// `audit.json`: everything the audit found, the single source of every number the card
    /// and the report state.
    pub fn document(&self) -> Value {
        let mut doc = json!({
            "tool": "benchaudit",
            "version": env!("CARGO_PKG_VERSION"),
            "comtrade": self.comtrade,
            "resolutions": self.resolutions,
            "external": self.external,
            "calls": self.calls,
            "answers": self.answers,
            "trajectories": self.trajectories,
            "cards": self.cards(),
        });
        let key = format!(
            "judge_points_{}",
            short_id(self.suite.judge_check.task).to_lowercase()
        );
        doc[key] = self.comtrade.judge_points(&self.suite);
        // The criterion cell's "N tie or inversion" counts over every task: stated here so the
        // number guard finds the figure as the value it is, not by chance elsewhere.
        let violations: serde_json::Map<String, Value> = self
            .comtrade
            .sensitivity
            .iter()
            .map(|(c, s)| {
                let name = serde_json::to_value(c)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_else(|| format!("{c:?}"));
                (
                    name,
                    json!(s.iter().map(|s| s.violations.len()).sum::<usize>()),
                )
            })
            .collect();
        doc["criterion_violations"] = Value::Object(violations);
        doc
    }
}
