//! Pre-registration (SPEC §5, paper C.10): an experiment spec (TOML) is frozen by hash before
//! the experiment; a run under it refuses a changed file, lists every deviation of the run
//! from the frozen design, holds the Holm family to the one it lists, and applies the frozen
//! decision rule.
//!
//! The frozen file covers everything that can change a verdict: the design (kind, task, level,
//! seeds, calibration seeds, quota, squeeze, slack sweep, interface, submission protocol, tool
//! text), the metric, the adversary's parameters, the statistics (seed, B, α), the agents and
//! the Holm family. A field the file leaves out takes the default written in
//! `docs/experiments.md`; `benchaudit prereg freeze` prints every value it froze, defaults
//! included.
//!
//! Why one long file: freezing, verifying, the deviation list and the decision rule read and
//! write the same frozen document; each field's default, check and deviation sit together so a
//! field cannot be added to one and forgotten in another.

use std::path::{Path, PathBuf};

use benchaudit_agents::{Level, sha256_hex};
use benchaudit_comtrade::{InterfaceProfile, SubmissionProtocol, ToolText};
use benchaudit_stats::{DECISION_ALPHA, DEFAULT_RESAMPLES, decision_rule, holm_adjust};
use benchaudit_stress::EscalatingAdversary;
use serde::{Deserialize, Serialize};

use crate::analysis::Comparison;
use crate::design::{DEFAULT_CALIBRATION, Design, DesignKind, QuotaSetting};
use crate::error::{Error, Result};
use crate::ledger::write_atomic;
use crate::metric::Metric;
use crate::seeds::{format_seeds, parse_seeds};

/// The decision rule's α this version applies (CI level 0.95, sign-flip p < 0.05): a frozen
/// α that differs is a disclosed deviation.
pub const RUN_ALPHA: f64 = DECISION_ALPHA;

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
    /// The adversary's parameters (default: the reference adversary of paper A.11).
    #[serde(default)]
    pub adversary: FrozenAdversary,
    /// The statistics the verdict is computed with.
    #[serde(default)]
    pub statistics: FrozenStatistics,
    /// Who plays the model.
    pub agents: Agents,
    /// The Holm family: the comparisons the confirmatory claim rests on. Empty = every agent
    /// under every quota setting of the frozen design.
    #[serde(default)]
    pub family: Vec<FamilyMember>,
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

impl Predicted {
    /// `positive` or `negative`.
    pub fn name(self) -> &'static str {
        match self {
            Predicted::Positive => "positive",
            Predicted::Negative => "negative",
        }
    }
}

fn default_calibration_text() -> String {
    DEFAULT_CALIBRATION.to_string()
}
fn default_interface() -> String {
    "legacy".into()
}
fn default_submission() -> String {
    "full".into()
}
fn default_tool_text() -> String {
    ToolText::default().name().into()
}

/// The design as the frozen file writes it; a run compares its own parameters with these
/// field by field.
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
    /// Calibration seeds of the matched constant level, as `--calibration-seeds` writes them.
    #[serde(default = "default_calibration_text")]
    pub calibration_seeds: String,
    /// Outcome metric: coverage, f1 or judge.
    pub metric: String,
    /// Enforced quota, if any.
    #[serde(default)]
    pub quota: Option<u32>,
    /// Squeeze, if any.
    #[serde(default)]
    pub squeeze: Option<u32>,
    /// Post-squeeze slacks swept (quota design).
    #[serde(default)]
    pub slack_sweep: Vec<u32>,
    /// Argument-error envelope: legacy or strict.
    #[serde(default = "default_interface")]
    pub interface: String,
    /// Submission protocol: full, ids or chunked.
    #[serde(default = "default_submission")]
    pub submission: String,
    /// The tool text models are offered: clarified or ambiguous.
    #[serde(default = "default_tool_text")]
    pub tool_text: String,
}

/// The adversary's parameters (paper A.11).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrozenAdversary {
    /// Fault probability at intensity 0.
    pub fault_base: f64,
    /// Added fault probability per unit of intensity.
    pub fault_scale: f64,
    /// Duplicate-corruption rate per unit of intensity.
    pub corruption_scale: f64,
    /// Intensity from which totals rows are injected (absent: never).
    #[serde(default)]
    pub distractor_at: Option<f64>,
    /// HTTP status of the faults.
    pub fault_status: u16,
}

impl FrozenAdversary {
    /// Each parameter by its name in the file, with its value as a reader writes it (what
    /// `describe` lists and a deviation quotes).
    fn fields(&self) -> [(&'static str, String); 5] {
        [
            ("fault_base", self.fault_base.to_string()),
            ("fault_scale", self.fault_scale.to_string()),
            ("corruption_scale", self.corruption_scale.to_string()),
            ("distractor_at", opt_f64(self.distractor_at)),
            ("fault_status", self.fault_status.to_string()),
        ]
    }
}

impl From<EscalatingAdversary> for FrozenAdversary {
    fn from(a: EscalatingAdversary) -> Self {
        FrozenAdversary {
            fault_base: a.fault_base,
            fault_scale: a.fault_scale,
            corruption_scale: a.corruption_scale,
            distractor_at: a.distractor_at,
            fault_status: a.fault_status,
        }
    }
}

impl Default for FrozenAdversary {
    fn default() -> Self {
        benchaudit_comtrade::stress::reference_adversary().into()
    }
}

/// The statistics of the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrozenStatistics {
    /// Seed of the bootstrap and permutation streams (`--stats-seed`).
    #[serde(default)]
    pub seed: u64,
    /// Bootstrap replicates B (`--resamples`).
    #[serde(default = "default_resamples")]
    pub resamples: usize,
    /// The decision rule's α: CI level 1 − α and sign-flip p < α.
    #[serde(default = "default_alpha")]
    pub alpha: f64,
}

fn default_resamples() -> usize {
    DEFAULT_RESAMPLES
}
fn default_alpha() -> f64 {
    DECISION_ALPHA
}

impl Default for FrozenStatistics {
    fn default() -> Self {
        FrozenStatistics {
            seed: 0,
            resamples: DEFAULT_RESAMPLES,
            alpha: DECISION_ALPHA,
        }
    }
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

/// One comparison of the Holm family: an agent under one quota setting of the design.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FamilyMember {
    /// Policy or model.
    pub agent: String,
    /// The setting's quota (absent: free retries, the matched-mean design).
    #[serde(default)]
    pub quota: Option<u32>,
}

impl FamilyMember {
    fn describe(&self) -> String {
        format!("{} at {}", self.agent, quota_text(self.quota))
    }
}

fn quota_text(q: Option<u32>) -> String {
    q.map_or("free retries".into(), |q| format!("quota {q}"))
}

/// A frozen experiment and the SHA-256 its file was frozen under.
#[derive(Debug, Clone, PartialEq)]
pub struct Frozen {
    /// The experiment.
    pub experiment: Experiment,
    /// SHA-256 of the file's bytes.
    pub sha256: String,
}

/// One member of the frozen Holm family and what the run made of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FamilyRow {
    /// The member.
    #[serde(flatten)]
    pub member: FamilyMember,
    /// Whether the run holds this comparison (a missing one counts as p = 1 in the Holm
    /// adjustment, so the family keeps its frozen size).
    pub ran: bool,
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
    /// Every field where the run differs from the frozen design, values as written.
    pub deviations: Vec<String>,
    /// The frozen Holm family.
    pub family: Vec<FamilyRow>,
    /// Comparisons of the run outside the family (exploratory: no decision).
    pub exploratory: usize,
    /// Whether the verdicts were reached with deviations from the frozen design.
    pub with_deviations: bool,
}

/// The parameters of a run, as compared with a frozen design.
#[derive(Debug, Clone)]
pub struct AsRun<'a> {
    /// The design as run (kind, task, level, seeds, calibration, quota, squeeze, sweep,
    /// interface, submission).
    pub design: &'a Design,
    /// Outcome metric.
    pub metric: Metric,
    /// The adversary the arms were built with.
    pub adversary: EscalatingAdversary,
    /// Seed of the bootstrap and permutation streams.
    pub stats_seed: u64,
    /// Bootstrap replicates B.
    pub resamples: usize,
    /// The decision rule's α as applied.
    pub alpha: f64,
    /// The tool text the episodes were played with (`ab --tool-text`).
    pub tool_text: ToolText,
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
    crate::files::read_bounded(file, crate::files::limits::SMALL)
        .map_err(|e| Error::Invalid(e.to_string()))
}

/// A frozen design resolved into typed values (validated).
#[derive(Debug, Clone, PartialEq)]
struct Resolved {
    kind: DesignKind,
    level: Level,
    seeds: Vec<u64>,
    calibration: Vec<u64>,
    metric: Metric,
    interface: InterfaceProfile,
    submission: SubmissionProtocol,
}

fn kind_of(name: &str) -> Option<DesignKind> {
    [
        DesignKind::MatchedMean,
        DesignKind::Quota,
        DesignKind::Degradation,
    ]
    .into_iter()
    .find(|k| k.name() == name)
}

fn metric_of(name: &str) -> Option<Metric> {
    [Metric::F1, Metric::Judge, Metric::Coverage]
        .into_iter()
        .find(|m| m.flag() == name)
}

fn name_of<T: Serialize>(v: T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn enum_of<T: for<'de> Deserialize<'de>>(name: &str) -> Option<T> {
    serde_json::from_value(serde_json::Value::String(name.to_string())).ok()
}

fn resolve(file: &Path, e: &Experiment) -> Result<Resolved> {
    let bad = |field: &str, value: &str, want: &str| {
        Error::Invalid(format!(
            "{}: design.{field} = `{value}` is not valid ({want})",
            file.display()
        ))
    };
    let d = &e.design;
    let kind = kind_of(&d.kind)
        .ok_or_else(|| bad("kind", &d.kind, "matched-mean, quota or degradation"))?;
    if benchaudit_comtrade::task(&d.task).is_none() {
        return Err(bad("task", &d.task, "a task id of `benchaudit tasks`"));
    }
    let level = Level::parse(&d.level).ok_or_else(|| bad("level", &d.level, "L1 or L2"))?;
    let seeds = parse_seeds(&d.seeds).map_err(|why| bad("seeds", &d.seeds, &why))?;
    let calibration = parse_seeds(&d.calibration_seeds)
        .map_err(|why| bad("calibration_seeds", &d.calibration_seeds, &why))?;
    let metric =
        metric_of(&d.metric).ok_or_else(|| bad("metric", &d.metric, "coverage, f1 or judge"))?;
    let interface =
        enum_of(&d.interface).ok_or_else(|| bad("interface", &d.interface, "legacy or strict"))?;
    let submission = enum_of(&d.submission)
        .ok_or_else(|| bad("submission", &d.submission, "full, ids or chunked"))?;
    if ToolText::parse(&d.tool_text).is_none() {
        return Err(bad("tool_text", &d.tool_text, "clarified or ambiguous"));
    }
    let s = &e.statistics;
    if !(s.alpha > 0.0 && s.alpha < 1.0) || s.resamples == 0 {
        return Err(Error::Invalid(format!(
            "{}: statistics need 0 < alpha < 1 and resamples ≥ 1",
            file.display()
        )));
    }
    Ok(Resolved {
        kind,
        level,
        seeds,
        calibration,
        metric,
        interface,
        submission,
    })
}

fn parse(file: &Path, bytes: &[u8]) -> Result<Experiment> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| Error::Invalid(format!("{} is not UTF-8", file.display())))?;
    let experiment: Experiment = toml::from_str(text).map_err(|e| {
        Error::Invalid(format!(
            "{} is not a valid experiment spec: {}",
            file.display(),
            e.message()
        ))
    })?;
    resolve(file, &experiment)?;
    Ok(experiment)
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
    let frozen = crate::files::read_text_bounded(&sidecar(file), crate::files::limits::SMALL)
        .map_err(|_| {
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

/// The frozen design as a [`Design`] (its settings, sweep and calibration exactly as frozen).
fn frozen_design(e: &Experiment) -> Option<Design> {
    let r = resolve(Path::new("experiment"), e).ok()?;
    Some(Design {
        kind: r.kind,
        task: benchaudit_comtrade::task(&e.design.task)?,
        level: r.level,
        seeds: r.seeds,
        calibration: r.calibration,
        quota: e.design.quota,
        squeeze: e.design.squeeze.unwrap_or(0),
        slack_sweep: e.design.slack_sweep.clone(),
        episode: benchaudit_comtrade::EpisodeOptions {
            interface: r.interface,
            submission: r.submission,
            max_requests: None,
        },
    })
}

/// The quota settings' quotas as a reader writes them (`8`, `8, 9, 10`, `free`); for the
/// degradation design its one quota.
fn quotas_text(d: &Design) -> String {
    let quotas: Vec<Option<u32>> = match d.kind {
        DesignKind::Degradation => vec![d.quota],
        _ => d
            .settings()
            .iter()
            .map(|s: &QuotaSetting| s.quota)
            .collect(),
    };
    let text: Vec<String> = quotas
        .iter()
        .map(|q| q.map_or("free".into(), |q| q.to_string()))
        .collect();
    text.join(", ")
}

fn list<T: std::fmt::Display>(v: &[T]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.iter().map(T::to_string).collect::<Vec<_>>().join(", ")
    }
}

fn opt_f64(v: Option<f64>) -> String {
    v.map_or("none".into(), |x| x.to_string())
}

/// The Holm family the pre-registration fixes: its `family` list, or every frozen agent under
/// every quota setting of the frozen design.
pub fn family(e: &Experiment) -> Vec<FamilyMember> {
    if !e.family.is_empty() {
        return e.family.clone();
    }
    let settings = frozen_design(e).map(|d| d.settings()).unwrap_or_default();
    let mut out = Vec::new();
    for agent in e.agents.policies.iter().chain(&e.agents.models) {
        for s in &settings {
            out.push(FamilyMember {
                agent: agent.clone(),
                quota: s.quota,
            });
        }
    }
    out
}

/// Every field where the run differs from the frozen experiment, with both values as a
/// reader writes them (`quota: frozen 8, run 9`).
pub fn deviations(e: &Experiment, run: &AsRun<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let mut cmp = |what: &str, frozen: String, actual: String| {
        if frozen != actual {
            out.push(format!("{what}: frozen {frozen}, run {actual}"));
        }
    };
    let d = run.design;
    let Some(f) = frozen_design(e) else {
        // `load_frozen` validated the file, so this is a caller's hand-built experiment.
        cmp(
            "design",
            "an invalid design".into(),
            d.kind.name().to_string(),
        );
        return out;
    };
    cmp("design", f.kind.name().into(), d.kind.name().into());
    cmp("task", f.task.task_id.into(), d.task.task_id.into());
    cmp("level", f.level.to_string(), d.level.to_string());
    cmp("seeds", format_seeds(&f.seeds), format_seeds(&d.seeds));
    cmp(
        "calibration seeds",
        format_seeds(&f.calibration),
        format_seeds(&d.calibration),
    );
    cmp(
        "metric",
        e.design.metric.clone(),
        run.metric.flag().to_string(),
    );
    cmp("quota", quotas_text(&f), quotas_text(d));
    if d.kind == DesignKind::Quota || f.kind == DesignKind::Quota {
        cmp(
            "squeeze",
            e.design.squeeze.map_or("none".into(), |s| s.to_string()),
            d.squeeze.to_string(),
        );
    }
    cmp("slack sweep", list(&f.slack_sweep), list(&d.slack_sweep));
    cmp(
        "interface",
        name_of(f.episode.interface),
        name_of(d.episode.interface),
    );
    cmp(
        "submission",
        name_of(f.episode.submission),
        name_of(d.episode.submission),
    );
    cmp(
        "tool text",
        e.design.tool_text.clone(),
        run.tool_text.name().to_string(),
    );
    let (fa, ra) = (e.adversary, FrozenAdversary::from(run.adversary));
    for ((name, frozen), (_, actual)) in fa.fields().into_iter().zip(ra.fields()) {
        cmp(&format!("adversary.{name}"), frozen, actual);
    }
    let s = e.statistics;
    cmp(
        "statistics seed",
        s.seed.to_string(),
        run.stats_seed.to_string(),
    );
    cmp(
        "bootstrap resamples",
        s.resamples.to_string(),
        run.resamples.to_string(),
    );
    cmp("alpha", s.alpha.to_string(), run.alpha.to_string());
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
    cmp("agents", list(&frozen_agents), list(&actual));
    out
}

/// Holds the comparisons to the frozen experiment: the Holm adjustment runs over the frozen
/// family (a member the run lacks counts as p = 1 and is a deviation), comparisons outside it
/// are exploratory (adjusted among themselves, no decision), and the frozen decision rule
/// (CI excludes 0 on the predicted side and sign-flip p < α) is applied to the family.
///
/// # Errors
/// A statistics error from the Holm adjustment.
pub fn apply(
    frozen: &Frozen,
    run: &AsRun<'_>,
    comparisons: &mut [Comparison],
) -> Result<PreregOutcome> {
    let e = &frozen.experiment;
    let members = family(e);
    let mut deviations = deviations(e, run);
    let index = |c: &Comparison| {
        members
            .iter()
            .position(|m| m.agent == c.agent && m.quota == c.quota)
    };
    let mut family_p = vec![1.0; members.len()];
    let mut ran = vec![false; members.len()];
    for c in comparisons.iter() {
        if let Some(i) = index(c) {
            family_p[i] = c.stats.p_value();
            ran[i] = true;
        }
    }
    let adjusted = holm_adjust(&family_p)?;
    let exploratory_p: Vec<f64> = comparisons
        .iter()
        .filter(|c| index(c).is_none())
        .map(|c| c.stats.p_value())
        .collect();
    let mut exploratory_adjusted = holm_adjust(&exploratory_p)?.into_iter();
    let predicted_positive = e.predicted == Predicted::Positive;
    for c in comparisons.iter_mut() {
        match index(c) {
            Some(i) => {
                c.in_family = true;
                c.p_holm = adjusted[i];
                c.decision = Some(decision_rule(&c.stats, predicted_positive));
            }
            None => {
                c.in_family = false;
                c.p_holm = exploratory_adjusted.next().unwrap_or(1.0);
                c.decision = None;
            }
        }
    }
    for (m, r) in members.iter().zip(&ran) {
        if !r {
            deviations.push(format!(
                "family: {} was not run (counted as p = 1 in the Holm adjustment)",
                m.describe()
            ));
        }
    }
    let exploratory = exploratory_p.len();
    Ok(PreregOutcome {
        name: e.name.clone(),
        sha256: frozen.sha256.clone(),
        predicted: e.predicted,
        with_deviations: !deviations.is_empty(),
        deviations,
        family: members
            .into_iter()
            .zip(ran)
            .map(|(member, ran)| FamilyRow { member, ran })
            .collect(),
        exploratory,
    })
}

/// The frozen experiment written out value by value (defaults included), as `benchaudit prereg
/// freeze` prints it.
pub fn describe(e: &Experiment) -> String {
    use std::fmt::Write as _;
    let mut t = String::new();
    let d = &e.design;
    let _ = writeln!(t, "  hypothesis: {}", e.hypothesis);
    let _ = writeln!(
        t,
        "  predicted Δ (constant − escalating): {}",
        e.predicted.name()
    );
    let _ = writeln!(
        t,
        "  design: {} on {} at {}, seeds {}, calibration seeds {}, metric {}",
        d.kind, d.task, d.level, d.seeds, d.calibration_seeds, d.metric
    );
    let _ = writeln!(
        t,
        "  quota {}, squeeze {}, slack sweep {}, interface {}, submission {}, tool text {}",
        d.quota.map_or("none".into(), |q| q.to_string()),
        d.squeeze.map_or("none".into(), |s| s.to_string()),
        list(&d.slack_sweep),
        d.interface,
        d.submission,
        d.tool_text
    );
    let adversary: Vec<String> = (e.adversary.fields().iter())
        .map(|(name, value)| format!("{name} {value}"))
        .collect();
    let _ = writeln!(t, "  adversary: {}", adversary.join(", "));
    let s = e.statistics;
    let _ = writeln!(
        t,
        "  statistics: seed {}, bootstrap resamples {}, alpha {}",
        s.seed, s.resamples, s.alpha
    );
    let mut agents: Vec<&String> = e.agents.policies.iter().chain(&e.agents.models).collect();
    agents.sort();
    let _ = writeln!(
        t,
        "  agents: {}",
        list(&agents.iter().map(|a| a.as_str()).collect::<Vec<_>>())
    );
    let members: Vec<String> = family(e).iter().map(FamilyMember::describe).collect();
    let _ = writeln!(t, "  Holm family ({}): {}", members.len(), list(&members));
    t
}
