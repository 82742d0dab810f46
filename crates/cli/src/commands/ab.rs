//! `benchaudit ab`: a stress design of SPEC §5 (matched-mean A/B, quota and squeeze with a
//! slack sweep, constant-dose degradation) run into a ledger, paired by seed, and tested; under
//! `--prereg`, held to a frozen pre-registration. Δ = constant − escalating.

use std::path::PathBuf;
use std::process::ExitCode;

use benchaudit_agents::{Level, RuleKind};
use benchaudit_comtrade::{EpisodeOptions, TaskSpec, find_task};
use benchaudit_runs::prereg;
use benchaudit_runs::{AnalysisSettings, Design, Metric, Player, SeedSet, conclude, write_atomic};
use clap::Args;

use crate::args::{DesignArg, InterfaceArg, JobsArg, MetricArg, SubmissionArg, ToolTextArg};
use crate::commands::run::{incomplete_exit, run_with_progress, shard_note};
use crate::output::{print, print_json};

/// `benchaudit ab`
#[derive(Debug, Args)]
pub struct AbArgs {
    /// Rule policies, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    pub policy: Vec<RuleKind>,
    /// Scaffolding level: L1 = the model decides retry or skip on faults (the harness does the
    /// rest), L2 = the model owns every decision and drives the tools itself.
    #[arg(long, default_value = "L1")]
    pub level: Level,
    /// Design.
    #[arg(long, value_enum, default_value = "matched-mean")]
    pub design: DesignArg,
    /// Request quota: requests allowed per episode, enforced by the stress engine (quota
    /// design; optional for degradation) (1..=100000).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub quota: Option<u32>,
    /// Requests removed by the squeeze (quota design) (0..=10000).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=10_000))]
    pub squeeze: u32,
    /// Post-squeeze slacks to sweep (quota = pages + squeeze + slack), e.g. 0,1,2,4; each
    /// (0..=10000).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(0..=10_000))]
    pub slack_sweep: Vec<u32>,
    /// Substrate task.
    #[arg(long, default_value = "T9_clean_ab", value_parser = find_task)]
    pub task: &'static TaskSpec,
    /// Seeds (pairs share a seed): `0..19` (inclusive), `0+20`, `0..<20`, `3`, or a
    /// comma-separated mix.
    #[arg(long, default_value = "0..19", allow_negative_numbers = true)]
    pub seeds: SeedSet,
    /// The declared calibration seeds: the constant arm's level is the escalating arm's
    /// realised mean over these (always-retry simulation), whatever --seeds is.
    #[arg(long, default_value = benchaudit_runs::DEFAULT_CALIBRATION, allow_negative_numbers = true)]
    pub calibration_seeds: SeedSet,
    /// Outcome metric: f1 (ground-truth F1), judge (the legacy judge on 0–1), coverage (L1
    /// coverage) or reward (the episode's reward) [default: coverage at L0/L1, f1 at L2].
    #[arg(long, value_enum)]
    pub metric: Option<MetricArg>,
    /// Run directory.
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub jobs: JobsArg,
    /// Seed of the bootstrap and permutation streams.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = benchaudit_runs::parse_seed)]
    pub stats_seed: u64,
    /// Bootstrap replicates B.
    #[arg(long, default_value_t = benchaudit_runs::DEFAULT_RESAMPLES, value_parser = benchaudit_report::compute::parse_resamples)]
    pub resamples: usize,
    /// A frozen pre-registration (`benchaudit prereg freeze`) whose decision rule to apply.
    #[arg(long)]
    pub prereg: Option<PathBuf>,
    /// Argument-error envelope.
    #[arg(long, value_enum, default_value = "legacy")]
    pub interface: InterfaceArg,
    /// Submission protocol.
    #[arg(long, value_enum, default_value = "full")]
    pub submission: SubmissionArg,
    /// The tool wording models would be shown (`clarified`: page base stated; `ambiguous`: not).
    /// Rule policies read no text; it is recorded in the manifest and compared with a frozen
    /// pre-registration's `design.tool_text`.
    #[arg(long, value_enum, default_value = "clarified")]
    pub tool_text: ToolTextArg,
    /// Print the analysis (what ab.json holds) as one JSON object on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Run shard I of N of the design's episodes only (0 ≤ I < N ≤ 4096), without the
    /// analysis: `benchaudit merge` joins the shards, and this command without --shard on the
    /// merged --out runs nothing and analyses (docs/scale-out.md).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<benchaudit_runs::Shard>,
}

/// Runs the subcommand.
pub fn run(args: &AbArgs) -> anyhow::Result<ExitCode> {
    let level = args.level;
    let design = Design {
        kind: args.design.into(),
        task: args.task,
        level,
        seeds: args.seeds.0.clone(),
        calibration: args.calibration_seeds.0.clone(),
        quota: args.quota,
        squeeze: args.squeeze,
        slack_sweep: args.slack_sweep.clone(),
        episode: EpisodeOptions {
            interface: args.interface.into(),
            submission: args.submission.into(),
            max_requests: None,
        },
    };
    design.validate()?;
    let players: Vec<Player> = args.policy.iter().copied().map(Player::rule).collect();
    let metric = args
        .metric
        .map_or(Metric::default_for_levels(&[level]), Metric::from);
    design.check_metric(metric)?;
    let frozen = args
        .prereg
        .as_deref()
        .map(prereg::load_frozen)
        .transpose()?;
    let arms = design.arms()?;
    let plan = design
        .plan(players, &arms)
        .with_tool_text(args.tool_text.into());
    let config = design.config(&plan, &arms);
    let executed = run_with_progress(&args.out, config, &plan, args.jobs.get(), args.shard)?;
    if args.shard.is_some() {
        shard_note(
            args.shard,
            &args.out,
            ", then this command without --shard and with --out RUN_DIR analyses it (running nothing)",
        );
        return Ok(incomplete_exit(&executed, &args.out));
    }
    let settings = AnalysisSettings {
        metric,
        stats_seed: args.stats_seed,
        resamples: args.resamples,
    };
    let records = &executed.records;
    let result = conclude(&design, &arms, &plan, records, &settings, frozen.as_ref())?;
    let json = serde_json::to_value(&result)?;
    write_atomic(
        &args.out.join("ab.json"),
        serde_json::to_string_pretty(&json)?.as_bytes(),
    )?;
    if args.json {
        print_json(&json)?;
    } else {
        print(&benchaudit_report::text::ab_summary(&design, &result))?;
    }
    Ok(incomplete_exit(&executed, &args.out))
}
