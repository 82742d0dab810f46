//! `benchaudit audit`: the main job. The key-free self-audit of ComtradeBench (as shipped and
//! repaired), plus any external targets: card.md, card.json, audit.json, report.html and the
//! figures; a short summary on stdout; exit 1 when an oracle check or the number guard fails.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use benchaudit_audit::targets::check_seeds;
use benchaudit_audit::{
    AuditConfig, AuditError, TargetOptions, audit_all, load_targets, resolve_target,
};
use benchaudit_runs::{Player, SeedSet, Shard};
use clap::Args;

use crate::UsageError;
use crate::args::JobsArg;
use crate::commands::run::{ModelArgs, incomplete_exit, run_with_progress, shard_note};
use crate::output::{print, print_json};

/// `benchaudit audit`
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Output directory.
    #[arg(long, default_value = "benchaudit-audit")]
    pub out: PathBuf,
    /// Seeds of every cell: `0..4` (inclusive), `0+5` (five seeds from 0), `0..<5`, `3`, or a
    /// comma-separated mix; at most 1000 seeds.
    #[arg(long, default_value = "0..4", allow_negative_numbers = true)]
    pub seeds: SeedSet,
    #[command(flatten)]
    pub jobs: JobsArg,
    /// External targets to audit as well, comma-separated or repeated: a manifest (TOML); a
    /// bare name such as `bfcl` (`targets/NAME/target.toml` in this folder or a parent); or an
    /// Inspect task, `inspect:inspect_evals/NAME` or `inspect:path/to/tasks.py[@task]`
    /// (docs/targets.md).
    #[arg(long = "target", value_delimiter = ',')]
    pub targets: Vec<String>,
    /// Entries per category for function-call targets (seeded sample); 0 = every entry.
    /// Default: the manifest's `[calls] sample`.
    #[arg(long)]
    pub calls_sample: Option<usize>,
    /// An argument of every Inspect task audited, as Inspect's `-T`: `KEY=VALUE` (the value
    /// read as JSON when it parses, else as a string); repeatable.
    #[arg(long = "task-arg", value_name = "KEY=VALUE", value_parser = parse_task_arg)]
    pub task_args: Vec<(String, serde_json::Value)>,
    /// A local file of dataset records (JSON lines, in the dataset's own record format) that
    /// Inspect tasks whose dataset is on the Hugging Face hub are probed on.
    #[arg(long, value_name = "FILE")]
    pub samples: Option<PathBuf>,
    /// Tasks per domain or suite for agent-benchmark targets (τ², AgentDojo; seeded sample);
    /// 0 = every task. Default: the manifest's `[trajectories] sample`.
    #[arg(long)]
    pub tasks_sample: Option<usize>,
    /// A forgery battery given as data (the `probes.toml` of `benchaudit assist probes`, or
    /// one written in its format): every external target runs its forgeries and its anchor
    /// only, instead of its family's whole battery. A criterion pass on a battery that leaves
    /// out some of the family's forgeries is shown as not probed (docs/assist.md).
    #[arg(long, value_name = "FILE")]
    pub battery: Option<PathBuf>,
    /// Print the summary (cards, oracle checks, number guard, files) as one JSON object on
    /// stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// Record the models' episodes in this run ledger (created, or resumed: what it holds is
    /// read back, not played again). With --shard, a shard's ledger; `benchaudit merge` joins
    /// the shards and this command with the merged --ledger writes the card.
    #[arg(long, value_name = "DIR", requires = "model")]
    pub ledger: Option<PathBuf>,
    /// Play shard I of N of the models' episodes only (0 ≤ I < N ≤ 4096) into --ledger, and
    /// write no card (docs/scale-out.md).
    #[arg(long, value_name = "I/N", requires = "ledger")]
    pub shard: Option<Shard>,
    /// Real models to add beside the rule players (2×2, ownership channels, reliability).
    #[command(flatten)]
    pub models: ModelArgs,
}

/// `KEY=VALUE` for `--task-arg`: the value as JSON when it parses (`0`, `true`, `"x"`), else
/// the text itself.
fn parse_task_arg(s: &str) -> Result<(String, serde_json::Value), String> {
    let (key, value) = s
        .split_once('=')
        .filter(|(k, _)| !k.trim().is_empty())
        .ok_or_else(|| format!("`{s}` is not KEY=VALUE"))?;
    let value = serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::from(value));
    Ok((key.trim().to_string(), value))
}

/// Runs the subcommand.
pub fn run(args: &AuditArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    // Before any work: the output folder must be new, empty or an earlier audit's.
    if args.shard.is_none() {
        benchaudit_runs::outdir::claim(&args.out, benchaudit_runs::outdir::DirKind::Audit)
            .map_err(UsageError)?;
    }
    let mut config = AuditConfig::key_free(0, args.jobs.get());
    config.seeds = args.seeds.0.clone();
    check_seeds(&config.seeds).map_err(|e| UsageError(format!("--seeds: {e}")))?;
    // Every target is read and validated before any episode or model request.
    let cwd = std::env::current_dir()?;
    let refs = (args.targets.iter())
        .map(|t| resolve_target(t, &cwd).map_err(|e| UsageError(e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    let samples_file = match &args.samples {
        Some(p) if !p.is_file() => {
            return Err(UsageError(format!("--samples: no file {}", p.display())).into());
        }
        Some(p) => Some(std::path::absolute(p)?),
        None => None,
    };
    let battery = match &args.battery {
        Some(_) if refs.is_empty() => {
            return Err(UsageError(
                "--battery: name the target to run it on with --target (the ComtradeBench self-audit always runs its whole battery)".into(),
            )
            .into());
        }
        Some(p) => Some(benchaudit_audit::proposed::ProposedBattery::read(p).map_err(UsageError)?),
        None => None,
    };
    let mut options = TargetOptions {
        calls_sample: args.calls_sample,
        tasks_sample: args.tasks_sample,
        task_args: args.task_args.iter().cloned().collect(),
        samples_file,
        battery,
        out_dir: Some(std::path::absolute(&args.out)?),
        ..TargetOptions::default()
    };
    let targets = load_targets(&refs, &options).map_err(|e| UsageError(e.to_string()))?;
    stop_hooks_on_signal();
    config.players.extend(args.models.players()?);
    // A trajectory target runs the same models under its own shipped agent implementations.
    options.models = args.models.endpoints()?;
    options.step_limit = args.models.step_limit;
    options.max_tokens = args.models.max_output_tokens;
    let mut model_run = None;
    if let Some(ledger) = &args.ledger {
        // The models' episodes go through a run ledger: played (or the shard's share of them)
        // and recorded, or read back where recorded; the audit then reads them from there.
        let plan = config.model_plan(&benchaudit_audit::SUITE);
        let mut executed =
            run_with_progress(ledger, plan.config(), &plan, args.jobs.get(), args.shard)?;
        if args.shard.is_some() {
            shard_note(
                args.shard,
                ledger,
                ", then this command without --shard and with --ledger RUN_DIR writes the card (playing nothing)",
            );
            return Ok(incomplete_exit(&executed, ledger));
        }
        let records = std::mem::take(&mut executed.records);
        config.players = Player::answered_from_ledger(config.players, ledger, records)?;
        model_run = Some((executed, ledger));
    }
    let report = match audit_all(&config, &targets, &options) {
        Err(e @ AuditError::Target(_)) => return Err(UsageError(e.to_string()).into()),
        other => other?,
    };
    let written = benchaudit_report::card::write_audit(&report, &args.out)?;
    let elapsed = started.elapsed().as_secs_f64();
    let summary = benchaudit_report::text::AuditSummary::of(&report, &written, &args.out, elapsed);
    if args.json {
        print_json(&summary)?;
    } else {
        print(&summary.text())?;
    }
    if !summary.passed {
        return Ok(ExitCode::from(1));
    }
    // Model episodes that ended in infra_error are in the card as such; the ledger retries
    // them when the same command runs again.
    Ok(model_run.map_or(ExitCode::SUCCESS, |(executed, ledger)| {
        incomplete_exit(&executed, ledger)
    }))
}

/// Hooks run in their own process groups, out of reach of a Ctrl-C or a `kill` aimed at
/// benchaudit: on SIGINT, SIGTERM or SIGHUP the audit kills the hook calls in flight, then
/// exits as the signal would have (128 + its number), so nothing it started keeps running.
fn stop_hooks_on_signal() {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let killed = benchaudit_audit::external::kill_running_hooks();
                eprintln!(
                    "benchaudit: stopped by signal {signal}; {killed} running hook call(s) killed"
                );
                std::process::exit(128 + signal);
            }
        });
    }
}
