//! `benchaudit assist discover|probes|narrate|eval`: the LLM-assisted layers, which propose and
//! never score (`benchaudit_assist`). Each command writes its output and the recording of every
//! request and response (`exchanges.json`) into its folder; `--replay exchanges.json` answers
//! from a recording instead of a model.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use benchaudit_agents::llm::{ChatClient, ClientConfig, ModelConfig, ModelId, ModelOverrides};
use benchaudit_assist::chat::EXCHANGES_FILE;
use benchaudit_assist::discover::{self, Ask};
use benchaudit_assist::eval::{self, References, Slice};
use benchaudit_assist::source::{DEFAULT_MAX_SOURCE_BYTES, Source};
use benchaudit_assist::{Chat, Error, Recording, narrate, probes};
use benchaudit_audit::external::ProbeFamily;
use clap::{Args, Subcommand, ValueEnum};

use crate::UsageError;
use crate::output::print;

/// `benchaudit assist`
#[derive(Debug, Args)]
pub struct AssistArgs {
    #[command(subcommand)]
    command: AssistCommand,
}

#[derive(Debug, Subcommand)]
enum AssistCommand {
    /// Propose a harness's ownership map from its source (marked proposed; citations checked).
    Discover(DiscoverArgs),
    /// Propose a scorer's kind and a forgery battery from its source.
    Probes(ProbesArgs),
    /// Narrate an audit's card; every figure must pass the number guard.
    Narrate(NarrateArgs),
    /// Measure the layers against the references shipped in the repository.
    Eval(EvalArgs),
}

/// Who answers: a model, or a recording.
#[derive(Debug, Args)]
struct ModelFlags {
    /// The model, PROVIDER:NAME (e.g. openai:gpt-4o, local:qwen2.5-7b).
    #[arg(long, required_unless_present = "replay", conflicts_with = "replay")]
    model: Option<String>,
    /// Any OpenAI-compatible server's base URL.
    #[arg(long)]
    base_url: Option<String>,
    /// The environment variable holding the API key.
    #[arg(long)]
    api_key_env: Option<String>,
    /// Output tokens per request.
    #[arg(long, default_value_t = 2048, value_parser = clap::value_parser!(u64).range(1..))]
    max_output_tokens: u64,
    /// Seconds per request.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    request_timeout: u64,
    /// Answer from a recording (an earlier run's exchanges.json) instead of a model.
    #[arg(long)]
    replay: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct DiscoverArgs {
    /// The harness's source files; FILE:START-END sends a line range.
    #[arg(required = true)]
    sources: Vec<String>,
    /// The folder for ownership.toml, proposal.json and exchanges.json.
    #[arg(long)]
    out: PathBuf,
    /// The levels (configurations) the harness runs at.
    #[arg(long, value_delimiter = ',', default_value = "L0")]
    levels: Vec<String>,
    /// The level the benchmark is scored at (default: the first level).
    #[arg(long)]
    scored_level: Option<String>,
    /// The decisions the benchmark claims to measure (default: the five execution decisions).
    #[arg(long, value_delimiter = ',')]
    claimed: Vec<String>,
    /// Bytes of source sent at most.
    #[arg(long, default_value_t = DEFAULT_MAX_SOURCE_BYTES)]
    max_source_bytes: u64,
    /// The request's seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    model: ModelFlags,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FamilyArg {
    Records,
    Calls,
    Answers,
    Trajectories,
}

impl From<FamilyArg> for ProbeFamily {
    fn from(f: FamilyArg) -> Self {
        match f {
            FamilyArg::Records => ProbeFamily::Records,
            FamilyArg::Calls => ProbeFamily::Calls,
            FamilyArg::Answers => ProbeFamily::Answers,
            FamilyArg::Trajectories => ProbeFamily::Trajectories,
        }
    }
}

#[derive(Debug, Args)]
struct ProbesArgs {
    /// The scorer's source files; FILE:START-END sends a line range.
    #[arg(required = true)]
    sources: Vec<String>,
    /// The folder for probes.toml, proposal.json and exchanges.json.
    #[arg(long)]
    out: PathBuf,
    /// The probe family the battery is written for.
    #[arg(long, value_enum, default_value = "records")]
    family: FamilyArg,
    /// Bytes of source sent at most.
    #[arg(long, default_value_t = DEFAULT_MAX_SOURCE_BYTES)]
    max_source_bytes: u64,
    /// The request's seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    model: ModelFlags,
}

#[derive(Debug, Args)]
struct NarrateArgs {
    /// An audit's folder (audit.json) or an audit document itself.
    audit: PathBuf,
    /// The folder for narration.md (or narration.rejected.md), guard.json and exchanges.json
    /// (default: AUDIT_DIR/narration).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Bytes of facts sent at most.
    #[arg(long, default_value_t = narrate::DEFAULT_MAX_FACT_BYTES)]
    max_fact_bytes: usize,
    /// The request's seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    model: ModelFlags,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum SliceArg {
    Full,
    Small,
}

#[derive(Debug, Args)]
struct EvalArgs {
    /// The folder for eval.json and exchanges.json.
    #[arg(long)]
    out: PathBuf,
    /// Seeded runs per reference (seeds 0..N).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=100))]
    runs: u64,
    /// `full` (a capable model) or `small` (excerpts for a small local model).
    #[arg(long, value_enum, default_value = "full")]
    slice: SliceArg,
    /// Layers to run (discover, probes, narrate; default all).
    #[arg(long, value_delimiter = ',')]
    layers: Vec<String>,
    /// The repository root the references' sources are read under.
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Bytes of source sent at most per request.
    #[arg(long, default_value_t = DEFAULT_MAX_SOURCE_BYTES)]
    max_source_bytes: u64,
    /// Print eval.json instead of the summary.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    model: ModelFlags,
}

/// A live model (preflighted, its server recorded) or a recording.
fn chat(flags: &ModelFlags) -> anyhow::Result<Chat> {
    if let Some(path) = &flags.replay {
        let recording = Recording::load(path).map_err(|e| UsageError(e.to_string()))?;
        return Ok(Chat::replay(recording));
    }
    let spec = flags
        .model
        .as_deref()
        .ok_or_else(|| UsageError("give --model PROVIDER:NAME or --replay FILE".into()))?;
    let id = ModelId::parse(spec).map_err(|e| UsageError(e.to_string()))?;
    let overrides = ModelOverrides {
        base_url: flags.base_url.clone(),
        api_key_env: flags.api_key_env.clone(),
        ..ModelOverrides::default()
    };
    let (mut config, key) =
        ModelConfig::resolve(&id, &overrides).map_err(|e| UsageError(e.to_string()))?;
    let mut cc = ClientConfig::new(&config.base_url, key);
    cc.request_timeout = std::time::Duration::from_secs(flags.request_timeout);
    let client = ChatClient::new(cc).map_err(|e| UsageError(e.to_string()))?;
    let info = client
        .preflight()
        .map_err(|e| UsageError(format!("preflight: {e}")))?;
    config.server = Some(info);
    Ok(Chat::live(&config, client, flags.max_output_tokens))
}

/// The output folder must not be another command's (a run ledger, an audit, a report).
fn claim(out: &Path) -> anyhow::Result<()> {
    if let Some(kind) = benchaudit_runs::outdir::kind_of(out) {
        return Err(UsageError(format!(
            "{} holds {}: assist writes its proposals into a folder of its own; choose another --out",
            out.display(),
            kind.describe()
        ))
        .into());
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| UsageError(format!("cannot create {}: {e}", dir.display())))?;
    }
    std::fs::write(path, text)
        .map_err(|e| UsageError(format!("cannot write {}: {e}", path.display())))?;
    Ok(())
}

/// Saves the recording, whatever happened: a failed request is recorded too.
fn save(chat: &Chat, out: &Path) -> anyhow::Result<()> {
    chat.recording()
        .save(&out.join(EXCHANGES_FILE))
        .map_err(|e| UsageError(e.to_string()).into())
}

/// A library error as the user's (exit 2), after the recording is saved.
fn failed(chat: &Chat, out: &Path, e: Error) -> anyhow::Result<ExitCode> {
    save(chat, out)?;
    Err(UsageError(format!(
        "{e} (the exchange is recorded in {})",
        out.join(EXCHANGES_FILE).display()
    ))
    .into())
}

/// Runs the subcommand.
pub fn run(args: &AssistArgs) -> anyhow::Result<ExitCode> {
    match &args.command {
        AssistCommand::Discover(a) => run_discover(a),
        AssistCommand::Probes(a) => run_probes(a),
        AssistCommand::Narrate(a) => run_narrate(a),
        AssistCommand::Eval(a) => run_eval(a),
    }
}

fn run_discover(a: &DiscoverArgs) -> anyhow::Result<ExitCode> {
    claim(&a.out)?;
    let source =
        Source::load(&a.sources, a.max_source_bytes).map_err(|e| UsageError(e.to_string()))?;
    let claimed = if a.claimed.is_empty() {
        discover::standard_decisions()
    } else {
        a.claimed.clone()
    };
    let scored_level = a
        .scored_level
        .clone()
        .or_else(|| a.levels.first().cloned())
        .unwrap_or_default();
    if !a.levels.contains(&scored_level) {
        return Err(UsageError(format!(
            "--scored-level {scored_level} is not one of --levels {}",
            a.levels.join(",")
        ))
        .into());
    }
    let ask = Ask {
        levels: a.levels.clone(),
        scored_level,
        claimed,
    };
    let mut chat = chat(&a.model)?;
    let proposal =
        match discover::discover(&mut chat, &source, &a.sources, &ask, "discover", a.seed) {
            Ok(p) => p,
            Err(e) => return failed(&chat, &a.out, e),
        };
    save(&chat, &a.out)?;
    write(&a.out.join("ownership.toml"), &proposal.to_toml())?;
    let json = serde_json::to_string_pretty(&proposal)? + "\n";
    write(&a.out.join("proposal.json"), &json)?;
    let mut text = format!(
        "proposed ownership map {} ({} entries) from {}: {}\n",
        proposal.id,
        proposal.entries.len(),
        proposal.model,
        a.out.join("ownership.toml").display()
    );
    for f in &proposal.flags {
        text.push_str(&format!("  flag: {f}\n"));
    }
    text.push_str("a proposal changes no card: confirm it by copying [ownership] into the target's manifest and renaming `proposed` to `confirmed_from`\n");
    print(&text)?;
    Ok(if proposal.bad_citations() > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn run_probes(a: &ProbesArgs) -> anyhow::Result<ExitCode> {
    claim(&a.out)?;
    let source =
        Source::load(&a.sources, a.max_source_bytes).map_err(|e| UsageError(e.to_string()))?;
    let mut chat = chat(&a.model)?;
    let family = a.family.into();
    let proposal = match probes::design(&mut chat, &source, &a.sources, family, "probes", a.seed) {
        Ok(p) => p,
        Err(e) => return failed(&chat, &a.out, e),
    };
    save(&chat, &a.out)?;
    write(&a.out.join("probes.toml"), &proposal.to_toml())?;
    let json = serde_json::to_string_pretty(&proposal)? + "\n";
    write(&a.out.join("proposal.json"), &json)?;
    let mut text = format!(
        "proposed scorer kind {:?} and {} probes ({} built by the {} family) from {}: {}\n",
        proposal.scorer_kind,
        proposal.battery.len(),
        proposal.runnable(),
        proposal.family,
        proposal.model,
        a.out.join("probes.toml").display()
    );
    for f in &proposal.flags {
        text.push_str(&format!("  flag: {f}\n"));
    }
    text.push_str("run it explicitly: benchaudit audit --target MANIFEST (its measured cells are the results)\n");
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn run_narrate(a: &NarrateArgs) -> anyhow::Result<ExitCode> {
    let (doc, default_out) = if a.audit.is_dir() {
        (a.audit.join("audit.json"), a.audit.join("narration"))
    } else {
        let dir = a.audit.parent().unwrap_or(Path::new(".")).to_path_buf();
        (a.audit.clone(), dir.join("narration"))
    };
    let out = a.out.clone().unwrap_or(default_out);
    claim(&out)?;
    let text =
        benchaudit_runs::files::read_text_bounded(&doc, benchaudit_runs::files::limits::GUARD)
            .map_err(|e| UsageError(e.to_string()))?;
    let audit: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| UsageError(format!("{} is not JSON: {e}", doc.display())))?;
    let mut chat = chat(&a.model)?;
    let narration = match narrate::narrate(&mut chat, &audit, a.max_fact_bytes, "narrate", a.seed) {
        Ok(n) => n,
        Err(e) => return failed(&chat, &out, e),
    };
    save(&chat, &out)?;
    write(
        &out.join("guard.json"),
        &(serde_json::to_string_pretty(&narration.guard)? + "\n"),
    )?;
    if narration.passed() {
        let path = out.join("narration.md");
        write(&path, &narration.text)?;
        print(&format!(
            "{}\nnarration written to {} (number guard: {} figures, {} at their tagged path, all in {})\n",
            narration.text.trim_end(),
            path.display(),
            narration.guard.checked,
            narration.guard.tagged,
            doc.display()
        ))?;
        Ok(ExitCode::SUCCESS)
    } else {
        let path = out.join("narration.rejected.md");
        write(&path, &narration.text)?;
        eprintln!(
            "the narration is rejected: {}kept for inspection as {}",
            narration.guard,
            path.display()
        );
        Ok(ExitCode::from(1))
    }
}

fn run_eval(a: &EvalArgs) -> anyhow::Result<ExitCode> {
    claim(&a.out)?;
    let refs = References::shipped().map_err(|e| UsageError(e.to_string()))?;
    for l in &a.layers {
        if !["discover", "probes", "narrate"].contains(&l.as_str()) {
            return Err(UsageError(format!(
                "unknown layer `{l}` (known: discover, probes, narrate)"
            ))
            .into());
        }
    }
    let settings = eval::Settings {
        runs: a.runs,
        slice: match a.slice {
            SliceArg::Full => Slice::Full,
            SliceArg::Small => Slice::Small,
        },
        layers: a.layers.clone(),
        root: a.root.clone(),
        max_source_bytes: a.max_source_bytes,
    };
    let mut chat = chat(&a.model)?;
    let report = match eval::run(&mut chat, &refs, &settings) {
        Ok(r) => r,
        Err(e) => return failed(&chat, &a.out, e),
    };
    save(&chat, &a.out)?;
    let json = serde_json::to_string_pretty(&report)? + "\n";
    write(&a.out.join("eval.json"), &json)?;
    if a.json {
        print(&json)?;
    } else {
        print(&format!(
            "{}wrote {} and {}\n",
            report.text(),
            a.out.join("eval.json").display(),
            a.out.join(EXCHANGES_FILE).display()
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}
