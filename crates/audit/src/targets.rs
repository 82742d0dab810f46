//! The whole audit one invocation asks for: ComtradeBench as shipped and as repaired, then every
//! outside target named by manifest path or bare name, into one [`AuditReport`]. `benchaudit
//! audit` is this function behind flags; a Rust caller gets the same card without the binary.

use std::path::{Path, PathBuf};

use crate::external::{ExternalTarget, ProbeFamily};
use crate::{
    AnswersTargetAudit, AuditConfig, AuditReport, CallsTargetAudit, ComtradeTarget, Configuration,
    Resolution, TrajectoriesTargetAudit, answers, audit_comtrade, audit_external, calls,
    trajectories,
};

/// Most seeds per cell an audit accepts (each seed is one episode of every cell).
pub const MAX_SEEDS: usize = 1000;

/// Why an audit could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// A target manifest could not be found, read or understood (the user's input).
    #[error("{0}")]
    Target(String),
    /// More seeds than [`MAX_SEEDS`].
    #[error("{given} seeds given; the audit takes at most {MAX_SEEDS}")]
    TooManySeeds {
        /// How many were given.
        given: usize,
    },
    /// The ComtradeBench stages failed (a stage's hook or tokenizer).
    #[error("audit failed: {0}")]
    Comtrade(String),
    /// An outside target's stages failed.
    #[error("auditing {path}: {why}")]
    External {
        /// The manifest.
        path: PathBuf,
        /// What failed.
        why: String,
    },
}

/// A target named on the command line: its manifest and, for the answer family, the task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetRef {
    /// The manifest.
    pub manifest: PathBuf,
    /// The task an answer target audits (`--target inspect:SPEC`).
    pub task: Option<String>,
}

/// Command-line settings that apply to every target of their family.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TargetOptions {
    /// Overrides a function-call target's `[calls] sample` (entries per category; 0 = every
    /// entry).
    pub calls_sample: Option<usize>,
    /// Overrides a trajectory target's `[trajectories] sample` (tasks per domain or suite; 0 =
    /// every task).
    pub tasks_sample: Option<usize>,
    /// Task arguments for answer targets (Inspect's `-T key=value`).
    pub task_args: serde_json::Map<String, serde_json::Value>,
    /// A local samples file for answer targets whose dataset is on the hub.
    pub samples_file: Option<PathBuf>,
    /// `--model`: endpoints a trajectory target runs under its shipped agent implementations.
    pub models: Vec<crate::trajectories::compare::ModelEndpoint>,
    /// `--step-limit`: the benchmark's step limit for those runs.
    pub step_limit: Option<u32>,
    /// `--max-output-tokens`: output tokens per model request in those runs.
    pub max_tokens: Option<u64>,
    /// `--battery`: a forgery battery given as data, run on every target instead of its
    /// family's whole battery ([`crate::proposed`]).
    pub battery: Option<crate::proposed::ProposedBattery>,
    /// The audit's output folder: `--model` runs on answer targets write their Inspect logs
    /// under its `inspect-logs/` (none: the logs are not kept).
    pub out_dir: Option<PathBuf>,
}

/// A target read, validated and ready to audit.
#[derive(Debug, Clone)]
pub struct LoadedTarget {
    /// Where it was named from.
    pub manifest: PathBuf,
    /// The target.
    pub target: ExternalTarget,
}

/// Reads and validates every target before anything is played: each manifest parses with
/// known fields only, names the hooks its probe family needs, and every hook program can
/// start. A typo in `--target` therefore stops the command before the first episode or model
/// request.
///
/// # Errors
/// [`AuditError::Target`] naming the manifest and what is wrong with it.
pub fn load_targets(
    refs: &[TargetRef],
    options: &TargetOptions,
) -> Result<Vec<LoadedTarget>, AuditError> {
    let mut out = Vec::new();
    for r in refs {
        let mut target = ExternalTarget::load(&r.manifest).map_err(AuditError::Target)?;
        if let Some(task) = &r.task {
            if target.probes() != ProbeFamily::Answers {
                return Err(AuditError::Target(format!(
                    "{}: a task (`{task}`) is given, but the target probes {}, not answers",
                    r.manifest.display(),
                    target.probes().name()
                )));
            }
            target = target.with_task(
                task.clone(),
                options.task_args.clone(),
                options.samples_file.clone(),
            );
        }
        if target.probes() == ProbeFamily::Answers && target.task().is_none() {
            return Err(AuditError::Target(format!(
                "{}: an answer target needs a task: `--target inspect:TASK` or `[answers] task`",
                r.manifest.display()
            )));
        }
        if let Some(b) = &options.battery
            && b.family != target.probes()
        {
            return Err(AuditError::Target(format!(
                "--battery {}: a battery for the {} family, but {} probes {}",
                b.file,
                b.family.name(),
                r.manifest.display(),
                target.probes().name()
            )));
        }
        // A trajectory battery names forgeries of every benchmark; this one must build them.
        if let (Some(b), Some(t)) = (&options.battery, target.trajectories_config(None, 1)) {
            let own = t.benchmark.forgeries();
            if let Some(f) = (b.forgeries.iter()).find(|f| !own.iter().any(|o| o.name() == *f)) {
                return Err(AuditError::Target(format!(
                    "--battery {}: {} does not build the forgery `{f}` (it builds {})",
                    b.file,
                    r.manifest.display(),
                    own.iter().map(|o| o.name()).collect::<Vec<_>>().join(", ")
                )));
            }
        }
        target.check_spawnable().map_err(AuditError::Target)?;
        out.push(LoadedTarget {
            manifest: r.manifest.clone(),
            target,
        });
    }
    Ok(out)
}

/// Audits ComtradeBench (as shipped and repaired) under `config`, then each target (loaded by
/// [`load_targets`]). A record-set target is probed on every seed its registry lists, or on
/// `config.seeds` for tasks that list none.
///
/// # Errors
/// [`AuditError`] naming the target or stage that failed.
pub fn audit_all(
    config: &AuditConfig,
    targets: &[LoadedTarget],
    options: &TargetOptions,
) -> Result<AuditReport, AuditError> {
    check_seeds(&config.seeds)?;
    let comtrade = [
        ComtradeTarget::new(Configuration::AsShipped),
        ComtradeTarget::new(Configuration::Repaired),
    ];
    let mut report = AuditReport {
        suite: *comtrade[0].suite(),
        comtrade: audit_comtrade(config, &comtrade).map_err(AuditError::Comtrade)?,
        resolutions: comtrade.iter().map(|t| Resolution::of(t)).collect(),
        external: Vec::new(),
        calls: Vec::new(),
        answers: Vec::new(),
        trajectories: Vec::new(),
    };
    for LoadedTarget { manifest, target } in targets {
        report.resolutions.push(Resolution::of(target));
        let name = crate::Target::name(target);
        match target.probes() {
            ProbeFamily::Records => {
                let audit = audit_external(target, &config.seeds, options.battery.as_ref())
                    .map_err(|why| AuditError::External {
                        path: manifest.clone(),
                        why,
                    })?;
                report.external.push(audit);
            }
            ProbeFamily::Calls => {
                let mut calls_config =
                    target.calls_config(options.calls_sample).ok_or_else(|| {
                        AuditError::Target(format!(
                            "{}: probes = \"calls\" needs a [calls] table",
                            manifest.display()
                        ))
                    })?;
                // Figures are filed under the manifest's folder name (`targets/bfcl/` → `bfcl`).
                let slug = manifest
                    .parent()
                    .and_then(Path::file_name)
                    .map_or("calls".into(), |n| n.to_string_lossy().to_lowercase());
                calls_config.forgeries = options.battery.as_ref().map(|b| b.forgeries.clone());
                let mut audit = calls::audit(&name, target, &calls_config);
                if let Some(b) = &options.battery {
                    let run = b.run_against(
                        &ProbeFamily::Calls.forgeries(),
                        &[calls::forge::Forgery::Correct.name()],
                    );
                    audit.cards = audit.cards.into_iter().map(|c| run.cap(c)).collect();
                    audit.battery = Some(run);
                }
                report.calls.push(CallsTargetAudit { slug, audit });
            }
            ProbeFamily::Trajectories => {
                let mut t_config = target
                    .trajectories_config(options.tasks_sample, config.threads)
                    .ok_or_else(|| {
                        AuditError::Target(format!(
                            "{}: probes = \"trajectories\" needs a [trajectories] table",
                            manifest.display()
                        ))
                    })?;
                // Figures and forged runs are filed under the manifest's folder name
                // (`targets/tau2/` → `tau2`).
                let slug = manifest
                    .parent()
                    .and_then(Path::file_name)
                    .map_or("target".into(), |n| n.to_string_lossy().to_lowercase());
                t_config.compare = target.compare_settings(options, &config.seeds);
                if let Some(b) = &options.battery {
                    t_config
                        .forgeries
                        .retain(|f| *f == trajectories::table::Forgery::Gold || b.runs(f.name()));
                }
                let mut audit = trajectories::audit(&name, target, &t_config);
                if let Some(b) = &options.battery {
                    // Left out: the benchmark's own forgeries the battery does not run.
                    let own: Vec<&str> = (target.trajectories_config(None, 1))
                        .map(|c| c.forgeries.iter().map(|f| f.name()).collect())
                        .unwrap_or_default();
                    let run = b.run_against(&own, &["gold"]);
                    audit.cards = audit.cards.into_iter().map(|c| run.cap(c)).collect();
                    audit.battery = Some(run);
                }
                report
                    .trajectories
                    .push(TrajectoriesTargetAudit { slug, audit });
            }
            ProbeFamily::Answers => {
                let (Some(mut a_config), Some(task)) = (target.answers_config(), target.task())
                else {
                    continue;
                };
                a_config.forgeries = options.battery.as_ref().map(|b| b.forgeries.clone());
                let slug: String = crate::external::task_short_name(task)
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() {
                            c.to_ascii_lowercase()
                        } else {
                            '_'
                        }
                    })
                    .collect();
                let logs = options.out_dir.as_ref().map(|out| {
                    let name = format!("{INSPECT_LOGS}/{slug}");
                    (out.join(&name), name)
                });
                a_config.model = target.model_run_settings(options, &config.seeds, logs);
                let mut audit = answers::audit(&name, target, &a_config);
                if let Some(b) = &options.battery {
                    let run = b.run_against(
                        &ProbeFamily::Answers.forgeries(),
                        &[answers::forge::Forgery::Target.name()],
                    );
                    audit.card = run.cap(audit.card);
                    audit.battery = Some(run);
                }
                report.answers.push(AnswersTargetAudit { slug, audit });
            }
        }
    }
    Ok(report)
}

/// Refuses more seeds than [`MAX_SEEDS`] (checked before any episode is played).
///
/// # Errors
/// [`AuditError::TooManySeeds`].
pub fn check_seeds(seeds: &[u64]) -> Result<(), AuditError> {
    if seeds.len() > MAX_SEEDS {
        return Err(AuditError::TooManySeeds { given: seeds.len() });
    }
    Ok(())
}

/// The audit folder's subfolder of Inspect logs that `--model` runs on answer targets write
/// (`inspect-logs/<task>/<model>/seed-<s>/`).
pub const INSPECT_LOGS: &str = "inspect-logs";

/// The prefix of an Inspect task named on the command line.
pub const INSPECT_PREFIX: &str = "inspect:";

/// A target as the command line names it: a manifest path, a bare target name (`bfcl`) looked
/// up as `targets/NAME/target.toml` in `cwd` and its parents, or `inspect:SPEC` — the shipped
/// Inspect target (`targets/inspect/target.toml`) auditing the task SPEC
/// (`inspect_evals/NAME`, or `path/to/tasks.py[@task]` relative to `cwd`, which must exist).
///
/// # Errors
/// [`AuditError::Target`] when a bare name is found in none of them, or a task file is missing.
pub fn resolve_target(arg: &str, cwd: &Path) -> Result<TargetRef, AuditError> {
    if let Some(spec) = arg.strip_prefix(INSPECT_PREFIX) {
        let manifest = find_named("inspect", cwd)?;
        let task = if spec.starts_with("inspect_evals/") || !spec.contains(".py") {
            if spec.trim().is_empty() || !spec.starts_with("inspect_evals/") {
                return Err(AuditError::Target(format!(
                    "`{arg}`: name an Inspect task as inspect:inspect_evals/NAME or inspect:path/to/tasks.py[@task]"
                )));
            }
            spec.to_string()
        } else {
            let (file, task) = match spec.split_once('@') {
                Some((f, t)) => (f, Some(t)),
                None => (spec, None),
            };
            let path = cwd.join(file);
            if !path.is_file() {
                return Err(AuditError::Target(format!(
                    "`{arg}`: no task file {}",
                    path.display()
                )));
            }
            match task {
                Some(t) => format!("{}@{t}", path.display()),
                None => path.display().to_string(),
            }
        };
        return Ok(TargetRef {
            manifest,
            task: Some(task),
        });
    }
    let path = Path::new(arg);
    let bare = path.components().count() == 1 && path.extension().is_none();
    if !bare || path.exists() {
        return Ok(TargetRef {
            manifest: path.to_path_buf(),
            task: None,
        });
    }
    Ok(TargetRef {
        manifest: find_named(arg, cwd)?,
        task: None,
    })
}

fn find_named(name: &str, cwd: &Path) -> Result<PathBuf, AuditError> {
    let rel = Path::new("targets").join(name).join("target.toml");
    cwd.ancestors()
        .map(|dir| dir.join(&rel))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| {
            AuditError::Target(format!(
                "no target `{name}`: {} is not in {} or a parent folder",
                rel.display(),
                cwd.display()
            ))
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_battery_is_checked_against_each_target_before_anything_runs() {
        // τ²'s manifest (its hook is not installed here: the battery is refused first).
        let tau2 = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../targets/tau2/target.toml");
        let refs = [TargetRef {
            manifest: tau2,
            task: None,
        }];
        let battery = |text: &str| TargetOptions {
            battery: Some(crate::proposed::ProposedBattery::parse(text, "p.toml").unwrap()),
            ..TargetOptions::default()
        };
        // AgentDojo's forgery: a trajectory forgery, but not one τ² plays.
        let e = load_targets(
            &refs,
            &battery(
                "probes = \"trajectories\"\n[[battery]]\nname = \"a\"\nforgery = \"env_dump\"\n",
            ),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("does not build the forgery `env_dump`"), "{e}");
        let e = load_targets(
            &refs,
            &battery("probes = \"answers\"\n[[battery]]\nname = \"a\"\nforgery = \"empty\"\n"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("a battery for the answers family"), "{e}");
    }

    #[test]
    fn bare_names_are_found_in_a_parent_and_paths_are_kept() {
        let root = tempfile::tempdir().unwrap();
        let manifest = root.path().join("targets/demo/target.toml");
        std::fs::create_dir_all(manifest.parent().unwrap()).unwrap();
        std::fs::write(&manifest, "").unwrap();
        let deep = root.path().join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(resolve_target("demo", &deep).unwrap().manifest, manifest);
        let given = "elsewhere/target.toml";
        assert_eq!(
            resolve_target(given, &deep).unwrap().manifest,
            Path::new(given)
        );
        let missing = resolve_target("nope", &deep).unwrap_err();
        assert!(
            missing.to_string().contains("targets/nope/target.toml"),
            "{missing}"
        );
    }

    #[test]
    fn too_many_seeds_are_refused_before_any_work() {
        let mut config = AuditConfig::key_free(1, 1);
        config.seeds = (0..=MAX_SEEDS as u64).collect();
        let e = audit_all(&config, &[], &TargetOptions::default()).unwrap_err();
        assert!(matches!(e, AuditError::TooManySeeds { given } if given == MAX_SEEDS + 1));
    }
}
