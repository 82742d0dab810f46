//! `benchaudit audit`: the main job. The key-free self-audit of ComtradeBench (as shipped and
//! repaired), plus any external targets: card.md, card.json, audit.json, report.html and the
//! figures; a short summary on stdout; exit 1 when an oracle check or the number guard fails.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use benchaudit_audit::external::{ExternalTarget, ProbeFamily};
use benchaudit_audit::{
    AuditConfig, AuditReport, CallsTargetAudit, ComtradeTarget, Configuration, Resolution,
    audit_comtrade, audit_external, calls,
};
use benchaudit_runs::Shard;
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
    /// comma-separated mix; at most 1 000 seeds.
    #[arg(long, default_value = "0..4")]
    pub seeds: String,
    #[command(flatten)]
    pub jobs: JobsArg,
    /// External target manifests (TOML) to audit as well, comma-separated or repeated; a bare
    /// name such as `bfcl` means `targets/NAME/target.toml` in this folder or a parent.
    #[arg(long = "target", value_delimiter = ',')]
    pub targets: Vec<PathBuf>,
    /// Entries per category for function-call targets (seeded sample); 0 = every entry.
    /// Default: the manifest's `[calls] sample`.
    #[arg(long)]
    pub calls_sample: Option<usize>,
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

/// Most seeds per cell the audit accepts (each seed is one episode of every cell).
const MAX_SEEDS: usize = 1000;

/// Runs the subcommand.
pub fn run(args: &AuditArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    // Before any work: the output folder must be new, empty or an earlier audit's.
    if args.shard.is_none() {
        benchaudit_runs::outdir::claim(&args.out, benchaudit_runs::outdir::DirKind::Audit)
            .map_err(UsageError)?;
    }
    let seeds = crate::select::seeds(&args.seeds)?;
    if seeds.len() > MAX_SEEDS {
        return Err(UsageError(format!(
            "--seeds `{}` holds {} seeds; the audit takes at most {MAX_SEEDS}",
            args.seeds,
            seeds.len()
        ))
        .into());
    }
    let mut config = AuditConfig::key_free(0, args.jobs.get());
    config.seeds = seeds;
    config.players.extend(args.models.players()?);
    let mut model_infra_errors = None;
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
        // Each with its provider exchange, which the replay stage replays.
        let mut recorded = Vec::with_capacity(executed.records.len());
        for r in std::mem::take(&mut executed.records) {
            let log = benchaudit_runs::ledger::recorded_messages(ledger, &r.key)?;
            recorded.push((r, log));
        }
        model_infra_errors = Some(executed);
        config.players = config
            .players
            .into_iter()
            .map(|p| match p.model_config() {
                Some(_) => p.with_recorded(recorded.iter().cloned()),
                None => p,
            })
            .collect();
    }
    let targets = [
        ComtradeTarget::new(Configuration::AsShipped),
        ComtradeTarget::new(Configuration::Repaired),
    ];
    let comtrade =
        audit_comtrade(&config, &targets).map_err(|e| anyhow::anyhow!("audit failed: {e}"))?;
    let mut resolutions: Vec<Resolution> = targets.iter().map(|t| Resolution::of(t)).collect();
    let mut external = Vec::new();
    let mut calls_audits = Vec::new();
    for arg in &args.targets {
        let path = resolve_target(arg)?;
        let target = ExternalTarget::load(&path).map_err(UsageError)?;
        resolutions.push(Resolution::of(&target));
        if target.probes() == ProbeFamily::Calls {
            let config = target.calls_config(args.calls_sample).ok_or_else(|| {
                UsageError(format!(
                    "{}: probes = \"calls\" needs a [calls] table",
                    path.display()
                ))
            })?;
            let slug = path
                .parent()
                .and_then(|p| p.file_name())
                .map_or("calls".into(), |n| n.to_string_lossy().to_lowercase());
            let name = benchaudit_audit::Target::name(&target);
            calls_audits.push(CallsTargetAudit {
                slug,
                audit: calls::audit(&name, &target, &config),
            });
            continue;
        }
        external.push(
            audit_external(&target, 0)
                .map_err(|e| anyhow::anyhow!("auditing {}: {e}", path.display()))?,
        );
    }
    let report = AuditReport {
        suite: *targets[0].suite(),
        comtrade,
        resolutions,
        external,
        calls: calls_audits,
    };
    let written = benchaudit_report::card::write_audit(&report, &args.out)?;

    let summary = benchaudit_report::text::AuditSummary::of(
        &report,
        &written,
        &args.out,
        started.elapsed().as_secs_f64(),
    );
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
    Ok(match (&model_infra_errors, &args.ledger) {
        (Some(executed), Some(ledger)) => incomplete_exit(executed, ledger),
        _ => ExitCode::SUCCESS,
    })
}

/// A manifest path, or a bare target name (`bfcl`) looked up as `targets/NAME/target.toml` in
/// the current folder and its parents.
fn resolve_target(arg: &std::path::Path) -> anyhow::Result<PathBuf> {
    let bare = arg.components().count() == 1 && arg.extension().is_none();
    if !bare || arg.exists() {
        return Ok(arg.to_path_buf());
    }
    let rel = std::path::Path::new("targets")
        .join(arg)
        .join("target.toml");
    let cwd =
        std::env::current_dir().map_err(|e| anyhow::anyhow!("reading the current folder: {e}"))?;
    for dir in cwd.ancestors() {
        let candidate = dir.join(&rel);
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    Err(UsageError(format!(
        "no target `{}`: {} is not in {} or a parent folder",
        arg.display(),
        rel.display(),
        cwd.display()
    ))
    .into())
}
