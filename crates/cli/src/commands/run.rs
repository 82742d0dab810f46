//! `benchaudit run`: policies × levels × tasks × seeds into a resumable run ledger, with a
//! progress bar and a per-(policy, level) summary.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use benchaudit_agents::llm::{
    AgentOptions, ModelConfig, ModelId, ModelOverrides, build_agents, preflight_agents,
};
use benchaudit_agents::{Level, RuleKind, RunOptions};
use benchaudit_audit::trajectories::compare::ModelEndpoint;
use benchaudit_comtrade::EpisodeOptions;
use benchaudit_runs::{
    Executed, Plan, Player, Progress, SeedSet, Shard, ShardRun, execute, execute_shard,
};
use clap::Args;
use serde_json::Value;

use crate::UsageError;
use crate::args::{InterfaceArg, JobsArg, RewardArg, SubmissionArg, ToolTextArg, TranscriptsArg};
use crate::args::{Tasks, select_tasks};
use crate::output::{print, print_json};

/// `benchaudit run`
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Rule policies, comma-separated (`benchaudit policies` lists them with what each does).
    #[arg(long, value_delimiter = ',')]
    pub policy: Vec<RuleKind>,
    /// Scaffolding levels, comma-separated: L0 = the harness owns every decision (the model
    /// fills templated slots), L1 = the model decides retry or skip on faults, L2 = the model
    /// owns every decision and drives the tools itself.
    #[arg(long, default_value = "L2", value_delimiter = ',')]
    pub level: Vec<Level>,
    /// `all` or task ids, comma-separated (`benchaudit tasks` lists them).
    #[arg(long = "task", visible_alias = "tasks", default_value = "all", value_parser = select_tasks)]
    pub tasks: Tasks,
    /// Seeds: `0..9` (inclusive), `0+10` (ten seeds from 0), `0..<10`, `3`, or a
    /// comma-separated mix.
    #[arg(long, default_value = "0..9", allow_negative_numbers = true)]
    pub seeds: SeedSet,
    /// Run directory (created; re-running the same command resumes it).
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub jobs: JobsArg,
    /// Argument-error envelope.
    #[arg(long, value_enum, default_value = "legacy")]
    pub interface: InterfaceArg,
    /// Submission protocol.
    #[arg(long, value_enum, default_value = "full")]
    pub submission: SubmissionArg,
    /// The episode's primary scorer (both are always recorded).
    #[arg(long, value_enum, default_value = "f1")]
    pub reward: RewardArg,
    /// Request quota: requests allowed per episode, overriding every task's budget
    /// (0..=4294967295).
    #[arg(long = "quota", alias = "max-requests", value_parser = clap::value_parser!(u32).range(0..=i64::from(benchaudit_comtrade::MAX_QUOTA)))]
    pub max_requests: Option<u32>,
    /// Print the summary as one JSON object on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Run shard I of N only (0 ≤ I < N ≤ 4096): a fixed share of the episodes, into its own
    /// --out; `benchaudit merge` joins the shards (docs/scale-out.md).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
    /// Keep each episode's transcript (zstd-compressed JSON in RUN_DIR/transcripts) or none;
    /// recorded in the manifest.
    #[arg(long, value_enum, default_value = "keep")]
    pub transcripts: TranscriptsArg,
    /// Real models and how to reach them.
    #[command(flatten)]
    pub models: ModelArgs,
}

/// The flags that put LLMs in a run (shared by `run` and `audit`).
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// LLMs as PROVIDER:NAME, comma-separated or repeated. Providers: openai, anthropic (its
    /// OpenAI-compatible endpoint), together — keys from OPENAI_API_KEY, ANTHROPIC_API_KEY,
    /// TOGETHER_API_KEY —, local (the llama-server of scripts/local-llm/start.sh at
    /// http://127.0.0.1:8081/v1, no key), or any name with --base-url (llama.cpp, vLLM, Ollama).
    #[arg(long, value_delimiter = ',')]
    pub model: Vec<String>,
    /// An OpenAI-compatible server for every --model, e.g. http://127.0.0.1:8081/v1. No key is
    /// sent to it unless --api-key-env names one.
    #[arg(long)]
    pub base_url: Option<String>,
    /// The environment variable that holds the API key (keys are read from the environment only).
    #[arg(long)]
    pub api_key_env: Option<String>,
    /// Model requests per minute per endpoint and key, shared by every model and --jobs worker.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub rpm: Option<u32>,
    /// Per-episode output-token budget of models (default 6000; 12000 for reasoning-class).
    /// In `audit --target` of an agent benchmark, also each request's output tokens when the
    /// models run under its shipped agents.
    #[arg(long)]
    pub max_output_tokens: Option<u64>,
    /// L2 step limit of models: tool calls per episode (default 30). In `audit --target` of an
    /// agent benchmark, also its step limit when the models run under its shipped agents.
    #[arg(long)]
    pub step_limit: Option<u32>,
    /// Offer tools in the prompt and read `<tool_call>{json}</tool_call>` from replies, for
    /// models or servers without native tool calling.
    #[arg(long)]
    pub text_protocol: bool,
    /// Seconds before a model request times out (a timeout is retried like any provider fault;
    /// loopback servers get at least 300 s plus 0.5 s per requested output token).
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    pub request_timeout: u64,
    /// Send `tool_choice` with the tools (e.g. `auto`; llama-cpp-python's server needs it, vLLM
    /// rejects `auto` unless started with --enable-auto-tool-choice).
    #[arg(long)]
    pub tool_choice: Option<String>,
    /// Also execute tool calls written in the wrong envelope (bare or fenced JSON naming a tool).
    /// Changes what is measured; recorded in the manifest.
    #[arg(long)]
    pub lenient_tool_calls: bool,
    /// The wording of fetch_page's `page` argument models are shown: `clarified` states the
    /// base (1-based, page 0 rejected), `ambiguous` says only "Page number" (paper C.6).
    /// Recorded in the manifest as `tool_text`.
    #[arg(long, value_enum, default_value = "clarified")]
    pub tool_text: ToolTextArg,
}

impl ModelArgs {
    fn overrides(&self) -> ModelOverrides {
        ModelOverrides {
            base_url: self.base_url.clone(),
            api_key_env: self.api_key_env.clone(),
            token_budget: self.max_output_tokens,
            step_limit: self.step_limit,
            text_protocol: self.text_protocol,
            tool_choice: self.tool_choice.clone(),
            lenient_calls: self.lenient_tool_calls,
            tool_text: self.tool_text.into(),
        }
    }

    /// Each `--model` as an endpoint a target's own harness can call: the base URL, the model
    /// name and the variable holding the key (never the key). Resolved as [`Self::players`]
    /// resolves them; call after it, which has checked them.
    pub fn endpoints(&self) -> Result<Vec<ModelEndpoint>, UsageError> {
        let overrides = self.overrides();
        self.model
            .iter()
            .map(|spec| {
                let id = ModelId::parse(spec).map_err(|e| UsageError(e.to_string()))?;
                let (c, _key) =
                    ModelConfig::resolve(&id, &overrides).map_err(|e| UsageError(e.to_string()))?;
                Ok(ModelEndpoint {
                    name: c.name,
                    model: c.model,
                    base_url: c.base_url,
                    api_key_env: c.api_key_env,
                })
            })
            .collect()
    }

    /// The `--model` players. Fails before any episode runs on a model flag without --model,
    /// a bad model name, an unknown provider without --base-url, or a missing key variable.
    pub fn players(&self) -> Result<Vec<Player>, UsageError> {
        if self.model.is_empty() {
            let given = [
                ("--base-url", self.base_url.is_some()),
                ("--api-key-env", self.api_key_env.is_some()),
                ("--rpm", self.rpm.is_some()),
                ("--max-output-tokens", self.max_output_tokens.is_some()),
                ("--step-limit", self.step_limit.is_some()),
                ("--text-protocol", self.text_protocol),
                ("--tool-choice", self.tool_choice.is_some()),
                ("--lenient-tool-calls", self.lenient_tool_calls),
            ];
            if let Some((flag, _)) = given.iter().find(|(_, given)| *given) {
                let why = format!("{flag} applies to models: give --model PROVIDER:NAME");
                return Err(UsageError(why));
            }
            return Ok(Vec::new());
        }
        let options = AgentOptions {
            overrides: self.overrides(),
            rpm: self.rpm,
            request_timeout: std::time::Duration::from_secs(self.request_timeout),
            ..AgentOptions::default()
        };
        let mut agents =
            build_agents(&self.model, &options).map_err(|e| UsageError(e.to_string()))?;
        // One look at each endpoint before anything runs: fails fast, and records the server
        // build and model file in the manifest (config.models[].server).
        preflight_agents(&mut agents).map_err(|e| UsageError(format!("preflight: {e}")))?;
        Ok(agents.into_iter().map(Player::model).collect())
    }
}

/// Runs the subcommand.
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    if args.policy.is_empty() && args.models.model.is_empty() {
        return Err(UsageError(
            "give --policy NAME[,NAME..] and/or --model PROVIDER:NAME[,..]".into(),
        )
        .into());
    }
    let mut players: Vec<Player> = args.policy.iter().copied().map(Player::rule).collect();
    players.extend(args.models.players()?);
    let (levels, tasks) = (args.level.clone(), args.tasks.0.clone());
    let plan = Plan::new(players, levels, tasks, args.seeds.0.clone())
        .with_options(RunOptions {
            episode: EpisodeOptions {
                interface: args.interface.into(),
                submission: args.submission.into(),
                max_requests: args.max_requests,
            },
            reward: args.reward.into(),
            stress: None,
        })
        .with_tool_text(args.models.tool_text.into())
        .with_transcripts(args.transcripts.into());
    let executed = run_with_progress(&args.out, plan.config(), &plan, args.jobs.get(), args.shard)?;
    let summary = benchaudit_report::text::RunSummary::of(&executed.records);
    if args.json {
        print_json(&summary)?;
    } else {
        print(&summary.text())?;
    }
    shard_note(args.shard, &args.out, "");
    Ok(incomplete_exit(&executed, &args.out))
}

/// After a shard: how to join it with the others (stderr).
pub fn shard_note(shard: Option<Shard>, out: &Path, then: &str) {
    if let Some(s) = shard {
        eprintln!(
            "shard {s} recorded in {}; when all {} shards are, join them: benchaudit merge SHARD_DIR... --out RUN_DIR{then}",
            out.display(),
            s.count
        );
    }
}

/// Exit code 3 when episodes of this invocation ended in `infra_error` (said on stderr after
/// the summary: the run is incomplete and the same command retries them), else 0.
pub fn incomplete_exit(executed: &Executed, out: &Path) -> ExitCode {
    if executed.infra_errors == 0 {
        return ExitCode::SUCCESS;
    }
    let which = if executed.ran == 1 {
        "the one episode run".to_string()
    } else {
        format!(
            "{} of the {} episodes run",
            executed.infra_errors, executed.ran
        )
    };
    eprintln!(
        "error: {which} ended in infra_error: the run in {} is incomplete; run the same command again to retry them",
        out.display()
    );
    ExitCode::from(3)
}

/// Runs `plan` (or one shard of it) into the ledger at `out` with a progress bar on stderr (and
/// the notes of a resume); shared by `run` and `ab`.
pub fn run_with_progress(
    out: &Path,
    config: Value,
    plan: &Plan,
    jobs: usize,
    shard: Option<Shard>,
) -> anyhow::Result<Executed> {
    let shard = shard
        .map(|s| {
            let args = std::env::args_os().map(|a| a.to_string_lossy().into_owned());
            ShardRun::from_args(s, args, out)
        })
        .transpose()?;
    use std::io::IsTerminal;
    // On a terminal: a bar. Otherwise (a pipe, a log file, CI): plain lines, one when work
    // starts and one at most every 10 s, so a long run shows it is alive without flooding.
    let tty = std::io::stderr().is_terminal();
    let mut bar: Option<indicatif::ProgressBar> = None;
    let start = std::time::Instant::now();
    let mut last_line = start;
    let mut on_progress = |p: Progress| match p {
        Progress::Started { to_run, .. } => {
            for line in p.started_lines(out) {
                eprintln!("{line}");
            }
            if tty && to_run > 0 {
                let b = indicatif::ProgressBar::with_draw_target(
                    Some(to_run as u64),
                    indicatif::ProgressDrawTarget::stderr(),
                );
                if let Ok(style) = indicatif::ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} episodes ({eta})",
                ) {
                    b.set_style(style);
                }
                bar = Some(b);
            }
        }
        Progress::Recorded { done, total } => {
            if let Some(b) = &bar {
                b.inc(1);
            } else if last_line.elapsed() >= std::time::Duration::from_secs(10) && done < total {
                last_line = std::time::Instant::now();
                eprintln!(
                    "{done}/{total} episodes recorded ({} s)",
                    start.elapsed().as_secs()
                );
            }
        }
    };
    let executed = match &shard {
        Some(run) => execute_shard(out, config, plan, run, jobs, &mut on_progress),
        None => execute(out, config, plan, jobs, &mut on_progress),
    };
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(executed?)
}
