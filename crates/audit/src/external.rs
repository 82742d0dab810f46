//! External targets: a manifest names up to four hook commands that speak JSON over
//! stdin/stdout, so a benchmark written in any language can be audited without model calls.
//!
//! ```toml
//! name = "my-bench"
//! scorer_kind = "outcome"          # shape | outcome | specification (optional)
//! resolution = 1e-6                # smallest score difference the scorer expresses (optional)
//! [hooks]                          # each optional; argv, run in the manifest's directory
//! ownership = ["python3", "hooks.py", "ownership"]
//! registry  = ["python3", "hooks.py", "registry"]
//! truth     = ["python3", "hooks.py", "truth"]
//! score     = ["python3", "hooks.py", "score"]
//! scaffold_variance = ["python3", "hooks.py", "variance"]   # or the table below
//!
//! [scaffold_variance]              # measured: one model under several native scaffolds
//! model = "gpt-4o"
//! scores = { "tool-calling" = 0.61, "react" = 0.48 }
//!
//! [ownership]                      # the ownership map as data (instead of the ownership hook)
//! scored_level = "L0"
//! claimed = ["retry", "dedup"]
//! entries = [["L0", "retry", "harness"], ["L0", "dedup", "harness"]]
//! confirmed_from = "assist-discover-1f2e3d4c5b6a"   # optional: a proposal a person confirmed
//! ```
//!
//! An `[ownership]` table still marked `proposed = "…"` (as `benchaudit assist discover` writes
//! it) is refused: a model's proposal changes no card until a person has checked it and renamed
//! `proposed` to `confirmed_from`, which the card's ownership cell then names.
//!
//! Requests and answers (one JSON value each way):
//! * ownership: `{}` → `{"entries": [["L0", "dedup", "harness"], …], "claimed": ["dedup", …], "scored_level": "L0"}`
//! * registry: `{}` → `{"tasks": [{"task_id": "t1", "seeds": [0]}]}`
//! * truth: `{"task": "t1", "seed": 0}` → `{"records": [{…}, …]}`
//! * score: `{"task": "t1", "seed": 0, "submission": {"records": […], "metadata": {…}, "run_log": "…"}}` → `{"score": 0.75}`
//! * scaffold_variance: `{}` → `{"model": "gpt-4o", "scores": {"tool-calling": 0.61, "react": 0.48}}`
//!
//! Hook paths resolve against the manifest's folder whichever way the manifest is named
//! (`--target target.toml` from its folder is `--target ./target.toml`). A hook that fails
//! makes the stages it serves "not probed: <cause>" with its stderr tail; never a fail.
//!
//! A function-calling benchmark (`probes = "calls"`, e.g. `targets/bfcl/target.toml`) is probed
//! by the [`crate::calls`] family through two **batch** hooks instead, one process per batch:
//!
//! ```toml
//! probes = "calls"
//! [calls]
//! categories = ["simple_python", "irrelevance"]
//! sample = 20                      # entries per category (seeded); 0 = every entry
//! seed = 0
//! timeout_secs = 300               # per batch hook process
//! [hooks]
//! entries = ["python3", "hook.py", "entries"]
//! score_batch = ["python3", "hook.py", "score"]
//! ```
//!
//! * entries: `{"categories": [...]}` → `{"checker": {…}, "categories": [{"name", "kind", "language", "entries": [{"id", "functions", "answer"}]}]}`
//! * score_batch: `{"items": [{"category", "id", "output"}, …]}` → `{"results": [{"valid": true, "error_type": null}, …]}` (same order; at most [`BATCH_ITEMS`] items per process)
//!
//! A hook program given by a relative path with a `/` (`.venv/bin/python`) is found relative to
//! the manifest's folder, and every hook runs in that folder. A hook that cannot start, exits
//! non-zero, times out, answers too much or answers garbage is a [`HookFailure`] carrying the
//! cause and the tail of its stderr.
//!
//! Why one file over 600 lines: the manifest, the hook runner and the answers it accepts are one
//! protocol; each hook's request, answer and failure modes sit beside the others so a reader
//! checks the whole contract in one place.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};

use crate::calls::{CallChecker, CallsConfig, CheckVerdict, Entries, ScoreItem};
use crate::target::{DeclaredOwnership, Forged, ScaffoldVariance, ScorerKind, Target, TargetTask};

/// How long one hook call may take.
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(30);

/// How long one batch hook call may take unless the manifest says otherwise.
pub const BATCH_TIMEOUT: Duration = Duration::from_secs(300);

/// How long an answer target's `run` hook may play one model unless the manifest says
/// otherwise (a real model on a few samples and seeds).
pub const MODEL_RUN_TIMEOUT: Duration = Duration::from_secs(3600);

/// Largest answer a hook may print (BFCL's `entries` answer for every category is well
/// below it).
pub const MAX_ANSWER_BYTES: usize = 64 << 20;

/// Most JSON values (every number, string, array, object, … counted) a hook's answer may
/// hold. The answer is parsed under this bound, so its tree in memory is bounded too, not only
/// its text: 64 MiB of `{},` is 22 million objects. BFCL's `entries` answer for the categories
/// of `targets/bfcl/target.toml` holds 137 690.
pub const MAX_ANSWER_VALUES: usize = 1 << 20;

/// How much of a hook's stderr is kept (its tail) for the card.
pub const STDERR_TAIL_BYTES: usize = 2048;

/// Most outputs one score_batch process is given.
pub const BATCH_ITEMS: usize = 5000;

/// Why a hook gave no answer: the cause and the end of what it wrote to stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookFailure {
    /// What went wrong (cannot start, exit status, timeout, bad answer).
    pub cause: String,
    /// The last [`STDERR_TAIL_BYTES`] of the hook's stderr.
    pub stderr_tail: String,
}

impl std::fmt::Display for HookFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.stderr_tail.trim().is_empty() {
            write!(f, "{}", self.cause)
        } else {
            write!(f, "{}; stderr: {}", self.cause, self.stderr_tail.trim())
        }
    }
}

/// Hook text as the body of one inline code span: backticks become quotes, line breaks
/// spaces. A card quotes what a hook said this way, so the number guard reads it as data the
/// JSON holds, not as figures the card claims.
pub fn quote(text: &str) -> String {
    text.trim().replace('`', "'").replace(['\n', '\r'], " ")
}

/// "the NAME hook failed: `cause; stderr: tail`": one wording for every hook failure a card
/// shows, the hook's own words quoted.
pub fn failure_text(stage: &str, f: &HookFailure) -> String {
    format!("the {stage} hook failed: `{}`", quote(&f.to_string()))
}

/// Which probe family a target is audited with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeFamily {
    /// Record sets (hooks truth + score).
    #[default]
    Records,
    /// Function calls (hooks entries + score_batch).
    Calls,
    /// Answers to samples (hooks describe + score_batch): an Inspect task's scorer.
    Answers,
    /// Forged agent runs (hooks units + play, and intervene for ownership).
    Trajectories,
}

/// The `[calls]` table: what the function-call family probes.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallsManifest {
    /// Categories to probe.
    pub categories: Vec<String>,
    /// Entries per category; 0 or absent = every entry.
    #[serde(default)]
    pub sample: Option<usize>,
    /// Sample seed.
    #[serde(default)]
    pub seed: u64,
    /// Seconds one batch hook process may take.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

/// The `[answers]` table: what the answer family probes.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswersManifest {
    /// The task, when the manifest audits one fixed task (a researcher's own manifest);
    /// otherwise given on the command line (`--target inspect:SPEC`).
    #[serde(default)]
    pub task: Option<String>,
    /// Arguments of the task function (Inspect's `-T key=value`).
    #[serde(default)]
    pub args: toml::Table,
    /// Samples per task (seeded); 0 or absent = every sample.
    #[serde(default)]
    pub sample: Option<usize>,
    /// Sample seed.
    #[serde(default)]
    pub seed: u64,
    /// Seconds one batch hook process may take.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// A folder of local sample files, `NAME.jsonl` for the task named NAME, used when the
    /// task's dataset is on the hub.
    #[serde(default)]
    pub samples_dir: Option<PathBuf>,
    /// `--model`: samples the model plays, the first of the seeded sample (default 4).
    #[serde(default)]
    pub model_samples: Option<usize>,
    /// `--model`: seconds the `run` hook may take for one model (default 3600).
    #[serde(default)]
    pub model_timeout_secs: Option<u64>,
}

/// The `[trajectories]` table: what the trajectory family probes (τ², AgentDojo).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrajectoriesManifest {
    /// Which benchmark's forgery table applies.
    pub benchmark: crate::trajectories::table::Benchmark,
    /// Groups (domains, suites) to probe.
    pub groups: Vec<String>,
    /// Units per group; 0 or absent = every unit.
    #[serde(default)]
    pub sample: Option<usize>,
    /// Sample seed.
    #[serde(default)]
    pub seed: u64,
    /// Units per group played again in a second hook process (default 3).
    #[serde(default)]
    pub replay: Option<usize>,
    /// Units per group whose runs the `port` hook scores (default 1 when there is one).
    #[serde(default)]
    pub port: Option<usize>,
    /// `--model`: units per group run under each shipped agent implementation (default 1).
    #[serde(default)]
    pub compare_units: Option<usize>,
    /// `--model`: the benchmark's step limit in those runs (default 30; `--step-limit`).
    #[serde(default)]
    pub compare_max_steps: Option<u32>,
    /// `--model`: output tokens per model request in those runs (default 1024;
    /// `--max-output-tokens`).
    #[serde(default)]
    pub compare_max_tokens: Option<u64>,
    /// The forgeries to play, by name (default: the benchmark's whole table; gold is always
    /// played).
    #[serde(default)]
    pub forgeries: Option<Vec<String>>,
    /// Seconds one batch hook process may take.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

/// An outside target's manifest file (`target.toml`; a run's manifest is `runs::Manifest`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetManifest {
    /// Target name.
    pub name: String,
    /// Declared scorer kind.
    #[serde(default)]
    pub scorer_kind: Option<ScorerKind>,
    /// Scorer resolution ε.
    #[serde(default)]
    pub resolution: Option<f64>,
    /// Which probe family (records by default).
    #[serde(default)]
    pub probes: ProbeFamily,
    /// The function-call family's settings.
    #[serde(default)]
    pub calls: Option<CallsManifest>,
    /// The answer family's settings.
    #[serde(default)]
    pub answers: Option<AnswersManifest>,
    /// The trajectory family's settings.
    #[serde(default)]
    pub trajectories: Option<TrajectoriesManifest>,
    /// Hook commands.
    #[serde(default)]
    pub hooks: Hooks,
    /// Measured scaffold variance given as numbers (instead of the `scaffold_variance` hook).
    #[serde(default)]
    pub scaffold_variance: Option<ScaffoldVariance>,
    /// The ownership map given as data (instead of the `ownership` hook).
    #[serde(default)]
    pub ownership: Option<OwnershipTable>,
}

/// The `[ownership]` table: hook 1's answer written into the manifest, with where it came from.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OwnershipTable {
    /// The level the benchmark is scored at.
    pub scored_level: String,
    /// D_claimed.
    pub claimed: Vec<String>,
    /// `(level, decision, owner)` entries.
    pub entries: Vec<(String, String, crate::target::Owner)>,
    /// The map as measured by intervention, when the target measured it.
    #[serde(default)]
    pub measured: Vec<crate::target::MeasuredDecision>,
    /// The proposal a person confirmed this map from.
    #[serde(default)]
    pub confirmed_from: Option<String>,
    /// Set by `benchaudit assist discover`: a proposal, refused until confirmed.
    #[serde(default)]
    pub proposed: Option<String>,
}

impl OwnershipTable {
    /// The declaration the audit reads.
    pub fn declared(&self) -> DeclaredOwnership {
        DeclaredOwnership {
            entries: self.entries.clone(),
            claimed: self.claimed.clone(),
            scored_level: self.scored_level.clone(),
            measured: self.measured.clone(),
            confirmed_from: self.confirmed_from.clone(),
        }
    }
}

/// The four optional hook commands (argv).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hooks {
    /// Hook 1.
    pub ownership: Option<Vec<String>>,
    /// Hook 2.
    pub registry: Option<Vec<String>>,
    /// Hook 3.
    pub truth: Option<Vec<String>>,
    /// Hook 4.
    pub score: Option<Vec<String>>,
    /// Function calls: the entries of categories (batch).
    pub entries: Option<Vec<String>>,
    /// Function calls and answers: scores a batch of outputs.
    pub score_batch: Option<Vec<String>>,
    /// Answers: the task and its samples.
    pub describe: Option<Vec<String>>,
    /// Answers (`--model`): a real model through the task, one trial per seed.
    pub run: Option<Vec<String>>,
    /// Measured scaffold variance: the same model's scores under several native scaffolds.
    pub scaffold_variance: Option<Vec<String>>,
    /// Trajectories: the units of groups (batch).
    pub units: Option<Vec<String>>,
    /// Trajectories: plays and scores a batch of forged runs.
    pub play: Option<Vec<String>>,
    /// Trajectories: the harness's decisions under scripted interventions.
    pub intervene: Option<Vec<String>>,
    /// Trajectories (`--model`): one model under each shipped agent implementation.
    pub compare: Option<Vec<String>>,
    /// Trajectories: the same forged runs scored by a port of the benchmark. It runs another
    /// package's environment, so it is not checked before the audit: a port that cannot start
    /// leaves port fidelity not probed, with the cause, and the audit goes on.
    pub port: Option<Vec<String>>,
}

/// A target whose hooks are external commands.
#[derive(Debug, Clone)]
pub struct ExternalTarget {
    manifest: TargetManifest,
    dir: PathBuf,
    /// The answer family's task, when the command line names it (`inspect:SPEC`).
    task: Option<String>,
    /// Task arguments given on the command line (beside the manifest's).
    task_args: serde_json::Map<String, Value>,
    /// A local samples file given on the command line.
    samples_file: Option<PathBuf>,
}

impl ExternalTarget {
    /// Loads a manifest (TOML).
    pub fn load(path: &Path) -> Result<Self, String> {
        let text =
            benchaudit_runs::files::read_text_bounded(path, benchaudit_runs::files::limits::SMALL)
                .map_err(|e| e.to_string())?;
        let manifest: TargetManifest = toml::from_str(&text).map_err(|e| {
            format!(
                "{} is not a target manifest: {}",
                path.display(),
                e.message()
            )
        })?;
        for (name, argv) in [
            ("ownership", &manifest.hooks.ownership),
            ("registry", &manifest.hooks.registry),
            ("truth", &manifest.hooks.truth),
            ("score", &manifest.hooks.score),
            ("entries", &manifest.hooks.entries),
            ("score_batch", &manifest.hooks.score_batch),
            ("scaffold_variance", &manifest.hooks.scaffold_variance),
            ("describe", &manifest.hooks.describe),
            ("run", &manifest.hooks.run),
            ("units", &manifest.hooks.units),
            ("play", &manifest.hooks.play),
            ("intervene", &manifest.hooks.intervene),
            ("compare", &manifest.hooks.compare),
            ("port", &manifest.hooks.port),
        ] {
            if argv.as_ref().is_some_and(|a| a.is_empty()) {
                return Err(format!(
                    "{}: hook `{name}` has an empty command",
                    path.display()
                ));
            }
        }
        if manifest
            .resolution
            .is_some_and(|r| !r.is_finite() || r < 0.0)
        {
            return Err(format!(
                "{}: resolution must be a finite number ≥ 0",
                path.display()
            ));
        }
        if let Some(v) = &manifest.scaffold_variance {
            v.validate()
                .map_err(|e| format!("{}: {e}", path.display()))?;
            if manifest.hooks.scaffold_variance.is_some() {
                return Err(format!(
                    "{}: scaffold variance is given both as numbers and as a hook; keep one",
                    path.display()
                ));
            }
        }
        if let Some(table) = &manifest.ownership {
            if let Some(id) = &table.proposed {
                return Err(format!(
                    "{}: its [ownership] table is a proposal (proposed = \"{id}\"), not a declaration: check it against the harness, then rename `proposed` to `confirmed_from` to confirm it",
                    path.display()
                ));
            }
            if manifest.hooks.ownership.is_some() {
                return Err(format!(
                    "{}: the ownership map is given both as an [ownership] table and as a hook; keep one",
                    path.display()
                ));
            }
        }
        if manifest
            .calls
            .as_ref()
            .is_some_and(|c| c.categories.is_empty())
        {
            return Err(format!("{}: [calls] names no categories", path.display()));
        }
        if let Some(t) = &manifest.trajectories {
            if t.groups.is_empty() {
                return Err(format!(
                    "{}: [trajectories] names no groups",
                    path.display()
                ));
            }
            let known = t.benchmark.forgeries();
            for name in t.forgeries.iter().flatten() {
                if !known.iter().any(|f| f.name() == name) {
                    return Err(format!(
                        "{}: [trajectories] forgeries: {name:?} is not a forgery of {} ({})",
                        path.display(),
                        t.benchmark.name(),
                        known
                            .iter()
                            .map(|f| f.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
        }
        // `target.toml` has the parent "": the hooks run in the current folder. Absolute, so
        // a relative program is not resolved twice (against the folder, then from inside it).
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let dir = std::path::absolute(&dir)
            .map_err(|e| format!("{}: cannot resolve its folder: {e}", path.display()))?;
        let needs = |family: ProbeFamily, hooks: &[(&str, bool)]| -> Result<(), String> {
            if manifest.probes != family {
                return Ok(());
            }
            match hooks.iter().find(|(_, given)| !given) {
                Some((name, _)) => Err(format!(
                    "{}: probes = \"{}\" needs the `{name}` hook",
                    path.display(),
                    family.name()
                )),
                None => Ok(()),
            }
        };
        needs(
            ProbeFamily::Calls,
            &[
                ("entries", manifest.hooks.entries.is_some()),
                ("score_batch", manifest.hooks.score_batch.is_some()),
            ],
        )?;
        needs(
            ProbeFamily::Answers,
            &[
                ("describe", manifest.hooks.describe.is_some()),
                ("score_batch", manifest.hooks.score_batch.is_some()),
            ],
        )?;
        needs(
            ProbeFamily::Trajectories,
            &[
                ("units", manifest.hooks.units.is_some()),
                ("play", manifest.hooks.play.is_some()),
            ],
        )?;
        if manifest.probes == ProbeFamily::Calls && manifest.calls.is_none() {
            return Err(format!(
                "{}: probes = \"calls\" needs a [calls] table",
                path.display()
            ));
        }
        let task = manifest.answers.as_ref().and_then(|a| a.task.clone());
        Ok(ExternalTarget {
            manifest,
            dir,
            task,
            task_args: serde_json::Map::new(),
            samples_file: None,
        })
    }

    /// The same target auditing the task `spec` (an answer-family target named on the
    /// command line as `inspect:SPEC`), with task arguments and a local samples file.
    #[must_use]
    pub fn with_task(
        mut self,
        spec: String,
        args: serde_json::Map<String, Value>,
        samples_file: Option<PathBuf>,
    ) -> Self {
        self.task = Some(spec);
        self.task_args = args;
        self.samples_file = samples_file;
        self
    }

    /// Every hook program can be started: a program given with a folder exists there (relative
    /// ones in the manifest's folder) and is executable; a bare name is found on `PATH`. Checked
    /// before the audit plays anything, so a target that cannot run stops the command at once.
    ///
    /// # Errors
    /// The first hook that cannot start, naming its program and, where the manifest's folder
    /// has one, the setup script to run.
    pub fn check_spawnable(&self) -> Result<(), String> {
        let h = &self.manifest.hooks;
        for (name, argv) in [
            ("ownership", &h.ownership),
            ("registry", &h.registry),
            ("truth", &h.truth),
            ("score", &h.score),
            ("entries", &h.entries),
            ("score_batch", &h.score_batch),
            ("scaffold_variance", &h.scaffold_variance),
            ("describe", &h.describe),
            ("run", &h.run),
            ("units", &h.units),
            ("play", &h.play),
            ("intervene", &h.intervene),
            ("compare", &h.compare),
        ] {
            let Some(program) = argv.as_ref().and_then(|a| a.first()) else {
                continue;
            };
            if let Err(why) = find_program(program, &self.dir) {
                let setup = self.dir.join("setup.sh");
                let hint = if setup.is_file() {
                    format!("; run {} first", setup.display())
                } else {
                    String::new()
                };
                return Err(format!(
                    "target `{}`: hook `{name}` cannot start: {why}{hint}",
                    self.manifest.name
                ));
            }
        }
        Ok(())
    }

    /// The answer family's settings and the task, when the manifest is an answer target.
    pub fn answers_config(&self) -> Option<crate::answers::AnswersConfig> {
        let a = self.manifest.answers.as_ref();
        Some(crate::answers::AnswersConfig {
            sample: a.and_then(|a| a.sample).filter(|n| *n > 0),
            seed: a.map_or(0, |a| a.seed),
            epsilon: self.manifest.resolution.unwrap_or(0.0),
            forgeries: None,
            model: None,
        })
        .filter(|_| self.manifest.probes == ProbeFamily::Answers)
    }

    /// What `--model` asks of this answer target: the models, the samples they play (the
    /// manifest's `model_samples`, else 4), the audit's seeds as trials, the output tokens per
    /// request, and where the trials' logs go (`logs`: a folder and its name in audit.json).
    /// `None` without `--model`.
    pub fn model_run_settings(
        &self,
        options: &crate::targets::TargetOptions,
        seeds: &[u64],
        logs: Option<(PathBuf, String)>,
    ) -> Option<crate::answers::model_runs::ModelRunSettings> {
        let a = self.manifest.answers.as_ref();
        (!options.models.is_empty()).then(|| crate::answers::model_runs::ModelRunSettings {
            models: options.models.clone(),
            samples: a
                .and_then(|a| a.model_samples)
                .unwrap_or(crate::answers::model_runs::DEFAULT_SAMPLES)
                .max(1),
            seeds: seeds.to_vec(),
            max_tokens: options.max_tokens,
            logs,
        })
    }

    /// The answer family's task spec, if one is named.
    pub fn task(&self) -> Option<&str> {
        self.task.as_deref()
    }

    /// The answer family's request fields: the task, its arguments (the manifest's, then the
    /// command line's) and the samples file (the command line's, else the manifest's
    /// `samples_dir/NAME.jsonl` when it exists).
    fn task_request(&self) -> Value {
        let a = self.manifest.answers.as_ref();
        let mut args: serde_json::Map<String, Value> = a
            .map(|a| {
                a.args
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), serde_json::to_value(v).ok()?)))
                    .collect()
            })
            .unwrap_or_default();
        args.extend(self.task_args.clone());
        let samples = self.samples_file.clone().or_else(|| {
            let dir = a?.samples_dir.as_ref()?;
            let spec = self.task.as_deref()?;
            let file = self
                .dir
                .join(dir)
                .join(format!("{}.jsonl", task_short_name(spec)));
            file.is_file().then_some(file)
        });
        // Hooks run in the manifest's folder: a file under it is named relative to it, so
        // the card does not carry this machine's paths.
        let samples = samples.map(|p| {
            p.strip_prefix(&self.dir)
                .map_or_else(|_| p.display().to_string(), |r| r.display().to_string())
        });
        json!({
            "task": self.task,
            "args": args,
            "samples_file": samples,
        })
    }

    fn answers_timeout(&self) -> Duration {
        self.manifest
            .answers
            .as_ref()
            .and_then(|c| c.timeout_secs)
            .map_or(BATCH_TIMEOUT, Duration::from_secs)
    }

    /// The manifest as loaded.
    pub fn manifest(&self) -> &TargetManifest {
        &self.manifest
    }

    /// The probe family the manifest asks for.
    pub fn probes(&self) -> ProbeFamily {
        self.manifest.probes
    }

    /// The function-call settings, `sample_override` replacing the manifest's sample
    /// (`Some(0)` = every entry).
    pub fn calls_config(&self, sample_override: Option<usize>) -> Option<CallsConfig> {
        let c = self.manifest.calls.as_ref()?;
        let sample = sample_override.or(c.sample).filter(|n| *n > 0);
        Some(CallsConfig {
            categories: c.categories.clone(),
            sample,
            seed: c.seed,
            forgeries: None,
        })
    }

    /// The trajectory settings, `sample_override` replacing the manifest's sample (`Some(0)` =
    /// every unit).
    pub fn trajectories_config(
        &self,
        sample_override: Option<usize>,
        jobs: usize,
    ) -> Option<crate::trajectories::TrajectoriesConfig> {
        let t = self.manifest.trajectories.as_ref()?;
        let all = t.benchmark.forgeries();
        let forgeries = match &t.forgeries {
            None => all,
            Some(names) => all
                .into_iter()
                .filter(|f| {
                    *f == crate::trajectories::table::Forgery::Gold
                        || names.iter().any(|n| n == f.name())
                })
                .collect(),
        };
        Some(crate::trajectories::TrajectoriesConfig {
            forgeries,
            benchmark: t.benchmark,
            groups: t.groups.clone(),
            sample: sample_override.or(t.sample).filter(|n| *n > 0),
            seed: t.seed,
            replay: t.replay.unwrap_or(3),
            compare: None,
            port: if self.manifest.hooks.port.is_some() {
                t.port.unwrap_or(1)
            } else {
                0
            },
            jobs: jobs.max(1),
            epsilon: self.resolution(),
            scorer_kind: self.declared_scorer_kind(),
        })
    }

    /// What `--model` asks of this trajectory target: the models, the units per group, the
    /// audit's seeds as trials, the step limit and the output tokens per request (the command
    /// line's, else the manifest's, else 30 and 1024). `None` without `--model`.
    pub fn compare_settings(
        &self,
        options: &crate::targets::TargetOptions,
        seeds: &[u64],
    ) -> Option<crate::trajectories::compare::CompareSettings> {
        let t = self.manifest.trajectories.as_ref()?;
        (!options.models.is_empty()).then(|| crate::trajectories::compare::CompareSettings {
            models: options.models.clone(),
            units: t.compare_units.unwrap_or(1).max(1),
            seeds: seeds.to_vec(),
            max_steps: options.step_limit.or(t.compare_max_steps).unwrap_or(30),
            max_tokens: options.max_tokens.or(t.compare_max_tokens).unwrap_or(1024),
        })
    }

    fn batch_timeout(&self) -> Duration {
        let calls = self.manifest.calls.as_ref().and_then(|c| c.timeout_secs);
        let traj = (self.manifest.trajectories.as_ref()).and_then(|t| t.timeout_secs);
        calls.or(traj).map_or(BATCH_TIMEOUT, Duration::from_secs)
    }

    /// Runs batch hook `name`: its answer, or the failure with the hook's stderr tail (also
    /// when the answer is JSON that `read` rejects).
    fn batch<T>(
        &self,
        name: &str,
        argv: Option<&Vec<String>>,
        request: &Value,
        read: impl FnOnce(Value) -> Result<T, String>,
    ) -> Result<T, HookFailure> {
        let argv = argv.ok_or_else(|| HookFailure {
            cause: format!("the manifest names no `{name}` hook"),
            stderr_tail: String::new(),
        })?;
        let (answer, stderr) =
            run_hook_with_stderr(argv, &self.dir, request, self.batch_timeout())?;
        read(answer).map_err(|cause| HookFailure {
            cause: format!("the {name} hook's answer does not fit the protocol: {cause}"),
            stderr_tail: stderr,
        })
    }

    fn call(&self, name: &str, argv: &[String], request: &Value) -> Result<Value, String> {
        run_hook(argv, &self.dir, request, HOOK_TIMEOUT).map_err(|f| failure_text(name, &f))
    }

    /// Runs hook `name` and reads its answer with `read`; every failure, the answer not
    /// fitting the protocol included, is "`name` hook failed: <cause>; stderr: <tail>".
    fn call_read<T>(
        &self,
        name: &str,
        argv: &[String],
        request: &Value,
        read: impl FnOnce(Value) -> Result<T, String>,
    ) -> Result<T, String> {
        let (answer, stderr) = run_hook_with_stderr(argv, &self.dir, request, HOOK_TIMEOUT)
            .map_err(|f| failure_text(name, &f))?;
        read(answer).map_err(|cause| {
            let failure = HookFailure {
                cause,
                stderr_tail: stderr,
            };
            failure_text(name, &failure)
        })
    }
}

/// The short name of a task spec: `inspect_evals/gsm8k` → `gsm8k`, `dir/tasks.py@mine` →
/// `mine`, `dir/tasks.py` → `tasks`.
pub fn task_short_name(spec: &str) -> &str {
    if let Some((_, name)) = spec.rsplit_once('@') {
        return name;
    }
    let last = spec.rsplit('/').next().unwrap_or(spec);
    last.strip_suffix(".py").unwrap_or(last)
}

/// Whether a hook program can start: found where [`resolve_program`] looks, a file, executable.
fn find_program(program: &str, dir: &Path) -> Result<PathBuf, String> {
    let p = Path::new(program);
    let candidates: Vec<PathBuf> = if p.components().count() > 1 || p.is_absolute() {
        vec![resolve_program(program, dir)]
    } else {
        std::env::var_os("PATH")
            .map(|paths| std::env::split_paths(&paths).map(|d| d.join(p)).collect())
            .unwrap_or_default()
    };
    for c in &candidates {
        if let Ok(meta) = std::fs::metadata(c)
            && meta.is_file()
        {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                if meta.permissions().mode() & 0o111 == 0 {
                    return Err(format!("{} is not executable", c.display()));
                }
            }
            return Ok(c.clone());
        }
    }
    match candidates.as_slice() {
        [one] => Err(format!("{} does not exist", one.display())),
        _ => Err(format!("`{program}` is not on PATH")),
    }
}

/// The program of a hook: a relative path with a separator is the manifest folder's.
fn resolve_program(program: &str, dir: &Path) -> PathBuf {
    let p = Path::new(program);
    if p.is_relative() && p.components().count() > 1 {
        dir.join(p)
    } else {
        p.to_path_buf()
    }
}

/// The tail of a hook's stderr, filled by a thread that drains the pipe (so the hook never
/// blocks on a full pipe) and readable at any time, even while the hook still runs.
#[derive(Clone, Default)]
struct Tail(std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<u8>>>);

impl Tail {
    fn drain(&self, mut r: impl Read, cap: usize) {
        let mut buf = [0u8; 8192];
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let Ok(mut tail) = self.0.lock() else { break };
                    tail.extend(&buf[..n]);
                    let excess = tail.len().saturating_sub(cap);
                    tail.drain(..excess);
                }
            }
        }
    }

    fn text(&self) -> String {
        match self.0.lock() {
            Ok(mut t) => String::from_utf8_lossy(t.make_contiguous()).into_owned(),
            Err(_) => String::new(),
        }
    }
}

/// The environment variable that marks a hook's processes: each call sets its own value.
pub const HOOK_MARKER: &str = "BENCHAUDIT_HOOK";

/// A value of [`HOOK_MARKER`] no other call of this process or any other process uses.
fn new_marker() -> String {
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{n}", std::process::id())
}

/// Everything a hook started: its process group, killed whole, and — on Linux — every process
/// that carries the call's [`HOOK_MARKER`] in its environment, found through `/proc` and
/// killed too. Killed when dropped, so nothing of a hook outlives its call or holds a pipe.
///
/// Why the marker: a child that calls `setsid` (or `setpgid`) leaves the hook's process group,
/// so the group kill misses it, and it leaves the session too, so a session kill would miss it
/// as well. A process-wide subreaper (PR_SET_CHILD_SUBREAPER) would inherit such orphans, but
/// hooks run on several threads at once (and tests in parallel), so it could not tell whose
/// orphan is whose; a cgroup needs a delegated hierarchy an unprivileged user does not have.
/// The environment is inherited through fork, exec, `setsid` and `setpgid` alike, and each
/// call's value is unique, so the marker names exactly the call's descendants wherever they
/// were reparented. What it cannot reach: a descendant that both leaves the group and clears
/// its environment (`env -i`).
struct Group {
    #[cfg(unix)]
    pgid: i32,
    marker: String,
    /// Whether the marked processes were swept: the sweep runs until none is left alive, so
    /// once is enough.
    swept: std::cell::Cell<bool>,
}

impl Group {
    fn kill(&self) {
        #[cfg(unix)]
        {
            // The group outlives its leader while a member lives, so the id is not reused.
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(self.pgid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }

    /// Kills the group, then every process marked as this call's, until none is left alive
    /// (a marked process may fork while it is found; a killed one cannot).
    fn kill_all(&self) {
        self.kill();
        if self.swept.replace(true) {
            return;
        }
        #[cfg(target_os = "linux")]
        for _ in 0..16 {
            if kill_marked(&format!("{HOOK_MARKER}={}", self.marker)) == 0 {
                break;
            }
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill_all();
        running().remove(&self.marker);
    }
}

/// The hook calls in flight (marker → process group): what [`kill_running_hooks`] reaches
/// when the process is told to stop. A hook runs in its own process group, so a Ctrl-C or a
/// `kill` aimed at benchaudit does not reach it, and the drop that kills it never runs when
/// the process dies of a signal: without this, an interrupted audit leaves its hooks running.
fn running() -> std::sync::MutexGuard<'static, std::collections::BTreeMap<String, i32>> {
    static RUNNING: std::sync::Mutex<std::collections::BTreeMap<String, i32>> =
        std::sync::Mutex::new(std::collections::BTreeMap::new());
    RUNNING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Kills every hook call in flight (its process group and every process carrying its
/// marker), for a binary that is about to exit on a signal. Returns how many calls it reached.
pub fn kill_running_hooks() -> usize {
    let live: Vec<(String, i32)> = running().iter().map(|(m, g)| (m.clone(), *g)).collect();
    for (marker, pgid) in &live {
        let group = Group {
            #[cfg(unix)]
            pgid: *pgid,
            marker: marker.clone(),
            swept: std::cell::Cell::new(false),
        };
        #[cfg(not(unix))]
        let _ = pgid;
        group.kill_all();
    }
    live.len()
}

/// Kills every live process whose environment holds the entry `entry`; returns how many.
#[cfg(target_os = "linux")]
fn kill_marked(entry: &str) -> usize {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let me = std::process::id();
    let mut killed = 0;
    for pid in dir
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|&pid| pid != me)
    {
        // Another user's process is unreadable, a zombie's environment is empty: skipped.
        let Ok(file) = std::fs::File::open(format!("/proc/{pid}/environ")) else {
            continue;
        };
        let mut environ = Vec::new();
        if file.take(1 << 20).read_to_end(&mut environ).is_err() {
            continue;
        }
        if environ.split(|&b| b == 0).any(|e| e == entry.as_bytes())
            && let Ok(pid) = i32::try_from(pid)
        {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
            killed += 1;
        }
    }
    killed
}

/// Parses a hook's answer into a JSON tree of at most [`MAX_ANSWER_VALUES`] values; `Ok(None)`
/// when it holds more (the parse stops there).
fn parse_bounded(bytes: &[u8]) -> Result<Option<Value>, serde_json::Error> {
    let mut budget = MAX_ANSWER_VALUES;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    match serde::de::DeserializeSeed::deserialize(Bounded(&mut budget), &mut de) {
        Ok(v) => de.end().map(|()| Some(v)),
        Err(_) if budget == 0 => Ok(None),
        Err(e) => Err(e),
    }
}

/// One JSON value, built while a budget of values lasts.
struct Bounded<'a>(&'a mut usize);

impl Bounded<'_> {
    fn spend<E: serde::de::Error>(&mut self) -> Result<(), E> {
        if *self.0 == 0 {
            return Err(E::custom(format!(
                "more than {MAX_ANSWER_VALUES} JSON values"
            )));
        }
        *self.0 -= 1;
        Ok(())
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Bounded<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Bounded<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: serde::de::Error>(mut self, b: bool) -> Result<Value, E> {
        self.spend()?;
        Ok(Value::Bool(b))
    }
    fn visit_i64<E: serde::de::Error>(mut self, n: i64) -> Result<Value, E> {
        self.spend()?;
        Ok(Value::from(n))
    }
    fn visit_u64<E: serde::de::Error>(mut self, n: u64) -> Result<Value, E> {
        self.spend()?;
        Ok(Value::from(n))
    }
    fn visit_f64<E: serde::de::Error>(mut self, n: f64) -> Result<Value, E> {
        self.spend()?;
        Ok(serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E: serde::de::Error>(mut self, s: &str) -> Result<Value, E> {
        self.spend()?;
        Ok(Value::String(s.to_string()))
    }
    fn visit_string<E: serde::de::Error>(mut self, s: String) -> Result<Value, E> {
        self.spend()?;
        Ok(Value::String(s))
    }
    fn visit_unit<E: serde::de::Error>(mut self) -> Result<Value, E> {
        self.spend()?;
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(mut self, mut seq: A) -> Result<Value, A::Error> {
        self.spend()?;
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(Bounded(&mut *self.0))? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(mut self, mut map: A) -> Result<Value, A::Error> {
        self.spend()?;
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Bounded(&mut *self.0))?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// Runs one hook in its own process group: writes `request`, drains stdout (at most
/// [`MAX_ANSWER_BYTES`]) and stderr (its last [`STDERR_TAIL_BYTES`] kept) concurrently, and
/// waits at most `timeout` in all; then the whole group is killed, whatever happened. Every
/// failure (cannot start, exit status, timeout, oversize, not JSON) is a [`HookFailure`].
pub fn run_hook(
    argv: &[String],
    dir: &Path,
    request: &Value,
    timeout: Duration,
) -> Result<Value, HookFailure> {
    run_hook_with_stderr(argv, dir, request, timeout).map(|(v, _)| v)
}

/// [`run_hook`], also returning the tail of the hook's stderr on success: an answer that is
/// JSON but does not fit the protocol is a failure too, and what the hook logged says why.
pub fn run_hook_with_stderr(
    argv: &[String],
    dir: &Path,
    request: &Value,
    timeout: Duration,
) -> Result<(Value, String), HookFailure> {
    let fail = |cause: String, stderr_tail: String| HookFailure { cause, stderr_tail };
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| fail("empty hook command".into(), String::new()))?;
    let resolved = resolve_program(program, dir);
    let mut command = Command::new(&resolved);
    command
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let marker = new_marker();
    command.env(HOOK_MARKER, &marker);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().map_err(|e| {
        fail(
            format!("cannot start `{}`: {e}", resolved.display()),
            String::new(),
        )
    })?;
    let pgid = i32::try_from(child.id()).unwrap_or(i32::MAX);
    running().insert(marker.clone(), pgid);
    let group = Group {
        #[cfg(unix)]
        pgid,
        marker,
        swept: std::cell::Cell::new(false),
    };
    let input = request.to_string();
    let pipes = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let (Some(mut stdin), Some(mut stdout), Some(stderr)) = pipes else {
        group.kill();
        let _ = child.wait();
        return Err(fail("hook pipes unavailable".into(), String::new()));
    };
    // A hook that exits without reading its request closes the pipe: not our error to report.
    std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    // stdout: read until EOF or one byte past the bound (then the reader stops and reports
    // oversize at once: the group is killed rather than left blocked on a full pipe).
    let (out_tx, out_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let r = (&mut stdout)
            .take(MAX_ANSWER_BYTES as u64 + 1)
            .read_to_end(&mut buf);
        let _ = out_tx.send(r.map(|_| buf));
    });
    let tail = Tail::default();
    let drain = tail.clone();
    let (err_tx, err_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        drain.drain(stderr, STDERR_TAIL_BYTES);
        let _ = err_tx.send(());
    });
    let deadline = Instant::now() + timeout;
    let timed_out = || {
        format!(
            "`{program}` timed out after {}s (its process group was killed)",
            timeout.as_secs()
        )
    };
    // Poll the answer and the leader together. Once the leader exits, the rest of its group
    // is killed, so a forked child holding stdout open neither survives nor stalls us; an
    // answer past the bound kills the group at once instead of leaving it blocked on a pipe.
    let (mut out, mut status) = (None, None);
    while out.is_none() || status.is_none() {
        if out.is_none() {
            match out_rx.try_recv() {
                Ok(r) => {
                    if matches!(&r, Ok(b) if b.len() > MAX_ANSWER_BYTES) {
                        group.kill();
                    }
                    out = Some(Some(r));
                }
                Err(std::sync::mpsc::TryRecvError::Disconnected) => out = Some(None),
                Err(std::sync::mpsc::TryRecvError::Empty) => {}
            }
        }
        if status.is_none() {
            match child.try_wait() {
                Ok(Some(s)) => {
                    // Also what left the group: it may hold stdout open.
                    group.kill_all();
                    status = Some(Ok(s));
                }
                Ok(None) => {}
                Err(e) => {
                    group.kill();
                    let _ = child.wait();
                    status = Some(Err(format!("waiting for `{program}`: {e}")));
                }
            }
        }
        if Instant::now() >= deadline && (out.is_none() || status.is_none()) {
            group.kill_all();
            let _ = child.wait();
            return Err(fail(timed_out(), tail.text()));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let (Some(out), Some(status)) = (out, status) else {
        return Err(fail("the hook's reader thread failed".into(), tail.text()));
    };
    // Whatever the leader did, nothing of the group outlives the call.
    group.kill_all();
    // stderr closes once the group is dead; a process that left the group may hold it, so
    // the wait is bounded.
    let _ = err_rx.recv_timeout(Duration::from_millis(500));
    let err = tail.text();
    let status = status.map_err(|c| fail(c, err.clone()))?;
    let out = match out {
        Some(Ok(out)) => out,
        Some(Err(e)) => return Err(fail(format!("reading `{program}`: {e}"), err)),
        None => return Err(fail("the hook's reader thread failed".into(), err)),
    };
    if out.len() > MAX_ANSWER_BYTES {
        return Err(fail(
            format!(
                "`{program}` answered more than {MAX_ANSWER_BYTES} bytes (its process group was killed)"
            ),
            err,
        ));
    }
    if !status.success() {
        return Err(fail(format!("`{program}` exited with {status}"), err));
    }
    match parse_bounded(&out) {
        Ok(Some(v)) => Ok((v, err)),
        Ok(None) => Err(fail(
            format!("`{program}` answered more than {MAX_ANSWER_VALUES} JSON values"),
            err,
        )),
        Err(e) => Err(fail(format!("`{program}` did not answer JSON: {e}"), err)),
    }
}

impl ProbeFamily {
    /// The manifest's spelling.
    pub fn name(self) -> &'static str {
        match self {
            ProbeFamily::Records => "records",
            ProbeFamily::Calls => "calls",
            ProbeFamily::Answers => "answers",
            ProbeFamily::Trajectories => "trajectories",
        }
    }
}

impl crate::answers::AnswerScorer for ExternalTarget {
    fn describe(&self) -> Result<crate::answers::Described, HookFailure> {
        let argv = self
            .manifest
            .hooks
            .describe
            .as_ref()
            .ok_or_else(|| HookFailure {
                cause: "the manifest names no `describe` hook".into(),
                stderr_tail: String::new(),
            })?;
        let (v, stderr) = run_hook_with_stderr(
            argv,
            &self.dir,
            &self.task_request(),
            self.answers_timeout(),
        )?;
        serde_json::from_value(v).map_err(|e| HookFailure {
            cause: format!("the describe hook's answer does not fit the protocol: {e}"),
            stderr_tail: stderr,
        })
    }

    fn score(
        &self,
        items: &[crate::answers::AnswerItem],
    ) -> Result<Vec<crate::answers::ItemScores>, HookFailure> {
        let argv = self
            .manifest
            .hooks
            .score_batch
            .as_ref()
            .ok_or_else(|| HookFailure {
                cause: "the manifest names no `score_batch` hook".into(),
                stderr_tail: String::new(),
            })?;
        let mut out = Vec::with_capacity(items.len());
        for chunk in items.chunks(BATCH_ITEMS) {
            let mut request = self.task_request();
            request["items"] = json!(chunk);
            let (v, stderr) =
                run_hook_with_stderr(argv, &self.dir, &request, self.answers_timeout())?;
            let results: Vec<crate::answers::ItemScores> = v
                .get("results")
                .cloned()
                .ok_or_else(|| "no `results` array".to_string())
                .and_then(|r| serde_json::from_value(r).map_err(|e| e.to_string()))
                .map_err(|e| HookFailure {
                    cause: format!("the score_batch hook's answer does not fit the protocol: {e}"),
                    stderr_tail: stderr,
                })?;
            out.extend(results);
        }
        Ok(out)
    }

    fn run_model(
        &self,
        request: &crate::answers::model_runs::RunRequest<'_>,
        log_dir: Option<&Path>,
    ) -> Option<Result<Value, HookFailure>> {
        let argv = self.manifest.hooks.run.as_ref()?;
        let mut body = self.task_request();
        let fields = match serde_json::to_value(request) {
            Ok(Value::Object(fields)) => fields,
            _ => serde_json::Map::new(),
        };
        for (k, v) in fields {
            body[k] = v;
        }
        if let Some(dir) = log_dir {
            // The folder is this audit's own: an earlier audit's logs there are replaced.
            let ready = match std::fs::remove_dir_all(dir) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => std::fs::create_dir_all(dir),
            };
            if let Err(e) = ready {
                return Some(Err(HookFailure {
                    cause: format!("cannot prepare the log folder {}: {e}", dir.display()),
                    stderr_tail: String::new(),
                }));
            }
            body["log_dir"] = json!(dir.display().to_string());
        }
        let timeout = (self.manifest.answers.as_ref())
            .and_then(|a| a.model_timeout_secs)
            .map_or(MODEL_RUN_TIMEOUT, Duration::from_secs);
        Some(run_hook_with_stderr(argv, &self.dir, &body, timeout).map(|(v, _)| v))
    }
}

impl CallChecker for ExternalTarget {
    fn entries(&self, categories: &[String]) -> Result<Entries, HookFailure> {
        let argv = self
            .manifest
            .hooks
            .entries
            .as_ref()
            .ok_or_else(|| HookFailure {
                cause: "the manifest names no `entries` hook".into(),
                stderr_tail: String::new(),
            })?;
        let v = run_hook(
            argv,
            &self.dir,
            &json!({"categories": categories}),
            self.batch_timeout(),
        )?;
        let e: Entries = serde_json::from_value(v).map_err(|e| HookFailure {
            cause: format!("the entries hook's answer does not fit the protocol: {e}"),
            stderr_tail: String::new(),
        })?;
        let missing: Vec<&String> = categories
            .iter()
            .filter(|c| !e.categories.iter().any(|x| &x.name == *c))
            .collect();
        if !missing.is_empty() {
            return Err(HookFailure {
                cause: format!(
                    "the entries hook left out {}",
                    missing
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                stderr_tail: String::new(),
            });
        }
        Ok(e)
    }

    fn score(&self, items: &[ScoreItem]) -> Result<Vec<CheckVerdict>, HookFailure> {
        let argv = self
            .manifest
            .hooks
            .score_batch
            .as_ref()
            .ok_or_else(|| HookFailure {
                cause: "the manifest names no `score_batch` hook".into(),
                stderr_tail: String::new(),
            })?;
        let mut out = Vec::with_capacity(items.len());
        for chunk in items.chunks(BATCH_ITEMS) {
            let v = run_hook(
                argv,
                &self.dir,
                &json!({"items": chunk}),
                self.batch_timeout(),
            )?;
            let results: Vec<CheckVerdict> = v
                .get("results")
                .cloned()
                .ok_or_else(|| "no `results` array".to_string())
                .and_then(|r| serde_json::from_value(r).map_err(|e| e.to_string()))
                .map_err(|e| HookFailure {
                    cause: format!("the score_batch hook's answer does not fit the protocol: {e}"),
                    stderr_tail: String::new(),
                })?;
            if results.len() != chunk.len() {
                return Err(HookFailure {
                    cause: format!(
                        "the score_batch hook answered {} verdicts for {} outputs",
                        results.len(),
                        chunk.len()
                    ),
                    stderr_tail: String::new(),
                });
            }
            out.extend(results);
        }
        Ok(out)
    }
}

impl crate::trajectories::TrajectoryPlayer for ExternalTarget {
    fn units(
        &self,
        groups: &[String],
        jobs: usize,
    ) -> Result<crate::trajectories::Catalogue, HookFailure> {
        self.batch(
            "units",
            self.manifest.hooks.units.as_ref(),
            &json!({"groups": groups, "jobs": jobs}),
            |v| serde_json::from_value(v).map_err(|e| e.to_string()),
        )
    }

    fn play(
        &self,
        items: &[crate::trajectories::PlayItem],
        jobs: usize,
    ) -> Result<Vec<crate::trajectories::Played>, HookFailure> {
        let mut out = Vec::with_capacity(items.len());
        for chunk in items.chunks(BATCH_ITEMS) {
            let results: Vec<crate::trajectories::Played> = self.batch(
                "play",
                self.manifest.hooks.play.as_ref(),
                &json!({"items": chunk, "jobs": jobs}),
                |v| {
                    let r = v.get("results").cloned().ok_or("no `results` array")?;
                    serde_json::from_value(r).map_err(|e| e.to_string())
                },
            )?;
            out.extend(results);
        }
        Ok(out)
    }

    fn intervene(&self, request: &Value) -> Option<Result<Value, HookFailure>> {
        let argv = self.manifest.hooks.intervene.as_ref()?;
        Some(self.batch("intervene", Some(argv), request, Ok))
    }

    fn compare(&self, request: &Value) -> Option<Result<Value, HookFailure>> {
        let argv = self.manifest.hooks.compare.as_ref()?;
        Some(self.batch("compare", Some(argv), request, Ok))
    }

    fn port(&self, request: &Value) -> Option<Result<Value, HookFailure>> {
        let argv = self.manifest.hooks.port.as_ref()?;
        Some(self.batch("port", Some(argv), request, Ok))
    }
}

impl Target for ExternalTarget {
    fn name(&self) -> String {
        let fixed = self.manifest.answers.as_ref().and_then(|a| a.task.as_ref());
        match (&self.task, fixed) {
            (Some(task), None) => format!("{}: {task}", self.manifest.name),
            _ => self.manifest.name.clone(),
        }
    }

    fn ownership(&self) -> Option<DeclaredOwnership> {
        // A broken ownership hook gives no declaration: the stage is not probed, never passed.
        self.ownership_hook().and_then(Result::ok)
    }

    fn registry(&self) -> Option<Vec<TargetTask>> {
        self.registry_hook().and_then(Result::ok)
    }

    fn ownership_hook(&self) -> Option<Result<DeclaredOwnership, String>> {
        if let Some(table) = &self.manifest.ownership {
            return Some(Ok(table.declared()));
        }
        let argv = self.manifest.hooks.ownership.as_ref()?;
        Some(self.call_read("ownership", argv, &json!({}), |v| {
            serde_json::from_value(v)
                .map_err(|e| format!("its answer does not fit the protocol: {e}"))
        }))
    }

    fn registry_hook(&self) -> Option<Result<Vec<TargetTask>, String>> {
        let argv = self.manifest.hooks.registry.as_ref()?;
        Some(self.call_read("registry", argv, &json!({}), |v| {
            let tasks = v
                .get("tasks")
                .cloned()
                .ok_or_else(|| "its answer has no `tasks` array".to_string())?;
            serde_json::from_value(tasks)
                .map_err(|e| format!("its answer does not fit the protocol: {e}"))
        }))
    }

    fn scaffold_variance(&self) -> Option<Result<ScaffoldVariance, String>> {
        if let Some(v) = &self.manifest.scaffold_variance {
            return Some(Ok(v.clone()));
        }
        let argv = self.manifest.hooks.scaffold_variance.as_ref()?;
        // Non-finite numbers cannot be JSON: a hook printing `NaN` did not answer JSON, one
        // printing 1e999 is out of range; both are failures here.
        Some(self.call_read("scaffold_variance", argv, &json!({}), |v| {
            let v: ScaffoldVariance = serde_json::from_value(v)
                .map_err(|e| format!("its answer does not fit the protocol: {e}"))?;
            v.validate()?;
            Ok(v)
        }))
    }

    fn truth(&self, task: &str, seed: u64) -> Option<Result<Vec<Value>, String>> {
        let argv = self.manifest.hooks.truth.as_ref()?;
        Some(
            self.call("truth", argv, &json!({"task": task, "seed": seed}))
                .and_then(|v| match v.get("records") {
                    Some(Value::Array(r)) => Ok(r.clone()),
                    _ => Err("the truth hook failed: it answered without a `records` array".into()),
                }),
        )
    }

    fn score(&self, task: &str, seed: u64, submission: &Forged) -> Option<Result<f64, String>> {
        let argv = self.manifest.hooks.score.as_ref()?;
        Some(
            self.call(
                "score",
                argv,
                &json!({"task": task, "seed": seed, "submission": submission}),
            )
            .and_then(|v| {
                v.get("score")
                    .and_then(Value::as_f64)
                    .filter(|s| s.is_finite())
                    .ok_or_else(|| {
                        "the score hook failed: it answered without a finite `score`".to_string()
                    })
            }),
        )
    }

    fn resolution(&self) -> f64 {
        self.manifest.resolution.unwrap_or(1e-9)
    }

    fn declared_scorer_kind(&self) -> ScorerKind {
        self.manifest.scorer_kind.unwrap_or(ScorerKind::Unknown)
    }
}
