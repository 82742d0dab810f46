//! Pre-registration (SPEC §5, paper C.10): an experiment spec (TOML) is frozen by hash before
//! the experiment; a run under it refuses a changed file, lists every deviation of the run
//! from the frozen design, and applies the frozen decision rule.

use std::path::{Path, PathBuf};

use benchaudit_agents::{Level, sha256_hex};
use benchaudit_stats::decision_rule;
use serde::{Deserialize, Serialize};

use crate::analysis::Comparison;
use crate::design::DesignKind;
use crate::error::{Error, Result};
use crate::ledger::write_atomic;
use crate::metric::Metric;

/// A pre-registered experiment (TOML). Every field is part of the frozen commitment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    /// Name of the experiment.
    pub name: String,
    /// The hypothesis in words.
    pub hypothesis: String,
    /// Predicted sign of Δ = constant − escalating: "positive" (escalation hurts) or "negative".
    pub predicted: Predicted,
    /// The design.
    pub design: FrozenDesign,
    /// Who plays the model.
    pub agents: Agents,
}

/// The predicted side of the effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Predicted {
    /// Δ > 0.
    Positive,
    /// Δ < 0.
    Negative,
}

/// The design as the frozen file writes it (strings as typed); a run compares its own
/// parameters with these field by field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrozenDesign {
    /// matched-mean, quota or degradation.
    pub kind: String,
    /// Substrate task.
    pub task: String,
    /// Scaffolding level.
    pub level: String,
    /// Seeds, as `--seeds` writes them.
    pub seeds: String,
    /// Outcome metric: coverage, f1 or judge.
    pub metric: String,
    /// Enforced quota, if any.
    #[serde(default)]
    pub quota: Option<u32>,
    /// Squeeze, if any.
    #[serde(default)]
    pub squeeze: Option<u32>,
}

/// The agents of a pre-registration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Agents {
    /// Rule policies.
    #[serde(default)]
    pub policies: Vec<String>,
    /// Models (provider:name).
    #[serde(default)]
    pub models: Vec<String>,
}

/// A frozen experiment and the SHA-256 its file was frozen under.
#[derive(Debug, Clone, PartialEq)]
pub struct Frozen {
    /// The experiment.
    pub experiment: Experiment,
    /// SHA-256 of the file's bytes.
    pub sha256: String,
}

/// What a pre-registration said about a run: recorded in `ab.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PreregOutcome {
    /// The experiment's name.
    pub name: String,
    /// The frozen hash.
    pub sha256: String,
    /// The predicted side.
    pub predicted: Predicted,
    /// Every field where the run differs from the frozen design.
    pub deviations: Vec<String>,
}

/// The parameters of a run, as compared with a frozen design.
#[derive(Debug, Clone)]
pub struct AsRun<'a> {
    /// Design kind.
    pub design: DesignKind,
    /// Task id, as given.
    pub task: &'a str,
    /// Level.
    pub level: Level,
    /// Seeds, as written on the command line.
    pub seeds: &'a str,
    /// Outcome metric.
    pub metric: Metric,
    /// Quota, as given.
    pub quota: Option<u32>,
    /// Squeeze (compared for the quota design only).
    pub squeeze: u32,
    /// Player names.
    pub agents: Vec<String>,
}

/// The sidecar holding a frozen file's hash: `EXPERIMENT.toml.sha256`.
pub fn sidecar(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".sha256");
    PathBuf::from(name)
}

fn read(file: &Path) -> Result<Vec<u8>> {
    std::fs::read(file).map_err(|e| Error::Invalid(format!("cannot read {}: {e}", file.display())))
}

fn parse(file: &Path, bytes: &[u8]) -> Result<Experiment> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| Error::Invalid(format!("{} is not UTF-8", file.display())))?;
    toml::from_str(text).map_err(|e| {
        Error::Invalid(format!(
            "{} is not a valid experiment spec: {}",
            file.display(),
            e.message()
        ))
    })
}

/// Validates an experiment spec and records its SHA-256 beside it; refuses a file already
/// frozen.
pub fn freeze(file: &Path) -> Result<Frozen> {
    let bytes = read(file)?;
    let experiment = parse(file, &bytes)?;
    let target = sidecar(file);
    if target.exists() {
        return Err(Error::Invalid(format!(
            "{} is already frozen ({})",
            file.display(),
            target.display()
        )));
    }
    let sha256 = sha256_hex(&bytes);
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    write_atomic(&target, format!("{sha256}  {name}\n").as_bytes())?;
    Ok(Frozen { experiment, sha256 })
}

/// Loads a frozen experiment, refusing a file whose bytes changed since [`freeze`].
pub fn load_frozen(file: &Path) -> Result<Frozen> {
    let bytes = read(file)?;
    let frozen = std::fs::read_to_string(sidecar(file)).map_err(|_| {
        Error::Invalid(format!(
            "{} is not frozen: run `benchaudit prereg freeze {}` before the experiment",
            file.display(),
            file.display()
        ))
    })?;
    let want = frozen.split_whitespace().next().unwrap_or("").to_string();
    let have = sha256_hex(&bytes);
    if want != have {
        return Err(Error::Invalid(format!(
            "{} changed after it was frozen (frozen sha256 {want}, now {have}); a pre-registration cannot be edited",
            file.display()
        )));
    }
    Ok(Frozen {
        experiment: parse(file, &bytes)?,
        sha256: have,
    })
}

/// Every field where the run differs from the frozen design.
pub fn deviations(e: &Experiment, run: &AsRun<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let mut cmp = |what: &str, frozen: String, actual: String| {
        if frozen != actual {
            out.push(format!("{what}: frozen `{frozen}`, run `{actual}`"));
        }
    };
    cmp(
        "design",
        e.design.kind.clone(),
        run.design.name().to_string(),
    );
    cmp("task", e.design.task.clone(), run.task.to_string());
    cmp(
        "level",
        e.design.level.to_uppercase(),
        run.level.to_string(),
    );
    cmp("seeds", e.design.seeds.clone(), run.seeds.to_string());
    cmp(
        "metric",
        e.design.metric.clone(),
        run.metric.flag().to_string(),
    );
    cmp(
        "quota",
        format!("{:?}", e.design.quota),
        format!("{:?}", run.quota),
    );
    if run.design == DesignKind::Quota {
        cmp(
            "squeeze",
            format!("{:?}", e.design.squeeze),
            format!("{:?}", Some(run.squeeze)),
        );
    }
    let mut frozen_agents: Vec<String> = e
        .agents
        .policies
        .iter()
        .chain(&e.agents.models)
        .cloned()
        .collect();
    frozen_agents.sort();
    let mut actual = run.agents.clone();
    actual.sort();
    cmp("agents", frozen_agents.join(","), actual.join(","));
    out
}

/// Applies the frozen decision rule to every comparison (CI excludes 0 on the predicted side
/// and sign-flip p < 0.05) and returns what the run records about the pre-registration.
pub fn apply(frozen: &Frozen, run: &AsRun<'_>, family: &mut [Comparison]) -> PreregOutcome {
    let e = &frozen.experiment;
    for c in family.iter_mut() {
        c.decision = Some(decision_rule(&c.stats, e.predicted == Predicted::Positive));
    }
    PreregOutcome {
        name: e.name.clone(),
        sha256: frozen.sha256.clone(),
        predicted: e.predicted,
        deviations: deviations(e, run),
    }
}
