//! `benchaudit run`: the cross product of policies × levels × tasks × seeds into a run ledger,
//! resumable, in parallel, with a progress bar and a per-(policy, level) summary.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use anyhow::Context;
use benchaudit_agents::llm::{
    AgentOptions, LlmAgent, ModelOverrides, build_agents, preflight_agents,
};
use benchaudit_agents::{
    EpisodeKey, EpisodeRecord, EpisodeRun, EpisodeSpec, Level, Outcome, Policy, RuleKind,
    RulePolicy, RunOptions, run_episode,
};
use benchaudit_comtrade::{EpisodeOptions, TaskSpec};
use clap::Args;
use serde_json::json;

use crate::UsageError;
use crate::args::{InterfaceArg, RewardArg, SubmissionArg};
use crate::ledger::{Ledger, Manifest};
use crate::output::print;
use crate::select;

/// `benchaudit run`
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Rule policies, comma-separated (oracle, baseline, always-retry, always-skip, quota-aware,
    /// no-dedup, keeps-totals, skips-faults, single-pass, page-zero, fabricator, empty).
    #[arg(long)]
    pub policy: Option<String>,
    /// Scaffolding levels, comma-separated.
    #[arg(long, default_value = "L2")]
    pub level: String,
    /// `all` or task ids, comma-separated.
    #[arg(long, default_value = "all")]
    pub tasks: String,
    /// Seeds: `0..9` (inclusive), `0..<10`, `3`, or a comma-separated mix.
    #[arg(long, default_value = "0..9")]
    pub seeds: String,
    /// Run directory (created; re-running the same command resumes it).
    #[arg(long)]
    pub out: PathBuf,
    /// Episodes in parallel.
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Argument-error envelope.
    #[arg(long, value_enum, default_value = "legacy")]
    pub interface: InterfaceArg,
    /// Submission protocol.
    #[arg(long, value_enum, default_value = "full")]
    pub submission: SubmissionArg,
    /// The episode's primary scorer (both are always recorded).
    #[arg(long, value_enum, default_value = "f1")]
    pub reward: RewardArg,
    /// Override every task's request budget (a quota).
    #[arg(long)]
    pub max_requests: Option<u32>,
    /// Real models and how to reach them.
    #[command(flatten)]
    pub models: ModelArgs,
}

/// The flags that put LLMs in a run (shared by `run` and `audit`).
#[derive(Debug, Args, Default)]
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
    #[arg(long)]
    pub rpm: Option<u32>,
    /// Per-episode output-token budget of models (default 6000; 12000 for reasoning-class).
    #[arg(long)]
    pub max_output_tokens: Option<u64>,
    /// L2 step limit of models: tool calls per episode (default 30).
    #[arg(long)]
    pub step_limit: Option<u32>,
    /// Offer tools in the prompt and read `<tool_call>{json}</tool_call>` from replies, for
    /// models or servers without native tool calling.
    #[arg(long)]
    pub text_protocol: bool,
    /// Seconds before a model request times out (a timeout is retried like any provider fault;
    /// loopback servers get at least 300 s plus 0.5 s per requested output token).
    #[arg(long, default_value_t = 300)]
    pub request_timeout: u64,
    /// Send `tool_choice` with the tools (e.g. `auto`; llama-cpp-python's server needs it, vLLM
    /// rejects `auto` unless started with --enable-auto-tool-choice).
    #[arg(long)]
    pub tool_choice: Option<String>,
    /// Also execute tool calls written in the wrong envelope (bare or fenced JSON naming a tool).
    /// Changes what is measured; recorded in the manifest.
    #[arg(long)]
    pub lenient_tool_calls: bool,
}

/// Who plays the model in a run.
#[derive(Debug, Clone)]
pub enum Agent {
    /// A built-in rule policy.
    Rule(RuleKind),
    /// An LLM behind an OpenAI-compatible API (`provider:model`).
    Model(LlmAgent),
}

impl Agent {
    /// The ledger name.
    pub fn name(&self) -> String {
        match self {
            Agent::Rule(k) => k.name().to_string(),
            Agent::Model(m) => m.name(),
        }
    }

    /// A fresh policy for one episode.
    pub fn policy(&self) -> Box<dyn Policy> {
        match self {
            Agent::Rule(k) => Box::new(RulePolicy::new(*k)),
            Agent::Model(m) => Box::new(m.policy()),
        }
    }

    /// The `--model` agents of a run. Fails before any episode runs on a bad model name, an
    /// unknown provider without --base-url, or a missing key variable.
    pub fn models(args: &ModelArgs) -> Result<Vec<Agent>, UsageError> {
        if args.model.is_empty() {
            let stray = [
                ("--base-url", args.base_url.is_some()),
                ("--api-key-env", args.api_key_env.is_some()),
                ("--rpm", args.rpm.is_some()),
                ("--max-output-tokens", args.max_output_tokens.is_some()),
                ("--step-limit", args.step_limit.is_some()),
                ("--text-protocol", args.text_protocol),
                ("--tool-choice", args.tool_choice.is_some()),
                ("--lenient-tool-calls", args.lenient_tool_calls),
            ];
            return match stray.iter().find(|(_, given)| *given) {
                Some((flag, _)) => Err(UsageError(format!(
                    "{flag} applies to models: give --model PROVIDER:NAME"
                ))),
                None => Ok(Vec::new()),
            };
        }
        if args.rpm == Some(0) || args.request_timeout == 0 {
            return Err(UsageError(
                "--rpm and --request-timeout must be at least 1".into(),
            ));
        }
        let options = AgentOptions {
            overrides: ModelOverrides {
                base_url: args.base_url.clone(),
                api_key_env: args.api_key_env.clone(),
                token_budget: args.max_output_tokens,
                step_limit: args.step_limit,
                text_protocol: args.text_protocol,
                tool_choice: args.tool_choice.clone(),
                lenient_calls: args.lenient_tool_calls,
            },
            rpm: args.rpm,
            request_timeout: std::time::Duration::from_secs(args.request_timeout),
            ..AgentOptions::default()
        };
        let mut agents =
            build_agents(&args.model, &options).map_err(|e| UsageError(e.to_string()))?;
        // One look at each endpoint before anything runs: fails fast, and records the server
        // build and model file in the manifest (config.models[].server).
        preflight_agents(&mut agents).map_err(|e| UsageError(format!("preflight: {e}")))?;
        Ok(agents.into_iter().map(Agent::Model).collect())
    }
}

/// One episode to run.
struct Work {
    agent: usize,
    spec: EpisodeSpec,
    key: EpisodeKey,
}

/// Runs the subcommand.
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    if args.policy.is_none() && args.models.model.is_empty() {
        return Err(UsageError(
            "give --policy NAME[,NAME..] and/or --model PROVIDER:NAME[,..]".into(),
        )
        .into());
    }
    let mut agents: Vec<Agent> = match args.policy.as_deref() {
        Some(spec) => select::rule_policies(spec)?
            .into_iter()
            .map(Agent::Rule)
            .collect(),
        None => Vec::new(),
    };
    agents.extend(Agent::models(&args.models)?);
    let levels = select::levels(&args.level)?;
    let tasks = select::task_list(&args.tasks)?;
    let seeds = select::seeds(&args.seeds)?;
    if args.jobs == 0 {
        return Err(UsageError("--jobs must be at least 1".into()).into());
    }
    let options = RunOptions {
        episode: EpisodeOptions {
            interface: args.interface.into(),
            submission: args.submission.into(),
            max_requests: args.max_requests,
        },
        reward: args.reward.into(),
        stress: None,
    };
    let mut config = json!({
        "policies": agents.iter().map(Agent::name).collect::<Vec<_>>(),
        "levels": levels,
        "tasks": tasks.iter().map(|t| t.task_id).collect::<Vec<_>>(),
        "seeds": seeds,
        "options": options,
    });
    // What shapes a model's episodes (endpoint, quirks, budget, step limit, tool protocol; the
    // key variable's name, never the key) belongs to the run's configuration.
    let models: Vec<_> = agents
        .iter()
        .filter_map(|a| {
            if let Agent::Model(m) = a {
                Some(m.config())
            } else {
                None
            }
        })
        .collect();
    if !models.is_empty() {
        config["models"] = json!(models);
    }
    let records = execute(
        &args.out, config, &agents, &levels, &tasks, &seeds, options, args.jobs,
    )?;
    print(&summary(&records))?;
    Ok(ExitCode::SUCCESS)
}

/// The manifest of a run of this tool with `config`.
pub fn manifest(config: serde_json::Value) -> anyhow::Result<Manifest> {
    use sha2::{Digest, Sha256};
    let registry = serde_json::to_string(benchaudit_comtrade::tasks())?;
    Ok(Manifest {
        tool: "benchaudit".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        registry_sha256: Sha256::digest(registry.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
        config,
    })
}

/// Runs every missing episode of the cross product into the ledger at `out` and returns all of
/// the run's records (old and new).
#[allow(clippy::too_many_arguments)]
pub fn execute(
    out: &std::path::Path,
    config: serde_json::Value,
    agents: &[Agent],
    levels: &[Level],
    tasks: &[&'static TaskSpec],
    seeds: &[u64],
    options: RunOptions,
    jobs: usize,
) -> anyhow::Result<Vec<EpisodeRecord>> {
    let mut ledger = Ledger::open(out, &manifest(config)?)?;
    if ledger.discarded > 0 {
        eprintln!(
            "note: discarded a torn last line of {}/episodes.jsonl (an interrupted write)",
            out.display()
        );
    }
    let mut work = Vec::new();
    for (a, agent) in agents.iter().enumerate() {
        for &level in levels {
            for &task in tasks {
                for &seed in seeds {
                    let spec = EpisodeSpec {
                        task,
                        seed,
                        level,
                        options,
                    };
                    let key = spec.key(agent.name());
                    if !ledger.is_done(&key) {
                        work.push(Work {
                            agent: a,
                            spec,
                            key,
                        });
                    }
                }
            }
        }
    }
    let total = work.len();
    let skipped = agents.len() * levels.len() * tasks.len() * seeds.len() - total;
    if skipped > 0 {
        eprintln!(
            "resuming {}: {skipped} episodes already recorded, {total} to run",
            out.display()
        );
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total as u64),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} episodes ({eta})",
    ) {
        bar.set_style(style);
    }
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, EpisodeRun)>();
    let mut new_records = Vec::with_capacity(total);
    std::thread::scope(|scope| -> anyhow::Result<()> {
        for _ in 0..jobs.min(total.max(1)) {
            let tx = tx.clone();
            let (work, next) = (&work, &next);
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(w) = work.get(i) else { break };
                    let mut policy = agents[w.agent].policy();
                    let started = Instant::now();
                    let mut run = run_episode(&w.spec, policy.as_mut());
                    run.record.timing.wall_ms = started.elapsed().as_secs_f64() * 1000.0;
                    if tx.send((i, run)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (i, run) in rx {
            debug_assert_eq!(run.record.key, work[i].key);
            ledger
                .append(&run.record, &run.transcript)
                .with_context(|| format!("recording episode {:?}", work[i].key))?;
            new_records.push(run.record);
            bar.inc(1);
        }
        Ok(())
    })?;
    bar.finish_and_clear();
    let mut all = std::mem::take(&mut ledger.existing);
    all.extend(new_records);
    Ok(all)
}

/// A short per-(policy, level) table; infra errors are listed, not averaged.
pub fn summary(records: &[EpisodeRecord]) -> String {
    #[derive(Default)]
    struct Acc {
        n: usize,
        f1: f64,
        judge: f64,
        coverage: (f64, usize),
        submitted: usize,
        infra: usize,
    }
    let mut groups: BTreeMap<(String, Level), Acc> = BTreeMap::new();
    for r in records {
        let acc = groups
            .entry((r.key.policy.clone(), r.key.level))
            .or_default();
        if r.outcome == Outcome::InfraError {
            acc.infra += 1;
            continue;
        }
        acc.n += 1;
        if let Some(s) = &r.scores {
            acc.f1 += s.f1;
            acc.judge += s.judge_total / 100.0;
        }
        if let Some(c) = r.coverage {
            acc.coverage.0 += c;
            acc.coverage.1 += 1;
        }
        if r.outcome == Outcome::Submitted {
            acc.submitted += 1;
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<16} {:<5} {:>6} {:>8} {:>9} {:>9} {:>10} {:>6}",
        "policy", "level", "n", "mean F1", "judge", "coverage", "submitted", "infra"
    );
    for ((policy, level), a) in &groups {
        let n = a.n.max(1) as f64;
        let cov = if a.coverage.1 > 0 {
            format!("{:.3}", a.coverage.0 / a.coverage.1 as f64)
        } else {
            "-".into()
        };
        let _ = writeln!(
            out,
            "{policy:<16} {level:<5} {:>6} {:>8.3} {:>9.3} {cov:>9} {:>10} {:>6}",
            a.n,
            a.f1 / n,
            a.judge / n,
            format!("{}/{}", a.submitted, a.n),
            a.infra
        );
    }
    let infra: Vec<&EpisodeRecord> = records
        .iter()
        .filter(|r| r.outcome == Outcome::InfraError)
        .collect();
    if !infra.is_empty() {
        let _ = writeln!(out, "\ninfra errors (excluded from statistics):");
        for r in infra {
            let _ = writeln!(
                out,
                "  {} {} {} seed {}: {}",
                r.key.policy,
                r.key.level,
                r.key.task_id,
                r.key.seed,
                r.error.as_deref().unwrap_or("?")
            );
        }
    }
    out
}
