//! `benchaudit report RUN_DIR` and `benchaudit report --compare RUN_A RUN_B`: reliability
//! statistics, `stats.json`, report.md, a self-contained report.html and figures (SVG + PNG),
//! with the number guard run on both documents (exit 1 when it fails).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use benchaudit_report::compute::{parse_alpha, parse_resamples, parse_tau, parse_threshold};
use benchaudit_report::cost::PriceTable;
use benchaudit_report::{
    Options, default_metric, load_run_for, write_loaded_compare, write_loaded_report,
};
use benchaudit_runs::parse_seed;

use crate::UsageError;
use crate::args::MetricArg;
use crate::output::{print, print_json};

/// `benchaudit report`
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run directory written by `benchaudit run` (omit it with --compare).
    #[arg(required_unless_present = "compare", conflicts_with = "compare")]
    pub run_dir: Option<PathBuf>,
    /// Compare two runs: episodes paired by (policy, level, arm, task, seed); Δ = B − A.
    #[arg(long, num_args = 2, value_names = ["RUN_A", "RUN_B"])]
    pub compare: Option<Vec<PathBuf>>,
    /// Output directory [default: RUN_DIR/report/METRIC; with --compare:
    /// RUN_B/compare-report/METRIC], so a report on another metric never overwrites one.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Per-episode metric: f1 (ground-truth F1), judge (the legacy judge on 0–1), coverage (L1
    /// coverage) or reward (the episode's reward, e.g. an imported log's score) [default: as
    /// `ab`: coverage for a run at L0/L1 only, f1 when it includes L2].
    #[arg(long, value_enum)]
    pub metric: Option<MetricArg>,
    /// CVaR tail fraction α (mean of the ⌈α·n⌉ lowest values), in (0, 1].
    #[arg(long, default_value_t = 0.2, allow_negative_numbers = true, value_parser = parse_alpha)]
    pub alpha: f64,
    /// Reliability thresholds τ, comma-separated, each in (0, 1] (R@τ: share of episodes ≥ τ).
    #[arg(long, value_delimiter = ',', default_value = "0.9,0.5", allow_negative_numbers = true, value_parser = parse_tau)]
    pub tau: Vec<f64>,
    /// Seed of the bootstrap streams (results are bit-identical for a given seed); as `ab
    /// --stats-seed`.
    #[arg(long = "stats-seed", alias = "seed", default_value_t = 0, allow_negative_numbers = true, value_parser = parse_seed)]
    pub seed: u64,
    /// Bootstrap replicates B.
    #[arg(long, default_value_t = 2000, value_parser = parse_resamples)]
    pub resamples: usize,
    /// pass@k / pass^k success threshold: an episode succeeds when its metric is ≥ this.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true, value_parser = parse_threshold)]
    pub pass_threshold: f64,
    /// A price file (`benchaudit.prices/1`, as crates/report/data/prices.json) whose prices
    /// come before the shipped table's, e.g. for a local model (unpriced models cost "unknown").
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Print the summary (pooled rows, settings, files, number guard) as one JSON object on
    /// stdout instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// Runs the subcommand: 0 when the report is written and passes the number guard, 1 when
/// the guard rejects a number, 2 for bad input.
pub fn run(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    if args.tau.is_empty() {
        return Err(UsageError("give at least one --tau threshold".into()).into());
    }
    // What the metric may be: the one chosen, or either default (coverage for a run at L0/L1
    // only, F1 otherwise).
    let metrics = match args.metric {
        Some(m) => vec![benchaudit_runs::Metric::from(m)],
        None => vec![
            benchaudit_runs::Metric::F1,
            benchaudit_runs::Metric::Coverage,
        ],
    };
    let load = |dir: &std::path::Path| load_run_for(dir, &metrics);
    let (first, second, default_out) = match (&args.run_dir, args.compare.as_deref()) {
        (_, Some([a, b])) => (load(a)?, Some(load(b)?), b.join("compare-report")),
        (Some(dir), None) => (load(dir)?, None, dir.join("report")),
        _ => return Err(UsageError("give RUN_DIR or --compare RUN_A RUN_B".into()).into()),
    };
    let runs: Vec<_> = std::iter::once(&first).chain(&second).collect();
    let metric = args
        .metric
        .map_or_else(|| default_metric(&runs), benchaudit_runs::Metric::from);
    let opts = Options {
        metric,
        alpha: args.alpha,
        taus: args.tau.clone(),
        seed: args.seed,
        resamples: args.resamples,
        pass_threshold: args.pass_threshold,
        prices: PriceTable::load(args.prices.as_deref())?,
    };
    let out = (args.out.clone()).unwrap_or_else(|| default_out.join(metric.flag()));
    let written = match &second {
        Some(b) => write_loaded_compare(&first, b, &out, &opts)?,
        None => write_loaded_report(first, &out, &opts)?,
    };
    for note in &written.notes {
        eprintln!("note: {note}");
    }
    if args.json {
        print_json(&written.json())?;
        return Ok(if written.passed() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
    print(&written.text())?;
    if written.passed() {
        eprintln!("{}", written.guard_markdown);
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("report.md: {}", written.guard_markdown);
        eprintln!("report.html: {}", written.guard_html);
        eprintln!("the report states numbers that are not in stats.json (details in guard.json)");
        Ok(ExitCode::from(1))
    }
}
